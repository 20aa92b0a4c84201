//! Reports a network must never make: they break the stepping contract (see
//! the parent module) or name packets netloop never handed it. Unlike a
//! packet reported lost and then delivered, which real networks do (the
//! ledger's fate rule settles it), a violation is a bug in the server; the
//! run stops with an error naming it and keeps its partial results.

#[cfg(test)]
use protocol::DropEvent;
use protocol::{Delivery, SimTime, StepDone};

/// One broken promise, in the words of the error message that names it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    #[error("it reported packet {number} (state {state_index}) of flow {flow}, but there is no flow {flow} (flows are 0 to {last})", last = .flows.saturating_sub(1))]
    UnknownFlow {
        flow: u32,
        number: u64,
        state_index: u16,
        flows: usize,
    },
    #[error(
        "it reported packet {number} (state {state_index}) of flow {flow}, which was never sent"
    )]
    UnknownPacket {
        flow: u32,
        number: u64,
        state_index: u16,
    },
    #[error("it delivered packet {number} (state {state_index}) of flow {flow} at {at}, before it was sent at {sent}")]
    DeliveredBeforeSent {
        flow: u32,
        number: u64,
        state_index: u16,
        at: SimTime,
        sent: SimTime,
    },
    #[error("it reported packet {number} (state {state_index}) of flow {flow} lost at {at}, before it was sent at {sent}")]
    LostBeforeSent {
        flow: u32,
        number: u64,
        state_index: u16,
        at: SimTime,
        sent: SimTime,
    },
    #[error("it reported packet {number} (state {state_index}) of flow {flow} at {at}, after the time it said it reached, {reached}")]
    AfterReached {
        flow: u32,
        number: u64,
        state_index: u16,
        at: SimTime,
        reached: SimTime,
    },
    #[error("it reported packet {number} (state {state_index}) of flow {flow} at {at}, before the end of its previous step at {previous}")]
    BeforePreviousStep {
        flow: u32,
        number: u64,
        state_index: u16,
        at: SimTime,
        previous: SimTime,
    },
    #[error("it said it reached {reached}, but the step asked it to run until {until}")]
    WrongReached { reached: SimTime, until: SimTime },
    #[error("it said it reached {reached}, before the {previous} it had already reached")]
    Backwards { reached: SimTime, previous: SimTime },
    #[error("it stopped at {reached}, before the requested {until}, without a delivery there on a flow that stops the step")]
    StoppedWithoutDelivery { reached: SimTime, until: SimTime },
    #[error("it answered a step that was never asked for")]
    UnaskedStep,
}

/// What a step asked for: its `until` and `stop_at_delivery`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Asked {
    pub until: SimTime,
    pub stop_at_delivery: bool,
}

