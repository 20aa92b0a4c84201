//! Values that are not numbers, times past the end of simulated time, and
//! metrics that must not hide what happened: found by `check` (exit 2,
//! naming the key), or kept visible in the results.

use std::path::Path;

use crate::support::{
    assert_exit, column, read_csv, root, run, run_sweep, servo_example, stderr, summary,
    write_sweep,
};

/// The Wi-Fi example: it has a radio, a placement and background nodes.
fn wifi_example() -> String {
    std::fs::read_to_string(root().join("examples/servo_wifi_interference.toml")).unwrap()
}

/// `text` with `key = value` as the first line of `[table]` (replacing the
/// key if the table has it), the table appended when the file has none.
fn with_line(text: &str, table: &str, key: &str, value: &str) -> String {
    let header = format!("[{table}]\n");
    let line = format!("{key} = {value}\n");
    let Some(at) = text.find(&header) else {
        return format!("{text}\n{header}{line}");
    };
    let body_start = at + header.len();
    let body_end = text[body_start..]
        .find("\n[")
        .map_or(text.len(), |i| body_start + i + 1);
    let body: String = text[body_start..body_end]
        .lines()
        .filter(|l| !l.starts_with(&format!("{key} =")))
        .map(|l| format!("{l}\n"))
        .collect();
    format!("{}{line}{body}{}", &text[..body_start], &text[body_end..])
}

/// (table, key, the key path the error must name, a value to put in the
/// array when the key is a list): every kind of float key, in every part of
/// a scenario.
const FLOAT_KEYS: &[(&str, &str, &str, Option<&str>)] = &[
    ("network.radio", "tx_power", "network.radio.tx_power", None),
    (
        "network.radio",
        "log_distance_exponent",
        "network.radio.log_distance_exponent",
        None,
    ),
    (
        "network.radio",
        "antenna_height",
        "network.radio.antenna_height",
        None,
    ),
    (
        "network.radio",
        "reference_loss",
        "network.radio.reference_loss",
        None,
    ),
    (
        "network.radio",
        "nakagami_m",
        "network.radio.nakagami_m[1]",
        Some("[1.5, X, 0.75]"),
    ),
    (
        "network.placement",
        "spacing",
        "network.placement.spacing",
        None,
    ),
    (
        "network.placement",
        "background_radius",
        "network.placement.background_radius",
        None,
    ),
    (
        "network.placement",
        "positions",
        "network.placement.positions[1][0]",
        Some("[[0.0, 0.0, 0.0], [X, 0.0, 0.0]]"),
    ),
    ("loops.plant", "inertia", "loops[0].plant.inertia", None),
    (
        "loops.sensor",
        "noise_std",
        "loops[0].sensor.noise_std",
        None,
    ),
    (
        "loops.actuator",
        "initial",
        "loops[0].actuator.initial",
        None,
    ),
    ("loops.controller", "kp", "loops[0].controller.kp", None),
    ("loops.reference", "high", "loops[0].reference.high", None),
    (
        "loops.mobility",
        "origin",
        "loops[0].mobility.origin[2]",
        Some("[0.0, 0.0, X]"),
    ),
];

fn check_file(dir: &Path, name: &str, text: &str) -> (std::process::Output, String) {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let o = run(&["check", path.to_str().unwrap()]);
    (o, path.display().to_string())
}

#[track_caller]
fn assert_names_non_finite(o: &std::process::Output, key: &str, written: &str, place: &str) {
    let err = stderr(o);
    assert_exit(o, 2);
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.starts_with(&format!("error: `{key}`: must be a finite number")),
        "{written}: {err}"
    );
    assert!(
        err.contains(place),
        "{written}: the error does not point at {place}:\n{err}"
    );
}

