//! Continuous blocks: `integrator` (initial condition, limits, external
//! reset), `derivative`, `transfer_function`, `state_space`,
//! `zero_pole_gain` and `transport_delay`.
//!
//! Inputs are held over each step (as for every component). The
//! `integrator` therefore adds exactly `h * u` per step and keeps its value
//! as an internal state, which makes its limits and resets exact at the
//! boundaries; the linear blocks integrate their states with the run's
//! solver (their own dynamics inside the step are resolved).

use netloop_time::SimTime;
use serde::{Deserialize, Serialize};

use super::common::{finite, finite_all, matrix, one, secs, width, Values};
use super::BlockContext;
use crate::error::ConfigError;
use crate::graph::{
    Component, Ctx, Declaration, Inputs, Lowered, Needs, Outputs, PortSpec, SavedState,
    StateMismatch, StateReader, Timing,
};
use crate::key_path::KeyPath;
use crate::solver::{FixedRhs, SolverKind, Workspace};

/// When an `integrator`'s `reset` input resets it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResetMode {
    /// No `reset` input.
    #[default]
    None,
    /// From `<= 0` to `> 0`.
    Rising,
    /// From `> 0` to `<= 0`.
    Falling,
    /// Either edge.
    Either,
    /// At every boundary where it is non-zero.
    Level,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntegratorConfig {
    /// Start value, and the value a reset sets without `external_initial`.
    #[serde(default = "zero_values")]
    pub initial: Values,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<f64>,
    #[serde(default)]
    pub reset: ResetMode,
    /// Adds an input `x0`: the value a reset sets.
    #[serde(default)]
    pub external_initial: bool,
    #[serde(default = "one")]
    pub width: usize,
}

fn zero_values() -> Values {
    Values::One(0.0)
}

/// `integrator`: `y(k+1) = clamp(y(k) + h u(k))`, or the reset value.
#[derive(Clone, Debug)]
pub struct Integrator {
    x: Vec<f64>,
    initial: Vec<f64>,
    lower: f64,
    upper: f64,
    reset: ResetMode,
    external_initial: bool,
    /// The `reset` input at the previous boundary, for edges.
    last: Vec<f64>,
}

impl Integrator {
    pub fn new(key: &KeyPath, c: &IntegratorConfig) -> Result<Self, ConfigError> {
        let w = width(&key.child("width"), c.width)?;
        let initial = c.initial.resolve(&key.child("initial"), w)?;
        let lower = c
            .lower
            .map_or(Ok(f64::NEG_INFINITY), |v| finite(&key.child("lower"), v))?;
        let upper = c
            .upper
            .map_or(Ok(f64::INFINITY), |v| finite(&key.child("upper"), v))?;
        if lower > upper {
            return Err(ConfigError::invalid(
                key.child("upper"),
                "must not be below `lower`",
            ));
        }
        if initial.iter().any(|&v| v < lower || v > upper) {
            return Err(ConfigError::invalid(
                key.child("initial"),
                "must lie within `lower` and `upper`",
            ));
        }
        Ok(Integrator {
            x: initial.clone(),
            initial,
            lower,
            upper,
            reset: c.reset,
            external_initial: c.external_initial,
            last: vec![0.0; w],
        })
    }

    fn reset_port(&self) -> Option<usize> {
        (self.reset != ResetMode::None).then_some(1)
    }

    fn x0_port(&self) -> Option<usize> {
        self.external_initial
            .then_some(1 + usize::from(self.reset != ResetMode::None))
    }

    fn fires(&self, last: f64, now: f64) -> bool {
        match self.reset {
            ResetMode::None => false,
            ResetMode::Rising => last <= 0.0 && now > 0.0,
            ResetMode::Falling => last > 0.0 && now <= 0.0,
            ResetMode::Either => (last > 0.0) != (now > 0.0),
            ResetMode::Level => now != 0.0,
        }
    }
}

impl Component for Integrator {
    /// `advance` moves the state over every step; no fault.
    fn needs(&self) -> Needs {
        Needs::ADVANCE
    }

