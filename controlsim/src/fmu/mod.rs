//! FMU import: a Functional Mock-up Unit (FMI 2.0 or 3.0, Co-Simulation or
//! Model Exchange) as
//! a loop's plant (`[loops.plant] kind = "fmu"`) or controller
//! (`[loops.controller] kind = "fmu"`).
//!
//! The FMI C API and `modelDescription.xml` go through the `fmi` crate
//! (rust-fmi); this module adds what netloop needs around it:
//! - [`archive`]: the `.fmu` is unpacked once into a cache keyed by the
//!   SHA-256 of the file, and checked for a Linux x86-64 binary;
//! - [`model`]: one view of the FMI 2.0 and 3.0 variable tables, with the
//!   checks that name the scenario key and the FMU variable (unknown name,
//!   wrong causality, type mismatch, missing required start value);
//! - [`slave`]: one Co-Simulation instance (set, get, `doStep`), every failed
//!   call turned into an [`FmuCallError`] naming the FMU, the call and the
//!   simulated time;
//! - [`plant`]: the plant kind, a discrete plant whose period is the
//!   communication step;
//! - [`exchange`]: the plant kind with `interface = "model_exchange"` (FMI
//!   2.0 and 3.0, their calls in `me_instance`): netloop's solver integrates
//!   the FMU's states and locates its state and time events like every guard.
//!
//! The controller kind is [`controller::fmu`](crate::controller::fmu).
//!
//! # Mapping (docs/scenario.md, "FMU plants and controllers")
//! - Plant: the actuator channels drive the FMU variables named in `inputs`
//!   (default: every input of the FMU, in `modelDescription.xml` order); the
//!   plant's outputs, and so the sensor channels, are the FMU variables named
//!   in `outputs` (default: every output). Inputs and outputs must be Real
//!   (FMI 2.0) or Float64 (FMI 3.0).
//! - Controller: `measurements` names the FMU inputs fed the sensor channels
//!   (default: the first inputs, one per channel), `references` the inputs fed
//!   the reference signals (default: the remaining inputs), `outputs` the FMU
//!   outputs that drive the actuator channels (default: every output).
//! - `parameters` sets variables of causality `parameter` by name, `start`
//!   overrides the start value of any other variable that has one; values are
//!   checked against the variable's type.

pub mod archive;
pub mod cosim;
pub mod exchange;
mod me_instance;
pub mod model;
pub mod plant;
pub mod python;
pub mod separate;
pub mod slave;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::key_path::KeyPath;

pub use cosim::FmuProcess;
pub use plant::{FmuInterface, FmuPlant, FmuPlantConfig};
pub use slave::FmuCallError;

/// A value in `parameters` or `start`: the TOML type decides which FMU
/// variable types it fits (an integer also fits a Real variable).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FmuValue {
    Boolean(bool),
    Integer(i64),
    Real(f64),
    Text(String),
}

impl fmt::Display for FmuValue {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            FmuValue::Boolean(b) => write!(f, "{b}"),
            FmuValue::Integer(i) => write!(f, "{i}"),
            FmuValue::Real(x) => write!(f, "{x}"),
            FmuValue::Text(s) => write!(f, "{s:?}"),
        }
    }
}

/// Variable name to value, in name order (deterministic set order).
pub type FmuValues = BTreeMap<String, FmuValue>;

/// Why the FMU at `path` cannot be rolled back (its state saved and
/// restored), or `None` when it can. An FMU that does not load is `None`:
/// building its component reports that, with its own key.
pub fn why_no_rollback(path: &std::path::Path) -> Option<String> {
    let (unpacked, model) = load(&KeyPath::default(), path).ok()?;
    let name = slave::file_name(&unpacked.file);
    match model.version {
        model::FmiVersion::V3 => Some(format!(
            "the FMU {name} is FMI 3.0, and netloop saves and restores the state of FMI 2.0 FMUs \
             only: the `fmi` crate it uses (0.8) has no fmi3GetFMUState call on an instance, and \
             its raw function table needs the instance pointer, which the crate keeps private"
        )),
        model::FmiVersion::V2 if !model.can_get_and_set_state => Some(format!(
            "the FMU {name} does not declare canGetAndSetFMUstate, so its state cannot be saved \
             and restored"
        )),
        model::FmiVersion::V2 => None,
    }
}

/// An FMU that the scenario refers to, loaded and checked: see
/// [`archive::Unpacked`] and [`model::Model`].
pub(crate) fn load(
    key: &KeyPath,
    path: &std::path::Path,
) -> Result<(archive::Unpacked, model::Model), crate::ConfigError> {
    let unpacked = archive::Unpacked::open(&key.child("path"), path)?;
    let model = model::Model::read(&key.child("path"), &unpacked)?;
    unpacked.check_binary(&key.child("path"), &model)?;
    Ok((unpacked, model))
}
