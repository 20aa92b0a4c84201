//! Every command: help with examples, completions, check, run with --set,
//! -v / -q / RUST_LOG, and `ns3 info` without a server.

use crate::support::{
    assert_exit, assert_exit_saying, netloop, run, servo_example, stderr, stdout, summary,
};

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
    let o = run(&[
        "check",
        &example,
        "--set",
        "loops[0].controller.kp=30",
        "--network",
        "builtin",
    ]);
    assert_exit(&o, 0);
    let hash = stdout(&o)
        .lines()
        .find_map(|l| l.trim().strip_prefix("config hash ").map(String::from))
        .expect("a hash line");

    let o = run(&[
        "check",
        &example,
        "--set",
        "loops[0].controller.kp=30",
        "--network",
        "builtin",
        "--print",
    ]);
    assert_exit(&o, 0);
    let printed = stdout(&o);
    assert!(printed.contains("kp = 30.0"), "{printed}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("printed.toml");
    std::fs::write(&path, printed).unwrap();
    let o = run(&["check", path.to_str().unwrap()]);
    assert_exit(&o, 0);
    assert!(
        stdout(&o).contains(&format!("config hash {hash}")),
        "{}",
        stdout(&o)
    );
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

/// A short builtin run of the servo example with `flags` before the
/// command and `RUST_LOG` as given: (stdout with the run directory written
/// as `OUT`, stderr).
fn short_run(flags: &[&str], rust_log: Option<&str>) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (example, out) = (
        servo_example().display().to_string(),
        dir.path().join("run").display().to_string(),
    );
    let mut args = flags.to_vec();
    args.extend([
        "run",
        &example,
        "--network",
        "builtin",
        "--set",
        "duration=100ms",
        "--out",
        &out,
    ]);
    let mut command = netloop();
    command.args(&args);
    if let Some(filter) = rust_log {
        command.env("RUST_LOG", filter);
    }
    let o = command.output().unwrap();
    assert_exit(&o, 0);
    assert_eq!(
        summary(std::path::Path::new(&out))["complete"],
        true,
        "{args:?}"
    );
    (stdout(&o).replace(&out, "OUT"), stderr(&o))
}

/// Log lines at `level` (tracing's fmt format: `<time> LEVEL target: message`).
fn log_lines<'a>(stderr: &'a str, level: &str) -> Vec<&'a str> {
    stderr
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some(level))
        .collect()
}

#[test]
fn verbose_adds_debug_log_lines_that_a_plain_run_does_not_print() {
    let (plain_out, plain_err) = short_run(&[], None);
    assert!(
        plain_out.contains("run complete") && plain_out.contains("results in OUT"),
        "{plain_out}"
    );
    assert_eq!(plain_err, "", "a plain run logs nothing below warnings");

    for flag in ["-v", "--verbose", "-vv"] {
        let (out, err) = short_run(&[flag], None);
        assert_eq!(out, plain_out, "{flag} leaves the normal output alone");
        let debug = log_lines(&err, "DEBUG");
        assert!(
            debug
                .iter()
                .any(|l| l.contains("scenario loaded and checked")),
            "{flag}: no debug line:\n{err}"
        );
        let logged = ["TRACE", "DEBUG", "INFO"]
            .iter()
            .map(|level| log_lines(&err, level).len())
            .sum::<usize>();
        assert_eq!(
            logged,
            err.lines().count(),
            "{flag}: stderr holds log lines only:\n{err}"
        );
    }

    // RUST_LOG overrides -v, and works alone.
    let (_, err) = short_run(&["-v"], Some("warn"));
    assert_eq!(err, "", "RUST_LOG=warn wins over -v");
    let (_, err) = short_run(&[], Some("bridge=debug"));
    assert!(
        !log_lines(&err, "DEBUG").is_empty(),
        "RUST_LOG=bridge=debug logged nothing: {err}"
    );
}

#[test]
fn quiet_silences_the_normal_output_of_run_and_check() {
    let (out, err) = short_run(&["-q"], None);
    assert_eq!((out.as_str(), err.as_str()), ("", ""), "-q run");
    let o = run(&["--quiet", "check", servo_example().to_str().unwrap()]);
    assert_exit(&o, 0);
    assert_eq!(
        (stdout(&o).as_str(), stderr(&o).as_str()),
        ("", ""),
        "-q check"
    );
    // Errors still show, and -q with -v is refused.
    let o = run(&["-q", "check", "/no/such/scenario.toml"]);
    assert_exit_saying(&o, 2, "/no/such/scenario.toml");
    assert_exit(
        &run(&["-q", "-v", "check", servo_example().to_str().unwrap()]),
        2,
    );
}

#[test]
fn ns3_info_says_where_it_looked_when_the_server_is_missing() {
    let o = netloop()
        .args(["ns3", "info"])
        .env("NETLOOP_NS3_SERVER", "/no/such/netloop-server")
        .output()
        .unwrap();
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
    let o = netloop()
        .args(["ns3", "info"])
        .env("NETLOOP_NS3_SERVER", &server)
        .output()
        .unwrap();
    assert_exit(&o, 0);
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("server: ") && lines[0].ends_with("netloop-server"),
        "{text}"
    );
    assert!(
        text.contains("software: fake 1.0\nns-3 version: 3.37\nnetwork kinds: p2p, wifi\nns-3 modules: core, wifi\n"),
        "{text}"
    );
    assert!(text.contains("extra field: 7"), "{text}");
}

#[test]
fn ns3_info_says_so_when_the_server_predates_info() {
    let dir = tempfile::tempdir().unwrap();
    let server = fake_server(
        dir.path(),
        "echo 'Invalid command-line argument: --info' >&2; exit 1",
    );
    let o = run(&["ns3", "info", "--server", server.to_str().unwrap()]);
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert!(
        err.contains("does not support --info") && err.contains("Invalid command-line argument"),
        "{err}"
    );
    assert!(
        stdout(&o).contains(server.to_str().unwrap()),
        "where it looked is printed: {}",
        stdout(&o)
    );
}

#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let example = servo_example().display().to_string();
    let mut child = netloop()
        .args(["check", &example, "--print"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away before anything is written
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        o.status.signal(),
        Some(libc::SIGPIPE),
        "{:?}: {err}",
        o.status
    );
}
