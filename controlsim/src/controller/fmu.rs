//! `kind = "fmu"` as a controller: a Co-Simulation FMU (FMI 2.0 or 3.0)
//! computed at the controller's instants.
//!
//! # When the FMU steps
//! The FMU's time is always that of the controller's previous computation.
//! A computation at `t` sets the FMU's measurement inputs to the measurement
//! held at `t` and its reference inputs to the references at `t`, steps
//! `doStep(t_prev, t - t_prev)`, and reads the outputs: the controller's
//! output at `t`. So a sampled-data controller written as an FMU (a
//! `pythonfmu` class that computes its outputs from its inputs in
//! `do_step`) answers the measurement of `t` at `t`, like the built-in
//! laws, and a continuous-time controller FMU integrates over the interval
//! that ends at `t` with the input of `t` held over it.
//!
//! The FMU is initialised one interval before the first computation: at
//! `phase - period` for a time-triggered controller, so that every step is
//! exactly one `period` (its communication step), and at `-sensor period`
//! for an event-triggered one, whose steps are the times between
//! computations (which needs `canHandleVariableCommunicationStepSize`).
//! Two computations at the same instant step only once.
//!
//! # Rollback (`response = "rollback"`)
//! An event-triggered FMU controller can answer with its output one solver
//! step `h` after the event time `t` (docs/design.md §4.4): it computes at
//! `t` as above, saves its FMU state (`fmi2GetFMUstate`), steps `h` with the
//! same measurement and the references at `t + h`, reads the outputs (the
//! answer), and goes back to the saved state (`fmi2SetFMUstate`). Its state
//! after the computation is so bit-identical to a direct answer's. This needs
//! an FMI 2.0 FMU that declares `canGetAndSetFMUstate` (the scenario check
//! refuses others; the `fmi` crate does not bind FMI 3.0's state calls).
//!
//! The FMU's internal state is not part of a [`Snapshot`](crate::Snapshot).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::controller::{timing_fields, BuildContext, LawShape, Step, Trigger};
use crate::error::ConfigError;
use crate::fmu::cosim::{CoSim, FmuProcess, Placement};
use crate::fmu::model::Causality;
use crate::fmu::slave::FmuCallError;
use crate::fmu::FmuValues;
use crate::time::StepSize;
use netloop_time::SimTime;

timing_fields! {
    /// `kind = "fmu"`: see the module docs.
    pub struct FmuControllerConfig {
        /// The `.fmu` file; relative to the scenario file.
        pub path: PathBuf,
        /// FMU inputs fed the sensor channels, in channel order. Default: the
        /// first inputs, one per channel.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub measurements: Option<Vec<String>>,
        /// FMU inputs fed the reference signals, in order. Default: the
        /// inputs after the measurements.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub references: Option<Vec<String>>,
        /// FMU outputs that drive the actuator channels. Default: every output.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub outputs: Option<Vec<String>>,
        /// Parameters by name.
        #[serde(default, skip_serializing_if = "FmuValues::is_empty")]
        pub parameters: FmuValues,
        /// Start values by name.
        #[serde(default, skip_serializing_if = "FmuValues::is_empty")]
        pub start: FmuValues,
        /// Where the FMU runs: `"in_process"` (default) or `"separate"`, a
        /// child process that contains crashes and hangs ([`crate::fmu::separate`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub process: Option<FmuProcess>,
        /// With `process = "separate"`: the longest one FMU call may take (wall
        /// clock) before the FMU is declared hung and its process killed.
        /// Default: [`DEFAULT_TIMEOUT`](crate::fmu::cosim::DEFAULT_TIMEOUT).
        #[serde(
            default,
            with = "netloop_time::duration::option",
            skip_serializing_if = "Option::is_none"
        )]
        pub timeout: Option<SimTime>,
    }
}

#[derive(Debug)]
struct Inner {
    slave: CoSim,
    /// The FMU's time, integer nanoseconds (negative before the run starts).
    time_ns: i128,
    fault: Option<FmuCallError>,
}

/// A built FMU controller. Cloning shares the one FMU instance.
#[derive(Clone, Debug)]
pub(crate) struct FmuLaw {
    inner: Arc<Mutex<Inner>>,
    measurement_refs: Vec<u32>,
    reference_refs: Vec<u32>,
    output_refs: Vec<u32>,
}

