//! Linear plants against exact solutions.

use controlsim::Silent;

use crate::common::{build, exact_linear, max_err};
use crate::linear4;

/// A 4-state plant (two coupled damped modes, eigenvalues around
/// -0.3 +/- 1.4i and -1.2 +/- 3.1i) under a unit step input from a non-zero
/// initial state. Exact: `x(t) = expm(A t) x0 + integral expm(A s) ds B u`,
/// from the matrix exponential of the augmented matrix (nalgebra). RK4 with
/// h = 1 ms must stay within 1e-9 everywhere on [0, 5 s].
#[test]
fn state_space_step_response_matches_matrix_exponential() {
    let a: Vec<Vec<f64>> = linear4::A.iter().map(|row| row.to_vec()).collect();
    let (b, x0) = (linear4::B, linear4::X0);
    let text = format!(
        "step = \"1ms\"\n{}",
        linear4::open_loop("four", true, "10ms", linear4::HOLD_ONE)
    );
    let mut sys = build(&text, 0);
    let mut worst: f64 = 0.0;
    for k in (100..=5000).step_by(100) {
        sys.advance_to(k, &mut Silent).unwrap();
        let exact = exact_linear(&a, &b, &x0, k as f64 * 1e-3);
        worst = worst.max(max_err(sys.loops()[0].state(), &exact));
    }
    assert!(worst <= 1e-9, "max error {worst:e}");
    assert!(
        worst > 0.0,
        "suspiciously exact: is the plant integrated at all?"
    );
}

/// `G(s) = (s + 3) / (s^2 + 3 s + 2)`, unit step:
/// `y(t) = 3/2 - 2 e^(-t) + 1/2 e^(-2t)` (partial fractions).
#[test]
fn transfer_function_step_response_is_analytic() {
    let mut sys = build(
        r#"
step = "1ms"
[[loops]]
name = "tf"
[loops.plant]
kind = "transfer_function"
num = [1.0, 3.0]
den = [1.0, 3.0, 2.0]
[loops.sensor]
period = "1ms"
[loops.actuator]
initial = 1.0
[loops.controller]
kind = "open_loop"
"#,
        0,
    );
    let mut y = [0.0];
    let mut worst: f64 = 0.0;
    for k in (0..=4000).step_by(50) {
        sys.advance_to(k, &mut Silent).unwrap();
        sys.outputs_into(0, &mut y).unwrap();
        let t = k as f64 * 1e-3;
        let exact = 1.5 - 2.0 * (-t).exp() + 0.5 * (-2.0 * t).exp();
        worst = worst.max((y[0] - exact).abs());
    }
    assert!(worst <= 1e-10, "max error {worst:e}");
}

/// Discrete plant `x[n+1] = 0.5 x[n] + u[n]`, period 10 ms on a 1 ms grid.
/// With `u = 1` from the start: `x[n] = 2 (1 - 0.5^n)`, held piecewise
/// constant, the new value appearing exactly at `n * 10 ms`. An input set in
/// the middle of a period is latched only at the next period start.
#[test]
fn discrete_state_space_updates_on_its_period_and_latches_input() {
    let text = |kind: &str, body: &str| {
        format!(
            r#"
step = "1ms"
[[loops]]
name = "d"
[loops.plant]
kind = "{kind}"
period = "10ms"
{body}
[loops.sensor]
period = "10ms"
[loops.actuator]
initial = 1.0
[loops.controller]
kind = "open_loop"
"#
        )
    };
    let mut ss = build(
        &text(
            "discrete_state_space",
            "a = [[0.5]]\nb = [[1.0]]\nc = [[1.0]]",
        ),
        0,
    );
    let mut tf = build(
        &text(
            "discrete_transfer_function",
            "num = [1.0]\nden = [1.0, -0.5]",
        ),
        0,
    );
    for k in 0..60u64 {
        ss.advance_to(k, &mut Silent).unwrap();
        tf.advance_to(k, &mut Silent).unwrap();
        let n = (k / 10) as i32;
        let expected = 2.0 * (1.0 - 0.5f64.powi(n));
        assert_eq!(ss.loops()[0].state()[0], expected, "k = {k}");
        let mut y = [0.0];
        tf.outputs_into(0, &mut y).unwrap();
        assert_eq!(y[0], expected, "transfer function, k = {k}");
    }

    // Latching: input 0 until k = 5 (mid-period), then 1.
    let mut late = build(
        &text(
            "discrete_state_space",
            "a = [[0.5]]\nb = [[1.0]]\nc = [[1.0]]",
        ),
        0,
    );
    late.set_actuator(0, 0, 0.0).unwrap();
    late.advance_to(5, &mut Silent).unwrap();
    late.set_actuator(0, 0, 1.0).unwrap();
    late.advance_to(10, &mut Silent).unwrap();
    assert_eq!(
        late.loops()[0].state()[0],
        0.0,
        "period 0 used u = 0 latched at k = 0"
    );
    late.advance_to(20, &mut Silent).unwrap();
    assert_eq!(
        late.loops()[0].state()[0],
        1.0,
        "period 1 latched u = 1 at k = 10"
    );
}

