//! Receive policies: `max_delay` drops exactly the packets whose delay
//! exceeds the threshold, `drop_stale` drops exactly the out-of-order ones,
//! and the counts in summary.json agree with packets.csv.

use std::collections::BTreeMap;

use crate::support::*;

const H_NS: u64 = 1_000_000;

/// Uniform delays of 1..25 ms with 5 ms sampling reorder packets often.
fn run_with_policies(
    scheme: &str,
) -> (
    tempfile::TempDir,
    Vec<BTreeMap<String, String>>,
    serde_json::Value,
) {
    let header = format!("duration = \"3s\"\nstep = \"1ms\"\nseed = 5\n[sync]\nscheme = \"{scheme}\"\nperiod = \"10ms\"\n");
    let loops = servo_loop(
        "servo",
        0,
        1,
        "trigger = \"event\"",
        "uplink = { drop_stale = true }\ndownlink = { max_delay = \"10ms\", on_loss = \"zero\" }",
    );
    let text = scenario(
        &header,
        r#"{ kind = "uniform", min = "1ms", max = "25ms" }"#,
        &loops,
    );
    let (dir, _) = run_in_tempdir(&text);
    let rows = packet_rows(&dir.path().join("run"));
    let summary: serde_json::Value =
        serde_json::from_slice(&read(&dir.path().join("run/summary.json"))).unwrap();
    (dir, rows, summary)
}

fn check(scheme: &str) {
    let (_dir, rows, summary) = run_with_policies(scheme);

    // max_delay on the downlink: dropped iff delivered with delay > 10 ms.
    let downlink: Vec<_> = rows
        .iter()
        .filter(|r| r["direction"] == "downlink" && r["fate"] != "in_flight")
        .collect();
    let late = downlink
        .iter()
        .filter(|r| num(r, "delay_ns").unwrap() > 10 * H_NS)
        .count();
    assert!(
        late > 20 && late < downlink.len() - 20,
        "{late} of {} late: a threshold worth testing",
        downlink.len()
    );
    for r in &downlink {
        let too_late = num(r, "delay_ns").unwrap() > 10 * H_NS;
        assert_eq!(r["fate"] == "dropped_max_delay", too_late, "{r:?}");
    }

    // drop_stale on the uplink: walk the deliveries in the order they take
    // effect (boundary, arrival time, number) and keep the highest number.
    let mut uplink: Vec<_> = rows
        .iter()
        .filter(|r| r["direction"] == "uplink" && r["fate"] != "in_flight")
        .collect();
    let effect = |r: &BTreeMap<String, String>| {
        let arrival = num(r, "arrival_ns").unwrap();
        let step = if scheme == "time_stepping" {
            (arrival / (10 * H_NS) + 1) * 10
        } else {
            arrival.div_ceil(H_NS)
        };
        (step, arrival, num(r, "number").unwrap())
    };
    uplink.sort_by_key(|r| effect(r));
    let mut highest: Option<u64> = None;
    let mut stale = 0;
    for r in &uplink {
        let n = num(r, "number").unwrap();
        let expected_stale = highest.is_some_and(|h| n <= h);
        assert_eq!(r["fate"] == "dropped_stale", expected_stale, "{r:?}");
        if expected_stale {
            stale += 1;
        } else {
            assert_eq!(r["fate"], "accepted");
            highest = Some(n);
        }
    }
    assert!(
        stale > 20,
        "only {stale} reordered packets: the delays should reorder"
    );

    // summary.json counts agree with packets.csv, flow by flow.
    for flow in summary["flows"].as_array().unwrap() {
        let id = flow["flow"].as_u64().unwrap().to_string();
        let of_flow: Vec<_> = rows.iter().filter(|r| r["flow"] == id).collect();
        let count = |fate: &str| of_flow.iter().filter(|r| r["fate"] == fate).count() as u64;
        assert_eq!(flow["sent"].as_u64().unwrap(), of_flow.len() as u64);
        assert_eq!(flow["accepted"].as_u64().unwrap(), count("accepted"));
        assert_eq!(
            flow["dropped_max_delay"].as_u64().unwrap(),
            count("dropped_max_delay")
        );
        assert_eq!(
            flow["dropped_stale"].as_u64().unwrap(),
            count("dropped_stale")
        );
        assert_eq!(flow["in_flight"].as_u64().unwrap(), count("in_flight"));
        assert_eq!(
            flow["delivered"].as_u64().unwrap(),
            count("accepted") + count("dropped_max_delay") + count("dropped_stale")
        );
    }
}

#[test]
fn policies_under_master_slave() {
    check("master_slave");
}

#[test]
fn policies_under_event_driven() {
    check("event_driven");
}

#[test]
fn policies_under_time_stepping() {
    check("time_stepping");
}

/// on_loss = "zero": the actuator is zero from the boundary where a late
/// control packet was dropped until the next accepted one.
#[test]
fn zero_on_loss_zeroes_the_actuator_at_the_drop() {
    let (dir, rows, _) = run_with_policies("event_driven");
    let applied = column(&dir.path().join("run"), "servo.u.voltage");
    let mut checked = 0;
    for r in rows.iter().filter(|r| r["fate"] == "dropped_max_delay") {
        let step = num(r, "arrival_ns").unwrap().div_ceil(H_NS) as usize;
        // Unless another packet was accepted at the same boundary.
        let same_step_accept = rows.iter().any(|o| {
            o["direction"] == "downlink"
                && o["fate"] == "accepted"
                && num(o, "applied_step") == Some(step as u64)
        });
        if !same_step_accept && step < applied.len() {
            assert_eq!(applied[step], 0.0, "actuator not zeroed at step {step}");
            checked += 1;
        }
    }
    assert!(checked > 10);
}
