//! The block library's seed examples over the network (issue 13 item 3):
//! the cruise-control PID (a subsystem of unit delays) on another node over
//! a real ns-3 link, and a tank level loop over Wi-Fi whose controller is a
//! block diagram with saturation and anti-windup and whose plant is an
//! equation model. Each checks the expected result its file states.

use std::path::Path;

use crate::support::{column_index, read_csv, root, run_scenario as netloop, server_set, summary};

/// The columns `names` of a time series, as text (bit-exact comparisons)
/// and numbers.
fn columns(dir: &Path, names: &[&str]) -> Vec<Vec<String>> {
    let (header, rows) = read_csv(&dir.join("timeseries.csv"));
    let idx: Vec<usize> = names.iter().map(|n| column_index(&header, n)).collect();
    rows.iter()
        .map(|r| idx.iter().map(|&i| r[i].clone()).collect())
        .collect()
}

fn num(s: &str) -> f64 {
    s.parse().unwrap()
}

#[test]
fn cruise_control_with_the_pid_over_ns3_is_the_one_step_delayed_local_loop() {
    let out = tempfile::tempdir().unwrap();
    let (net, delayed, local) = (
        out.path().join("ns3"),
        out.path().join("delayed"),
        out.path().join("local"),
    );
    netloop(
        &root().join("examples/cruise_control_ns3.toml"),
        &net,
        &[server_set()],
    );
    netloop(
        &root().join("tests/e2e/fixtures/cruise_control_delayed.toml"),
        &delayed,
        &[],
    );
    netloop(
        &root().join("examples/cruise_control_subsystem.toml"),
        &local,
        &[],
    );
    let s = summary(&net);
    assert_eq!(s["complete"], true);
    for f in s["flows"].as_array().unwrap() {
        assert_eq!(f["sent"], 100_000, "{f}");
        // The last one is in flight when the run ends.
        assert_eq!(f["accepted"], 99_999, "{f}");
        assert_eq!(f["in_flight"], 1, "{f}");
        // Each packet 1.0752 ms on the link: 1 ms of propagation and 94
        // bytes (64 of payload, UDP, IP and PPP headers) at 10 Mbit/s.
        for stat in ["mean_s", "p50_s", "max_s"] {
            let d = f["delay"][stat].as_f64().unwrap();
            assert!((d - 1.0752e-3).abs() < 1e-9, "delay {stat} {d}: {f}");
        }
    }
    let n = columns(&net, &["time", "vehicle.y", "pid/force.y"]);
    let d = columns(&delayed, &["time", "vehicle.y", "pid/force.y"]);
    let l = columns(&local, &["time", "vehicle.y"]);
    assert_eq!(n.len(), 1001);
    // Over the link: the local loop with a one-step delay each way, to the
    // bit; the PID's force too but at the end, where the last error packet
    // is in flight (the last boundary is recorded, not served).
    for (k, (a, b)) in n.iter().zip(&d).enumerate() {
        assert_eq!(a[..2], b[..2], "row {k}");
        if k < 1000 {
            assert_eq!(a[2], b[2], "row {k}");
        }
    }
    // Against the undelayed loop: within the stated bound.
    let worst = n
        .iter()
        .zip(&l)
        .map(|(a, b)| (num(&a[1]) - num(&b[1])).abs())
        .fold(0.0, f64::max);
    assert!(worst < 0.01, "largest speed difference {worst} m/s");
    assert!(worst > 0.0, "the delay must show");
    let v: Vec<f64> = n.iter().map(|r| num(&r[1])).collect();
    let (k, peak) = v
        .iter()
        .enumerate()
        .fold((0, 0.0), |m, (k, &x)| if x > m.1 { (k, x) } else { m });
    assert!((peak - 25.4).abs() < 0.1, "peak {peak}");
    assert!((k as f64 - 184.0).abs() < 3.0, "peak at {k} s");
    assert!((v[1000] - 20.0).abs() < 0.05, "v(1000 s) = {}", v[1000]);
}

/// Time for the saturated pump to fill the tank from `h0` to `h`: the
/// integral of A dh / (Q - c sqrt(h)).
fn fill_time(h0: f64, h: f64) -> f64 {
    let (a, c, q) = (2.0f64, 0.5f64, 1.5f64);
    let (s0, s) = (h0.sqrt(), h.sqrt());
    2.0 * a / (c * c) * (c * (s0 - s) + q * ((q - c * s0) / (q - c * s)).ln())
}

/// Crossing time of 3 m, overshoot above 4 m, final level and pump flow.
fn tank_run(sets: &[String]) -> (f64, f64, Vec<(f64, f64, f64)>) {
    let out = tempfile::tempdir().unwrap();
    let mut all = vec![server_set()];
    all.extend_from_slice(sets);
    netloop(
        &root().join("examples/tank_level_wifi.toml"),
        out.path(),
        &all,
    );
    let s = summary(out.path());
    assert_eq!(s["complete"], true);
    for f in s["flows"].as_array().unwrap() {
        assert!(f["delivery_ratio"].as_f64().unwrap() > 0.9, "{f}");
    }
    let rows: Vec<(f64, f64, f64)> = columns(out.path(), &["time", "tank.y.h", "pump.y"])
        .iter()
        .map(|r| (num(&r[0]), num(&r[1]), num(&r[2])))
        .collect();
    // Linear interpolation between recorded rows for the crossing.
    let i = rows.iter().position(|r| r.1 >= 3.0).unwrap();
    let (a, b) = (rows[i - 1], rows[i]);
    let cross = a.0 + (3.0 - a.1) / (b.1 - a.1) * (b.0 - a.0);
    let overshoot = rows.iter().map(|r| r.1 - 4.0).fold(f64::MIN, f64::max);
    (cross, overshoot, rows)
}

#[test]
fn tank_level_over_wifi_fills_saturated_settles_and_anti_windup_limits_overshoot() {
    let expected = fill_time(0.5, 3.0);
    assert!((expected - 6.018).abs() < 1e-3, "{expected}");
    let (cross, overshoot, rows) = tank_run(&[]);
    assert!(
        (cross - expected).abs() < 0.05,
        "3 m at {cross} s, analytic {expected} s"
    );
    // Saturated all the way up to 3 m.
    for r in rows.iter().filter(|r| r.0 > 0.05 && r.1 < 3.0) {
        assert_eq!(r.2, 1.5, "pump at {} s", r.0);
    }
    for r in rows.iter().filter(|r| r.0 >= 40.0) {
        assert!((r.1 - 4.0).abs() < 0.01, "level {} at {} s", r.1, r.0);
        assert!((r.2 - 1.0).abs() < 0.01, "pump {} at {} s", r.2, r.0);
    }
    assert!(overshoot < 0.1, "overshoot {overshoot} m");
    // Without anti-windup the integrator winds up during the fill.
    let (_, wound_up, _) = tank_run(&["components[8].block.k=0.0".to_string()]);
    assert!(wound_up > 0.3, "overshoot without anti-windup {wound_up} m");
}