#[test]
fn every_non_finite_float_is_rejected_by_key_in_the_file_and_through_set() {
    let dir = tempfile::tempdir().unwrap();
    let base = wifi_example();
    let base_file = dir.path().join("base.toml");
    std::fs::write(&base_file, &base).unwrap();
    for &(table, key, path, list) in FLOAT_KEYS {
        for literal in ["nan", "inf", "-inf"] {
            let value = list.map_or(literal.to_string(), |l| l.replace('X', literal));
            // Written in the file: the error points at its line.
            let text = with_line(&base, table, key, &value);
            let line = text
                .lines()
                .position(|l| l == format!("{key} = {value}"))
                .unwrap()
                + 1;
            let (o, file) = check_file(dir.path(), "x.toml", &text);
            assert_names_non_finite(
                &o,
                path,
                &format!("{key} = {value}"),
                &format!("{file}:{line}:"),
            );
            // Through --set on the unchanged example: the error names the override.
            let set_path = if table.starts_with("loops.") {
                format!("loops[0].{}.{key}", &table["loops.".len()..])
            } else {
                format!("{table}.{key}")
            };
            let set = format!("{set_path}={value}");
            let o = run(&["check", base_file.to_str().unwrap(), "--set", &set]);
            assert_names_non_finite(&o, path, &set, &format!("--set {set}"));
        }
    }
}

/// The builtin network's and the ns-3 networks' own numbers too.
#[test]
fn non_finite_network_numbers_are_rejected_by_key() {
    let example = servo_example().display().to_string();
    let cases = [
        (
            "network.builtin.loss={ kind = \"bernoulli\", p = nan }",
            "network.builtin.loss.p",
            true,
        ),
        ("network.ns3.loss_rate=nan", "network.ns3.loss_rate", false),
        (
            "loops[0].reference.final=inf",
            "loops[0].reference.final",
            true,
        ),
        (
            "loops[0].controller.kd=-inf",
            "loops[0].controller.kd",
            false,
        ),
    ];
    for (set, key, builtin) in cases {
        let mut args = vec!["check", &example, "--set", set];
        if builtin {
            args.extend(["--network", "builtin"]);
        }
        let o = run(&args);
        assert_names_non_finite(&o, key, set, &format!("--set {set}"));
    }
}

/// An infinite saturation limit on its own side means "no limit" (one
/// channel of a list cannot leave the key out); on the other side it is
/// an error like any other non-finite number.
#[test]
fn infinite_limits_are_allowed_only_on_their_own_side() {
    let example = servo_example().display().to_string();
    for set in [
        "loops[0].actuator.max=inf",
        "loops[0].actuator.min=-inf",
        "loops[0].controller.u_max=inf",
    ] {
        let o = run(&["check", &example, "--network", "builtin", "--set", set]);
        assert_exit(&o, 0);
    }
    for (set, key) in [
        ("loops[0].actuator.max=-inf", "loops[0].actuator.max"),
        ("loops[0].actuator.min=inf", "loops[0].actuator.min"),
        ("loops[0].controller.u_min=nan", "loops[0].controller.u_min"),
    ] {
        let o = run(&["check", &example, "--network", "builtin", "--set", set]);
        assert_names_non_finite(&o, key, set, &format!("--set {set}"));
    }
}

/// The limits of item 14, through `--set` (the corpus has them as files).
#[test]
fn zero_and_absurd_counts_are_rejected_by_key() {
    let example = servo_example().display().to_string();
    let cases = [
        ("run=0", "run", "must be at least 1"),
        ("seed=0", "seed", "must be at least 1"),
        (
            "network.server.connect_timeout=0s",
            "network.server.connect_timeout",
            "must be longer than zero",
        ),
        (
            "network.server.step_timeout=0s",
            "network.server.step_timeout",
            "must be longer than zero",
        ),
        (
            "loops[0].plant_node=4294967295",
            "loops[0].plant_node",
            "node indices go up to 65533",
        ),
        // p2p links need two ends.
        (
            "network.ns3.nodes=0",
            "network.ns3.nodes",
            "0 is not in [2, 65534]",
        ),
        (
            "network.ns3.nodes=65535",
            "network.ns3.nodes",
            "at most 65534",
        ),
        (
            "duration=2562048h",
            "duration",
            "must be at most 2^63 - 1 ns",
        ),
    ];
    for backend in ["builtin", "ns3"] {
        for (set, key, message) in cases {
            if key.starts_with("network.ns3.nodes") && backend == "builtin" {
                continue;
            }
            let o = run(&["check", &example, "--network", backend, "--set", set]);
            let err = stderr(&o);
            assert_exit(&o, 2);
            assert!(
                err.starts_with(&format!("error: `{key}`: ")),
                "--set {set}: {err}"
            );
            assert!(
                err.contains(message) && !err.contains("has 0 nodes"),
                "--set {set}: {err}"
            );
        }
    }
    // The largest node index and count are fine.
    let o = run(&[
        "check",
        &example,
        "--network",
        "builtin",
        "--set",
        "loops[0].controller_node=65533",
    ]);
    assert_exit(&o, 0);
}

