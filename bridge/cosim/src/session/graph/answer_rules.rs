//! Event-triggered answers as rules for a graph (see netloop-cosim's
//! `session/event_rules.rs` for the mechanism and why it gives the bytes of
//! stopping at every answer): a flow whose packets all answer the accepted
//! packets of one other flow, one for one, is handed to the network as a
//! rule, and event-driven sync runs the network ahead in windows.
//!
//! Which flows those are is the endpoint's to say for a graph scenario
//! (`arrival` flows from the component that answers the trigger,
//! [`controlsim::graph::Endpoint::answer_triggers`]) and the loops' for a
//! `[[loops]]` run (an event-triggered controller's downlink answers its
//! uplink, bridge's `graph_flows::LoopStreams::answer_triggers`).

use crate::session::event_rules::hold_unknown_answers;
use crate::sync_scheme::EventDriven;
use protocol::AnswerRule;

use super::{GraphSession, GraphSessionError};
use crate::ledger::FateSink;
use crate::session::network_driver::Event;

impl<W: FateSink> GraphSession<W> {
    /// The rules of this run's answers, or `None` when the run must stop
    /// at every answer instead: some answer cannot be a rule, or some flow
    /// sends neither on a schedule nor by rule (the network could not run
    /// ahead of it).
    fn answer_rules(&self, scheme: EventDriven) -> Option<Vec<AnswerRule>> {
        let triggers = self.answer_triggers.as_ref()?;
        let last_trigger = self
            .driver
            .rules_allowed(scheme, !self.kinematics().is_empty())?;
        let flows = self.endpoint.flows();
        let ahead = |(f, t): (&controlsim::graph::FlowEnd, &Option<usize>)| {
            f.schedule().is_some() || t.is_some()
        };
        if !flows.iter().zip(triggers).all(ahead) {
            return None;
        }
        Some(
            triggers
                .iter()
                .enumerate()
                .filter_map(|(answer, trigger)| {
                    let trigger = (*trigger)?;
                    Some(self.driver.answer_rule(
                        (trigger as u32, answer as u32),
                        self.computation_delay,
                        flows[answer].width(),
                        last_trigger,
                    ))
                })
                .collect(),
        )
    }

    /// Hands the answer rules to the network; whether it took them.
    pub(super) fn install_answer_rules(
        &mut self,
        scheme: EventDriven,
    ) -> Result<bool, GraphSessionError> {
        let Some(rules) = self.answer_rules(scheme) else {
            return Ok(false);
        };
        if !self.driver.network.install_rules(&rules)? {
            return Ok(false);
        }
        self.rules_active = true;
        Ok(true)
    }

    /// Whether the network sends `flow`'s answers by rule.
    pub(super) fn answers_by_rule(&self, flow: usize) -> bool {
        self.rules_active
            && self
                .answer_triggers
                .as_ref()
                .is_some_and(|t| t[flow].is_some())
    }

    /// Under rules, the reports of answers the replay has not computed yet.
    pub(super) fn holds(&self) -> impl Fn(&Event) -> bool + 'static {
        let first_unknown = match (&self.answer_triggers, self.rules_active) {
            (Some(triggers), true) => triggers
                .iter()
                .enumerate()
                .map(|(f, t)| t.map(|_| self.endpoint.numbered(f)))
                .collect(),
            _ => Vec::new(),
        };
        hold_unknown_answers(first_unknown)
    }
}