/// Transfer functions start from `x0`, the state of the controllable
/// canonical realisation: `x = [z, z']` with `den(s) z = u`, `y = num(s) z`.
///
/// Continuous `G(s) = (s + 3) / (s^2 + 3 s + 2)`, zero input, `x0 = [a, b] =
/// [1, -0.5]`: `z = (2a + b) e^(-t) - (a + b) e^(-2t)`, so
/// `y = 3 z + z' = 2 (2a + b) e^(-t) - (a + b) e^(-2t) = 3 e^(-t) - 0.5 e^(-2t)`.
///
/// Discrete `G(z) = (z + 0.5) / (z^2 - 1.1 z + 0.3)` (poles 0.5, 0.6), period
/// 10 ms, zero input, `x0 = [z[0], z[1]] = [1, 0]`: `z[n] = 6 0.5^n - 5 0.6^n`,
/// `y[n] = 0.5 z[n] + z[n+1] = 6 0.5^n - 5.5 0.6^n`, held between updates.
#[test]
fn transfer_functions_start_from_x0() {
    let text = |plant: &str| {
        format!(
            "step = \"1ms\"\n[[loops]]\nname = \"tf\"\n[loops.plant]\n{plant}\n[loops.sensor]\nperiod = \"10ms\"\n[loops.controller]\nkind = \"open_loop\""
        )
    };
    let mut sys = build(
        &text("kind = \"transfer_function\"\nnum = [1.0, 3.0]\nden = [1.0, 3.0, 2.0]\nx0 = [1.0, -0.5]"),
        0,
    );
    let mut y = [0.0];
    let mut worst: f64 = 0.0;
    for k in (0..=4000).step_by(50) {
        sys.advance_to(k, &mut Silent).unwrap();
        sys.outputs_into(0, &mut y).unwrap();
        let t = k as f64 * 1e-3;
        worst = worst.max((y[0] - (3.0 * (-t).exp() - 0.5 * (-2.0 * t).exp())).abs());
    }
    assert!(worst <= 1e-10, "continuous: max error {worst:e}");

    let mut sys = build(
        &text("kind = \"discrete_transfer_function\"\nnum = [1.0, 0.5]\nden = [1.0, -1.1, 0.3]\nperiod = \"10ms\"\nx0 = [1.0, 0.0]"),
        0,
    );
    for k in 0..=200u64 {
        sys.advance_to(k, &mut Silent).unwrap();
        sys.outputs_into(0, &mut y).unwrap();
        let n = (k / 10) as i32;
        let exact = 6.0 * 0.5f64.powi(n) - 5.5 * 0.6f64.powi(n);
        assert!(
            (y[0] - exact).abs() <= 1e-12,
            "discrete, k = {k}: {} vs {exact}",
            y[0]
        );
    }
}

/// `x0` means `[z, z', ...]` with `den(s) z = u`, `y = num(s) z` for a
/// non-monic denominator too (docs/scenario.md), not those values scaled by
/// the leading coefficient.
///
/// Continuous `num = [1, 2]`, `den = [2, 3, 4]`, zero input, `x0 = [z0, z0'] =
/// [1, -0.5]`: `2 z'' + 3 z' + 4 z = 0`, i.e. `z'' + 2 s z' + w0^2 z = 0` with
/// `s = 0.75`, `w0^2 = 2`, `w = sqrt(w0^2 - s^2)`:
/// `z = e^(-s t) (z0 cos wt + (z0' + s z0) / w sin wt)`,
/// `z' = e^(-s t) (z0' cos wt - (w0^2 z0 + s z0') / w sin wt)`, `y = z' + 2 z`.
///
/// Discrete `num = [2, 1]`, `den = [2, -2.2, 0.6]` (twice the monic case of
/// `transfer_functions_start_from_x0`), `x0 = [z[0], z[1]] = [1, 0]`:
/// `z[n] = 6 0.5^n - 5 0.6^n`, `y[n] = 2 z[n+1] + z[n] = 12 0.5^n - 11 0.6^n`.
#[test]
fn transfer_function_x0_with_non_monic_denominator() {
    let text = |plant: &str| {
        format!(
            "step = \"1ms\"\n[[loops]]\nname = \"tf\"\n[loops.plant]\n{plant}\n[loops.sensor]\nperiod = \"10ms\"\n[loops.controller]\nkind = \"open_loop\""
        )
    };
    let mut sys = build(
        &text("kind = \"transfer_function\"\nnum = [1.0, 2.0]\nden = [2.0, 3.0, 4.0]\nx0 = [1.0, -0.5]"),
        0,
    );
    let (z0, dz0, s, w02) = (1.0f64, -0.5f64, 0.75f64, 2.0f64);
    let w = (w02 - s * s).sqrt();
    let mut y = [0.0];
    let mut worst: f64 = 0.0;
    for k in (0..=4000).step_by(50) {
        sys.advance_to(k, &mut Silent).unwrap();
        sys.outputs_into(0, &mut y).unwrap();
        let t = k as f64 * 1e-3;
        let (c, sn, decay) = ((w * t).cos(), (w * t).sin(), (-s * t).exp());
        let z = decay * (z0 * c + (dz0 + s * z0) / w * sn);
        let dz = decay * (dz0 * c - (w02 * z0 + s * dz0) / w * sn);
        let x = sys.loops()[0].state();
        worst = worst
            .max((x[0] - z).abs())
            .max((x[1] - dz).abs())
            .max((y[0] - (dz + 2.0 * z)).abs());
    }
    assert!(worst <= 1e-10, "continuous: max error {worst:e}");

    let mut sys = build(
        &text("kind = \"discrete_transfer_function\"\nnum = [2.0, 1.0]\nden = [2.0, -2.2, 0.6]\nperiod = \"10ms\"\nx0 = [1.0, 0.0]"),
        0,
    );
    for k in 0..=200u64 {
        sys.advance_to(k, &mut Silent).unwrap();
        sys.outputs_into(0, &mut y).unwrap();
        let n = (k / 10) as i32;
        let exact = 12.0 * 0.5f64.powi(n) - 11.0 * 0.6f64.powi(n);
        assert!(
            (y[0] - exact).abs() <= 1e-12,
            "discrete, k = {k}: {} vs {exact}",
            y[0]
        );
    }
}
