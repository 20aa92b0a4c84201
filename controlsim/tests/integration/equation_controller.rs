//! `kind = "equations"` controllers: an equation PI against the built-in
//! `pid`, its direct and rollback outputs against their known values, and
//! the errors for a model whose inputs or outputs do not fit the loop.

use controlsim::{ClosedLoop, Delays, Response, Silent, SimTime, System, SystemConfig};

use crate::common::build;

/// A PI in equations: inputs are the measurement then the reference.
const PI_EQUATIONS: &str = r#"
kind = "equations"
equations = """
parameter kp = 40;
parameter ki = 20;
input y;
input r;
state xi;
der(xi) = ki * e;
e = r - y;
output u = kp * e + xi;
"""
"#;

/// The built-in PID with the same gains and no derivative.
const PI_BUILTIN: &str = r#"
kind = "pid"
kp = 40.0
ki = 20.0
kd = 0.0
anti_windup = "none"
"#;

/// A DC servo (2 states) under `controller`, Euler, sensor and controller
/// every step (1 ms), reference a step to 1 at 50 ms.
fn servo(controller: &str, solver: &str) -> System {
    build(
        &format!(
            r#"
step = "1ms"
solver = "{solver}"
[[loops]]
name = "servo"
[loops.plant]
kind = "dc_servo"
[loops.sensor]
period = "1ms"
[loops.controller]
{controller}
[loops.reference]
kind = "step"
at = "50ms"
final = 1.0
"#
        ),
        0,
    )
}

/// Plant state and controls at every boundary, as bits.
fn trace(mut cl: ClosedLoop, steps: u64) -> Vec<Vec<u64>> {
    let mut seen = Vec::new();
    cl.run_to(steps, &mut |s: &System| {
        let lp = &s.loops()[0];
        seen.push(
            [lp.state(), lp.held_control(), lp.computed_control()]
                .concat()
                .iter()
                .map(|v| v.to_bits())
                .collect(),
        );
    })
    .unwrap();
    seen
}

/// Under Euler with the period equal to the step, the equation PI is the
/// `pid` with kd = 0 bit for bit: `pid` integrates `I += dt * (ki *
/// e_prev)` and outputs `kp * e + I + D` with `D = 0`; Euler integrates
/// `xi += h * (ki * e)` over the step with the error of its start, and
/// `dt == h` (both the step's nanoseconds in seconds), so every operation
/// is the same. Over a zero-delay loop and over a delayed one (uplink
/// 3 ms, downlink 2 ms), 3000 steps.
#[test]
fn equation_pi_equals_builtin_pid_bit_for_bit_under_euler() {
    for delays in [
        Delays::default(),
        Delays {
            uplink: SimTime::from_millis(3),
            downlink: SimTime::from_millis(2),
        },
    ] {
        let ours = trace(
            ClosedLoop::new(servo(PI_EQUATIONS, "euler"), delays, Response::Direct),
            3000,
        );
        let builtin = trace(
            ClosedLoop::new(servo(PI_BUILTIN, "euler"), delays, Response::Direct),
            3000,
        );
        assert_eq!(ours.len(), 3000);
        assert_eq!(ours, builtin, "{delays:?}");
        // The loop did something: the servo moved toward the reference.
        let pos = f64::from_bits(ours[2999][0]);
        assert!(pos > 0.5, "servo position {pos}");
    }
}

