//! Discrete blocks, each at its own sample `period` and `phase` (default:
//! every step from 0): `unit_delay`, `zero_order_hold`,
//! `discrete_integrator`, `discrete_transfer_function` and
//! `discrete_state_space`. Between samples their outputs hold.
//!
//! At a sample instant the block computes its output from its state (and,
//! when direct feedthrough, its input then); after the boundary the state
//! takes its next value from the input as it stands once every component
//! was served, so a unit delay in a loop reads the value of that instant.

use netloop_time::SimTime;
use serde::{Deserialize, Serialize};

use super::common::{finite, one, sample_timing, sampled_block, width, Values};
use super::continuous::{LinearModel, StateSpaceConfig};
use super::BlockContext;
use crate::error::ConfigError;
use crate::graph::{
    Component, Ctx, Declaration, Inputs, Lowered, Needs, Outputs, PortSpec, SampledLaw, SavedState,
    StateMismatch, StateReader, Timing,
};
use crate::key_path::KeyPath;

sampled_block! {
    /// `kind = "unit_delay"`.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct UnitDelayConfig {
        #[serde(default = "zero")]
        pub initial: Values,
        #[serde(default = "one")]
        pub width: usize,
    }
}

fn zero() -> Values {
    Values::One(0.0)
}

sampled_block! {
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct ZeroOrderHoldConfig {
        #[serde(default = "one")]
        pub width: usize,
    }
}

sampled_block! {
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct DiscreteIntegratorConfig {
        /// `x(n+1) = x(n) + gain * T * u(n)` (forward Euler), `y(n) = x(n)`.
        #[serde(default = "super::common::unit")]
        pub gain: f64,
        #[serde(default = "zero")]
        pub initial: Values,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub lower: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub upper: Option<f64>,
        #[serde(default = "one")]
        pub width: usize,
    }
}

sampled_block! {
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct DiscreteTransferFunctionConfig {
        /// Numerator, highest power of `z` first.
        pub num: Vec<f64>,
        /// Denominator, highest power of `z` first; at least as long as `num`.
        pub den: Vec<f64>,
    }
}

sampled_block! {
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct DiscreteStateSpaceConfig {
        pub a: Vec<Vec<f64>>,
        pub b: Vec<Vec<f64>>,
        pub c: Vec<Vec<f64>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub d: Option<Vec<Vec<f64>>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub x0: Option<Vec<f64>>,
    }
}

#[derive(Clone, Debug)]
enum Law {
    /// `y = x`, `x+ = u`.
    Delay,
    /// `y = u`.
    Hold,
    /// `y = x`, `x+ = clamp(x + k u)`.
    Integrator { k: f64, lower: f64, upper: f64 },
    /// `y = C x + D u`, `x+ = A x + B u`.
    Linear { model: LinearModel, next: Vec<f64> },
}

/// A discrete block: a law, its state and its sample times.
#[derive(Clone, Debug)]
pub struct Discrete {
    law: Law,
    x: Vec<f64>,
    inputs: usize,
    outputs: usize,
    period: SimTime,
    phase: SimTime,
    /// Whether this boundary was a sample (the state moves after it).
    sampled: bool,
}

impl Discrete {
    fn new(
        key: &KeyPath,
        cx: BlockContext,
        period: Option<SimTime>,
        phase: SimTime,
        law: Law,
        x: Vec<f64>,
        inputs: usize,
        outputs: usize,
    ) -> Result<Self, ConfigError> {
        let (period, phase) = sample_timing(key, cx.step, period, phase)?;
        Ok(Discrete {
            law,
            x,
            inputs,
            outputs,
            period,
            phase,
            sampled: false,
        })
    }

    pub fn unit_delay(
        key: &KeyPath,
        c: &UnitDelayConfig,
        cx: BlockContext,
    ) -> Result<Self, ConfigError> {
        let w = width(&key.child("width"), c.width)?;
        let x = c.initial.resolve(&key.child("initial"), w)?;
        Self::new(key, cx, c.period, c.phase, Law::Delay, x, w, w)
    }

    pub fn zero_order_hold(
        key: &KeyPath,
        c: &ZeroOrderHoldConfig,
        cx: BlockContext,
    ) -> Result<Self, ConfigError> {
        let w = width(&key.child("width"), c.width)?;
        Self::new(key, cx, c.period, c.phase, Law::Hold, Vec::new(), w, w)
    }

    pub fn integrator(
        key: &KeyPath,
        c: &DiscreteIntegratorConfig,
        cx: BlockContext,
    ) -> Result<Self, ConfigError> {
        let w = width(&key.child("width"), c.width)?;
        let x = c.initial.resolve(&key.child("initial"), w)?;
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
        let (period, _) = sample_timing(key, cx.step, c.period, c.phase)?;
        let k = finite(&key.child("gain"), c.gain)? * period.as_secs_f64();
        Self::new(
            key,
            cx,
            c.period,
            c.phase,
            Law::Integrator { k, lower, upper },
            x,
            w,
            w,
        )
    }

