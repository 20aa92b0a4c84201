//! Master-slave, time-driven sync (DESIGN §4.2).
//!
//! For each period `[jT, (j+1)T)`: announce the period's time-triggered
//! packets (and responses computed in the previous period) to the network;
//! run the network to `(j+1)T`; then replay the control side over the period,
//! split at every boundary where a packet takes effect, in canonical order.
//! Receives are exact; an event-triggered controller's response waits for
//! the next sync point. A packet may take many periods to arrive: it is
//! queued until the period in which it takes effect.

use std::io::Write;

use controlsim::Observer;

use super::{Session, SessionError};

impl<W: Write> Session<W> {
    pub(super) fn run_master_slave<O: Observer>(&mut self, observer: &mut O) -> Result<(), SessionError> {
        let period = self.sync_steps.expect("resolve() requires a period for master-slave");
        let mut start = self.system.k();
        while start < self.end_step {
            let end = (start + period).min(self.end_step);
            self.announce_period(start, end);
            self.network_step(self.time_of(end), false)?;
            let mut k = start;
            while k < end {
                self.serve_boundary(k)?;
                let next = self
                    .next_action_step(k)
                    .min(self.next_event_step(k).unwrap_or(u64::MAX))
                    .min(end);
                self.advance(next, observer)?;
                k = next;
            }
            start = end;
        }
        Ok(())
    }
}
