//! The ns-3 server checks the network values it alone knows (PHY modes of a
//! standard, topology files, ranges) through `netloop-server --check`, and
//! the bridge reports a rejection at the scenario key and line, exit 2; the
//! custom network kind runs a user's own program from a relative path.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use test_support::fixtures::p_servo_over_ns3;

use crate::support::server_binary;

fn netloop(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netloop"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A servo loop over Wi-Fi; `radio` and `placement` are the tables' bodies.
fn wifi_scenario(radio: &str, placement: &str) -> String {
    p_servo_over_ns3(
        "200ms",
        &format!(
            "kind = \"wifi\"\nstandard = \"802.11a\"\n[network.radio]\n{radio}\n[network.placement]\n{placement}"
        ),
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// (radio body, placement body, key the error must name, line it must point at, words of the reason)
const REJECTED: &[(&str, &str, &str, usize, &str)] = &[
    (
        "phy_mode = \"OfdmRate7Mbps\"",
        "spacing = 10.0",
        "network.radio.phy_mode",
        12,
        "is not a mode of 80211a",
    ),
    (
        "tx_power = 1000.0",
        "spacing = 10.0",
        "network.radio.tx_power",
        12,
        "is not in [-100, 100] (dBm)",
    ),
    (
        "max_range = -3.0",
        "spacing = 10.0",
        "network.radio.max_range",
        12,
        "is not more than 0 (m)",
    ),
    (
        "tx_power = 16.0",
        "spacing = -5.0",
        "network.placement.spacing",
        14,
        "is less than 0 (m)",
    ),
    (
        "tx_power = 16.0",
        "file = \"missing.topo\"",
        "network.placement.file",
        14,
        "cannot open topology file",
    ),
];

#[test]
fn values_only_the_server_knows_are_checked_and_located_by_check_and_run() {
    server_binary();
    let dir = tempfile::tempdir().unwrap();
    for (i, &(radio, placement, key, line, reason)) in REJECTED.iter().enumerate() {
        let name = format!("bad{i}.toml");
        write(dir.path(), &name, &wifi_scenario(radio, placement));
        for args in [
            vec!["check", name.as_str()],
            vec!["run", name.as_str(), "--out", "out"],
        ] {
            let o = netloop(dir.path(), &args);
            let err = stderr(&o);
            assert_eq!(
                o.status.code(),
                Some(2),
                "{args:?} {radio} {placement}: {err}"
            );
            assert!(
                err.starts_with(&format!("error: `{key}`: ")),
                "{args:?}: {err}"
            );
            assert!(err.contains(reason), "{args:?}: {err}");
            assert!(
                err.contains(&format!("{name}:{line}:")),
                "{args:?}: not located at line {line}: {err}"
            );
            assert!(
                !dir.path().join("out").exists(),
                "{args:?}: a rejected network must not leave a run directory"
            );
        }
    }
    // The same values through --set are located at the override.
    write(
        dir.path(),
        "good.toml",
        &wifi_scenario("tx_power = 16.0", "spacing = 10.0"),
    );
    let o = netloop(dir.path(), &["check", "good.toml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = netloop(
        dir.path(),
        &[
            "check",
            "good.toml",
            "--set",
            "network.radio.phy_mode=\"Bogus\"",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--set network.radio.phy_mode"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_sweep_over_a_bad_network_value_fails_before_any_run() {
    server_binary();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "base.toml",
        &wifi_scenario("tx_power = 16.0", "spacing = 10.0"),
    );
    write(
        dir.path(),
        "sweep.toml",
        "scenario = \"base.toml\"\n[[grid]]\nkey = \"network.radio.phy_mode\"\nvalues = [\"OfdmRate6Mbps\", \"OfdmRate5Mbps\"]\n",
    );
    let o = netloop(dir.path(), &["sweep", "sweep.toml", "--out", "sw"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("network.radio.phy_mode") && err.contains("OfdmRate5Mbps"),
        "{err}"
    );
    assert!(!dir.path().join("sw/runs").exists(), "no run may start");
}

/// `kind = "custom"` runs the bring-your-own example program, found through
/// a path relative to the scenario file from another working directory.
#[test]
fn a_custom_network_runs_a_users_program_named_relative_to_the_scenario() {
    let server = server_binary();
    let byo = server.with_file_name("byo-example");
    assert!(
        byo.exists(),
        "{} is built by scripts/setup.sh",
        byo.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir_all(scenarios.join("bin")).unwrap();
    std::os::unix::fs::symlink(&byo, scenarios.join("bin/plant-floor")).unwrap();
    let text = wifi_scenario("", "")
        .replace(
            "kind = \"wifi\"\nstandard = \"802.11a\"\n[network.radio]\n\n[network.placement]\n",
            "kind = \"custom\"\nnodes = 5\n",
        )
        .replace("controller_node = 1", "controller_node = 4")
        + "[network.server]\nbinary = \"bin/plant-floor\"\nargs = [\"--distance=30\"]\n";
    assert!(text.contains("kind = \"custom\""), "{text}");
    write(&scenarios, "floor.toml", &text);
    let o = netloop(
        dir.path(),
        &["-q", "run", "scenarios/floor.toml", "--out", "out"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["complete"], true);
    assert_eq!(
        summary["totals"]["sent"], summary["totals"]["accepted"],
        "{summary}"
    );
    // Node 5 is not one of the program's five.
    let o = netloop(
        dir.path(),
        &[
            "check",
            "scenarios/floor.toml",
            "--set",
            "loops[0].controller_node=5",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("loops[0].controller_node"),
        "{}",
        stderr(&o)
    );
    // A program that is not there, looked for next to the scenario.
    let missing = ["--set", "network.server.binary=\"bin/missing\""];
    let o = netloop(
        dir.path(),
        &[&["check", "scenarios/floor.toml"][..], &missing].concat(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`network.server.binary`"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("scenarios/bin/missing"),
        "resolved from the scenario's directory: {}",
        stderr(&o)
    );
    let o = netloop(
        dir.path(),
        &[
            &["run", "scenarios/floor.toml", "--out", "out2"][..],
            &missing,
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("scenarios/bin/missing"),
        "{}",
        stderr(&o)
    );
}

/// A graph scenario's network goes through the same check as a loop
/// scenario's: a value only the server knows is refused by `check` and
/// `run` at its key and line, exit 2, and no run directory is left.
#[test]
fn a_graph_scenarios_network_is_checked_and_located_by_check_and_run() {
    server_binary();
    let dir = tempfile::tempdir().unwrap();
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/two_sensor_paths_graph.toml");
    let text = std::fs::read_to_string(example).unwrap();
    let bad = text.replace(
        "phy_mode = \"OfdmRate6Mbps\"",
        "phy_mode = \"OfdmRate7Mbps\"",
    );
    assert_ne!(bad, text, "the example sets phy_mode");
    let line = bad.lines().position(|l| l.starts_with("phy_mode")).unwrap() + 1;
    write(dir.path(), "graph.toml", &bad);
    for args in [
        vec!["check", "graph.toml"],
        vec!["run", "graph.toml", "--out", "out"],
    ] {
        let o = netloop(dir.path(), &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("error: `network.radio.phy_mode`: "),
            "{args:?}: {err}"
        );
        assert!(err.contains("is not a mode of 80211a"), "{args:?}: {err}");
        assert!(
            err.contains(&format!("graph.toml:{line}:")),
            "{args:?}: not located at line {line}: {err}"
        );
        assert!(
            !dir.path().join("out").exists(),
            "{args:?}: a rejected network must not leave a run directory"
        );
    }
}
