//! Driving the real ns-3 server directly, below the co-simulation.

use std::path::PathBuf;
use std::time::Duration;

use bridge::ns3::{default_server_path, Ns3Client, Ns3Options};
use protocol::{FlowSpec, SendRequest, SimTime, Step, StepDone, Transport};

/// The server binary; fails the test with a hint when it is not built.
pub fn server_binary() -> PathBuf {
    let path = default_server_path();
    assert!(
        path.exists(),
        "ns-3 server not found at {}: run scripts/setup.sh (or set NETLOOP_NS3_SERVER)",
        path.display()
    );
    path
}

/// Options for a server started with `args`, with timeouts generous enough
/// for a loaded test machine.
pub fn options(args: &[&str]) -> Ns3Options {
    let mut options = Ns3Options::new(
        server_binary(),
        args.iter().map(|s| s.to_string()).collect(),
    );
    options.connect_timeout = Duration::from_secs(20);
    options.step_timeout = Duration::from_secs(60);
    options
}

/// A UDP flow from node `src` to node `dst` on port 9000 + `flow`.
pub fn udp_flow(flow: u32, src: u32, dst: u32) -> FlowSpec {
    FlowSpec {
        flow,
        port: 9000 + flow as u16,
        src,
        dst,
        transport: Transport::Udp,
        stop_on_delivery: false,
    }
}

/// One packet of `size` bytes on `flow` at `time`.
pub fn send(flow: u32, number: u64, time: SimTime, size: u32) -> SendRequest {
    SendRequest {
        flow,
        number,
        state_index: 0,
        state_count: 1,
        time,
        size,
    }
}

/// Runs the network to `until` with `sends`; fails the test on an error.
pub fn step(client: &mut Ns3Client, until: SimTime, sends: Vec<SendRequest>) -> StepDone {
    client
        .step(Step {
            until,
            stop_at_delivery: false,
            sends,
            kinematics: vec![],
        })
        .expect("step")
}
