//! Running the binary and reading what it wrote (the readers come from the
//! workspace's test-support crate).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use test_support::process::{assert_exit, assert_success, stderr, stdout};
pub use test_support::tables::{column_index as column, read_csv, summary};

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