/// An integrator plant (`x' = u`, y = x, x(0) = 0) and the equation PI
/// kp = 1.5, ki = 3 with r = 1 and the measurement held at 0 (the test
/// never delivers a sample to the controller, so its input stays 0): the
/// error is 1, `xi = 3 t` (RK4 is exact on it), `u = 1.5 + 3 t`; the
/// rollback response is the same one step (1 ms) later, and moves nothing.
#[test]
fn equation_pi_direct_and_rollback_outputs() {
    let mut sys = build(
        r#"
step = "1ms"
[[loops]]
name = "c"
[loops.plant]
kind = "state_space"
a = [[0.0]]
b = [[1.0]]
c = [[1.0]]
[loops.sensor]
period = "1ms"
[loops.controller]
kind = "equations"
equations = "input y; input r; state xi; der(xi) = ki * (r - y); output u = kp * (r - y) + xi; parameter kp = 1; parameter ki = 1;"
parameters = { kp = 1.5, ki = 3.0 }
[loops.reference]
kind = "constant"
value = 1.0
"#,
        0,
    );
    assert!(sys.loops()[0].has_rollback_response());
    sys.advance_to(500, &mut Silent).unwrap();
    let direct = sys.compute_control(0).unwrap()[0];
    assert!((direct - (1.5 + 3.0 * 0.5)).abs() < 1e-12, "{direct}");
    let state = sys.loops()[0].controller_state().to_vec();
    assert!((state[0] - 1.5).abs() < 1e-12, "{state:?}");
    let rollback = sys.rollback_response(0).unwrap()[0];
    assert!((rollback - (1.5 + 3.0 * 0.501)).abs() < 1e-12, "{rollback}");
    assert_eq!(sys.k(), 500);
    assert_eq!(sys.loops()[0].controller_state(), &state[..]);
}

/// docs/design.md §4.4 literally (snapshot; advance one step; read the
/// controller output; restore) gives the same bits as `rollback_response`
/// for an equation controller, at several points of a run, and a snapshot
/// restored later continues with the same bits.
#[test]
fn equation_rollback_response_equals_snapshot_advance_restore() {
    let mut sys = servo(PI_EQUATIONS, "rk4");
    for n in 1..=5u64 {
        sys.advance_to(n * 137, &mut Silent).unwrap();
        sys.set_controller_input(0, 0, 0.25).unwrap();
        let snap = sys.snapshot();
        let k = sys.k();
        sys.advance_to(k + 1, &mut Silent).unwrap();
        let literal = sys.compute_control(0).unwrap()[0];
        let state_after = sys.loops()[0].controller_state().to_vec();
        sys.restore(&snap).unwrap();
        let before = sys.loops()[0].controller_state().to_vec();
        let ours = sys.rollback_response(0).unwrap()[0];
        assert_eq!(literal.to_bits(), ours.to_bits(), "at k = {k}");
        assert_eq!(sys.loops()[0].controller_state(), &before[..]);
        // And the state a restore brings back integrates to the same bits.
        sys.advance_to(k + 1, &mut Silent).unwrap();
        assert_eq!(sys.loops()[0].controller_state(), &state_after[..]);
        sys.restore(&snap).unwrap();
    }
}

fn build_err(controller: &str, reference: &str) -> String {
    let text = format!(
        r#"
step = "1ms"
[[loops]]
name = "c"
[loops.plant]
kind = "dc_servo"
[loops.sensor]
period = "1ms"
[loops.controller]
{controller}
{reference}
"#
    );
    let cfg: SystemConfig = toml::from_str(&text).unwrap();
    System::from_config(&cfg, 0).unwrap_err().to_string()
}

/// A model with fewer inputs than measured channels, with more outputs
/// than the plant has inputs, with a reference count that is not its own,
/// or with guards, is an error naming the key.
#[test]
fn equation_controller_shape_errors_name_the_key() {
    let cases = [
        (
            "kind = \"equations\"\nequations = \"output u = 1;\"",
            "",
            "loops[0].controller.equations",
            "declares 0 inputs",
        ),
        (
            "kind = \"equations\"\nequations = \"input y; output u = -y; output v = y;\"",
            "",
            "loops[0].controller.equations",
            "declares 2 outputs, but the plant has 1 input",
        ),
        (
            "kind = \"equations\"\nequations = \"input y; input r; output u = r - y;\"",
            "[[loops.reference]]\nkind = \"constant\"\nvalue = 1.0\n[[loops.reference]]\nkind = \"constant\"\nvalue = 2.0",
            "loops[0].reference",
            "2 reference signals given, but this controller",
        ),
        (
            "kind = \"equations\"\nequations = \"input y; state z; der(z) = 1; when z > 1 then z = 0; output u = -y;\"",
            "",
            "loops[0].controller.equations",
            "cannot have guards",
        ),
        (
            "kind = \"equations\"",
            "",
            "loops[0].controller",
            "needs `source",
        ),
    ];
    for (controller, reference, key, what) in cases {
        let e = build_err(controller, reference);
        assert!(e.contains(key) && e.contains(what), "{controller}: {e}");
    }
}
