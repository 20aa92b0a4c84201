//! An event-triggered controller is evaluated at its event time, the
//! arrival of the measurement it answers: its reference, its measurement and
//! its own clock (the PID's integral and derivative interval) are those of
//! that instant, not of the boundary where the packet acts. Checked against
//! an independent PID clocked at the arrival times (`pid_oracle.rs`), under
//! both schemes with exact receives.

use std::path::Path;

use crate::pid_oracle;
use crate::support::*;

/// Runs the oracle's loop and checks every answer; returns (answers
/// checked, answers whose arrival and boundary see different references).
fn check_run(scheme: &str, delay: &str) -> (usize, usize) {
    let header = format!(
        "duration = \"1.5s\"\nstep = \"1ms\"\nseed = 5\n[sync]\nscheme = \"{scheme}\"\nperiod = \"10ms\"\n"
    );
    let (dir, _) = run_in_tempdir(&scenario(&header, delay, pid_oracle::SERVO_LOOP));
    check_dir(&format!("{scheme}, delay {delay}"), &dir.path().join("run"))
}

pub fn check_dir(label: &str, dir: &Path) -> (usize, usize) {
    let uplink: Vec<(u64, u64)> = packet_rows(dir)
        .iter()
        .filter(|r| r["direction"] == "uplink" && r["fate"] == "accepted")
        .map(|r| (num(r, "number").unwrap(), num(r, "arrival_ns").unwrap()))
        .collect();
    let (y, uc) = (
        column(dir, "servo.y.theta"),
        column(dir, "servo.uc.voltage"),
    );
    let (integral, derivative) = (
        column(dir, "servo.xc.integral"),
        column(dir, "servo.xc.derivative"),
    );
    pid_oracle::check(label, &uplink, &y, &uc, &integral, &derivative)
}

/// A constant 2.5 ms delay: the measurement sent at 1.0 s arrives at
/// 1.0025 s, before the reference's edge at 1.0028 s, and is answered with
/// the reference of 1.0025 s although it acts at 1.003 s.
#[test]
fn the_answer_over_a_constant_delay_reads_the_reference_at_the_arrival() {
    for scheme in ["event_driven", "master_slave"] {
        let (checked, across) = check_run(scheme, r#"{ kind = "constant", value = "2500us" }"#);
        assert!(checked > 250, "{scheme}: {checked} answers checked");
        assert_eq!(
            across, 6,
            "{scheme}: every edge falls between an arrival and its boundary"
        );
    }
}

/// A random delay: the time between two answers is the time between the
/// arrivals, not between the boundaries where they act, in the integral and
/// in the derivative.
#[test]
fn the_answer_over_a_random_delay_is_clocked_at_the_arrivals() {
    for scheme in ["event_driven", "master_slave"] {
        let (checked, _) = check_run(scheme, r#"{ kind = "uniform", min = "1ms", max = "6ms" }"#);
        assert!(checked > 250, "{scheme}: {checked} answers checked");
    }
}
