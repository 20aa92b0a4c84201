//! Event-driven sync with event-triggered answers as rules
//! (docs/cosimulation.md, "Event-triggered answers as rules").
//!
//! The network does not care what a packet carries, only when it is sent
//! and how big it is. An event-triggered controller answers each accepted
//! measurement `computation_delay` after it arrived, so its answers can be
//! announced to the network as a rule ([`AnswerRule`]: "on delivery of a
//! packet of the uplink, send a packet of the downlink `d` later"). The
//! network then needs nothing from the control side while it runs, and
//! event-driven sync runs it ahead in windows, as master-slave lookahead
//! does, while the control side replays the windows with every event known.
//!
//! # One authority per decision
//! - Whether, when and under which number an answer enters the network is
//!   the rule's (the server's) decision. The rule carries the receiver's
//!   policies that decide it (`max_delay`, `drop_stale`; a multi-packet
//!   sample is answered per accepted packet, as today) and the bridge's
//!   order of one instant's deliveries, so it answers exactly the
//!   deliveries the bridge's receiver accepts, in the same order.
//! - The fate of every packet and the values are the bridge's: the ledger
//!   applies the policies as it always does, and the replay computes each
//!   answer's values and numbers them in the order it computes them.
//!
//! The two meet in the ledger: the network's reports of an answer are held
//! back ("parked") until the replay has computed that answer and announced
//! it; a report of an answer the replay never computes is a protocol
//! violation at the end of the run, never a silent difference.
//!
//! # What stays on per-event sync
//! A run falls back to stopping at every answer when the network cannot
//! carry rules (the builtin channel), when a node moves in a network that
//! depends on positions (positions come from the replay), when a packet
//! may arrive at its send instant, and when an event-triggered controller
//! with a networked downlink has no networked uplink (it answers local
//! samples). `[sync] rules = false` asks for the fallback.

use crate::ledger::FateSink;

use protocol::{AnswerRule, SimTime};

use super::network_driver::{Event, NetworkDriver};
use crate::network::NetworkError;
use crate::sync_scheme::EventDriven;

impl<W: FateSink> NetworkDriver<W> {
    /// When the run may hand its answers to the network as rules (see the
    /// module docs): the instant of the last boundary a delivery can be
    /// answered at, or `None` when the run must stop at every answer.
    /// `moves_nodes`: the control side moves a node.
    pub fn rules_allowed(&self, scheme: EventDriven, moves_nodes: bool) -> Option<SimTime> {
        if !scheme.rules || self.network.may_deliver_instantly() {
            return None;
        }
        if self.network.uses_kinematics() && moves_nodes {
            return None;
        }
        // A delivery acting at the end boundary is never served, so it is
        // never answered.
        Some(self.clock.time_of(self.clock.end_step.checked_sub(1)?))
    }

    /// The rule "each delivery of `trigger` the receiver accepts is
    /// answered by a packet of `answer` `delay` later", for answers of
    /// `width` values; the trigger's receive policies decide acceptance.
    pub fn answer_rule(
        &self,
        (trigger, answer): (u32, u32),
        delay: SimTime,
        width: usize,
        last_trigger: SimTime,
    ) -> AnswerRule {
        let uplink = &self.flows.get(trigger).expect("known flow").config;
        let downlink = &self.flows.get(answer).expect("known flow").config;
        AnswerRule {
            trigger_flow: trigger,
            answer_flow: answer,
            delay,
            size: downlink.size,
            state_count: self.state_count(answer, width),
            max_delay: uplink.max_delay.unwrap_or(SimTime::MAX),
            drop_stale: uplink.drop_stale,
            last_trigger,
        }
    }

    /// Records an answer the network sent by rule: the ledger learns of it
    /// and its values, then takes the reports of it that came in before.
    ///
    /// # Errors
    /// A parked report the ledger refuses.
    pub fn answer_by_rule(
        &mut self,
        flow: u32,
        number: u64,
        values: &[f64],
        time: SimTime,
    ) -> Result<(), NetworkError> {
        let size = self.flows.get(flow).expect("known flow").config.size;
        let count = self.state_count(flow, values.len());
        self.ledger.announce(flow, number, count, time, size);
        self.ledger.set_values(flow, number, values);
        self.release(flow, number)
    }
}

/// Which reports to hold back under rules: per flow, the first answer
/// number the replay has not computed yet (`None`: not an answer flow).
pub fn hold_unknown_answers(first_unknown: Vec<Option<u64>>) -> impl Fn(&Event) -> bool + 'static {
    move |event: &Event| {
        let (flow, number) = event.packet();
        first_unknown
            .get(flow as usize)
            .copied()
            .flatten()
            .is_some_and(|first| number >= first)
    }
}
