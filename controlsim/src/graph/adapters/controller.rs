//! Any controller as a component.

use netloop_time::SimTime;

use crate::controller::{BuildContext, Controller, ControllerConfig, StepClock, Trigger};
use crate::error::ConfigError;
use crate::graph::component::{
    Component, Ctx, Declaration, Inputs, Needs, Outputs, PortSpec, SavedState, StateMismatch,
    StateReader, Timing,
};
use crate::key_path::KeyPath;
use crate::plant::PlantModel;
use crate::reference::{Signal, SignalConfig};
use crate::sensor::SensorSource;
use crate::time::StepSize;

/// What a controller needs to know about its surroundings, which a loop
/// takes from its plant, sensor and actuator.
#[derive(Clone, Copy, Debug)]
pub struct ControllerShape<'a> {
    /// Size of the `measurement` input.
    pub measurements: usize,
    /// Size of the `u` output.
    pub outputs: usize,
    /// The reference signals the law reads (evaluated at the computation
    /// time, and at the solver's stage times for a continuous law).
    pub reference: &'a [SignalConfig],
    /// The default model of an `observer` without `a`, `b`, `c`.
    pub model: Option<&'a PlantModel>,
    /// Saturation limits a PID takes as its default `u_min` / `u_max`.
    pub limits: Option<(&'a [f64], &'a [f64])>,
    /// The time-triggered default period, and the nominal interval of an
    /// event-triggered law (a loop's sensor period); `None` makes `period`
    /// required.
    pub default_period: Option<SimTime>,
}

/// A built controller: input `measurement` (and `extra` for CACC's
/// predecessor acceleration), output `u`; periodic at its `period` and
/// `phase`, or on every new input with `trigger = "event"`. A continuous
/// law (`state_space`, `transfer_function`) is integrated by the run's
/// solver over each step with its input held, as in a loop.
///
/// An event-triggered continuous or FMU law can answer by rollback
/// ([`answer_by_rollback`](Self::answer_by_rollback)), as a loop with
/// `response = "rollback"` does.
#[derive(Debug)]
pub struct ControllerComponent {
    controller: Controller,
    references: Vec<Signal>,
    timing: Timing,
    /// Answers with its output one solver step ahead (docs/design.md §4.4).
    by_rollback: bool,
}

impl ControllerComponent {
    /// # Errors
    /// [`ConfigError`] as for a loop's controller (keys under `key`), or a
    /// missing `period` when there is no default.
    pub fn new(
        key: &KeyPath,
        config: &ControllerConfig,
        shape: ControllerShape,
        step: StepSize,
    ) -> Result<Self, ConfigError> {
        let references = shape
            .reference
            .iter()
            .enumerate()
            .map(|(j, s)| Signal::new(&key.child("reference").at(j), s))
            .collect::<Result<Vec<_>, _>>()?;
        let timing = config.timing();
        let default_period = match (shape.default_period, timing.period) {
            (Some(p), _) => p,
            (None, Some(p)) => p,
            (None, None) => {
                return Err(ConfigError::invalid(
                    key.child("period"),
                    "a controller in a graph needs its `period` (or an event trigger with a period to assume)",
                ))
            }
        };
        let unlimited_lo = vec![f64::NEG_INFINITY; shape.outputs];
        let unlimited_hi = vec![f64::INFINITY; shape.outputs];
        let (lo, hi) = shape.limits.unwrap_or((&unlimited_lo, &unlimited_hi));
        let cacc = matches!(config, ControllerConfig::Cacc(_));
        let ctx = BuildContext {
            key: key.clone(),
            reference_key: key.child("reference"),
            measurements: shape.measurements,
            plant_inputs: shape.outputs,
            references: references.len(),
            plant_linear: shape.model.and_then(PlantModel::linear),
            actuator_min: lo,
            actuator_max: hi,
            // CACC reads a radar's channels from `measurement` and the
            // predecessor's acceleration from `extra`.
            sensor_source: if cacc {
                SensorSource::Radar
            } else {
                SensorSource::Plant
            },
            predecessor: cacc.then_some(0),
        };
        let controller = Controller::new(&ctx, config, step, default_period)?;
        let timing = match controller.trigger {
            Trigger::Time(p) => Timing::Periodic {
                period: SimTime(p.period.get() * step.as_nanos()),
                offset: SimTime(p.phase * step.as_nanos()),
            },
            Trigger::Event => Timing::OnInput,
        };
        Ok(ControllerComponent {
            controller,
            references,
            timing,
            by_rollback: false,
        })
    }

