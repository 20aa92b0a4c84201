//! One linear plant, the 4-state plant of `support/linear4.rs`
//! (`x' = A x + B u`, `y = x1`, from `X0`), written every way a scenario
//! can write it, side by side in one graph and driven by one source:
//!
//! - the built-in `state_space` plant (`[components.plant]`);
//! - text equations, as a plant (`kind = "equations"`) and as a block
//!   (`[components.block] kind = "equations"`);
//! - a block diagram: one `state_space` block;
//! - a block diagram of integrators: an `integrator` of width 4 fed by a
//!   `gain` of `[A | B]` applied to `mux(x, u)`.
//!
//! The first four do the same arithmetic: each right-hand side sums row
//! `i` as `0 + A[i][0] x0 + ... + A[i][3] x3 + B[i] u` (the equations in the
//! same order, their zero terms left out, which adds nothing), and the
//! engine's RK4 integrates it with the input held over the step. So they
//! are compared bit for bit, with each other and with RK4 written out here
//! with the engine's stage formulas. The integrator diagram is another
//! method: an `integrator` adds `h u` per step (docs/scenario.md, "Held
//! inputs"), so the diagram is forward Euler, compared bit for bit with
//! Euler written out here and, against the exact solution, shown to be
//! first order where the others are fourth order.

use controlsim::blocks::{build as build_block, BlockConfig, BlockContext};
use controlsim::graph::adapters::PlantComponent;
use controlsim::graph::{Graph, GraphBuilder};
use controlsim::{KeyPath, PlantConfig, PlantModel, SimTime, SolverKind, StepSize};

use crate::common::{exact_linear, max_err};
use crate::linear4::{self, A, B, EQUATIONS, X0};

/// The forms integrated by RK4, by component name.
const RK4_FORMS: [&str; 4] = ["plant", "eq_plant", "eq_block", "ss_block"];

/// The graph of every form, on a step of `h`, all driven by the block
/// `drive` (TOML of a source block) through its output `drive.y`.
fn forms(h: SimTime, drive: &str) -> Graph {
    let step = StepSize::new(h).unwrap();
    let mut b = GraphBuilder::new(h, SolverKind::Rk4);
    let block = |b: &mut GraphBuilder, name: &str, text: &str| {
        let c: BlockConfig = toml::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let key = KeyPath::key(name);
        let cx = BlockContext {
            step,
            seed: 1,
            stream: 0,
        };
        b.component_keyed(
            key.clone(),
            name,
            build_block(&key, &c, cx).unwrap_or_else(|e| panic!("{name}: {e}")),
        );
    };
    let plant = |name: &str, text: &str| {
        let c: PlantConfig = toml::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let key = KeyPath::key(name);
        PlantComponent::new(&key, PlantModel::from_config(&key, &c).unwrap(), step).unwrap()
    };
    block(&mut b, "drive", drive);
    b.component("plant", plant("plant", &linear4::plant_keys(true)));
    let equations = format!("kind = \"equations\"\nequations = \"\"\"{EQUATIONS}\"\"\"");
    b.component("eq_plant", plant("eq_plant", &equations));
    block(&mut b, "eq_block", &equations);
    let col = |v: &[f64; 4]| -> Vec<[f64; 1]> { v.iter().map(|x| [*x]).collect() };
    block(
        &mut b,
        "ss_block",
        &format!(
            "kind = \"state_space\"\na = {A:?}\nb = {:?}\nc = [[1.0, 0.0, 0.0, 0.0]]\nx0 = {X0:?}",
            col(&B)
        ),
    );
    // x' = [A | B] [x; u], integrated by an integrator of width 4.
    let ab: Vec<Vec<f64>> = (0..4)
        .map(|i| A[i].iter().copied().chain([B[i]]).collect())
        .collect();
    block(&mut b, "xu", "kind = \"mux\"\nwidths = [4, 1]");
    block(&mut b, "rhs", &format!("kind = \"gain\"\nk = {ab:?}"));
    block(
        &mut b,
        "chain",
        &format!("kind = \"integrator\"\ninitial = {X0:?}\nwidth = 4"),
    );
    for form in ["plant", "eq_plant", "ss_block"] {
        b.connect("drive.y", &format!("{form}.u"));
    }
    b.connect("drive.y", "eq_block.u")
        .connect("chain.y", "xu.u0")
        .connect("drive.y", "xu.u1")
        .connect("xu.y", "rhs.u")
        .connect("rhs.y", "chain.u");
    b.build().unwrap()
}

/// `A x + B u`, row by row as the engine's linear models sum it.
fn rhs(x: &[f64; 4], u: f64) -> [f64; 4] {
    let mut dx = [0.0; 4];
    for i in 0..4 {
        let mut s = 0.0;
        for j in 0..4 {
            s += A[i][j] * x[j];
        }
        dx[i] = s + B[i] * u;
    }
    dx
}

