//! Sources: blocks with no input whose output is a function of time
//! (`constant`, `step`, `ramp`, `sine`, `square`, `pulse`, `chirp`,
//! `clock`) or a seeded random sequence (`random`). Output `y`.

use netloop_time::SimTime;
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use super::common::{finite, one, positive, sample_timing, secs, unit, width, Values};
use super::BlockContext;
use crate::error::ConfigError;
use crate::graph::{
    Component, Ctx, Declaration, Inputs, Lowered, Needs, Outputs, PortSpec, SavedState,
    StateMismatch, StateReader, Timing,
};
use crate::key_path::KeyPath;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstantConfig {
    /// A number, or a list (one element each).
    pub value: Values,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepConfig {
    /// Seconds at which the output jumps (it holds `after` from then on).
    #[serde(default)]
    pub time: f64,
    #[serde(default)]
    pub before: f64,
    #[serde(default = "unit")]
    pub after: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RampConfig {
    /// Units per second.
    #[serde(default = "unit")]
    pub slope: f64,
    /// Seconds at which it starts rising.
    #[serde(default)]
    pub start: f64,
    #[serde(default)]
    pub initial: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SineConfig {
    #[serde(default = "unit")]
    pub amplitude: f64,
    /// Hz.
    #[serde(default = "unit")]
    pub frequency: f64,
    /// rad.
    #[serde(default)]
    pub phase: f64,
    #[serde(default)]
    pub bias: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SquareConfig {
    #[serde(default = "unit")]
    pub amplitude: f64,
    /// Hz.
    #[serde(default = "unit")]
    pub frequency: f64,
    #[serde(default)]
    pub bias: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PulseConfig {
    #[serde(default = "unit")]
    pub amplitude: f64,
    /// Seconds.
    pub period: f64,
    /// Fraction of the period the pulse is high, in (0, 1].
    #[serde(default = "half")]
    pub duty: f64,
    /// Seconds before the first pulse.
    #[serde(default)]
    pub delay: f64,
}

fn half() -> f64 {
    0.5
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChirpConfig {
    #[serde(default = "unit")]
    pub amplitude: f64,
    /// Hz at time 0.
    pub f0: f64,
    /// Hz at time `t1`.
    pub f1: f64,
    /// Seconds.
    pub t1: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockConfig {}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RandomDistribution {
    #[default]
    Uniform,
    Normal,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomConfig {
    #[serde(default)]
    pub distribution: RandomDistribution,
    /// `uniform`: the interval `[min, max)`.
    #[serde(default)]
    pub min: f64,
    #[serde(default = "unit")]
    pub max: f64,
    /// `normal`: mean and standard deviation.
    #[serde(default)]
    pub mean: f64,
    #[serde(default = "unit")]
    pub std: f64,
    /// Seed of its own; default: the scenario's, on this component's stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// A new value every `period` (default: every step), held in between.
    #[serde(
        default,
        with = "netloop_time::duration::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub period: Option<SimTime>,
    #[serde(default = "one")]
    pub width: usize,
}

/// The function of time a [`Source`] outputs.
#[derive(Clone, Debug, PartialEq)]
enum Wave {
    Constant(Vec<f64>),
    Step {
        time: f64,
        before: f64,
        after: f64,
    },
    Ramp {
        slope: f64,
        start: f64,
        initial: f64,
    },
    Sine {
        amplitude: f64,
        w: f64,
        phase: f64,
        bias: f64,
    },
    Square {
        amplitude: f64,
        period: f64,
        bias: f64,
    },
    Pulse {
        amplitude: f64,
        period: f64,
        high: f64,
        delay: f64,
    },
    Chirp {
        amplitude: f64,
        f0: f64,
        rate: f64,
    },
    Clock,
}

/// A deterministic source: its output is a function of the boundary time.
#[derive(Clone, Debug)]
pub struct Source {
    wave: Wave,
}

impl Source {
    fn of(wave: Wave) -> Result<Self, ConfigError> {
        Ok(Source { wave })
    }

    pub fn constant(key: &KeyPath, c: &ConstantConfig) -> Result<Self, ConfigError> {
        let v = c.value.to_vec();
        width(&key.child("value"), v.len())?;
        super::common::finite_all(&key.child("value"), &v)?;
        Self::of(Wave::Constant(v))
    }

    pub fn step(key: &KeyPath, c: &StepConfig) -> Result<Self, ConfigError> {
        Self::of(Wave::Step {
            time: finite(&key.child("time"), c.time)?,
            before: finite(&key.child("before"), c.before)?,
            after: finite(&key.child("after"), c.after)?,
        })
    }

    pub fn ramp(key: &KeyPath, c: &RampConfig) -> Result<Self, ConfigError> {
        Self::of(Wave::Ramp {
            slope: finite(&key.child("slope"), c.slope)?,
            start: finite(&key.child("start"), c.start)?,
            initial: finite(&key.child("initial"), c.initial)?,
        })
    }

    pub fn sine(key: &KeyPath, c: &SineConfig) -> Result<Self, ConfigError> {
        Self::of(Wave::Sine {
            amplitude: finite(&key.child("amplitude"), c.amplitude)?,
            w: 2.0 * std::f64::consts::PI * finite(&key.child("frequency"), c.frequency)?,
            phase: finite(&key.child("phase"), c.phase)?,
            bias: finite(&key.child("bias"), c.bias)?,
        })
    }

    pub fn square(key: &KeyPath, c: &SquareConfig) -> Result<Self, ConfigError> {
        Self::of(Wave::Square {
            amplitude: finite(&key.child("amplitude"), c.amplitude)?,
            period: 1.0 / positive(&key.child("frequency"), c.frequency)?,
            bias: finite(&key.child("bias"), c.bias)?,
        })
    }

    pub fn pulse(key: &KeyPath, c: &PulseConfig) -> Result<Self, ConfigError> {
        let period = positive(&key.child("period"), c.period)?;
        if !(c.duty > 0.0 && c.duty <= 1.0) {
            return Err(ConfigError::invalid(key.child("duty"), "must be in (0, 1]"));
        }
        Self::of(Wave::Pulse {
            amplitude: finite(&key.child("amplitude"), c.amplitude)?,
            period,
            high: c.duty * period,
            delay: finite(&key.child("delay"), c.delay)?,
        })
    }

    pub fn chirp(key: &KeyPath, c: &ChirpConfig) -> Result<Self, ConfigError> {
        let f0 = finite(&key.child("f0"), c.f0)?;
        let f1 = finite(&key.child("f1"), c.f1)?;
        let t1 = positive(&key.child("t1"), c.t1)?;
        Self::of(Wave::Chirp {
            amplitude: finite(&key.child("amplitude"), c.amplitude)?,
            f0,
            rate: (f1 - f0) / t1,
        })
    }

    pub fn clock(_key: &KeyPath, _c: &ClockConfig) -> Result<Self, ConfigError> {
        Self::of(Wave::Clock)
    }

    fn width(&self) -> usize {
        match &self.wave {
            Wave::Constant(v) => v.len(),
            _ => 1,
        }
    }

    /// The value at `t` seconds (element 0; a constant writes all).
    fn at(&self, t: f64) -> f64 {
        use std::f64::consts::PI;
        match self.wave {
            Wave::Constant(ref v) => v[0],
            Wave::Step {
                time,
                before,
                after,
            } => {
                if t >= time {
                    after
                } else {
                    before
                }
            }
            Wave::Ramp {
                slope,
                start,
                initial,
            } => initial + slope * (t - start).max(0.0),
            Wave::Sine {
                amplitude,
                w,
                phase,
                bias,
            } => amplitude * (w * t + phase).sin() + bias,
            Wave::Square {
                amplitude,
                period,
                bias,
            } => {
                let high = t.rem_euclid(period) < 0.5 * period;
                bias + if high { amplitude } else { -amplitude }
            }
            Wave::Pulse {
                amplitude,
                period,
                high,
                delay,
            } => {
                if t >= delay && (t - delay).rem_euclid(period) < high {
                    amplitude
                } else {
                    0.0
                }
            }
            Wave::Chirp {
                amplitude,
                f0,
                rate,
            } => amplitude * (2.0 * PI * (f0 * t + 0.5 * rate * t * t)).sin(),
            Wave::Clock => t,
        }
    }
}

impl Component for Source {
    fn needs(&self) -> Needs {
        Needs::OUTPUT_ONLY
    }

    /// A constant is its values; the waves depend on time.
    fn lower(&self) -> Option<Lowered> {
        match &self.wave {
            Wave::Constant(v) => Some(Lowered::Constant(v.to_vec())),
            _ => None,
        }
    }

    fn declare(&self) -> Declaration {
        Declaration {
            inputs: Vec::new(),
            outputs: vec![PortSpec::new("y", self.width())],
            states: Vec::new(),
            guards: 0,
            timing: Timing::EveryStep,
        }
    }

    fn initial_outputs(&self, y: &mut Outputs) {
        self.write(0.0, y);
    }

    fn output(&mut self, cx: &mut Ctx, _x: &[f64], _u: &Inputs, y: &mut Outputs) {
        self.write(secs(cx.now), y);
    }
}

impl Source {
    fn write(&self, t: f64, y: &mut Outputs) {
        match &self.wave {
            Wave::Constant(v) => y.all().copy_from_slice(v),
            _ => y.all()[0] = self.at(t),
        }
    }
}

/// `random`: uniform or normal numbers from a ChaCha8 generator, a new
/// value per element every `period`.
#[derive(Clone, Debug)]
pub struct Random {
    normal: bool,
    /// `min, max - min` or `mean, std`.
    a: f64,
    b: f64,
    /// `max` (uniform): no draw reaches it.
    max: f64,
    rng: ChaCha8Rng,
    width: usize,
    period: SimTime,
    phase: SimTime,
}

impl Random {
    pub fn new(key: &KeyPath, c: &RandomConfig, cx: BlockContext) -> Result<Self, ConfigError> {
        let width = width(&key.child("width"), c.width)?;
        let (period, phase) = sample_timing(key, cx.step, c.period, SimTime::ZERO)?;
        let (normal, a, b, max) = match c.distribution {
            RandomDistribution::Uniform => {
                let min = finite(&key.child("min"), c.min)?;
                let max = finite(&key.child("max"), c.max)?;
                if max <= min {
                    return Err(ConfigError::invalid(
                        key.child("max"),
                        "must be above `min`",
                    ));
                }
                (false, min, max - min, max)
            }
            RandomDistribution::Normal => {
                let mean = finite(&key.child("mean"), c.mean)?;
                let std = finite(&key.child("std"), c.std)?;
                if std < 0.0 {
                    return Err(ConfigError::invalid(
                        key.child("std"),
                        "must not be negative",
                    ));
                }
                (true, mean, std, f64::INFINITY)
            }
        };
        let mut rng = ChaCha8Rng::seed_from_u64(c.seed.unwrap_or(cx.seed));
        if c.seed.is_none() {
            rng.set_stream(cx.stream);
        }
        Ok(Random {
            normal,
            a,
            b,
            max,
            rng,
            width,
            period,
            phase,
        })
    }
}

/// `min + span * r` for `r` in [0, 1), kept below `max = min + span`:
/// the product and sum can round up to `max` itself (e.g. `min = 1`,
/// `max = 2`, `r = 1 - 2^-53`), which the documented `[min, max)` excludes;
/// such a value becomes the largest number below `max`.
fn uniform(min: f64, span: f64, max: f64, r: f64) -> f64 {
    let v = min + span * r;
    if v < max {
        v
    } else {
        max.next_down()
    }
}

impl Component for Random {
    fn needs(&self) -> Needs {
        Needs::OUTPUT_ONLY
    }

    fn declare(&self) -> Declaration {
        Declaration {
            inputs: Vec::new(),
            outputs: vec![PortSpec::new("y", self.width)],
            states: Vec::new(),
            guards: 0,
            timing: Timing::Periodic {
                period: self.period,
                offset: self.phase,
            },
        }
    }

    fn output(&mut self, _cx: &mut Ctx, _x: &[f64], _u: &Inputs, y: &mut Outputs) {
        for v in y.all() {
            *v = if self.normal {
                let z: f64 = StandardNormal.sample(&mut self.rng);
                self.a + self.b * z
            } else {
                // 53 random bits in [0, 1).
                let r = (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
                uniform(self.a, self.b, self.max, r)
            };
        }
    }

    fn save(&self, into: &mut SavedState) {
        let pos = self.rng.get_word_pos();
        into.words.push(pos as u64);
        into.words.push((pos >> 64) as u64);
    }

    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        let lo = from.word()? as u128;
        let hi = from.word()? as u128;
        self.rng.set_word_pos(lo | (hi << 64));
        Ok(())
    }
}

#[cfg(test)]
mod uniform_tests {
    use super::uniform;

    /// The largest `r` rounds `1 + 1 * r` up to 2; the draw stays below.
    #[test]
    fn a_uniform_draw_never_reaches_max() {
        let r = 1.0 - f64::EPSILON / 2.0;
        assert_eq!(1.0 + 1.0 * r, 2.0, "the case rounds up");
        let v = uniform(1.0, 1.0, 2.0, r);
        assert!(v < 2.0 && v >= 1.0, "{v}");
        assert_eq!(v, 2.0f64.next_down());
        // Draws that do not round up are unchanged.
        assert_eq!(uniform(-1.0, 4.0, 3.0, 0.25), -1.0 + 4.0 * 0.25);
    }
}
