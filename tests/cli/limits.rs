//! Resource limits (docs/robustness.md, "Resource limits"): every size that
//! input sets has a limit, checked before the allocation it drives; a value
//! above it is bad input (exit 2) naming the key and its line.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::{
    assert_exit, assert_exit_saying, run, run_sweep, servo_example, stderr, stdout, write_sweep,
};

/// The servo example with its `[loops.plant]` table replaced by `plant`
/// (the lines of a table body), written into `dir`.
fn with_plant(dir: &Path, plant: &str) -> PathBuf {
    let text = std::fs::read_to_string(servo_example()).unwrap();
    let start = text.find("[loops.plant]\n").unwrap();
    let end = start + text[start..].find("\n[").unwrap() + 1;
    let path = dir.join("scenario.toml");
    std::fs::write(
        &path,
        format!("{}[loops.plant]\n{plant}\n{}", &text[..start], &text[end..]),
    )
    .unwrap();
    path
}

fn check(path: &Path) -> std::process::Output {
    run(&["check", path.to_str().unwrap()])
}

/// The 1-based line of the first line of `path` that starts with `prefix`.
fn line_of(path: &Path, prefix: &str) -> usize {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .position(|l| l.starts_with(prefix))
        .unwrap()
        + 1
}

fn numbers(n: usize) -> String {
    vec!["0.5"; n].join(", ")
}

#[test]
fn a_transfer_function_above_the_largest_order_is_refused_naming_den() {
    let dir = tempfile::tempdir().unwrap();
    // Degree 1024 is the limit: it loads (and is then judged as a plant).
    let at_limit = with_plant(
        dir.path(),
        &format!(
            "kind = \"transfer_function\"\nnum = [1.0]\nden = [1.0, {}]",
            numbers(1024)
        ),
    );
    let o = check(&at_limit);
    assert!(!stderr(&o).contains("netloop allows"), "{}", stderr(&o));
    let path = with_plant(
        dir.path(),
        &format!(
            "kind = \"transfer_function\"\nnum = [1.0]\nden = [1.0, {}]",
            numbers(1025)
        ),
    );
    let o = check(&path);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("`loops[0].plant.den`: has degree 1025, more than the 1024 netloop allows"),
        "{err}"
    );
    assert!(
        err.contains(&format!("scenario.toml:{}:", line_of(&path, "den ="))),
        "{err}"
    );
}

/// A `b` with many columns and a `c` with many rows ask for a p x m
/// feed-through: before the limit, 70 000 x 70 000 numbers (39 GB) were
/// allocated from a 0.7 MB file, and netloop died of it.
#[test]
fn a_matrix_wider_than_the_limit_is_refused_before_its_products_are_allocated() {
    let dir = tempfile::tempdir().unwrap();
    let n = 70_000;
    let rows = vec!["[0.0]"; n].join(", ");
    let path = with_plant(
        dir.path(),
        &format!(
            "kind = \"state_space\"\na = [[-1.0]]\nb = [[{}]]\nc = [{rows}]",
            vec!["0.0"; n].join(", ")
        ),
    );
    let started = Instant::now();
    let o = check(&path);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("`loops[0].plant.b[0]`: has 70000 columns, more than the 1024 netloop allows"),
        "{err}"
    );
    assert!(
        err.contains(&format!("scenario.toml:{}:", line_of(&path, "b ="))),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn every_matrix_and_list_of_a_loop_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let big = numbers(1025);
    for (plant, key, what) in [
        (
            format!("kind = \"state_space\"\na = [{}]\nb = [[1.0]]\nc = [[1.0]]", vec!["[0.0]"; 1025].join(", ")),
            "loops[0].plant.a",
            "has 1025 rows",
        ),
        (
            format!("kind = \"state_space\"\na = [[-1.0]]\nb = [[1.0]]\nc = [[1.0]]\nx0 = [{big}]"),
            "loops[0].plant.x0",
            "has 1025 entries",
        ),
        (
            format!("kind = \"discrete_transfer_function\"\nperiod = \"10ms\"\nnum = [{}]\nden = [1.0, 0.5]", numbers(1026)),
            "loops[0].plant.num",
            "has degree 1025",
        ),
    ] {
        let path = with_plant(dir.path(), &plant);
        let o = check(&path);
        assert_exit(&o, 2);
        let err = stderr(&o);
        assert!(
            err.contains(&format!("`{key}`: {what}")),
            "{key}: {err}"
        );
    }
    // A per-channel list of the sensor, through --set: blamed on the --set.
    let o = run(&[
        "check",
        servo_example().to_str().unwrap(),
        "--set",
        &format!("loops[0].sensor.noise_std=[{big}]"),
    ]);
    assert_exit_saying(
        &o,
        2,
        "`loops[0].sensor.noise_std`: has 1025 entries, more than the 1024",
    );
}

