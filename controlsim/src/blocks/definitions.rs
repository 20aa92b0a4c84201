//! Known-answer tests of the blocks `tests.rs` does not cover (issue 13,
//! Tests: "each block against its definition"): the step, ramp, sine,
//! square, pulse and chirp sources, every `function`, min / max / power /
//! relational / logic, derivative, zero-order hold, discrete integrator,
//! backlash, random, from_csv, discrete state space and if / if_action /
//! merge, each against the formula of its row in docs/scenario.md.

use super::tests::{close, graph, scalar, trace};
use crate::graph::Graph;

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

/// `n` steps of 100 ms of one `random` block (TOML `text`), all elements
/// of every boundary's value in order.
fn random_draws(text: &str, steps: u64) -> Vec<Vec<f64>> {
    let mut g = graph(100, &[("r", text)], &[]);
    let mut out = Vec::new();
    g.run_to(steps, &mut |g: &Graph| {
        out.push(g.value("r", "y").unwrap().to_vec())
    })
    .unwrap();
    out
}

/// Sample mean and (unbiased) variance.
fn mean_and_variance(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// `random` is a function of its seed: the same seed gives the same
/// numbers, another seed others, and without a seed each component draws
/// from its own stream of the scenario's seed.
#[test]
fn random_is_determined_by_its_seed() {
    let seeded =
        |seed: u64| random_draws(&format!("kind = \"random\"\nseed = {seed}\nwidth = 2"), 200);
    let (a, b, c) = (seeded(7), seeded(7), seeded(8));
    assert_eq!(a, b);
    let differ = a
        .iter()
        .flatten()
        .zip(c.iter().flatten())
        .filter(|(x, y)| x != y);
    assert_eq!(differ.count(), 400, "seeds 7 and 8 share values");
    // The two elements of one draw are two numbers, not one twice.
    assert!(a.iter().all(|v| v[0] != v[1]), "{a:?}");
    // Two unseeded blocks of one graph: streams 0 and 1.
    let mut g = graph(
        100,
        &[("p", "kind = \"random\""), ("q", "kind = \"random\"")],
        &[],
    );
    let mut same = 0;
    g.run_to(200, &mut |g: &Graph| {
        same += usize::from(g.value("p", "y").unwrap() == g.value("q", "y").unwrap());
    })
    .unwrap();
    assert_eq!(same, 0);
}

/// Uniform in `[min, max)` = `[-1, 3)` and normal with mean 2 and std 0.5,
/// over N = 20 000 draws (4 elements x 5 000 steps). The sample mean is
/// within 5 standard errors of the distribution's (uniform: sd 4/sqrt(12),
/// SE 0.0082; normal: SE 0.0035), the sample variance within 5 standard
/// errors of its (`sqrt((mu4 - sigma^4) / N)`: uniform 0.0084, normal
/// `sigma^2 sqrt(2 / N)` = 0.0025). A correct generator fails either
/// bound with probability below 1e-6 per check, whatever the seed; the
/// seed is fixed, so the test is deterministic.
#[test]
fn random_matches_its_distribution() {
    let n = 20_000.0f64;
    let uniform: Vec<f64> = random_draws(
        "kind = \"random\"\nmin = -1.0\nmax = 3.0\nwidth = 4\nseed = 11",
        5_000,
    )
    .concat();
    assert_eq!(uniform.len(), 20_000);
    assert!(uniform.iter().all(|&v| (-1.0..3.0).contains(&v)));
    // Both ends of the interval are reached (to within 1e-3).
    let lo = uniform.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = uniform.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert!(lo < -0.999 && hi > 2.999, "{lo} {hi}");
    let (mean, var) = mean_and_variance(&uniform);
    let (mu, sigma2) = (1.0, 16.0 / 12.0);
    let se_mean = (sigma2 / n).sqrt();
    let se_var = ((256.0 / 80.0 - sigma2 * sigma2) / n).sqrt();
    assert!((mean - mu).abs() < 5.0 * se_mean, "uniform mean {mean}");
    assert!(
        (var - sigma2).abs() < 5.0 * se_var,
        "uniform variance {var}"
    );

    let normal: Vec<f64> = random_draws(
        "kind = \"random\"\ndistribution = \"normal\"\nmean = 2.0\nstd = 0.5\nwidth = 4\nseed = 11",
        5_000,
    )
    .concat();
    let (mean, var) = mean_and_variance(&normal);
    let sigma2 = 0.25;
    assert!(
        (mean - 2.0).abs() < 5.0 * (sigma2 / n).sqrt(),
        "normal mean {mean}"
    );
    assert!(
        (var - sigma2).abs() < 5.0 * sigma2 * (2.0 / n).sqrt(),
        "normal variance {var}"
    );
    // About 68.3 % within one std (binomial SE 0.0033).
    let inside = normal.iter().filter(|v| (*v - 2.0).abs() < 0.5).count() as f64 / n;
    assert!((inside - 0.6827).abs() < 5.0 * 0.0033, "{inside}");
}

/// With `period = "300ms"` on a 100 ms step, a new draw at k = 0, 3, 6,
/// ... held in between; the draws are the same seed's first numbers at
/// one draw per step (nothing is drawn between samples).
#[test]
fn random_draws_once_per_period_and_holds() {
    let held = random_draws("kind = \"random\"\nseed = 5\nperiod = \"300ms\"", 30);
    let every_step = random_draws("kind = \"random\"\nseed = 5", 10);
    for (k, v) in held.iter().enumerate() {
        assert_eq!(v, &every_step[k / 3], "at k = {k}");
    }
    assert!(every_step.windows(2).all(|w| w[0] != w[1]));
}

/// `from_csv` at h = 100 ms of a table with samples at 0.2, 0.5 (a
/// header, an empty line) and 0.9 s, two columns: before 0.2 the first
/// row, linear: on the segment's line, hold: the last sample at or
/// before t (a sample's own time gives that sample), after 0.9 the last
/// row.
#[test]
fn from_csv_interpolates_or_holds_and_holds_both_ends() {
    let path = std::env::temp_dir().join(format!("netloop-from-csv-{}.csv", std::process::id()));
    std::fs::write(&path, "t, a, b\n0.2, 1, -4\n\n0.5, 4, 2\n0.9, 0, 2\n").unwrap();
    let text = |interpolation: &str| {
        format!(
            "kind = \"from_csv\"\nfile = {:?}\ninterpolation = \"{interpolation}\"",
            path.to_str().unwrap()
        )
    };
    let linear = trace(&mut graph(100, &[("p", &text("linear"))], &[]), "p.y", 12);
    let hold = trace(&mut graph(100, &[("p", &text("hold"))], &[]), "p.y", 12);
    std::fs::remove_file(&path).unwrap();
    // t = 0.0 .. 1.2 s
    let expected_linear = [
        [1.0, -4.0],
        [1.0, -4.0],
        [1.0, -4.0],
        [2.0, -2.0],
        [3.0, 0.0],
        [4.0, 2.0],
        [3.0, 2.0],
        [2.0, 2.0],
        [1.0, 2.0],
        [0.0, 2.0],
        [0.0, 2.0],
        [0.0, 2.0],
        [0.0, 2.0],
    ];
    let expected_hold = [
        [1.0, -4.0],
        [1.0, -4.0],
        [1.0, -4.0],
        [1.0, -4.0],
        [1.0, -4.0],
        [4.0, 2.0],
        [4.0, 2.0],
        [4.0, 2.0],
        [4.0, 2.0],
        [0.0, 2.0],
        [0.0, 2.0],
        [0.0, 2.0],
        [0.0, 2.0],
    ];
    for (k, ((l, h), (el, eh))) in linear
        .iter()
        .zip(&hold)
        .zip(expected_linear.iter().zip(&expected_hold))
        .enumerate()
    {
        assert!(
            close(l[0], el[0], 1e-12) && close(l[1], el[1], 1e-12),
            "linear at k = {k}: {l:?} vs {el:?}"
        );
        assert_eq!(h[..], eh[..], "hold at k = {k}");
    }
}

/// `discrete_state_space` with A = [[0.5, 0.25], [-0.5, 0]], B = [1; 2],
/// C = [1, -1], D = 0.5, x0 = [1, -2], every 300 ms from 100 ms (h = 100
/// ms), of u = 10 t (so u = 1, 4, 7, 10, 13 at its samples k = 1, 4, 7,
/// 10, 13). By hand, y(n) = C x(n) + D u(n) and x(n+1) = A x(n) + B u(n):
/// x = [1, -2], [1, 1.5], [4.875, 7.5], [11.3125, 11.5625], [18.546875,
/// 14.34375]; y = 3.5, 1.5, 0.875, 4.75, 10.703125, each held until the
/// next sample. Before the first sample: C x0 = 3 (no input sampled yet).
#[test]
fn discrete_state_space_steps_at_its_samples_and_holds() {
    let mut g = graph(
        100,
        &[
            (
                "u",
                r#"kind = "ramp"
                   slope = 10.0"#,
            ),
            (
                "ss",
                r#"kind = "discrete_state_space"
                   a = [[0.5, 0.25], [-0.5, 0.0]]
                   b = [[1.0], [2.0]]
                   c = [[1.0, -1.0]]
                   d = [[0.5]]
                   x0 = [1.0, -2.0]
                   period = "300ms"
                   phase = "100ms""#,
            ),
        ],
        &[("u.y", "ss.u")],
    );
    let mut y = Vec::new();
    g.run_to(14, &mut |g: &Graph| y.push(g.value("ss", "y").unwrap()[0]))
        .unwrap();
    let samples = [3.5, 1.5, 0.875, 4.75, 10.703125];
    let expected: Vec<f64> = (0..14)
        .map(|k| if k == 0 { 3.0 } else { samples[(k - 1) / 3] })
        .collect();
    assert_eq!(y.len(), expected.len());
    for (k, (v, e)) in y.iter().zip(&expected).enumerate() {
        assert!(close(*v, *e, 1e-12), "at k = {k}: {v} vs {e}");
    }
}

/// `pulse` against its row of docs/scenario.md ("`amplitude` while high,
/// else 0; 0 before `delay`"): high on `[delay + n period, delay + n period
/// + duty period)`. The expected values are integer arithmetic on the
/// boundary index, in hundredths or thousandths of a second. Three cases:
/// edges exactly on boundaries (all of them exact binary fractions, so a
/// pulse starts at its edge and ends at the next), the defaults (duty 0.5,
/// delay 0, amplitude 1) with some edges on boundaries, and edges between
/// boundaries (a period and delay that are not binary fractions); and duty 1,
/// high from `delay` on.
#[test]
fn pulse_is_high_for_its_duty_from_its_delay_on() {
    // (step in ms, block, high at boundary k, amplitude)
    type Case = (u64, &'static str, fn(u64) -> bool, f64);
    let cases: &[Case] = &[
        // h = 50 ms; high on [0.5 + n, 0.75 + n): t = 5k hundredths.
        (
            50,
            r#"kind = "pulse"
               amplitude = 2.0
               period = 1.0
               duty = 0.25
               delay = 0.5"#,
            |k| 5 * k >= 50 && (5 * k - 50) % 100 < 25,
            2.0,
        ),
        // h = 100 ms; high on [0.75 n, 0.75 n + 0.375): t = 100k thousandths.
        (
            100,
            r#"kind = "pulse"
               period = 0.75"#,
            |k| (100 * k) % 750 < 375,
            1.0,
        ),
        // h = 100 ms; high on [0.13 + 0.7 n, 0.34 + 0.7 n): t = 10k hundredths.
        (
            100,
            r#"kind = "pulse"
               amplitude = -1.5
               period = 0.7
               duty = 0.3
               delay = 0.13"#,
            |k| 10 * k >= 13 && (10 * k - 13) % 70 < 21,
            -1.5,
        ),
        // h = 100 ms; duty 1: high from 0.25 s on.
        (
            100,
            r#"kind = "pulse"
               amplitude = 3.0
               period = 0.3
               duty = 1.0
               delay = 0.25"#,
            |k| k >= 3,
            3.0,
        ),
    ];
    for &(step_ms, text, high, amplitude) in cases {
        let mut g = graph(step_ms, &[("p", text)], &[]);
        let y = scalar(trace(&mut g, "p.y", 80));
        for (k, &v) in y.iter().enumerate() {
            let want = if high(k as u64) { amplitude } else { 0.0 };
            assert_eq!(v, want, "{text}\nat k = {k}");
        }
        // Both levels are seen (the case is not all one level).
        assert!(y.contains(&amplitude) && y.contains(&0.0), "{text}: {y:?}");
    }
}

/// The `function` block against Rust's `f64` functions, bit for bit, for
/// every function docs/scenario.md lists (read from its row, so a function
/// added there is tested here; an unknown name fails to parse, a new
/// [`FunctionKind`] fails to compile in [`reference`]). The inputs include
/// signed zeros, halves (for the rounding functions) and values outside
/// some domains (NaN results must be the same NaN). `sign` has no `f64`
/// method of that meaning (`signum(0) = 1`): its definition is -1, 0 or 1
/// (a zero keeps its sign, NaN stays NaN).
#[test]
fn every_function_is_the_f64_function_bit_for_bit() {
    use super::math::{FunctionConfig, FunctionKind};
    use std::hint::black_box;

    fn reference(f: FunctionKind) -> fn(f64) -> f64 {
        use FunctionKind as F;
        match f {
            F::Abs => f64::abs,
            F::Sign => |x| {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    x
                }
            },
            F::Sqrt => f64::sqrt,
            F::Exp => f64::exp,
            F::Log => f64::ln,
            F::Log10 => f64::log10,
            F::Sin => f64::sin,
            F::Cos => f64::cos,
            F::Tan => f64::tan,
            F::Asin => f64::asin,
            F::Acos => f64::acos,
            F::Atan => f64::atan,
            F::Sinh => f64::sinh,
            F::Cosh => f64::cosh,
            F::Tanh => f64::tanh,
            F::Square => |x| x * x,
            F::Reciprocal => |x| 1.0 / x,
            F::Floor => f64::floor,
            F::Ceil => f64::ceil,
            F::Round => f64::round,
        }
    }

    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/scenario.md"))
        .unwrap();
    let row = doc
        .lines()
        .find(|l| l.starts_with("| `function` |"))
        .expect("docs/scenario.md has a `function` row");
    let names: Vec<&str> = row
        .split("`function` is one of `")
        .nth(1)
        .and_then(|s| s.split('`').next())
        .expect("the row lists the functions")
        .split_whitespace()
        .collect();
    assert_eq!(names.len(), 20, "{names:?}");

    let u = [
        -2.5, -1.0, -0.5, -0.0, 0.0, 1e-300, 0.3, 0.5, 1.0, 1.5, 2.5, 7.0, 710.0, -1e308,
    ];
    let input = format!("kind = \"constant\"\nvalue = {u:?}");
    for name in names {
        let c: FunctionConfig = toml::from_str(&format!("function = \"{name}\""))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let f = reference(c.function);
        let text = format!(
            "kind = \"function\"\nfunction = \"{name}\"\nwidth = {}",
            u.len()
        );
        let mut g = graph(10, &[("u", &input), ("f", &text)], &[("u.y", "f.u")]);
        g.evaluate().unwrap();
        let y = g.value("f", "y").unwrap();
        for (&x, &v) in u.iter().zip(y) {
            let want = f(black_box(x));
            assert_eq!(
                v.to_bits(),
                want.to_bits(),
                "{name}({x:e}) = {v:e} ({:#x}), f64 gives {want:e} ({:#x})",
                v.to_bits(),
                want.to_bits()
            );
        }
    }
}

/// Boundaries `0..=steps` of a graph: at each, the first element of every
/// `component.port` in `probes`.
fn rows(g: &mut Graph, probes: &[&str], steps: u64) -> Vec<Vec<f64>> {
    let read = |g: &Graph| -> Vec<f64> {
        probes
            .iter()
            .map(|p| {
                let (c, port) = p.split_once('.').unwrap();
                g.value(c, port).unwrap()[0]
            })
            .collect()
    };
    let mut out = Vec::new();
    g.run_to(steps, &mut |g: &Graph| out.push(read(g))).unwrap();
    g.evaluate().unwrap();
    out.push(read(g));
    out
}

/// `merge` (docs/scenario.md: "`y` is the input whose `action` is set (the
/// first), held when none is"), driven by an `action` that is not an `if`'s
/// so that no element or two can be set: u0 = t, u1 = -t at h = 100 ms,
/// with action [1, 0] before 0.5 s, [0, 0] to 1 s (y holds t(0.4)), [0, 1]
/// to 1.5 s, [1, 1] to 2 s (the first: u0) and [0, 0] after (y holds
/// t(1.9)); bit for bit the clock's values.
#[test]
fn merge_passes_the_first_set_input_and_holds_when_none_is_set() {
    let mut g = graph(
        100,
        &[
            ("clock", r#"kind = "clock""#),
            (
                "minus",
                r#"kind = "gain"
                   k = -1.0"#,
            ),
            (
                "action",
                r#"kind = "expr"
                   inputs = 0
                   expr = [
                       "if time < 0.5 or (time >= 1.5 and time < 2) then 1 else 0",
                       "if time >= 1 and time < 2 then 1 else 0",
                   ]"#,
            ),
            ("m", r#"kind = "merge""#),
        ],
        &[
            ("clock.y", "minus.u"),
            ("clock.y", "m.u0"),
            ("minus.y", "m.u1"),
            ("action.y", "m.action"),
        ],
    );
    let r = rows(&mut g, &["clock.y", "m.y"], 25);
    let t = |k: usize| r[k][0];
    for (k, row) in r.iter().enumerate() {
        let want = match k {
            0..=4 | 15..=19 => t(k),
            5..=9 => t(4),
            10..=14 => -t(k),
            _ => t(19),
        };
        assert_eq!(row[1].to_bits(), want.to_bits(), "k = {k}: {row:?}");
    }
    assert_eq!(t(20), 2.0);
}

/// The If/IfAction/Merge pattern (docs/scenario.md): an `if` with
/// conditions `u < 0.5` and `u < 1.2` of the clock (h = 100 ms) sets the
/// first that holds, else its last element; three `if_action` branches
/// (`2 u`, `u * u`, `u + 10`, each `initial = -1`) compute only while their
/// element is set and hold their output otherwise (the initial one before
/// they first run); the merge passes the branch taken. The held values
/// survive a snapshot and restore.
#[test]
fn if_action_branches_run_only_when_taken_and_hold_otherwise() {
    let branch = |expr: &str| format!("kind = \"if_action\"\nexpr = \"{expr}\"\ninitial = -1.0");
    let (double, square, late) = (branch("2 * u"), branch("u * u"), branch("u + 10"));
    let make = || {
        graph(
            100,
            &[
                ("clock", r#"kind = "clock""#),
                (
                    "branch",
                    r#"kind = "if"
                       conditions = ["u < 0.5", "u < 1.2"]"#,
                ),
                ("double", &double),
                ("square", &square),
                ("late", &late),
                (
                    "m",
                    r#"kind = "merge"
                       inputs = 3"#,
                ),
            ],
            &[
                ("clock.y", "branch.u"),
                ("branch.action[0]", "double.action"),
                ("branch.action[1]", "square.action"),
                ("branch.action[2]", "late.action"),
                ("clock.y", "double.u"),
                ("clock.y", "square.u"),
                ("clock.y", "late.u"),
                ("double.y", "m.u0"),
                ("square.y", "m.u1"),
                ("late.y", "m.u2"),
                ("branch.action", "m.action"),
            ],
        )
    };
    let probes = ["clock.y", "double.y", "square.y", "late.y", "m.y"];
    let r = rows(&mut make(), &probes, 20);
    let t = |k: usize| r[k][0];
    for (k, row) in r.iter().enumerate() {
        // Taken: `double` before 0.5 s, `square` to 1.2 s, then `late`.
        let taken = match k {
            0..=4 => 0,
            5..=11 => 1,
            _ => 2,
        };
        let double = 2.0 * t(k.min(4));
        let square = if k < 5 {
            -1.0
        } else {
            t(k.min(11)) * t(k.min(11))
        };
        let late = if k < 12 { -1.0 } else { t(k) + 10.0 };
        let want = [double, square, late, [double, square, late][taken]];
        assert_eq!(row[1..], want, "k = {k}: {row:?}");
    }
    assert_eq!(t(12), 1.2);
    // From a snapshot at k = 8 (`double` holding, `late` at its initial
    // value), the same boundaries again.
    let mut g = make();
    g.run_to(8, &mut |_: &Graph| {}).unwrap();
    let snap = g.snapshot();
    let first = rows(&mut g, &probes, 20);
    g.restore(&snap).unwrap();
    let again = rows(&mut g, &probes, 20);
    assert_eq!(first, r[8..]);
    assert_eq!(again, r[8..]);
}
