//! Observer-based control: a Luenberger observer in the "current estimator"
//! form with state feedback on the estimate.
//!
//! The model is continuous, `x' = A x + B u, y = C x + D u`. At a computation
//! `n`, `dt` after the previous one, with measurement `y[n]`:
//!
//! ```text
//! predict:  x^- = Phi(dt) x^ + Gamma(dt) u[n-1]          (exact ZOH discretisation)
//! correct:  x^  = x^- + L (y[n] - C x^- - D u[n-1])
//! control:  u[n] = sat(-K x^ + N r[n])
//! ```
//!
//! `Phi = e^(A dt)`, `Gamma = integral_0^dt e^(A s) ds B`, from one matrix
//! exponential of `[[A, B], [0, 0]] dt` and cached for the last `dt` (a
//! time-triggered observer computes it once). `u[n-1]` is the observer's own
//! previous output (what it believes the actuator holds). The first
//! computation only corrects the initial estimate `x0`. With constant `dt`
//! the estimation error obeys `e[n] = (I - L C) Phi e[n-1]`, so `L` is
//! designed as for any discrete current estimator.
//!
//! Without `a`, `b`, `c` the model is the loop's own plant when that is a
//! continuous linear plant.

use super::state_feedback::reference_gain;
use super::{BuildContext, LawShape, Limits, Step};
use crate::config::PerChannel;
use crate::error::ConfigError;
use crate::matrix::{check_vector, Matrix};
use crate::plant::linear::LinearSystem;

