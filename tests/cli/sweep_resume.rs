//! Interrupting a sweep with SIGINT and running it again with --resume
//! completes it: no run lost, none run twice.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{
    assert_resumes, column, complete_run_dirs, netloop, read_csv, sweep_args, write_sweep,
};

/// `timing.json` of every complete run, by directory name.
fn complete_runs(out: &Path) -> BTreeMap<String, String> {
    let mut done = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(out.join("runs")) else {
        return done;
    };
    for e in entries {
        let dir = e.unwrap().path();
        let Ok(text) = std::fs::read_to_string(dir.join("summary.json")) else {
            continue;
        };
        let Ok(s) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        // timing.json is written just after summary.json.
        if let (true, Ok(timing)) = (
            s["complete"] == true,
            std::fs::read_to_string(dir.join("timing.json")),
        ) {
            done.insert(
                dir.file_name().unwrap().to_string_lossy().into_owned(),
                timing,
            );
        }
    }
    done
}

#[test]
fn an_interrupted_sweep_resumes_without_losing_or_repeating_runs() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(
        dir.path(),
        "long.toml",
        r#"
network = "builtin"
replications = 4
[set]
duration = "20s"
"loops[0].sensor.noise_std" = 0.01
[[grid]]
key = "loops[0].controller.kp"
values = [10.0, 20.0]
"#,
    );
    let out = dir.path().join("out");
    let args = sweep_args(&sweep, &out);
    let mut child = netloop()
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once two runs are complete.
    let started = Instant::now();
    while complete_runs(&out).len() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no run completed within a minute"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep ended before it was interrupted"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the child we spawned and have not reaped.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let before = complete_runs(&out);
    assert!(
        before.len() >= 2 && before.len() < 8,
        "{} runs complete after the interrupt",
        before.len()
    );
    let (header, rows) = read_csv(&out.join("sweep.csv"));
    assert_eq!(rows.len(), 8, "every planned run has a row, done or not");
    let status = column(&header, "status");
    assert_eq!(
        rows.iter().filter(|r| r[status] == "complete").count(),
        before.len()
    );

    assert_resumes(&args, before.len(), 8);
    let after = complete_runs(&out);
    assert_eq!(after.len(), 8, "a run was lost");
    for (run, timing) in &before {
        assert_eq!(&after[run], timing, "run {run} was complete but ran again");
    }
    let (dirs, rows) = complete_run_dirs(&out);
    assert_eq!(
        (rows, dirs.len()),
        (8, 8),
        "a run is missing, incomplete or listed twice"
    );
}
