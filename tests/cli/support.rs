//! Running the binary and reading what it wrote (the readers come from the
//! workspace's test-support crate).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use test_support::process::{assert_exit, assert_exit_saying, assert_success, stderr, stdout};
pub use test_support::tables::{
    column_index as column, packets, read_csv, summary, timeseries_text as series,
};

/// The `netloop` binary under test.
pub fn netloop() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_netloop"));
    c.env_remove("RUST_LOG").env_remove("NETLOOP_NS3_SERVER");
    c
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The example scenario every test builds on.
pub fn servo_example() -> PathBuf {
    root().join("examples/dc_servo_p2p.toml")
}

pub fn run(args: &[&str]) -> Output {
    netloop()
        .args(args)
        .output()
        .expect("the netloop binary runs")
}

/// `netloop check SCENARIO` and `netloop run SCENARIO --out OUT`: both
/// must exit 2 naming `key`. Returns their stderr, check's then run's.
pub fn assert_check_and_run_refuse(scenario: &Path, out: &Path, key: &str) -> [String; 2] {
    let (scenario, out) = (scenario.to_str().unwrap(), out.to_str().unwrap());
    [vec!["check", scenario], vec!["run", scenario, "--out", out]].map(|args| {
        let o = run(&args);
        assert_exit(&o, 2);
        let err = stderr(&o);
        assert!(err.contains(&format!("`{key}`")), "{key}:\n{err}");
        err
    })
}

/// `netloop run SCENARIO --out OUT` and then `extra`.
pub fn run_scenario(scenario: &Path, out: &Path, extra: &[&str]) -> Output {
    netloop()
        .arg("run")
        .arg(scenario)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("the netloop binary runs")
}

/// `netloop sweep SWEEP --out OUT` and then `extra`.
pub fn run_sweep(sweep: &Path, out: &Path, extra: &[&str]) -> Output {
    netloop()
        .arg("sweep")
        .arg(sweep)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("the netloop binary runs")
}

/// Writes a sweep file over the servo example into `dir`.
pub fn write_sweep(dir: &Path, name: &str, body: &str) -> PathBuf {
    write_sweep_over(dir, name, &servo_example(), body)
}

/// Writes a sweep file over `scenario` into `dir`.
pub fn write_sweep_over(dir: &Path, name: &str, scenario: &Path, body: &str) -> PathBuf {
    let path = dir.join(name);
    let text = format!("scenario = {:?}\n{body}", scenario.display().to_string());
    std::fs::write(&path, text).expect("the temp dir is writable");
    path
}

/// `sweep SWEEP --out OUT --jobs 2`: two runs at a time, so that a sweep
/// has runs in flight to interrupt or to find complete when resumed.
pub fn sweep_args(sweep: &Path, out: &Path) -> Vec<String> {
    let path = |p: &Path| p.to_str().expect("a UTF-8 temp path").to_string();
    ["sweep", &path(sweep), "--out", &path(out), "--jobs", "2"]
        .map(String::from)
        .to_vec()
}

/// Runs the sweep of `args` again with `--resume`: it must succeed and say
/// that it found `done` of `total` runs complete.
pub fn assert_resumes(args: &[String], done: usize, total: usize) {
    let o = netloop()
        .args(args)
        .arg("--resume")
        .output()
        .expect("the netloop binary runs");
    assert_exit(&o, 0);
    let err = stderr(&o);
    assert!(
        err.contains(&format!("resume: {done} of {total} runs already complete")),
        "{err}"
    );
}

/// The `run_dir` of every row of `OUT/sweep.csv` whose status is
/// `complete`, and the number of rows.
pub fn complete_run_dirs(out: &Path) -> (std::collections::BTreeSet<String>, usize) {
    let (header, rows) = read_csv(&out.join("sweep.csv"));
    let (status, run_dir) = (column(&header, "status"), column(&header, "run_dir"));
    let dirs = rows
        .iter()
        .filter(|r| r[status] == "complete")
        .map(|r| r[run_dir].clone())
        .collect();
    (dirs, rows.len())
}
