//! Continuous-time (solver-integrated) controllers.
//!
//! ```text
//! e(t)   = r(t) - y_held[measurements]
//! x_c'   = A x_c + B e
//! u      = sat(C x_c + D e)
//! ```
//!
//! The state `x_c` is integrated by the scenario's solver in lock-step with
//! the plants, with the measurement held between updates and the reference
//! evaluated at the stage times. A PI controller `kp + ki/s` is
//! `kind = "transfer_function", num = [kp, ki], den = [1, 0]`, or in state
//! space `a = [[0]], b = [[1]], c = [[ki]], d = [[kp]]`.
//!
//! Its output at a boundary is `C x_c + D e` (direct). docs/design.md §4.4's rollback
//! response is the same expression one solver step later, obtained without
//! moving anything else (see [`System::rollback_response`](crate::System::rollback_response)).

use super::{BuildContext, LawShape, Limits};
use crate::config::PerChannel;
use crate::error::ConfigError;
use crate::matrix::check_vector;
use crate::plant::linear::{transfer_function_x0, LinearSystem};
use crate::reference::Signal;

super::timing_fields! {
    /// `kind = "state_space"` (controller).
    pub struct ContinuousStateSpaceConfig {
        /// A (n x n); required.
        pub a: Vec<Vec<f64>>,
        /// B (n x ne), ne error channels; required.
        pub b: Vec<Vec<f64>>,
        /// C (m x n), m plant inputs; required.
        pub c: Vec<Vec<f64>>,
        /// D (m x ne); default zero.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub d: Option<Vec<Vec<f64>>>,
        /// Initial controller state; default zero.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub x0: Option<Vec<f64>>,
        /// Measurement channel of each error channel; default `[0, 1, ..., ne-1]`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub measurements: Option<Vec<usize>>,
        /// Lower output limit per channel; default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub u_min: Option<PerChannel>,
        /// Upper output limit per channel; default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub u_max: Option<PerChannel>,
    }
}

super::timing_fields! {
    /// `kind = "transfer_function"` (controller): SISO `num(s)/den(s)` from
    /// `e` to `u`, descending powers.
    pub struct ContinuousTransferFunctionConfig {
        /// Required; degree at most that of `den`.
        pub num: Vec<f64>,
        /// Required; degree >= 1.
        pub den: Vec<f64>,
        /// Initial state of the realisation (as for a `transfer_function`
        /// plant), one entry per state (the degree of `den`); default zero.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub x0: Option<Vec<f64>>,
        /// Measurement channel of the error; default 0.
        #[serde(default)]
        pub measurement: usize,
        /// Lower output limit; default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub u_min: Option<f64>,
        /// Upper output limit; default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub u_max: Option<f64>,
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Continuous {
    sys: LinearSystem,
    measurements: Vec<usize>,
    limits: Limits,
}

impl Continuous {
    pub(crate) fn from_state_space(
        ctx: &BuildContext,
        c: &ContinuousStateSpaceConfig,
    ) -> Result<(Self, LawShape), ConfigError> {
        let sys = LinearSystem::from_config(&ctx.key, &c.a, &c.b, &c.c, c.d.as_deref())?;
        if sys.outputs() != ctx.plant_inputs {
            return Err(ConfigError::Shape {
                key: ctx.k("c"),
                expected_rows: ctx.plant_inputs,
                expected_cols: sys.states(),
                found_rows: sys.outputs(),
                found_cols: sys.states(),
            });
        }
        let ne = sys.inputs();
        let measurements = match &c.measurements {
            Some(v) if v.len() != ne => {
                return Err(ConfigError::Length {
                    key: ctx.k("measurements"),
                    expected: ne,
                    found: v.len(),
                })
            }
            Some(v) => v.clone(),
            None => (0..ne).collect(),
        };
        for (i, &m) in measurements.iter().enumerate() {
            ctx.check_measurement_index(&format!("measurements[{i}]"), m)?;
        }
        let x0 = match &c.x0 {
            Some(x0) => {
                check_vector(&ctx.k("x0"), x0, sys.states())?;
                x0.clone()
            }
            None => vec![0.0; sys.states()],
        };
        let limits = Limits::new(ctx, &c.u_min, &c.u_max)?;
        Self::finish(ctx, sys, measurements, x0, limits)
    }

    pub(crate) fn from_transfer_function(
        ctx: &BuildContext,
        c: &ContinuousTransferFunctionConfig,
    ) -> Result<(Self, LawShape), ConfigError> {
        ctx.check_siso_plant("a transfer_function controller")?;
        ctx.check_measurement_index("measurement", c.measurement)?;
        let sys = LinearSystem::from_transfer_function(&ctx.key, &c.num, &c.den)?;
        let limits = Limits::new(
            ctx,
            &c.u_min.map(PerChannel::All),
            &c.u_max.map(PerChannel::All),
        )?;
        let x0 = transfer_function_x0(&ctx.key, &c.x0, sys.states())?;
        Self::finish(ctx, sys, vec![c.measurement], x0, limits)
    }

    fn finish(
        ctx: &BuildContext,
        sys: LinearSystem,
        measurements: Vec<usize>,
        x0: Vec<f64>,
        limits: Limits,
    ) -> Result<(Self, LawShape), ConfigError> {
        ctx.check_references(
            measurements.len(),
            "this controller (one per error channel)",
        )?;
        let shape = LawShape {
            extras: vec![],
            references: measurements.len(),
            state_names: (0..sys.states()).map(|i| format!("xc{i}")).collect(),
            state0: x0,
            memory: 0,
        };
        Ok((
            Continuous {
                sys,
                measurements,
                limits,
            },
            shape,
        ))
    }

    /// Number of error channels.
    pub(crate) fn errors(&self) -> usize {
        self.measurements.len()
    }

    /// `e = r(t) - y` at a stage time (seconds); an empty `refs` means zero.
    #[inline]
    pub(crate) fn error_at(&self, input: &[f64], refs: &[Signal], t: f64, e: &mut [f64]) {
        for (i, (ei, &m)) in e.iter_mut().zip(&self.measurements).enumerate() {
            let r = refs.get(i).map_or(0.0, |s| s.at_secs(t));
            *ei = r - input[m];
        }
    }

    #[inline]
    pub(crate) fn derivative(&self, x: &[f64], e: &[f64], dx: &mut [f64]) {
        self.sys.derivative(x, e, dx);
    }

    /// `u = sat(C x + D e)` with `e = r - y` from the given reference values.
    pub(crate) fn output(&self, input: &[f64], reference: &[f64], x: &[f64], out: &mut [f64]) {
        // e is tiny (one entry per error channel); computed inline to keep
        // this allocation-free without another scratch buffer.
        self.sys.c.mul_into(x, out);
        let d = &self.sys.d;
        for (row, o) in out.iter_mut().enumerate() {
            for (j, &m) in self.measurements.iter().enumerate() {
                *o += d.get(row, j) * (reference[j] - input[m]);
            }
        }
        self.limits.apply_all(out);
    }
}
