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
//!
//! A graph serves the same phases in its own way: it receives as the
//! network reaches `k h`, evaluates and sends in one pass (S), and moves
//! one step at a time. Over a network that may deliver a packet at its
//! send instant it evaluates the boundary in parts, and the network
//! settles at the instant before each part after the first.

use super::control_side::{network_step, time_of, ControlSide, Scheme, Sends};
use super::master_slave::{run_ahead, LOOKAHEAD};
use crate::sync_scheme::EventDriven;

impl Scheme for EventDriven {
    fn run<O, S: ControlSide<O>>(self, side: &mut S, observer: &mut O) -> Result<(), S::Error> {
        if side.install_answer_rules(self)? {
            // The network answers by rule: windows ahead, announced in
            // chunks (see `event_rules.rs`).
            let window = (LOOKAHEAD.0 / side.driver().clock.step_ns).max(1);
            return run_ahead(side, (window / 100).max(1), window, observer);
        }
        let settles = side.acts_at_send_boundary() && side.driver().network.may_deliver_instantly();
        let clock = side.driver().clock;
        let mut k = side.k();
        while k < clock.end_step {
            let t = time_of(side, k);
            // U1: everything that reaches the side by k h, as it comes, so
            // that an answer leaves at its arrival (plus the computation delay).
            side.begin_boundary();
            side.receive(k)?;
            while side.driver().network.reached() < t {
                network_step(side, t, true)?;
                side.receive(k)?;
            }
            let sends = Sends {
                unscheduled: t,
                announced: false,
            };
            // S; for a side evaluated in parts, each further part (a loop's
            // T, then D) after the network has delivered what was sent at
            // this instant (U2).
            side.sample(k, sends)?;
            for part in 1..=side.later_parts() {
                if settles {
                    settle(side, k)?;
                }
                side.serve_part(k, part, sends)?;
            }
            side.end_boundary(k)?;

            // To the next stop; packets on the way take effect at their own
            // boundaries (none of them answers: that would have stopped the network).
            let mut next = side.next_action(k).min(clock.end_step);
            if let Some(period) = clock.scheme.max_steps() {
                next = next.min(k + period);
            }
            let reached = network_step(side, time_of(side, next), true)?;
            let earliest = if side.acts_at_send_boundary() {
                k
            } else {
                k + 1
            };
            let target = clock.effect_step(reached).min(next).max(earliest);
            loop {
                k = side.integrate(k, target, observer)?;
                if k >= target {
                    break;
                }
                let sends = Sends {
                    unscheduled: time_of(side, k).max(side.driver().network.reached()),
                    announced: false,
                };
                side.serve_events(k, sends)?;
            }
        }
        // The end is not served (as in every scheme), but the network runs
        // to it so that every loss up to the end is known.
        let t = time_of(side, clock.end_step);
        while side.driver().network.reached() < t {
            network_step(side, t, false)?;
        }
        Ok(())
    }
}

/// Runs the network at `k h` until nothing new happens there, serving the
/// side as packets arrive (zero delays, zero computation delays).
fn settle<O, S: ControlSide<O>>(side: &mut S, k: u64) -> Result<(), S::Error> {
    loop {
        let before = side.driver().queued();
        let had_sends = !side.driver().outgoing.is_empty();
        network_step(side, time_of(side, k), true)?;
        let new_events = side.driver().queued() != before;
        side.receive(k)?;
        if !new_events && !had_sends && side.driver().outgoing.is_empty() {
            return Ok(());
        }
    }
}
