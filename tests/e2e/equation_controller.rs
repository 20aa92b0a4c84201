//! examples/servo_equation_pi_p2p.toml: a `[[loops]]` controller written as
//! equations (a PI) on another node. Over the builtin network and over an
//! ns-3 point-to-point link, its run is the run of the same scenario with
//! the built-in `pid` (kd = 0) bit for bit, and the servo settles as the
//! file states.

use std::path::{Path, PathBuf};

use crate::support::{read_csv, run_scenario_with, server_set};

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/servo_equation_pi_p2p.toml")
}

/// The example with its controller table replaced by the built-in PID the
/// file's comment names.
fn with_builtin_pid(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(example()).unwrap();
    let start = text.find("[loops.controller]").unwrap();
    let end = text.find("[loops.reference]").unwrap();
    let pid = "[loops.controller]\nkind = \"pid\"\nkp = 10.0\nki = 5.0\nkd = 0.0\n\
               anti_windup = \"none\"\nperiod = \"1ms\"\n\n";
    let path = dir.join("servo_builtin_pi.toml");
    std::fs::write(&path, format!("{}{pid}{}", &text[..start], &text[end..])).unwrap();
    path
}

/// The columns both runs record (the plant's, the controls; not the
/// controllers' own states, which are named differently), as text.
fn shared_columns(a: &Path, b: &Path) -> (Vec<String>, Vec<Vec<String>>, Vec<Vec<String>>) {
    let ((ha, ra), (hb, rb)) = (
        read_csv(&a.join("timeseries.csv")),
        read_csv(&b.join("timeseries.csv")),
    );
    let names: Vec<String> = ha.iter().filter(|n| hb.contains(n)).cloned().collect();
    let pick = |h: &[String], rows: &[Vec<String>]| -> Vec<Vec<String>> {
        let idx: Vec<usize> = names
            .iter()
            .map(|n| h.iter().position(|x| x == n).unwrap())
            .collect();
        rows.iter()
            .map(|r| idx.iter().map(|&i| r[i].clone()).collect())
            .collect()
    };
    (names.clone(), pick(&ha, &ra), pick(&hb, &rb))
}

fn check_same_as_builtin(network: &[String]) {
    let out = tempfile::tempdir().unwrap();
    let (eq, pid) = (out.path().join("eq"), out.path().join("pid"));
    run_scenario_with(&example(), &eq, network);
    run_scenario_with(&with_builtin_pid(out.path()), &pid, network);
    let (names, a, b) = shared_columns(&eq, &pid);
    for needed in ["time", "servo.x.theta", "servo.u.voltage"] {
        assert!(
            names.iter().any(|n| n == needed),
            "{needed} not in {names:?}"
        );
    }
    assert_eq!(a.len(), 3001);
    assert_eq!(a, b, "{network:?}");
    assert_eq!(
        std::fs::read(eq.join("packets.csv")).unwrap(),
        std::fs::read(pid.join("packets.csv")).unwrap()
    );
    // The stated result: a peak of 1.24 rad about 0.37 s after the step
    // (at 100 ms), then within 0.03 rad of the reference from 1.5 s on.
    let theta = names.iter().position(|n| n == "servo.x.theta").unwrap();
    let v: Vec<f64> = a.iter().map(|r| r[theta].parse().unwrap()).collect();
    let (k, peak) = v
        .iter()
        .enumerate()
        .fold((0, 0.0), |m, (k, &x)| if x > m.1 { (k, x) } else { m });
    assert!((peak - 1.24).abs() < 0.005, "peak {peak}");
    assert!((k as f64 - 470.0).abs() <= 10.0, "peak at {k} ms");
    for (k, x) in v.iter().enumerate().skip(1500) {
        assert!((x - 1.0).abs() < 0.03, "theta {x} at {k} ms");
    }
}

#[test]
fn equation_pi_over_the_builtin_network_is_the_builtin_pi() {
    check_same_as_builtin(&["--network".to_string(), "builtin".to_string()]);
}

#[test]
fn equation_pi_over_ns3_p2p_is_the_builtin_pi() {
    check_same_as_builtin(&["--set".to_string(), server_set()]);
}
