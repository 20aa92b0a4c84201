//! The network seen by a co-simulation: something that carries packets
//! between nodes and can be stepped through time (docs/design.md §6.1).
//!
//! Two backends share one contract, expressed in the wire protocol's own
//! message types so that they cannot drift apart:
//! - [`Ns3Network`]: the real ns-3 server over TCP;
//! - [`BuiltinNetwork`]: an in-process, seeded statistical channel, the
//!   default where ns-3 is not installed, the fast path for large sweeps, and
//!   the oracle for ns-3 tests.
//!
//! # The stepping contract
//! - `step(until, stop_at_delivery, sends, kinematics)` runs from the time
//!   reached so far to `until`. `until` earlier than the time reached, or a
//!   send earlier than it, is an error.
//! - With `stop_at_delivery`, the step ends at the first delivery on a flow
//!   with `stop_on_delivery` at or before `until`; every event at that same
//!   instant is reported with it.
//! - Every delivery and drop at or before the time reached is reported,
//!   deliveries in time order. An event exactly at `until` may be reported
//!   by the next step instead (ns-3 runs events scheduled after its `Stop`
//!   at the same instant in the next run); the sync schemes apply an event
//!   by its time, not by the step that reported it, so this is harmless.
//! - A step reaches exactly `until`, or earlier only when it stopped at a
//!   delivery on a `stop_on_delivery` flow; it reports no event after the
//!   time reached nor before the previous step's end, and only packets of
//!   known flows that were sent, not before their send. Anything else is a
//!   [`Violation`], fatal for the run. A packet reported twice (lost, then
//!   delivered by a copy still on the air; delivered twice) is not: it is
//!   real network behaviour, and the ledger's fate rule settles it.

mod builtin;
mod ns3_backend;
mod violation;

pub use builtin::{
    parse_empirical_samples, BuiltinConfig, BuiltinError, BuiltinNetwork, DelayModel, DelayReach,
    LossModel, ReadFile, MAX_DELAY_SAMPLES,
};
pub use ns3_backend::Ns3Network;
pub use violation::{check_step, Asked, Violation};

use protocol::{AnswerRule, Configured, FlowSpec, SimTime, Step, StepDone, Summary};

use netloop_ns3_client::Ns3Error;

/// Why the network could not do what was asked. Fatal for the run.
#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    #[error(transparent)]
    Ns3(#[from] Ns3Error),
    #[error(transparent)]
    Builtin(#[from] BuiltinError),
    /// The network broke its contract; `reached` is the last time it had
    /// truthfully reached.
    #[error("the network broke the protocol at simulated time {reached}: {violation}")]
    Violation {
        reached: SimTime,
        violation: Violation,
    },
}

impl NetworkError {
    /// Simulated time the network had reached, when known.
    pub fn reached(&self) -> Option<SimTime> {
        match self {
            NetworkError::Ns3(e) => e.reached(),
            NetworkError::Builtin(e) => Some(e.reached()),
            NetworkError::Violation { reached, .. } => Some(*reached),
        }
    }
}

/// A network backend. See the module docs for the stepping contract.
pub trait Network {
    /// Installs the flows. Called once, before the first step.
    ///
    /// # Errors
    /// Flows that do not fit the network (unknown node, duplicate port).
    fn configure(&mut self, flows: &[FlowSpec]) -> Result<Configured, NetworkError>;

    /// Installs event-triggered answer rules ([`AnswerRule`]), once, after
    /// `configure` and before the first step; returns whether the backend
    /// carries them out. One that does not (the default) leaves event-driven
    /// sync stopping at every answer.
    ///
    /// # Errors
    /// Rules the backend rejects.
    fn install_rules(&mut self, rules: &[AnswerRule]) -> Result<bool, NetworkError> {
        let _ = rules;
        Ok(false)
    }

    /// Starts a step; [`Network::end_step`] collects its answer. Time-stepping
    /// and master-slave lookahead run the control side in between, so the two
    /// simulators overlap. Several steps may be begun before their answers are
    /// collected; answers come back in order.
    ///
    /// # Errors
    /// An invalid step or a failed backend.
    fn begin_step(&mut self, step: Step) -> Result<(), NetworkError>;

    /// # Errors
    /// A failed backend, naming the simulated time reached.
    fn end_step(&mut self) -> Result<StepDone, NetworkError>;

    /// # Errors
    /// As [`Network::begin_step`] and [`Network::end_step`].
    fn step(&mut self, step: Step) -> Result<StepDone, NetworkError> {
        self.begin_step(step)?;
        self.end_step()
    }

    /// Ends the run and returns the backend's counters.
    ///
    /// # Errors
    /// A failed backend.
    fn finish(&mut self) -> Result<Summary, NetworkError>;

    /// Simulated time reached.
    fn reached(&self) -> SimTime;

    /// Whether a packet can arrive at the very instant it is sent. Event-driven
    /// sync then has to run the network again at that instant before it moves
    /// on; over ns-3 a transmission always takes time, so it never does.
    fn may_deliver_instantly(&self) -> bool;

    /// Whether node positions change what the network does (radio
    /// propagation); a point-to-point link or a statistical channel ignores
    /// them, so syncing to update them buys nothing.
    fn uses_kinematics(&self) -> bool;

    /// Which software simulated the network, for `summary.json`.
    fn software(&self) -> String;
}
