//! Actuators: zero-order hold of the last accepted value, with saturation.
//!
//! docs/design.md §3.1: actuators are event-triggered; a value takes effect from the
//! boundary at which it is set and is held until the next one. Saturation is
//! applied to the held value when it is used, so the "held" (what the
//! controller sent) and "applied" (what the plant gets) values are both
//! available for recording. Loss handling `on_loss = "zero"` is
//! [`System::zero_actuator`](crate::System::zero_actuator).

use serde::{Deserialize, Serialize};

use crate::config::PerChannel;
use crate::error::ConfigError;
use crate::key_path::KeyPath;

/// `[loops.actuator]`; the whole table is optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActuatorConfig {
    /// Lower saturation limit per channel; default none. Also a PID's default
    /// `u_min`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<PerChannel>,
    /// Upper saturation limit per channel; default none. Also a PID's default
    /// `u_max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<PerChannel>,
    /// Value held before the first control arrives; default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial: Option<PerChannel>,
}

/// A built actuator.
#[derive(Clone, Debug)]
pub(crate) struct Actuator {
    min: Vec<f64>,
    max: Vec<f64>,
    /// Last value set (what the controller sent).
    pub(crate) held: Vec<f64>,
    /// `held` after saturation (what the plant gets).
    pub(crate) applied: Vec<f64>,
}

impl Actuator {
    /// # Errors
    /// [`ConfigError`] for limits of the wrong length, NaN limits, `min > max`,
    /// or a non-finite initial value.
    pub(crate) fn new(key: &KeyPath, c: &ActuatorConfig, dim: usize) -> Result<Self, ConfigError> {
        let limit = |field: &str,
                     v: &Option<PerChannel>,
                     default: f64|
         -> Result<Vec<f64>, ConfigError> {
            let key = key.child(field);
            match v {
                None => Ok(vec![default; dim]),
                Some(PerChannel::All(x)) if !x.is_nan() => Ok(vec![*x; dim]),
                Some(PerChannel::Each(v)) if v.len() == dim && !v.iter().any(|x| x.is_nan()) => {
                    Ok(v.clone())
                }
                Some(p) => p.resolve(&key, dim), // reports the length or NaN error
            }
        };
        let min = limit("min", &c.min, f64::NEG_INFINITY)?;
        let max = limit("max", &c.max, f64::INFINITY)?;
        if let Some(i) = (0..dim).find(|&i| min[i] > max[i]) {
            return Err(ConfigError::invalid(
                key.child("min"),
                format!("channel {i}: min {} is above max {}", min[i], max[i]),
            ));
        }
        let initial = match &c.initial {
            None => vec![0.0; dim],
            Some(p) => p.resolve(&key.child("initial"), dim)?,
        };
        let mut a = Actuator {
            min,
            max,
            held: initial,
            applied: vec![0.0; dim],
        };
        for i in 0..dim {
            a.refresh(i);
        }
        Ok(a)
    }

    /// The saturation limits per channel (infinite where none is set).
    pub(crate) fn limits(&self) -> (&[f64], &[f64]) {
        (&self.min, &self.max)
    }

    /// Sets channel `i` (index checked by the caller) and returns the value
    /// applied, so that a caller passing it on does not read it back.
    #[inline]
    pub(crate) fn set(&mut self, i: usize, v: f64) -> f64 {
        self.held[i] = v;
        let applied = self.saturate(i, v);
        self.applied[i] = applied;
        applied
    }

    /// Recomputes `applied[i]` from `held[i]`.
    #[inline]
    pub(crate) fn refresh(&mut self, i: usize) {
        self.applied[i] = self.saturate(i, self.held[i]);
    }

    /// `v` within channel `i`'s limits. NaN passes through unchanged (the
    /// plant state will then become NaN and the engine reports it).
    #[inline]
    fn saturate(&self, i: usize, v: f64) -> f64 {
        if v < self.min[i] {
            self.min[i]
        } else if v > self.max[i] {
            self.max[i]
        } else {
            v
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_and_saturates() {
        let c: ActuatorConfig =
            toml::from_str("min = -1.0\nmax = [2.0, 0.5]\ninitial = 3").unwrap();
        let mut a = Actuator::new(&KeyPath::key("a"), &c, 2).unwrap();
        assert_eq!(a.held, [3.0, 3.0]);
        assert_eq!(a.applied, [2.0, 0.5]);
        a.set(0, -7.0);
        assert_eq!((a.held[0], a.applied[0]), (-7.0, -1.0));
        a.set(1, 0.25);
        assert_eq!(a.applied[1], 0.25);
    }

    #[test]
    fn rejects_crossed_or_misshapen_limits() {
        let bad = |t: &str| {
            Actuator::new(&KeyPath::key("a"), &toml::from_str(t).unwrap(), 2)
                .unwrap_err()
                .key()
                .to_string()
        };
        assert_eq!(bad("min = 1.0\nmax = 0.0"), "a.min");
        assert_eq!(bad("max = [1.0]"), "a.max");
        assert_eq!(bad("initial = [1.0, 2.0, 3.0]"), "a.initial");
    }
}
