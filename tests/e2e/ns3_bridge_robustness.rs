//! A server that dies or freezes mid-run (also with its socket buffers full)
//! gives the bridge a clear error that names the simulated time reached,
//! within the step timeout, and no server process outlives its bridge: not
//! on error, not on panic, not when netloop itself is interrupted or killed.
//! The server's failures are tried over every transport (TCP, Unix, shared
//! memory), each with both ends blocking at once and spinning first
//! (`spin_wait`).

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bridge::ns3::{Ns3Client, Ns3Error, Transport};
use protocol::SimTime;

use crate::support::*;

/// A transport, and how long both ends spin before they block
/// (`[network.server] spin_wait`).
type Way = (Transport, Duration);

/// Every way the bridge can talk to its server, blocking at once or spinning first.
const TRANSPORTS: [Way; 6] = [
    (Transport::Tcp, Duration::ZERO),
    (Transport::Unix, Duration::ZERO),
    (Transport::Shm, Duration::ZERO),
    (Transport::Tcp, Duration::from_micros(50)),
    (Transport::Unix, Duration::from_micros(50)),
    (Transport::Shm, Duration::from_micros(50)),
];

fn running_client(step_timeout: Duration) -> Ns3Client {
    running_client_over((Transport::Tcp, Duration::ZERO), step_timeout)
}

fn running_client_over((transport, spin): Way, step_timeout: Duration) -> Ns3Client {
    let mut opts = options(&["--network=p2p", "--nodes=2", "--delay=1ms"]);
    opts.step_timeout = step_timeout;
    opts.transport = transport;
    opts.spin_wait = spin;
    let mut client = Ns3Client::start(&opts).unwrap();
    client.configure(vec![udp_flow(0, 0, 1)]).unwrap();
    for i in 1..=3u64 {
        step(
            &mut client,
            SimTime::from_millis(10 * i),
            vec![send(0, i, SimTime::from_millis(10 * i - 5), 32)],
        );
    }
    client
}

fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: plain kill(2) on a pid we own.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, sig) }, 0);
}

fn wait_gone(pid: u32, within: Duration) -> bool {
    wait_until(within, || !process_exists(pid))
}

fn wait_dead(pid: u32, within: Duration) -> bool {
    wait_until(within, || !process_alive(pid))
}

fn wait_until(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn killed_server_is_a_clear_error_naming_the_time_reached() {
    for transport in TRANSPORTS {
        killed_server_is_a_clear_error_naming_the_time_reached_over(transport);
    }
}

fn killed_server_is_a_clear_error_naming_the_time_reached_over(transport: Way) {
    let mut client = running_client_over(transport, Duration::from_secs(30));
    let pid = client.server_pid();
    signal(pid, libc::SIGKILL);
    let started = Instant::now();
    let err = client
        .step(protocol::Step {
            until: SimTime::from_millis(40),
            stop_at_delivery: false,
            sends: vec![],
            kinematics: vec![],
        })
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        matches!(
            err,
            Ns3Error::ServerDied { .. } | Ns3Error::Closed { .. } | Ns3Error::Io { .. }
        ),
        "{transport:?}: {err:?}"
    );
    assert_eq!(err.reached(), Some(SimTime::from_millis(30)));
    let text = err.to_string();
    assert!(text.contains("30ms"), "{text}");
    drop(client);
    assert!(
        wait_gone(pid, Duration::from_secs(2)),
        "server {pid} left behind"
    );
}

#[test]
fn frozen_server_times_out_naming_the_time_reached() {
    for transport in TRANSPORTS {
        frozen_server_times_out_naming_the_time_reached_over(transport);
    }
}

fn frozen_server_times_out_naming_the_time_reached_over(transport: Way) {
    assert_frozen_server_times_out(transport, |client| {
        client
            .step(protocol::Step {
                until: SimTime::from_millis(40),
                stop_at_delivery: false,
                sends: vec![],
                kinematics: vec![],
            })
            .map(drop)
    });
}

/// Freezes (SIGSTOP) the server of a client over `transport` that has run
/// to 30 ms, with a 2 s step timeout, then makes `call`: it fails with a
/// timeout after 2 to 4 s naming the time reached (30 ms), and dropping the
/// client reaps the stopped server.
fn assert_frozen_server_times_out(
    transport: Way,
    call: impl FnOnce(&mut Ns3Client) -> Result<(), Ns3Error>,
) {
    let timeout = Duration::from_secs(2);
    let mut client = running_client_over(transport, timeout);
    let pid = client.server_pid();
    signal(pid, libc::SIGSTOP);
    let started = Instant::now();
    let err = call(&mut client).unwrap_err();
    let waited = started.elapsed();
    assert!(
        waited >= timeout && waited < timeout + Duration::from_secs(2),
        "waited {waited:?}"
    );
    assert!(
        matches!(err, Ns3Error::Timeout { .. }),
        "{transport:?}: {err:?}"
    );
    assert!(err.to_string().contains("30ms"), "{err}");
    drop(client);
    assert!(
        wait_gone(pid, Duration::from_secs(2)),
        "stopped server {pid} left behind"
    );
}

/// A frozen server stops reading too: once the socket buffers are full, the
/// bridge's write blocks, and it is held to the same step timeout as a read.
#[test]
fn frozen_server_with_full_buffers_times_out_the_write_naming_the_time_reached() {
    for transport in TRANSPORTS {
        frozen_server_with_full_buffers_times_out_the_write_naming_the_time_reached_over(transport);
    }
}

