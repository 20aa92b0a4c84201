//! Observer-based control: a Luenberger observer in the "current estimator"
//! form with state feedback on the estimate.
//!
//! The model is continuous, `x' = A x + B u, y = C x + D u`, or discrete (see
//! below). At a computation `n`, `dt` after the previous one, with
//! measurement `y[n]`:
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
//! linear plant. For a discrete plant (`x[j+1] = A x[j] + B u[j]`, updated at
//! the multiples of its period `Tp`) the prediction is its own update,
//! applied once per plant update since the previous computation:
//! `q = floor(t[n] / Tp) - floor(t[n-1] / Tp)` times, so
//! `Phi = A^q`, `Gamma = (A^(q-1) + ... + A + I) B` (cached for the last `q`;
//! `q = 0` predicts nothing). This is exact when the plant's input over those
//! updates was `u[n-1]`, as it is for computations on the plant's grid with
//! no downlink delay; the error then obeys `e[n] = (I - L C) A^q e[n-1]`.

use netloop_time::SimTime;

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
    /// Period of a discrete model; `None` for a continuous one.
    period: Option<SimTime>,
    l: Matrix,
    k: Matrix,
    n: Option<Matrix>,
    limits: Limits,
    /// `(key, Phi, Gamma)` for the last `dt` in ns (continuous) or update
    /// count `q` (discrete); a pure function of the key, so not part of a
    /// snapshot.
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
        let (model, period) = match (&c.a, &c.b, &c.c) {
            (Some(a), Some(b), Some(cm)) => (LinearSystem::from_config(&ctx.key, a, b, cm, c.d.as_deref())?, None),
            (None, None, None) => match ctx.plant_linear {
                Some((sys, period)) if c.d.is_none() => (sys.clone(), period),
                Some(_) => {
                    return Err(ConfigError::invalid(ctx.k("d"), "given without `a`, `b` and `c`"));
                }
                None => {
                    return Err(ConfigError::invalid(
                        ctx.k("a"),
                        "the plant is not a linear plant, so the observer needs its own model `a`, `b`, `c`",
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
            period,
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

    /// What to predict over since the previous computation at `t - dt`: the
    /// elapsed ns for a continuous model, the number of plant updates for a
    /// discrete one; `None` when nothing happened in between.
    fn prediction_key(&self, t: SimTime, dt: SimTime) -> Option<u64> {
        let key = match self.period {
            None => dt.as_nanos(),
            Some(tp) => {
                let tp = tp.as_nanos();
                t.as_nanos() / tp - t.saturating_sub(dt).as_nanos() / tp
            }
        };
        (key > 0).then_some(key)
    }

    /// `Phi`, `Gamma` for `key` (see [`prediction_key`](Self::prediction_key)):
    /// continuous via `expm([[A, B], [0, 0]] dt)`, discrete by `q` updates.
    fn discretise(&mut self, key: u64) {
        if matches!(self.cache, Some((cached, _, _)) if cached == key) {
            return;
        }
        let (n, m) = (self.model.states(), self.model.inputs());
        let a = self.model.a.to_nalgebra();
        let b = self.model.b.to_nalgebra();
        let (phi, gamma) = match self.period {
            None => {
                let dt = key as f64 * 1e-9;
                let mut big = nalgebra::DMatrix::<f64>::zeros(n + m, n + m);
                big.view_mut((0, 0), (n, n)).copy_from(&(a * dt));
                big.view_mut((0, n), (n, m)).copy_from(&(b * dt));
                let e = big.exp();
                (
                    e.view((0, 0), (n, n)).into_owned(),
                    e.view((0, n), (n, m)).into_owned(),
                )
            }
            Some(_) => {
                // After j updates: Phi = A^j, Gamma = (A^(j-1) + ... + I) B.
                let mut phi = nalgebra::DMatrix::<f64>::identity(n, n);
                let mut gamma = nalgebra::DMatrix::<f64>::zeros(n, m);
                for _ in 0..key {
                    gamma = &a * gamma + &b;
                    phi = &a * phi;
                }
                (phi, gamma)
            }
        };
        self.cache = Some((
            key,
            Matrix::from_nalgebra(&phi),
            Matrix::from_nalgebra(&gamma),
        ));
    }

    /// `state` is the estimate, `mem` the previous output `u[n-1]`.
    pub(crate) fn compute(
        &mut self,
        s: &Step,
        state: &mut [f64],
        mem: &mut [f64],
        out: &mut [f64],
    ) {
        match s.dt.and_then(|dt| self.prediction_key(s.t, dt)) {
            Some(key) => {
                self.discretise(key);
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
