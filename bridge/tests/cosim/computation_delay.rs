//! `[sync] computation_delay`: the time from a measurement's arrival at an
//! event-triggered controller to its answer entering the network. Under
//! event-driven sync the answer is sent at exactly arrival + delay (docs/design.md
//! §4.3); under master-slave it waits for a sync point (docs/design.md §4.2): the
//! first one at or after arrival + delay.

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
    let (dir, _) = run_in_tempdir(&scenario(
        &header,
        r#"{ kind = "uniform", min = "1ms", max = "6ms" }"#,
        &loops,
    ));
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
        .map(|r| {
            (
                num(r, "applied_step").unwrap(),
                num(r, "arrival_ns").unwrap(),
                num(r, "number").unwrap(),
            )
        })
        .collect();
    measurements.sort();
    let mut sent: Vec<_> = rows
        .iter()
        .filter(|r| r["direction"] == "downlink")
        .map(|r| (num(r, "number").unwrap(), num(r, "sent_ns").unwrap()))
        .collect();
    sent.sort();
    assert_eq!(
        measurements.len(),
        sent.len(),
        "one answer per accepted measurement"
    );
    assert!(sent.len() > 300, "{} answers", sent.len());
    sent.iter()
        .enumerate()
        .for_each(|(i, (number, _))| assert_eq!(*number, i as u64, "answer numbers"));
    measurements
        .iter()
        .zip(&sent)
        .map(|((_, arrival, _), (_, sent))| (*arrival, *sent))
        .collect()
}

#[test]
fn event_driven_sends_the_answer_at_arrival_plus_the_computation_delay() {
    for (arrival, sent) in answers(&run("event_driven", "300us")) {
        assert_eq!(
            sent,
            arrival + 300_000,
            "measurement arrived at {arrival} ns"
        );
    }
}

/// Master-slave sends an answer at the first sync point at or after arrival
/// + computation delay (`docs/scenario.md`), also when the measurement
/// arrived in the last step of a period and so acts at the next period's
/// first boundary: its answer is computed at its arrival, in the replay of
/// the period it arrived in, and still goes at that period's end.
#[test]
fn master_slave_sends_the_answer_at_the_first_sync_point_after_it_is_ready() {
    for (delay, delay_ns) in [("0s", 0), ("300us", 300_000), ("2500us", 2_500_000)] {
        let (mut last_step, mut moved) = (0, 0);
        for (arrival, sent) in answers(&run("master_slave", delay)) {
            let ready = arrival + delay_ns;
            assert_eq!(
                sent,
                ready.div_ceil(T_NS) * T_NS,
                "computation delay {delay}: measurement arrived at {arrival} ns"
            );
            // Arrived in a period's last step: acts at the next period's first boundary.
            if arrival.div_ceil(H_NS) * H_NS % T_NS == 0 && arrival % T_NS != 0 {
                last_step += 1;
            }
            if sent > arrival.div_ceil(T_NS) * T_NS {
                moved += 1;
            }
        }
        assert!(
            last_step > 10,
            "computation delay {delay}: {last_step} measurements arrived in a period's last step"
        );
        if delay_ns > 0 {
            assert!(
                moved > 0,
                "computation delay {delay}: no answer moved past the arrival's own sync point"
            );
        }
    }
}
