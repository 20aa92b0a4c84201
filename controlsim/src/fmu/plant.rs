//! `kind = "fmu"` as a plant: a Co-Simulation FMU stepped at its
//! communication step `step`, as a discrete plant of that period (a Model
//! Exchange FMU is [`crate::fmu::exchange`]; [`build`] picks the interface).
//!
//! At each communication point `t_n = n * step` the engine latches the
//! actuator's applied values (as for every discrete plant); the FMU gets
//! them as its inputs, steps `doStep(t_n, step)`, and its outputs after the
//! step are the plant's outputs from `t_(n+1)` on. The plant's state vector
//! is those outputs (named after them), so recording and the sensor see the
//! FMU's values at the communication points, exactly what an FMI master
//! such as FMPy samples. The FMU's own states stay inside it.
//!
//! A failed call stops the plant: it keeps its last outputs and
//! [`Plant::fault`] reports the error, which stops the run at that step
//! ([`StepError::Component`](crate::StepError::Component)).

use std::path::PathBuf;
use std::sync::Mutex;

use netloop_time::SimTime;
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::fmu::cosim::{CoSim, FmuProcess, Placement};
use crate::fmu::model::{Causality, Variable};
use crate::fmu::slave::FmuCallError;
use crate::fmu::FmuValues;
use crate::key_path::KeyPath;
use crate::plant::{Plant, Signature, TimeDomain};

/// `[loops.plant] kind = "fmu"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FmuPlantConfig {
    /// The `.fmu` file; relative to the scenario file.
    pub path: PathBuf,
    /// Communication step, a multiple of the run's step. Default: the
    /// run's step.
    #[serde(
        default,
        with = "netloop_time::duration::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub step: Option<SimTime>,
    /// FMU inputs driven by the actuator channels, in channel order.
    /// Default: every input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Vec<String>>,
    /// FMU outputs that are the plant's outputs. Default: every output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Vec<String>>,
    /// Parameters by name.
    #[serde(default, skip_serializing_if = "FmuValues::is_empty")]
    pub parameters: FmuValues,
    /// Start values by name (states, inputs, locals with a start value).
    #[serde(default, skip_serializing_if = "FmuValues::is_empty")]
    pub start: FmuValues,
    /// Which FMI interface runs the FMU. Default: Co-Simulation when the
    /// FMU has it, else Model Exchange.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<FmuInterface>,
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

/// `interface = "co_simulation" | "model_exchange"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FmuInterface {
    /// The FMU steps itself (`doStep`) at the communication step.
    CoSimulation,
    /// netloop integrates the FMU's states ([`crate::fmu::exchange`]).
    ModelExchange,
}

/// Builds an FMU plant with the interface the config asks for (see
/// [`FmuPlantConfig::interface`]); `step` is the run's step.
///
/// # Errors
/// [`ConfigError`] naming the key (and the FMU variable) of the first
/// problem.
pub fn build(
    key: &KeyPath,
    config: &FmuPlantConfig,
    step: SimTime,
) -> Result<Box<dyn Plant>, ConfigError> {
    let interface = match config.interface {
        Some(i) => i,
        None => {
            let (_, model) = crate::fmu::load(key, &config.path)?;
            if model.co_simulation {
                FmuInterface::CoSimulation
            } else {
                FmuInterface::ModelExchange
            }
        }
    };
    Ok(match interface {
        FmuInterface::CoSimulation => Box::new(FmuPlant::new(key, config, step)?),
        FmuInterface::ModelExchange => {
            if config.process == Some(FmuProcess::Separate) {
                return Err(ConfigError::invalid(
                    key.child("process"),
                    "process = \"separate\" runs Co-Simulation FMUs; a Model Exchange FMU is \
                     integrated by netloop's solver in its own process (use interface = \
                     \"co_simulation\" if the FMU has it)",
                ));
            }
            Placement::new(key, config.process, config.timeout)?;
            let (unpacked, model) = crate::fmu::load(key, &config.path)?;
            let (inputs, outputs) = select(key, config, &model)?;
            let start_values = model.start_values(key, &config.parameters, &config.start)?;
            Box::new(crate::fmu::exchange::FmuMePlant::new(
                key,
                config,
                &unpacked,
                &model,
                &inputs,
                &outputs,
                &start_values,
            )?)
        }
    })
}

/// The FMU variables of the plant's inputs and outputs (at least one output).
fn select(
    key: &KeyPath,
    config: &FmuPlantConfig,
    model: &crate::fmu::model::Model,
) -> Result<(Vec<Variable>, Vec<Variable>), ConfigError> {
    let inputs = model.select(
        &key.child("inputs"),
        config.inputs.as_deref(),
        Causality::Input,
        model.inputs(),
    )?;
    let outputs = model.select(
        &key.child("outputs"),
        config.outputs.as_deref(),
        Causality::Output,
        model.outputs(),
    )?;
    if outputs.is_empty() {
        return Err(ConfigError::invalid(
            key.child("outputs"),
            "an FMU plant needs at least one output; the FMU declares none",
        ));
    }
    Ok((inputs, outputs))
}

