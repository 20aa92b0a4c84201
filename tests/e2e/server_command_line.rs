//! What ns-3's CommandLine used to refuse with its help and exit code 1,
//! abort on, or silently misread (an unknown argument, a value its type
//! cannot take, an ns-3 attribute's bad value) is a bad scenario: exit code
//! 2 naming the `[network]` key and its line, from the server's structured
//! problem alone, for `check` and `run`, for netloop-server and for a
//! custom program built on the library (`CheckedCommandLine`).

use std::path::Path;
use std::process::{Command, Output};

use crate::server_startup::scenario;
use crate::support::server_binary;

fn netloop(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netloop"))
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .args(args)
        .output()
        .unwrap()
}

/// The 1-based line of `text` that starts with `start`.
fn line_of(text: &str, start: &str) -> usize {
    1 + text
        .lines()
        .position(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starts with {start:?}"))
}

/// Checks `check` (with `check_args`) and `run` of `text`: exit code 2,
/// the error at `key` on the line starting with `line_start`, with `words`.
fn assert_rejected_at(
    dir: &Path,
    name: &str,
    text: &str,
    check_args: &[&str],
    (key, line_start, words): (&str, &str, &str),
) {
    std::fs::write(dir.join(name), text).unwrap();
    let line = line_of(text, line_start);
    let mut check = vec!["check"];
    check.extend_from_slice(check_args);
    check.push(name);
    for args in [check, vec!["run", name, "--out", "out"]] {
        let o = netloop(dir, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name} {args:?}: {err}");
        assert!(
            err.starts_with(&format!("error: `{key}`: ")),
            "{name} {args:?}: {err}"
        );
        assert!(err.contains(words), "{name} {args:?}: {err}");
        assert!(
            err.contains(&format!("{name}:{line}:")),
            "{name} {args:?}: not located at line {line}: {err}"
        );
        assert!(!err.contains("PrintHelp"), "{name} {args:?}: {err}");
        assert!(!dir.join("out").exists(), "{name} {args:?}");
    }
}

#[test]
fn a_value_ns3_cannot_take_is_a_bad_scenario_at_its_network_key_and_line() {
    server_binary();
    let dir = tempfile::tempdir().unwrap();
    let p2p = scenario("kind = \"p2p\"");
    // (the [network.server] body, the key, the start of its line, words of the message)
    let cases = [
        // ns-3 aborted the process on a Time with an unknown unit.
        (
            "args = [\"--ns3::PointToPointChannel::Delay=2parsecs\"]",
            "network.server.args[0]",
            "args =",
            "--ns3::PointToPointChannel::Delay=2parsecs is not a value of the ns-3 attribute \
             ns3::PointToPointChannel::Delay",
        ),
        // ns-3 read this as 3 nodes.
        (
            "args = [\"--nodes=3abc\"]",
            "network.server.args[0]",
            "args =",
            "--nodes=3abc is not a whole number from 0 to 4294967295",
        ),
        // ns-3 printed its help and exited with 1.
        (
            "[network.server.params]\nbogus = 1",
            "network.server.params.bogus",
            "bogus =",
            "--bogus=1: no such argument, ns-3 attribute or global value",
        ),
        (
            "args = [\"--delay=2ms\", \"--ns3::PointToPointNetDevice::Mtu=big\"]",
            "network.server.args[1]",
            "args =",
            "--ns3::PointToPointNetDevice::Mtu=big is not a value of the ns-3 attribute",
        ),
    ];
    for (i, (server, key, line_start, words)) in cases.into_iter().enumerate() {
        let text = format!("{p2p}[network.server]\n{server}\n");
        assert_rejected_at(
            dir.path(),
            &format!("p2p{i}.toml"),
            &text,
            &[],
            (key, line_start, words),
        );
    }
}

/// A custom program built on the library reports the same way: its own
/// argument (`--distance`, a double) with a unit ns-3 read past.
#[test]
fn a_custom_programs_value_it_cannot_take_is_a_bad_scenario_at_its_key_and_line() {
    let byo = server_binary().with_file_name("byo-example");
    let dir = tempfile::tempdir().unwrap();
    let text = scenario("kind = \"custom\"\nnodes = 5")
        + &format!(
            "[network.server]\nbinary = {:?}\n[network.server.params]\ndistance = \"20m\"\n",
            byo.display().to_string()
        );
    assert_rejected_at(
        dir.path(),
        "byo.toml",
        &text,
        &["--with-server"],
        (
            "network.server.params.distance",
            "distance =",
            "--distance=20m is not a number",
        ),
    );
}
