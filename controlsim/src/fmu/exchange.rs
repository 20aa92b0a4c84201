//! `kind = "fmu"` with `interface = "model_exchange"`: an FMI 2.0 or 3.0
//! Model Exchange FMU as a continuous, hybrid plant. netloop's solver integrates
//! the FMU's continuous states like any other plant's, and the FMU's events
//! go through the same event location as every guard ([`crate::event`]).
//!
//! # The FMU as a [`Plant`]
//! - The plant's state vector is the FMU's continuous states (named after
//!   the variables `ModelStructure/Derivatives` points at), so snapshots and
//!   recording see them as they see a built-in plant's states.
//! - `derivative(t, x, u)`: `fmi2SetTime(t)`, `fmi2SetContinuousStates(x)`,
//!   `fmi2SetReal(inputs, u)`, `fmi2GetDerivatives`; `output` likewise, then
//!   `fmi2GetReal(outputs)`. FMI 3.0 makes the same calls under its names
//!   (`fmi3SetFloat64`, `fmi3GetContinuousStateDerivatives`, ...):
//!   [`MeInstance`].
//! - Guards: one per event indicator `z_i`, and one for time events.
//!   FMI 2.0 and 3.0 have an event where `z_i` changes sign (the domains `z >= 0`
//!   and `z < 0` here; FMI says `z > 0` and `z <= 0`, which differ only at
//!   an exact zero). netloop's guards fire when they fall to zero or below,
//!   so guard `i` is `s_i z_i`, with `s_i` the sign of `z_i`'s domain after
//!   the last event (or initialisation): it falls through zero exactly when
//!   `z_i` leaves its domain, in either direction. The time-event guard is
//!   `nextEventTime - t` (1 when the FMU has no time event pending), so a
//!   time event is located inside the step to [`LOCATION_TOLERANCE`] like a
//!   state event, at or just after `nextEventTime` as FMI requires.
//! - `reset` at a located event is the standard's event mode: `fmi2EnterEventMode`,
//!   `fmi2NewDiscreteStates` (FMI 3.0: `fmi3UpdateDiscreteStates`) until it
//!   needs no further iteration,
//!   `fmi2EnterContinuousTimeMode`, then the new continuous states, the next
//!   time event and the indicators' domains are read back.
//! - Initialisation (FMI 2.0 §3.2.2): `fmi2SetupExperiment` at 0, start
//!   values, initialisation mode, then the event iteration as above (FMI
//!   3.0: start values, initialisation mode at 0, the event iteration).
//!
//! `fmi2CompletedIntegratorStep` (`fmi3...`) is not called: an FMU that asks for step
//! events through it is not supported. A failed call (or `terminateSimulation`)
//! stops the plant; [`Plant::fault`] reports it and the run stops at that step.
//!
//! [`LOCATION_TOLERANCE`]: crate::event::LOCATION_TOLERANCE

use std::sync::Mutex;

use fmi::EventFlags;

use crate::error::ConfigError;
use crate::fmu::archive::{linked_view, Unpacked};
use crate::fmu::me_instance::{check_me_binary, Failed, MeInstance};
use crate::fmu::model::{Model, Variable};
use crate::fmu::plant::FmuPlantConfig;
use crate::fmu::slave::{file_name, FmuCallError};
use crate::fmu::FmuValue;
use crate::key_path::KeyPath;
use crate::plant::{Plant, Signature};

/// Event iterations at one instant before netloop gives up on an FMU that
/// keeps asking for another (`newDiscreteStatesNeeded`).
const MAX_EVENT_ITERATIONS: u32 = 10_000;

struct Inner {
    instance: MeInstance,
    name: String,
    /// The FMU's time as last set, for messages.
    time: f64,
    /// Indicator values (scratch).
    z: Vec<f64>,
    /// `s_i`: +1 or -1, the domain of indicator `i` after the last event.
    sign: Vec<f64>,
    /// The pending time event, seconds.
    next_time: Option<f64>,
    fault: Option<FmuCallError>,
}

impl Inner {
    fn error(&self, call: &'static str, status: impl std::fmt::Debug) -> FmuCallError {
        FmuCallError {
            fmu: self.name.clone(),
            call,
            status: format!("{status:?}"),
            time: self.time,
        }
    }

    /// A failed call as the error that names the FMU and the time.
    fn failed(&self, f: Failed) -> FmuCallError {
        FmuCallError {
            fmu: self.name.clone(),
            call: f.call,
            status: f.status,
            time: self.time,
        }
    }

