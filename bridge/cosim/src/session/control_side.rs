//! What a sync scheme needs from the control side
//! ([`super::graph::GraphSession`], for graph scenarios and the graphs
//! `[[loops]]` expand into), so that each scheme is written once.
//!
//! A scheme decides when the network runs and when boundaries are served
//! ([`Scheme`], one driver per scheme in `time_stepping.rs`,
//! `master_slave.rs` and `event_driven.rs`); the control side decides what
//! serving a boundary means ([`ControlSide`]). The drivers are generic over
//! the side, so the per-boundary path stays monomorphised.

use protocol::{NodeKinematics, SimTime};

use super::network_driver::{Event, NetworkDriver};
use crate::ledger::FateSink;
use crate::network::NetworkError;

/// When the packets produced while serving a boundary enter the network.
#[derive(Clone, Copy, Debug)]
pub struct Sends {
    /// Packets without a fixed schedule (a graph flow on new values or on
    /// arrival); packets on a schedule and answers have their own times.
    pub unscheduled: SimTime,
    /// The scheduled packets were announced to the network ahead
    /// (master-slave, answer rules): only their values are recorded now.
    pub announced: bool,
}

/// The control side of a co-simulation as the sync schemes see it; `O` is
/// the observer that sees every recorded boundary.
pub trait ControlSide<O> {
    type Sink: FateSink;
    type Error: From<NetworkError>;

    fn driver(&self) -> &NetworkDriver<Self::Sink>;
    fn driver_mut(&mut self) -> &mut NetworkDriver<Self::Sink>;

    /// The boundary the control side has reached.
    fn k(&self) -> u64;

    /// The run was cancelled at the time reached.
    fn interrupted(&self) -> Self::Error;

    // ----- serving boundaries -----

    /// Serves boundary `k` with every packet event up to it known: receive
    /// what takes effect, evaluate, send. A boundary already served (see
    /// [`ControlSide::serve_before_sync`]) is not served again.
    fn serve(&mut self, k: u64, sends: Sends) -> Result<(), Self::Error>;

    /// Records boundary `k` and integrates to the next boundary the side
    /// must serve, at most `limit`; returns that boundary.
    fn integrate(&mut self, k: u64, limit: u64, observer: &mut O) -> Result<u64, Self::Error>;

    /// Master-slave: what of boundary `k` is served before the network runs
    /// past it, so that answers computed there go at this sync point.
    fn serve_before_sync(&mut self, k: u64) -> Result<(), Self::Error>;

    /// Master-slave and answer rules: announces the scheduled packets of
    /// boundaries `[k0, k1)` not sent yet, ahead of the replay that fills
    /// in their values.
    fn announce_period(&mut self, k0: u64, k1: u64);

    /// Whether every packet the replay sends can be announced ahead, so a
    /// sync point never carries one (master-slave lookahead).
    fn announces_everything(&self) -> bool;

    /// Time-stepping: hands the network the period `[start, end)` and
    /// returns the first boundary of it left to serve. By default the
    /// network gets the period first, with the positions the side holds
    /// (a loop's plant state at `start`); a side whose positions come from
    /// evaluating `start` serves it first (see `graph/moving.rs`).
    fn begin_period(&mut self, start: u64, end: u64, _observer: &mut O) -> Result<u64, Self::Error>
    where
        Self: Sized,
    {
        let until = time_of::<O, Self>(self, end);
        begin_network_step::<O, Self>(self, until)?;
        Ok(start)
    }

    // ----- event-driven sync: a boundary in phases -----

    /// Forgets what the previous boundary received.
    fn begin_boundary(&mut self) {}

    /// Receives the packet events of boundary `k` known so far (phase U);
    /// event-driven sync calls it again as the network reaches `k h`.
    fn receive(&mut self, k: u64) -> Result<(), Self::Error>;

    /// Phase S: sends what is due at `k` on its own schedule. A side that
    /// evaluates a boundary in one pass evaluates and sends everything
    /// here; one that evaluates it in parts (a packet may act at its send
    /// instant) evaluates its first part.
    fn sample(&mut self, k: u64, sends: Sends) -> Result<(), Self::Error>;

    /// How many parts of a boundary follow [`Self::sample`]'s; the network
    /// settles at the boundary's instant before each (a loop's controllers,
    /// phase T, then its actuators, phase D). Default: none.
    fn later_parts(&mut self) -> usize {
        0
    }

    /// Receives what reaches part `part` (from 1) of boundary `k`,
    /// evaluates it and sends what it produced.
    fn serve_part(&mut self, _k: u64, _part: usize, _sends: Sends) -> Result<(), Self::Error> {
        Ok(())
    }

