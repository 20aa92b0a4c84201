//! Discrete PID with a filtered derivative, anti-windup and output limits,
//! on the actual time elapsed between computations.
//!
//! Parallel form `v = kp e + I + D`, `u = sat(v)`, with `e = r - y` and `y` the
//! chosen measurement. `sat` clips to `[u_min, u_max]`; an unset limit is the
//! actuator's, so that anti-windup knows where the plant input saturates.
//! Between two computations at `t[n-1]` and `t[n]` (`dt = t[n] - t[n-1]`), the
//! inputs the controller used at `t[n-1]` were held, so:
//!
//! - integral (forward Euler over the held interval, Åström & Hägglund's
//!   discrete PID): `I += dt (ki e[n-1] + aw)`, where the anti-windup term is
//!   - `none`: 0;
//!   - `clamping` (conditional integration): the whole increment is skipped
//!     when the output was saturated at `t[n-1]` and `ki e[n-1]` pushes
//!     further into that limit;
//!   - `back_calculation`: `aw = (u[n-1] - v[n-1]) / Tt`, tracking time `Tt`
//!     (default `sqrt(Ti Td)` with `Ti = kp/ki`, `Td = kd/kp`, or `Ti` when
//!     `kd = 0`). While saturated the integrator approaches its tracking
//!     value by the factor `1 - dt/Tt` per computation, so `Tt` must exceed
//!     half the controller period; a config that breaks this is rejected;
//! - derivative (first-order filter `kd s / (Tf s + 1)`, backward Euler, stable
//!   for any `dt`): `D = (Tf D + kd (s[n] - s[n-1])) / (Tf + dt)`, with
//!   `s = -y` (derivative on measurement, default: no kick on reference
//!   steps) or `s = e`. The default `Tf = Td / 10` (`N = 10`). With `Tf = 0`
//!   and `dt = 0` (two computations at one instant) `D` is kept.
//!
//! First computation: nothing to integrate, `D = 0`, `I = integral0`.
//! For a time-triggered controller `dt` is the period and this is the textbook
//! discrete PID.

use netloop_time::SimTime;
use serde::{Deserialize, Serialize};

use super::{BuildContext, LawShape, Limits, Step};
use crate::error::ConfigError;
use crate::matrix::{check_finite, check_non_negative, check_positive};

super::timing_fields! {
    /// `kind = "pid"`.
    pub struct PidConfig {
        /// Proportional gain; required.
        pub kp: f64,
        /// Integral gain (per second); default 0.
        #[serde(default)]
        pub ki: f64,
        /// Derivative gain (seconds); default 0.
        #[serde(default)]
        pub kd: f64,
        /// Derivative filter time constant Tf, s; default `kd / (10 kp)` (0
        /// when `kp` or `kd` is 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub filter_time_constant: Option<f64>,
        /// Default `measurement`.
        #[serde(default)]
        pub derivative_on: DerivativeOn,
        /// Default `clamping`.
        #[serde(default)]
        pub anti_windup: AntiWindup,
        /// Tt for `back_calculation`, s; default as in the module docs. Must be
        /// above half the controller period (the sensor period when
        /// event-triggered), where the tracking update is stable.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tracking_time: Option<f64>,
        /// Lower output limit; default the actuator's `min` (none if it has none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub u_min: Option<f64>,
        /// Upper output limit; default the actuator's `max` (none if it has none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub u_max: Option<f64>,
        /// Which measurement channel is the controlled variable; default 0.
        #[serde(default)]
        pub measurement: usize,
        /// Initial integral term; default 0.
        #[serde(default)]
        pub integral0: f64,
    }
}

/// What the derivative acts on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DerivativeOn {
    /// `-y`: no derivative kick on reference steps.
    #[default]
    Measurement,
    /// `e = r - y`.
    Error,
}

/// Integrator anti-windup scheme.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AntiWindup {
    None,
    /// Conditional integration.
    #[default]
    Clamping,
    BackCalculation,
}

/// Indices into the PID's state `[integral, derivative]`.
const I: usize = 0;
const D: usize = 1;
/// Indices into its memory.
const PREV_S: usize = 0;
const PREV_E: usize = 1;
const PREV_EXCESS: usize = 2;
const PREV_SAT: usize = 3;

