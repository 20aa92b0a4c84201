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

use crate::ledger::FateSink;

use controlsim::{Observer, Trigger};
use protocol::SimTime;

use super::{Session, SessionError};
use crate::sync_scheme::MasterSlave;

/// How far ahead of the replay the network may run, in simulated time.
pub const LOOKAHEAD: SimTime = SimTime::from_secs(1);

/// Most packets announced in one lookahead window, to keep steps well under
/// the frame limit.
pub(crate) const LOOKAHEAD_MAX_SENDS: usize = 100_000;

/// Windows handed to the network before their answers are read: with two,
/// the next request is already waiting when the network finishes one.
pub(crate) const LOOKAHEAD_IN_FLIGHT: usize = 2;

impl<W: FateSink> Session<W> {
    pub(super) fn run_master_slave<O: Observer>(
        &mut self,
        scheme: MasterSlave,
        observer: &mut O,
    ) -> Result<(), SessionError> {
        let period = scheme.period.get();
        if scheme.lookahead && self.nothing_needs_a_sync() {
            return self.run_master_slave_ahead(period, observer);
        }
        if scheme.lookahead && scheme.position_tolerance > 0.0 && !self.has_responders() {
            return self.run_master_slave_tolerant(period, scheme.position_tolerance, observer);
        }
        let mut start = self.system.k();
        while start < self.driver.clock.end_step {
            let end = (start + period).min(self.driver.clock.end_step);
            self.announce_period(start, end);
            self.network_step(self.time_of(end), false)?;
            self.replay(start, end, observer)?;
            if end < self.driver.clock.end_step {
                // The packets that arrived in the period's last step act at
                // `end`, but arrived in this period: their controllers answer
                // now, before the network runs past this sync point (U1 of
                // `end`; the rest of the boundary is served next period).
                self.apply_controller_events(end, Some(self.time_of(end)))?;
            }
            start = end;
        }
        Ok(())
    }

    /// Whether a sync point can ever carry something the network needs.
    fn nothing_needs_a_sync(&self) -> bool {
        let movers = self.driver.network.uses_kinematics() && !self.kinematics().is_empty();
        !self.has_responders() && !movers
    }

    /// Whether an event-triggered controller answers over the network.
    fn has_responders(&self) -> bool {
        self.system.loops().iter().enumerate().any(|(i, lp)| {
            lp.controller_trigger() == Trigger::Event && self.flows.downlink(i).is_some()
        })
    }

    /// Position tolerance: each sync hands the network the moving nodes'
    /// positions and a window of whole periods in which none of them can
    /// drift more than the tolerance from the line the network follows.
    fn run_master_slave_tolerant<O: Observer>(
        &mut self,
        period: u64,
        tolerance: f64,
        observer: &mut O,
    ) -> Result<(), SessionError> {
        let max_periods = (LOOKAHEAD.0 / (period * self.driver.clock.step_ns)).max(1);
        let mut start = self.system.k();
        while start < self.driver.clock.end_step {
            let periods = self.periods_within_tolerance(period, tolerance, max_periods);
            let end = self.announce_window(start, period, periods);
            self.network_step(self.time_of(end), false)?;
            self.replay(start, end, observer)?;
            if end < self.driver.clock.end_step {
                // As when syncing every period (no responders: a no-op for
                // the network, kept so the replay is the same).
                self.apply_controller_events(end, Some(self.time_of(end)))?;
            }
            start = end;
        }
        Ok(())
    }

    /// The most whole periods (at least one, at most `max_periods`) after
    /// which no moving node can be farther than the tolerance from the
    /// network's extrapolation of it from now.
    fn periods_within_tolerance(&self, period: u64, tolerance: f64, max_periods: u64) -> u64 {
        let period_s = SimTime(period * self.driver.clock.step_ns).as_secs_f64();
        let loops = self.system.loops();
        let fits = |n: u64| {
            self.motions.iter().all(|m| {
                m.max_drift(&loops[m.loop_index], n as f64 * period_s)
                    .is_some_and(|drift| drift <= tolerance)
            })
        };
        let mut n = 1;
        while n < max_periods && fits(n + 1) {
            n += 1;
        }
        n
    }

    /// Lookahead: two windows are always with the network, so it runs
    /// window `w + 1` (with `w + 2` already queued behind it) while the
    /// control side replays window `w`, and it never waits for the bridge.
    fn run_master_slave_ahead<O: Observer>(
        &mut self,
        period: u64,
        observer: &mut O,
    ) -> Result<(), SessionError> {
        let max_periods = (LOOKAHEAD.0 / (period * self.driver.clock.step_ns)).max(1);
        let mut in_flight = std::collections::VecDeque::with_capacity(LOOKAHEAD_IN_FLIGHT);
        let mut announced = self.system.k();
        while in_flight.len() < LOOKAHEAD_IN_FLIGHT && announced < self.driver.clock.end_step {
            let end = self.launch_window(announced, period, max_periods)?;
            in_flight.push_back((announced, end));
            announced = end;
        }
        while let Some((start, end)) = in_flight.pop_front() {
            self.end_network_step()?;
            if announced < self.driver.clock.end_step {
                let next = self.launch_window(announced, period, max_periods)?;
                in_flight.push_back((announced, next));
                announced = next;
            }
            self.replay(start, end, observer)?;
            debug_assert!(
                self.driver.outgoing.is_empty(),
                "a lookahead replay produced a packet to send"
            );
        }
        Ok(())
    }

    /// Announces a window from `start` and hands its step to the network;
    /// returns the window's end.
    fn launch_window(
        &mut self,
        start: u64,
        period: u64,
        max_periods: u64,
    ) -> Result<u64, SessionError> {
        let end = self.announce_window(start, period, max_periods);
        self.begin_network_step(self.time_of(end))?;
        Ok(end)
    }

    /// Announces whole periods from `start` until the window is full; returns its end.
    fn announce_window(&mut self, start: u64, period: u64, max_periods: u64) -> u64 {
        let mut end = start;
        for _ in 0..max_periods {
            if end >= self.driver.clock.end_step
                || self.driver.outgoing.len() >= LOOKAHEAD_MAX_SENDS
            {
                break;
            }
            let next = (end + period).min(self.driver.clock.end_step);
            self.announce_period(end, next);
            end = next;
        }
        end
    }

    /// Replays boundaries `[start, end)` with every event up to `end` known.
    fn replay<O: Observer>(
        &mut self,
        start: u64,
        end: u64,
        observer: &mut O,
    ) -> Result<(), SessionError> {
        let mut k = start;
        while k < end {
            self.serve_boundary(k)?;
            let next = self
                .next_action_step(k)
                .min(self.driver.next_event_step(k).unwrap_or(u64::MAX))
                .min(end);
            self.advance(next, observer)?;
            k = next;
        }
        Ok(())
    }
}
