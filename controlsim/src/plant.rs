//! Plants: the [`Plant`] trait, the scenario-file schema [`PlantConfig`],
//! and [`PlantModel`], which holds either a built-in plant or a user's own.
//!
//! A plant holds parameters only. Its state lives in the engine, which is what
//! makes snapshot/restore a copy of plain vectors and keeps the trait easy to
//! implement: every method takes `&self`.
//!
//! # The trait contract
//! - Continuous plants ([`TimeDomain::Continuous`]) give `derivative`; the
//!   engine integrates it with the scenario's solver, inputs held over a step.
//! - Discrete plants ([`TimeDomain::Discrete`] with period `Tp = m*h`) give
//!   `update`: `x[n+1] = f(x[n], u[n])`, where `x[n]` is the state at `n*Tp`
//!   and `u[n]` the actuator value applied at boundary `n*m` (sampled there and
//!   held for the period, as a ZOH would). The new state appears at boundary
//!   `(n+1)*m`.
//! - Hybrid plants declare guard functions (`guard_count`, `guards`) and a
//!   reset map (`reset`): the solver locates each guard crossing inside the
//!   step, applies `reset` at that instant and integrates the rest of the
//!   step (a bouncing ball's impact); when events accumulate (Zeno) it calls
//!   `settle`. See [`event`](crate::event) for the exact semantics. A plant
//!   without guards (the default) is integrated by the plain solver step.
//! - `output` is `y = g(t, x, u)` with the applied (saturated) input.
//! - Only the method that matches `time_domain` is called.
//!
//! Users with other plants implement [`Plant`] and pass it as
//! [`PlantModel::Custom`] to [`System::from_specs`](crate::System::from_specs).
//! The built-in plants are dispatched statically (an enum, not a trait
//! object), so their right-hand side is inlined into the solver stages.

pub mod bouncing_ball;
pub mod dc_servo;
pub mod inverted_pendulum;
pub mod linear;
pub mod mass_spring_damper;
pub mod vehicle;

use std::fmt;

use netloop_time::SimTime;
use serde::{Deserialize, Serialize};

pub use bouncing_ball::{BouncingBall, BouncingBallParams};
pub use dc_servo::{DcServo, DcServoParams};
pub use inverted_pendulum::{InvertedPendulum, InvertedPendulumParams};
pub use linear::{LinearPlant, StateSpaceConfig, TransferFunctionConfig};
pub use mass_spring_damper::{MassSpringDamper, MassSpringDamperParams};
pub use vehicle::{Vehicle, VehicleParams};

/// The units of a built-in plant kind's states and inputs, by name (an
/// output is a state and has its unit); empty for kinds whose signals the
/// user names (`state_space`, `transfer_function`, FMUs, equations). The
/// one table [`Plant::unit`] and the plots read.
pub fn units_of_kind(kind: &str) -> &'static [(&'static str, &'static str)] {
    match kind {
        "dc_servo" => &dc_servo::UNITS,
        "inverted_pendulum" => &inverted_pendulum::UNITS,
        "vehicle" => &vehicle::UNITS,
        "mass_spring_damper" => &mass_spring_damper::UNITS,
        "bouncing_ball" => &bouncing_ball::UNITS,
        _ => &[],
    }
}

/// `signal`'s unit in a table of [`units_of_kind`].
fn unit_in(table: &[(&str, &str)], signal: &str) -> Option<String> {
    table
        .iter()
        .find(|(name, _)| *name == signal)
        .map(|(_, unit)| unit.to_string())
}

use crate::equations::{EquationModel, EquationsConfig};
use crate::error::ConfigError;
use crate::key_path::KeyPath;
use crate::matrix::check_vector;

/// Continuous or discrete time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeDomain {
    Continuous,
    /// Updated every `period`, which must be a multiple of the step.
    Discrete {
        period: SimTime,
    },
}

/// Names of a plant's states, inputs and outputs; their lengths are the
/// dimensions. Used for validation and recorded column names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub states: Vec<String>,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
}

/// Position, velocity and acceleration along a line, for plants that move a
/// body (vehicles). Used by the radar sensor, by CACC feed-forward and by
/// node mobility in the network simulator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Kinematics {
    /// Front of the body, metres.
    pub position: f64,
    pub velocity: f64,
    pub acceleration: f64,
    /// Body length, metres: the gap to it is measured to `position - length`.
    pub length: f64,
}

/// A plant: dynamics with states, inputs and outputs. See the module docs for
/// the contract.
pub trait Plant: fmt::Debug + Send {
    /// Names (and so dimensions); called once when the system is built.
    fn signature(&self) -> Signature;

    /// Default: continuous.
    fn time_domain(&self) -> TimeDomain {
        TimeDomain::Continuous
    }

    /// Writes the initial state.
    fn initial_state(&self, x0: &mut [f64]);

    /// `dx = f(t, x, u)`, `t` in seconds. Called for continuous plants.
    /// The default (for discrete plants) writes zeros.
    fn derivative(&self, t: f64, x: &[f64], u: &[f64], dx: &mut [f64]) {
        let _ = (t, x, u);
        dx.fill(0.0);
    }

