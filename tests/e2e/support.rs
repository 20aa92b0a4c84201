//! Helpers shared by the end-to-end tests: the workspace's test-support
//! crate, re-exported under the names these tests use.

pub use test_support::golden::{bad_frames, BadFrame};
pub use test_support::ns3::{options, send, server_binary, step, udp_flow};
pub use test_support::process::{assert_success, child_named, process_alive, process_exists};
pub use test_support::root;
pub use test_support::tables::{
    column_index, packet_rows, packets, packets_in_file_order, read_csv, summary, table_rows,
    timeseries_column, timeseries_text as series,
};
pub use test_support::tapped::{Tap, Tapped};

use std::path::Path;
use std::process::Command;

/// Runs `netloop -q run SCENARIO --out OUT --set ...` and fails the test with
/// netloop's stderr when the run fails. `NETLOOP_NS3_SERVER` is unset, so the
/// server is the one a `--set` names ([`server_set`]) or none.
pub fn run_scenario(scenario: &Path, out: &Path, sets: &[String]) {
    let args: Vec<String> = sets
        .iter()
        .flat_map(|s| ["--set".to_string(), s.clone()])
        .collect();
    run_scenario_with(scenario, out, &args);
}

/// As [`run_scenario`], with `args` after `--out OUT` as they are.
pub fn run_scenario_with(scenario: &Path, out: &Path, args: &[String]) {
    let o = Command::new(env!("CARGO_BIN_EXE_netloop"))
        .env_remove("NETLOOP_NS3_SERVER")
        .args(["-q", "run"])
        .arg(scenario)
        .arg("--out")
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    assert_success(&o, &scenario.display().to_string());
}

/// The `--set` that points a run at this worktree's ns-3 server.
pub fn server_set() -> String {
    format!(
        "network.server.binary={:?}",
        server_binary().display().to_string()
    )
}
