//! Starting the ns-3 server as a user meets it: its own words about a bad
//! argument (not the end of its help), a `--check` that fails failing
//! `check`, files it reads kept to a size, Ctrl-C acting while it starts,
//! and a re-run leaving none of an earlier run's traces.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use test_support::fixtures::p_servo_over_ns3;

use crate::support::{child_named, server_binary};

fn netloop(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_netloop"));
    c.current_dir(dir).env_remove("RUST_LOG");
    c
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A servo loop over ns-3; `network` is the body after `[network.ns3]`.
pub(crate) fn scenario(network: &str) -> String {
    p_servo_over_ns3("200ms", network)
}

const WIFI: &str = "kind = \"wifi\"\nstandard = \"802.11a\"";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// An executable shell script standing in for a misbehaving server.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = write(dir, name, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The server's own words, at the key of the argument its structured
/// problem names (not ns-3's help, which it no longer prints).
#[test]
fn an_argument_ns3_cannot_take_is_shown_by_the_servers_problem_at_its_key() {
    server_binary();
    let dir = tempfile::tempdir().unwrap();
    let text = scenario(WIFI) + "[network.server]\nargs = [\"--txPower=nan\"]\n";
    write(dir.path(), "nan.toml", &text);
    for args in [
        vec!["check", "nan.toml"],
        vec!["run", "nan.toml", "--out", "out"],
    ] {
        let o = netloop(dir.path()).args(&args).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("error: `network.server.args[0]`: --txPower=nan is not a number"),
            "{args:?}: {err}"
        );
        assert!(
            !err.contains("--PrintHelp"),
            "{args:?}: the help is shown: {err}"
        );
        assert!(!dir.path().join("out").exists(), "{args:?}");
    }
}

/// A custom program on the library's CheckedCommandLine: an option it does
/// not know is its structured problem, at the key of that option.
#[test]
fn an_unknown_option_of_a_custom_program_is_shown_at_its_key() {
    let byo = server_binary().with_file_name("byo-example");
    let dir = tempfile::tempdir().unwrap();
    let text = scenario("kind = \"custom\"\nnodes = 5")
        + &format!(
            "[network.server]\nbinary = \"{}\"\nargs = [\"--distance=30\", \"--bogus=1\"]\n",
            byo.display()
        );
    write(dir.path(), "byo.toml", &text);
    let o = netloop(dir.path())
        .args(["run", "byo.toml", "--out", "out"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with(
            "error: `network.server.args[1]`: --bogus=1: no such argument, ns-3 attribute or \
             global value"
        ),
        "{err}"
    );
    assert!(!err.contains("--PrintHelp"), "the help is shown: {err}");
}

#[test]
fn a_server_whose_check_fails_fails_check_and_sweep_planning() {
    let dir = tempfile::tempdir().unwrap();
    script(
        dir.path(),
        "broken-server",
        "echo 'netloop-server: cannot load the Wi-Fi module' >&2\nexit 3",
    );
    let text = scenario(WIFI) + "[network.server]\nbinary = \"./broken-server\"\n";
    write(dir.path(), "base.toml", &text);
    // The scenario names its own program, which check runs only when asked.
    let o = netloop(dir.path())
        .args(["check", "--with-server", "base.toml"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--check failed (exit code 3): cannot load the Wi-Fi module"),
        "{err}"
    );
    write(
        dir.path(),
        "sweep.toml",
        "scenario = \"base.toml\"\n[[grid]]\nkey = \"seed\"\nvalues = [1, 2]\n",
    );
    let o = netloop(dir.path())
        .args(["sweep", "sweep.toml", "--out", "sw"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot load the Wi-Fi module"), "{err}");
    assert!(!dir.path().join("sw/runs").exists(), "no run may start");
}

#[test]
fn an_endless_placement_file_is_a_clear_error_under_a_memory_limit() {
    server_binary();
    let dir = tempfile::tempdir().unwrap();
    let text = scenario(WIFI) + "[network.placement]\nfile = \"/dev/zero\"\n";
    write(dir.path(), "zero.toml", &text);
    let started = Instant::now();
    let o = limited(netloop(dir.path()).args(["check", "zero.toml"]));
    let err = stderr(&o);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: `network.placement.file`: "),
        "{err}"
    );
    assert!(err.contains("/dev/zero: larger than 16 MiB"), "{err}");
}

/// Runs a command (and the server it starts) with the address space
/// limited to 2 GiB: reading an endless file whole fails instead of taking
/// the machine's memory.
fn limited(command: &mut Command) -> Output {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 2 << 30,
                rlim_max: 2 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.output().unwrap()
}

/// A server that never prints its port holds netloop in start-up, where a
/// Ctrl-C used to wait for the whole connect timeout.
#[test]
fn ctrl_c_while_the_server_starts_stops_the_run_at_once() {
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "silent-server", "exec sleep 120");
    let text = scenario("kind = \"p2p\"")
        + "[network.server]\nbinary = \"./silent-server\"\nconnect_timeout = \"60s\"\n";
    write(dir.path(), "silent.toml", &text);
    let child = netloop(dir.path())
        .args(["run", "silent.toml", "--out", "out"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the server to be spawned: a `sleep` child of netloop.
    let started = Instant::now();
    let server = loop {
        if let Some(pid) = child_named(child.id(), "sleep") {
            break pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the server was not started"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    std::thread::sleep(Duration::from_millis(200));
    let interrupted = Instant::now();
    // SAFETY: kill(2) on the child we spawned and have not reaped.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let took = interrupted.elapsed();
    let err = stderr(&o);
    assert!(
        took < Duration::from_secs(2),
        "Ctrl-C took {took:?} to act: {err}"
    );
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["complete"], false);
    assert!(
        !Path::new(&format!("/proc/{server}")).exists(),
        "the server outlived the run"
    );
}

#[test]
fn a_rerun_leaves_none_of_an_earlier_runs_traces() {
    server_binary();
    let dir = tempfile::tempdir().unwrap();
    let text = scenario("kind = \"p2p\"") + "[network.builtin]\ndelay = { kind = \"constant\", value = \"2ms\" }\n[network.traces]\npcap = true\n";
    write(dir.path(), "traced.toml", &text);
    let o = netloop(dir.path())
        .args(["-q", "run", "traced.toml", "--out", "out"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let traces = std::fs::read_dir(dir.path().join("out/ns3"))
        .unwrap()
        .count();
    assert!(traces > 0, "the ns-3 run wrote no traces");
    let o = netloop(dir.path())
        .args([
            "-q",
            "run",
            "traced.toml",
            "--out",
            "out",
            "--network",
            "builtin",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !dir.path().join("out/ns3").exists(),
        "the builtin re-run kept the ns-3 run's traces"
    );
}
