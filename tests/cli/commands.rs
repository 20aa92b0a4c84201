//! Every command: help with examples, completions, check, run with --set,
//! and `ns3 info` without a server.

use crate::support::{assert_exit, netloop, run, servo_example, stderr, stdout, summary};

#[test]
fn every_command_has_help_with_an_example() {
    for args in [
        vec!["--help"],
        vec!["run", "--help"],
        vec!["check", "--help"],
        vec!["sweep", "--help"],
        vec!["plot", "--help"],
        vec!["ns3", "--help"],
        vec!["ns3", "info", "--help"],
        vec!["ns3", "probe", "--help"],
        vec!["completions", "--help"],
    ] {
        let o = run(&args);
        assert_exit(&o, 0);
        let text = stdout(&o);
        assert!(text.contains("Example"), "{args:?} has no example:\n{text}");
        assert!(text.contains("netloop "), "{args:?}: {text}");
    }
}

#[test]
fn completions_are_generated_for_three_shells() {
    for shell in ["bash", "zsh", "fish"] {
        let o = run(&["completions", shell]);
        assert_exit(&o, 0);
        let script = stdout(&o);
        for word in ["sweep", "check", "plot", "resume", "set"] {
            assert!(script.contains(word), "{shell} completions lack {word}");
        }
    }
    assert_exit(&run(&["completions", "tcsh-ish"]), 2);
}

#[test]
fn check_prints_a_scenario_that_checks_to_the_same_hash() {
    let example = servo_example().display().to_string();
    let o = run(&["check", &example, "--set", "loops[0].controller.kp=30", "--network", "builtin"]);
    assert_exit(&o, 0);
    let hash =
        stdout(&o).lines().find_map(|l| l.trim().strip_prefix("config hash ").map(String::from)).expect("a hash line");

    let o = run(&["check", &example, "--set", "loops[0].controller.kp=30", "--network", "builtin", "--print"]);
    assert_exit(&o, 0);
    let printed = stdout(&o);
    assert!(printed.contains("kp = 30.0"), "{printed}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("printed.toml");
    std::fs::write(&path, printed).unwrap();
    let o = run(&["check", path.to_str().unwrap()]);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains(&format!("config hash {hash}")), "{}", stdout(&o));
}

#[test]
fn run_applies_set_and_network_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = run(&[
        "run",
        servo_example().to_str().unwrap(),
        "--network",
        "builtin",
        "--set",
        "duration=500ms",
        "--set",
        "loops[0].controller.kp=12.5",
        "--set",
        "network.builtin.delay={ kind = \"constant\", value = \"7ms\" }",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_exit(&o, 0);
    let s = summary(&out);
    assert_eq!(s["complete"], true);
    assert_eq!(s["reached_s"], 0.5);
    assert_eq!(s["scenario"]["loops"][0]["controller"]["kp"], 12.5);
    assert_eq!(s["network"]["backend"], "builtin");
    assert_eq!(s["flows"][0]["delay"]["mean_s"], 0.007);
}

#[test]
fn quiet_runs_print_nothing_and_verbose_runs_log() {
    let dir = tempfile::tempdir().unwrap();
    let example = servo_example().display().to_string();
    let out = dir.path().join("q");
    let o = run(&[
        "-q",
        "run",
        &example,
        "--network",
        "builtin",
        "--set",
        "duration=100ms",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), "");
    assert_eq!(stderr(&o), "");
    let o = netloop()
        .args(["run", &example, "--network", "builtin", "--set", "duration=100ms", "--out", out.to_str().unwrap()])
        .env("RUST_LOG", "debug")
        .output()
        .unwrap();
    assert_exit(&o, 0);
    assert!(
        stderr(&o).contains("DEBUG") && stderr(&o).contains("scenario loaded"),
        "RUST_LOG=debug logged nothing: {}",
        stderr(&o)
    );
}

#[test]
fn ns3_info_says_where_it_looked_when_the_server_is_missing() {
    let o = netloop().args(["ns3", "info"]).env("NETLOOP_NS3_SERVER", "/no/such/netloop-server").output().unwrap();
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert!(err.contains("/no/such/netloop-server"), "{err}");
    assert!(err.contains("not found"), "{err}");
}

/// A stand-in server: a shell script answering `--info` as told.
fn fake_server(dir: &std::path::Path, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("netloop-server");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn ns3_info_prints_what_the_server_reports() {
    let dir = tempfile::tempdir().unwrap();
    let server = fake_server(
        dir.path(),
        r#"[ "$1" = --info ] && echo '{"software":"fake 1.0","ns3_version":"3.37","networks":["p2p","wifi"],"modules":["core","wifi"],"extra_field":7}'"#,
    );
    let o = netloop().args(["ns3", "info"]).env("NETLOOP_NS3_SERVER", &server).output().unwrap();
    assert_exit(&o, 0);
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("server: ") && lines[0].ends_with("netloop-server"), "{text}");
    assert!(
        text.contains("software: fake 1.0\nns-3 version: 3.37\nnetwork kinds: p2p, wifi\nns-3 modules: core, wifi\n"),
        "{text}"
    );
    assert!(text.contains("extra field: 7"), "{text}");
}

#[test]
fn ns3_info_says_so_when_the_server_predates_info() {
    let dir = tempfile::tempdir().unwrap();
    let server = fake_server(dir.path(), "echo 'Invalid command-line argument: --info' >&2; exit 1");
    let o = run(&["ns3", "info", "--server", server.to_str().unwrap()]);
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert!(err.contains("does not support --info") && err.contains("Invalid command-line argument"), "{err}");
    assert!(stdout(&o).contains(server.to_str().unwrap()), "where it looked is printed: {}", stdout(&o));
}

#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let example = servo_example().display().to_string();
    let mut child =
        netloop().args(["check", &example, "--print"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take()); // the reader goes away before anything is written
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{:?}: {err}", o.status);
}
