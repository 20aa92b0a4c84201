//! Time-stepping sync (docs/design.md §4.1): the cheapest and least exact scheme.
//!
//! Both simulators run the same period side by side: the network gets the
//! period's step request first and runs in its own process while the control
//! side integrates the period with the inputs it had at the period's start.
//! Packets produced during a period enter the network at its end; packets the
//! network delivers during a period take effect at its end. Sends and
//! receives are quantised to sync boundaries, so errors grow with `T`.

use super::control_side::{end_network_step, replay, ControlSide, Scheme, Sends};
use crate::sync_scheme::TimeStepping;

impl Scheme for TimeStepping {
    fn run<O, S: ControlSide<O>>(self, side: &mut S, observer: &mut O) -> Result<(), S::Error> {
        let period = self.period.get();
        let end_step = side.driver().clock.end_step;
        let mut start = side.k();
        while start < end_step {
            let end = (start + period).min(end_step);
            // Hand the network what the previous period produced, and let it
            // run while the control side does this period.
            let first = side.begin_period(start, end, observer)?;
            // What the period produces enters the network at its end.
            let sends = Sends {
                unscheduled: side.driver().clock.scheduled_send_time(start),
                announced: false,
            };
            replay(side, first, end, sends, observer)?;
            end_network_step(side)?;
            start = end;
        }
        Ok(())
    }
}