    fn declare(&self) -> Declaration {
        let w = self.x.len();
        let mut inputs = vec![PortSpec::new("u", w).delayed()];
        if self.reset_port().is_some() {
            inputs.push(PortSpec::new("reset", w).delayed());
        }
        if self.x0_port().is_some() {
            inputs.push(PortSpec::new("x0", w).delayed());
        }
        Declaration {
            inputs,
            outputs: vec![PortSpec::new("y", w)],
            states: Vec::new(),
            guards: 0,
            timing: Timing::EveryStep,
        }
    }

    fn initial_outputs(&self, y: &mut Outputs) {
        y.all().copy_from_slice(&self.x);
    }

    fn start(&mut self, u: &Inputs) {
        if let Some(p) = self.reset_port() {
            self.last.copy_from_slice(u.port(p));
        }
    }

    fn output(&mut self, _: &mut Ctx, _: &[f64], _: &Inputs, y: &mut Outputs) {
        y.all().copy_from_slice(&self.x);
    }

    /// The step's integral, or the reset where the `reset` input fires at
    /// this boundary (the output shows it from the next boundary on).
    fn advance(&mut self, cx: &mut Ctx, u: &Inputs) {
        let h = cx.step.as_secs_f64();
        let du = u.port(0);
        for i in 0..self.x.len() {
            let fired = match self.reset_port() {
                Some(p) => {
                    let now = u.port(p)[i];
                    let f = self.fires(self.last[i], now);
                    self.last[i] = now;
                    f
                }
                None => false,
            };
            let v = if fired {
                match self.x0_port() {
                    Some(p) => u.port(p)[i],
                    None => self.initial[i],
                }
            } else {
                self.x[i] + h * du[i]
            };
            self.x[i] = v.clamp(self.lower, self.upper);
        }
    }

    fn discrete_states(&self) -> &[f64] {
        &self.x
    }

    fn save(&self, into: &mut SavedState) {
        into.reals.extend_from_slice(&self.x);
        into.reals.extend_from_slice(&self.last);
    }

    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        from.reals(&mut self.x)?;
        from.reals(&mut self.last)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivativeConfig {
    #[serde(default = "one")]
    pub width: usize,
}

/// `derivative`: `(u(k) - u(k-1)) / h`, 0 at the first boundary.
#[derive(Clone, Debug)]
pub struct Derivative {
    prev: Vec<f64>,
    /// Time of `prev` in seconds; NaN before the first evaluation.
    t_prev: f64,
}

impl Derivative {
    pub fn new(key: &KeyPath, c: &DerivativeConfig) -> Result<Self, ConfigError> {
        Ok(Derivative {
            prev: vec![0.0; width(&key.child("width"), c.width)?],
            t_prev: f64::NAN,
        })
    }
}

impl Component for Derivative {
    fn needs(&self) -> Needs {
        Needs::OUTPUT_ONLY
    }

    fn declare(&self) -> Declaration {
        Declaration {
            inputs: vec![PortSpec::new("u", self.prev.len())],
            outputs: vec![PortSpec::new("y", self.prev.len())],
            states: Vec::new(),
            guards: 0,
            timing: Timing::EveryStep,
        }
    }

    fn output(&mut self, cx: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        let t = secs(cx.now);
        let y = y.all();
        for ((yi, p), &ui) in y.iter_mut().zip(self.prev.iter_mut()).zip(u.all()) {
            *yi = if self.t_prev.is_nan() {
                0.0
            } else {
                (ui - *p) / (t - self.t_prev)
            };
            *p = ui;
        }
        self.t_prev = t;
    }