struct Inner {
    slave: CoSim,
    fault: Option<FmuCallError>,
}

/// A built FMU plant.
pub struct FmuPlant {
    inner: Mutex<Inner>,
    input_names: Vec<String>,
    output_names: Vec<String>,
    input_refs: Vec<u32>,
    output_refs: Vec<u32>,
    /// The units the FMU declares for its states, inputs and outputs.
    units: std::collections::BTreeMap<String, String>,
    period: SimTime,
    /// Outputs after initialisation.
    y0: Vec<f64>,
}

impl std::fmt::Debug for FmuPlant {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_struct("FmuPlant")
            .field("inputs", &self.input_names)
            .field("outputs", &self.output_names)
            .field("period", &self.period)
            .finish()
    }
}

impl FmuPlant {
    /// Loads, checks and initialises the FMU (at time 0); `key` is the
    /// plant's table, `step` the run's step.
    ///
    /// # Errors
    /// [`ConfigError`] naming the key (and the FMU variable) of the first
    /// problem.
    pub fn new(key: &KeyPath, config: &FmuPlantConfig, step: SimTime) -> Result<Self, ConfigError> {
        let (unpacked, model) = crate::fmu::load(key, &config.path)?;
        let (inputs, outputs) = select(key, config, &model)?;
        let period = config.step.unwrap_or(step);
        if period == SimTime::ZERO || period.as_nanos() % step.as_nanos() != 0 {
            return Err(ConfigError::invalid(
                key.child("step"),
                format!("the communication step {period} must be a positive multiple of the run's step {step}"),
            ));
        }
        let start_values = model.start_values(key, &config.parameters, &config.start)?;
        let placement = Placement::new(key, config.process, config.timeout)?;
        let mut slave = CoSim::start(
            key,
            placement,
            &unpacked,
            &model,
            "plant",
            &config.parameters,
            &config.start,
            &start_values,
            0.0,
        )?;
        let output_refs: Vec<u32> = outputs.iter().map(|v| v.value_reference).collect();
        let mut y0 = vec![0.0; outputs.len()];
        slave.get_reals(&output_refs, &mut y0).map_err(|e| {
            ConfigError::invalid(key.child("path"), format!("initialisation failed: {e}"))
        })?;
        if let Some(i) = y0.iter().position(|y| !y.is_finite()) {
            return Err(ConfigError::invalid(
                key.child("path"),
                format!(
                    "FMU output \"{}\" is {} after initialisation",
                    outputs[i].name, y0[i]
                ),
            ));
        }
        Ok(FmuPlant {
            inner: Mutex::new(Inner { slave, fault: None }),
            units: crate::fmu::model::units_by_name(inputs.iter().chain(&outputs)),
            input_names: inputs.iter().map(|v| v.name.clone()).collect(),
            output_names: outputs.iter().map(|v| v.name.clone()).collect(),
            input_refs: inputs.iter().map(|v| v.value_reference).collect(),
            output_refs,
            period,
            y0,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves nothing half-written that a
        // later call could misread: every field is replaced whole.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Plant for FmuPlant {
    fn signature(&self) -> Signature {
        Signature {
            states: self.output_names.clone(),
            inputs: self.input_names.clone(),
            outputs: self.output_names.clone(),
        }
    }

    fn unit(&self, signal: &str) -> Option<String> {
        self.units.get(signal).cloned()
    }

    fn time_domain(&self) -> TimeDomain {
        TimeDomain::Discrete {
            period: self.period,
        }
    }

    fn initial_state(&self, x0: &mut [f64]) {
        x0.copy_from_slice(&self.y0);
    }

    fn update(&self, t: f64, x: &[f64], u: &[f64], next: &mut [f64]) {
        next.copy_from_slice(x);
        let mut inner = self.lock();
        if inner.fault.is_some() {
            return;
        }
        let h = self.period.as_secs_f64();
        // The end of the period from integer nanoseconds, as the engine has it.
        let t_end = (t * 1e9).round() as u64 + self.period.as_nanos();
        let t_end = t_end as f64 * 1e-9;
        let Inner { slave, fault } = &mut *inner;
        slave.set_time(t);
        let result = slave
            .set_reals(&self.input_refs, u)
            .and_then(|()| slave.do_step(h, t_end))
            .and_then(|()| slave.get_reals(&self.output_refs, next));
        if let Err(e) = result {
            next.copy_from_slice(x);
            *fault = Some(e);
        }
    }

    fn output(&self, _t: f64, x: &[f64], _u: &[f64], y: &mut [f64]) {
        y.copy_from_slice(x);
    }

    fn fault(&self) -> Option<String> {
        self.lock().fault.as_ref().map(ToString::to_string)
    }
}
