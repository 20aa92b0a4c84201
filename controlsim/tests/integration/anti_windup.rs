//! Anti-windup: a servo position loop with a saturated actuator and a large
//! reference step.
//!
//! While the actuator is saturated the error stays large; without
//! anti-windup the integrator keeps growing and has to be unwound by an
//! error of the opposite sign, i.e. by overshoot. With clamping
//! (conditional integration) or back-calculation the integrator stops
//! growing while saturated, so the overshoot is much smaller. Known
//! qualitative answer (Åström & Hägglund): clamped overshoot well below the
//! unclamped one, here required to be less than a quarter (about 0.1 rad
//! against 1.4 rad with these gains).

use controlsim::{ClosedLoop, Delays, Response, System};

use crate::common::build;

/// Overshoot of the step response; `pid_limits` adds the actuator's limits
/// to the PID's own table as well.
fn overshoot(anti_windup: &str, pid_limits: bool) -> f64 {
    let limits = if pid_limits {
        "u_min = -12.0\nu_max = 12.0"
    } else {
        ""
    };
    let sys = build(
        &format!(
            r#"
step = "1ms"
[[loops]]
name = "servo"
[loops.plant]
kind = "dc_servo"
[loops.sensor]
period = "5ms"
[loops.actuator]
min = -12.0
max = 12.0
[loops.controller]
kind = "pid"
kp = 20.0
ki = 10.0
kd = 2.0
{limits}
anti_windup = "{anti_windup}"
[loops.reference]
kind = "step"
final = 3.0
"#
        ),
        0,
    );
    let mut cl = ClosedLoop::new(sys, Delays::default(), Response::Direct);
    let mut peak = f64::NEG_INFINITY;
    let mut saturated = 0u32;
    let mut watch = |s: &System| {
        peak = peak.max(s.loops()[0].state()[0]);
        if s.loops()[0].held_control()[0].abs() >= 12.0 {
            saturated += 1;
        }
    };
    cl.run_to(20_000, &mut watch).unwrap();
    assert!(
        saturated > 100,
        "{anti_windup}: the actuator should saturate for a while"
    );
    let settled = cl.system().loops()[0].state()[0];
    assert!(
        (settled - 3.0).abs() < 0.02,
        "{anti_windup}: settles at {settled}"
    );
    peak - 3.0
}

#[test]
fn clamping_reduces_overshoot_after_a_large_step() {
    let none = overshoot("none", true);
    let clamped = overshoot("clamping", true);
    let back = overshoot("back_calculation", true);
    assert!(
        none > 0.5,
        "windup should cause a large overshoot, got {none}"
    );
    assert!(clamped < 0.25 * none, "clamping {clamped} vs none {none}");
    assert!(back < 0.25 * none, "back-calculation {back} vs none {none}");
}

/// A PID without its own `u_min` / `u_max` saturates where the actuator does,
/// so the default anti-windup (clamping) works with only `[loops.actuator]`
/// limits: the same overshoot, to the bit, as with the limits repeated in the
/// PID, and well below the unprotected one.
#[test]
fn actuator_limits_alone_enable_anti_windup() {
    let none = overshoot("none", false);
    let clamped = overshoot("clamping", false);
    assert!(
        none > 0.5,
        "windup should cause a large overshoot, got {none}"
    );
    assert!(clamped < 0.25 * none, "clamping {clamped} vs none {none}");
    assert_eq!(
        clamped.to_bits(),
        overshoot("clamping", true).to_bits(),
        "the default limits are the actuator's"
    );
}