    /// Boundary `k` is done with: what is left of it is received.
    fn end_boundary(&mut self, _k: u64) -> Result<(), Self::Error> {
        Ok(())
    }

    /// Serves boundary `k` where nothing acts on its own schedule, only
    /// packet events.
    fn serve_events(&mut self, k: u64, sends: Sends) -> Result<(), Self::Error>;

    /// The first boundary after `k` where the side sends on its own.
    fn next_action(&self, k: u64) -> u64;

    /// Whether a packet may act at the boundary it was sent at (a zero
    /// delay, phase U2); then event-driven sync lets the network settle at
    /// the send instant before the boundary goes on.
    fn acts_at_send_boundary(&self) -> bool {
        false
    }

    /// Event-driven: hands the network the rules of the side's answers, if
    /// it can take them (see `event_rules.rs`); whether it did.
    fn install_answer_rules(
        &mut self,
        _scheme: crate::sync_scheme::EventDriven,
    ) -> Result<bool, Self::Error> {
        Ok(false)
    }

    // ----- what the network learns at a sync -----

    /// Positions and velocities of the nodes the control side moves.
    fn kinematics(&self) -> Vec<NodeKinematics>;

    /// Whether the control side moves any node.
    fn has_motions(&self) -> bool;

    /// Whether no moved node can be farther than `tolerance` from the
    /// network's straight-line extrapolation of it after `seconds`.
    fn drift_within(&self, seconds: f64, tolerance: f64) -> bool;

    /// Which reports to hold back until the side releases them (answers
    /// by rule the replay has not computed yet).
    fn holds(&self) -> impl Fn(&Event) -> bool + 'static {
        |_: &Event| false
    }
}

/// The driver of one sync scheme: its parameters, and when the network
/// runs and boundaries are served.
pub trait Scheme {
    /// Runs the co-simulation from the side's boundary to the end of the run.
    fn run<O, S: ControlSide<O>>(self, side: &mut S, observer: &mut O) -> Result<(), S::Error>;
}

/// Runs `scheme` (whichever of the three) over `side`.
pub fn run_scheme<O, S: ControlSide<O>>(
    scheme: crate::sync_scheme::SyncScheme,
    side: &mut S,
    observer: &mut O,
) -> Result<(), S::Error> {
    use crate::sync_scheme::SyncScheme;
    match scheme {
        SyncScheme::TimeStepping(s) => s.run(side, observer),
        SyncScheme::MasterSlave(s) => s.run(side, observer),
        SyncScheme::EventDriven(s) => s.run(side, observer),
    }
}

// ----- the network, for every scheme -----

pub fn time_of<O, S: ControlSide<O>>(side: &S, k: u64) -> SimTime {
    side.driver().clock.time_of(k)
}

pub fn check_cancel<O, S: ControlSide<O>>(side: &S) -> Result<(), S::Error> {
    if side.driver().cancelled() {
        return Err(side.interrupted());
    }
    Ok(())
}

/// One synchronous network step; its events join the queue.
pub fn network_step<O, S: ControlSide<O>>(
    side: &mut S,
    until: SimTime,
    stop_at_delivery: bool,
) -> Result<SimTime, S::Error> {
    check_cancel(side)?;
    let kinematics = side.kinematics();
    let holds = side.holds();
    Ok(side
        .driver_mut()
        .step(until, stop_at_delivery, kinematics, holds)?)
}

/// Hands the network a step to `until` to run while the control side works.
pub fn begin_network_step<O, S: ControlSide<O>>(
    side: &mut S,
    until: SimTime,
) -> Result<(), S::Error> {
    check_cancel(side)?;
    let kinematics = side.kinematics();
    Ok(side.driver_mut().begin_step(until, kinematics)?)
}

/// Waits for the step begun first; its events join the queue.
pub fn end_network_step<O, S: ControlSide<O>>(side: &mut S) -> Result<SimTime, S::Error> {
    let holds = side.holds();
    Ok(side.driver_mut().end_step(holds)?)
}

/// Serves and integrates boundaries `[start, end)`, every event up to
/// `end` known.
pub fn replay<O, S: ControlSide<O>>(
    side: &mut S,
    start: u64,
    end: u64,
    sends: Sends,
    observer: &mut O,
) -> Result<(), S::Error> {
    let mut k = start;
    while k < end {
        side.serve(k, sends)?;
        k = side.integrate(k, end, observer)?;
    }
    Ok(())
}

/// Whether a node moves in a network that depends on positions (then a
/// sync carries something the network needs).
pub fn moves_nodes<O, S: ControlSide<O>>(side: &S) -> bool {
    side.driver().network.uses_kinematics() && side.has_motions()
}
