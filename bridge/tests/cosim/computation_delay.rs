//! `[sync] computation_delay`: the time from a measurement's arrival at an
//! event-triggered controller to its answer entering the network. Under
//! event-driven sync the answer is sent at exactly arrival + delay (docs/design.md
//! §4.3); under master-slave it waits for a sync point (docs/design.md §4.2): the
//! first one at or after arrival + delay that the network has not yet run
//! past, which is the end of the period in which the measurement took effect.

use std::collections::BTreeMap;

use crate::support::*;

const H_NS: u64 = 1_000_000;
const T_NS: u64 = 10 * H_NS;

/// Rows of an event-triggered servo loop's run, with `computation_delay`.
fn run(scheme: &str, computation_delay: &str) -> Vec<BTreeMap<String, String>> {
    let header = format!(
        "duration = \"2s\"\nstep = \"1ms\"\nseed = 3\n[sync]\nscheme = \"{scheme}\"\nperiod = \"10ms\"\n\
         computation_delay = \"{computation_delay}\"\n"
    );
    let loops = servo_loop("servo", 0, 1, "trigger = \"event\"", "");
    let (dir, _) = run_in_tempdir(&scenario(&header, r#"{ kind = "uniform", min = "1ms", max = "6ms" }"#, &loops));
    packet_rows(&dir.path().join("run"))
}

/// Each answer with the measurement it answers, as (measurement arrival,
/// answer sent). Answers are numbered in the order they are computed, and
/// the controller computes one for every accepted measurement, in the order
/// they take effect (step, arrival, number).
fn answers(rows: &[BTreeMap<String, String>]) -> Vec<(u64, u64)> {
    let mut measurements: Vec<_> = rows
        .iter()
        .filter(|r| r["direction"] == "uplink" && r["fate"] == "accepted")
        .map(|r| (num(r, "applied_step").unwrap(), num(r, "arrival_ns").unwrap(), num(r, "number").unwrap()))
        .collect();
    measurements.sort();
    let mut sent: Vec<_> =
        rows.iter().filter(|r| r["direction"] == "downlink").map(|r| (num(r, "number").unwrap(), num(r, "sent_ns").unwrap())).collect();
    sent.sort();
    assert_eq!(measurements.len(), sent.len(), "one answer per accepted measurement");
    assert!(sent.len() > 300, "{} answers", sent.len());
    sent.iter().enumerate().for_each(|(i, (number, _))| assert_eq!(*number, i as u64, "answer numbers"));
    measurements.iter().zip(&sent).map(|((_, arrival, _), (_, sent))| (*arrival, *sent)).collect()
}

#[test]
fn event_driven_sends_the_answer_at_arrival_plus_the_computation_delay() {
    for (arrival, sent) in answers(&run("event_driven", "300us")) {
        assert_eq!(sent, arrival + 300_000, "measurement arrived at {arrival} ns");
    }
}

/// Master-slave replays a period after the network ran it, so an answer can
/// enter the network no earlier than the end of the period in which its
/// measurement took effect (step k_a = ceil(t_a / h)); with no computation
/// delay it goes exactly there. A computation delay that reaches past that
/// sync point moves the answer to the next one.
#[test]
fn master_slave_sends_the_answer_at_the_first_sync_point_after_it_is_ready() {
    let period_end = |arrival: u64| (arrival.div_ceil(H_NS) * H_NS / T_NS + 1) * T_NS;
    for (arrival, sent) in answers(&run("master_slave", "0s")) {
        assert_eq!(sent, period_end(arrival), "measurement arrived at {arrival} ns");
    }
    let (mut moved, mut kept) = (0, 0);
    for (arrival, sent) in answers(&run("master_slave", "2500us")) {
        let ready = arrival + 2_500_000;
        assert_eq!(sent, (ready.div_ceil(T_NS) * T_NS).max(period_end(arrival)), "measurement arrived at {arrival} ns");
        if sent > period_end(arrival) {
            moved += 1;
        } else {
            kept += 1;
        }
    }
    assert!(moved > 10 && kept > 10, "{moved} answers moved to a later sync point, {kept} not: both cases matter");
}
