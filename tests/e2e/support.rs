//! Helpers shared by the end-to-end tests.

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

pub fn options(args: &[&str]) -> Ns3Options {
    let mut options = Ns3Options::new(
        server_binary(),
        args.iter().map(|s| s.to_string()).collect(),
    );
    options.connect_timeout = Duration::from_secs(20);
    options.step_timeout = Duration::from_secs(60);
    options
}

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

/// Whether a process with this pid still exists, zombies included: for
/// children of the test process, a zombie means nobody reaped it.
pub fn process_exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Whether a process is alive (running or stopped, not a zombie): for
/// grandchildren, whose reaping is init's business, not ours.
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            stat.rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next())
                != Some("Z")
        }
        Err(_) => false,
    }
}

/// packets.csv of a run directory as one map per row.
pub fn packet_rows(dir: &std::path::Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(dir.join("packets.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            headers
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}