    pub fn transfer_function(
        key: &KeyPath,
        c: &DiscreteTransferFunctionConfig,
        cx: BlockContext,
    ) -> Result<Self, ConfigError> {
        let model = LinearModel::from_transfer_function(key, &c.num, &c.den)?;
        Self::linear(key, cx, c.period, c.phase, model)
    }

    pub fn state_space(
        key: &KeyPath,
        c: &DiscreteStateSpaceConfig,
        cx: BlockContext,
    ) -> Result<Self, ConfigError> {
        let model = LinearModel::from_state_space(
            key,
            &StateSpaceConfig {
                a: c.a.clone(),
                b: c.b.clone(),
                c: c.c.clone(),
                d: c.d.clone(),
                x0: c.x0.clone(),
            },
        )?;
        Self::linear(key, cx, c.period, c.phase, model)
    }

    fn linear(
        key: &KeyPath,
        cx: BlockContext,
        period: Option<SimTime>,
        phase: SimTime,
        model: LinearModel,
    ) -> Result<Self, ConfigError> {
        let (x, m, p, n) = (model.x0.clone(), model.m, model.p, model.n);
        Self::new(
            key,
            cx,
            period,
            phase,
            Law::Linear {
                model,
                next: vec![0.0; n],
            },
            x,
            m,
            p,
        )
    }

    fn direct(&self) -> bool {
        match &self.law {
            Law::Hold => true,
            Law::Linear { model, .. } => model.direct(),
            _ => false,
        }
    }
}

impl Component for Discrete {
    /// `advance` updates the state from what was sampled at the step's
    /// start (nothing at a boundary it was not due at); no fault.
    fn needs(&self) -> Needs {
        Needs::ADVANCE_WHEN_DUE
    }

    fn declare(&self) -> Declaration {
        let mut u = PortSpec::new("u", self.inputs);
        if !self.direct() {
            u = u.delayed();
        }
        Declaration {
            inputs: vec![u],
            outputs: vec![PortSpec::new("y", self.outputs)],
            states: Vec::new(),
            guards: 0,
            timing: Timing::Periodic {
                period: self.period,
                offset: self.phase,
            },
        }
    }

    fn initial_outputs(&self, y: &mut Outputs) {
        match &self.law {
            Law::Delay | Law::Integrator { .. } => y.all().copy_from_slice(&self.x),
            Law::Hold => y.all().fill(0.0),
            Law::Linear { model, .. } => model.output(&self.x, &vec![0.0; model.m], y.all()),
        }
    }

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        self.sampled = true;
        match &self.law {
            Law::Delay | Law::Integrator { .. } => y.all().copy_from_slice(&self.x),
            Law::Hold => y.all().copy_from_slice(u.all()),
            Law::Linear { model, .. } => model.output(&self.x, u.all(), y.all()),
        }
    }

    fn advance(&mut self, _: &mut Ctx, u: &Inputs) {
        if !std::mem::take(&mut self.sampled) {
            return;
        }
        let u = u.all();
        match &mut self.law {
            Law::Delay => self.x.copy_from_slice(u),
            Law::Hold => {}
            Law::Integrator { k, lower, upper } => {
                for (x, &ui) in self.x.iter_mut().zip(u) {
                    *x = (*x + *k * ui).clamp(*lower, *upper);
                }
            }
            Law::Linear { model, next } => {
                model.next(&self.x, u, next);
                self.x.copy_from_slice(next);
            }
        }
    }

    /// A delay, a hold or an integrator runs in the graph's program, its
    /// state there ([`Lowered::Sampled`]; `save` writes `x`, then
    /// `sampled`); a discrete linear block is served through `output`.
    fn lower(&self) -> Option<Lowered> {
        let law = match &self.law {
            Law::Delay => SampledLaw::Delay,
            Law::Hold => SampledLaw::Hold,
            Law::Integrator { k, lower, upper } => SampledLaw::Integrator {
                k: *k,
                lower: *lower,
                upper: *upper,
            },
            Law::Linear { .. } => return None,
        };
        Some(Lowered::Sampled {
            law,
            x: self.x.clone(),
        })
    }

    fn discrete_states(&self) -> &[f64] {
        &self.x
    }

    fn save(&self, into: &mut SavedState) {
        into.reals.extend_from_slice(&self.x);
        into.words.push(u64::from(self.sampled));
    }

    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        from.reals(&mut self.x)?;
        self.sampled = from.word()? != 0;
        Ok(())
    }
}
