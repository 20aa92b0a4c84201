//! `scripts/bench.sh coupling`, case `et_ratio` (issue 18, item 1): a 60 s
//! simulated servo over a point-to-point link (examples/dc_servo_p2p.toml:
//! 10 ms sampling, 1 Mbps, 2 ms) whose PID is event-triggered and answers
//! each measurement at once, co-simulated under event-driven sync, against
//! ns-3 alone sending the same packets from its own schedule
//! (`netloop-server --standalone`: the uplink every 10 ms from 0, the
//! downlink every 10 ms from 2.752 ms, the uplink's arrival). With answer
//! rules (the default) the network runs ahead; `[sync] rules = false`, the
//! per-event stops, is measured alongside for comparison.
//!
//! Every variant is a whole run as a user starts it (server start-up
//! included, outputs written); variants alternate in rounds and each ratio
//! is the median of the rounds' ratios. The last line is `et_ratio=...`.
//! Other cases of `coupling` live in their own functions and files.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use bridge::config::{Resolved, Scenario};
use bridge::ns3::default_server_path;
use bridge::run::{run, RunOptions};

const ROUNDS: usize = 7;

/// The example with its controller event-triggered, under event-driven sync.
fn event_triggered_scenario(rules: bool) -> Resolved {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/dc_servo_p2p.toml");
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace("duration = \"3s\"", "duration = \"60s\"")
        .replace(
            "scheme = \"master_slave\"\nperiod = \"10ms\"",
            &format!("scheme = \"event_driven\"\nrules = {rules}"),
        )
        .replace(
            "trigger = \"time\"\nperiod = \"10ms\"",
            "trigger = \"event\"",
        );
    assert!(text.contains("trigger = \"event\"") && text.contains("event_driven"));
    Scenario::from_toml(&text).unwrap().resolve().unwrap()
}

/// Wall seconds and syncs of one whole run.
fn cosim(resolved: &Resolved, out: &Path) -> (f64, u64) {
    let options = RunOptions {
        out_dir: out.to_path_buf(),
        ..Default::default()
    };
    let started = Instant::now();
    let report = run(resolved, &options).expect("co-simulation runs");
    assert_eq!(
        report.summary.flows[1].counts.sent, 6000,
        "one answer per sample"
    );
    (started.elapsed().as_secs_f64(), report.summary.sync.syncs)
}

/// Wall seconds of ns-3 alone with the loop's traffic.
fn ns3_alone() -> f64 {
    let started = Instant::now();
    let output = Command::new(default_server_path())
        .args([
            "--network=p2p",
            "--nodes=2",
            "--dataRate=1Mbps",
            "--delay=2ms",
            "--standalone",
            "--standaloneFlows=0>1:9000:64:10ms;1>0:9001:64:10ms:2752us",
            "--stopTime=60s",
        ])
        .output()
        .expect("start netloop-server (scripts/build-ns3.sh builds it)");
    let wall = started.elapsed().as_secs_f64();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    wall
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Event-driven, event-triggered controller, against ns-3 alone.
fn et_ratio() {
    let variants = [
        ("event-driven, answer rules", event_triggered_scenario(true)),
        (
            "event-driven, rules = false",
            event_triggered_scenario(false),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    ns3_alone(); // warm the page cache: ns-3's libraries are large
    let mut alone = Vec::new();
    let mut walls = vec![Vec::new(); variants.len()];
    let mut ratios = vec![Vec::new(); variants.len()];
    let mut syncs = vec![0; variants.len()];
    for _ in 0..ROUNDS {
        let reference = ns3_alone();
        alone.push(reference);
        for (i, (_, resolved)) in variants.iter().enumerate() {
            let (wall, count) = cosim(resolved, &dir.path().join(i.to_string()));
            walls[i].push(wall);
            ratios[i].push(wall / reference);
            syncs[i] = count;
        }
    }
    println!("# 60 s event-triggered servo over p2p (1 Mbps, 2 ms), {ROUNDS} interleaved rounds, medians");
    println!(
        "{:<32} {:>9} {:>8} {:>9}",
        "variant", "wall_s", "syncs", "ratio"
    );
    println!(
        "{:<32} {:>9.3} {:>8} {:>9}",
        "ns-3 alone (--standalone)",
        median(&mut alone),
        "-",
        "1"
    );
    let mut medians = Vec::new();
    for (i, (name, _)) in variants.iter().enumerate() {
        let ratio = median(&mut ratios[i]);
        medians.push(ratio);
        println!(
            "{:<32} {:>9.3} {:>8} {:>9.3}",
            name,
            median(&mut walls[i]),
            syncs[i],
            ratio
        );
    }
    println!("et_ratio_without_rules={:.3}", medians[1]);
    println!("et_ratio={:.3}", medians[0]);
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    et_ratio();
}
