//! Global event-driven sync (docs/design.md §4.3).
//!
//! The co-simulation moves from event to event. At boundary `k` the network
//! is first brought to `k h`, serving each packet to a controller as it
//! arrives, so an event-triggered controller answers at once, evaluated at
//! the arrival time: its response enters the network at the arrival time
//! plus the computation delay. Then
//! the boundary's samples, ticks and actuator packets are served. The next
//! stop is the earliest of the next sample or tick, the end of the run, the
//! optional sync period, and the first packet delivered to an
//! event-triggered controller (the network stops itself there). Sends and
//! receives are both exact.

use crate::ledger::FateSink;

use controlsim::Observer;

use super::{Session, SessionError};

impl<W: FateSink> Session<W> {
    pub(super) fn run_event_driven<O: Observer>(
        &mut self,
        observer: &mut O,
    ) -> Result<(), SessionError> {
        let instant = self.driver.network.may_deliver_instantly();
        let mut k = self.system.k();
        loop {
            let t = self.time_of(k);
            if k >= self.driver.clock.end_step {
                // The end is not served (as in every scheme), but the network
                // runs to it so that every loss up to the end is known.
                while self.driver.network.reached() < t {
                    self.network_step(t, false)?;
                }
                return Ok(());
            }
            // U1: everything that reaches a controller by k h, as it comes.
            self.apply_controller_events(k, None)?;
            while self.driver.network.reached() < t {
                self.network_step(t, true)?;
                self.apply_controller_events(k, None)?;
            }
            // S, then U2 for a network that can deliver at the send instant.
            self.sample_due(k)?;
            if instant {
                self.settle(k)?;
            }
            // T, and its zero-delay packets.
            self.tick_due(k)?;
            if instant {
                self.settle(k)?;
            }
            // D.
            self.apply_actuator_events(k)?;

            // To the next stop; packets on the way take effect at their own
            // boundaries (none of them answers: that would have stopped the network).
            let mut next = self.next_action_step(k).min(self.driver.clock.end_step);
            if let Some(period) = self.driver.clock.scheme.max_steps() {
                next = next.min(k + period);
            }
            let reached = self.network_step(self.time_of(next), true)?;
            let target = self.driver.clock.effect_step(reached).min(next);
            while let Some(b) = self.driver.next_event_step(k).filter(|&b| b < target) {
                self.advance(b, observer)?;
                self.apply_controller_events(b, None)?;
                self.apply_actuator_events(b)?;
                k = b;
            }
            self.advance(target, observer)?;
            k = target;
        }
    }

    /// Runs the network at `k h` until nothing new happens there, serving
    /// controllers as packets arrive (zero delays, zero computation delays).
    fn settle(&mut self, k: u64) -> Result<(), super::SessionError> {
        loop {
            let before = self.driver.queued();
            let had_sends = !self.driver.outgoing.is_empty();
            self.network_step(self.time_of(k), true)?;
            let new_events = self.driver.queued() != before;
            self.apply_controller_events(k, None)?;
            if !new_events && !had_sends && self.driver.outgoing.is_empty() {
                return Ok(());
            }
        }
    }
}