fn frozen_server_with_full_buffers_times_out_the_write_naming_the_time_reached_over(
    transport: Way,
) {
    // 400,000 sends of 28 bytes each: an 11 MB frame, well past what loopback
    // buffers for a process that does not read (a 4 MB send buffer at most,
    // and a receive window that does not grow while nobody reads), and past
    // a shared-memory ring (1 MiB).
    let sends = (0..400_000)
        .map(|i| send(0, 4 + i, SimTime::from_millis(40), 32))
        .collect();
    assert_frozen_server_times_out(transport, |client| {
        client.begin_step(protocol::Step {
            until: SimTime::from_millis(50),
            stop_at_delivery: false,
            sends,
            kinematics: vec![],
        })
    });
}

#[test]
fn a_panic_in_the_bridge_still_reaps_the_server() {
    let (tx, rx) = std::sync::mpsc::channel();
    let joined = std::thread::spawn(move || {
        let client = running_client(Duration::from_secs(30));
        tx.send(client.server_pid()).unwrap();
        panic!("bridge panics with a live server");
    })
    .join();
    assert!(joined.is_err());
    let pid = rx.recv().unwrap();
    assert!(
        wait_gone(pid, Duration::from_secs(2)),
        "server {pid} outlived a panic"
    );
}

/// The server started by a `netloop` process, found through /proc.
pub fn child_server_of(parent: u32) -> Option<u32> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the parenthesised command name: state, ppid, ...
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let ppid: u32 = rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        if ppid == parent && stat.contains("(netloop-server)") {
            return Some(pid);
        }
    }
    None
}

/// Starts a long `netloop ns3 probe`, waits for its server, signals netloop.
fn netloop_with_server_then(sig: libc::c_int) {
    let mut netloop = Command::new(env!("CARGO_BIN_EXE_netloop"))
        .args([
            "ns3",
            "probe",
            "--packets",
            "100000000",
            "--period",
            "1ms",
            "--",
            "--network=p2p",
            "--nodes=2",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let server = loop {
        if let Some(pid) = child_server_of(netloop.id()) {
            break pid;
        }
        assert!(
            Instant::now() < deadline,
            "netloop never started its server"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(200));
    signal(netloop.id(), sig);
    let status = netloop.wait().unwrap();
    assert!(!status.success());
    // Once netloop is gone the server is init's child; init reaps it.
    assert!(
        wait_dead(server, Duration::from_secs(3)),
        "server {server} outlived netloop ({status})"
    );
}

#[test]
fn interrupting_netloop_reaps_its_server() {
    netloop_with_server_then(libc::SIGINT);
}

#[test]
fn killing_netloop_reaps_its_server() {
    netloop_with_server_then(libc::SIGKILL);
}

/// Sets `cancel` 300 ms after it is called, runs `wait` (which must end
/// because of it, with [`Ns3Error::Interrupted`]) and returns how long after
/// the flag was set `wait` returned.
fn time_to_interrupt(
    cancel: &Arc<AtomicBool>,
    wait: impl FnOnce() -> Result<(), Ns3Error>,
) -> Duration {
    cancel.store(false, Ordering::SeqCst);
    let flag = Arc::clone(cancel);
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        let at = Instant::now();
        flag.store(true, Ordering::SeqCst);
        at
    });
    let result = wait();
    let ended = Instant::now();
    let set_at = setter.join().unwrap();
    assert!(
        matches!(result, Err(Ns3Error::Interrupted { .. })),
        "{result:?}"
    );
    ended.saturating_duration_since(set_at)
}

/// Ctrl-C (the cancel flag its handler sets) acts within 100 ms in each
/// phase where the bridge waits for its server: while the server starts
/// (it never prints its port) and while it runs a step (it is frozen). The
/// best of three tries is held to 100 ms, every try to 1 s: the machine's
/// load may delay a wake-up, not the bridge's polling.
#[test]
fn a_ctrl_c_acts_within_100_ms_while_the_server_starts_and_while_it_steps() {
    let dir = tempfile::tempdir().unwrap();
    let silent = dir.path().join("silent-server");
    std::fs::write(&silent, "#!/bin/sh\nexec sleep 120\n").unwrap();
    std::fs::set_permissions(&silent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cancel = Arc::new(AtomicBool::new(false));

    let mut starting = Vec::new();
    for _ in 0..3 {
        let mut opts = bridge::ns3::Ns3Options::new(silent.clone(), vec![]);
        opts.connect_timeout = Duration::from_secs(60);
        opts.cancel = Some(Arc::clone(&cancel));
        starting.push(time_to_interrupt(&cancel, || {
            Ns3Client::start(&opts).map(drop)
        }));
    }

    let mut stepping = Vec::new();
    for _ in 0..3 {
        let mut opts = options(&["--network=p2p", "--nodes=2", "--delay=1ms"]);
        opts.cancel = Some(Arc::clone(&cancel));
        cancel.store(false, Ordering::SeqCst);
        let mut client = Ns3Client::start(&opts).unwrap();
        client.configure(vec![udp_flow(0, 0, 1)]).unwrap();
        step(&mut client, SimTime::from_millis(10), vec![]);
        let pid = client.server_pid();
        signal(pid, libc::SIGSTOP);
        stepping.push(time_to_interrupt(&cancel, || {
            client
                .step(protocol::Step {
                    until: SimTime::from_millis(20),
                    stop_at_delivery: false,
                    sends: vec![],
                    kinematics: vec![],
                })
                .map(drop)
        }));
        drop(client);
        assert!(
            wait_gone(pid, Duration::from_secs(2)),
            "stopped server {pid} left behind"
        );
    }

    for (phase, took) in [("starting", starting), ("stepping", stepping)] {
        let best = took.iter().min().unwrap();
        assert!(
            *best < Duration::from_millis(100) && took.iter().all(|t| *t < Duration::from_secs(1)),
            "{phase}: the cancel acted after {took:?}"
        );
    }
}
