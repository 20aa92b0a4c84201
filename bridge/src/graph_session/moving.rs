//! Nodes that graph components move ([`crate::graph_mobility`]): their
//! positions go with every network step, and under master-slave they
//! decide how far the network may run ahead, as for loops
//! (`session/master_slave.rs`, "Position tolerance"): a moving node in a
//! network that depends on positions keeps lookahead off, and with
//! `[sync] position_tolerance` the network runs windows of as many whole
//! periods as no moving node can leave the tolerance of the network's
//! straight line. Under time-stepping a period's first boundary is served
//! before the network is handed the period, so that the positions it gets
//! are those of the period's start, as a loop's plant state gives them.

use protocol::{NodeKinematics, SimTime};

#[cfg(test)]
mod tests;

use super::{GraphSession, GraphSessionError};
use crate::ledger::FateSink;
use crate::session::master_slave::{LOOKAHEAD, LOOKAHEAD_MAX_SENDS};
use crate::sync_scheme::SyncScheme;

impl<W: FateSink> GraphSession<W> {
    /// Positions and velocities of the moved nodes, from the outputs of the
    /// boundary evaluated last.
    pub(super) fn kinematics(&self) -> Vec<NodeKinematics> {
        self.motions
            .iter()
            .map(|m| m.kinematics(&self.graph))
            .collect()
    }

    /// Whether a node moves in a network that depends on positions (then a
    /// sync carries something the network needs).
    pub(super) fn moves_nodes(&self) -> bool {
        self.driver.network.uses_kinematics() && !self.motions.is_empty()
    }

    /// `[sync] position_tolerance` in metres under master-slave, else 0.
    pub(super) fn position_tolerance(&self) -> f64 {
        match self.driver.clock.scheme {
            SyncScheme::MasterSlave(m) if self.moves_nodes() => m.position_tolerance,
            _ => 0.0,
        }
    }

    /// Time-stepping: hands the network the period `[s, e)` and returns the
    /// first boundary of it left to serve. When nodes move, boundary `s` is
    /// served, recorded and integrated first: its evaluation gives the
    /// positions at `s` the network starts the period with (what a loop's
    /// plant state at `s` gives it), and what it sends is held back for the
    /// next period's step, where it would have gone had the step been handed
    /// over first. Otherwise the step is handed over before `s` is served.
    pub(super) fn begin_period<O: controlsim::graph::GraphObserver>(
        &mut self,
        s: u64,
        e: u64,
        observer: &mut O,
    ) -> Result<u64, GraphSessionError> {
        if !self.moves_nodes() {
            self.driver.begin_step(self.time_of(e), Vec::new())?;
            return Ok(s);
        }
        let earlier = std::mem::take(&mut self.driver.outgoing);
        self.serve(s, self.scheduled_send_time(s), false)?;
        let produced = std::mem::replace(&mut self.driver.outgoing, earlier);
        self.driver.begin_step(self.time_of(e), self.kinematics())?;
        self.driver.outgoing = produced;
        self.record_and_integrate(observer)?;
        Ok(s + 1)
    }

    /// Master-slave with a position tolerance (every flow on a fixed
    /// schedule): serve a window's first boundary, which evaluates the
    /// positions the network is given, announce as many whole periods as
    /// stay within the tolerance in the order syncing every period does,
    /// run the network to the window's end and replay the rest.
    pub(super) fn run_master_slave_tolerant<O: controlsim::graph::GraphObserver>(
        &mut self,
        period: u64,
        tolerance: f64,
        observer: &mut O,
    ) -> Result<(), GraphSessionError> {
        let max_periods = (LOOKAHEAD.0 / (period * self.driver.clock.step_ns)).max(1);
        let end_step = self.driver.clock.end_step;
        let mut s = self.graph.k();
        while s < end_step {
            self.serve(s, self.time_of(s), false)?;
            let periods = self.periods_within_tolerance(period, tolerance, max_periods);
            let mut e = (s + period).min(end_step);
            self.announce(s + 1, e);
            for _ in 1..periods {
                if e >= end_step || self.driver.outgoing.len() >= LOOKAHEAD_MAX_SENDS {
                    break;
                }
                let next = (e + period).min(end_step);
                self.announce(e, e + 1);
                self.announce(e + 1, next);
                e = next;
            }
            self.network_step(self.time_of(e), false)?;
            self.record_and_integrate(observer)?;
            for k in s + 1..e {
                self.serve(k, self.time_of(e), true)?;
                self.record_and_integrate(observer)?;
            }
            s = e;
        }
        Ok(())
    }

    /// The most whole periods (at least one, at most `max_periods`) after
    /// which no moved node can be farther than `tolerance` from the
    /// network's extrapolation of it from now.
    fn periods_within_tolerance(&self, period: u64, tolerance: f64, max_periods: u64) -> u64 {
        let period_s = SimTime(period * self.driver.clock.step_ns).as_secs_f64();
        let fits = |n: u64| {
            self.motions.iter().all(|m| {
                m.max_drift(&self.graph, n as f64 * period_s)
                    .is_some_and(|drift| drift <= tolerance)
            })
        };
        let mut n = 1;
        while n < max_periods && fits(n + 1) {
            n += 1;
        }
        n
    }
}
