//! RK4 throughput of the engine against a hand-written loop.
//!
//! The same 4-state linear plant (`x' = A x + B u`, u held at 1) is
//! integrated for `STEPS` RK4 steps of 1 ms:
//! - **engine**: a [`System`] built from a scenario, driven by
//!   `advance_to(k + STEPS, &mut Silent)`: the full per-step path (loop
//!   dispatch, discrete/continuous branch, controller integration hook, reset
//!   check, non-finite check);
//! - **hand-written**: a plain RK4 loop on `[f64; 4]` arrays holding the same
//!   matrices, with the same stage formulas; the compiler fully unrolls it and
//!   keeps the state in registers. This is the baseline of `rk4_ratio`: the
//!   fastest straightforward code a person would write for this plant;
//! - **hand-written, run-time size**: the same loop over row-major `Vec`s
//!   whose sizes are known only at run time (as when the matrices are read
//!   from a file); reported for context.
//!
//! Each variant runs `REPS` times, interleaved; the medians are printed, the
//! final states are checked to be bit-identical across all three (same work,
//! same arithmetic), and the last line is
//! `rk4_ratio=<engine median / hand-written median>`.
//!
//! Run with `cargo bench -p controlsim --bench rk4` (release profile); set
//! `RK4_BENCH_VERBOSE=1` to also print every repetition's time.
//!
//! On a shared machine the engine (which, unlike the register-only
//! hand-written loop, stores the state to memory every step) is sensitive to
//! other work on the same core: expect a quiet-machine ratio near 1.15 and
//! up to about 1.8 while another process hammers the core's caches. The
//! `_min` line shows the best repetition of each for that reason.

use std::hint::black_box;
use std::time::Instant;

use controlsim::{Silent, System, SystemConfig};

#[path = "../tests/support/linear4.rs"]
mod linear4;

const STEPS: u64 = 2_000_000;
const REPS: usize = 11;

use linear4::{A, B, X0};
const H: f64 = 1e-3;

fn engine() -> System {
    let text = format!(
        "step = \"1ms\"\nsolver = \"rk4\"\n{}",
        linear4::open_loop("plant", true, "10ms", linear4::HOLD_ONE)
    );
    let cfg: SystemConfig = toml::from_str(&text).expect("bench scenario parses");
    System::from_config(&cfg, 0).expect("bench scenario builds")
}

/// `dx = A x + B u`, row-major, run-time sizes, left-to-right sums (the
/// engine's order).
#[inline(always)]
fn deriv(a: &[f64], b: &[f64], n: usize, m: usize, x: &[f64], u: &[f64], dx: &mut [f64]) {
    for i in 0..n {
        let mut s = 0.0;
        for j in 0..n {
            s += a[i * n + j] * x[j];
        }
        for j in 0..m {
            s += b[i * m + j] * u[j];
        }
        dx[i] = s;
    }
}

