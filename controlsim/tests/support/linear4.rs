//! The 4-state linear plant that controlsim's tests and benchmarks integrate
//! (two coupled damped modes, `x' = A x + B u`, `y = x1`), written once: its
//! matrices, and the scenario text made from them. Included with `#[path]`
//! by tests/integration, tests/no_alloc.rs and benches/{rk4,equations}.rs,
//! each of which uses a part of it.
#![allow(dead_code)]

pub const A: [[f64; 4]; 4] = [
    [0.0, 1.0, 0.0, 0.0],
    [-2.0, -0.6, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
    [0.5, 0.0, -10.0, -2.4],
];
pub const B: [f64; 4] = [0.0, 1.0, 0.0, 0.5];
/// The non-zero initial state of the step-response tests.
pub const X0: [f64; 4] = [0.3, -0.2, 0.1, 0.0];

/// The plant as text equations from [`X0`], every row written in the order
/// the built-in plant sums it (`A` left to right, then `B`), so that both
/// give the same bits.
pub const EQUATIONS: &str = "
input u;
state x1(start = 0.3);
state x2(start = -0.2);
state x3(start = 0.1);
state x4(start = 0);
der(x1) = x2;
der(x2) = -2*x1 - 0.6*x2 + x3 + u;
der(x3) = x4;
der(x4) = 0.5*x1 - 10*x3 - 2.4*x4 + 0.5*u;
output x1;
";

/// The plant's `[loops.plant]` keys: from [`X0`] when `from_x0`, else from
/// rest.
pub fn plant_keys(from_x0: bool) -> String {
    let b: Vec<[f64; 1]> = B.iter().map(|v| [*v]).collect();
    let mut keys =
        format!("kind = \"state_space\"\na = {A:?}\nb = {b:?}\nc = [[1.0, 0.0, 0.0, 0.0]]");
    if from_x0 {
        keys += &format!("\nx0 = {X0:?}");
    }
    keys
}

/// A `[[loops]]` table named `name`: the plant ([`plant_keys`]) in open
/// loop, sampled every `sensor_period`, followed by the tables in `extra`
/// (an actuator holding u = 1, a reference, ...).
pub fn open_loop(name: &str, from_x0: bool, sensor_period: &str, extra: &str) -> String {
    format!(
        r#"[[loops]]
name = "{name}"
[loops.plant]
{}
[loops.sensor]
period = "{sensor_period}"
[loops.controller]
kind = "open_loop"
{extra}
"#,
        plant_keys(from_x0)
    )
}

/// The actuator of the step-response tests: u held at 1 from the start.
pub const HOLD_ONE: &str = "[loops.actuator]\ninitial = 1.0";
