//! A packet reported twice by real ns-3 Wi-Fi: under heavy interference the
//! sender's MAC drops a frame whose lifetime expired while a copy of it is
//! still on the air, and the copy is delivered afterwards. The run goes on;
//! the first report settles the fate, the later one is counted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{packet_rows, table_rows};

/// `examples/servo_wifi_interference.toml` with 16 background nodes, a
/// time-triggered controller and master-slave sync every 10 ms: with seed 1
/// the uplink's packet 110 (sent at 1.1 s) is dropped by the MAC at 1.6 s
/// (lifetime expired) and delivered just after, which used to stop the run
/// with "packet 110 ... was never sent".
fn congested_wifi_run(out: &Path, extra: &[&str]) -> serde_json::Value {
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/servo_wifi_interference.toml");
    let sets = [
        "duration=2s",
        "network.background.nodes=16",
        "sync.scheme=master_slave",
        "sync.period=10ms",
        "loops.0.controller.trigger=time",
        "loops.0.controller.period=10ms",
        "network.traces.drop_log=true",
    ];
    let mut command = Command::new(env!("CARGO_BIN_EXE_netloop"));
    command.args(["-q", "run"]).arg(&example);
    for set in sets.iter().chain(extra) {
        command.args(["--set", set]);
    }
    let result = command.arg("--out").arg(out).output().unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        result.status.success(),
        "the congested run failed: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap()
}

fn count(v: &serde_json::Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no count {key} in {v}"))
}

/// Per flow: the rows of `ns3/drops.csv` the server reported to netloop
/// (`reported = 1`), as (number, time).
fn reported_drops(run: &Path) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for r in table_rows(&run.join("ns3/drops.csv"))
        .into_iter()
        .filter(|r| r["reported"] == "1")
    {
        out.entry(r["flow"].clone())
            .or_default()
            .push((r["number"].clone(), r["time_ns"].clone()));
    }
    out
}

#[test]
fn a_congested_wifi_run_completes_and_counts_packets_reported_twice() {
    let dir = tempfile::tempdir().unwrap();
    let run: PathBuf = dir.path().join("run");
    let summary = congested_wifi_run(&run, &[]);
    assert_eq!(summary["complete"], true);
    assert_eq!(summary["reached_ns"], 2_000_000_000u64);

    let rows = packet_rows(&run);
    let drops = reported_drops(&run);
    for flow in summary["flows"].as_array().unwrap() {
        let id = flow["flow"].as_u64().unwrap().to_string();
        let mine: Vec<_> = rows.iter().filter(|r| r["flow"] == id).collect();
        // Every packet sent has exactly one row, hence one fate.
        assert_eq!(mine.len() as u64, count(flow, "sent"), "flow {id}");
        let fates = [
            "accepted",
            "dropped_max_delay",
            "dropped_stale",
            "lost_queue",
            "lost_phy",
            "lost_mac",
            "lost_routing",
            "lost_other",
            "in_flight",
        ];
        assert_eq!(
            fates.iter().map(|f| count(flow, f)).sum::<u64>(),
            count(flow, "sent"),
            "flow {id}"
        );
        // The server's own log: each packet it reported lost is lost in
        // packets.csv at its first report, or its fate was settled before
        // and the report is a late loss.
        let reported = drops.get(&id).cloned().unwrap_or_default();
        let lost: BTreeMap<&str, &str> = mine
            .iter()
            .filter(|r| r["fate"].starts_with("lost_"))
            .map(|r| (r["number"].as_str(), r["lost_at_ns"].as_str()))
            .collect();
        for (number, at) in &lost {
            let first = reported
                .iter()
                .find(|(n, _)| n == number)
                .map(|(_, t)| t.as_str());
            assert_eq!(
                first,
                Some(*at),
                "flow {id} packet {number}: lost at its first loss report"
            );
        }
        assert_eq!(
            count(flow, "late_losses"),
            reported.len() as u64 - lost.len() as u64,
            "flow {id}"
        );
    }

    // The packet that used to stop the run: lost at 1.6 s, its later
    // delivery counted and not applied.
    let p110 = rows
        .iter()
        .find(|r| r["flow"] == "0" && r["number"] == "110")
        .unwrap();
    assert_eq!(
        (p110["fate"].as_str(), p110["lost_at_ns"].as_str()),
        ("lost_queue", "1600000000"),
        "{p110:?}"
    );
    assert_eq!(p110["arrival_ns"], "", "{p110:?}");
    assert!(
        count(&summary["flows"][0], "late_deliveries") >= 1,
        "{}",
        summary["flows"][0]
    );
    assert_eq!(
        count(&summary["totals"], "late_deliveries"),
        summary["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| count(f, "late_deliveries"))
            .sum::<u64>()
    );
}

/// The fate rule does not depend on how the reports were batched: with
/// lookahead (two network steps of one second) and without (200 steps of
/// 10 ms) the results are the same bytes.
#[test]
fn packets_reported_twice_get_the_same_fate_whatever_the_steps() {
    let dir = tempfile::tempdir().unwrap();
    let ahead = congested_wifi_run(&dir.path().join("ahead"), &[]);
    let every = congested_wifi_run(&dir.path().join("every"), &["sync.lookahead=false"]);
    assert_eq!(
        (
            ahead["sync"]["syncs"].as_u64(),
            every["sync"]["syncs"].as_u64()
        ),
        (Some(2), Some(200))
    );
    for file in ["packets.csv", "timeseries.csv"] {
        let a = std::fs::read(dir.path().join("ahead").join(file)).unwrap();
        let b = std::fs::read(dir.path().join("every").join(file)).unwrap();
        assert!(
            a == b,
            "{file} differs between lookahead and syncing every period"
        );
    }
    assert_eq!(ahead["flows"], every["flows"]);
}
