//! Reference (and disturbance) signals: constant, step, ramp, sine, square,
//! piecewise-linear.
//!
//! A signal is evaluated at two kinds of instants: step boundaries (exact
//! integer nanoseconds, via [`Signal::at`]) and solver stage times inside a
//! step (`f64` seconds, via [`Signal::at_secs`]). Where a signal jumps (a step,
//! the edges of a square wave, a vertical segment of a piecewise-linear
//! signal), the decision "before or after the jump" is taken on integer
//! nanoseconds in both cases, so a step at `1s` is seen by the boundary at
//! exactly `1s` and never flickers with float rounding. Jumps are
//! right-continuous: at the jump instant the signal already has its new value.
//!
//! All times in the config are duration strings (`"1.5s"`); amplitudes, slopes
//! (per second) and frequencies (Hz) are plain numbers.

use netloop_time::SimTime;
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::key_path::KeyPath;
use crate::matrix::check_finite;

/// A signal as written in a scenario file, e.g.
/// `{ kind = "step", at = "1s", final = 1.0 }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SignalConfig {
    /// `value` forever.
    Constant { value: f64 },
    /// `initial` before `at`, `final` from `at` on (Simulink's Step block).
    Step {
        /// Switching time; default `0s`.
        #[serde(default, with = "netloop_time::duration")]
        at: SimTime,
        /// Value before `at`; default 0.
        #[serde(default)]
        initial: f64,
        /// Value from `at` on; required.
        #[serde(rename = "final")]
        final_value: f64,
    },
    /// `initial` before `start`, then `initial + slope * (t - start)`.
    Ramp {
        /// Slope per second; required.
        slope: f64,
        /// Start time; default `0s`.
        #[serde(default, with = "netloop_time::duration")]
        start: SimTime,
        /// Value before and at `start`; default 0.
        #[serde(default)]
        initial: f64,
    },
    /// `offset` before `start`, then
    /// `offset + amplitude * sin(2*pi*frequency*(t - start) + phase)`.
    Sine {
        /// Required.
        amplitude: f64,
        /// In Hz (cycles per second), not rad/s; required.
        frequency: f64,
        /// In radians; default 0.
        #[serde(default)]
        phase: f64,
        /// Default 0.
        #[serde(default)]
        offset: f64,
        /// Default `0s`.
        #[serde(default, with = "netloop_time::duration")]
        start: SimTime,
    },
    /// `low` before `start`; then `high` for the first `duty * period` of every
    /// period and `low` for the rest.
    Square {
        /// Default 0.
        #[serde(default)]
        low: f64,
        /// Default 1.
        #[serde(default = "one")]
        high: f64,
        /// Required, positive.
        #[serde(with = "netloop_time::duration")]
        period: SimTime,
        /// Fraction of the period spent high, in `[0, 1]`; default 0.5. The
        /// high time is rounded to a whole nanosecond.
        #[serde(default = "half")]
        duty: f64,
        /// Default `0s`.
        #[serde(default, with = "netloop_time::duration")]
        start: SimTime,
    },
    /// Linear interpolation between `points = [["0s", 0.0], ["1s", 2.0], ...]`,
    /// held constant before the first and after the last point. Times must not
    /// decrease; two points at the same time make a jump.
    PiecewiseLinear { points: Vec<Point> },
}

fn one() -> f64 {
    1.0
}

fn half() -> f64 {
    0.5
}

/// One breakpoint `(time, value)` of a piecewise-linear signal, written
/// `["1.5s", 2.0]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point(
    #[serde(with = "netloop_time::duration")] pub SimTime,
    pub f64,
);

/// Writes the values of `signals` at `t` into `out` (zeros when there are
/// none): a loop's reference, in a [`System`](crate::System) and in its
/// graph ([`ControllerComponent`](crate::graph::adapters::ControllerComponent)) alike.
pub(crate) fn values_into(signals: &[Signal], t: SimTime, out: &mut [f64]) {
    if signals.is_empty() {
        out.fill(0.0);
    }
    for (o, s) in out.iter_mut().zip(signals) {
        *o = s.at(t);
    }
}

/// A validated signal, ready to evaluate.
#[derive(Clone, Debug, PartialEq)]
pub struct Signal(Kind);

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Constant(f64),
    Step {
        at: u64,
        initial: f64,
        final_value: f64,
    },
    Ramp {
        start: u64,
        start_s: f64,
        slope: f64,
        initial: f64,
    },
    Sine {
        amplitude: f64,
        omega: f64,
        phase: f64,
        offset: f64,
        start: u64,
        start_s: f64,
    },
    Square {
        low: f64,
        high: f64,
        period: u64,
        high_ns: u64,
        start: u64,
    },
    PiecewiseLinear {
        t_ns: Vec<u64>,
        t_s: Vec<f64>,
        v: Vec<f64>,
    },
}

