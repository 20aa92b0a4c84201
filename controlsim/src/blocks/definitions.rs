//! Known-answer tests of the blocks `tests.rs` does not cover (issue 13,
//! Tests: "each block against its definition"): the step, ramp, sine,
//! square and chirp sources, min / max / power / relational / logic,
//! derivative, zero-order hold, discrete integrator and backlash, each
//! against the formula of its row in docs/scenario.md.

use super::tests::{close, graph, scalar, trace};

/// Sources at h = 100 ms against their formulas, k = 0..=40.
#[test]
fn sources_follow_their_formulas() {
    let cases: &[(&str, fn(f64) -> f64)] = &[
        (
            r#"kind = "step"
               time = 0.25
               before = 1.0
               after = 3.0"#,
            |t| if t < 0.25 { 1.0 } else { 3.0 },
        ),
        (
            r#"kind = "ramp"
               slope = 2.0
               start = 0.3
               initial = 1.0"#,
            |t| 1.0 + 2.0 * (t - 0.3f64).max(0.0),
        ),
        (
            r#"kind = "sine"
               amplitude = 2.0
               frequency = 0.5
               phase = 0.1
               bias = 1.0"#,
            |t| 2.0 * (std::f64::consts::PI * t + 0.1).sin() + 1.0,
        ),
        (
            r#"kind = "chirp"
               amplitude = 1.5
               f0 = 1.0
               f1 = 3.0
               t1 = 2.0"#,
            |t| 1.5 * (2.0 * std::f64::consts::PI * (t + 0.5 * t * t)).sin(),
        ),
    ];
    for (text, f) in cases {
        let mut g = graph(100, &[("s", text)], &[]);
        for (k, y) in scalar(trace(&mut g, "s.y", 40)).iter().enumerate() {
            let t = k as f64 * 0.1;
            assert!(close(*y, f(t), 1e-9), "{text}\nat {t}: {y} vs {}", f(t));
        }
    }
    // Square, period 1 s: bias + amplitude in the first half of each
    // period, bias - amplitude in the second (the half boundaries, k a
    // multiple of 5, are left out: they are where the value switches).
    let mut g = graph(
        100,
        &[(
            "s",
            r#"kind = "square"
               amplitude = 2.0
               frequency = 1.0
               bias = 0.5"#,
        )],
        &[],
    );
    for (k, y) in scalar(trace(&mut g, "s.y", 40)).iter().enumerate() {
        if k % 5 != 0 {
            let expected = if (k / 5) % 2 == 0 { 2.5 } else { -1.5 };
            assert_eq!(*y, expected, "at k = {k}");
        }
    }
}

/// Element-wise math and logic of a = [0, 2, -1] and b = [1, 0, -3]
/// ("non-zero is true").
#[test]
fn min_max_power_relational_and_logic_blocks() {
    let a = r#"kind = "constant"
               value = [0.0, 2.0, -1.0]"#;
    let b = r#"kind = "constant"
               value = [1.0, 0.0, -3.0]"#;
    let two = |op: &str| format!("{op}\nwidth = 3");
    let cases: Vec<(String, bool, [f64; 3])> = vec![
        (two("kind = \"min\""), true, [0.0, 0.0, -3.0]),
        (two("kind = \"max\""), true, [1.0, 2.0, -1.0]),
        (
            two("kind = \"relational\"\nop = \"<\""),
            true,
            [1.0, 0.0, 0.0],
        ),
        (
            two("kind = \"relational\"\nop = \">=\""),
            true,
            [0.0, 1.0, 1.0],
        ),
        (two("kind = \"logic\"\nop = \"and\""), true, [0.0, 0.0, 1.0]),
        (two("kind = \"logic\"\nop = \"or\""), true, [1.0, 1.0, 1.0]),
        (two("kind = \"logic\"\nop = \"xor\""), true, [1.0, 1.0, 0.0]),
        (
            two("kind = \"logic\"\nop = \"nand\""),
            true,
            [1.0, 1.0, 0.0],
        ),
        (two("kind = \"logic\"\nop = \"nor\""), true, [0.0, 0.0, 0.0]),
        (
            two("kind = \"logic\"\nop = \"not\""),
            false,
            [1.0, 0.0, 0.0],
        ),
        (
            two("kind = \"power\"\nexponent = 2.0"),
            false,
            [0.0, 4.0, 1.0],
        ),
    ];
    for (text, binary, expected) in cases {
        let connections: Vec<(&str, &str)> = if binary {
            vec![("a.y", "f.u0"), ("b.y", "f.u1")]
        } else if text.contains("power") {
            vec![("a.y", "f.u")]
        } else {
            vec![("a.y", "f.u0")]
        };
        let mut g = graph(100, &[("a", a), ("b", b), ("f", &text)], &connections);
        let y = trace(&mut g, "f.y", 1).pop().unwrap();
        assert_eq!(y, expected, "{text}");
    }
}

