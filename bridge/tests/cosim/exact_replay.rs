//! Receive events are replayed at exact solver-step indices: with h = 1 ms
//! and a constant delay of 3.7 ms, or of 13.7 ms (longer than the sync period
//! T = 10 ms, so a packet is in flight across sync points), every packet takes
//! effect at k_a = ceil(t_a / h) under master-slave and event-driven sync,
//! and at the next sync boundary after its arrival under time-stepping.

use crate::support::*;

const H_NS: u64 = 1_000_000;
const T_STEPS: u64 = 10;
/// Shorter and longer than the sync period.
const DELAYS: [&str; 2] = ["3.7ms", "13.7ms"];

/// (arrival, applied step) of every accepted packet of a run with a constant
/// delay.
fn applied_steps(scheme: &str, delay: &str) -> Vec<(u64, u64)> {
    let header = format!(
        "duration = \"2s\"\nstep = \"1ms\"\n[sync]\nscheme = \"{scheme}\"\nperiod = \"10ms\"\n"
    );
    let loops = servo_loop("a", 0, 1, "trigger = \"event\"", "")
        + &servo_loop("b", 2, 3, "trigger = \"time\"\nperiod = \"10ms\"", "");
    let (dir, _) = run_in_tempdir(&scenario(
        &header,
        &format!(r#"{{ kind = "constant", value = "{delay}" }}"#),
        &loops,
    ));
    let rows = packet_rows(&dir.path().join("run"));
    let accepted: Vec<_> = rows
        .iter()
        .filter(|r| r["fate"] == "accepted")
        .map(|r| {
            (
                num(r, "arrival_ns").unwrap(),
                num(r, "applied_step").unwrap(),
                r["direction"].clone(),
            )
        })
        .collect();
    assert!(accepted.len() > 1000, "{delay}: {} packets", accepted.len());
    assert!(
        accepted.iter().any(|(_, _, d)| d == "uplink")
            && accepted.iter().any(|(_, _, d)| d == "downlink")
    );
    let delay_ns: protocol::SimTime = delay.parse().unwrap();
    for r in &rows {
        assert_eq!(
            num(r, "delay_ns").unwrap_or(delay_ns.0),
            delay_ns.0,
            "{r:?}"
        );
    }
    accepted
        .into_iter()
        .map(|(arrival, step, _)| (arrival, step))
        .collect()
}

#[test]
fn master_slave_applies_at_the_first_step_boundary_after_arrival() {
    for delay in DELAYS {
        for (arrival, step) in applied_steps("master_slave", delay) {
            assert_eq!(
                step,
                arrival.div_ceil(H_NS),
                "{delay}: arrival {arrival} ns"
            );
        }
    }
}

#[test]
fn event_driven_applies_at_the_first_step_boundary_after_arrival() {
    for delay in DELAYS {
        for (arrival, step) in applied_steps("event_driven", delay) {
            assert_eq!(
                step,
                arrival.div_ceil(H_NS),
                "{delay}: arrival {arrival} ns"
            );
        }
    }
}

#[test]
fn time_stepping_applies_at_the_next_sync_boundary() {
    for delay in DELAYS {
        for (arrival, step) in applied_steps("time_stepping", delay) {
            assert_eq!(
                step,
                (arrival / (T_STEPS * H_NS) + 1) * T_STEPS,
                "{delay}: arrival {arrival} ns"
            );
        }
    }
}