#[derive(Clone, Debug)]
pub(crate) struct Pid {
    kp: f64,
    ki: f64,
    kd: f64,
    tf: f64,
    on: DerivativeOn,
    aw: AntiWindup,
    tt: f64,
    measurement: usize,
    limits: Limits,
}

impl Pid {
    /// `interval` is the nominal time between computations.
    pub(crate) fn new(
        ctx: &BuildContext,
        c: &PidConfig,
        interval: SimTime,
    ) -> Result<(Self, LawShape), ConfigError> {
        check_finite(&ctx.k("kp"), c.kp)?;
        check_finite(&ctx.k("ki"), c.ki)?;
        check_finite(&ctx.k("kd"), c.kd)?;
        check_finite(&ctx.k("integral0"), c.integral0)?;
        ctx.check_siso_plant("a pid controller")?;
        ctx.check_measurement_index("measurement", c.measurement)?;
        ctx.check_references(1, "a pid controller")?;
        let tf = match c.filter_time_constant {
            Some(tf) => {
                check_non_negative(&ctx.k("filter_time_constant"), tf)?;
                tf
            }
            None if c.kp != 0.0 && c.kd != 0.0 => (c.kd / c.kp / 10.0).abs(),
            None => 0.0,
        };
        let tt = match (c.anti_windup, c.tracking_time) {
            (AntiWindup::BackCalculation, Some(tt)) => {
                check_positive(&ctx.k("tracking_time"), tt)?;
                tt
            }
            (AntiWindup::BackCalculation, None) => {
                if c.kp == 0.0 || c.ki == 0.0 {
                    return Err(ConfigError::invalid(
                        ctx.k("tracking_time"),
                        "back_calculation needs a tracking_time when kp or ki is 0 (no default Ti = kp/ki)",
                    ));
                }
                let ti = (c.kp / c.ki).abs();
                let td = (c.kd / c.kp).abs();
                if td > 0.0 {
                    (ti * td).sqrt()
                } else {
                    ti
                }
            }
            (_, Some(_)) => {
                return Err(ConfigError::invalid(
                    ctx.k("tracking_time"),
                    "only used with anti_windup = \"back_calculation\"",
                ))
            }
            (_, None) => 0.0,
        };
        // While saturated, back-calculation updates the integrator's distance
        // to its tracking value by the factor 1 - dt/Tt each computation, which
        // only decays for dt/Tt < 2.
        let half = 0.5 * interval.as_secs_f64();
        if c.anti_windup == AntiWindup::BackCalculation && tt <= half {
            let which = match c.tracking_time {
                Some(_) => format!("{tt} s"),
                None => format!("the default sqrt(Ti Td) (or Ti) = {tt} s"),
            };
            return Err(ConfigError::invalid(
                ctx.k("tracking_time"),
                format!(
                    "{which} must be above half the controller period ({half} s): \
                     back-calculation is unstable for period / tracking_time >= 2"
                ),
            ));
        }
        // Anti-windup acts at the PID's own limits, so without defaults it
        // would silently do nothing in a loop whose only limits are the
        // actuator's. Each unset side is therefore the actuator's saturation.
        let limits = Limits::or_defaults(
            ctx,
            &c.u_min.map(crate::config::PerChannel::All),
            &c.u_max.map(crate::config::PerChannel::All),
            ctx.actuator_min,
            ctx.actuator_max,
        )?;
        let pid = Pid {
            kp: c.kp,
            ki: c.ki,
            kd: c.kd,
            tf,
            on: c.derivative_on,
            aw: c.anti_windup,
            tt,
            measurement: c.measurement,
            limits,
        };
        let shape = LawShape {
            extras: vec![],
            references: 1,
            state_names: vec!["integral".into(), "derivative".into()],
            state0: vec![c.integral0, 0.0],
            memory: 4,
        };
        Ok((pid, shape))
    }