/// The derivative of a ramp of slope 2 (h = 100 ms): 0 at the first step,
/// then `(u(k) - u(k-1)) / h` = 2; a zero-order hold every 300 ms from
/// 100 ms holds the clock's value at its sample instants.
#[test]
fn derivative_and_zero_order_hold() {
    let mut g = graph(
        100,
        &[
            (
                "r",
                r#"kind = "ramp"
                   slope = 2.0"#,
            ),
            ("d", r#"kind = "derivative""#),
        ],
        &[("r.y", "d.u")],
    );
    let d = scalar(trace(&mut g, "d.y", 10));
    assert_eq!(d[0], 0.0);
    for (k, v) in d.iter().enumerate().skip(1) {
        assert!(close(*v, 2.0, 1e-9), "derivative at {k}: {v}");
    }
    let mut g = graph(
        100,
        &[
            ("clock", r#"kind = "clock""#),
            (
                "zoh",
                r#"kind = "zero_order_hold"
                   period = "300ms"
                   phase = "100ms""#,
            ),
        ],
        &[("clock.y", "zoh.u")],
    );
    let held = scalar(trace(&mut g, "zoh.y", 10));
    // Samples at k = 1, 4, 7, 10; nothing sampled before k = 1 (0).
    let expected = [0.0, 0.1, 0.1, 0.1, 0.4, 0.4, 0.4, 0.7, 0.7, 0.7, 1.0];
    for (k, (v, e)) in held.iter().zip(expected).enumerate() {
        assert!(close(*v, e, 1e-12), "zoh at {k}: {v} vs {e}");
    }
}

/// Discrete integrator, gain 2, period 200 ms (T = 0.2), initial 1, upper
/// 4, of a constant 3: forward Euler `y(n+1) = min(y(n) + 2 * 0.2 * 3, 4)`,
/// delayed and held: 1, 1, 2.2, 2.2, 3.4, 3.4, 4, ...
#[test]
fn discrete_integrator_steps_by_gain_period_input_and_clamps() {
    let mut g = graph(
        100,
        &[
            (
                "three",
                r#"kind = "constant"
                   value = 3.0"#,
            ),
            (
                "i",
                r#"kind = "discrete_integrator"
                   gain = 2.0
                   initial = 1.0
                   upper = 4.0
                   period = "200ms""#,
            ),
        ],
        &[("three.y", "i.u")],
    );
    let y = scalar(trace(&mut g, "i.y", 10));
    let expected = [1.0, 1.0, 2.2, 2.2, 3.4, 3.4, 4.0, 4.0, 4.0, 4.0, 4.0];
    for (k, (v, e)) in y.iter().zip(expected).enumerate() {
        assert!(close(*v, e, 1e-12), "at {k}: {v} vs {e}");
    }
}

/// Backlash of deadband 1 (half 0.5), initial 0, driven by `u = 2 sin(pi t
/// / 2)` (h = 100 ms): 0 until u reaches 0.5, then `u - 0.5` up to the top
/// (1.5 at t = 1), held at 1.5 until u falls to 1 (t = 5/3), then `u +
/// 0.5` down to the bottom (-1.5 at t = 3), held until u rises to -1 (t =
/// 11/3), then `u - 0.5` again.
#[test]
fn backlash_block_follows_only_at_the_edges_of_its_band() {
    let mut g = graph(
        100,
        &[
            (
                "u",
                r#"kind = "sine"
                   amplitude = 2.0
                   frequency = 0.25"#,
            ),
            (
                "b",
                r#"kind = "backlash"
                   deadband = 1.0"#,
            ),
        ],
        &[("u.y", "b.u")],
    );
    let u = |t: f64| 2.0 * (std::f64::consts::FRAC_PI_2 * t).sin();
    let exact = |t: f64| -> f64 {
        if t <= 1.0 {
            (u(t) - 0.5).max(0.0)
        } else if t <= 5.0 / 3.0 {
            1.5
        } else if t <= 3.0 {
            u(t) + 0.5
        } else if t <= 11.0 / 3.0 {
            -1.5
        } else {
            u(t) - 0.5
        }
    };
    for (k, y) in scalar(trace(&mut g, "b.y", 45)).iter().enumerate() {
        let t = k as f64 * 0.1;
        assert!(close(*y, exact(t), 1e-9), "at {t}: {y} vs {}", exact(t));
    }
}
