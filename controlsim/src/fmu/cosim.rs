//! Where a Co-Simulation FMU runs: in netloop's process ([`Slave`], the
//! default) or in a child process ([`separate::Child`], `process =
//! "separate"`). Both make the same FMI calls with the same values, so a
//! component does not care which it has.

use std::time::Duration;

use netloop_time::SimTime;
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::fmu::archive::Unpacked;
use crate::fmu::model::{Model, Variable};
use crate::fmu::separate;
use crate::fmu::slave::{FmuCallError, Slave};
use crate::fmu::{FmuValue, FmuValues};
use crate::key_path::KeyPath;

/// `process = "in_process" | "separate"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FmuProcess {
    /// The FMU's library is loaded into netloop: fastest; an FMU that
    /// crashes or hangs takes the run with it.
    #[default]
    InProcess,
    /// The FMU runs in a child process (`netloop-fmu-host`): a crash or a
    /// hang (see `timeout`) becomes a run error naming the FMU, the call and
    /// the simulated time. Same results, bit for bit.
    Separate,
}

/// How long a separate FMU process may take to answer one call, unless the
/// scenario says: generous, as a Python FMU's first call starts Python.
pub const DEFAULT_TIMEOUT: SimTime = SimTime(30_000_000_000);

/// `process` and `timeout` of an FMU component, checked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Placement {
    pub(crate) process: FmuProcess,
    pub(crate) timeout: Duration,
}

impl Placement {
    /// # Errors
    /// [`ConfigError`] at `key.timeout` for a timeout without a separate
    /// process (an in-process call cannot be abandoned) or a zero one.
    pub(crate) fn new(
        key: &KeyPath,
        process: Option<FmuProcess>,
        timeout: Option<SimTime>,
    ) -> Result<Self, ConfigError> {
        let process = process.unwrap_or_default();
        if timeout.is_some() && process != FmuProcess::Separate {
            return Err(ConfigError::invalid(
                key.child("timeout"),
                "a timeout needs process = \"separate\": a call into an FMU in netloop's own \
                 process cannot be abandoned",
            ));
        }
        let timeout = timeout.unwrap_or(DEFAULT_TIMEOUT);
        if timeout == SimTime::ZERO {
            return Err(ConfigError::invalid(
                key.child("timeout"),
                "must be positive",
            ));
        }
        Ok(Placement {
            process,
            timeout: Duration::from_nanos(timeout.as_nanos()),
        })
    }
}

/// One started Co-Simulation instance, here or in a child process.
#[derive(Debug)]
pub(crate) enum CoSim {
    InProcess(Slave),
    Separate(separate::Child),
}

impl CoSim {
    /// Starts the FMU where `placement` says, with `start_values` (the
    /// checked `parameters` and `start`), initialised at `start_time`.
    ///
    /// # Errors
    /// As [`Slave::start`] and [`separate::Child::start`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start(
        key: &KeyPath,
        placement: Placement,
        unpacked: &Unpacked,
        model: &Model,
        instance_name: &str,
        parameters: &FmuValues,
        start: &FmuValues,
        start_values: &[(Variable, FmuValue)],
        start_time: f64,
    ) -> Result<Self, ConfigError> {
        Ok(match placement.process {
            FmuProcess::InProcess => CoSim::InProcess(Slave::start(
                key,
                unpacked,
                model,
                instance_name,
                start_values,
                start_time,
            )?),
            FmuProcess::Separate => {
                if !model.co_simulation {
                    // Slave::start's message, without starting a process.
                    Slave::start(
                        key,
                        unpacked,
                        model,
                        instance_name,
                        start_values,
                        start_time,
                    )?;
                }
                CoSim::Separate(separate::Child::start(
                    key,
                    &unpacked.file,
                    model.version,
                    instance_name,
                    parameters,
                    start,
                    start_time,
                    placement.timeout,
                )?)
            }
        })
    }

    /// Sets the FMU's time (for the next `doStep` and for messages).
    pub(crate) fn set_time(&mut self, t: f64) {
        match self {
            CoSim::InProcess(s) => s.time = t,
            CoSim::Separate(c) => c.time = t,
        }
    }

    pub(crate) fn set_reals(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), FmuCallError> {
        match self {
            CoSim::InProcess(s) => s.set_reals(vrs, values),
            CoSim::Separate(c) => c.set_reals(vrs, values),
        }
    }

    pub(crate) fn get_reals(
        &mut self,
        vrs: &[u32],
        values: &mut [f64],
    ) -> Result<(), FmuCallError> {
        match self {
            CoSim::InProcess(s) => s.get_reals(vrs, values),
            CoSim::Separate(c) => c.get_reals(vrs, values),
        }
    }

    /// `doStep` from the FMU's time over `h`, ending at `t_end`.
    pub(crate) fn do_step(&mut self, h: f64, t_end: f64) -> Result<(), FmuCallError> {
        match self {
            CoSim::InProcess(s) => s.do_step(h, t_end),
            CoSim::Separate(c) => c.do_step(h, t_end),
        }
    }

    pub(crate) fn save_state(&mut self) -> Result<(), FmuCallError> {
        match self {
            CoSim::InProcess(s) => s.save_state(),
            CoSim::Separate(c) => c.save_state(),
        }
    }

    pub(crate) fn restore_state(&mut self) -> Result<(), FmuCallError> {
        match self {
            CoSim::InProcess(s) => s.restore_state(),
            CoSim::Separate(c) => c.restore_state(),
        }
    }
}