#[test]
fn more_loops_than_the_limit_are_refused_naming_loops() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(servo_example()).unwrap();
    let start = text.find("[[loops]]").unwrap();
    let (head, one_loop) = text.split_at(start);
    let mut scenario = head.to_string();
    for i in 0..10_001 {
        let renamed = one_loop.replacen("name = \"servo\"", &format!("name = \"servo{i}\""), 1);
        scenario.push_str(&renamed);
    }
    assert!(scenario.contains("servo10000"));
    let path = dir.path().join("many.toml");
    std::fs::write(&path, scenario).unwrap();
    let o = check(&path);
    assert_exit_saying(
        &o,
        2,
        "`loops`: has 10001 loops, more than the 10000 netloop allows",
    );
}

#[test]
fn an_empirical_delay_file_above_the_most_samples_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let delays = dir.path().join("delays.txt");
    std::fs::write(
        &delays,
        "# measured\n".to_string() + &"1.5\n".repeat(1_000_001),
    )
    .unwrap();
    let model = format!(
        "network.builtin.delay={{ kind = \"empirical\", file = {:?} }}",
        delays.display().to_string()
    );
    let o = run(&[
        "check",
        servo_example().to_str().unwrap(),
        "--network",
        "builtin",
        "--set",
        &model,
    ]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "{}:1000002: more than 1000000 samples, the most an empirical delay file may hold",
            delays.display()
        )),
        "{err}"
    );
    assert!(err.contains("`network.builtin.delay`"), "{err}");
}

#[test]
fn replications_above_the_most_runs_of_a_sweep_are_refused_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(
        dir.path(),
        "s.toml",
        "network = \"builtin\"\nreplications = 100001\n",
    );
    let o = run(&["sweep", sweep.to_str().unwrap(), "--dry-run"]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("`replications`: the sweep has 1 point x 100001 replications = 100001 runs or more, above the 100000 runs a sweep may have"),
        "{err}"
    );
    assert!(err.contains("s.toml:3:"), "{err}");
}

/// A sweep of 10^6 points: refused from the axes' lengths alone, before a
/// single point is made, well within a second (measured: 0.03 s; the
/// timeout is generous for a loaded machine).
#[test]
fn a_million_point_sweep_is_refused_at_once_naming_the_axis() {
    let dir = tempfile::tempdir().unwrap();
    let values = |offset: f64| {
        (0..1000)
            .map(|i| format!("{:.1}", offset + f64::from(i)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sweep = write_sweep(
        dir.path(),
        "million.toml",
        &format!(
            "network = \"builtin\"\n[[grid]]\nkey = \"loops[0].controller.kp\"\nvalues = [{}]\n\
             [[grid]]\nkey = \"loops[0].controller.ki\"\nvalues = [{}]\n",
            values(1.0),
            values(0.5)
        ),
    );
    let started = Instant::now();
    let o = run_sweep(&sweep, &dir.path().join("out"), &["--dry-run"]);
    let took = started.elapsed();
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("`grid[1].values`: the sweep has 1000 x 1000 points x 1 replications = 1000000 runs or more, above the 100000 runs a sweep may have"),
        "{err}"
    );
    assert!(err.contains("million.toml:8:"), "{err}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(stdout(&o).is_empty());
    assert!(!dir.path().join("out").exists(), "nothing is planned");
}

/// The other side of the contract: a plan below the limit is made, every
/// run loaded and checked, in time linear in its runs (a 20 000-run plan,
/// a fifth of the limit; measured 1 s of CPU).
#[test]
fn a_large_sweep_below_the_limit_is_planned_in_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let values = |n: usize| {
        (0..n)
            .map(|i| format!("{:.1}", 1.0 + i as f64))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sweep = write_sweep(
        dir.path(),
        "large.toml",
        &format!(
            "network = \"builtin\"\nreplications = 2\n[[grid]]\nkey = \"loops[0].controller.kp\"\nvalues = [{}]\n\
             [[grid]]\nkey = \"loops[0].controller.ki\"\nvalues = [{}]\n",
            values(100),
            values(100)
        ),
    );
    let started = Instant::now();
    let o = run_sweep(&sweep, &dir.path().join("out"), &["--dry-run"]);
    let took = started.elapsed();
    assert_exit(&o, 0);
    assert!(
        stdout(&o).starts_with("10000 points x 2 replications = 20000 runs"),
        "{}",
        stdout(&o)
    );
    assert!(took < Duration::from_secs(120), "took {took:?}");
}