    /// Time, continuous states and inputs of one evaluation.
    fn prepare(&mut self, t: f64, x: &[f64], refs: &[u32], u: &[f64]) -> Result<(), FmuCallError> {
        self.time = t;
        let r = self.instance.set_time(t);
        r.map_err(|e| self.failed(e))?;
        let r = self.instance.set_continuous_states(x);
        r.map_err(|e| self.failed(e))?;
        if !refs.is_empty() {
            let r = self.instance.set_reals(refs, u);
            r.map_err(|e| self.failed(e))?;
        }
        Ok(())
    }

    /// The event iteration of event mode (the FMU is in it), then
    /// back to continuous time with the new states in `x`.
    fn event_iteration(&mut self, x: &mut [f64]) -> Result<(), FmuCallError> {
        let mut flags = EventFlags::default();
        let mut iterations = 0;
        loop {
            flags.reset();
            let r = self.instance.update_discrete_states(&mut flags);
            r.map_err(|e| self.failed(e))?;
            let call = self.instance.update_call();
            if flags.terminate_simulation {
                return Err(self.error(call, "terminateSimulation = true"));
            }
            if !flags.discrete_states_need_update {
                break;
            }
            iterations += 1;
            if iterations >= MAX_EVENT_ITERATIONS {
                return Err(self.error(
                    call,
                    format!("newDiscreteStatesNeeded after {MAX_EVENT_ITERATIONS} iterations"),
                ));
            }
        }
        self.next_time = flags.next_event_time;
        let r = self.instance.enter_continuous_time_mode();
        r.map_err(|e| self.failed(e))?;
        let r = self.instance.get_continuous_states(x);
        r.map_err(|e| self.failed(e))?;
        self.read_domains(x)
    }

    /// `s_i` from the indicators at the current state.
    fn read_domains(&mut self, x: &[f64]) -> Result<(), FmuCallError> {
        let r = self.instance.set_continuous_states(x);
        r.map_err(|e| self.failed(e))?;
        self.indicators()?;
        for (s, z) in self.sign.iter_mut().zip(&self.z) {
            *s = if *z >= 0.0 { 1.0 } else { -1.0 };
        }
        Ok(())
    }

    fn indicators(&mut self) -> Result<(), FmuCallError> {
        if self.z.is_empty() {
            return Ok(());
        }
        let mut z = std::mem::take(&mut self.z);
        let r = self.instance.get_event_indicators(&mut z);
        self.z = z;
        r.map_err(|e| self.failed(e))
    }
}

/// A built Model Exchange FMU plant.
pub struct FmuMePlant {
    inner: Mutex<Inner>,
    state_names: Vec<String>,
    input_names: Vec<String>,
    output_names: Vec<String>,
    input_refs: Vec<u32>,
    output_refs: Vec<u32>,
    /// The units the FMU declares for its states, inputs and outputs.
    units: std::collections::BTreeMap<String, String>,
    /// Continuous states after initialisation.
    x0: Vec<f64>,
}

impl std::fmt::Debug for FmuMePlant {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_struct("FmuMePlant")
            .field("states", &self.state_names)
            .field("inputs", &self.input_names)
            .field("outputs", &self.output_names)
            .finish()
    }
}

// SAFETY: as for `Slave`: FMI instances may move between threads as long as
// calls are not concurrent, and every call goes through the `Mutex`.
unsafe impl Send for Inner {}

