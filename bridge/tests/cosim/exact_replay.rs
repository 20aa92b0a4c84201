//! Receive events are replayed at exact solver-step indices: with h = 1 ms
//! and a constant delay of 3.7 ms, every packet takes effect at
//! k_a = ceil(t_a / h) under master-slave and event-driven sync, and at the
//! next sync boundary after its arrival under time-stepping.

use crate::support::*;

const H_NS: u64 = 1_000_000;
const T_STEPS: u64 = 10;

fn applied_steps(scheme: &str) -> Vec<(u64, u64, String)> {
    let header = format!("duration = \"2s\"\nstep = \"1ms\"\n[sync]\nscheme = \"{scheme}\"\nperiod = \"10ms\"\n");
    let loops = servo_loop("a", 0, 1, "trigger = \"event\"", "")
        + &servo_loop("b", 2, 3, "trigger = \"time\"\nperiod = \"10ms\"", "");
    let (dir, _) = run_in_tempdir(&scenario(&header, r#"{ kind = "constant", value = "3.7ms" }"#, &loops));
    let rows = packet_rows(&dir.path().join("run"));
    let accepted: Vec<_> = rows
        .iter()
        .filter(|r| r["fate"] == "accepted")
        .map(|r| (num(r, "arrival_ns").unwrap(), num(r, "applied_step").unwrap(), r["direction"].clone()))
        .collect();
    assert!(accepted.len() > 1000, "{} packets", accepted.len());
    assert!(accepted.iter().any(|(_, _, d)| d == "uplink") && accepted.iter().any(|(_, _, d)| d == "downlink"));
    for r in &rows {
        assert_eq!(num(r, "delay_ns").unwrap_or(3_700_000), 3_700_000);
    }
    accepted
}

#[test]
fn master_slave_applies_at_the_first_step_boundary_after_arrival() {
    for (arrival, step, _) in applied_steps("master_slave") {
        assert_eq!(step, arrival.div_ceil(H_NS), "arrival {arrival} ns");
    }
}

#[test]
fn event_driven_applies_at_the_first_step_boundary_after_arrival() {
    for (arrival, step, _) in applied_steps("event_driven") {
        assert_eq!(step, arrival.div_ceil(H_NS), "arrival {arrival} ns");
    }
}

#[test]
fn time_stepping_applies_at_the_next_sync_boundary() {
    for (arrival, step, _) in applied_steps("time_stepping") {
        assert_eq!(step, (arrival / (T_STEPS * H_NS) + 1) * T_STEPS, "arrival {arrival} ns");
    }
}