/// Delays too long for simulated time are scenario errors at their key,
/// for every delay model (the empirical one at its file).
#[test]
fn delays_past_the_time_range_are_check_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("d.txt"), "1\n1e30\n").unwrap();
    let text = std::fs::read_to_string(servo_example()).unwrap();
    let scenario = dir.path().join("s.toml");
    std::fs::write(&scenario, text).unwrap();
    let scenario = scenario.display().to_string();
    let cases = [
        (
            r#"{ kind = "constant", value = "5124095h" }"#,
            "network.builtin.delay.value",
        ),
        (
            r#"{ kind = "uniform", min = "1ms", max = "2562048h" }"#,
            "network.builtin.delay.max",
        ),
        (
            r#"{ kind = "normal", mean = "1562048h", std = "1000000h" }"#,
            "network.builtin.delay.mean",
        ),
        (
            r#"{ kind = "exponential", mean = "5000000h" }"#,
            "network.builtin.delay.mean",
        ),
        (
            r#"{ kind = "exponential", mean = "2000000h", offset = "562048h" }"#,
            "network.builtin.delay.mean",
        ),
        (
            r#"{ kind = "empirical", file = "d.txt" }"#,
            "network.builtin.delay.file",
        ),
    ];
    for (delay, key) in cases {
        let set = format!("network.builtin.delay={delay}");
        for command in ["check", "run"] {
            let out = dir.path().join("out");
            let mut args = vec![command, &scenario, "--network", "builtin", "--set", &set];
            if command == "run" {
                args.extend(["--out", out.to_str().unwrap()]);
            }
            let o = run(&args);
            let err = stderr(&o);
            assert_exit(&o, 2);
            assert!(!err.contains("panicked"), "{err}");
            assert!(
                err.starts_with(&format!("error: `{key}`: ")),
                "{set}: {err}"
            );
            assert!(
                err.contains("passes the last simulated instant"),
                "{set}: {err}"
            );
            assert!(!out.exists());
        }
    }
}

/// Heavy tails inside the limits: draws past 2^64 ns (about 13% of the
/// exponential's, 0.5% of the normal's) never arrive, the run completes,
/// and it is deterministic.
#[test]
fn a_heavy_tailed_delay_cannot_panic_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let example = servo_example().display().to_string();
    for delay in [
        r#"{ kind = "exponential", mean = "2500000h" }"#,
        r#"{ kind = "normal", mean = "1ms", std = "2000000h" }"#,
    ] {
        let set = format!("network.builtin.delay={delay}");
        let check = run(&["check", &example, "--network", "builtin", "--set", &set]);
        assert_exit(&check, 0);
        let mut packets = Vec::new();
        for name in ["a", "b"] {
            let out = dir.path().join(name);
            let o = run(&[
                "run",
                &example,
                "--network",
                "builtin",
                "--set",
                &set,
                "--out",
                out.to_str().unwrap(),
            ]);
            assert_exit(&o, 0);
            assert!(!stderr(&o).contains("panicked"));
            let s = summary(&out);
            assert_eq!(s["complete"], true);
            let totals = &s["totals"];
            assert_eq!(totals["sent"], 600);
            // Nothing arrives within 3 s except, for the normal, the draws truncated near zero.
            assert!(totals["in_flight"].as_u64().unwrap() > 500, "{totals}");
            packets.push(std::fs::read(out.join("packets.csv")).unwrap());
        }
        assert_eq!(packets[0], packets[1], "{delay}: not deterministic");
    }
}

