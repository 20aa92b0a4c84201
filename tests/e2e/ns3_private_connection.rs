//! Only the netloop process that started a server can drive it: the bridge
//! hands the server an already connected socket, so the server never
//! listens, and a process that looks for a port to connect to, before the
//! run or in the middle of it, finds nothing to take over or disturb.

use std::collections::HashSet;
use std::io::Write;
use std::net::{Ipv4Addr, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bridge::ns3::Ns3Client;
use protocol::{encode, Hello, SimTime, PROTOCOL_VERSION};

use crate::ns3_bridge_robustness::child_server_of;
use crate::support::*;

/// The inodes of a process's sockets.
fn socket_inodes(pid: u32) -> HashSet<u64> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return HashSet::new();
    };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            target
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect()
}

/// A process's TCP sockets (IPv4 and IPv6) as (local port, listening).
fn tcp_sockets(pid: u32) -> Vec<(u16, bool)> {
    let inodes = socket_inodes(pid);
    let mut sockets = Vec::new();
    for table in ["tcp", "tcp6"] {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            if !inode.parse().is_ok_and(|i: u64| inodes.contains(&i)) {
                continue;
            }
            let port = local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok())
                .unwrap_or(0);
            sockets.push((port, *state == "0A"));
        }
    }
    sockets
}

/// Connects to `port` and, if that works, tries to take the session over
/// with a Hello. Returns whether anything accepted the connection.
fn intrude(port: u16) -> bool {
    let Ok(mut socket) = TcpStream::connect_timeout(
        &(Ipv4Addr::LOCALHOST, port).into(),
        Duration::from_millis(200),
    ) else {
        return false;
    };
    let hello = Hello {
        protocol_version: PROTOCOL_VERSION,
        software: "intruder".into(),
    };
    let _ = socket.write_all(&encode(&hello.into()).unwrap());
    true
}

#[test]
fn the_server_listens_on_no_port_and_its_connection_cannot_be_joined() {
    let mut client = Ns3Client::start(&options(&[
        "--network=p2p",
        "--nodes=2",
        "--delay=1ms",
        "--dataRate=8Mbps",
    ]))
    .unwrap();
    let pid = client.server_pid();
    let sockets = tcp_sockets(pid);
    assert!(
        !sockets.is_empty(),
        "the server holds no TCP socket: cannot see its connection"
    );
    assert!(
        sockets.iter().all(|(_, listening)| !listening),
        "the server listens: {sockets:?}"
    );
    // In the middle of the run: the port of the server's connection (where a
    // listener once was) takes no connection.
    client.configure(vec![udp_flow(0, 0, 1)]).unwrap();
    let first = step(
        &mut client,
        SimTime::from_millis(10),
        vec![send(0, 1, SimTime::from_millis(1), 64)],
    );
    for (port, _) in &sockets {
        assert!(
            !intrude(*port),
            "a second process connected to port {port} of the server"
        );
    }
    let second = step(
        &mut client,
        SimTime::from_millis(20),
        vec![send(0, 2, SimTime::from_millis(11), 64)],
    );
    // 1 ms + (64 + 8 + 20 + 2) bytes at 8 Mbps (94 us) after each send.
    let arrivals: Vec<SimTime> = first
        .deliveries
        .iter()
        .chain(&second.deliveries)
        .map(|d| d.received)
        .collect();
    assert_eq!(
        arrivals,
        [
            SimTime(1_000_000 + 1_094_000),
            SimTime(11_000_000 + 1_094_000)
        ]
    );
    let summary = client.finish().unwrap();
    assert_eq!((summary.flows[0].sent, summary.flows[0].delivered), (2, 2));
}

/// A whole `netloop run` while another process connects to every TCP port
/// that netloop or its server listens on, as soon as one appears, and tries
/// to take the session with a Hello: the run's results are byte-identical
/// to an undisturbed run's, and the server never had a port to find.
#[test]
fn a_process_hunting_for_the_port_does_not_disturb_a_run() {
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/dc_servo_p2p.toml");
    let run = |out: &std::path::Path, hunt: bool| {
        let mut netloop = Command::new(env!("CARGO_BIN_EXE_netloop"))
            .args(["-q", "run", scenario, "--set", "duration=500ms", "--out"])
            .arg(out)
            .spawn()
            .unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (listeners_seen, server_listened) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let hunter = hunt.then(|| {
            let (stop, seen, listened) = (
                stop.clone(),
                listeners_seen.clone(),
                server_listened.clone(),
            );
            let parent = netloop.id();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let server = child_server_of(parent);
                    for pid in std::iter::once(parent).chain(server) {
                        for (port, listening) in tcp_sockets(pid) {
                            if listening {
                                seen.fetch_add(1, Ordering::Relaxed);
                                listened.fetch_or(Some(pid) == server, Ordering::Relaxed);
                                intrude(port);
                            }
                        }
                    }
                }
            })
        });
        let status = netloop.wait().unwrap();
        stop.store(true, Ordering::Relaxed);
        if let Some(h) = hunter {
            h.join().unwrap();
        }
        assert!(
            status.success(),
            "netloop run failed ({status}) with hunt = {hunt}"
        );
        assert!(
            !server_listened.load(Ordering::Relaxed),
            "the server listened on a port"
        );
        listeners_seen.load(Ordering::Relaxed)
    };
    let dir = tempfile::tempdir().unwrap();
    let (calm, hunted) = (dir.path().join("calm"), dir.path().join("hunted"));
    run(&calm, false);
    let seen = run(&hunted, true);
    eprintln!("the hunter saw {seen} listening sockets of netloop (its own, for a moment)");
    for file in ["timeseries.csv", "packets.csv"] {
        let (a, b) = (
            std::fs::read(calm.join(file)).unwrap(),
            std::fs::read(hunted.join(file)).unwrap(),
        );
        assert!(
            a == b,
            "{file} differs when another process hunts for the port"
        );
    }
}
