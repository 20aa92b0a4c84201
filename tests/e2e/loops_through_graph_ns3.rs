//! A `[[loops]]` run through the graph session gives the bytes the loops'
//! own session gave over the real ns-3 server, recorded before that
//! session was deleted (bridge's `loop_graph_tests` do the same over the
//! builtin channel). The cases are the ones where the two used to part: event-triggered answers handed
//! to ns-3 as rules, with multi-packet samples and receive policies, where
//! a delivery to an actuator and one to a controller act at one boundary;
//! and master-slave without lookahead over congested Wi-Fi, where losses
//! are reported exactly at sync points.

use std::path::{Path, PathBuf};

use bridge::run::{run_built, RunOptions};
use bridge::scenario_file::{load, load_text, Loaded, Override};

use crate::ns3_answer_rules::{event_triggered_servo, measuring_speed, policies, BUSY_WIFI};
use crate::support::{root, server_set};
use test_support::pinned::assert_pinned;

/// `examples/servo_wifi_interference.toml` measuring angle and speed under
/// state feedback, each value its own packet, with a delay limit that
/// drops some of them.
const MULTI_PACKET: &[&str] = &[
    "loops.0.uplink={ size = 64, max_delay = \"3ms\", drop_stale = true, multi_packet = true }",
    "loops.0.downlink={ size = 48, max_delay = \"3ms\", drop_stale = true, multi_packet = true, on_loss = \"zero\" }",
    "loops.0.plant.outputs=[\"theta\", \"omega\"]",
    "loops.0.controller={ kind = \"state_feedback\", k = [[20.0, 0.5]], n = [[20.0]], trigger = \"event\" }",
];

fn example(sets: &[&str]) -> Loaded {
    let path = root().join("examples/servo_wifi_interference.toml");
    let overrides: Vec<Override> = sets
        .iter()
        .map(|s| s.to_string())
        .chain([server_set(), "duration=\"2s\"".to_string()])
        .map(|s| Override::parse_set(&s).unwrap_or_else(|e| panic!("{s}: {e}")))
        .collect();
    load(&path, &overrides).unwrap_or_else(|e| panic!("{e}"))
}

/// The three data files of a run directory, and its sync count.
fn outputs(dir: &Path) -> ([Vec<u8>; 3], u64) {
    let files = ["timeseries.csv", "packets.csv", "summary.json"]
        .map(|f| std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}")));
    let summary: serde_json::Value = serde_json::from_slice(&files[2]).unwrap();
    let syncs = summary["sync"]["syncs"].as_u64().unwrap();
    (files, syncs)
}

/// Runs the example with `sets` through both sessions; asserts the same
/// bytes and returns the sync count.
fn assert_same(what: &str, sets: &[&str]) -> u64 {
    assert_same_loaded(what, || example(sets))
}

/// The loops' own session's outputs for every case here, as SHA-256 of
/// `timeseries.csv`, `packets.csv` and `summary.json`, recorded from that
/// session (bridge/src/run.rs at 150aac6) before it was deleted, when the
/// graph session was shown equal to it case by case over this ns-3.
/// `summary.json` is hashed as [`without_checkout_path`] leaves it.
const LOOP_SESSION_OUTPUTS: &str = include_str!("fixtures/loop_session_ns3_outputs.sha256");

/// `summary.json` without what depends on where the checkout is: the
/// server's path, in the scenario it echoes and in the config hash
/// (`[network.server]` is hashed with the rest). Re-serialised, so the
/// recorded hash is of this form, not of the file's bytes.
fn without_checkout_path(summary: &[u8]) -> Vec<u8> {
    let mut json: serde_json::Value = serde_json::from_slice(summary).unwrap();
    let server = json["scenario"]["network"]
        .as_object_mut()
        .and_then(|n| n.remove("server"));
    assert!(server.is_some(), "summary.json echoes no [network.server]");
    assert!(json
        .as_object_mut()
        .unwrap()
        .remove("config_hash")
        .is_some());
    serde_json::to_vec(&json).unwrap()
}

/// Runs the scenario through the graph session, compares its outputs
/// with the loops' session's, recorded, and returns the sync count.
fn assert_same_loaded(what: &str, loaded: impl Fn() -> Loaded) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let options = RunOptions {
        out_dir: dir.path().join("run"),
        base_dir: PathBuf::from("."),
        cancel: None,
    };
    let l = loaded();
    run_built(&l.resolved, l.built, &options, None).unwrap_or_else(|e| panic!("{what}: {e}"));
    let (files, syncs) = outputs(&dir.path().join("run"));
    let [timeseries, packets, summary] = files;
    assert_pinned(LOOP_SESSION_OUTPUTS, what, "timeseries.csv", &timeseries);
    assert_pinned(LOOP_SESSION_OUTPUTS, what, "packets.csv", &packets);
    assert_pinned(
        LOOP_SESSION_OUTPUTS,
        what,
        "summary.json",
        &without_checkout_path(&summary),
    );
    syncs
}

#[test]
fn event_triggered_answers_by_rule_and_stopping_at_each() {
    let rules = assert_same("rules", &[]);
    let every = assert_same("every answer", &["sync.rules=false"]);
    assert!(
        rules <= 3 && every > 100,
        "{rules} syncs with rules, {every} without"
    );
    let mut policed = MULTI_PACKET.to_vec();
    assert_same("rules, multi-packet with policies", &policed);
    policed.push("sync.rules=false");
    assert_same("every answer, multi-packet with policies", &policed);
    // ns3_answer_rules' busy channel: a refused delivery to the actuator
    // and a sample's second packet act at one boundary, the sample first.
    let text = measuring_speed(event_triggered_servo(
        BUSY_WIFI,
        "2s",
        "200us",
        &policies("3ms"),
    ));
    for rules in ["true", "false"] {
        let text = text.replace(
            "scheme = \"event_driven\"",
            &format!("scheme = \"event_driven\"\nrules = {rules}"),
        );
        let path = root().join("busy_wifi.toml");
        assert_same_loaded(&format!("busy Wi-Fi, rules = {rules}"), || {
            load_text(&path, &text, &[]).unwrap_or_else(|e| panic!("{e}"))
        });
    }
}

#[test]
fn master_slave_without_lookahead_over_congested_wifi() {
    let congested = [
        "network.background.nodes=16",
        "sync.scheme=\"master_slave\"",
        "sync.period=\"10ms\"",
        "loops.0.controller.trigger=\"time\"",
        "loops.0.controller.period=\"10ms\"",
    ];
    let ahead = assert_same("lookahead", &congested);
    let every = assert_same(
        "every period",
        &[&congested[..], &["sync.lookahead=false"]].concat(),
    );
    assert_eq!((ahead, every), (2, 200));
}