/// One RK4 step with `u` held, with the engine's stage formulas.
fn rk4_step(x: &mut [f64; 4], h: f64, u: f64) {
    let h2 = 0.5 * h;
    let stage = |x: &[f64; 4], k: &[f64; 4], c: f64| -> [f64; 4] {
        std::array::from_fn(|i| x[i] + c * k[i])
    };
    let k1 = rhs(x, u);
    let k2 = rhs(&stage(x, &k1, h2), u);
    let k3 = rhs(&stage(x, &k2, h2), u);
    let k4 = rhs(&stage(x, &k3, h), u);
    let h6 = h / 6.0;
    for i in 0..4 {
        x[i] += h6 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
}

/// One forward Euler step with `u` held: what the integrator diagram does.
fn euler_step(x: &mut [f64; 4], h: f64, u: f64) {
    let dx = rhs(x, u);
    for i in 0..4 {
        x[i] += h * dx[i];
    }
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Driven by a sine (u changes at every step), h = 1 ms, 5000 steps: at
/// every boundary the state of the built-in plant, the equations plant,
/// the equations block and the `state_space` block are the same bits, and
/// those of RK4 written out here; the integrator diagram's are forward
/// Euler's written out here. Both move (the sine drives them).
#[test]
fn a_linear_plant_is_the_same_bits_as_plant_equations_and_blocks() {
    let h = 1e-3;
    let mut g = forms(
        SimTime::from_millis(1),
        "kind = \"sine\"\namplitude = 2.0\nfrequency = 0.7",
    );
    let idx: Vec<usize> = RK4_FORMS
        .iter()
        .map(|f| g.component_index(f).unwrap())
        .collect();
    let (mut rk4, mut euler) = (X0, X0);
    let mut k = 0u64;
    let mut apart: f64 = 0.0;
    g.run_to(5000, &mut |g: &Graph| {
        for (form, &i) in RK4_FORMS.iter().zip(&idx) {
            assert_eq!(
                bits(g.states(i)),
                bits(&rk4),
                "boundary {k}: {form} {:?}, RK4 {rk4:?}",
                g.states(i)
            );
        }
        // The outputs too: y = x1 for all (C x adds only zeros to x1).
        for port in ["plant.y", "eq_plant.y", "eq_block.x1", "ss_block.y"] {
            let (c, p) = port.split_once('.').unwrap();
            assert_eq!(
                g.value(c, p).unwrap()[0].to_bits(),
                rk4[0].to_bits(),
                "{k}: {port}"
            );
        }
        let chain = g.value("chain", "y").unwrap();
        assert_eq!(bits(chain), bits(&euler), "boundary {k}: chain vs Euler");
        apart = apart.max(max_err(chain, &rk4));
        let u = g.value("drive", "y").unwrap()[0];
        rk4_step(&mut rk4, h, u);
        euler_step(&mut euler, h, u);
        k += 1;
    })
    .unwrap();
    assert_eq!(k, 5000);
    assert!(max_err(&rk4, &X0) > 0.1, "the plant moves: {rk4:?}");
    // Euler and RK4 differ by Euler's error: small, but not nothing.
    assert!(apart > 1e-5 && apart < 1e-2, "Euler vs RK4: {apart:e}");
}

/// The exact state at `t` under u = 0 before 0.5 s and 1 after, from `X0`
/// (matrix exponentials).
fn exact(t: f64) -> Vec<f64> {
    let a: Vec<Vec<f64>> = A.iter().map(|row| row.to_vec()).collect();
    let x_half = exact_linear(&a, &[0.0; 4], &X0, t.min(0.5));
    if t <= 0.5 {
        x_half
    } else {
        exact_linear(&a, &B, &x_half, t - 0.5)
    }
}

/// The largest error against [`exact`] at t = 0.2, 0.4, ..., 5 s, of the
/// RK4 forms (the same bits: checked) and of the integrator diagram, at a
/// step of `h_us` microseconds.
fn errors(h_us: u64) -> (f64, f64) {
    let mut g = forms(
        SimTime::from_micros(h_us),
        "kind = \"step\"\ntime = 0.5\nbefore = 0.0\nafter = 1.0",
    );
    let every = 200_000 / h_us;
    let idx: Vec<usize> = RK4_FORMS
        .iter()
        .map(|f| g.component_index(f).unwrap())
        .collect();
    let (mut rk4, mut euler, mut k) = (0.0f64, 0.0f64, 0u64);
    g.run_to(5_000_000 / h_us + 1, &mut |g: &Graph| {
        if k > 0 && k % every == 0 {
            let x = g.states(idx[0]);
            for &i in &idx[1..] {
                assert_eq!(bits(g.states(i)), bits(x), "h = {h_us} us, k = {k}");
            }
            let want = exact((k * h_us) as f64 * 1e-6);
            rk4 = rk4.max(max_err(x, &want));
            euler = euler.max(max_err(g.value("chain", "y").unwrap(), &want));
        }
        k += 1;
    })
    .unwrap();
    (rk4, euler)
}

/// Against the exact solution (a unit step at 0.5 s, on every grid used, so
/// the held input is the exact input), halving the step divides the RK4
/// forms' error by about 16 (order 4) and the integrator diagram's by
/// about 2 (order 1, as docs/scenario.md says of a chain of integrators),
/// at h = 10, 5, 2.5, 1.25 ms.
#[test]
fn rk4_forms_converge_at_order_four_and_the_integrator_diagram_at_order_one() {
    let runs: Vec<(f64, f64)> = [10_000, 5_000, 2_500, 1_250]
        .into_iter()
        .map(errors)
        .collect();
    for w in runs.windows(2) {
        let (rk4, euler) = (w[0].0 / w[1].0, w[0].1 / w[1].1);
        assert!((15.0..17.0).contains(&rk4), "RK4 ratio {rk4}: {runs:?}");
        assert!((1.9..2.1).contains(&euler), "Euler ratio {euler}: {runs:?}");
    }
    let (rk4, euler) = runs[3];
    assert!(rk4 < 1e-12, "RK4 at 1.25 ms: {rk4:e}");
    assert!(euler < 2e-3, "Euler at 1.25 ms: {euler:e}");
}
