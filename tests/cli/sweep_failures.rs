//! A run that fails and a run that hangs do not stop a sweep: the others
//! complete, the hung one is stopped at its timeout, and both are listed
//! at the end with their errors.

use std::time::Instant;

use crate::support::{assert_exit, column, read_csv, run_sweep, stderr, write_sweep};

#[test]
fn failed_and_hung_runs_are_listed_and_the_others_complete() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(
        dir.path(),
        "mixed.toml",
        r#"
timeout = "3s"
[set]
duration = "300ms"
"network.backend" = "builtin"
[[points]]
"loops[0].controller.kp" = 10.0
[[points]]
"loops[0].controller.kp" = 11.0
"network.backend" = "ns3"
"network.server.binary" = "/no/such/netloop-server"
[[points]]
"loops[0].controller.kp" = 12.0
duration = "100000s"
[[points]]
"loops[0].controller.kp" = 13.0
"#,
    );
    let out = dir.path().join("out");
    let started = Instant::now();
    let o = run_sweep(&sweep, &out, &["--jobs", "2"]);
    let took = started.elapsed();
    assert_exit(&o, 1);
    assert!(
        took.as_secs() < 30,
        "the hung run was not stopped in time: {took:?}"
    );
    let err = stderr(&o);
    assert!(err.contains("2 of 4 runs failed"), "{err}");
    assert!(
        err.contains("/no/such/netloop-server"),
        "the failure's error is not listed: {err}"
    );
    assert!(
        err.contains("timed out after"),
        "the timeout is not listed: {err}"
    );
    assert!(err.contains("--resume"), "{err}");

    let (header, rows) = read_csv(&out.join("sweep.csv"));
    let (kp, status, error) = (
        column(&header, "loops[0].controller.kp"),
        column(&header, "status"),
        column(&header, "error"),
    );
    let status_of = |k: &str| {
        rows.iter()
            .find(|r| r[kp] == k)
            .map(|r| (r[status].clone(), r[error].clone()))
            .unwrap()
    };
    assert_eq!(status_of("10.0").0, "complete");
    assert_eq!(status_of("13.0").0, "complete");
    assert_eq!(status_of("11.0").0, "failed");
    assert!(status_of("11.0").1.contains("/no/such/netloop-server"));
    assert_eq!(status_of("12.0").0, "timeout");
    // The stopped run kept its partial results and says so.
    let hung = rows.iter().find(|r| r[kp] == "12.0").unwrap();
    let s = crate::support::summary(&out.join(&hung[column(&header, "run_dir")]));
    assert_eq!(s["complete"], false);
}

#[test]
fn killing_the_sweep_stops_its_runs_which_keep_partial_results() {
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(
        dir.path(),
        "endless.toml",
        r#"
network = "builtin"
replications = 2
[set]
duration = "100000s"
"#,
    );
    let out = dir.path().join("out");
    let mut child = crate::support::netloop()
        .args([
            "sweep",
            sweep.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--jobs",
            "2",
            "-q",
        ])
        .spawn()
        .unwrap();
    // Both runs have started and are simulating once their time series exist.
    let started = Instant::now();
    let running = |out: &std::path::Path| {
        std::fs::read_dir(out.join("runs"))
            .map(|d| {
                d.filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .path()
                        .join("timeseries.csv.partial")
                        .exists()
                })
                .count()
            })
            .unwrap_or(0)
    };
    while running(&out) < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the runs did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL: the sweep cannot clean up itself
    child.wait().unwrap();
    let runs: Vec<_> = std::fs::read_dir(out.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 2);
    for run in runs {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !run.join("summary.json").exists() {
            assert!(
                Instant::now() < deadline,
                "{} still runs after the sweep was killed",
                run.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // summary.json is written atomically, so once it exists it is whole.
        let s = crate::support::summary(&run);
        assert_eq!(s["complete"], false);
        assert!(
            s["error"].as_str().unwrap().contains("interrupt"),
            "{}",
            s["error"]
        );
    }
}

/// The command printed at the end resumes this very sweep: its directory,
/// its jobs and its timeout, not a fresh sweep into the default directory.
#[test]
fn the_printed_resume_command_resumes_this_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(
        dir.path(),
        "half.toml",
        r#"
[set]
duration = "300ms"
"network.backend" = "builtin"
[[points]]
"loops[0].controller.kp" = 10.0
[[points]]
"loops[0].controller.kp" = 11.0
"network.backend" = "ns3"
"network.server.binary" = "/no/such/netloop-server"
"#,
    );
    let out = dir.path().join("my out");
    let o = crate::support::netloop()
        .current_dir(dir.path())
        .args([
            "sweep",
            sweep.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--jobs",
            "1",
            "--timeout",
            "30s",
        ])
        .output()
        .unwrap();
    assert_exit(&o, 1);
    let err = stderr(&o);
    let hint = err
        .lines()
        .find_map(|l| l.split_once("rerun only these with: "))
        .map(|(_, c)| c.to_string());
    let hint = hint.unwrap_or_else(|| panic!("no resume command: {err}"));
    assert!(hint.starts_with("netloop sweep "), "{hint}");
    for part in [
        "--out '",
        "my out'",
        "--jobs 1",
        "--timeout 30s",
        "--resume",
    ] {
        assert!(hint.contains(part), "{part} is missing from {hint}");
    }
    // Follow it literally, as a user would in a shell.
    let command = hint.replacen("netloop", env!("CARGO_BIN_EXE_netloop"), 1);
    let o = std::process::Command::new("sh")
        .current_dir(dir.path())
        .args(["-c", &command])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert!(
        err.contains("resume: 1 of 2 runs already complete, 1 to run"),
        "{err}"
    );
    assert!(err.contains("1 of 2 runs failed"), "{err}");
    assert!(
        !dir.path().join("results").exists(),
        "the resume ran a new sweep into results/"
    );
}
