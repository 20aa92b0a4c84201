//! Reports a network must never make: they break the stepping contract (see
//! the parent module) or name packets netloop never handed it. Unlike a
//! packet reported lost and then delivered, which real networks do (the
//! ledger's fate rule settles it), a violation is a bug in the server; the
//! run stops with an error naming it and keeps its partial results.

use protocol::{Delivery, SimTime, StepDone};

/// One broken promise, in the words of the error message that names it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    #[error("it reported packet {number} (state {state_index}) of flow {flow}, but there is no flow {flow} (flows are 0 to {last})", last = .flows.saturating_sub(1))]
    UnknownFlow { flow: u32, number: u64, state_index: u16, flows: usize },
    #[error("it reported packet {number} (state {state_index}) of flow {flow}, which was never sent")]
    UnknownPacket { flow: u32, number: u64, state_index: u16 },
    #[error("it delivered packet {number} (state {state_index}) of flow {flow} at {at}, before it was sent at {sent}")]
    DeliveredBeforeSent { flow: u32, number: u64, state_index: u16, at: SimTime, sent: SimTime },
    #[error("it reported packet {number} (state {state_index}) of flow {flow} lost at {at}, before it was sent at {sent}")]
    LostBeforeSent { flow: u32, number: u64, state_index: u16, at: SimTime, sent: SimTime },
    #[error("it reported packet {number} (state {state_index}) of flow {flow} at {at}, after the time it said it reached, {reached}")]
    AfterReached { flow: u32, number: u64, state_index: u16, at: SimTime, reached: SimTime },
    #[error("it reported packet {number} (state {state_index}) of flow {flow} at {at}, before the end of its previous step at {previous}")]
    BeforePreviousStep { flow: u32, number: u64, state_index: u16, at: SimTime, previous: SimTime },
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
pub fn check_step(done: &StepDone, previous: SimTime, asked: Option<Asked>, stops: &[bool]) -> Result<(), Violation> {
    let Some(asked) = asked else { return Err(Violation::UnaskedStep) };
    let reached = done.reached;
    if reached < previous {
        return Err(Violation::Backwards { reached, previous });
    }
    if reached > asked.until || (reached < asked.until && !asked.stop_at_delivery) {
        return Err(Violation::WrongReached { reached, until: asked.until });
    }
    let stops_here =
        |d: &Delivery| d.received == reached && stops.get(d.flow as usize).copied().unwrap_or(false);
    if reached < asked.until && !done.deliveries.iter().any(stops_here) {
        return Err(Violation::StoppedWithoutDelivery { reached, until: asked.until });
    }
    let events = done.deliveries.iter().map(|d| (d.flow, d.number, d.state_index, d.received));
    let drops = done.drops.iter().map(|e| (e.flow, e.number, e.state_index, e.time));
    for (flow, number, state_index, at) in events.chain(drops) {
        if at > reached {
            return Err(Violation::AfterReached { flow, number, state_index, at, reached });
        }
        if at < previous {
            return Err(Violation::BeforePreviousStep { flow, number, state_index, at, previous });
        }
    }
    Ok(())
}
