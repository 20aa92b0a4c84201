//! A netloop killed with SIGKILL cannot clean up; the programs it started
//! (the server of a run, the server's `--check`) must still go with it, or
//! they hold ports and CPUs until they end by themselves.

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::server_startup::scenario;
use crate::support::{child_named, process_alive};

/// A p2p servo loop whose server is `./slow-server`, a script that sleeps.
fn slow_scenario() -> String {
    scenario("kind = \"p2p\"")
        + "[network.server]\nbinary = \"./slow-server\"\nconnect_timeout = \"60s\"\n"
}

/// Starts `netloop args...` in a folder with [`slow_scenario`], waits for its
/// `sleep` child, kills netloop with SIGKILL and returns whether the child
/// was gone within 1 s.
fn child_outlives_a_killed_netloop(args: &[&str]) -> bool {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("slow.toml"), slow_scenario()).unwrap();
    let server = dir.path().join("slow-server");
    std::fs::write(&server, "#!/bin/sh\nexec sleep 120\n").unwrap();
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut netloop = Command::new(env!("CARGO_BIN_EXE_netloop"))
        .current_dir(dir.path())
        .env_remove("RUST_LOG")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let child = loop {
        if let Some(pid) = child_named(netloop.id(), "sleep") {
            break pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{args:?}: the server was not started"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    netloop.kill().unwrap(); // SIGKILL
    netloop.wait().unwrap();
    let killed = Instant::now();
    while killed.elapsed() < Duration::from_secs(1) {
        if !process_alive(child) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // Do not leave it behind when the test fails.
    // SAFETY: kill(2) of the orphan this test made.
    unsafe { libc::kill(child as libc::pid_t, libc::SIGKILL) };
    true
}

#[test]
fn the_servers_check_dies_with_a_killed_netloop_check() {
    assert!(
        !child_outlives_a_killed_netloop(&["check", "--with-server", "slow.toml"]),
        "the server's --check outlived netloop check"
    );
}

#[test]
fn the_server_dies_with_a_killed_netloop_run() {
    assert!(
        !child_outlives_a_killed_netloop(&["run", "slow.toml", "--out", "out"]),
        "the server outlived netloop run"
    );
}
