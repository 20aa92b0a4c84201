//! A server that breaks the protocol on purpose: the real `netloop` binary
//! runs a scenario against a fake server on a real TCP socket speaking
//! netloop's wire protocol. Every violation stops the run with a clear error
//! naming it, exit code 1 and the partial results kept; never a panic.
//!
//! The fake is a thread of this test behind a listening socket; the "server
//! binary" netloop starts is a bash script that relays the connection
//! netloop hands it (`--connectionFd=N`) to that socket and prints its port
//! as the ready line, as a real server does. It behaves as a network
//! with a 1 ms delay and no loss, except in the one answer it tampers with.
//! Each case runs over every transport: bash relays whichever socket netloop
//! hands it, and over shared memory (`--shmFd=N`) the relay is `shm-relay`
//! (ns3-scenarios/tests/shm-relay.cc, built next to `netloop-server`), which
//! attaches to the channel as the server end with the real server's code.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::mpsc;
use std::time::Duration;

use protocol::{
    decode, encode, Configured, Decoded, Delivery, DropEvent, DropReason, Hello, Message,
    SendRequest, SimTime, StepDone, Summary, DEFAULT_MAX_PAYLOAD, PROTOCOL_VERSION,
};
use test_support::fixtures::ServoPid;

use crate::support::{assert_success, server_binary};

/// Changes the answer to one step; `None` leaves every answer honest.
type Tamper = fn(&mut StepDone);

/// The step whose answer is tampered with: the second, from 1 s to 2 s
/// (lookahead windows of one second), so the first second is replayed and
/// kept in the partial results.
const TAMPERED_STEP: usize = 1;

const DELAY: SimTime = SimTime::from_millis(1);

/// Serves one connection: Hello, Configure, Steps, Finish. Returns when
/// netloop closes the connection.
fn serve(mut socket: TcpStream, tamper: Option<Tamper>) {
    socket
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut inbox = Vec::new();
    let mut on_the_way: Vec<SendRequest> = Vec::new();
    let mut steps = 0;
    let mut reached = SimTime::ZERO;
    loop {
        let message = loop {
            if let Ok(Decoded::Frame { message, consumed }) = decode(&inbox, DEFAULT_MAX_PAYLOAD) {
                inbox.drain(..consumed);
                break message;
            }
            let mut chunk = [0u8; 65536];
            match socket.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => inbox.extend_from_slice(&chunk[..n]),
            }
        };
        let reply: Message = match message {
            Message::Hello(_) => Hello {
                protocol_version: PROTOCOL_VERSION,
                software: "fake server".into(),
            }
            .into(),
            Message::Configure(_) => Configured {
                node_count: 2,
                description: "a fake network".into(),
            }
            .into(),
            Message::Step(step) => {
                on_the_way.extend(step.sends);
                on_the_way.sort_by_key(|s| (s.time, s.flow, s.number));
                let arrived = on_the_way
                    .iter()
                    .take_while(|s| s.time + DELAY <= step.until)
                    .count();
                let deliveries = on_the_way
                    .drain(..arrived)
                    .map(|s| Delivery {
                        flow: s.flow,
                        number: s.number,
                        state_index: s.state_index,
                        state_count: s.state_count,
                        sent: s.time,
                        received: s.time + DELAY,
                        size: s.size,
                    })
                    .collect();
                let mut done = StepDone {
                    reached: step.until,
                    deliveries,
                    drops: vec![],
                };
                if let Some(tamper) = tamper.filter(|_| steps == TAMPERED_STEP) {
                    tamper(&mut done);
                }
                steps += 1;
                reached = done.reached;
                done.into()
            }
            Message::Finish(_) => Summary {
                reached,
                flows: vec![],
            }
            .into(),
            other => panic!("the fake server got {:?}", other.kind()),
        };
        if socket.write_all(&encode(&reply).unwrap()).is_err() {
            return;
        }
    }
}

/// A DC servo over a "p2p" network served by the fake, master-slave every
/// 10 ms with a time-triggered controller, for 2.5 s.
fn scenario(server: &Path, transport: &str) -> String {
    format!(
        r#"
duration = "2500ms"
step = "1ms"
[sync]
scheme = "master_slave"
period = "10ms"
[network]
backend = "ns3"
[network.ns3]
kind = "p2p"
[network.server]
binary = "{server}"
step_timeout = "20s"
transport = "{transport}"
{servo}"#,
        server = server.display(),
        servo = ServoPid::time_triggered_pd().toml()
    )
}