    pub(crate) fn compute(&self, s: &Step, state: &mut [f64], mem: &mut [f64], out: &mut [f64]) {
        let y = s.input[self.measurement];
        let e = s.reference[0] - y;
        let sig = match self.on {
            DerivativeOn::Measurement => -y,
            DerivativeOn::Error => e,
        };
        if let Some(dt) = s.dt {
            let dt = dt.as_secs_f64();
            let ep = mem[PREV_E];
            match self.aw {
                AntiWindup::None => state[I] += dt * (self.ki * ep),
                AntiWindup::Clamping => {
                    let pushes_further = mem[PREV_SAT] * self.ki * ep > 0.0;
                    if !pushes_further {
                        state[I] += dt * (self.ki * ep);
                    }
                }
                AntiWindup::BackCalculation => {
                    state[I] += dt * (self.ki * ep + mem[PREV_EXCESS] / self.tt);
                }
            }
            let denom = self.tf + dt;
            if denom > 0.0 {
                state[D] = (self.tf * state[D] + self.kd * (sig - mem[PREV_S])) / denom;
            }
        }
        let v = self.kp * e + state[I] + state[D];
        let (u, sat) = self.limits.apply(0, v);
        mem[PREV_S] = sig;
        mem[PREV_E] = e;
        mem[PREV_EXCESS] = u - v;
        mem[PREV_SAT] = sat;
        out[0] = u;
    }
}

#[cfg(test)]
mod tests {
    //! Known-value sequences worked out by hand from the update rules in the
    //! module docs, every computation 0.1 s after the previous one.

    use super::*;
    use crate::sensor::SensorSource;

    /// Runs the PID given by `toml_text` (no actuator limits) on `(r, y)`
    /// pairs; returns `(u, I, D)` after each computation.
    fn run(toml_text: &str, inputs: &[(f64, f64)]) -> Vec<[f64; 3]> {
        let c: PidConfig = toml::from_str(toml_text).unwrap();
        let ctx = BuildContext {
            key: "pid".into(),
            reference_key: "reference".into(),
            measurements: 1,
            plant_inputs: 1,
            references: 1,
            plant_linear: None,
            actuator_min: &[f64::NEG_INFINITY],
            actuator_max: &[f64::INFINITY],
            sensor_source: SensorSource::Plant,
            predecessor: None,
        };
        let dt = SimTime::from_millis(100);
        let (pid, shape) = Pid::new(&ctx, &c, dt).unwrap();
        let mut state = shape.state0;
        let mut mem = vec![0.0; shape.memory];
        let mut out = [0.0];
        inputs
            .iter()
            .enumerate()
            .map(|(n, &(r, y))| {
                let s = Step {
                    t: SimTime(n as u64 * dt.as_nanos()),
                    dt: (n > 0).then_some(dt),
                    input: &[y],
                    reference: &[r],
                };
                pid.compute(&s, &mut state, &mut mem, &mut out);
                [out[0], state[I], state[D]]
            })
            .collect()
    }

    fn assert_close(got: &[[f64; 3]], column: usize, expected: &[f64]) {
        assert_eq!(got.len(), expected.len());
        for (n, (g, e)) in got.iter().zip(expected).enumerate() {
            assert!(
                (g[column] - e).abs() < 1e-12,
                "n = {n}, column {column}: {} vs {e}",
                g[column]
            );
        }
    }

    /// kp = 1, ki = 2, u_max = 1, Tt = 0.25, r = 3; y = 0, then 2.5 from n = 4.
    /// `I += 0.1 (2 e[n-1] + (u[n-1] - v[n-1]) / 0.25)`, `v = e + I`:
    /// - n = 0: I = 0, v = 3, u = 1 (excess -2);
    /// - n = 1: I = 0.1 (6 - 8) = -0.2, v = 2.8;
    /// - n = 2: I = -0.2 + 0.1 (6 - 7.2) = -0.32, v = 2.68;
    /// - n = 3: I = -0.32 + 0.1 (6 - 6.72) = -0.392, v = 2.608 (I tends to
    ///   -0.5, where ki e balances the excess, by the factor 1 - dt/Tt = 0.6);
    /// - n = 4: I = -0.392 + 0.1 (6 - 6.432) = -0.4352, e = 0.5,
    ///   v = u = 0.0648 (unsaturated: no excess from now on);
    /// - n = 5: I = -0.4352 + 0.1 (2 * 0.5) = -0.3352, u = 0.1648.
    #[test]
    fn back_calculation_known_sequence() {
        let got = run(
            "kp = 1.0\nki = 2.0\nu_max = 1.0\nanti_windup = \"back_calculation\"\ntracking_time = 0.25",
            &[(3.0, 0.0), (3.0, 0.0), (3.0, 0.0), (3.0, 0.0), (3.0, 2.5), (3.0, 2.5)],
        );
        assert_close(&got, 1, &[0.0, -0.2, -0.32, -0.392, -0.4352, -0.3352]);
        assert_close(&got, 0, &[1.0, 1.0, 1.0, 1.0, 0.0648, 0.1648]);
    }

