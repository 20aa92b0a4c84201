//! One Model Exchange instance, FMI 2.0 or 3.0, through the `fmi` crate:
//! the calls [`crate::fmu::exchange`] makes, the same for both versions.
//! A failed call is a [`Failed`]: the FMI function's name for the FMU's
//! version (`fmi2GetDerivatives`, `fmi3GetContinuousStateDerivatives`) and
//! the status it returned.

use fmi::fmi2::import::Fmi2Import;
use fmi::fmi2::instance::{Common as _, InstanceME as Me2, ModelExchange as _};
use fmi::fmi3::import::Fmi3Import;
use fmi::fmi3::instance::InstanceME as Me3;
use fmi::fmi3::{Common as _, Fmi3Model as _, GetSet as _, ModelExchange as _};
use fmi::traits::FmiImport;
use fmi::EventFlags;

use crate::fmu::archive::Unpacked;
use crate::fmu::model::{FmiVersion, Model, VarType, Variable};
use crate::fmu::FmuValue;
use crate::key_path::KeyPath;

/// A failed call: the FMI function and its status.
pub(crate) struct Failed {
    pub call: &'static str,
    pub status: String,
}

type Call<T> = Result<T, Failed>;

// The instance goes before the import, which holds the unpacked files (the
// library's resources) and is only kept alive.
#[allow(dead_code)]
pub(crate) enum MeInstance {
    V2(Me2, Fmi2Import),
    V3(Me3, Fmi3Import),
}

/// `r` with its status turned into a [`Failed`] naming `call`.
fn check<T, E: std::fmt::Debug>(call: &'static str, r: Result<T, E>) -> Call<()> {
    r.map(drop).map_err(|e| Failed {
        call,
        status: format!("{e:?}"),
    })
}

impl MeInstance {
    /// Imports the unpacked FMU (its files linked in `view`) and
    /// instantiates its Model Exchange interface.
    ///
    /// # Errors
    /// Why the import or `fmi2Instantiate`/`fmi3InstantiateModelExchange`
    /// failed.
    pub(crate) fn new(
        view: tempfile::TempDir,
        model: &Model,
        instance_name: &str,
    ) -> Result<Self, String> {
        match model.version {
            FmiVersion::V2 => {
                let import =
                    <Fmi2Import as FmiImport>::new(view, &model.xml).map_err(|e| e.to_string())?;
                let me = import
                    .instantiate_me(instance_name, false, false)
                    .map_err(|e| format!("fmi2Instantiate failed: {e}"))?;
                Ok(MeInstance::V2(me, import))
            }
            FmiVersion::V3 => {
                let import =
                    <Fmi3Import as FmiImport>::new(view, &model.xml).map_err(|e| e.to_string())?;
                let me = import
                    .instantiate_me(instance_name, false, false)
                    .map_err(|e| format!("fmi3InstantiateModelExchange failed: {e}"))?;
                Ok(MeInstance::V3(me, import))
            }
        }
    }

    /// Start values, then initialisation mode entered and left at time 0
    /// (FMI 2.0 §3.2.2: `fmi2SetupExperiment` first; FMI 3.0 §3.2.4); the
    /// FMU is then in event mode.
    pub(crate) fn initialise(&mut self, start_values: &[(Variable, FmuValue)]) -> Call<()> {
        if let MeInstance::V2(me, _) = self {
            check("fmi2SetupExperiment", me.setup_experiment(None, 0.0, None))?;
        }
        for (v, value) in start_values {
            self.set_start(v, value).map_err(|f| Failed {
                status: format!("{} (setting \"{}\")", f.status, v.name),
                ..f
            })?;
        }
        match self {
            MeInstance::V2(me, _) => {
                check(
                    "fmi2EnterInitializationMode",
                    me.enter_initialization_mode(),
                )?;
                check("fmi2ExitInitializationMode", me.exit_initialization_mode())
            }
            MeInstance::V3(me, _) => {
                check(
                    "fmi3EnterInitializationMode",
                    me.enter_initialization_mode(None, 0.0, None),
                )?;
                check("fmi3ExitInitializationMode", me.exit_initialization_mode())
            }
        }
    }

    /// One start value; `Model::start_values` checked the pair.
    fn set_start(&mut self, v: &Variable, value: &FmuValue) -> Call<()> {
        let vr = [v.value_reference];
        let text = |s: &str| std::ffi::CString::new(s).unwrap_or_default();
        match (self, v.ty, value) {
            (MeInstance::V2(me, _), VarType::Real, FmuValue::Real(x)) => {
                check("fmi2SetReal", me.set_real(&vr, &[*x]))
            }
            (MeInstance::V2(me, _), VarType::Real, FmuValue::Integer(i)) => {
                check("fmi2SetReal", me.set_real(&vr, &[*i as f64]))
            }
            (MeInstance::V2(me, _), VarType::Integer, FmuValue::Integer(i)) => {
                check("fmi2SetInteger", me.set_integer(&vr, &[*i as i32]))
            }
            (MeInstance::V2(me, _), VarType::Boolean, FmuValue::Boolean(b)) => {
                check("fmi2SetBoolean", me.set_boolean(&vr, &[*b as i32]))
            }
            (MeInstance::V2(me, _), VarType::String, FmuValue::Text(s)) => {
                check("fmi2SetString", me.set_string(&vr, &[text(s)]))
            }
            (MeInstance::V3(me, _), VarType::Real, FmuValue::Real(x)) => {
                check("fmi3SetFloat64", me.set_float64(&vr, &[*x]))
            }
            (MeInstance::V3(me, _), VarType::Real, FmuValue::Integer(i)) => {
                check("fmi3SetFloat64", me.set_float64(&vr, &[*i as f64]))
            }
            (MeInstance::V3(me, _), VarType::Integer, FmuValue::Integer(i)) => {
                check("fmi3SetInt32", me.set_int32(&vr, &[*i as i32]))
            }
            (MeInstance::V3(me, _), VarType::Boolean, FmuValue::Boolean(b)) => {
                check("fmi3SetBoolean", me.set_boolean(&vr, &[*b]))
            }
            (MeInstance::V3(me, _), VarType::String, FmuValue::Text(s)) => {
                check("fmi3SetString", me.set_string(&vr, &[text(s)]))
            }
            _ => Ok(()),
        }
    }