    /// Makes every evaluation an answer by rollback (a loop's
    /// `response = "rollback"`, docs/design.md §4.4): the law's output one
    /// solver step after the event time, its state at the event time
    /// advanced one step `h` with the new input held and read against the
    /// reference at `t + h`, then restored; nothing else of the graph moves.
    /// An event-triggered component is evaluated only on new inputs, so this
    /// is its answer to every packet (or local sample) it takes.
    ///
    /// # Errors
    /// `key` (the scenario's `response`) when the law cannot look ahead and
    /// go back (not `state_space`, `transfer_function` or an FMU), or is not
    /// event-triggered.
    pub fn answer_by_rollback(mut self, key: &KeyPath) -> Result<Self, ConfigError> {
        if !self.controller.has_rollback_response() {
            return Err(ConfigError::invalid(
                key,
                "\"rollback\" needs a solver-integrated controller (kind = \"state_space\" or \
                 \"transfer_function\") or an FMU controller: other kinds have no state to advance \
                 one step and restore",
            ));
        }
        if self.timing != Timing::OnInput {
            return Err(ConfigError::invalid(
                key,
                "\"rollback\" is for event-triggered controllers (trigger = \"event\")",
            ));
        }
        self.by_rollback = true;
        Ok(self)
    }

    /// Whether it answers by rollback ([`answer_by_rollback`](Self::answer_by_rollback)).
    pub fn answers_by_rollback(&self) -> bool {
        self.by_rollback
    }

    /// The law's internal state (PID integral and filter, observer
    /// estimate, continuous state).
    pub fn state(&self) -> &[f64] {
        &self.controller.state
    }

    /// Size of the `extra` input (0: no such port).
    pub fn declare_extras(&self) -> usize {
        self.controller.extras.len()
    }

    pub fn state_names(&self) -> &[String] {
        &self.controller.state_names
    }

    /// Number of reference channels (as a loop's
    /// [`reference_dim`](crate::Loop::reference_dim)).
    pub fn reference_dim(&self) -> usize {
        self.controller.reference_dim()
    }

    /// The reference at `t` (zeros when none is configured), as a loop's
    /// [`reference_into`](crate::Loop::reference_into).
    pub fn reference_into(&self, t: SimTime, out: &mut [f64]) {
        crate::reference::values_into(&self.references, t, out);
    }
}

impl Component for ControllerComponent {
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn declare(&self) -> Declaration {
        let mut inputs = vec![PortSpec::new("measurement", self.controller.measurements)];
        if !self.controller.extras.is_empty() {
            inputs.push(PortSpec::new("extra", self.controller.extras.len()).passive());
        }
        Declaration {
            inputs,
            outputs: vec![PortSpec::new("u", self.controller.output.len())],
            states: Vec::new(),
            guards: 0,
            timing: self.timing,
        }
    }

    fn output(&mut self, cx: &mut Ctx, _x: &[f64], u: &Inputs, y: &mut Outputs) {
        super::copy_values(&mut self.controller.input, u.all());
        let mut clock = StepClock {
            now: cx.now,
            step: cx.step,
            solver: cx.solver,
            ws: cx.ws,
        };
        // At an answer's arrival (`cx.at`), as a loop's controller is.
        if self.by_rollback {
            self.controller
                .rollback(&mut clock, &self.references, cx.at);
        } else {
            self.controller.compute(&mut clock, &self.references, cx.at);
        }
        // One output port: `all` is that port.
        super::copy_values(y.all(), &self.controller.output);
    }

    /// Only a continuous law integrates over the step, only an FMU law
    /// can fail.
    fn needs(&self) -> Needs {
        Needs {
            advance: self.controller.is_continuous(),
            advance_only_when_due: false,
            fault: self.controller.can_fault(),
            pure_output: false,
        }
    }

    fn advance(&mut self, cx: &mut Ctx, _u: &Inputs) {
        let t = cx.now.as_nanos() as f64 * 1e-9;
        self.controller
            .integrate(cx.solver, cx.ws, &self.references, t, cx.step.as_secs_f64());
    }

    fn fault(&self) -> Option<String> {
        self.controller.fault()
    }

    fn save(&self, into: &mut SavedState) {
        let c = &self.controller;
        for v in [
            &c.input,
            &c.state,
            &c.memory,
            &c.output,
            &c.step_start,
            &c.step_input,
        ] {
            into.reals.extend_from_slice(v);
        }
        into.words.push(u64::from(c.last_time.is_some()));
        into.words.push(c.last_time.map_or(0, |t| t.as_nanos()));
    }

    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        let c = &mut self.controller;
        for v in [
            &mut c.input,
            &mut c.state,
            &mut c.memory,
            &mut c.output,
            &mut c.step_start,
            &mut c.step_input,
        ] {
            from.reals(v)?;
        }
        let some = from.word()? != 0;
        let t = from.word()?;
        c.last_time = some.then_some(SimTime(t));
        Ok(())
    }
}