    /// Clamping skips the integration only while the output is saturated
    /// *and* the error pushes further into that limit. kp = 1, ki = 2,
    /// limits +-1, integral0 = 2 s, r = s, with s = +1 and, mirrored, s = -1;
    /// y = 0 for n = 0, 1, then 1.5 s (error -0.5 s, while still saturated):
    /// - n = 0..2: saturated at s with I = 2 s; at n = 1 and 2 the previous
    ///   error s pushes further, so I stays;
    /// - n = 3: the previous error -0.5 s pulls back out, so integration
    ///   resumes while still saturated: I = 2 s - 0.1 * 2 * 0.5 s = 1.9 s;
    /// - then I drops by 0.1 s per computation; v = -0.5 s + I leaves the
    ///   limit at n = 7 (v = s) and u = 0.9 s, 0.8 s after it.
    #[test]
    fn clamping_resumes_integrating_when_the_error_changes_sign() {
        for s in [1.0f64, -1.0] {
            let inputs: Vec<(f64, f64)> = (0..10)
                .map(|n| (s, if n < 2 { 0.0 } else { 1.5 * s }))
                .collect();
            let got = run(
                &format!(
                    "kp = 1.0\nki = 2.0\nu_min = -1.0\nu_max = 1.0\nintegral0 = {:?}",
                    2.0 * s
                ),
                &inputs,
            );
            let i: Vec<f64> = [2.0, 2.0, 2.0, 1.9, 1.8, 1.7, 1.6, 1.5, 1.4, 1.3]
                .iter()
                .map(|v| v * s)
                .collect();
            assert_close(&got, 1, &i);
            let u: Vec<f64> = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8]
                .iter()
                .map(|v| v * s)
                .collect();
            assert_close(&got, 0, &u);
        }
    }

    /// kp = 1, kd = 0.5, Tf = 0.1, r steps from 0 to 1 at n = 2 while y goes
    /// 0, 0.2, 0.5, 0.5, 0.5. `D = (0.1 D + 0.5 (s[n] - s[n-1])) / 0.2`:
    /// - on the measurement (`s = -y`): D = 0, -0.5, (-0.05 - 0.15) / 0.2 = -1,
    ///   -0.5, -0.25 (the filter halves D once y stops), so
    ///   u = e + D = 0, -0.7, -0.5, 0, 0.25: no kick from the reference step;
    /// - on the error (`s = e`, e = 0, -0.2, 0.5, 0.5, 0.5): D = 0, -0.5,
    ///   (-0.05 + 0.35) / 0.2 = 1.5, 0.75, 0.375, u = 0, -0.7, 2, 1.25, 0.875.
    #[test]
    fn filtered_derivative_on_measurement_known_sequence() {
        let inputs = [(0.0, 0.0), (0.0, 0.2), (1.0, 0.5), (1.0, 0.5), (1.0, 0.5)];
        let got = run("kp = 1.0\nkd = 0.5\nfilter_time_constant = 0.1", &inputs);
        assert_close(&got, 2, &[0.0, -0.5, -1.0, -0.5, -0.25]);
        assert_close(&got, 0, &[0.0, -0.7, -0.5, 0.0, 0.25]);
        let got = run(
            "kp = 1.0\nkd = 0.5\nfilter_time_constant = 0.1\nderivative_on = \"error\"",
            &inputs,
        );
        assert_close(&got, 2, &[0.0, -0.5, 1.5, 0.75, 0.375]);
        assert_close(&got, 0, &[0.0, -0.7, 2.0, 1.25, 0.875]);
    }
}