super::timing_fields! {
    /// `kind = "observer"`.
    pub struct ObserverConfig {
        /// Model A (n x n); default: the plant's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub a: Option<Vec<Vec<f64>>>,
        /// Model B (n x m); default: the plant's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub b: Option<Vec<Vec<f64>>>,
        /// Model C (ny x n); default: the plant's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub c: Option<Vec<Vec<f64>>>,
        /// Model D (ny x m); default zero (or the plant's).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub d: Option<Vec<Vec<f64>>>,
        /// Observer gain L (n x ny); required.
        pub l: Vec<Vec<f64>>,
        /// Feedback gain K (m x n); required.
        pub k: Vec<Vec<f64>>,
        /// Reference gain N (m x nr); default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub n: Option<Vec<Vec<f64>>>,
        /// Initial estimate; default zero.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub x0: Option<Vec<f64>>,
        /// Lower output limit per channel; default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub u_min: Option<PerChannel>,
        /// Upper output limit per channel; default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub u_max: Option<PerChannel>,
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Observer {
    model: LinearSystem,
    l: Matrix,
    k: Matrix,
    n: Option<Matrix>,
    limits: Limits,
    /// `(dt in ns, Phi, Gamma)` for the last `dt`; a pure function of `dt`,
    /// so not part of a snapshot.
    cache: Option<(u64, Matrix, Matrix)>,
    /// Scratch: predicted state, innovation.
    xp: Vec<f64>,
    innov: Vec<f64>,
}

impl Observer {
    pub(crate) fn new(
        ctx: &BuildContext,
        c: &ObserverConfig,
    ) -> Result<(Self, LawShape), ConfigError> {
        let model = match (&c.a, &c.b, &c.c) {
            (Some(a), Some(b), Some(cm)) => LinearSystem::from_config(&ctx.key, a, b, cm, c.d.as_deref())?,
            (None, None, None) => match ctx.plant_linear {
                Some(sys) if c.d.is_none() => sys.clone(),
                Some(_) => {
                    return Err(ConfigError::invalid(ctx.k("d"), "given without `a`, `b` and `c`"));
                }
                None => {
                    return Err(ConfigError::invalid(
                        ctx.k("a"),
                        "the plant is not a continuous linear plant, so the observer needs its own model `a`, `b`, `c`",
                    ))
                }
            },
            _ => {
                return Err(ConfigError::invalid(
                    ctx.k("a"),
                    "give all of `a`, `b`, `c` or none (to use the plant's model)",
                ))
            }
        };
        let (ns, m, ny) = (model.states(), model.inputs(), model.outputs());
        if m != ctx.plant_inputs {
            return Err(ConfigError::Shape {
                key: ctx.k("b"),
                expected_rows: ns,
                expected_cols: ctx.plant_inputs,
                found_rows: ns,
                found_cols: m,
            });
        }
        if ny != ctx.measurements {
            return Err(ConfigError::Shape {
                key: ctx.k("c"),
                expected_rows: ctx.measurements,
                expected_cols: ns,
                found_rows: ny,
                found_cols: ns,
            });
        }
        let l = Matrix::from_rows_shaped(&ctx.k("l"), &c.l, ns, ny)?;
        let k = Matrix::from_rows_shaped(&ctx.k("k"), &c.k, m, ns)?;
        let n = reference_gain(ctx, &c.n)?;
        let x0 = match &c.x0 {
            Some(x0) => {
                check_vector(&ctx.k("x0"), x0, ns)?;
                x0.clone()
            }
            None => vec![0.0; ns],
        };
        let limits = Limits::new(ctx, &c.u_min, &c.u_max)?;
        let shape = LawShape {
            extras: vec![],
            references: n.as_ref().map_or(0, Matrix::cols),
            state_names: (0..ns).map(|i| format!("xhat{i}")).collect(),
            state0: x0,
            memory: m,
        };
        let obs = Observer {
            model,
            l,
            k,
            n,
            limits,
            cache: None,
            xp: vec![0.0; ns],
            innov: vec![0.0; ny],
        };
        Ok((obs, shape))
    }

    /// `Phi(dt)`, `Gamma(dt)` via `expm([[A, B], [0, 0]] dt)`.
    fn discretise(&mut self, dt_ns: u64) {
        if matches!(self.cache, Some((cached, _, _)) if cached == dt_ns) {
            return;
        }
        let (n, m) = (self.model.states(), self.model.inputs());
        let dt = dt_ns as f64 * 1e-9;
        let mut big = nalgebra::DMatrix::<f64>::zeros(n + m, n + m);
        let a = self.model.a.to_nalgebra();
        let b = self.model.b.to_nalgebra();
        big.view_mut((0, 0), (n, n)).copy_from(&(a * dt));
        big.view_mut((0, n), (n, m)).copy_from(&(b * dt));
        let e = big.exp();
        let phi = Matrix::from_nalgebra(&e.view((0, 0), (n, n)).into_owned());
        let gamma = Matrix::from_nalgebra(&e.view((0, n), (n, m)).into_owned());
        self.cache = Some((dt_ns, phi, gamma));
    }

    /// `state` is the estimate, `mem` the previous output `u[n-1]`.
    pub(crate) fn compute(
        &mut self,
        s: &Step,
        state: &mut [f64],
        mem: &mut [f64],
        out: &mut [f64],
    ) {
        match s.dt {
            Some(dt) if dt.as_nanos() > 0 => {
                self.discretise(dt.as_nanos());
                let (_, phi, gamma) = self.cache.as_ref().expect("discretise fills the cache");
                phi.mul_into(state, &mut self.xp);
                gamma.mul_add_into(mem, &mut self.xp);
            }
            _ => self.xp.copy_from_slice(state),
        }
        // innovation = y - C x^- - D u[n-1]
        let y = &s.input[..self.innov.len()];
        self.innov.copy_from_slice(y);
        self.model.c.mul_sub_into(&self.xp, &mut self.innov);
        self.model.d.mul_sub_into(mem, &mut self.innov);
        state.copy_from_slice(&self.xp);
        self.l.mul_add_into(&self.innov, state);
        match &self.n {
            Some(n) => n.mul_into(s.reference, out),
            None => out.fill(0.0),
        }
        self.k.mul_sub_into(state, out);
        self.limits.apply_all(out);
        mem.copy_from_slice(out);
    }
}
