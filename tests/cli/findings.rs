//! Findings from runs: control metrics on a trajectory known in closed
//! form, platoon spacing errors, and the pendulum delay study, whose runs
//! above the delay margin end at their stop condition.

use std::path::Path;

use crate::support::{assert_exit, column, read_csv, run, run_sweep, summary};

fn netloop_run(dir: &Path, scenario: &str) -> serde_json::Value {
    let file = dir.join("s.toml");
    std::fs::write(&file, scenario).unwrap();
    let out = dir.join("out");
    let o = run(&[
        "run",
        "-q",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_exit(&o, 0);
    summary(&out)
}

fn close(got: &serde_json::Value, expected: f64, what: &str) {
    let got = got
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: not a number: {got}"));
    assert!(
        (got - expected).abs() <= 1e-9 * expected.abs().max(1.0),
        "{what}: {got} vs {expected}"
    );
}

/// dx/dt = -x + u with u = 1 (an open loop on a unit step), x(0) = 0: the
/// error e = 1 - x = e^{-t}. The metrics are rectangle sums over the steps
/// t_k = k h, k < N = T / h, so with q = e^{-h}:
/// IAE = h (1 - q^N) / (1 - q), ISE = h (1 - q^2N) / (1 - q^2),
/// ITAE = h² q (1 - N q^{N-1} + (N - 1) q^N) / (1 - q)², peak |e| = 1,
/// ∫|u| = ∫u² = T, J = 2 ISE + 3 T for Q = 2, R = 3; the output leaves the
/// 2% band at t = ln 50 = 3.91202 s, so the step that ends it ends at 3.913 s.
#[test]
fn metrics_of_a_first_order_step_response_match_their_closed_forms() {
    let dir = tempfile::tempdir().unwrap();
    let s = netloop_run(
        dir.path(),
        r#"
duration = "5s"
step = "1ms"
[sync]
scheme = "time_stepping"
period = "1ms"
[network]
backend = "builtin"
[network.builtin]
delay = { kind = "constant", value = "0s" }
[[loops]]
name = "lag"
plant_node = 0
controller_node = 0
[loops.plant]
kind = "state_space"
a = [[-1.0]]
b = [[1.0]]
c = [[1.0]]
[loops.sensor]
period = "1ms"
[loops.actuator]
min = -10.0
max = 10.0
[loops.controller]
kind = "open_loop"
[loops.reference]
kind = "step"
final = 1.0
[loops.metrics]
setpoint = { x0 = 1.0 }
q = [2.0]
r = [[3.0]]
"#,
    );
    let (h, t_end) = (1e-3_f64, 5.0_f64);
    let n = (t_end / h).round();
    let q = (-h).exp();
    let iae = h * (1.0 - q.powf(n)) / (1.0 - q);
    let ise = h * (1.0 - q.powf(2.0 * n)) / (1.0 - q * q);
    let itae = h * h * q * (1.0 - n * q.powf(n - 1.0) + (n - 1.0) * q.powf(n)) / (1.0 - q).powi(2);
    let lp = &s["loops"][0];
    let y = &lp["outputs"][0];
    assert_eq!(y["output"], "y0");
    assert_eq!(y["against"], "reference");
    close(&y["iae"], iae, "iae");
    close(&y["ise"], ise, "ise");
    close(&y["itae"], itae, "itae");
    close(&y["peak_deviation"], 1.0, "peak");
    assert_eq!(y["overshoot_percent"], 0.0);
    assert_eq!(y["settled"], true);
    close(&y["settling_time_s"], 3.913, "settling");
    // The state, against its declared set point 1: the same error.
    let x = &lp["states"][0];
    assert_eq!(
        (x["state"].as_str(), x["against"].as_str()),
        (Some("x0"), Some("setpoint"))
    );
    assert_eq!(x["setpoint"], 1.0);
    close(&x["iae"], iae, "state iae");
    close(&x["ise"], ise, "state ise");
    let u = &lp["controls"][0];
    assert_eq!(u["input"], "u0");
    close(&u["integral_abs"], t_end, "∫|u|");
    close(&u["integral_square"], t_end, "∫u²");
    close(&u["peak_abs"], 1.0, "peak |u|");
    assert_eq!(u["saturated_fraction"], 0.0);
    close(&lp["quadratic_cost"], 2.0 * ise + 3.0 * t_end, "J");
    assert_eq!(s["status"], "complete");
    assert!(s.get("stop").is_none());
}

/// Three vehicles at 20 m/s with CACC gains zero (so no one accelerates):
/// gaps stay 26 m and 21 m (positions 100, 70, 45, length 4), the policy
/// asks 2 + 0.7 · 20 = 16 m, so spacing errors are 10 m and 5 m all the
/// way: RMS = max = the error, L2 = error · sqrt(T), and the second
/// follower's ratios to the first are 0.5: string stable. A set point
/// declared for the leader's speed makes its state v's error zero.
#[test]
fn platoon_spacing_errors_and_string_stability_have_known_values() {
    let dir = tempfile::tempdir().unwrap();
    let vehicle = |name: &str, p: f64, extra: &str| {
        format!(
            r#"
[[loops]]
name = "{name}"
plant_node = {node}
controller_node = {node}
{extra}
[loops.plant]
kind = "vehicle"
x0 = [{p}, 20.0, 0.0]
outputs = ["v"]
[loops.sensor]
period = "10ms"
{sensor}
[loops.controller]
{controller}
"#,
            node = match name {
                "leader" => 0,
                "f1" => 1,
                _ => 2,
            },
            sensor = if extra.is_empty() {
                ""
            } else {
                "source = \"radar\""
            },
            controller = if extra.is_empty() {
                "kind = \"open_loop\""
            } else {
                "kind = \"cacc\"\nkp = 0.0\nkd = 0.0\nfeedforward = 0.0"
            },
        )
    };
    let scenario = format!(
        r#"
duration = "2s"
step = "1ms"
[sync]
scheme = "time_stepping"
period = "10ms"
[network]
backend = "builtin"
[network.builtin]
delay = {{ kind = "constant", value = "1ms" }}
{}
[loops.metrics]
setpoint = {{ v = 20.0 }}
{}
{}
"#,
        vehicle("leader", 100.0, ""),
        vehicle("f1", 70.0, "predecessor = \"leader\""),
        vehicle("f2", 45.0, "predecessor = \"f1\""),
    );
    let s = netloop_run(dir.path(), &scenario);
    let p = &s["platoon"];
    let f = &p["followers"];
    assert_eq!(
        (f[0]["loop"].as_str(), f[0]["predecessor"].as_str()),
        (Some("f1"), Some("leader"))
    );
    for (i, e) in [(0, 10.0), (1, 5.0)] {
        close(&f[i]["spacing_error_rms_m"], e, "rms");
        close(&f[i]["spacing_error_max_m"], e, "max");
        close(&f[i]["spacing_error_l2"], e * 2f64.sqrt(), "l2");
    }
    assert!(f[0]["peak_ratio"].is_null());
    close(&f[1]["peak_ratio"], 0.5, "peak ratio");
    close(&f[1]["l2_ratio"], 0.5, "l2 ratio");
    close(&p["worst_peak_ratio"], 0.5, "worst");
    assert_eq!(p["string_stable"], true);
    // The set point is the leader's state v's (its output v follows the
    // open loop's zero reference).
    let v = &s["loops"][0]["states"][1];
    assert_eq!(
        (v["state"].as_str(), v["against"].as_str()),
        (Some("v"), Some("setpoint"))
    );
    assert_eq!(v["iae"].as_f64(), Some(0.0));
}

/// An inverted pendulum balanced by state feedback over the builtin
/// network: 5 ms each way is well inside the delay margin, 150 ms well
/// beyond it (the pendulum falls within a second or two). Every run
/// beyond it ends at the stop condition, the sweep reports an unstable
/// fraction of 0 and 1 with Wilson intervals ([0, 0.5615] and
/// [0.4385, 1] for 3 runs: z² / (3 + z²) = 0.56149), and exits 0.
#[test]
fn the_pendulum_delay_study_finds_the_delay_margin() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pendulum.toml"),
        r#"
duration = "3s"
step = "1ms"
stop_when = "abs(pendulum.theta) > 1.5"
[sync]
scheme = "time_stepping"
period = "1ms"
[network]
backend = "builtin"
[network.builtin]
delay = { kind = "constant", value = "5ms" }
[[loops]]
name = "pendulum"
[loops.plant]
kind = "inverted_pendulum"
x0 = [0.0, 0.0, 0.1, 0.0]
outputs = ["x", "v", "theta", "omega"]
[loops.sensor]
period = "5ms"
noise_std = 0.001
# LQR for Q = diag(1, 0, 1, 0), R = 1 on the default cart and pendulum.
[loops.controller]
kind = "state_feedback"
k = [[-1.0, -1.6567, -18.6854, -3.4594]]
"#,
    )
    .unwrap();
    let sweep = dir.path().join("delay.toml");
    std::fs::write(
        &sweep,
        r#"
scenario = "pendulum.toml"
replications = 3
[[grid]]
key = "network.builtin.delay.value"
values = ["5ms", "150ms"]
"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = run_sweep(&sweep, &out, &["--jobs", "2"]);
    assert_exit(&o, 0);

    let (header, rows) = read_csv(&out.join("sweep.csv"));
    let (delay, status, dir_col, stop_time) = (
        column(&header, "network.builtin.delay.value"),
        column(&header, "status"),
        column(&header, "run_dir"),
        column(&header, "stop.time_s"),
    );
    assert_eq!(rows.len(), 6);
    for r in &rows {
        let expected = if r[delay] == "5ms" {
            "complete"
        } else {
            "unstable"
        };
        assert_eq!(r[status], expected, "{r:?}");
        let run_dir = out.join(&r[dir_col]);
        let s = summary(&run_dir);
        assert_eq!(s["complete"], true);
        assert_eq!(s["status"], expected);
        // The time series is whole (not .partial) and ends at the stop:
        // its last row is the first one with |theta| > 1.5.
        let (ts_header, ts) = read_csv(&run_dir.join("timeseries.csv"));
        assert!(run_dir.join("packets.csv").exists());
        let theta = column(&ts_header, "pendulum.x.theta");
        let last = ts.last().unwrap();
        let fell = |row: &Vec<String>| row[theta].parse::<f64>().unwrap().abs() > 1.5;
        if expected == "unstable" {
            let t: f64 = last[0].parse().unwrap();
            assert_eq!(s["stop"]["time_s"].as_f64(), Some(t));
            assert_eq!(r[stop_time].parse::<f64>().unwrap(), t);
            assert!(t < 3.0);
            assert_eq!(s["reached_s"].as_f64(), Some(t));
            assert!(fell(last));
            assert_eq!(ts.iter().filter(|row| fell(row)).count(), 1);
            assert_eq!(s["stop"]["condition"], "unstable");
        } else {
            assert_eq!(last[0], "3");
            assert!(ts.iter().all(|row| !fell(row)));
        }
    }

    let (header, rows) = read_csv(&out.join("sweep_summary.csv"));
    let (delay, metric, n, mean, lo, hi) = (
        column(&header, "network.builtin.delay.value"),
        column(&header, "metric"),
        column(&header, "n"),
        column(&header, "mean"),
        column(&header, "ci95_low"),
        column(&header, "ci95_high"),
    );
    let fraction = |d: &str| {
        rows.iter()
            .find(|r| r[delay] == d && r[metric] == "unstable_fraction")
            .unwrap_or_else(|| panic!("no unstable_fraction row for {d}"))
    };
    let bound = 0.561_49;
    let below = fraction("5ms");
    assert_eq!((below[n].as_str(), below[mean].as_str()), ("3", "0"));
    assert_eq!(below[lo], "0");
    assert!((below[hi].parse::<f64>().unwrap() - bound).abs() < 1e-5);
    let above = fraction("150ms");
    assert_eq!((above[n].as_str(), above[mean].as_str()), ("3", "1"));
    assert!((above[lo].parse::<f64>().unwrap() - (1.0 - bound)).abs() < 1e-5);
    assert_eq!(above[hi], "1");
    // The control metrics average the complete runs only: 3 at 5 ms, none
    // at 150 ms, where the mean stop time is over the 3 stopped runs.
    let row = |d: &str, m: &str| {
        rows.iter()
            .find(|r| r[delay] == d && r[metric] == m)
            .unwrap()
    };
    assert_eq!(row("5ms", "pendulum.theta.iae")[n], "3");
    assert_eq!(row("150ms", "pendulum.theta.iae")[n], "0");
    assert_eq!(row("150ms", "stop.time_s")[n], "3");
}