/// Checks a step's answer against the stepping contract: the time reached
/// (exactly `until`, or earlier only at a delivery on a flow in `stops`),
/// and every event within `[previous, reached]`. Which packets the events
/// name is the ledger's to check ([`crate::ledger::Ledger::report_delivery`]).
///
/// # Errors
/// The first broken promise.
pub fn check_step(
    done: &StepDone,
    previous: SimTime,
    asked: Option<Asked>,
    stops: &[bool],
) -> Result<(), Violation> {
    let Some(asked) = asked else {
        return Err(Violation::UnaskedStep);
    };
    let reached = done.reached;
    if reached < previous {
        return Err(Violation::Backwards { reached, previous });
    }
    if reached > asked.until || (reached < asked.until && !asked.stop_at_delivery) {
        return Err(Violation::WrongReached {
            reached,
            until: asked.until,
        });
    }
    let stops_here = |d: &Delivery| {
        d.received == reached && stops.get(d.flow as usize).copied().unwrap_or(false)
    };
    if reached < asked.until && !done.deliveries.iter().any(stops_here) {
        return Err(Violation::StoppedWithoutDelivery {
            reached,
            until: asked.until,
        });
    }
    let events = done
        .deliveries
        .iter()
        .map(|d| (d.flow, d.number, d.state_index, d.received));
    let drops = done
        .drops
        .iter()
        .map(|e| (e.flow, e.number, e.state_index, e.time));
    for (flow, number, state_index, at) in events.chain(drops) {
        if at > reached {
            return Err(Violation::AfterReached {
                flow,
                number,
                state_index,
                at,
                reached,
            });
        }
        if at < previous {
            return Err(Violation::BeforePreviousStep {
                flow,
                number,
                state_index,
                at,
                previous,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use protocol::DropReason;

    use super::*;

    const MS: u64 = 1_000_000;

    fn delivery(flow: u32, at_ms: u64) -> Delivery {
        Delivery {
            flow,
            number: 3,
            state_index: 0,
            state_count: 1,
            sent: SimTime(at_ms * MS - MS),
            received: SimTime(at_ms * MS),
            size: 8,
        }
    }

    fn done(reached_ms: u64, deliveries: Vec<Delivery>) -> StepDone {
        StepDone {
            reached: SimTime(reached_ms * MS),
            deliveries,
            drops: vec![],
        }
    }

    fn asked(until_ms: u64, stop_at_delivery: bool) -> Option<Asked> {
        Some(Asked {
            until: SimTime(until_ms * MS),
            stop_at_delivery,
        })
    }

    /// Flow 0 stops an event-driven step, flow 1 does not.
    const STOPS: [bool; 2] = [true, false];

    fn check(done: &StepDone, previous_ms: u64, asked: Option<Asked>) -> Result<(), Violation> {
        check_step(done, SimTime(previous_ms * MS), asked, &STOPS)
    }

    #[test]
    fn honest_answers_pass() {
        assert_eq!(
            check(
                &done(20, vec![delivery(1, 10), delivery(1, 20)]),
                10,
                asked(20, false)
            ),
            Ok(())
        );
        assert_eq!(
            check(&done(15, vec![delivery(0, 15)]), 10, asked(20, true)),
            Ok(())
        );
        // Events at the previous step's end may come one step late.
        assert_eq!(
            check(&done(10, vec![delivery(1, 10)]), 10, asked(10, true)),
            Ok(())
        );
    }

    #[test]
    fn a_wrong_time_reached_is_a_violation() {
        let short = check(&done(19, vec![]), 10, asked(20, false));
        assert_eq!(
            short,
            Err(Violation::WrongReached {
                reached: SimTime(19 * MS),
                until: SimTime(20 * MS)
            })
        );
        assert_eq!(
            short.unwrap_err().to_string(),
            "it said it reached 19ms, but the step asked it to run until 20ms"
        );
        assert!(matches!(
            check(&done(21, vec![]), 10, asked(20, true)),
            Err(Violation::WrongReached { .. })
        ));
        assert!(matches!(
            check(&done(5, vec![]), 10, asked(20, true)),
            Err(Violation::Backwards { .. })
        ));
        assert_eq!(
            check(&done(20, vec![]), 10, None),
            Err(Violation::UnaskedStep)
        );
    }

    #[test]
    fn an_early_stop_needs_a_delivery_on_a_stopping_flow_there() {
        for deliveries in [
            vec![],
            vec![delivery(1, 15)],
            vec![delivery(0, 14)],
            vec![delivery(9, 15)],
        ] {
            assert!(
                matches!(
                    check(&done(15, deliveries.clone()), 10, asked(20, true)),
                    Err(Violation::StoppedWithoutDelivery { .. })
                ),
                "{deliveries:?}"
            );
        }
    }

    #[test]
    fn events_outside_the_step_are_violations() {
        let late = check(&done(20, vec![delivery(1, 21)]), 10, asked(20, false));
        assert_eq!(
            late.unwrap_err().to_string(),
            "it reported packet 3 (state 0) of flow 1 at 21ms, after the time it said it reached, 20ms"
        );
        let early = check(&done(20, vec![delivery(1, 9)]), 10, asked(20, false));
        assert!(
            matches!(early, Err(Violation::BeforePreviousStep { .. })),
            "{early:?}"
        );
        let mut lost_late = done(20, vec![]);
        lost_late.drops.push(DropEvent {
            flow: 1,
            number: 3,
            state_index: 0,
            state_count: 1,
            sent: SimTime(10 * MS),
            time: SimTime(25 * MS),
            node: 0,
            reason: DropReason::Phy,
        });
        assert!(matches!(
            check(&lost_late, 10, asked(20, false)),
            Err(Violation::AfterReached { .. })
        ));
    }
}
