//! netloop's control-system simulator: the control side of docs/design.md §2–§3 as a
//! library that knows nothing about networks.
//!
//! It plays the part Simulink plays in the original co-simulation method:
//! plants integrated by a fixed-step solver, sensors, actuators, controllers
//! and references, organised as N control loops that advance in lock-step on
//! one integer-nanosecond step grid, with bit-exact snapshot and restore so
//! that a co-simulation master can replay network events at exact step
//! boundaries and roll controllers back.
//!
//! # Lifecycle
//! 1. **Configure.** Deserialise a [`SystemConfig`] from the scenario file
//!    (TOML; see [`config`] for the schema and conventions).
//! 2. **Build.** [`System::from_config(&config, seed)`](System::from_config)
//!    checks everything (step grid, shapes, ranges) and reports the first
//!    problem as a [`ConfigError`] naming its key. User-written plants go
//!    through [`System::from_specs`] with [`PlantModel::Custom`].
//! 3. **Drive.** At each step boundary the driver (the bridge, or
//!    [`closed_loop::ClosedLoop`]) delivers inputs, samples sensors and
//!    computes controls, then calls [`System::advance_to`] to integrate up to
//!    the next boundary where something happens, with an [`Observer`] such as
//!    a [`Recorder`] seeing every boundary. What observers read of the loops
//!    is a [`LoopView`] ([`view`]), which a [`System`] and the graph its loops
//!    expand into ([`graph::loops`]) both provide, with the same bits.
//! 4. **Roll back when needed.** [`System::snapshot`] / [`System::restore`]
//!    capture and put back all mutable state, bit for bit;
//!    [`System::rollback_response`] gives a continuous controller's one-step
//!    response without moving anything.
//!
//! # Practical considerations
//! - Time is integer nanoseconds everywhere ([`SimTime`], [`StepSize`], step
//!   index `u64`); seconds as `f64` only in right-hand sides and when printing.
//! - A value set at boundary `k` acts from `k` on; an arrival at time `t`
//!   belongs to boundary [`StepSize::step_at_or_after(t)`](StepSize::step_at_or_after).
//! - Determinism: the same config and seed give the same bits. Sensor noise
//!   is ChaCha8 per loop; ODE right-hand sides use the platform's `f64` maths
//!   (`sin`, `tanh`, ...), which is the same on every x86-64 Linux build.
//! - `advance_to` does not allocate; recording streams through a `csv`
//!   writer, so memory does not grow with the length of a run.

pub mod actuator;
mod advance;
pub mod blocks;
pub mod closed_loop;
pub mod config;
pub mod controller;
pub mod equations;
pub mod error;
pub mod event;
pub mod fmu;
pub mod graph;
pub mod input;
pub mod key_path;
pub mod limits;
mod matrix;
pub mod plant;
pub mod record;
pub mod reference;
pub mod sensor;
mod snapshot;
pub mod solver;
pub mod system;
pub mod time;
pub mod view;

pub use netloop_time::SimTime;

pub use actuator::ActuatorConfig;
pub use closed_loop::{ClosedLoop, ClosedLoopError, ClosedLoopSnapshot, Delays, Response};
pub use config::{LoopConfig, LoopRef, PerChannel, References, SystemConfig};
pub use controller::{ControllerConfig, ExtraInput, Trigger, TriggerKind};
pub use error::{ApiError, ConfigError, ShapeMismatch, StepError};
pub use event::{Event, EventKind};
pub use key_path::{KeyPath, Segment};
pub use plant::{Kinematics, Plant, PlantConfig, PlantModel, Signature, TimeDomain};
pub use record::{RecordError, Recorder};
pub use reference::{Signal, SignalConfig};
pub use sensor::{SensorConfig, SensorSource};
pub use snapshot::Snapshot;
pub use solver::{FixedRhs, SolverKind, Workspace};
pub use system::{Loop, LoopSpec, Observer, Silent, System};
pub use time::{Periodic, StepSize, TimeError};
pub use view::{LoopObserver, LoopView, ObserveSystem};
