//! `equations`: a model in the equation language as a block, so that a
//! controller (or any component) can be written as equations and put on any
//! node of a graph scenario, over any network.
//!
//! Every `input` of the model is an input port of one element named after
//! it, every `output` an output port of one element; the model's states are
//! the block's continuous states, its `when` clauses its guards (located
//! inside the step as for every component).
//!
//! Without `period` the block is continuous: its outputs are computed at
//! every boundary from the states and the inputs there, and the states are
//! integrated over the step with the inputs held. With `period` (and
//! `phase`) it is sampled: at each sample instant it takes its inputs and
//! computes its outputs, which hold until the next sample, and its states
//! are integrated with the inputs of the last sample (a sample-and-hold in
//! front of the model, as a digital controller sees its measurements).
//!
//! An input is direct feedthrough when some output is computed from an
//! input (read from the compiled output program), so a model whose outputs
//! read only its states closes a loop without an algebraic loop.

use std::collections::BTreeMap;

use netloop_time::SimTime;
use serde::{Deserialize, Serialize};

use super::common::sample_timing;
use super::BlockContext;
use crate::equations::{EquationModel, EquationsConfig, Source};
use crate::error::ConfigError;
use crate::graph::{
    Component, Ctx, Declaration, Inputs, Outputs, PortSpec, SavedState, StateMismatch, StateReader,
    Timing,
};
use crate::key_path::KeyPath;
use crate::plant::Plant;

/// `kind = "equations"`: the model's text (a file or inline), parameter
/// overrides, and an optional sample period.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EquationsBlockConfig {
    /// Path of a `.eq` file, relative to the file that names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The model's text inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equations: Option<String>,
    /// Parameter values by name, replacing those in the text.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, f64>,
    /// Sample period (a multiple of the step); none: continuous.
    #[serde(
        default,
        with = "netloop_time::duration::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub period: Option<SimTime>,
    /// First sample instant, below `period`.
    #[serde(default, with = "netloop_time::duration")]
    pub phase: SimTime,
    /// The text of `source` as the loader read it (see
    /// [`EquationsConfig::loaded`]).
    #[serde(skip)]
    pub loaded: Option<Source>,
}

/// The built block.
#[derive(Debug)]
pub struct Equations {
    model: EquationModel,
    inputs: Vec<String>,
    outputs: Vec<String>,
    states: Vec<String>,
    direct: bool,
    /// `Some((period, phase))` when sampled.
    sampling: Option<(SimTime, SimTime)>,
    /// Sampled: the inputs of the last sample, which the states see.
    held: Vec<f64>,
}

impl Equations {
    /// Compiles the model at `key` (`components[2].block`).
    ///
    /// # Errors
    /// [`ConfigError`] at `key.source` / `key.equations` with the located
    /// report, `key.parameters.NAME`, or `key.period` / `key.phase`.
    pub fn new(
        key: &KeyPath,
        c: &EquationsBlockConfig,
        cx: BlockContext,
    ) -> Result<Self, ConfigError> {
        let model = EquationModel::from_config(
            key,
            &EquationsConfig {
                source: c.source.clone(),
                equations: c.equations.clone(),
                parameters: c.parameters.clone(),
                loaded: c.loaded.clone(),
            },
        )?;
        let sampling = match c.period {
            Some(period) => Some(sample_timing(key, cx.step, Some(period), c.phase)?),
            None if c.phase != SimTime::ZERO => {
                return Err(ConfigError::invalid(
                    key.child("phase"),
                    "needs a `period`: a continuous equations block has no sample instants",
                ))
            }
            None => None,
        };
        let sig = model.signature();
        if sig.outputs.is_empty() {
            return Err(ConfigError::invalid(
                key,
                "the model has no `output`: a block needs at least one output port",
            ));
        }
        let direct = model.output_reads_inputs();
        Ok(Equations {
            held: vec![0.0; sig.inputs.len()],
            inputs: sig.inputs,
            outputs: sig.outputs,
            states: sig.states,
            direct,
            sampling,
            model,
        })
    }

    /// The inputs the states see: the live ones, or the last sample's.
    #[inline]
    fn seen<'a>(&'a self, u: &'a Inputs) -> &'a [f64] {
        if self.sampling.is_some() {
            &self.held
        } else {
            u.all()
        }
    }
}

impl Component for Equations {
    fn declare(&self) -> Declaration {
        let input = |n: &String| {
            let p = PortSpec::new(n.clone(), 1);
            if self.direct {
                p
            } else {
                p.delayed()
            }
        };
        Declaration {
            inputs: self.inputs.iter().map(input).collect(),
            outputs: self
                .outputs
                .iter()
                .map(|n| PortSpec::new(n.clone(), 1))
                .collect(),
            states: self.states.clone(),
            guards: self.model.guard_count(),
            timing: match self.sampling {
                None => Timing::EveryStep,
                Some((period, offset)) => Timing::Periodic { period, offset },
            },
        }
    }

    fn initial_state(&self, x: &mut [f64]) {
        self.model.initial_state(x);
    }

    fn output(&mut self, cx: &mut Ctx, x: &[f64], u: &Inputs, y: &mut Outputs) {
        if self.sampling.is_some() {
            self.held.copy_from_slice(u.all());
        }
        self.model.output(cx.now.as_secs_f64(), x, u.all(), y.all());
    }

    fn derivative(&self, t: f64, x: &[f64], u: &Inputs, dx: &mut [f64]) {
        self.model.derivative(t, x, self.seen(u), dx);
    }

    fn guards(&self, t: f64, x: &[f64], u: &Inputs, g: &mut [f64]) {
        self.model.guards(t, x, self.seen(u), g);
    }

    fn reset(&self, t: f64, x: &mut [f64], u: &Inputs, guard: usize) {
        self.model.reset(t, x, self.seen(u), guard);
    }

    fn save(&self, into: &mut SavedState) {
        into.reals.extend_from_slice(&self.held);
    }

    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        from.reals(&mut self.held)
    }
}
