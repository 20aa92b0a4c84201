//! The bridge's half of event-triggered answers as rules: the rules it
//! hands a network that takes them, the steps it then asks for, and a
//! network that reports an answer the replay never computed, which must end
//! the run with a protocol violation rather than silently different results.
//! (The server's half, and the byte-identity with per-event stops over real
//! ns-3, are in ns3-scenarios/tests and tests/e2e/ns3_answer_rules.rs.)

use std::cell::RefCell;
use std::rc::Rc;

use bridge::graph_session::GraphSessionError;
use bridge::network::{NetworkError, Violation};
use controlsim::Silent;
use protocol::{AnswerRule, Delivery, SimTime, Step, StepDone};

use crate::support::*;

/// What the network was asked.
#[derive(Default)]
struct Asked {
    rules: Vec<AnswerRule>,
    steps: Vec<(SimTime, bool)>,
}

/// Takes rules for the builtin channel (without carrying them out: its
/// answers never come) and records what the network was asked; adds
/// `extra` to its first answer.
struct TakesRules {
    asked: Rc<RefCell<Asked>>,
    extra: Option<Delivery>,
}

impl Tap for TakesRules {
    fn install_rules(&mut self, rules: &[AnswerRule]) -> Option<bool> {
        self.asked.borrow_mut().rules = rules.to_vec();
        Some(true)
    }
    fn begin_step(&mut self, _reached: SimTime, step: &mut Step) {
        self.asked
            .borrow_mut()
            .steps
            .push((step.until, step.stop_at_delivery));
    }
    fn end_step(&mut self, done: &mut StepDone) {
        if let Some(mut extra) = self.extra.take() {
            extra.received = done.reached;
            done.deliveries.push(extra);
        }
    }
    fn may_deliver_instantly(&self, _network_says: bool) -> bool {
        false
    }
}

fn run_with(extra: Option<Delivery>) -> (Rc<RefCell<Asked>>, Result<(), GraphSessionError>) {
    let header = "duration = \"2500ms\"\nstep = \"1ms\"\nseed = 9\n[sync]\nscheme = \"event_driven\"\ncomputation_delay = \"250us\"\n";
    let text = scenario(
        header,
        "{ kind = \"constant\", value = \"3ms\" }",
        &servo_loop(
            "servo",
            0,
            1,
            "trigger = \"event\"",
            "uplink = { max_delay = \"5ms\", drop_stale = true }\ndownlink = { size = 48 }",
        ),
    );
    let resolved = resolve(&text);
    let asked = Rc::new(RefCell::new(Asked::default()));
    let network = Tapped {
        inner: builtin_channel(&resolved),
        tap: TakesRules {
            asked: asked.clone(),
            extra,
        },
    };
    let outcome = run_session(&resolved, network, &mut Silent).outcome;
    (asked, outcome)
}

#[test]
fn an_event_triggered_loop_becomes_one_rule_and_the_network_runs_ahead() {
    let (asked, outcome) = run_with(None);
    outcome.unwrap();
    let asked = asked.borrow();
    assert_eq!(
        asked.rules,
        vec![AnswerRule {
            trigger_flow: 0,
            answer_flow: 1,
            delay: SimTime::from_micros(250),
            size: 48,
            state_count: 1,
            max_delay: SimTime::from_millis(5),
            drop_stale: true,
            // The last instant whose delivery acts before the end boundary.
            last_trigger: SimTime::from_millis(2499),
        }]
    );
    // One-second windows, never stopping at a delivery.
    let ms = SimTime::from_millis;
    assert_eq!(
        asked.steps,
        vec![(ms(1000), false), (ms(2000), false), (ms(2500), false)]
    );
}

#[test]
fn a_reported_answer_the_replay_never_computed_is_a_violation() {
    let stranger = Delivery {
        flow: 1,
        number: 500,
        state_index: 0,
        state_count: 1,
        sent: SimTime::ZERO,
        received: SimTime::ZERO,
        size: 48,
    };
    let (_, outcome) = run_with(Some(stranger));
    match outcome {
        Err(GraphSessionError::Network(NetworkError::Violation {
            violation:
                Violation::UnknownPacket {
                    flow: 1,
                    number: 500,
                    state_index: 0,
                },
            ..
        })) => {}
        other => panic!("expected a violation naming answer 500, got {other:?}"),
    }
}
