//! The serde schema of the control side of a scenario, and shared helpers.
//!
//! A scenario file (TOML, parsed by the bridge) carries one [`SystemConfig`]:
//!
//! ```toml
//! step = "1ms"          # solver step h, a duration string
//! solver = "rk4"        # euler | heun | rk4 (default rk4)
//!
//! [[loops]]
//! name = "servo"
//! [loops.plant]
//! kind = "dc_servo"
//! inertia = 0.01
//! [loops.sensor]
//! period = "10ms"
//! [loops.actuator]
//! min = -12.0
//! max = 12.0
//! [loops.controller]
//! kind = "pid"
//! kp = 20.0
//! kd = 1.0
//! [loops.reference]
//! kind = "step"
//! at = "100ms"
//! final = 1.0
//! ```
//!
//! Conventions, so that every key reads the same way:
//! - Instants, periods and delays are duration strings (`"10ms"`, `"1.5s"`)
//!   and must lie on the step grid where the engine schedules on them.
//! - Physical constants are plain numbers in SI units (a time constant such
//!   as `engine_lag = 0.1` is in seconds, because it is physics, not a
//!   schedule).
//! - Matrices are arrays of rows: `k = [[1.0, 0.5]]`.
//! - Per-channel settings (`noise_std`, `min`, `u_max`, ...) take either one
//!   number for every channel or an array with one number per channel.
//! - Every table rejects unknown keys, so a typo is an error, not a silent
//!   default.
//!
//! Deserialising only checks types; [`System::from_config`](crate::System::from_config)
//! checks everything else (shapes, the step grid, ranges) and names the key of
//! the first problem.

use std::fmt;

use netloop_time::SimTime;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::actuator::ActuatorConfig;
use crate::controller::ControllerConfig;
use crate::error::ConfigError;
use crate::key_path::KeyPath;
use crate::matrix::check_vector;
use crate::plant::PlantConfig;
use crate::reference::SignalConfig;
use crate::sensor::SensorConfig;
use crate::solver::SolverKind;

/// The whole control side: one step, one solver, N loops in lock-step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemConfig {
    /// Solver step `h`; required, positive. Every period must be a multiple.
    #[serde(with = "netloop_time::duration")]
    pub step: SimTime,
    /// Default `rk4`.
    #[serde(default)]
    pub solver: SolverKind,
    /// The loops, written as `[[loops]]` tables; at least one.
    pub loops: Vec<LoopConfig>,
}

impl SystemConfig {
    /// Makes every relative file path in the config (an FMU's `path`)
    /// relative to `base`, the scenario file's directory.
    pub fn resolve_paths(&mut self, base: &std::path::Path) {
        for l in &mut self.loops {
            if let PlantConfig::Fmu(c) = &mut l.plant {
                c.path = base.join(&c.path);
            }
            if let ControllerConfig::Fmu(c) = &mut l.controller {
                c.path = base.join(&c.path);
            }
        }
    }
}

/// One control loop: plant with its sensor and actuator, and a controller.
/// The plant is a [`PlantConfig`] as a scenario writes it, or built
/// ([`crate::LoopSpec`], a user's own plant among them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopConfig<P = PlantConfig> {
    /// Unique, non-empty; used in recorded column names. Required.
    pub name: String,
    /// The loop in front of this one in a platoon, by index (`0`) or by name
    /// (`"leader"`). Needed by a `radar` sensor and by a `cacc` controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predecessor: Option<LoopRef>,
    pub plant: P,
    pub sensor: SensorConfig,
    /// Default: no saturation, initial value 0.
    #[serde(default)]
    pub actuator: ActuatorConfig,
    pub controller: ControllerConfig,
    /// One signal (`[loops.reference]`) or several (`[[loops.reference]]`).
    /// Default: zero on every channel the controller needs.
    #[serde(default, skip_serializing_if = "References::is_empty")]
    pub reference: References,
}

impl<P> LoopConfig<P> {
    /// The loop without its plant, and the plant: to build a system of the
    /// one while the other is moved into it.
    pub fn take_plant(self) -> (LoopConfig<()>, P) {
        let LoopConfig {
            name,
            predecessor,
            plant,
            sensor,
            actuator,
            controller,
            reference,
        } = self;
        let rest = LoopConfig {
            name,
            predecessor,
            plant: (),
            sensor,
            actuator,
            controller,
            reference,
        };
        (rest, plant)
    }
}

/// A reference to another loop, by index or by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoopRef {
    Index(usize),
    Name(String),
}

impl Serialize for LoopRef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            LoopRef::Index(i) => s.serialize_u64(*i as u64),
            LoopRef::Name(n) => s.serialize_str(n),
        }
    }
}

