//! The schemes' accuracy ordering on a servo loop with an event-triggered
//! controller and random delay, T = 10 ms: against a reference (event-driven
//! at a ten times finer step), time-stepping errs more than master-slave,
//! which errs at least as much as event-driven.
//!
//! All runs see the same delays: the builtin channel draws them per flow in
//! send order, and every run sends the same packets in the same order.

use crate::support::*;

fn theta(scheme: &str, step: &str, record_every: u64) -> Vec<f64> {
    let header = format!(
        "duration = \"2s\"\nstep = \"{step}\"\nrecord_every = {record_every}\nseed = 3\n\
         [sync]\nscheme = \"{scheme}\"\nperiod = \"10ms\"\n"
    );
    let loops = servo_loop("servo", 0, 1, "trigger = \"event\"", "");
    let delay = r#"{ kind = "uniform", min = "1ms", max = "9ms" }"#;
    let (dir, _) = run_in_tempdir(&scenario(&header, delay, &loops));
    column(&dir.path().join("run"), "servo.x.theta")
}

fn rms_error(a: &[f64], reference: &[f64]) -> f64 {
    assert_eq!(a.len(), reference.len());
    (a.iter()
        .zip(reference)
        .map(|(x, r)| (x - r).powi(2))
        .sum::<f64>()
        / a.len() as f64)
        .sqrt()
}

#[test]
fn time_stepping_worse_than_master_slave_no_better_than_event_driven() {
    // Reference: 100 us steps, recorded every 10 so both grids are 1 ms.
    let reference = theta("event_driven", "100us", 10);
    let ts = rms_error(&theta("time_stepping", "1ms", 1), &reference);
    let ms = rms_error(&theta("master_slave", "1ms", 1), &reference);
    let ed = rms_error(&theta("event_driven", "1ms", 1), &reference);
    assert!(
        ts > ms,
        "time-stepping {ts:e} should err more than master-slave {ms:e}"
    );
    assert!(
        ms >= ed,
        "master-slave {ms:e} should err at least as much as event-driven {ed:e}"
    );
    assert!(
        ed > 0.0 && ed < 0.2 * ms,
        "event-driven {ed:e} is close to the reference, master-slave {ms:e} is not"
    );
}