impl Signal {
    /// A constant signal.
    pub fn constant(value: f64) -> Self {
        Signal(Kind::Constant(value))
    }

    /// Validates a config; `key` names it in errors.
    ///
    /// # Errors
    /// [`ConfigError`] naming the key of a non-finite number, a zero square
    /// period, a duty outside `[0, 1]`, or piecewise-linear points that are
    /// missing, decrease in time, or jump more than once at one instant.
    pub fn new(key: &KeyPath, config: &SignalConfig) -> Result<Self, ConfigError> {
        let k = |field: &str| key.child(field);
        let kind = match *config {
            SignalConfig::Constant { value } => {
                check_finite(&k("value"), value)?;
                Kind::Constant(value)
            }
            SignalConfig::Step {
                at,
                initial,
                final_value,
            } => {
                check_finite(&k("initial"), initial)?;
                check_finite(&k("final"), final_value)?;
                Kind::Step {
                    at: at.as_nanos(),
                    initial,
                    final_value,
                }
            }
            SignalConfig::Ramp {
                slope,
                start,
                initial,
            } => {
                check_finite(&k("slope"), slope)?;
                check_finite(&k("initial"), initial)?;
                Kind::Ramp {
                    start: start.as_nanos(),
                    start_s: start.as_secs_f64(),
                    slope,
                    initial,
                }
            }
            SignalConfig::Sine {
                amplitude,
                frequency,
                phase,
                offset,
                start,
            } => {
                check_finite(&k("amplitude"), amplitude)?;
                check_finite(&k("frequency"), frequency)?;
                check_finite(&k("phase"), phase)?;
                check_finite(&k("offset"), offset)?;
                Kind::Sine {
                    amplitude,
                    omega: 2.0 * std::f64::consts::PI * frequency,
                    phase,
                    offset,
                    start: start.as_nanos(),
                    start_s: start.as_secs_f64(),
                }
            }
            SignalConfig::Square {
                low,
                high,
                period,
                duty,
                start,
            } => {
                check_finite(&k("low"), low)?;
                check_finite(&k("high"), high)?;
                if period == SimTime::ZERO {
                    return Err(ConfigError::invalid(k("period"), "must be positive"));
                }
                check_finite(&k("duty"), duty)?;
                if !(0.0..=1.0).contains(&duty) {
                    return Err(ConfigError::invalid(
                        k("duty"),
                        format!("must be in [0, 1], found {duty}"),
                    ));
                }
                let high_ns = (duty * period.as_nanos() as f64).round() as u64;
                Kind::Square {
                    low,
                    high,
                    period: period.as_nanos(),
                    high_ns,
                    start: start.as_nanos(),
                }
            }
            SignalConfig::PiecewiseLinear { ref points } => {
                if points.is_empty() {
                    return Err(ConfigError::invalid(
                        k("points"),
                        "needs at least one point",
                    ));
                }
                for (i, (p, q)) in points.iter().zip(points.iter().skip(1)).enumerate() {
                    if q.0 < p.0 {
                        return Err(ConfigError::invalid(
                            key.child("points").at(i + 1),
                            format!("time {} is before the previous point's {}", q.0, p.0),
                        ));
                    }
                    if i >= 1 && points[i - 1].0 == p.0 && p.0 == q.0 {
                        return Err(ConfigError::invalid(
                            key.child("points").at(i + 1),
                            format!("three points at {}; a jump needs exactly two", q.0),
                        ));
                    }
                }
                for (i, p) in points.iter().enumerate() {
                    check_finite(&key.child("points").at(i), p.1)?;
                }
                Kind::PiecewiseLinear {
                    t_ns: points.iter().map(|p| p.0.as_nanos()).collect(),
                    t_s: points.iter().map(|p| p.0.as_secs_f64()).collect(),
                    v: points.iter().map(|p| p.1).collect(),
                }
            }
        };
        Ok(Signal(kind))
    }

    /// The value at a step boundary (exact time).
    pub fn at(&self, t: SimTime) -> f64 {
        self.eval(t.as_nanos(), t.as_secs_f64())
    }

    /// The value at a solver stage time in seconds. Jumps are decided on the
    /// time rounded to the nearest nanosecond, smooth parts use `t` as is.
    pub fn at_secs(&self, t: f64) -> f64 {
        let ns = if t <= 0.0 {
            0
        } else {
            (t * 1e9).round() as u64
        };
        self.eval(ns, t)
    }

