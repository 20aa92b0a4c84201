//! Running the binary and reading what it wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Asserts an exit code, showing the output when it differs.
#[track_caller]
pub fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "exit status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        stdout(o),
        stderr(o)
    );
}

/// Writes a sweep file over the servo example into `dir`.
pub fn write_sweep(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    let text = format!(
        "scenario = {:?}\n{body}",
        servo_example().display().to_string()
    );
    std::fs::write(&path, text).expect("the temp dir is writable");
    path
}

/// `sweep.csv` as records with a header.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

pub fn column(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

pub fn summary(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("summary.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    serde_json::from_str(&text).unwrap()
}