    /// `next = f(x, u)` for one period of a discrete plant, `t` the time of
    /// `x`. The default (for continuous plants) keeps the state.
    fn update(&self, t: f64, x: &[f64], u: &[f64], next: &mut [f64]) {
        let _ = (t, u);
        next.copy_from_slice(x);
    }

    /// `y = g(t, x, u)`.
    fn output(&self, t: f64, x: &[f64], u: &[f64], y: &mut [f64]);

    /// The unit of a state, input or output, by its name (`rad`, `V`),
    /// where the kind knows it: the graph's ports carry it (shown on
    /// `check --graph`'s edges) and plots label their axes with it.
    /// Default: none.
    fn unit(&self, signal: &str) -> Option<String> {
        let _ = signal;
        None
    }

    /// Number of guard functions of a continuous plant. Default: 0, no events
    /// (and no event handling cost in the solver).
    fn guard_count(&self) -> usize {
        0
    }

    /// Writes the `guard_count()` guard values `g_i(t, x, u)`: guard `i`
    /// fires when `g_i` falls to zero or below (see [`event`](crate::event)).
    /// Default: nothing.
    fn guards(&self, t: f64, x: &[f64], u: &[f64], g: &mut [f64]) {
        let _ = (t, x, u, g);
    }

    /// The reset map: changes `x` at the located instant `t` where guard
    /// `guard` fired. The solver integrates on from the new state. Default:
    /// none.
    fn reset(&self, t: f64, x: &mut [f64], u: &[f64], guard: usize) {
        let _ = (t, x, u, guard);
    }

    /// Guard `guard`'s events accumulate (Zeno) at `t`: puts `x` where they
    /// stop (a bouncing ball at rest on the floor) and returns `true`, or
    /// returns `false` (the default) to stop the run with
    /// [`StepError::Zeno`](crate::StepError::Zeno).
    fn settle(&self, t: f64, x: &mut [f64], u: &[f64], guard: usize) -> bool {
        let _ = (t, x, u, guard);
        false
    }

    /// The body's motion, for plants that have one. Default: none.
    fn kinematics(&self, x: &[f64]) -> Option<Kinematics> {
        let _ = x;
        None
    }

    /// A failure inside the plant that the methods above cannot return (an
    /// FMU call that returned an error): the engine stops at the step where
    /// it appears with [`StepError::Component`](crate::StepError::Component)
    /// carrying this message. Default: none.
    fn fault(&self) -> Option<String> {
        None
    }
}

/// A plant as written in a scenario file: `kind = "..."` plus its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlantConfig {
    /// Continuous `dx = Ax + Bu, y = Cx + Du`.
    StateSpace(StateSpaceConfig),
    /// Discrete `x[n+1] = Ax[n] + Bu[n], y = Cx + Du` with a `period`.
    DiscreteStateSpace(StateSpaceConfig),
    /// Continuous SISO `num(s)/den(s)`.
    TransferFunction(TransferFunctionConfig),
    /// Discrete SISO `num(z)/den(z)` with a `period`.
    DiscreteTransferFunction(TransferFunctionConfig),
    DcServo(DcServoParams),
    InvertedPendulum(InvertedPendulumParams),
    Vehicle(VehicleParams),
    MassSpringDamper(MassSpringDamperParams),
    BouncingBall(BouncingBallParams),
    /// A model in the text-equation language ([`crate::equations`]).
    Equations(EquationsConfig),
    /// An FMU (FMI 2.0 or 3.0, Co-Simulation or Model Exchange); see
    /// [`crate::fmu`].
    Fmu(crate::fmu::FmuPlantConfig),
}

/// A built plant. Built-in kinds are separate variants so the engine calls
/// them without dynamic dispatch; [`PlantModel::Custom`] takes any [`Plant`].
#[derive(Debug)]
pub enum PlantModel {
    Linear(LinearPlant),
    DcServo(DcServo),
    InvertedPendulum(InvertedPendulum),
    Vehicle(Vehicle),
    MassSpringDamper(MassSpringDamper),
    BouncingBall(BouncingBall),
    Equations(EquationModel),
    Custom(Box<dyn Plant>),
}

/// Runs `$body` with `$p` bound to the concrete plant, so generic code is
/// monomorphised per built-in kind.
macro_rules! with_plant {
    ($model:expr, $p:ident => $body:expr) => {
        match $model {
            $crate::plant::PlantModel::Linear($p) => $body,
            $crate::plant::PlantModel::DcServo($p) => $body,
            $crate::plant::PlantModel::InvertedPendulum($p) => $body,
            $crate::plant::PlantModel::Vehicle($p) => $body,
            $crate::plant::PlantModel::MassSpringDamper($p) => $body,
            $crate::plant::PlantModel::BouncingBall($p) => $body,
            $crate::plant::PlantModel::Equations($p) => $body,
            $crate::plant::PlantModel::Custom(boxed) => {
                let $p = &**boxed;
                $body
            }
        }
    };
}
pub(crate) use with_plant;