    #[inline]
    fn eval(&self, ns: u64, secs: f64) -> f64 {
        match self.0 {
            Kind::Constant(v) => v,
            Kind::Step {
                at,
                initial,
                final_value,
            } => {
                if ns >= at {
                    final_value
                } else {
                    initial
                }
            }
            Kind::Ramp {
                start,
                start_s,
                slope,
                initial,
            } => {
                if ns <= start {
                    initial
                } else {
                    initial + slope * (secs - start_s)
                }
            }
            Kind::Sine {
                amplitude,
                omega,
                phase,
                offset,
                start,
                start_s,
            } => {
                if ns < start {
                    offset
                } else {
                    offset + amplitude * (omega * (secs - start_s) + phase).sin()
                }
            }
            Kind::Square {
                low,
                high,
                period,
                high_ns,
                start,
            } => {
                if ns < start {
                    low
                } else if (ns - start) % period < high_ns {
                    high
                } else {
                    low
                }
            }
            Kind::PiecewiseLinear {
                ref t_ns,
                ref t_s,
                ref v,
            } => {
                // Index of the first point strictly after `ns`.
                let i = t_ns.partition_point(|&p| p <= ns);
                if i == 0 {
                    v[0]
                } else if i == t_ns.len() {
                    v[i - 1]
                } else {
                    let (t0, t1) = (t_s[i - 1], t_s[i]);
                    let (v0, v1) = (v[i - 1], v[i]);
                    v0 + (v1 - v0) * ((secs - t0) / (t1 - t0))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(text: &str) -> Signal {
        let c: SignalConfig = toml::from_str(text).unwrap();
        Signal::new(&KeyPath::key("r"), &c).unwrap()
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn step_switches_exactly_at_its_time() {
        let s = sig("kind = \"step\"\nat = \"1s\"\ninitial = -1.0\nfinal = 2.0");
        assert_eq!(s.at(SimTime(999_999_999)), -1.0);
        assert_eq!(s.at(SimTime::from_secs(1)), 2.0);
        assert_eq!(s.at_secs(1.0), 2.0);
        assert_eq!(s.at_secs(0.9999999), -1.0);
    }

    #[test]
    fn ramp_sine_square_known_values() {
        let r = sig("kind = \"ramp\"\nslope = 2.0\nstart = \"500ms\"\ninitial = 1.0");
        assert_eq!(r.at(SimTime::from_millis(100)), 1.0);
        assert_eq!(r.at(SimTime::from_millis(1500)), 3.0);

        let s = sig("kind = \"sine\"\namplitude = 2.0\nfrequency = 0.25\noffset = 1.0");
        // sin(2*pi*0.25*1) = 1.
        assert!((s.at(SimTime::from_secs(1)) - 3.0).abs() < 1e-15);
        assert!((s.at(SimTime::from_secs(3)) + 1.0).abs() < 1e-14);

        let q = sig("kind = \"square\"\nperiod = \"10ms\"\nduty = 0.3\nlow = -1.0\nhigh = 1.0");
        let vals: Vec<f64> = (0..12).map(|i| q.at(SimTime(i * MS))).collect();
        assert_eq!(
            vals,
            [1., 1., 1., -1., -1., -1., -1., -1., -1., -1., 1., 1.]
        );
    }

    #[test]
    fn piecewise_linear_interpolates_holds_and_jumps() {
        let p = sig(
            "kind = \"piecewise_linear\"\npoints = [[\"1s\", 0.0], [\"2s\", 4.0], [\"2s\", 1.0], [\"3s\", 1.0]]",
        );
        assert_eq!(p.at(SimTime::ZERO), 0.0);
        assert_eq!(p.at(SimTime::from_millis(1500)), 2.0);
        assert!((p.at(SimTime(2_000_000_000 - 1)) - 4.0 * 0.999_999_999).abs() < 1e-12);
        assert_eq!(p.at(SimTime::from_secs(2)), 1.0, "right-continuous jump");
        assert_eq!(p.at(SimTime::from_secs(9)), 1.0);
    }

    #[test]
    fn invalid_signals_name_their_key() {
        let bad = |text: &str| {
            let c: SignalConfig = toml::from_str(text).unwrap();
            Signal::new(&KeyPath::key("loops").at(0).and("reference"), &c).unwrap_err()
        };
        assert_eq!(
            bad("kind = \"square\"\nperiod = \"1s\"\nduty = 1.5")
                .key()
                .to_string(),
            "loops[0].reference.duty"
        );
        assert_eq!(
            bad("kind = \"piecewise_linear\"\npoints = [[\"2s\", 0.0], [\"1s\", 1.0]]")
                .key()
                .to_string(),
            "loops[0].reference.points[1]"
        );
        assert_eq!(
            bad("kind = \"piecewise_linear\"\npoints = []")
                .key()
                .to_string(),
            "loops[0].reference.points"
        );
        assert!(toml::from_str::<SignalConfig>("kind = \"step\"\nfinal = 1.0\ntypo = 2").is_err());
    }
}
