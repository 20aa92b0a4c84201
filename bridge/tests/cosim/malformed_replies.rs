//! A network (a misbehaving or hostile ns-3 server) that reports packets the
//! bridge never sent stops the run with an error naming the packet, never a
//! panic. Found by the `server_replies` fuzz target (tests/fuzz): a delivery
//! on an unknown flow used to panic ("queued flows exist").

use std::path::Path;

use bridge::network::{BuiltinNetwork, Network, NetworkError, Violation};
use bridge::packets_csv::PacketsCsv;
use bridge::session::{Session, SessionError};
use controlsim::{Silent, System};
use protocol::{
    Configured, Delivery, DropEvent, DropReason, FlowSpec, SimTime, Step, StepDone, Summary,
};

use crate::support::*;

const SCHEMES: [&str; 3] = ["time_stepping", "master_slave", "event_driven"];

/// The builtin channel, whose first answer also reports `extra`, at 1 ms
/// (inside the first step of every scheme, so it takes effect in the run).
struct ReportsStrangers {
    channel: BuiltinNetwork,
    extra: Option<StepDone>,
}

impl Network for ReportsStrangers {
    fn configure(&mut self, flows: &[FlowSpec]) -> Result<Configured, NetworkError> {
        self.channel.configure(flows)
    }
    fn begin_step(&mut self, step: Step) -> Result<(), NetworkError> {
        self.channel.begin_step(step)
    }
    fn end_step(&mut self) -> Result<StepDone, NetworkError> {
        let mut done = self.channel.end_step()?;
        if let Some(extra) = self.extra.take() {
            done.deliveries
                .extend(extra.deliveries.into_iter().map(|mut d| {
                    d.received = SimTime::from_millis(1).min(done.reached);
                    d
                }));
            done.drops.extend(extra.drops.into_iter().map(|mut d| {
                d.time = SimTime::from_millis(1).min(done.reached);
                d
            }));
        }
        Ok(done)
    }
    fn finish(&mut self) -> Result<Summary, NetworkError> {
        self.channel.finish()
    }
    fn reached(&self) -> SimTime {
        self.channel.reached()
    }
    fn may_deliver_instantly(&self) -> bool {
        self.channel.may_deliver_instantly()
    }
    fn uses_kinematics(&self) -> bool {
        false
    }
    fn software(&self) -> String {
        self.channel.software()
    }
}

fn run_with(scheme: &str, extra: StepDone) -> Result<(), SessionError> {
    let header = format!("duration = \"200ms\"\nstep = \"1ms\"\nseed = 9\n[sync]\nscheme = \"{scheme}\"\nperiod = \"10ms\"\n");
    let text = scenario(
        &header,
        "{ kind = \"constant\", value = \"3ms\" }",
        &servo_loop("servo", 0, 1, "trigger = \"time\"\nperiod = \"10ms\"", ""),
    );
    let resolved = resolve(&text);
    let config = resolved.scenario.network.builtin.as_ref().unwrap();
    let channel = BuiltinNetwork::new(
        config,
        resolved.scenario.seed,
        resolved.scenario.run,
        Path::new("."),
        &bridge::input::read_input_text,
    )
    .unwrap();
    let network = ReportsStrangers {
        channel,
        extra: Some(extra),
    };
    let system = System::from_config(&resolved.system, resolved.scenario.control_seed()).unwrap();
    let mut session = Session::new(
        &resolved,
        system,
        Vec::new(),
        Box::new(network),
        PacketsCsv::new(Vec::new()),
        None,
    );
    let outcome = session.run(&mut Silent);
    let _ = session.finish(outcome.is_ok());
    outcome
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
                    SessionError::Network(NetworkError::Violation {
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