impl FmuLaw {
    /// Loads, checks and initialises the FMU for the loop of `ctx`.
    pub(crate) fn new(
        ctx: &BuildContext,
        c: &FmuControllerConfig,
        trigger: Trigger,
        step: StepSize,
        sensor_period: netloop_time::SimTime,
    ) -> Result<(Self, LawShape), ConfigError> {
        let (unpacked, model) = crate::fmu::load(&ctx.key, &c.path)?;
        if !model.co_simulation {
            return Err(ConfigError::invalid(
                ctx.k("path"),
                format!(
                    "FMU {}: has no Co-Simulation interface, only Model Exchange: a controller \
                     needs Co-Simulation",
                    crate::fmu::slave::file_name(&unpacked.file)
                ),
            ));
        }
        let all_inputs = model.inputs();
        let ny = ctx.measurements;
        let default_measurements: Vec<String> = all_inputs.iter().take(ny).cloned().collect();
        if c.measurements.is_none() && default_measurements.len() < ny {
            return Err(ConfigError::invalid(
                ctx.k("measurements"),
                format!(
                    "the sensor has {ny} channel{}, but the FMU has only {} input{}",
                    if ny == 1 { "" } else { "s" },
                    all_inputs.len(),
                    if all_inputs.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        let measurements = model.select(
            &ctx.k("measurements"),
            c.measurements.as_deref(),
            Causality::Input,
            default_measurements,
        )?;
        if measurements.len() != ny {
            return Err(ConfigError::Length {
                key: ctx.k("measurements"),
                expected: ny,
                found: measurements.len(),
            });
        }
        let default_references: Vec<String> = all_inputs
            .iter()
            .filter(|n| !measurements.iter().any(|m| &m.name == *n))
            .cloned()
            .collect();
        let references = model.select(
            &ctx.k("references"),
            c.references.as_deref(),
            Causality::Input,
            default_references,
        )?;
        if let Some(r) = references
            .iter()
            .find(|r| measurements.iter().any(|m| m.name == r.name))
        {
            return Err(ConfigError::invalid(
                ctx.k("references"),
                format!("FMU input \"{}\" is also a measurement", r.name),
            ));
        }
        ctx.check_references(references.len(), "the FMU controller")?;
        let outputs = model.select(
            &ctx.k("outputs"),
            c.outputs.as_deref(),
            Causality::Output,
            model.outputs(),
        )?;
        if outputs.len() != ctx.plant_inputs {
            return Err(ConfigError::invalid(
                ctx.k("outputs"),
                format!(
                    "{} FMU output{} for a plant with {} input{}",
                    outputs.len(),
                    if outputs.len() == 1 { "" } else { "s" },
                    ctx.plant_inputs,
                    if ctx.plant_inputs == 1 { "" } else { "s" },
                ),
            ));
        }
        let hn = i128::from(step.as_nanos());
        let start_ns = match trigger {
            Trigger::Time(p) => (i128::from(p.phase) - i128::from(p.period.get())) * hn,
            Trigger::Event => {
                if !model.variable_step {
                    return Err(ConfigError::invalid(
                        ctx.k("trigger"),
                        format!(
                            "the FMU {} cannot change its communication step \
                             (canHandleVariableCommunicationStepSize is not true), which an \
                             event-triggered controller needs; use trigger = \"time\"",
                            unpacked.file.display()
                        ),
                    ));
                }
                // One sensor period before the start (the nominal interval).
                -(i128::from(sensor_period.as_nanos()))
            }
        };
        let start_values = model.start_values(&ctx.key, &c.parameters, &c.start)?;
        let placement = Placement::new(&ctx.key, c.process, c.timeout)?;
        let slave = CoSim::start(
            &ctx.key,
            placement,
            &unpacked,
            &model,
            "controller",
            &c.parameters,
            &c.start,
            &start_values,
            start_ns as f64 * 1e-9,
        )?;
        let law = FmuLaw {
            inner: Arc::new(Mutex::new(Inner {
                slave,
                time_ns: start_ns,
                fault: None,
            })),
            measurement_refs: measurements.iter().map(|v| v.value_reference).collect(),
            reference_refs: references.iter().map(|v| v.value_reference).collect(),
            output_refs: outputs.iter().map(|v| v.value_reference).collect(),
        };
        let shape = LawShape {
            extras: Vec::new(),
            references: references.len(),
            state_names: Vec::new(),
            state0: Vec::new(),
            memory: 0,
        };
        Ok((law, shape))
    }

    /// See the module docs. On a failed call the output keeps its last
    /// value and [`fault`](Self::fault) reports the error.
    pub(crate) fn compute(&self, s: &Step, out: &mut [f64]) {
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let Inner {
            slave,
            time_ns,
            fault,
        } = &mut *guard;
        if fault.is_some() {
            return;
        }
        let t_ns = i128::from(s.t.as_nanos());
        let ny = self.measurement_refs.len();
        let mut result = slave
            .set_reals(&self.measurement_refs, &s.input[..ny])
            .and_then(|()| slave.set_reals(&self.reference_refs, s.reference));
        if result.is_ok() && t_ns > *time_ns {
            let h = (t_ns - *time_ns) as f64 * 1e-9;
            result = slave.do_step(h, s.t.as_secs_f64());
            if result.is_ok() {
                *time_ns = t_ns;
            }
        }
        let mut y = vec![0.0; out.len()];
        let result = result.and_then(|()| slave.get_reals(&self.output_refs, &mut y));
        match result {
            Ok(()) => out.copy_from_slice(&y),
            Err(e) => *fault = Some(e),
        }
    }

    /// The rollback answer (see the module docs): the output one step after
    /// `s.t`, at `t_next`, with the references `reference_next`; the FMU is
    /// left as [`compute`](Self::compute) leaves it.
    pub(crate) fn rollback(
        &self,
        s: &Step,
        t_next: netloop_time::SimTime,
        reference_next: &[f64],
        out: &mut [f64],
    ) {
        self.compute(s, out);
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let Inner {
            slave,
            time_ns,
            fault,
        } = &mut *guard;
        if fault.is_some() {
            return;
        }
        let h = (i128::from(t_next.as_nanos()) - *time_ns) as f64 * 1e-9;
        let mut y = vec![0.0; out.len()];
        let result = slave.save_state().and_then(|()| {
            let ahead = slave
                .set_reals(&self.reference_refs, reference_next)
                .and_then(|()| slave.do_step(h, t_next.as_secs_f64()))
                .and_then(|()| slave.get_reals(&self.output_refs, &mut y));
            // Back to the state at `t` whether or not the look-ahead worked.
            slave.restore_state().and(ahead)
        });
        match result {
            Ok(()) => out.copy_from_slice(&y),
            Err(e) => *fault = Some(e),
        }
    }

    pub(crate) fn fault(&self) -> Option<String> {
        let guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        guard.fault.as_ref().map(ToString::to_string)
    }
}
