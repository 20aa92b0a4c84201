//! Convergence order of the fixed-step solvers, measured through the engine.
//!
//! Model: the damped oscillator `x' = A x`, `A = [[0, 1], [-4, -0.4]]`,
//! `x(0) = [1, 0]` (natural frequency 2 rad/s, damping ratio 0.1), smooth
//! and linear. Exact solution: `x(t) = expm(A t) x(0)`. For a method of order
//! p the global error at a fixed time scales like `h^p`, so halving `h`
//! divides it by `2^p`: the measured order `log2(e(h) / e(h/2))` must be
//! within 0.3 of 1 (Euler), 2 (Heun) and 4 (RK4).

use controlsim::Silent;

use crate::common::{build, exact_linear, max_err};

const A: [[f64; 2]; 2] = [[0.0, 1.0], [-4.0, -0.4]];

fn error_at_2s(solver: &str, step_ms: u64) -> f64 {
    let mut sys = build(
        &format!(
            r#"
step = "{step_ms}ms"
solver = "{solver}"
[[loops]]
name = "osc"
[loops.plant]
kind = "state_space"
a = [[0.0, 1.0], [-4.0, -0.4]]
b = [[0.0], [1.0]]
c = [[1.0, 0.0]]
x0 = [1.0, 0.0]
[loops.sensor]
period = "{step_ms}ms"
[loops.controller]
kind = "open_loop"
"#
        ),
        0,
    );
    let k_end = 2000 / step_ms;
    sys.advance_to(k_end, &mut Silent).unwrap();
    let a: Vec<Vec<f64>> = A.iter().map(|r| r.to_vec()).collect();
    let exact = exact_linear(&a, &[0.0, 0.0], &[1.0, 0.0], 2.0);
    max_err(sys.loops()[0].state(), &exact)
}

fn measured_orders(solver: &str) -> [f64; 2] {
    let e = [
        error_at_2s(solver, 40),
        error_at_2s(solver, 20),
        error_at_2s(solver, 10),
    ];
    [(e[0] / e[1]).log2(), (e[1] / e[2]).log2()]
}

fn assert_order(solver: &str, expected: f64) {
    for order in measured_orders(solver) {
        assert!(
            (order - expected).abs() <= 0.3,
            "{solver}: measured order {order}, expected {expected}"
        );
    }
}

#[test]
fn euler_is_first_order() {
    assert_order("euler", 1.0);
}

#[test]
fn heun_is_second_order() {
    assert_order("heun", 2.0);
}

#[test]
fn rk4_is_fourth_order() {
    assert_order("rk4", 4.0);
}
