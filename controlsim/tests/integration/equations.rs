//! Text equations against known answers: the bouncing ball's closed form,
//! a Van der Pol oscillator against a fine-step reference (showing RK4's
//! fourth order), a linear plant against the built-in state-space plant
//! bit for bit, and a hysteresis relay's switching instants.

use controlsim::{Silent, System};

use crate::common::build;
use crate::linear4;

const G: f64 = 9.81;

/// A loop around an equations plant given inline, open loop, `step`.
fn equations(text: &str, step: &str, extra: &str) -> System {
    build(
        &format!(
            r#"
step = "{step}"
[[loops]]
name = "eq"
[loops.plant]
kind = "equations"
equations = """
{text}
"""
{extra}
[loops.sensor]
period = "{step}"
[loops.controller]
kind = "open_loop"
"#
        ),
        0,
    )
}

/// The bouncing ball of the issue in the language.
pub const BALL: &str = "
parameter g = 9.81;
parameter e = 0.8;
input force;
state h(start = 10);
state v(start = 15);
der(h) = v;
der(v) = -g + force;
when h < 0 then h = 0, v = -e * pre(v);
output h;
";

/// g 9.81, e 0.8, thrown up at 15 m/s from 10 m, h = 10 ms, 20 s. First
/// impact at `t1 = (v0 + v1) / g` with `v1 = sqrt(v0^2 + 2 g h0)`, then
/// flights of `2 e^n v1 / g`; 18 impacts before 20 s (they accumulate at
/// 20.358 s). At every boundary the number of impacts is the closed form's,
/// the impact the state dates (`t - (r_n - v) / g`) is the analytic one to
/// 1e-9 s, and the apex of the current flight (`h + v^2 / 2g`) is the
/// analytic `r_n^2 / 2g` to 1e-8 m.
#[test]
fn bouncing_ball_equations_match_the_closed_form() {
    let (h0, v0, e) = (10.0f64, 15.0f64, 0.8f64);
    let v1 = (v0 * v0 + 2.0 * G * h0).sqrt();
    let mut times = vec![(v0 + v1) / G];
    let mut r = e * v1;
    for _ in 0..40 {
        times.push(times[times.len() - 1] + 2.0 * r / G);
        r *= e;
    }
    let mut sys = equations(BALL, "10ms", "");
    let mut apexes_checked = 0;
    for k in 1..=2000u64 {
        sys.advance_to(k, &mut Silent).unwrap();
        let t = k as f64 * 0.01;
        let lp = &sys.loops()[0];
        let (h, v) = (lp.state()[0], lp.state()[1]);
        let n = lp.resets() as usize;
        assert!(h >= 0.0, "t = {t}: h = {h:e}");
        let (lo, hi) = (
            times.partition_point(|&ti| ti <= t - 1e-9),
            times.partition_point(|&ti| ti <= t + 1e-9),
        );
        assert!(
            (lo..=hi).contains(&n),
            "t = {t}: {n} impacts, expected {lo}..={hi}"
        );
        let apex = h + v * v / (2.0 * G);
        if n == 0 {
            let apex0 = h0 + v0 * v0 / (2.0 * G);
            assert!(
                (apex - apex0).abs() < 1e-9,
                "t = {t}: apex {apex} vs {apex0}"
            );
            continue;
        }
        let rn = e.powi(n as i32) * v1;
        let located = t - (rn - v) / G;
        assert!(
            (located - times[n - 1]).abs() <= 1e-9,
            "impact {n}: at {located} vs {}",
            times[n - 1]
        );
        let apex_exact = rn * rn / (2.0 * G);
        assert!(
            (apex - apex_exact).abs() <= 1e-8,
            "t = {t}: apex {apex} vs {apex_exact}"
        );
        apexes_checked += 1;
    }
    assert_eq!(sys.loops()[0].resets(), 18, "impacts before 20 s");
    assert!(apexes_checked > 1600, "{apexes_checked}");
    // Each impact's event is the analytic impact time.
    let last = sys.loops()[0].last_event().unwrap();
    assert!(
        (last.time - times[17]).abs() < 1e-9,
        "{} vs {}",
        last.time,
        times[17]
    );
}

/// Van der Pol, mu = 1, from (2, 0), to 10 s. The same equations by a
/// hand-written RK4 in Rust at h/64 are the reference.
pub const VAN_DER_POL: &str = "
parameter mu = 1;
state x(start = 2);
state y(start = 0);
der(x) = y;
der(y) = mu * (1 - x^2) * y - x;
output x;
";

fn vdp(x: [f64; 2]) -> [f64; 2] {
    [x[1], 1.0 * (1.0 - x[0] * x[0]) * x[1] - x[0]]
}

