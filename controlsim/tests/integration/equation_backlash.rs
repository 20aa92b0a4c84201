//! The equation language's `backlash` element against its definition (issue
//! 13: "stateful `hysteresis(...)` and `backlash(...)` as declared
//! elements"; the hysteresis relay is tested in `equations.rs`).

use controlsim::Silent;

use crate::common::build;

/// `x = sin t` (`der(x) = cos(time)`), `backlash b(x, 0.4)` (half-width
/// 0.2) starting at x's start, 0. Known answer:
/// - rising: b stays 0 until x leaves the band at x = 0.2 (t = asin 0.2),
///   then follows at `x - 0.2` up to the top, b(pi/2) = 0.8;
/// - falling: b stays 0.8 until x = b - 0.2 = 0.6 (t = pi - asin 0.6),
///   then follows at `x + 0.2`.
///
/// Contact changes are not located: within `h * |der(x)|` <= 1e-3 of the
/// exact value at each check (RK4, h = 1 ms); x itself to 1e-9.
#[test]
fn backlash_follows_its_input_only_at_the_edges_of_its_band() {
    let mut sys = build(
        r#"
step = "1ms"
[[loops]]
name = "b"
[loops.plant]
kind = "equations"
equations = """
state x;
der(x) = cos(time);
backlash b(x, 0.4);
output x;
output y = b;
"""
[loops.sensor]
period = "1ms"
[loops.controller]
kind = "open_loop"
"#,
        0,
    );
    let half_pi = std::f64::consts::FRAC_PI_2;
    let exact = |t: f64| -> f64 {
        if t <= 0.2f64.asin() {
            0.0
        } else if t <= half_pi {
            t.sin() - 0.2
        } else if t <= std::f64::consts::PI - 0.6f64.asin() {
            0.8
        } else {
            t.sin() + 0.2
        }
    };
    for k in (0..=3000u64).step_by(50) {
        sys.advance_to(k, &mut Silent).unwrap();
        let y = sys.sample(0).unwrap().to_vec();
        let t = k as f64 * 1e-3;
        assert!((y[0] - t.sin()).abs() < 1e-9, "x at {t}: {}", y[0]);
        assert!(
            (y[1] - exact(t)).abs() <= 1e-3 + 1e-9,
            "b at {t}: {} vs {}",
            y[1],
            exact(t)
        );
    }
}