    fn save(&self, into: &mut SavedState) {
        into.reals.extend_from_slice(&self.prev);
        into.reals.push(self.t_prev);
    }

    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        from.reals(&mut self.prev)?;
        let mut t = [0.0];
        from.reals(&mut t)?;
        self.t_prev = t[0];
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferFunctionConfig {
    /// Numerator coefficients, highest power of `s` first.
    pub num: Vec<f64>,
    /// Denominator coefficients, highest power first; at least as long as `num`.
    pub den: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateSpaceConfig {
    pub a: Vec<Vec<f64>>,
    pub b: Vec<Vec<f64>>,
    pub c: Vec<Vec<f64>>,
    /// Default: zeros.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub d: Option<Vec<Vec<f64>>>,
    /// Initial state; default zeros.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x0: Option<Vec<f64>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZeroPoleGainConfig {
    /// Real zeros.
    #[serde(default)]
    pub zeros: Vec<f64>,
    /// Real poles; at least as many as zeros.
    pub poles: Vec<f64>,
    #[serde(default = "super::common::unit")]
    pub gain: f64,
}

/// A linear model `x' = A x + B u`, `y = C x + D u` (row-major matrices),
/// shared by the continuous blocks and, as difference equations, by the
/// discrete ones.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LinearModel {
    pub(crate) n: usize,
    pub(crate) m: usize,
    pub(crate) p: usize,
    pub(crate) a: Vec<f64>,
    pub(crate) b: Vec<f64>,
    pub(crate) c: Vec<f64>,
    pub(crate) d: Vec<f64>,
    pub(crate) x0: Vec<f64>,
}

impl LinearModel {
    /// The controllable canonical form of `num / den` (highest power first).
    pub(crate) fn from_transfer_function(
        key: &KeyPath,
        num: &[f64],
        den: &[f64],
    ) -> Result<Self, ConfigError> {
        finite_all(&key.child("num"), num)?;
        finite_all(&key.child("den"), den)?;
        let lead = den.iter().position(|&v| v != 0.0).ok_or_else(|| {
            ConfigError::invalid(key.child("den"), "needs a non-zero coefficient")
        })?;
        let den = &den[lead..];
        let num_lead = num.iter().position(|&v| v != 0.0).unwrap_or(num.len());
        let num = &num[num_lead..];
        if num.len() > den.len() {
            return Err(ConfigError::invalid(
                key.child("num"),
                "the transfer function must be proper: `num` no longer than `den` (leading zeros aside)",
            ));
        }
        let n = den.len() - 1;
        width(&key.child("den"), n.max(1))?;
        let a0 = den[0];
        let a: Vec<f64> = den[1..].iter().map(|v| v / a0).collect();
        let mut b = vec![0.0; n + 1 - num.len()];
        b.extend(num.iter().map(|v| v / a0));
        let d0 = b[0];
        let mut am = vec![0.0; n * n];
        for i in 0..n.saturating_sub(1) {
            am[i * n + i + 1] = 1.0;
        }
        // Last row: -a_n x1 - ... - a_1 xn.
        for j in 0..n {
            am[(n - 1) * n + j] = -a[n - 1 - j];
        }
        let mut bm = vec![0.0; n];
        if n > 0 {
            bm[n - 1] = 1.0;
        }
        let cm: Vec<f64> = (0..n).map(|j| b[n - j] - a[n - 1 - j] * d0).collect();
        Ok(LinearModel {
            n,
            m: 1,
            p: 1,
            a: am,
            b: bm,
            c: cm,
            d: vec![d0],
            x0: vec![0.0; n],
        })
    }

    pub(crate) fn from_state_space(
        key: &KeyPath,
        c: &StateSpaceConfig,
    ) -> Result<Self, ConfigError> {
        let (n, na, a) = matrix(&key.child("a"), &c.a)?;
        if n != na {
            return Err(ConfigError::invalid(key.child("a"), "must be square"));
        }
        let (nb, m, b) = matrix(&key.child("b"), &c.b)?;
        if nb != n || m == 0 {
            return Err(ConfigError::invalid(
                key.child("b"),
                format!("must have {n} rows (as `a`) and at least one column"),
            ));
        }
        let (p, nc, cm) = matrix(&key.child("c"), &c.c)?;
        if nc != n || p == 0 {
            return Err(ConfigError::invalid(
                key.child("c"),
                format!("must have {n} columns (as `a`) and at least one row"),
            ));
        }
        width(&key.child("a"), n.max(1))?;
        width(&key.child("b").at(0), m)?;
        width(&key.child("c"), p)?;
        let d = match &c.d {
            None => vec![0.0; p * m],
            Some(d) => {
                let (pd, md, d) = matrix(&key.child("d"), d)?;
                if pd != p || md != m {
                    return Err(ConfigError::invalid(
                        key.child("d"),
                        format!("must be {p} x {m}"),
                    ));
                }
                d
            }
        };
        let x0 = match &c.x0 {
            None => vec![0.0; n],
            Some(x) if x.len() == n => {
                finite_all(&key.child("x0"), x)?;
                x.clone()
            }
            Some(x) => {
                return Err(ConfigError::invalid(
                    key.child("x0"),
                    format!("has {} values for {n} states", x.len()),
                ))
            }
        };
        Ok(LinearModel {
            n,
            m,
            p,
            a,
            b,
            c: cm,
            d,
            x0,
        })
    }