/// Hand-written RK4 on heap vectors, sizes known only at run time (as when
/// the matrices are read from a scenario file).
fn handwritten(steps: u64) -> Vec<f64> {
    let a: Vec<f64> = A.iter().flatten().copied().collect();
    let b: Vec<f64> = B.to_vec();
    let (n, m) = (black_box(4), black_box(1));
    let u = vec![1.0];
    let mut x = X0.to_vec();
    let (mut k1, mut k2, mut k3, mut k4, mut tmp) = (
        vec![0.0; n],
        vec![0.0; n],
        vec![0.0; n],
        vec![0.0; n],
        vec![0.0; n],
    );
    let h = black_box(H);
    let h2 = 0.5 * h;
    let h6 = h / 6.0;
    for _ in 0..steps {
        deriv(&a, &b, n, m, &x, &u, &mut k1);
        for i in 0..n {
            tmp[i] = x[i] + h2 * k1[i];
        }
        deriv(&a, &b, n, m, &tmp, &u, &mut k2);
        for i in 0..n {
            tmp[i] = x[i] + h2 * k2[i];
        }
        deriv(&a, &b, n, m, &tmp, &u, &mut k3);
        for i in 0..n {
            tmp[i] = x[i] + h * k3[i];
        }
        deriv(&a, &b, n, m, &tmp, &u, &mut k4);
        for i in 0..n {
            x[i] += h6 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    x
}

/// Hand-written RK4 on fixed-size arrays (fully unrolled by the compiler):
/// the baseline.
fn handwritten_const(steps: u64) -> [f64; 4] {
    let a = black_box(A);
    let b = black_box(B);
    let u = black_box(1.0);
    let d = |x: &[f64; 4]| {
        let mut dx = [0.0; 4];
        for i in 0..4 {
            let mut s = 0.0;
            for j in 0..4 {
                s += a[i][j] * x[j];
            }
            dx[i] = s + b[i] * u;
        }
        dx
    };
    let h = black_box(H);
    let (h2, h6) = (0.5 * h, h / 6.0);
    let mut x = X0;
    for _ in 0..steps {
        let k1 = d(&x);
        let k2 = d(&std::array::from_fn(|i| x[i] + h2 * k1[i]));
        let k3 = d(&std::array::from_fn(|i| x[i] + h2 * k2[i]));
        let k4 = d(&std::array::from_fn(|i| x[i] + h * k3[i]));
        for i in 0..4 {
            x[i] += h6 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    x
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; anything else (e.g. `cargo test
    // --benches`) runs a quick smoke check instead of the timed runs.
    let timed = std::env::args().any(|a| a == "--bench");
    let steps = if timed { STEPS } else { 10_000 };
    let reps = if timed { REPS } else { 1 };

    let (mut t_engine, mut t_hand, mut t_const) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        let mut sys = engine();
        let start = Instant::now();
        sys.advance_to(black_box(steps), &mut Silent)
            .expect("bench run");
        t_engine.push(start.elapsed().as_secs_f64());
        let x_engine = sys.loops()[0].state().to_vec();

        let start = Instant::now();
        let x_hand = black_box(handwritten(black_box(steps)));
        t_hand.push(start.elapsed().as_secs_f64());

        let start = Instant::now();
        let x_const = black_box(handwritten_const(black_box(steps)));
        t_const.push(start.elapsed().as_secs_f64());

        let same = |other: &[f64]| {
            x_engine
                .iter()
                .zip(other)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        };
        assert!(
            same(&x_hand),
            "engine {x_engine:?} and run-time-size {x_hand:?} must do the same arithmetic"
        );
        assert!(
            same(&x_const),
            "engine {x_engine:?} and hand-written {x_const:?} must do the same arithmetic"
        );
    }
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let (e_min, c_min) = (min(&t_engine), min(&t_const));
    if std::env::var_os("RK4_BENCH_VERBOSE").is_some() {
        for (name, t) in [
            ("engine", &t_engine),
            ("handwritten", &t_const),
            ("runtime_size", &t_hand),
        ] {
            let ns: Vec<String> = t
                .iter()
                .map(|s| format!("{:.1}", s / steps as f64 * 1e9))
                .collect();
            println!("{name}_ns_per_step_each={}", ns.join(","));
        }
    }
    let (e, h, c) = (median(t_engine), median(t_hand), median(t_const));
    let per = |t: f64| t / steps as f64 * 1e9;
    println!("rk4_steps={steps} reps={reps} plant=4-state linear, h=1ms");
    println!(
        "engine_ns_per_step={:.2} engine_steps_per_s={:.0}",
        per(e),
        steps as f64 / e
    );
    println!(
        "handwritten_ns_per_step={:.2} handwritten_steps_per_s={:.0}",
        per(c),
        steps as f64 / c
    );
    println!(
        "handwritten_runtime_size_ns_per_step={:.2} rk4_ratio_vs_runtime_size={:.3}",
        per(h),
        e / h
    );
    // Best-of-REPS, the intrinsic cost with the least interference from
    // other work on a shared machine; the ratio below is of the medians.
    println!(
        "engine_min_ns_per_step={:.2} handwritten_min_ns_per_step={:.2} rk4_ratio_min={:.3}",
        per(e_min),
        per(c_min),
        e_min / c_min
    );
    println!("rk4_ratio={:.3}", e / c);
}
