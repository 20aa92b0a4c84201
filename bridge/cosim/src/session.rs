//! The co-simulation proper: a control side (controlsim's graph, served by
//! [`graph::GraphSession`], for graph scenarios and for `[[loops]]`, which
//! expand into a graph) and a network stepped together under one of the
//! three synchronisation schemes of docs/design.md §4. This module holds
//! the session, the scheme drivers, the network driver (network, ledger,
//! queue of packet events) and the answer rules; it reads and writes no
//! file (the ledger hands fates to a [`crate::ledger::FateSink`]).
//!
//! # What happens at a step boundary `k`
//! Every scheme serves a loop's boundary in the same order, which is the
//! order of controlsim's standalone closed loop, so that a zero-delay
//! network reproduces it bit for bit (a graph serves it in one pass, or in
//! parts around packets delivered at their send instant, see
//! `graph.rs`):
//!
//! 1. **U1** packets to controllers that take effect at `k` and were sent
//!    before `k h`, in canonical order (arrival time, flow, number, state
//!    index); each accepted one sets the controller's input, and an
//!    event-triggered controller responds at once, evaluated at the packet's
//!    arrival time (which lies in the step that ends at `k`), not at `k h`;
//! 2. **S** samples due at `k`, sent at `k h` (local loops: straight to the
//!    controller);
//! 3. **U2** packets to controllers sent at `k h` itself (a zero delay);
//! 4. **T** time-triggered controllers due at `k` compute and send;
//! 5. **D** packets and losses at the actuators that take effect at `k`.
//!
//! A packet that arrives at `t` takes effect at `k_a = ceil(t / h)` under
//! master-slave and event-driven sync, and at the first sync boundary after
//! `t` under time-stepping. It never acts before it arrived. The boundary at
//! the end of the run is not served: a packet that would act there or later
//! is reported as in flight.
//!
//! # Packet numbers
//! A sample's packet number is its index in the sensor's schedule, and a
//! time-triggered control packet's is its index in the controller's; so
//! master-slave can announce them to the network before it replays the
//! period that produces their values. Responses of event-triggered
//! controllers are numbered in the order they are computed.
//!
//! # Scheme drivers
//! `time_stepping.rs`, `master_slave.rs` and `event_driven.rs` decide when
//! the network runs and when boundaries are served: they are generic over
//! `control_side::ControlSide`, which [`graph::GraphSession`] implements,
//! so the per-boundary path stays monomorphised.

pub(crate) mod control_side;
mod event_driven;
pub(crate) mod event_rules;
pub mod graph;
pub(crate) mod master_slave;
pub(crate) mod network_driver;
mod time_stepping;