    pub(crate) fn direct(&self) -> bool {
        self.d.iter().any(|&v| v != 0.0)
    }

    /// `y = C x + D u`.
    #[inline]
    pub(crate) fn output(&self, x: &[f64], u: &[f64], y: &mut [f64]) {
        for (i, yi) in y.iter_mut().enumerate() {
            let mut s = 0.0;
            for j in 0..self.n {
                s += self.c[i * self.n + j] * x[j];
            }
            for j in 0..self.m {
                s += self.d[i * self.m + j] * u[j];
            }
            *yi = s;
        }
    }

    /// [`next`](Self::next) for `N` states known at compile time, so the
    /// loops unroll: the same operations in the same order, so the same
    /// bits (row by row, `0.0`, then `A`'s terms, then `B`'s).
    #[inline(always)]
    fn next_fixed<const N: usize>(&self, x: &[f64; N], u: &[f64], dx: &mut [f64; N]) {
        let a = &self.a[..N * N];
        // One input (the common case): its checks once per call.
        if let ([u0], Some(b)) = (u, self.b.first_chunk::<N>()) {
            for i in 0..N {
                let mut s = 0.0;
                for j in 0..N {
                    s += a[i * N + j] * x[j];
                }
                dx[i] = s + b[i] * u0;
            }
            return;
        }
        self.next(x, u, dx);
    }

    /// One step of `x' = A x + B u` with `u` held, by `solver`: states of up
    /// to four elements through [`SolverKind::step_fixed`] with
    /// [`next_fixed`](Self::next_fixed) inlined into its stages, larger
    /// ones through the general solver; the same bits either way.
    #[inline]
    pub(crate) fn integrate(
        &self,
        solver: SolverKind,
        ws: &mut Workspace,
        t: f64,
        h: f64,
        x: &mut [f64],
        u: &[f64],
    ) {
        struct Rhs<'a> {
            model: &'a LinearModel,
            u: &'a [f64],
        }
        impl<const N: usize> FixedRhs<N> for Rhs<'_> {
            #[inline(always)]
            fn eval(&mut self, _: f64, x: &[f64; N], dx: &mut [f64; N]) {
                self.model.next_fixed(x, self.u, dx);
            }
        }
        macro_rules! fixed {
            ($n:literal) => {
                if let Some(x) = x.first_chunk_mut::<$n>() {
                    return solver.step_fixed(t, h, x, Rhs { model: self, u });
                }
            };
        }
        match x.len() {
            1 => fixed!(1),
            2 => fixed!(2),
            3 => fixed!(3),
            4 => fixed!(4),
            _ => {}
        }
        solver.step(ws, t, h, x, |_, x, dx| self.next(x, u, dx));
    }

    /// `A x + B u`.
    #[inline]
    pub(crate) fn next(&self, x: &[f64], u: &[f64], dx: &mut [f64]) {
        for (i, di) in dx.iter_mut().enumerate() {
            let mut s = 0.0;
            for j in 0..self.n {
                s += self.a[i * self.n + j] * x[j];
            }
            for j in 0..self.m {
                s += self.b[i * self.m + j] * u[j];
            }
            *di = s;
        }
    }
}

/// `transfer_function`, `state_space`, `zero_pole_gain`: continuous
/// states integrated by the run's solver.
#[derive(Clone, Debug)]
pub struct Linear {
    model: LinearModel,
}

impl Linear {
    pub fn transfer_function(
        key: &KeyPath,
        c: &TransferFunctionConfig,
    ) -> Result<Self, ConfigError> {
        Ok(Linear {
            model: LinearModel::from_transfer_function(key, &c.num, &c.den)?,
        })
    }

