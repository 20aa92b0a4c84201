//! Time-stepping sync (docs/design.md §4.1): the cheapest and least exact scheme.
//!
//! Both simulators run the same period side by side: the network gets the
//! period's step request first and runs in its own process while the control
//! side integrates the period with the inputs it had at the period's start.
//! Packets produced during a period enter the network at its end; packets the
//! network delivers during a period take effect at its end. Sends and
//! receives are quantised to sync boundaries, so errors grow with `T`.

use crate::ledger::FateSink;

use controlsim::Observer;

use super::{Session, SessionError};
use crate::sync_scheme::TimeStepping;

impl<W: FateSink> Session<W> {
    pub(super) fn run_time_stepping<O: Observer>(
        &mut self,
        TimeStepping { period }: TimeStepping,
        observer: &mut O,
    ) -> Result<(), SessionError> {
        let period = period.get();
        let mut start = self.system.k();
        while start < self.driver.clock.end_step {
            let end = (start + period).min(self.driver.clock.end_step);
            // Hand the network what the previous period produced, and let it
            // run while the control side does this period.
            self.begin_network_step(self.time_of(end))?;
            let mut k = start;
            while k < end {
                self.serve_boundary(k)?;
                let next = self.next_action_step(k).min(end);
                self.advance(next, observer)?;
                k = next;
            }
            self.end_network_step()?;
            start = end;
        }
        Ok(())
    }
}
