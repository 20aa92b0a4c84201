//! One Co-Simulation instance of an FMU, FMI 2.0 or 3.0, through the `fmi`
//! crate: the calls netloop makes (set start values, initialise, set inputs,
//! `doStep`, get outputs), each failed call
//! an [`FmuCallError`] that names the FMU, the call and the simulated time.

use std::fmt;
use std::path::Path;

use fmi::fmi2::import::Fmi2Import;
use fmi::fmi2::instance::{CoSimulation as _, Common as _, FmuState, InstanceCS as Cs2};
use fmi::fmi3::import::Fmi3Import;
use fmi::fmi3::instance::InstanceCS as Cs3;
use fmi::fmi3::{CoSimulation as _, Common as _, Fmi3Model as _, GetSet as _};
use fmi::traits::{FmiImport, FmiStatus as _};

use crate::error::ConfigError;
use crate::fmu::archive::{linked_view, Unpacked};
use crate::fmu::model::{FmiVersion, Model, VarType, Variable};
use crate::fmu::FmuValue;
use crate::key_path::KeyPath;

/// A failed FMI call: the FMU (its file), the function, its status and the
/// simulated time of the call.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("FMU {fmu}: {call} returned {status} at t = {}", show_time(*.time))]
pub struct FmuCallError {
    pub fmu: String,
    pub call: &'static str,
    pub status: String,
    pub time: f64,
}

// The instance goes before the import, which holds the unpacked files (the
// library's resources) and is only kept alive.
#[allow(dead_code)]
enum Instance {
    V2(Cs2, Fmi2Import),
    V3(Cs3, Fmi3Import),
}

/// One instance, initialised and ready to step.
pub struct Slave {
    instance: Instance,
    /// The file name, for messages.
    name: String,
    version: FmiVersion,
    /// The FMU's current time, seconds.
    pub(crate) time: f64,
    /// The one saved FMU state (`fmi2GetFMUstate`), reused by every save so
    /// that a run of rollbacks allocates one state; with the FMU's time.
    saved: Option<(FmuState, f64)>,
}

impl fmt::Debug for Slave {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_struct("Slave")
            .field("fmu", &self.name)
            .field("version", &self.version)
            .field("time", &self.time)
            .finish()
    }
}

// SAFETY: an FMU instance may be used from any thread as long as calls are
// not concurrent (FMI 2.0 §2.1.5, FMI 3.0 "thread safety"); netloop only
// reaches a `Slave` through `&mut` or a `Mutex`.
unsafe impl Send for Slave {}

fn status_text<E: fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

impl Slave {
    /// Instantiates the Co-Simulation interface, sets `start_values` and
    /// initialises at `start_time` (seconds).
    ///
    /// # Errors
    /// [`ConfigError`] at `key` (the component's table) when the library
    /// cannot be loaded or a call fails; the message names the call.
    pub(crate) fn start(
        key: &KeyPath,
        unpacked: &Unpacked,
        model: &Model,
        instance_name: &str,
        start_values: &[(Variable, FmuValue)],
        start_time: f64,
    ) -> Result<Self, ConfigError> {
        let name = file_name(&unpacked.file);
        let fail =
            |what: String| ConfigError::invalid(key.child("path"), format!("FMU {name}: {what}"));
        if !model.co_simulation {
            return Err(fail(
                "has no Co-Simulation interface, only Model Exchange: a plant runs it with \
                 interface = \"model_exchange\"; a controller needs Co-Simulation"
                    .into(),
            ));
        }
        let view =
            linked_view(unpacked).map_err(|e| fail(format!("cannot prepare the FMU: {e}")))?;
        if model
            .generation_tool
            .as_deref()
            .is_some_and(|t| t.starts_with("PythonFMU"))
        {
            crate::fmu::python::load_libpython().map_err(fail)?;
        }
        let instance = match model.version {
            FmiVersion::V2 => {
                let import = <Fmi2Import as FmiImport>::new(view, &model.xml)
                    .map_err(|e| fail(e.to_string()))?;
                let cs = import
                    .instantiate_cs(instance_name, false, false)
                    .map_err(|e| fail(format!("fmi2Instantiate failed: {e}")))?;
                Instance::V2(cs, import)
            }
            FmiVersion::V3 => {
                let import = <Fmi3Import as FmiImport>::new(view, &model.xml)
                    .map_err(|e| fail(e.to_string()))?;
                let cs = import
                    .instantiate_cs(instance_name, false, false, false, false, &[])
                    .map_err(|e| fail(format!("fmi3InstantiateCoSimulation failed: {e}")))?;
                Instance::V3(cs, import)
            }
        };
        let mut slave = Slave {
            instance,
            name,
            version: model.version,
            time: start_time,
            saved: None,
        };
        let init = |e: FmuCallError| {
            ConfigError::invalid(key.child("path"), format!("initialisation failed: {e}"))
        };
        for (v, value) in start_values {
            slave.set_value(v, value).map_err(init)?;
        }
        slave.initialise(start_time).map_err(init)?;
        Ok(slave)
    }