    pub fn state_space(key: &KeyPath, c: &StateSpaceConfig) -> Result<Self, ConfigError> {
        Ok(Linear {
            model: LinearModel::from_state_space(key, c)?,
        })
    }

    pub fn zero_pole_gain(key: &KeyPath, c: &ZeroPoleGainConfig) -> Result<Self, ConfigError> {
        finite_all(&key.child("zeros"), &c.zeros)?;
        finite_all(&key.child("poles"), &c.poles)?;
        let gain = finite(&key.child("gain"), c.gain)?;
        if c.zeros.len() > c.poles.len() {
            return Err(ConfigError::invalid(
                key.child("zeros"),
                "no more zeros than poles (the block must be proper)",
            ));
        }
        let mut num = poly(&c.zeros);
        for v in &mut num {
            *v *= gain;
        }
        Self::transfer_function(
            key,
            &TransferFunctionConfig {
                num,
                den: poly(&c.poles),
            },
        )
    }
}

/// The coefficients of `prod (s - r)`, highest power first.
fn poly(roots: &[f64]) -> Vec<f64> {
    let mut p = vec![1.0];
    for &r in roots {
        let mut q = vec![0.0; p.len() + 1];
        for (i, &c) in p.iter().enumerate() {
            q[i] += c;
            q[i + 1] -= r * c;
        }
        p = q;
    }
    p
}

impl Component for Linear {
    fn needs(&self) -> Needs {
        Needs::OUTPUT_ONLY
    }

    fn declare(&self) -> Declaration {
        let mut u = PortSpec::new("u", self.model.m);
        if !self.model.direct() {
            u = u.delayed();
        }
        Declaration {
            inputs: vec![u],
            outputs: vec![PortSpec::new("y", self.model.p)],
            states: (0..self.model.n).map(|i| format!("x{i}")).collect(),
            guards: 0,
            timing: Timing::EveryStep,
        }
    }

    fn initial_state(&self, x: &mut [f64]) {
        x.copy_from_slice(&self.model.x0);
    }

    fn initial_outputs(&self, y: &mut Outputs) {
        let u = vec![0.0; self.model.m];
        self.model.output(&self.model.x0, &u, y.all());
    }

    fn output(&mut self, _: &mut Ctx, x: &[f64], u: &Inputs, y: &mut Outputs) {
        self.model.output(x, u.all(), y.all());
    }

    /// `output` is `y = C x + D u`, summed as [`LinearModel::output`] does.
    fn lower(&self) -> Option<Lowered> {
        Some(Lowered::StateSpace {
            c: self.model.c.clone(),
            d: self.model.d.clone(),
        })
    }

    #[inline]
    fn derivative(&self, _t: f64, x: &[f64], u: &Inputs, dx: &mut [f64]) {
        self.model.next(x, u.all(), dx);
    }