impl<'de> Deserialize<'de> for LoopRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = LoopRef;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a loop index (0, 1, ...) or a loop name")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LoopRef, E> {
                usize::try_from(v).map(LoopRef::Index).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<LoopRef, E> {
                usize::try_from(v)
                    .map(LoopRef::Index)
                    .map_err(|_| E::custom(format!("loop index {v} is negative")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<LoopRef, E> {
                Ok(LoopRef::Name(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// The reference signals of a loop, one per channel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct References(pub Vec<SignalConfig>);

impl References {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for References {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for References {
    /// A table is one signal, an array of tables is one per channel; the
    /// inner errors of either are kept (no "did not match any variant").
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = References;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a signal table or an array of signal tables")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<References, A::Error> {
                let one = SignalConfig::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(References(vec![one]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<References, A::Error> {
                Vec::<SignalConfig>::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(References)
            }
        }
        d.deserialize_any(V)
    }
}

/// A per-channel setting: one number for every channel, or one per channel.
#[derive(Clone, Debug, PartialEq)]
pub enum PerChannel {
    All(f64),
    Each(Vec<f64>),
}

impl PerChannel {
    /// Expands to `n` values.
    ///
    /// # Errors
    /// [`ConfigError::Length`] when a list has the wrong length,
    /// [`ConfigError::NotFinite`] for NaN or infinity.
    pub(crate) fn resolve(&self, key: &KeyPath, n: usize) -> Result<Vec<f64>, ConfigError> {
        let v = match self {
            PerChannel::All(x) => vec![*x; n],
            PerChannel::Each(v) => v.clone(),
        };
        check_vector(key, &v, n).map_err(|e| match (self, e) {
            (PerChannel::All(x), ConfigError::NotFinite { .. }) => ConfigError::NotFinite {
                key: key.clone(),
                value: *x,
            },
            (_, e) => e,
        })?;
        Ok(v)
    }
}

impl Serialize for PerChannel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PerChannel::All(x) => s.serialize_f64(*x),
            PerChannel::Each(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for PerChannel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PerChannel;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number, or an array with one number per channel")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<PerChannel, E> {
                Ok(PerChannel::All(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PerChannel, E> {
                Ok(PerChannel::All(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PerChannel, E> {
                Ok(PerChannel::All(v as f64))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<PerChannel, A::Error> {
                Vec::<f64>::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(PerChannel::Each)
            }
        }
        d.deserialize_any(V)
    }
}

/// Resolves optional names: the given ones (checked for length) or defaults
/// `prefix0, prefix1, ...`.
pub(crate) fn names_or_default(
    key: &KeyPath,
    given: &Option<Vec<String>>,
    n: usize,
    prefix: &str,
) -> Result<Vec<String>, ConfigError> {
    match given {
        Some(v) if v.len() != n => Err(ConfigError::Length {
            key: key.clone(),
            expected: n,
            found: v.len(),
        }),
        Some(v) => Ok(v.clone()),
        None => Ok((0..n).map(|i| format!("{prefix}{i}")).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Debug)]
    struct Probe {
        a: PerChannel,
        r: References,
        p: LoopRef,
    }

    #[test]
    fn per_channel_references_and_loop_refs_parse_both_forms() {
        let one: Probe =
            toml::from_str("a = 2\np = 1\n[r]\nkind = \"constant\"\nvalue = 1.0").unwrap();
        assert_eq!(one.a, PerChannel::All(2.0));
        assert_eq!(one.r.0.len(), 1);
        assert_eq!(one.p, LoopRef::Index(1));
        let many: Probe = toml::from_str(
            "a = [1.0, 2.5]\np = \"lead\"\n[[r]]\nkind = \"constant\"\nvalue = 1.0\n[[r]]\nkind = \"constant\"\nvalue = 2.0",
        )
        .unwrap();
        assert_eq!(many.a, PerChannel::Each(vec![1.0, 2.5]));
        assert_eq!(many.r.0.len(), 2);
        assert_eq!(many.p, LoopRef::Name("lead".into()));
        assert_eq!(
            many.a
                .resolve(&KeyPath::key("a"), 3)
                .unwrap_err()
                .key()
                .to_string(),
            "a"
        );
        // An error inside a single reference table keeps its own message.
        let err =
            toml::from_str::<Probe>("a = 1\np = 0\n[r]\nkind = \"step\"\nfinal = 1.0\nbogus = 1")
                .unwrap_err()
                .to_string();
        assert!(err.contains("bogus"), "{err}");
    }
}
