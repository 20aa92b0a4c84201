//! The control side as a graph of components with ports (issue 11).
//!
//! A [`Component`] has named input and output ports (vectors of `f64` of a
//! declared size, with optional names and units per element, see
//! [`PortSpec`]), optionally continuous states integrated by the run's
//! solver, guards located inside the step, and a [`Timing`]: every step,
//! periodic (a discrete component at its own period and offset, whole
//! multiples of the step), or on new inputs. Connections join an output
//! (or some of its elements, `servo.x[1]`, `pid.measurement[0..2]`) to an
//! input; every input element is driven exactly once. A user adds a kind by
//! implementing the one trait [`Component`]; every kind that exists in
//! controlsim is a component through the [`adapters`]: any [`Plant`](crate::Plant)
//! (so every [`PlantModel`](crate::PlantModel), built-in or custom), the
//! sensor, the actuator, a reference and any
//! [`ControllerConfig`](crate::ControllerConfig).
//!
//! # Lifecycle
//! 1. **Build.** Add components and connections to a [`GraphBuilder`];
//!    [`build`](GraphBuilder::build) checks names, ports, sizes, drivers and
//!    periods and derives the evaluation order ([`order`]); an algebraic loop
//!    is an error naming its members unless
//!    [`solve_algebraic_loops`](GraphBuilder::solve_algebraic_loops) was
//!    asked for ([`newton`]). Errors are [`ConfigError`](crate::ConfigError)s
//!    keyed `components[i]...` / `connections[j].from|to`.
//! 2. **Run.** [`Graph::run_to`] evaluates each boundary in order, shows it
//!    to a [`GraphObserver`] and integrates the step ([`engine`]).
//! 3. **Roll back.** [`Graph::snapshot`] / [`Graph::restore`], bit for bit,
//!    for every kind ([`snapshot`]).
//!
//! # Today's loop as a graph
//! A `[[loops]]` entry is the graph `plant -> sensor -> controller ->
//! actuator -> plant` (and a radar sensor's or CACC's extra inputs from
//! the predecessor's `motion` port). The plant's output is not direct
//! feedthrough (the [`PlantComponent`](adapters::PlantComponent) reads it with
//! the input held over the step that just ended), the sensor, controller
//! and actuator are, so the order is plant, sensor, controller, actuator:
//! the documented five phases of [`closed_loop`](crate::closed_loop) with
//! zero delay (sample, deliver, compute on the event or the tick, set the
//! actuator), then integrate. A periodic sensor, a time- or event-triggered
//! controller and an actuator that takes each new control give the same
//! calls in the same order, so the same bits (tested against
//! [`ClosedLoop`](crate::ClosedLoop)).
//!
//! # Flows between nodes
//! A connection between components on different nodes is not evaluated by
//! the graph: the bridge carries its values over the network and writes
//! what arrives into an [`Inlet`] that drives the destination in its place
//! ([`inlet`]). An [`Endpoint`] owns a graph with such flows and serves its
//! boundaries without any I/O: the driver hands in arrivals and losses and
//! takes the packets to send, numbered ([`endpoint`]).

pub mod adapters;
pub mod build;
pub mod component;
pub mod demand;
#[cfg(test)]
mod demand_tests;
pub mod endpoint;
#[cfg(test)]
mod endpoint_tests;
pub mod engine;
pub mod error;
pub mod inlet;
pub mod loop_view;
pub mod loops;
pub mod lower;
#[cfg(test)]
mod needs_tests;
pub mod newton;
pub mod order;
pub mod port;
pub mod record;
#[cfg(test)]
mod rollback_tests;
pub mod snapshot;
#[cfg(test)]
mod snapshot_kinds_tests;

pub use build::GraphBuilder;
pub use component::{
    Component, Ctx, Declaration, Inputs, Needs, Outputs, PortSpec, SavedState, StateMismatch,
    StateReader, Timing,
};
pub use demand::Unobserved;
pub use endpoint::{Announcement, Endpoint, FlowEnd, LossPolicy, SendAt, SendRule, Transmit};
pub use engine::{Graph, GraphObserver};
pub use error::GraphError;
pub use inlet::Inlet;
pub use loop_view::{ExpandedLoops, GraphLoops, LoopMap, ObserveGraph};
pub use lower::{Lowered, SampledLaw};
pub use newton::NewtonSettings;
pub use order::Block;
pub use port::{Elements, PortAddress};
pub use record::GraphRecorder;
pub use snapshot::GraphSnapshot;
