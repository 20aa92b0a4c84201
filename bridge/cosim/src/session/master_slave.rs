//! Master-slave, time-driven sync (docs/design.md §4.2).
//!
//! For each period `[jT, (j+1)T)`: announce the period's time-triggered
//! packets (and responses computed in the previous period) to the network;
//! run the network to `(j+1)T`; then replay the control side over the period,
//! split at every boundary where a packet takes effect, in canonical order.
//! Receives are exact. An event-triggered controller is evaluated at the
//! arrival time of the packet it answers, and its answer enters the network
//! at the first sync point at or after arrival + `computation_delay`. A
//! packet that arrives in the last step of a period acts at the period's end
//! boundary; its controller input is set and its answer computed at the end
//! of this period's replay (the first phase, U1, of that boundary), so that
//! the answer can still go at this period's sync point. A packet may take
//! many periods to arrive: it is queued until the period in which it takes
//! effect.
//!
//! # Lookahead
//! A sync point exists so that the network can learn what the replay
//! produced: responses of event-triggered controllers, and new node
//! positions. When no networked controller is event-triggered and no node
//! moves in a network that depends on positions, the replay produces
//! nothing the network needs: every packet was announced ahead, and the
//! network's events are the same whether it runs one period or many in a
//! step. The bridge then lets the network run ahead in windows of up to
//! [`LOOKAHEAD`], keeping two windows' steps with the network so that the
//! two simulators work in parallel and neither waits for the other. The results are
//! bit-identical to syncing every period (a test holds them to it); only the
//! sync count and the wall time change. `[sync] lookahead = false` turns it
//! off.
//!
//! # Position tolerance
//! A moving node is what keeps lookahead off in a network where positions
//! matter: the network moves the node in a straight line from its last sync
//! and the plant leaves that line. With `[sync] position_tolerance` > 0 (and
//! lookahead on, and no event-triggered controller answering over the
//! network) the master lets the network run a window of as many periods as
//! it can be sure the line stays within the tolerance of every moving plant
//! ([`crate::mobility::NodeMotion::max_drift`]): ns-3 cannot go back, so the
//! guarantee comes from what bounds the plants' speed and acceleration,
//! before the window runs ([`crate::mobility`]: the model with its input
//! limits, or declared bounds); a tolerance for a moving plant with no such
//! bound is refused when the scenario is checked. Each window is
//! one sync and is replayed as lookahead replays its windows; only the
//! positions the network used differ from syncing every period.

use std::collections::VecDeque;

use protocol::SimTime;

use super::control_side::{
    begin_network_step, end_network_step, moves_nodes, network_step, replay, time_of, ControlSide,
    Scheme, Sends,
};
use super::network_driver::Event;
use crate::network::{NetworkError, Violation};
use crate::sync_scheme::MasterSlave;

/// How far ahead of the replay the network may run, in simulated time.
pub const LOOKAHEAD: SimTime = SimTime::from_secs(1);

/// Most packets announced in one lookahead window, to keep steps well under
/// the frame limit.
pub(crate) const LOOKAHEAD_MAX_SENDS: usize = 100_000;

/// Windows handed to the network before their answers are read: with two,
/// the next request is already waiting when the network finishes one.
pub(crate) const LOOKAHEAD_IN_FLIGHT: usize = 2;

impl Scheme for MasterSlave {
    fn run<O, S: ControlSide<O>>(self, side: &mut S, observer: &mut O) -> Result<(), S::Error> {
        let period = self.period.get();
        let max_periods = (LOOKAHEAD.0 / (period * side.driver().clock.step_ns)).max(1);
        if self.lookahead && side.announces_everything() {
            if !moves_nodes(side) {
                return run_ahead(side, period, period * max_periods, observer);
            }
            if self.position_tolerance > 0.0 {
                return run_tolerant(side, period, self.position_tolerance, observer);
            }
        }
        let end_step = side.driver().clock.end_step;
        let mut start = side.k();
        while start < end_step {
            let end = (start + period).min(end_step);
            // What acts at `start` but arrived in the previous period is
            // answered before the network runs past this sync point.
            side.serve_before_sync(start)?;
            side.announce_period(start, end);
            network_step(side, time_of(side, end), false)?;
            replay(side, start, end, replay_sends(side, end), observer)?;
            start = end;
        }
        Ok(())
    }
}

/// A master-slave replay's sends: the scheduled ones were announced, the
/// others go at the sync point that ends the window.
fn replay_sends<O, S: ControlSide<O>>(side: &S, end: u64) -> Sends {
    Sends {
        unscheduled: time_of(side, end),
        announced: true,
    }
}

