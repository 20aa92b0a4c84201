//! Test scaffolding shared by netloop's test binaries (`tests/cli`,
//! `tests/e2e`, `bridge/tests/cosim`, `protocol/tests`), so that a fixture
//! or a reader is written once and every suite reads outputs the same way.
//! (The protocol crate dev-depends on this one, which depends on it: Cargo
//! allows that cycle for dev-dependencies. The time crate reads its one
//! golden table, `durations.txt`, in its own test.)
//!
//! # Lifecycle
//! 1. **Build a scenario** from [`fixtures`] (the DC servo loop most tests
//!    share) or read an example from [`root`]`()/examples`.
//! 2. **Run it**: in-process with [`cosim::run_in_tempdir`] (or over a
//!    network a test watches, [`tapped::Tapped`]), against the real
//!    ns-3 server with the settings of [`ns3`], or through the `netloop`
//!    binary (each CLI test binary owns its `netloop()` command, because
//!    only the root package knows the binary's path) checked with
//!    [`process::assert_exit`].
//! 3. **Read what it wrote** with [`tables`] (`packets.csv`,
//!    `timeseries.csv`, `sweep.csv`, `summary.json`), and compare wire
//!    frames with the golden tables through [`golden`].

pub mod cosim;
pub mod fixtures;
pub mod fmu;
pub mod golden;
pub mod ns3;
pub mod pinned;
pub mod process;
pub mod tables;
pub mod tapped;

use std::path::PathBuf;

/// The repository root (the workspace's top folder).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root exists")
}

/// A file's bytes; fails the test naming the file.
pub fn read(path: &std::path::Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