    fn error(&self, call: &'static str, status: impl fmt::Display) -> FmuCallError {
        FmuCallError {
            fmu: self.name.clone(),
            call,
            status: status.to_string(),
            time: self.time,
        }
    }

    fn call(&self, v2: &'static str, v3: &'static str) -> &'static str {
        match self.version {
            FmiVersion::V2 => v2,
            FmiVersion::V3 => v3,
        }
    }

    fn initialise(&mut self, start_time: f64) -> Result<(), FmuCallError> {
        match &mut self.instance {
            Instance::V2(cs, _) => {
                let r = cs.setup_experiment(None, start_time, None);
                r.map_err(|e| self.error("fmi2SetupExperiment", status_text(e)))?;
                let Instance::V2(cs, _) = &mut self.instance else {
                    unreachable!()
                };
                let r = cs.enter_initialization_mode();
                r.map_err(|e| self.error("fmi2EnterInitializationMode", status_text(e)))?;
                let Instance::V2(cs, _) = &mut self.instance else {
                    unreachable!()
                };
                let r = cs.exit_initialization_mode();
                r.map_err(|e| self.error("fmi2ExitInitializationMode", status_text(e)))?;
            }
            Instance::V3(cs, _) => {
                let r = cs.enter_initialization_mode(None, start_time, None);
                r.map_err(|e| self.error("fmi3EnterInitializationMode", status_text(e)))?;
                let Instance::V3(cs, _) = &mut self.instance else {
                    unreachable!()
                };
                let r = cs.exit_initialization_mode();
                r.map_err(|e| self.error("fmi3ExitInitializationMode", status_text(e)))?;
            }
        }
        Ok(())
    }

    /// Sets one variable (a start value, before initialisation).
    fn set_value(&mut self, v: &Variable, value: &FmuValue) -> Result<(), FmuCallError> {
        let vr = [v.value_reference];
        let r: Result<(), String> = match (&mut self.instance, v.ty, value) {
            (Instance::V2(cs, _), VarType::Real, FmuValue::Real(x)) => {
                cs.set_real(&vr, &[*x]).map(drop).map_err(status_text)
            }
            (Instance::V2(cs, _), VarType::Real, FmuValue::Integer(i)) => cs
                .set_real(&vr, &[*i as f64])
                .map(drop)
                .map_err(status_text),
            (Instance::V2(cs, _), VarType::Integer, FmuValue::Integer(i)) => cs
                .set_integer(&vr, &[*i as i32])
                .map(drop)
                .map_err(status_text),
            (Instance::V2(cs, _), VarType::Boolean, FmuValue::Boolean(b)) => cs
                .set_boolean(&vr, &[*b as i32])
                .map(drop)
                .map_err(status_text),
            (Instance::V2(cs, _), VarType::String, FmuValue::Text(s)) => cs
                .set_string(
                    &vr,
                    &[std::ffi::CString::new(s.as_str()).unwrap_or_default()],
                )
                .map(drop)
                .map_err(status_text),
            (Instance::V3(cs, _), VarType::Real, FmuValue::Real(x)) => {
                cs.set_float64(&vr, &[*x]).map(drop).map_err(status_text)
            }
            (Instance::V3(cs, _), VarType::Real, FmuValue::Integer(i)) => cs
                .set_float64(&vr, &[*i as f64])
                .map(drop)
                .map_err(status_text),
            (Instance::V3(cs, _), VarType::Integer, FmuValue::Integer(i)) => cs
                .set_int32(&vr, &[*i as i32])
                .map(drop)
                .map_err(status_text),
            (Instance::V3(cs, _), VarType::Boolean, FmuValue::Boolean(b)) => {
                cs.set_boolean(&vr, &[*b]).map(drop).map_err(status_text)
            }
            (Instance::V3(cs, _), VarType::String, FmuValue::Text(s)) => cs
                .set_string(
                    &vr,
                    &[std::ffi::CString::new(s.as_str()).unwrap_or_default()],
                )
                .map(drop)
                .map_err(status_text),
            // Model::start_values checked every pair.
            _ => Err(format!("no setter for {:?} = {value}", v.ty)),
        };
        let call = match v.ty {
            VarType::Real => self.call("fmi2SetReal", "fmi3SetFloat64"),
            VarType::Integer => self.call("fmi2SetInteger", "fmi3SetInt32"),
            VarType::Boolean => self.call("fmi2SetBoolean", "fmi3SetBoolean"),
            _ => self.call("fmi2SetString", "fmi3SetString"),
        };
        r.map_err(|status| FmuCallError {
            status: format!("{status} (setting \"{}\")", v.name),
            ..self.error(call, "")
        })
    }

    /// Sets Real inputs.
    pub(crate) fn set_reals(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), FmuCallError> {
        let r = match &mut self.instance {
            Instance::V2(cs, _) => cs.set_real(vrs, values).map(drop).map_err(status_text),
            Instance::V3(cs, _) => cs.set_float64(vrs, values).map(drop).map_err(status_text),
        };
        r.map_err(|e| self.error(self.call("fmi2SetReal", "fmi3SetFloat64"), e))
    }

    /// Reads Real outputs.
    pub(crate) fn get_reals(
        &mut self,
        vrs: &[u32],
        values: &mut [f64],
    ) -> Result<(), FmuCallError> {
        let r = match &mut self.instance {
            Instance::V2(cs, _) => cs.get_real(vrs, values).map(drop).map_err(status_text),
            Instance::V3(cs, _) => cs.get_float64(vrs, values).map(drop).map_err(status_text),
        };
        r.map_err(|e| self.error(self.call("fmi2GetReal", "fmi3GetFloat64"), e))
    }

    /// `doStep` from the FMU's time over `h` seconds; on success the FMU's
    /// time is `t_end` (given exactly, so the time never drifts by rounding).
    pub(crate) fn do_step(&mut self, h: f64, t_end: f64) -> Result<(), FmuCallError> {
        let t = self.time;
        let r: Result<(), String> = match &mut self.instance {
            Instance::V2(cs, _) => cs.do_step(t, h, true).map(drop).map_err(status_text),
            Instance::V3(cs, _) => {
                let (mut event, mut terminate, mut early, mut last) = (false, false, false, t);
                match cs.do_step(
                    t,
                    h,
                    true,
                    &mut event,
                    &mut terminate,
                    &mut early,
                    &mut last,
                ) {
                    Ok(_) if terminate => Err("OK with terminateSimulation = true".into()),
                    Ok(_) => Ok(()),
                    Err(e) => Err(status_text(e)),
                }
            }
        };
        r.map_err(|e| self.error(self.call("fmi2DoStep", "fmi3DoStep"), e))?;
        self.time = t_end;
        Ok(())
    }
}