impl PlantModel {
    /// Builds a plant from its config; `key` prefixes error keys. An FMU
    /// plant needs its `step` here (see [`from_config_at`](Self::from_config_at)).
    ///
    /// # Errors
    /// [`ConfigError`] naming the first invalid key.
    pub fn from_config(key: &KeyPath, config: &PlantConfig) -> Result<Self, ConfigError> {
        match config {
            PlantConfig::Fmu(c) => match c.step {
                Some(step) => Self::from_config_at(key, config, step),
                None => Err(ConfigError::invalid(
                    key.child("step"),
                    "an FMU plant built outside a system needs its communication step",
                )),
            },
            _ => Self::from_config_at(key, config, SimTime::ZERO),
        }
    }

    /// [`from_config`](Self::from_config) for a system whose step is
    /// `run_step`: an FMU plant without its own `step` steps at `run_step`,
    /// and its `step` must be a multiple of it.
    ///
    /// # Errors
    /// [`ConfigError`] naming the first invalid key.
    pub fn from_config_at(
        key: &KeyPath,
        config: &PlantConfig,
        run_step: SimTime,
    ) -> Result<Self, ConfigError> {
        Ok(match config {
            PlantConfig::StateSpace(c) => {
                PlantModel::Linear(LinearPlant::state_space(key, c, false)?)
            }
            PlantConfig::DiscreteStateSpace(c) => {
                PlantModel::Linear(LinearPlant::state_space(key, c, true)?)
            }
            PlantConfig::TransferFunction(c) => {
                PlantModel::Linear(LinearPlant::transfer_function(key, c, false)?)
            }
            PlantConfig::DiscreteTransferFunction(c) => {
                PlantModel::Linear(LinearPlant::transfer_function(key, c, true)?)
            }
            PlantConfig::DcServo(p) => PlantModel::DcServo(DcServo::new(key, p)?),
            PlantConfig::InvertedPendulum(p) => {
                PlantModel::InvertedPendulum(InvertedPendulum::new(key, p)?)
            }
            PlantConfig::Vehicle(p) => PlantModel::Vehicle(Vehicle::new(key, p)?),
            PlantConfig::MassSpringDamper(p) => {
                PlantModel::MassSpringDamper(MassSpringDamper::new(key, p)?)
            }
            PlantConfig::BouncingBall(p) => PlantModel::BouncingBall(BouncingBall::new(key, p)?),
            PlantConfig::Equations(c) => PlantModel::Equations(EquationModel::from_config(key, c)?),
            PlantConfig::Fmu(c) => PlantModel::Custom(crate::fmu::plant::build(key, c, run_step)?),
        })
    }

    /// The plant as a trait object, for cold paths.
    pub fn as_plant(&self) -> &dyn Plant {
        with_plant!(self, p => p)
    }

    /// The linear model `(A, B, C, D)` and, for a discrete plant, its period,
    /// if this is a linear plant (used as an observer's default model).
    pub(crate) fn linear(&self) -> Option<(&linear::LinearSystem, Option<SimTime>)> {
        match self {
            PlantModel::Linear(p) => Some((p.system(), p.period())),
            _ => None,
        }
    }
}

/// Initial state and output selection shared by the nonlinear library plants,
/// whose outputs are chosen states (`outputs = ["theta", "omega"]`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Selection {
    pub(crate) x0: Vec<f64>,
    pub(crate) outputs: Vec<usize>,
}

impl Selection {
    /// # Errors
    /// [`ConfigError`] for an `x0` of the wrong length or not finite, an
    /// unknown or empty output list.
    pub(crate) fn new(
        key: &KeyPath,
        states: &[&str],
        x0: &Option<Vec<f64>>,
        default_x0: &[f64],
        outputs: &Option<Vec<String>>,
        default_outputs: &[&str],
    ) -> Result<Self, ConfigError> {
        let x0 = match x0 {
            Some(v) => {
                check_vector(&key.child("x0"), v, states.len())?;
                v.clone()
            }
            None => default_x0.to_vec(),
        };
        let names: Vec<String> = match outputs {
            Some(v) => v.clone(),
            None => default_outputs.iter().map(|s| s.to_string()).collect(),
        };
        if names.is_empty() {
            return Err(ConfigError::invalid(
                key.child("outputs"),
                "needs at least one output",
            ));
        }
        let outputs = names
            .iter()
            .map(|n| {
                states
                    .iter()
                    .position(|s| s == n)
                    .ok_or_else(|| ConfigError::UnknownName {
                        key: key.child("outputs"),
                        name: n.clone(),
                        known: states.iter().map(|s| s.to_string()).collect(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Selection { x0, outputs })
    }

    pub(crate) fn signature(&self, states: &[&str], inputs: &[&str]) -> Signature {
        Signature {
            states: states.iter().map(|s| s.to_string()).collect(),
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            outputs: self
                .outputs
                .iter()
                .map(|&i| states[i].to_string())
                .collect(),
        }
    }

    #[inline]
    pub(crate) fn output(&self, x: &[f64], y: &mut [f64]) {
        for (yi, &i) in y.iter_mut().zip(&self.outputs) {
            *yi = x[i];
        }
    }
}