    pub(crate) fn set_time(&mut self, t: f64) -> Call<()> {
        match self {
            MeInstance::V2(me, _) => check("fmi2SetTime", me.set_time(t)),
            MeInstance::V3(me, _) => check("fmi3SetTime", me.set_time(t)),
        }
    }

    pub(crate) fn set_continuous_states(&mut self, x: &[f64]) -> Call<()> {
        match self {
            MeInstance::V2(me, _) => check("fmi2SetContinuousStates", me.set_continuous_states(x)),
            MeInstance::V3(me, _) => check("fmi3SetContinuousStates", me.set_continuous_states(x)),
        }
    }

    pub(crate) fn get_continuous_states(&mut self, x: &mut [f64]) -> Call<()> {
        match self {
            MeInstance::V2(me, _) => check("fmi2GetContinuousStates", me.get_continuous_states(x)),
            MeInstance::V3(me, _) => check("fmi3GetContinuousStates", me.get_continuous_states(x)),
        }
    }

    /// Real (FMI 3.0: Float64) variables.
    pub(crate) fn set_reals(&mut self, vrs: &[u32], values: &[f64]) -> Call<()> {
        match self {
            MeInstance::V2(me, _) => check("fmi2SetReal", me.set_real(vrs, values)),
            MeInstance::V3(me, _) => check("fmi3SetFloat64", me.set_float64(vrs, values)),
        }
    }

    pub(crate) fn get_reals(&mut self, vrs: &[u32], values: &mut [f64]) -> Call<()> {
        match self {
            MeInstance::V2(me, _) => check("fmi2GetReal", me.get_real(vrs, values)),
            MeInstance::V3(me, _) => check("fmi3GetFloat64", me.get_float64(vrs, values)),
        }
    }

    pub(crate) fn get_derivatives(&mut self, dx: &mut [f64]) -> Call<()> {
        match self {
            MeInstance::V2(me, _) => check("fmi2GetDerivatives", me.get_derivatives(dx)),
            MeInstance::V3(me, _) => check(
                "fmi3GetContinuousStateDerivatives",
                me.get_continuous_state_derivatives(dx),
            ),
        }
    }

    /// The event indicators; `Discard` (the FMU cannot compute them here)
    /// is a failure too.
    pub(crate) fn get_event_indicators(&mut self, z: &mut [f64]) -> Call<()> {
        let (call, r) = match self {
            MeInstance::V2(me, _) => (
                "fmi2GetEventIndicators",
                me.get_event_indicators(z).map_err(|e| format!("{e:?}")),
            ),
            MeInstance::V3(me, _) => (
                "fmi3GetEventIndicators",
                me.get_event_indicators(z).map_err(|e| format!("{e:?}")),
            ),
        };
        match r {
            Ok(true) => Ok(()),
            Ok(false) => Err(Failed {
                call,
                status: "Discard".into(),
            }),
            Err(status) => Err(Failed { call, status }),
        }
    }

    pub(crate) fn enter_event_mode(&mut self) -> Call<()> {
        match self {
            MeInstance::V2(me, _) => check("fmi2EnterEventMode", me.enter_event_mode()),
            MeInstance::V3(me, _) => check("fmi3EnterEventMode", me.enter_event_mode()),
        }
    }

    /// One step of the event iteration: `fmi2NewDiscreteStates`,
    /// `fmi3UpdateDiscreteStates`.
    pub(crate) fn update_discrete_states(&mut self, flags: &mut EventFlags) -> Call<()> {
        match self {
            MeInstance::V2(me, _) => check("fmi2NewDiscreteStates", me.new_discrete_states(flags)),
            MeInstance::V3(me, _) => {
                check("fmi3UpdateDiscreteStates", me.update_discrete_states(flags))
            }
        }
    }

    /// The name of the update call, for the messages of the iteration.
    pub(crate) fn update_call(&self) -> &'static str {
        match self {
            MeInstance::V2(..) => "fmi2NewDiscreteStates",
            MeInstance::V3(..) => "fmi3UpdateDiscreteStates",
        }
    }

    pub(crate) fn enter_continuous_time_mode(&mut self) -> Call<()> {
        match self {
            MeInstance::V2(me, _) => check(
                "fmi2EnterContinuousTimeMode",
                me.enter_continuous_time_mode(),
            ),
            MeInstance::V3(me, _) => check(
                "fmi3EnterContinuousTimeMode",
                me.enter_continuous_time_mode(),
            ),
        }
    }
}

/// The binary of the Model Exchange interface, which may differ from the
/// Co-Simulation one that `fmu::load` checked.
pub(crate) fn check_me_binary(
    path_key: &KeyPath,
    unpacked: &Unpacked,
    model: &Model,
    model_identifier: &str,
) -> Result<(), crate::ConfigError> {
    let mut me_model = model.clone();
    me_model.model_identifier = model_identifier.to_string();
    unpacked.check_binary(path_key, &me_model)
}
