//! Running a scenario in-process, without the `netloop` binary.

use std::path::PathBuf;

use bridge::config::{Resolved, Scenario};
use bridge::network::BuiltinNetwork;
use bridge::run::{run, RunOptions, RunReport};

/// Parses and resolves scenario text; fails the test with the error.
pub fn resolve(text: &str) -> Resolved {
    let scenario = Scenario::from_toml(text)
        .unwrap_or_else(|e| panic!("scenario does not parse: {e}\n{text}"));
    scenario
        .resolve()
        .unwrap_or_else(|e| panic!("scenario does not resolve: {e}"))
}

/// Runs a scenario into `run/` of a fresh temporary directory.
pub fn run_in_tempdir(text: &str) -> (tempfile::TempDir, RunReport) {
    let dir = tempfile::tempdir().unwrap();
    let options = RunOptions {
        out_dir: dir.path().join("run"),
        base_dir: PathBuf::from("."),
        cancel: None,
    };
    let report = run(&resolve(text), &options).unwrap_or_else(|e| panic!("run failed: {e}"));
    (dir, report)
}

/// The builtin channel `resolved` describes, started.
pub fn builtin_channel(resolved: &Resolved) -> BuiltinNetwork {
    let config = resolved.scenario.network.builtin.as_ref().unwrap();
    BuiltinNetwork::new(
        config,
        resolved.scenario.seed,
        resolved.scenario.run,
        std::path::Path::new("."),
        &bridge::input::read_input_text,
    )
    .unwrap()
}
