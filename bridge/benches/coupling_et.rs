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

mod versus_ns3;

use std::path::Path;

use bridge::config::{Resolved, Scenario};

use versus_ns3::{interleave, servo_p2p_alone};

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

/// ns-3 alone with the loop's traffic, the downlink from the uplink's
/// first arrival.
fn ns3_alone() -> f64 {
    servo_p2p_alone(Some("2752us")).0
}

/// Event-driven, event-triggered controller, against ns-3 alone.
fn et_ratio() {
    let with = event_triggered_scenario(true);
    let without = event_triggered_scenario(false);
    let mut rounds = interleave(ROUNDS, &[&with, &without], ns3_alone, |report| {
        assert_eq!(
            report.summary.flows[1].counts.sent, 6000,
            "one answer per sample"
        );
    });
    println!("# 60 s event-triggered servo over p2p (1 Mbps, 2 ms), {ROUNDS} interleaved rounds, medians");
    let medians = rounds.print_table(
        &["event-driven, answer rules", "event-driven, rules = false"],
        32,
        9,
    );
    println!("et_ratio_without_rules={:.3}", medians[1]);
    println!("et_ratio={:.3}", medians[0]);
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    et_ratio();
}
