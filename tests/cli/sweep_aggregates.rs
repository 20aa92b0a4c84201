//! A 2 x 2 sweep with 3 replications over the builtin network: 12 run
//! directories, and confidence intervals that match a hand computation.

use crate::support::{assert_exit, column, read_csv, run_sweep, summary, write_sweep};

const SWEEP: &str = r#"
network = "builtin"
replications = 3

[set]
duration = "500ms"
"loops[0].sensor.noise_std" = 0.01
"network.builtin.loss" = { kind = "bernoulli", p = 0.1 }

[[grid]]
key = "loops[0].controller.kp"
values = [10.0, 20.0]

[[grid]]
key = "network.builtin.delay.value"
values = ["2ms", "8ms"]
"#;

/// t quantile of Student's t with 2 degrees of freedom at 0.975, by hand:
/// F(t) = 1/2 + t / (2 sqrt(2 + t^2)) = 0.975 gives t / sqrt(2 + t^2) = 0.95,
/// so t^2 = 2 * 0.9025 / (1 - 0.9025).
fn t_975_2dof() -> f64 {
    (2.0 * 0.9025 / (1.0 - 0.9025_f64)).sqrt()
}

#[test]
fn a_2x2_sweep_with_3_replications_gives_12_runs_and_correct_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(dir.path(), "grid.toml", SWEEP);
    let out = dir.path().join("out");
    let o = run_sweep(&sweep, &out, &["--jobs", "2"]);
    assert_exit(&o, 0);

    // 12 run directories, each complete, named by its config hash.
    let runs: Vec<_> = std::fs::read_dir(out.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 12);
    for r in &runs {
        let s = summary(r);
        assert_eq!(s["complete"], true, "{}", r.display());
        assert_eq!(
            s["config_hash"].as_str().unwrap(),
            r.file_name().unwrap().to_str().unwrap()
        );
    }

    let (header, rows) = read_csv(&out.join("sweep.csv"));
    assert_eq!(rows.len(), 12);
    let (kp, delay, rep, run_no, seed, status, iae) = (
        column(&header, "loops[0].controller.kp"),
        column(&header, "network.builtin.delay.value"),
        column(&header, "replication"),
        column(&header, "run"),
        column(&header, "seed"),
        column(&header, "status"),
        column(&header, "servo.theta.iae"),
    );
    assert!(rows
        .iter()
        .all(|r| r[status] == "complete" && r[seed] == "1" && r[rep] == r[run_no]));
    let point: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[kp] == "20.0" && r[delay] == "8ms")
        .collect();
    assert_eq!(point.len(), 3);
    let values: Vec<f64> = point.iter().map(|r| r[iae].parse().unwrap()).collect();
    // Replications differ (noise and losses follow the run number).
    assert!(
        values[0] != values[1] && values[1] != values[2],
        "{values:?}"
    );

    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let std = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let half = t_975_2dof() * std / n.sqrt();

    let (sh, srows) = read_csv(&out.join("sweep_summary.csv"));
    let row = srows
        .iter()
        .find(|r| {
            r[column(&sh, "loops[0].controller.kp")] == "20.0"
                && r[column(&sh, "network.builtin.delay.value")] == "8ms"
                && r[column(&sh, "metric")] == "servo.theta.iae"
        })
        .expect("a summary row for kp=20, delay=8ms, IAE");
    let get = |name: &str| row[column(&sh, name)].parse::<f64>().unwrap();
    assert_eq!(get("n"), 3.0);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1e-12);
    assert!(close(get("mean"), mean), "{} vs {mean}", get("mean"));
    assert!(close(get("std"), std), "{} vs {std}", get("std"));
    assert!(
        close(get("ci95_half_width"), half),
        "{} vs {half}",
        get("ci95_half_width")
    );
    assert!(close(get("ci95_low"), mean - half) && close(get("ci95_high"), mean + half));
    // 4 points, every metric of sweep.csv summarised for each.
    let metrics = header.len() - column(&header, "error") - 2; // minus wall_s
    assert_eq!(srows.len(), 4 * metrics);
}

#[test]
fn zip_and_explicit_points_expand_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(
        dir.path(),
        "zip.toml",
        r#"
network = "builtin"
[set]
duration = "200ms"
[[zip]]
keys = ["loops[0].sensor.period", "loops[0].controller.period"]
values = [["10ms", "10ms"], ["20ms", "20ms"]]
[[points]]
"loops[0].controller.kp" = 5.0
[[points]]
"loops[0].controller.kp" = 15.0
"loops[0].controller.ki" = 0.0
"#,
    );
    let out = dir.path().join("out");
    let o = run_sweep(&sweep, &out, &[]);
    assert_exit(&o, 0);
    let (header, rows) = read_csv(&out.join("sweep.csv"));
    assert_eq!(rows.len(), 4, "2 zipped rows x 2 explicit points");
    let ki = column(&header, "loops[0].controller.ki");
    let sp = column(&header, "loops[0].sensor.period");
    let cp = column(&header, "loops[0].controller.period");
    assert!(rows.iter().all(|r| r[sp] == r[cp]));
    assert_eq!(rows.iter().filter(|r| r[ki] == "0.0").count(), 2);
    assert_eq!(rows.iter().filter(|r| r[ki].is_empty()).count(), 2);
}

#[test]
fn a_bad_sweep_value_is_bad_input_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(
        dir.path(),
        "bad.toml",
        r#"
network = "builtin"
[[grid]]
key = "loops[0].sensor.period"
values = ["10ms", "2500us"]
"#,
    );
    let out = dir.path().join("out");
    let o = run_sweep(&sweep, &out, &[]);
    assert_exit(&o, 2);
    let err = crate::support::stderr(&o);
    assert!(
        err.contains("loops[0].sensor.period") && err.contains("2500us"),
        "{err}"
    );
    assert!(!out.join("runs").exists(), "nothing may run");

    let typo = write_sweep(dir.path(), "typo.toml", "replication = 3\n");
    let o = run_sweep(&typo, &out, &[]);
    assert_exit(&o, 2);
    let err = crate::support::stderr(&o);
    assert!(
        err.contains("replication") && err.contains("typo.toml:2:"),
        "{err}"
    );
}
