//! A scenario file is read once: `netloop check` and `netloop run` take it
//! from a pipe (`/dev/stdin`, `<(...)`), which can be read only once. They
//! used to read it twice (is it a graph scenario? then load it), and the
//! second read found the pipe empty.

use std::io::Write;
use std::process::Stdio;

use crate::support::*;

/// `netloop ARGS` with `text` on its standard input.
fn with_stdin(args: &[&str], text: &str) -> std::process::Output {
    let mut child = netloop()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the netloop binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn check_reads_a_loop_scenario_from_a_pipe() {
    let text = std::fs::read_to_string(servo_example()).unwrap();
    let o = with_stdin(&["check", "/dev/stdin", "--network", "builtin"], &text);
    assert_exit(&o, 0);
    assert!(stdout(&o).starts_with("/dev/stdin: ok"), "{}", stdout(&o));
}

#[test]
fn check_reads_a_graph_scenario_from_a_pipe() {
    let text = std::fs::read_to_string(root().join("examples/cascade_servo_graph.toml")).unwrap();
    let o = with_stdin(&["check", "/dev/stdin"], &text);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("evaluation order"), "{}", stdout(&o));
}

#[test]
fn run_reads_a_loop_scenario_from_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let text = std::fs::read_to_string(servo_example()).unwrap();
    let o = with_stdin(
        &[
            "run",
            "/dev/stdin",
            "--network",
            "builtin",
            "--set",
            "duration=200ms",
            "-q",
            "--out",
            out.to_str().unwrap(),
        ],
        &text,
    );
    assert_exit(&o, 0);
    assert!(out.join("summary.json").is_file());
}