/// The servo example steps its reference at 100 ms. A first run with the
/// reference at 1 settles; one at 1e160 can never settle and its squared
/// error overflows. summary.json says so, and the sweep counts both.
#[test]
fn not_settled_and_overflowing_metrics_stay_visible_in_runs_and_sweeps() {
    let dir = tempfile::tempdir().unwrap();
    let example = servo_example().display().to_string();

    // Settling from the step, against the same run's time series: the end of
    // the last step outside the 2% band, minus the step time.
    let out = dir.path().join("settles");
    let o = run(&[
        "run",
        &example,
        "--network",
        "builtin",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_exit(&o, 0);
    let (header, rows) = read_csv(&out.join("timeseries.csv"));
    let (t, y) = (column(&header, "time"), column(&header, "servo.y.theta"));
    let last_outside = rows
        .iter()
        .map(|r| (r[t].parse::<f64>().unwrap(), r[y].parse::<f64>().unwrap()))
        .filter(|&(t, y)| t >= 0.1 && (y - 1.0).abs() > 0.02)
        .map(|(t, _)| t)
        .fold(0.0, f64::max);
    let expected = ((last_outside + 0.001 - 0.1) * 1e9).round() / 1e9;
    let theta = &summary(&out)["loops"][0]["outputs"][0];
    assert_eq!(theta["settled"], true, "{theta}");
    assert_eq!(theta["settling_time_s"].as_f64(), Some(expected), "{theta}");
    assert_eq!(theta["non_finite"], serde_json::json!({}));
    assert!(crate::support::stdout(&o).contains(&format!("settling {expected:.3}s")));

    let out = dir.path().join("never");
    let o = run(&[
        "run",
        &example,
        "--network",
        "builtin",
        "--set",
        "loops[0].reference.final=1e160",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_exit(&o, 0);
    assert!(
        crate::support::stdout(&o).contains("not settled"),
        "{}",
        crate::support::stdout(&o)
    );
    let theta = &summary(&out)["loops"][0]["outputs"][0];
    assert_eq!(theta["settled"], false, "{theta}");
    assert!(theta["settling_time_s"].is_null(), "{theta}");
    assert!(theta["ise"].is_null(), "{theta}");
    assert_eq!(
        theta["non_finite"],
        serde_json::json!({"ise": "inf"}),
        "{theta}"
    );

    // A sweep over both, two replications each.
    let sweep = write_sweep(
        dir.path(),
        "s.toml",
        "network = \"builtin\"\nreplications = 2\n[[grid]]\nkey = \"loops[0].reference.final\"\nvalues = [1.0, 1e160]\n",
    );
    let out = dir.path().join("sweep");
    let o = run_sweep(&sweep, &out, &["-q"]);
    assert_exit(&o, 0);
    let (header, rows) = read_csv(&out.join("sweep.csv"));
    let (point, ise, settled) = (
        column(&header, "point"),
        column(&header, "servo.theta.ise"),
        column(&header, "servo.theta.settled"),
    );
    for r in &rows {
        let huge = r[point] == "1";
        assert_eq!(r[ise] == "inf", huge, "{r:?}");
        assert_eq!(r[settled], if huge { "0" } else { "1" }, "{r:?}");
    }
    let (header, rows) = read_csv(&out.join("sweep_summary.csv"));
    let col = |name| column(&header, name);
    let row = |p: &str, metric: &str| {
        rows.iter()
            .find(|r| r[col("point")] == p && r[col("metric")] == metric)
            .unwrap()
            .clone()
    };
    let ise = row("1", "servo.theta.ise");
    assert_eq!(
        (
            ise[col("n")].as_str(),
            ise[col("mean")].as_str(),
            ise[col("non_finite")].as_str()
        ),
        ("0", "", "2")
    );
    let settling = row("1", "servo.theta.settling_time_s");
    assert_eq!(
        (
            settling[col("n")].as_str(),
            settling[col("not_settled")].as_str()
        ),
        ("0", "2")
    );
    let settling = row("0", "servo.theta.settling_time_s");
    assert_eq!(
        (
            settling[col("n")].as_str(),
            settling[col("not_settled")].as_str()
        ),
        ("2", "0")
    );
    assert_eq!(settling[col("mean")].parse::<f64>().unwrap(), expected);
    assert_eq!(row("0", "servo.theta.ise")[col("non_finite")], "0");
    assert_eq!(
        row("0", "servo.theta.iae")[col("not_settled")],
        "",
        "only settling rows count settling"
    );
}