/// RK4 with the engine's stage formulas.
fn rk4(mut x: [f64; 2], h: f64, steps: u64) -> [f64; 2] {
    let h2 = 0.5 * h;
    let h6 = h / 6.0;
    for _ in 0..steps {
        let k1 = vdp(x);
        let k2 = vdp([x[0] + h2 * k1[0], x[1] + h2 * k1[1]]);
        let k3 = vdp([x[0] + h2 * k2[0], x[1] + h2 * k2[1]]);
        let k4 = vdp([x[0] + h * k3[0], x[1] + h * k3[1]]);
        for i in 0..2 {
            x[i] += h6 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    x
}

/// The equations give the hand-written RK4's bits at the same step (same
/// arithmetic: `mu * (1 - x*x) * y - x`), and against the h/64 reference
/// the error falls 16-fold per halving of the step: order 4.
#[test]
fn van_der_pol_converges_at_order_four_to_the_reference() {
    let reference = rk4([2.0, 0.0], 0.01 / 64.0, 1000 * 64);
    let mut errors = Vec::new();
    for (step, steps) in [("40ms", 250u64), ("20ms", 500), ("10ms", 1000)] {
        let mut sys = equations(VAN_DER_POL, step, "");
        sys.advance_to(steps, &mut Silent).unwrap();
        let x = sys.loops()[0].state();
        let h = 10.0 / steps as f64;
        let hand = rk4([2.0, 0.0], h, steps);
        assert_eq!(
            [x[0].to_bits(), x[1].to_bits()],
            [hand[0].to_bits(), hand[1].to_bits()],
            "{step}: equations {x:?} vs hand-written {hand:?}"
        );
        let err = ((x[0] - reference[0]).powi(2) + (x[1] - reference[1]).powi(2)).sqrt();
        errors.push(err);
    }
    for w in errors.windows(2) {
        let order = (w[0] / w[1]).log2();
        assert!(
            (3.7..=4.3).contains(&order),
            "order {order}, errors {errors:?}"
        );
    }
    assert!(errors[2] < 1e-6, "{errors:?}");
}

/// The 4-state plant of the `rk4` bench as equations, every row written in
/// the order the built-in plant sums it (`A` left to right, then `B`):
/// every state at every step has the built-in `state_space` plant's bits.
#[test]
fn linear_equations_equal_the_state_space_plant_bit_for_bit() {
    let mut eq = equations(linear4::EQUATIONS, "1ms", "[loops.actuator]\ninitial = 1.0");
    let text = format!(
        "step = \"1ms\"\n{}",
        linear4::open_loop("ss", true, "1ms", linear4::HOLD_ONE)
    );
    let mut ss = build(&text, 0);
    for k in 1..=5000u64 {
        eq.advance_to(k, &mut Silent).unwrap();
        ss.advance_to(k, &mut Silent).unwrap();
        let a: Vec<u64> = eq.loops()[0].state().iter().map(|v| v.to_bits()).collect();
        let b: Vec<u64> = ss.loops()[0].state().iter().map(|v| v.to_bits()).collect();
        assert_eq!(a, b, "step {k}");
    }
}

/// A relay in a loop with an integrator makes a triangle wave: `x' = r`,
/// `r` = 1 until x rises to 1, then -1 until it falls to -1. Switches at
/// t = 1, 3, 5, ... exactly: with 3 ms steps 1, 5 and 7 s fall inside a
/// step and are located there; 3 and 9 s are boundaries.
#[test]
fn hysteresis_relay_switches_at_its_thresholds() {
    let text = "state x; der(x) = r; hysteresis r(x, -1, 1, 1, -1); output x;";
    let mut sys = equations(text, "3ms", "");
    let mut seen = 0;
    for k in 1..=3000u64 {
        sys.advance_to(k, &mut Silent).unwrap();
        let lp = &sys.loops()[0];
        let n = lp.resets();
        if n > seen {
            seen = n;
            let at = lp.last_event().unwrap().time;
            let exact = 2.0 * n as f64 - 1.0;
            assert!(
                (at - exact).abs() < 1e-9,
                "switch {n} at {at}, expected {exact}"
            );
        }
        let t = k as f64 * 0.003;
        let phase = (t + 1.0) % 4.0;
        let x_exact = if phase < 2.0 {
            phase - 1.0
        } else {
            3.0 - phase
        };
        assert!(
            (lp.state()[0] - x_exact).abs() < 1e-9,
            "t = {t}: {} vs {x_exact}",
            lp.state()[0]
        );
    }
    assert_eq!(
        seen, 5,
        "switches at 1, 3, 5, 7 and 9 s (the last boundary)"
    );
}

/// Parameter overrides by name reach the compiled model; an unknown one is
/// an error naming its key.
#[test]
fn parameter_overrides_by_name() {
    let sys = equations(BALL, "10ms", "[loops.plant.parameters]\ne = 0.5");
    assert_eq!(sys.loops()[0].state(), [10.0, 15.0]);
    let cfg: controlsim::SystemConfig = toml::from_str(&format!(
        "step = \"10ms\"\n[[loops]]\nname = \"b\"\n[loops.plant]\nkind = \"equations\"\nequations = \"\"\"{BALL}\"\"\"\n[loops.plant.parameters]\nq = 1.0\n[loops.sensor]\nperiod = \"10ms\"\n[loops.controller]\nkind = \"open_loop\"\n"
    ))
    .unwrap();
    let err = System::from_config(&cfg, 0).unwrap_err();
    assert_eq!(
        err.key().to_string(),
        "loops[0].plant.parameters.q",
        "{err}"
    );
}
