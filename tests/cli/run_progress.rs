//! `netloop run`'s progress bar: drawn on a terminal (here a pseudo-terminal
//! from util-linux `script`), never with `-q` or when stderr is a pipe.

use std::process::Command;

use crate::support::{assert_exit, run, servo_example, stderr};

/// Runs `netloop <args>` with stdin, stdout and stderr on a pseudo-terminal;
/// returns what the terminal showed, or `None` without `script`.
fn on_a_terminal(args: &[&str]) -> Option<String> {
    let mut line = vec![env!("CARGO_BIN_EXE_netloop").to_string()];
    line.extend(args.iter().map(|a| format!("'{a}'")));
    let o = Command::new("script")
        .args(["-qec", &line.join(" "), "/dev/null"])
        .env_remove("RUST_LOG")
        .output()
        .ok()?;
    assert_exit(&o, 0);
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

fn long_run(out: &str) -> Vec<String> {
    [
        "run",
        servo_example().to_str().unwrap(),
        "--network",
        "builtin",
        "--set",
        "duration=60s",
        "--set",
        "record_every=1000",
        "--out",
        out,
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn a_run_on_a_terminal_shows_simulated_time_rate_and_eta() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let args = long_run(out.to_str().unwrap());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some(screen) = on_a_terminal(&args) else {
        eprintln!("no `script` here: skipped");
        return;
    };
    assert!(screen.contains("s / 60s simulated"), "{screen}");
    assert!(
        screen.contains("x real time") && screen.contains("ETA"),
        "{screen}"
    );

    // -q: no bar, even on a terminal.
    let mut quiet = vec!["-q"];
    quiet.extend(&args);
    let screen = on_a_terminal(&quiet).unwrap();
    assert!(!screen.contains("simulated"), "{screen}");

    // stderr a pipe: no bar.
    let o = run(&args);
    assert_exit(&o, 0);
    assert!(!stderr(&o).contains("simulated"), "{}", stderr(&o));
}
