//! A network (a misbehaving or hostile ns-3 server) that reports packets the
//! bridge never sent stops the run with an error naming the packet, never a
//! panic. Found by the `server_replies` fuzz target (tests/fuzz): a delivery
//! on an unknown flow used to panic ("queued flows exist").

use bridge::graph_session::GraphSessionError;
use bridge::network::{NetworkError, Violation};
use controlsim::Silent;
use protocol::{Delivery, DropEvent, DropReason, SimTime, StepDone};

use crate::support::*;

const SCHEMES: [&str; 3] = ["time_stepping", "master_slave", "event_driven"];

/// Has the builtin channel's first answer also report `extra`, at 1 ms
/// (inside the first step of every scheme, so it takes effect in the run).
struct ReportsStrangers {
    extra: Option<StepDone>,
}

impl Tap for ReportsStrangers {
    fn end_step(&mut self, done: &mut StepDone) {
        if let Some(extra) = self.extra.take() {
            let at = SimTime::from_millis(1).min(done.reached);
            done.deliveries
                .extend(extra.deliveries.into_iter().map(|mut d| {
                    d.received = at;
                    d
                }));
            done.drops.extend(extra.drops.into_iter().map(|mut d| {
                d.time = at;
                d
            }));
        }
    }
}

fn run_with(scheme: &str, extra: StepDone) -> Result<(), GraphSessionError> {
    let header = format!("duration = \"200ms\"\nstep = \"1ms\"\nseed = 9\n[sync]\nscheme = \"{scheme}\"\nperiod = \"10ms\"\n");
    let text = scenario(
        &header,
        "{ kind = \"constant\", value = \"3ms\" }",
        &servo_loop("servo", 0, 1, "trigger = \"time\"\nperiod = \"10ms\"", ""),
    );
    let resolved = resolve(&text);
    let network = Tapped {
        inner: builtin_channel(&resolved),
        tap: ReportsStrangers { extra: Some(extra) },
    };
    run_session(&resolved, network, &mut Silent).outcome
}

#[test]
fn a_delivery_or_drop_on_a_flow_that_does_not_exist_is_an_error_not_a_panic() {
    let delivery = Delivery {
        flow: 99,
        number: 1,
        state_index: 0,
        state_count: 1,
        sent: SimTime::ZERO,
        received: SimTime::ZERO,
        size: 64,
    };
    let drop = DropEvent {
        flow: 99,
        number: 1,
        state_index: 0,
        state_count: 1,
        sent: SimTime::ZERO,
        time: SimTime::ZERO,
        node: 0,
        reason: DropReason::Queue,
    };
    for scheme in SCHEMES {
        for extra in [
            StepDone {
                reached: SimTime::ZERO,
                deliveries: vec![delivery.clone()],
                drops: vec![],
            },
            StepDone {
                reached: SimTime::ZERO,
                deliveries: vec![],
                drops: vec![drop.clone()],
            },
        ] {
            let kind = if extra.drops.is_empty() {
                "delivery"
            } else {
                "drop"
            };
            let err = run_with(scheme, extra).expect_err(&format!(
                "{scheme}: a {kind} of a packet that was never sent"
            ));
            // The ledger sees every report first (first report wins) and
            // names a flow the bridge never made as the server's violation.
            assert!(
                matches!(
                    err,
                    GraphSessionError::Network(NetworkError::Violation {
                        violation: Violation::UnknownFlow {
                            flow: 99,
                            number: 1,
                            ..
                        },
                        ..
                    })
                ),
                "{scheme}: {err:?}"
            );
            assert!(err.to_string().contains("flow 99"), "{scheme}: {err}");
        }
    }
}