impl FmuMePlant {
    /// Loads, checks and initialises the FMU at time 0; `key` is the plant's
    /// table.
    ///
    /// # Errors
    /// [`ConfigError`] naming the key (and the FMU variable) of the first
    /// problem.
    pub(crate) fn new(
        key: &KeyPath,
        config: &FmuPlantConfig,
        unpacked: &Unpacked,
        model: &Model,
        inputs: &[Variable],
        outputs: &[Variable],
        start_values: &[(Variable, FmuValue)],
    ) -> Result<Self, ConfigError> {
        let path_key = key.child("path");
        let name = file_name(&unpacked.file);
        let fail = |what: String| ConfigError::invalid(&path_key, format!("FMU {name}: {what}"));
        let Some(me) = &model.model_exchange else {
            return Err(ConfigError::invalid(
                key.child("interface"),
                format!(
                    "the FMU {name} has no {} Model Exchange interface",
                    model.version_text()
                ),
            ));
        };
        if config.step.is_some() {
            return Err(ConfigError::invalid(
                key.child("step"),
                "a Model Exchange FMU is integrated by the run's solver at the run's step; \
                 `step` is the communication step of interface = \"co_simulation\"",
            ));
        }
        check_me_binary(&path_key, unpacked, model, &me.model_identifier)?;
        let view =
            linked_view(unpacked).map_err(|e| fail(format!("cannot prepare the FMU: {e}")))?;
        let instance = MeInstance::new(view, model, "plant").map_err(fail)?;
        let mut inner = Inner {
            instance,
            name,
            time: 0.0,
            z: vec![0.0; me.event_indicators],
            sign: vec![1.0; me.event_indicators],
            next_time: None,
            fault: None,
        };
        let mut x0 = vec![0.0; me.states.len()];
        initialise(&mut inner, start_values, &mut x0)
            .map_err(|e| ConfigError::invalid(&path_key, format!("initialisation failed: {e}")))?;
        if let Some(i) = x0.iter().position(|x| !x.is_finite()) {
            return Err(ConfigError::invalid(
                &path_key,
                format!(
                    "FMU state \"{}\" is {} after initialisation",
                    me.states[i], x0[i]
                ),
            ));
        }
        Ok(FmuMePlant {
            inner: Mutex::new(inner),
            state_names: me.states.clone(),
            units: crate::fmu::model::units_by_name(
                inputs
                    .iter()
                    .chain(outputs.iter())
                    .chain(me.states.iter().filter_map(|s| model.variable(s))),
            ),
            input_names: inputs.iter().map(|v| v.name.clone()).collect(),
            output_names: outputs.iter().map(|v| v.name.clone()).collect(),
            input_refs: inputs.iter().map(|v| v.value_reference).collect(),
            output_refs: outputs.iter().map(|v| v.value_reference).collect(),
            x0,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every field is replaced whole, so a poisoned lock holds nothing
        // half-written.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` unless the plant already failed; a failure is kept.
    fn with<R>(&self, f: impl FnOnce(&mut Inner) -> Result<R, FmuCallError>) -> Option<R> {
        let mut inner = self.lock();
        if inner.fault.is_some() {
            return None;
        }
        match f(&mut inner) {
            Ok(r) => Some(r),
            Err(e) => {
                inner.fault = Some(e);
                None
            }
        }
    }
}

/// Start values, initialisation mode, the first event iteration (FMI 2.0
/// §3.2.2, FMI 3.0 §3.2.4), the initial continuous states into `x0`.
fn initialise(
    inner: &mut Inner,
    start_values: &[(Variable, FmuValue)],
    x0: &mut [f64],
) -> Result<(), FmuCallError> {
    let r = inner.instance.initialise(start_values);
    r.map_err(|e| inner.failed(e))?;
    // Exiting initialisation mode enters event mode.
    let r = inner.instance.get_continuous_states(x0);
    r.map_err(|e| inner.failed(e))?;
    inner.event_iteration(x0)
}

impl Plant for FmuMePlant {
    fn signature(&self) -> Signature {
        Signature {
            states: self.state_names.clone(),
            inputs: self.input_names.clone(),
            outputs: self.output_names.clone(),
        }
    }

    fn unit(&self, signal: &str) -> Option<String> {
        self.units.get(signal).cloned()
    }

    fn initial_state(&self, x0: &mut [f64]) {
        x0.copy_from_slice(&self.x0);
    }

    fn derivative(&self, t: f64, x: &[f64], u: &[f64], dx: &mut [f64]) {
        let ok = self.with(|inner| {
            inner.prepare(t, x, &self.input_refs, u)?;
            let r = inner.instance.get_derivatives(dx);
            r.map_err(|e| inner.failed(e))?;
            Ok(())
        });
        if ok.is_none() {
            dx.fill(0.0);
        }
    }

    fn output(&self, t: f64, x: &[f64], u: &[f64], y: &mut [f64]) {
        let ok = self.with(|inner| {
            inner.prepare(t, x, &self.input_refs, u)?;
            let r = inner.instance.get_reals(&self.output_refs, y);
            r.map_err(|e| inner.failed(e))?;
            Ok(())
        });
        if ok.is_none() {
            y.fill(f64::NAN);
        }
    }

    fn guard_count(&self) -> usize {
        self.lock().sign.len() + 1
    }

    fn guards(&self, t: f64, x: &[f64], u: &[f64], g: &mut [f64]) {
        let nz = g.len() - 1;
        let ok = self.with(|inner| {
            if nz > 0 {
                inner.prepare(t, x, &self.input_refs, u)?;
                inner.indicators()?;
                for i in 0..nz {
                    g[i] = inner.sign[i] * inner.z[i];
                }
            }
            g[nz] = inner.next_time.map_or(1.0, |te| te - t);
            Ok(())
        });
        if ok.is_none() {
            // A failed plant fires nothing; the run stops at this step.
            g.fill(1.0);
        }
    }

    fn reset(&self, t: f64, x: &mut [f64], u: &[f64], _guard: usize) {
        self.with(|inner| {
            inner.prepare(t, x, &self.input_refs, u)?;
            let r = inner.instance.enter_event_mode();
            r.map_err(|e| inner.failed(e))?;
            inner.event_iteration(x)
        });
    }

    fn fault(&self) -> Option<String> {
        self.lock().fault.as_ref().map(ToString::to_string)
    }
}