/// Position tolerance: each sync hands the network the moving nodes'
/// positions and a window of whole periods in which none of them can drift
/// more than the tolerance from the line the network follows.
fn run_tolerant<O, S: ControlSide<O>>(
    side: &mut S,
    period: u64,
    tolerance: f64,
    observer: &mut O,
) -> Result<(), S::Error> {
    let max_periods = (LOOKAHEAD.0 / (period * side.driver().clock.step_ns)).max(1);
    let end_step = side.driver().clock.end_step;
    let mut start = side.k();
    while start < end_step {
        // As when syncing every period; it also evaluates the positions the
        // network is given.
        side.serve_before_sync(start)?;
        let periods = periods_within_tolerance(side, period, tolerance, max_periods);
        let end = announce_window(side, start, period, period * periods);
        network_step(side, time_of(side, end), false)?;
        replay(side, start, end, replay_sends(side, end), observer)?;
        start = end;
    }
    Ok(())
}

/// The most whole periods (at least one, at most `max_periods`) after which
/// no moving node can be farther than the tolerance from the network's
/// extrapolation of it from now.
fn periods_within_tolerance<O, S: ControlSide<O>>(
    side: &S,
    period: u64,
    tolerance: f64,
    max_periods: u64,
) -> u64 {
    let period_s = SimTime(period * side.driver().clock.step_ns).as_secs_f64();
    let mut n = 1;
    while n < max_periods && side.drift_within((n + 1) as f64 * period_s, tolerance) {
        n += 1;
    }
    n
}

/// Windows ahead (master-slave lookahead, answer rules): two windows of up
/// to `window` steps are always with the network, so it runs window `w + 1`
/// (with `w + 2` already queued behind it) while the control side replays
/// window `w`, and it never waits for the bridge. Each window is announced
/// in chunks of `chunk` steps (a master-slave period).
pub(super) fn run_ahead<O, S: ControlSide<O>>(
    side: &mut S,
    chunk: u64,
    window: u64,
    observer: &mut O,
) -> Result<(), S::Error> {
    let end_step = side.driver().clock.end_step;
    let mut in_flight = VecDeque::with_capacity(LOOKAHEAD_IN_FLIGHT);
    let mut announced = side.k();
    while in_flight.len() < LOOKAHEAD_IN_FLIGHT && announced < end_step {
        let end = launch_window(side, announced, chunk, window)?;
        in_flight.push_back((announced, end));
        announced = end;
    }
    while let Some((start, end)) = in_flight.pop_front() {
        end_network_step(side)?;
        if announced < end_step {
            let next = launch_window(side, announced, chunk, window)?;
            in_flight.push_back((announced, next));
            announced = next;
        }
        replay(side, start, end, replay_sends(side, end), observer)?;
        debug_assert!(
            side.driver().outgoing.is_empty(),
            "a replay ahead of the network produced a packet to send"
        );
    }
    check_nothing_parked(side)
}

/// Announces a window from `start` and hands its step to the network;
/// returns the window's end.
fn launch_window<O, S: ControlSide<O>>(
    side: &mut S,
    start: u64,
    chunk: u64,
    window: u64,
) -> Result<u64, S::Error> {
    let end = announce_window(side, start, chunk, window);
    begin_network_step(side, time_of(side, end))?;
    Ok(end)
}

/// Announces chunks from `start` until the window (at most `window` steps,
/// fewer when it would hold too many packets) is full; returns its end.
fn announce_window<O, S: ControlSide<O>>(side: &mut S, start: u64, chunk: u64, window: u64) -> u64 {
    let limit = (start + window).min(side.driver().clock.end_step);
    let mut end = start;
    while end < limit && side.driver().outgoing.len() < LOOKAHEAD_MAX_SENDS {
        let next = (end + chunk).min(limit);
        side.announce_period(end, next);
        end = next;
    }
    end
}

/// At the end of the run every report the side held back (an answer by
/// rule) must have met the answer the replay computed.
fn check_nothing_parked<O, S: ControlSide<O>>(side: &S) -> Result<(), S::Error> {
    let Some(event) = side.driver().first_parked() else {
        return Ok(());
    };
    let (flow, number, state_index) = match event {
        Event::Delivery(d) => (d.flow, d.number, d.state_index),
        Event::Drop(d) => (d.flow, d.number, d.state_index),
    };
    Err(NetworkError::Violation {
        reached: side.driver().network.reached(),
        violation: Violation::UnknownPacket {
            flow,
            number,
            state_index,
        },
    }
    .into())
}