/// Runs netloop against the fake; returns its output and the run directory.
fn run_against_fake(dir: &Path, tamper: Option<Tamper>, transport: &str) -> Output {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        if let Ok((socket, _)) = listener.accept() {
            serve(socket, tamper);
        }
        let _ = tx.send(());
    });
    let server = dir.join("fake-server");
    // netloop hands its server a connected socket (`--connectionFd=N`) or a
    // shared-memory channel (`--shmFd=N`); the script relays either to the
    // thread's socket.
    let relay = server_binary().with_file_name("shm-relay");
    assert!(
        relay.exists(),
        "{} is missing: build it with scripts/build-ns3.sh",
        relay.display()
    );
    std::fs::write(
        &server,
        format!(
            "#!/bin/bash\nfor a in \"$@\"; do case $a in --connectionFd=*) fd=${{a#--connectionFd=}};; \
             --shmFd=*) exec '{relay}' --relayPort={port} \"$a\";; esac; done\n\
             exec 4<>/dev/tcp/127.0.0.1/{port}\necho {port}\ncat <&$fd >&4 &\nexec cat <&4 >&$fd\n",
            relay = relay.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = dir.join("scenario.toml");
    std::fs::write(&file, scenario(&server, transport)).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_netloop"))
        .args(["-q", "run"])
        .arg(&file)
        .arg("--out")
        .arg(dir.join("run"))
        .output()
        .unwrap();
    // netloop closed the connection when it stopped: the fake is done.
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the fake server outlived netloop");
    output
}

fn delivery(flow: u32, number: u64, sent_ms: u64, received_ms: u64) -> Delivery {
    Delivery {
        flow,
        number,
        state_index: 0,
        state_count: 1,
        sent: SimTime::from_millis(sent_ms),
        received: SimTime::from_millis(received_ms),
        size: 64,
    }
}

/// The fake answers honestly: the run completes (the baseline the
/// violations below depart from).
#[test]
fn an_honest_fake_server_runs_to_the_end() {
    for transport in TRANSPORTS {
        an_honest_fake_server_runs_to_the_end_over(transport);
    }
}

/// The values of `[network.server] transport` the cases run over.
const TRANSPORTS: [&str; 3] = ["tcp", "unix", "shm"];

fn an_honest_fake_server_runs_to_the_end_over(transport: &str) {
    let dir = tempfile::tempdir().unwrap();
    let output = run_against_fake(dir.path(), None, transport);
    assert_success(&output, transport);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("run/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["complete"], true);
    // 250 samples and 250 controls, each delivered 1 ms later: the last,
    // sent at 2.49 s, acts at 2.491 s, before the end.
    assert_eq!(summary["totals"]["sent"], 500);
    assert_eq!(summary["totals"]["accepted"], 500);
}

#[test]
fn every_protocol_violation_is_a_clear_error_with_partial_results() {
    let cases: [(&str, Tamper, &str); 7] = [
        ("unknown flow", |done| done.deliveries.push(delivery(7, 0, 1500, 1501)), "it reported packet 0 (state 0) of flow 7, but there is no flow 7 (flows are 0 to 1)"),
        (
            "delivery before its send",
            |done| done.deliveries.push(delivery(0, 150, 1500, 1400)),
            "it delivered packet 150 (state 0) of flow 0 at 1400ms, before it was sent at 1500ms",
        ),
        (
            "delivery of a packet never sent",
            |done| done.deliveries.push(delivery(1, 5000, 1500, 1501)),
            "it reported packet 5000 (state 0) of flow 1, which was never sent",
        ),
        (
            "loss of a packet never sent",
            |done| {
                done.drops.push(DropEvent {
                    flow: 0,
                    number: 0,
                    state_index: 3,
                    state_count: 4,
                    sent: SimTime::from_millis(1500),
                    time: SimTime::from_millis(1500),
                    node: 0,
                    reason: DropReason::Queue,
                })
            },
            "it reported packet 0 (state 3) of flow 0, which was never sent",
        ),
        (
            "delivery after reached",
            |done| done.deliveries.push(delivery(0, 199, 1990, 2005)),
            "it reported packet 199 (state 0) of flow 0 at 2005ms, after the time it said it reached, 2s",
        ),
        (
            "reached short of the step",
            |done| done.reached = SimTime::from_millis(1997),
            "it said it reached 1997ms, but the step asked it to run until 2s",
        ),
        (
            "reached past the step",
            |done| done.reached = SimTime::from_millis(2003),
            "it said it reached 2003ms, but the step asked it to run until 2s",
        ),
    ];
    for ((case, tamper, expected), transport) in
        cases.iter().flat_map(|c| TRANSPORTS.map(|t| (*c, t)))
    {
        let case = format!("{case} ({transport})");
        let dir = tempfile::tempdir().unwrap();
        let output = run_against_fake(dir.path(), Some(tamper), transport);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{case}: {stderr}");
        assert!(!stderr.contains("panicked"), "{case}: {stderr}");
        assert!(
            stderr.contains("the network broke the protocol at simulated time")
                && stderr.contains(expected),
            "{case}: {stderr}"
        );

        let run = dir.path().join("run");
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["complete"], false, "{case}");
        assert!(
            summary["error"].as_str().unwrap().contains(expected),
            "{case}: {}",
            summary["error"]
        );
        // The first second was replayed before the bad answer was read.
        assert_eq!(summary["reached_ns"], 1_000_000_000u64, "{case}");
        assert!(
            !run.join("timeseries.csv").exists() && !run.join("packets.csv").exists(),
            "{case}"
        );
        let series = std::fs::read_to_string(run.join("timeseries.csv.partial")).unwrap();
        assert_eq!(
            series.lines().count(),
            1 + 1001,
            "{case}: header and the rows of 0 to 1 s"
        );
        let packets = std::fs::read_to_string(run.join("packets.csv.partial")).unwrap();
        assert!(
            packets.lines().filter(|l| l.contains(",accepted,")).count() >= 190,
            "{case}: {packets}"
        );
    }
}