    /// The default's arithmetic with the size known for small states
    /// ([`LinearModel::integrate`]).
    fn integrate(
        &self,
        solver: SolverKind,
        ws: &mut Workspace,
        t: f64,
        h: f64,
        x: &mut [f64],
        u: &Inputs,
    ) {
        self.model.integrate(solver, ws, t, h, x, u.all());
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransportDelayConfig {
    /// A whole number of steps, at least one.
    #[serde(with = "netloop_time::duration")]
    pub delay: SimTime,
    #[serde(default)]
    pub initial: f64,
    #[serde(default = "one")]
    pub width: usize,
}

/// `transport_delay`: `y(k) = u(k - d)`, `initial` before.
#[derive(Clone, Debug)]
pub struct TransportDelay {
    /// `steps` rows of `width` values, a ring.
    buffer: Vec<f64>,
    width: usize,
    head: usize,
    steps: usize,
}

impl TransportDelay {
    pub fn new(
        key: &KeyPath,
        c: &TransportDelayConfig,
        cx: BlockContext,
    ) -> Result<Self, ConfigError> {
        let w = width(&key.child("width"), c.width)?;
        let steps = cx
            .step
            .period_steps(c.delay)
            .map_err(|source| ConfigError::Time {
                key: key.child("delay"),
                source,
            })?
            .get();
        let steps = usize::try_from(steps)
            .ok()
            .filter(|&s| s.saturating_mul(w) <= crate::limits::MAX_DIMENSION * 1024)
            .ok_or_else(|| {
                ConfigError::invalid(key.child("delay"), "holds too many steps for its memory")
            })?;
        Ok(TransportDelay {
            buffer: vec![finite(&key.child("initial"), c.initial)?; steps * w],
            width: w,
            head: 0,
            steps,
        })
    }
}

impl Component for TransportDelay {
    /// `advance` moves the state over every step; no fault.
    fn needs(&self) -> Needs {
        Needs::ADVANCE
    }

    fn declare(&self) -> Declaration {
        Declaration {
            inputs: vec![PortSpec::new("u", self.width).delayed()],
            outputs: vec![PortSpec::new("y", self.width)],
            states: Vec::new(),
            guards: 0,
            timing: Timing::EveryStep,
        }
    }

    fn initial_outputs(&self, y: &mut Outputs) {
        y.all().copy_from_slice(&self.buffer[..self.width]);
    }

    fn output(&mut self, _: &mut Ctx, _: &[f64], _: &Inputs, y: &mut Outputs) {
        let at = self.head * self.width;
        y.all().copy_from_slice(&self.buffer[at..at + self.width]);
    }

    fn advance(&mut self, _: &mut Ctx, u: &Inputs) {
        let at = self.head * self.width;
        self.buffer[at..at + self.width].copy_from_slice(u.all());
        self.head = (self.head + 1) % self.steps;
    }

    fn save(&self, into: &mut SavedState) {
        into.reals.extend_from_slice(&self.buffer);
        into.words.push(self.head as u64);
    }

    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        from.reals(&mut self.buffer)?;
        let head = from.word()? as usize;
        if head >= self.steps {
            return Err(StateMismatch(format!(
                "delay position {head} of {}",
                self.steps
            )));
        }
        self.head = head;
        Ok(())
    }
}

#[cfg(test)]
mod integrate_tests {
    use super::*;

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// [`LinearModel::integrate`] (the size-specialised path for up to
    /// four states) gives the bits of the general solver on
    /// [`LinearModel::next`], for every solver, state sizes 1 to 5 (5
    /// takes the general path) and a two-input state space.
    #[test]
    fn the_size_specialised_step_is_the_general_solver_bit_for_bit() {
        let mut models = Vec::new();
        for n in 1..=5 {
            let den: Vec<f64> = (0..=n).map(|i| 1.0 + 0.37 * i as f64).collect();
            let num = vec![0.5, -1.25];
            models.push(
                LinearModel::from_transfer_function(&KeyPath::key("tf"), &num, &den).unwrap(),
            );
        }
        models.push(
            LinearModel::from_state_space(
                &KeyPath::key("ss"),
                &StateSpaceConfig {
                    a: vec![vec![0.0, 1.0], vec![-2.0, -0.3]],
                    b: vec![vec![1.0, 0.25], vec![-0.5, 1.0]],
                    c: vec![vec![1.0, 0.0]],
                    d: None,
                    x0: None,
                },
            )
            .unwrap(),
        );
        for model in &models {
            for solver in [SolverKind::Euler, SolverKind::Heun, SolverKind::Rk4] {
                let mut ws = Workspace::new(model.n);
                let start: Vec<f64> = (0..model.n).map(|j| 0.1 * j as f64 - 0.2).collect();
                let (mut fast, mut general) = (start.clone(), start);
                let h = 0.01;
                for k in 0..50 {
                    let t = k as f64 * h;
                    let u: Vec<f64> = (0..model.m).map(|j| (k + j) as f64 * 0.3).collect();
                    model.integrate(solver, &mut ws, t, h, &mut fast, &u);
                    solver.step(&mut ws, t, h, &mut general, |_, x, dx| {
                        model.next(x, &u, dx)
                    });
                    assert_eq!(
                        bits(&fast),
                        bits(&general),
                        "n = {}, m = {}, {solver:?}, k = {k}",
                        model.n,
                        model.m
                    );
                }
                assert!(fast.iter().any(|&v| v != 0.0));
            }
        }
    }
}