impl Slave {
    /// Saves the FMU's whole state (`fmi2GetFMUstate`), to go back to with
    /// [`restore_state`](Self::restore_state). Needs an FMI 2.0 FMU that
    /// declares `canGetAndSetFMUstate` (checked when the scenario is).
    pub(crate) fn save_state(&mut self) -> Result<(), FmuCallError> {
        let time = self.time;
        let r: Result<FmuState, String> = match (&mut self.instance, self.saved.take()) {
            (Instance::V2(cs, _), None) => cs.get_fmu_state().map_err(status_text),
            (Instance::V2(cs, _), Some((state, _))) => match cs.update_fmu_state(&state).ok() {
                Ok(_) => Ok(state),
                Err(e) => Err(status_text(e)),
            },
            // The `fmi` crate (0.8) does not bind fmi3GetFMUState; the
            // scenario check refuses rollback for FMI 3.0 FMUs.
            (Instance::V3(..), _) => Err("not available for FMI 3.0 in netloop".into()),
        };
        let state =
            r.map_err(|e| self.error(self.call("fmi2GetFMUstate", "fmi3GetFMUState"), e))?;
        self.saved = Some((state, time));
        Ok(())
    }

    /// Goes back to the state of the last [`save_state`](Self::save_state)
    /// (`fmi2SetFMUstate`), its time included.
    pub(crate) fn restore_state(&mut self) -> Result<(), FmuCallError> {
        let call = self.call("fmi2SetFMUstate", "fmi3SetFMUState");
        let r = match (&mut self.instance, &self.saved) {
            (Instance::V2(cs, _), Some((state, _))) => {
                cs.set_fmu_state(state).ok().map(drop).map_err(status_text)
            }
            (_, None) => Err("no saved state".to_string()),
            (Instance::V3(..), _) => Err("not available for FMI 3.0 in netloop".into()),
        };
        r.map_err(|e| self.error(call, e))?;
        if let Some((_, time)) = self.saved {
            self.time = time;
        }
        Ok(())
    }
}

/// A simulated time for a message: integer nanoseconds as netloop prints
/// them (`300ms`), or seconds before the run's start.
pub(crate) fn show_time(t: f64) -> String {
    if t >= 0.0 {
        netloop_time::SimTime((t * 1e9).round() as u64).to_string()
    } else {
        format!("{t} s")
    }
}

/// The file name of an FMU, for messages.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}
