//! The component graph's engine against a hand-written loop (issue 11).
//!
//! The 4-state RK4 plant of the `rk4` bench (`x' = A x + B u`, `y = x_0`,
//! h = 1 ms) in a feedback loop: a sensor sampling `y` every 10 ms, a PID
//! (`kp = 2`, `ki = 1`, `kd = 0.1`, reference 1) computing on each sample,
//! an actuator holding its output. Integrated for `STEPS` steps as:
//! - **graph**: plant, sensor, PID and actuator as four components joined
//!   by four connections ([`GraphBuilder`]), driven by
//!   `Graph::run_to(STEPS, &mut Unobserved)`: the whole per-step path
//!   (schedule checks, input gathering, the evaluation order, the solver,
//!   the non-finite check). The observer reads nothing, as the hand-written
//!   loop records nothing, so the plant's outputs are computed where the
//!   sensor samples them (and at the last boundary), as the hand-written
//!   loop computes `y` every tenth step (`graph::demand`);
//! - **hand-written**: the same loop written out on `[f64; 4]` arrays (the
//!   `rk4` bench's baseline) with the sensor, PID and actuator inlined,
//!   doing the same arithmetic in the same order. The baseline of
//!   `graph_ratio`;
//! - **closed loop**: today's fixed loop, [`ClosedLoop`] over a [`System`]
//!   with no delays (reported for context).
//!
//! All three end in bit-identical states (checked every repetition). Then a
//! graph of 200 components (50 such loops, `loops::expand`) gives the
//! per-step cost per component, against the same 50 loops as a
//! [`ClosedLoop`].
//!
//! Each variant runs `REPS` times, interleaved; medians are printed, and the
//! last line is `graph_ratio=<graph median / hand-written median>` (goal
//! <= 1.25). Run with `scripts/bench.sh graph` or
//! `cargo bench -p controlsim --bench graph`; `GRAPH_BENCH_VERBOSE=1` prints
//! every repetition.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use controlsim::graph::adapters::{
    ActuatorComponent, ControllerComponent, ControllerShape, PlantComponent, SensorComponent,
};
use controlsim::graph::{loops, Graph, GraphBuilder, Unobserved};
use controlsim::{
    ActuatorConfig, ClosedLoop, ControllerConfig, Delays, KeyPath, PlantConfig, PlantModel,
    Response, SensorConfig, SignalConfig, Silent, SimTime, SolverKind, StepSize, System,
    SystemConfig,
};

const STEPS: u64 = 2_000_000;
const REPS: usize = 11;
/// Loops in the large graph (four components each).
const LOOPS: usize = 50;
const LARGE_STEPS: u64 = 40_000;

const A: [[f64; 4]; 4] = [
    [0.0, 1.0, 0.0, 0.0],
    [-2.0, -0.6, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
    [0.5, 0.0, -10.0, -2.4],
];
const B: [f64; 4] = [0.0, 1.0, 0.0, 0.5];
const C: [f64; 4] = [1.0, 0.0, 0.0, 0.0];
const X0: [f64; 4] = [0.3, -0.2, 0.1, 0.0];
const H: f64 = 1e-3;
const KP: f64 = 2.0;
const KI: f64 = 1.0;
const KD: f64 = 0.1;
const REFERENCE: f64 = 1.0;
/// Sensor and PID period, in steps.
const PERIOD: u64 = 10;

const PLANT: &str = r#"kind = "state_space"
a = [[0.0, 1.0, 0.0, 0.0], [-2.0, -0.6, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.5, 0.0, -10.0, -2.4]]
b = [[0.0], [1.0], [0.0], [0.5]]
c = [[1.0, 0.0, 0.0, 0.0]]
x0 = [0.3, -0.2, 0.1, 0.0]"#;
const PID: &str = "kind = \"pid\"\nkp = 2.0\nki = 1.0\nkd = 0.1";
const SENSOR: &str = "period = \"10ms\"";
const REFERENCE_SIGNAL: &str = "kind = \"constant\"\nvalue = 1.0";

fn parse<T: serde::de::DeserializeOwned>(text: &str) -> T {
    toml::from_str(text).unwrap_or_else(|e| panic!("bench input: {e}"))
}

/// The loop as four components and four connections.
fn graph() -> Graph {
    let ms = SimTime::from_millis(1);
    let h = StepSize::new(ms).expect("step");
    let model = PlantModel::from_config(&KeyPath::key("plant"), &parse::<PlantConfig>(PLANT))
        .expect("plant");
    let sensor = SensorComponent::new(
        &KeyPath::key("sensor"),
        &parse::<SensorConfig>(SENSOR),
        h,
        &["y".to_string()],
        0,
        0,
    )
    .expect("sensor");
    let actuator = ActuatorComponent::new(&KeyPath::key("actuator"), &ActuatorConfig::default(), 1)
        .expect("actuator");
    let reference = [parse::<SignalConfig>(REFERENCE_SIGNAL)];
    let pid = ControllerComponent::new(
        &KeyPath::key("pid"),
        &parse::<ControllerConfig>(PID),
        ControllerShape {
            measurements: 1,
            outputs: 1,
            reference: &reference,
            model: None,
            limits: Some(actuator.limits()),
            default_period: Some(SimTime::from_millis(PERIOD)),
        },
        h,
    )
    .expect("pid");
    let mut b = GraphBuilder::new(ms, SolverKind::Rk4);
    b.component(
        "plant",
        PlantComponent::new(&KeyPath::key("plant"), model, h).expect("plant"),
    )
    .component("sensor", sensor)
    .component("pid", pid)
    .component("actuator", actuator)
    .connect("plant.y", "sensor.y")
    .connect("sensor.y", "pid.measurement")
    .connect("pid.u", "actuator.u")
    .connect("actuator.u", "plant.u");
    b.build().expect("bench graph builds")
}

/// `n` copies of the loop as a `[[loops]]` scenario.
fn scenario(n: usize) -> SystemConfig {
    let mut text = String::from("step = \"1ms\"\nsolver = \"rk4\"\n");
    for i in 0..n {
        let _ = write!(
            text,
            "[[loops]]\nname = \"l{i}\"\n[loops.plant]\n{PLANT}\n[loops.sensor]\n{SENSOR}\n\
             [loops.controller]\n{PID}\n[[loops.reference]]\n{REFERENCE_SIGNAL}\n"
        );
    }
    parse(&text)
}

fn closed_loop(n: usize) -> ClosedLoop {
    let system = System::from_config(&scenario(n), 0).expect("bench scenario builds");
    ClosedLoop::new(system, Delays::default(), Response::Direct)
}

/// The loop written out: sample and compute every `PERIOD` steps with the
/// sensor's, PID's and actuator's formulas (no noise, no limits), then one
/// RK4 step with the input held, as the `rk4` bench's baseline.
fn handwritten(steps: u64) -> [f64; 4] {
    let a = black_box(A);
    let b = black_box(B);
    let c = black_box(C);
    let (kp, ki, kd) = black_box((KP, KI, KD));
    let r = black_box(REFERENCE);
    let tf = (kd / kp / 10.0).abs();
    let dt = SimTime::from_millis(PERIOD).as_secs_f64();
    // PID state and memory.
    let (mut integral, mut derivative) = (0.0, 0.0);
    let (mut prev_s, mut prev_e) = (0.0, 0.0);
    let mut first = true;
    // The control over the last step (the plant's output reads it, D = 0).
    let mut u = 0.0;
    let d = |x: &[f64; 4], u: f64| {
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
    for k in 0..steps {
        if k % PERIOD == 0 {
            let mut y = 0.0;
            for j in 0..4 {
                y += c[j] * x[j];
            }
            y += 0.0 * u;
            let e = r - y;
            let sig = -y;
            if !first {
                integral += dt * (ki * prev_e);
                derivative = (tf * derivative + kd * (sig - prev_s)) / (tf + dt);
            }
            first = false;
            u = kp * e + integral + derivative;
            prev_s = sig;
            prev_e = e;
        }
        let k1 = d(&x, u);
        let k2 = d(&std::array::from_fn(|i| x[i] + h2 * k1[i]), u);
        let k3 = d(&std::array::from_fn(|i| x[i] + h2 * k2[i]), u);
        let k4 = d(&std::array::from_fn(|i| x[i] + h * k3[i]), u);
        for i in 0..4 {
            x[i] += h6 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    x
}

/// One variant alone for `steps` steps (200-component graph: a fiftieth),
/// for instruction counts: `GRAPH_BENCH_ONLY=graph valgrind --tool=callgrind
/// target/release/deps/graph-*` (see BENCHMARKS.md). `plant_only` is the
/// plant alone in a graph (its input from an inlet): the engine's cost of
/// a step where nothing but the plant's integration is due.
fn run_only(which: &str, steps: u64) {
    match which {
        "graph" => {
            let mut g = graph();
            g.run_to(steps, &mut Unobserved).expect("graph run");
            black_box(g.states(0));
        }
        "handwritten" => {
            black_box(handwritten(black_box(steps)));
        }
        "closed_loop" => {
            let mut cl = closed_loop(1);
            cl.run_to(steps, &mut Silent).expect("closed loop run");
            black_box(cl.system().loops()[0].state());
        }
        "graph200" => {
            let mut g = loops::expand(&scenario(LOOPS), 0).expect("large graph builds");
            g.run_to(steps / LOOPS as u64, &mut Unobserved)
                .expect("large graph run");
            black_box(g.values());
        }
        "plant_only" => {
            let ms = SimTime::from_millis(1);
            let h = StepSize::new(ms).expect("step");
            let model =
                PlantModel::from_config(&KeyPath::key("plant"), &parse::<PlantConfig>(PLANT))
                    .expect("plant");
            let mut b = GraphBuilder::new(ms, SolverKind::Rk4);
            b.component(
                "plant",
                PlantComponent::new(&KeyPath::key("plant"), model, h).expect("plant"),
            )
            .component("rx", controlsim::graph::Inlet::new(1))
            .connect("rx.y", "plant.u");
            let mut g = b.build().expect("builds");
            g.run_to(steps, &mut Unobserved).expect("graph run");
            black_box(g.states(0));
        }
        other => panic!(
            "GRAPH_BENCH_ONLY={other}: graph, handwritten, closed_loop, graph200 or plant_only"
        ),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn bits(a: &[f64]) -> Vec<u64> {
    a.iter().map(|v| v.to_bits()).collect()
}

fn main() {
    // `cargo bench` passes `--bench`; anything else (`cargo test --benches`)
    // runs a quick smoke check instead of the timed runs.
    let timed = std::env::args().any(|a| a == "--bench");
    let steps = if timed { STEPS } else { 10_000 };
    let large_steps = if timed { LARGE_STEPS } else { 200 };
    let reps = if timed { REPS } else { 1 };
    let verbose = std::env::var_os("GRAPH_BENCH_VERBOSE").is_some();
    if let Ok(which) = std::env::var("GRAPH_BENCH_ONLY") {
        run_only(&which, steps);
        return;
    }

    let (mut t_graph, mut t_hand, mut t_closed) = (Vec::new(), Vec::new(), Vec::new());
    let (mut t_large, mut t_large_closed) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let mut g = graph();
        let start = Instant::now();
        g.run_to(black_box(steps), &mut Unobserved)
            .expect("graph run");
        t_graph.push(start.elapsed().as_secs_f64());
        let x_graph = bits(g.states(0));

        let start = Instant::now();
        let x_hand = black_box(handwritten(black_box(steps)));
        t_hand.push(start.elapsed().as_secs_f64());

        let mut cl = closed_loop(1);
        let start = Instant::now();
        cl.run_to(black_box(steps), &mut Silent)
            .expect("closed loop run");
        t_closed.push(start.elapsed().as_secs_f64());
        let x_closed = bits(cl.system().loops()[0].state());

        assert_eq!(x_graph, bits(&x_hand), "graph and hand-written must agree");
        assert_eq!(x_graph, x_closed, "graph and closed loop must agree");

        let mut g = loops::expand(&scenario(LOOPS), 0).expect("large graph builds");
        assert_eq!(g.component_names().count(), 4 * LOOPS);
        let start = Instant::now();
        g.run_to(black_box(large_steps), &mut Unobserved)
            .expect("large graph run");
        t_large.push(start.elapsed().as_secs_f64());

        let mut cl = closed_loop(LOOPS);
        let start = Instant::now();
        cl.run_to(black_box(large_steps), &mut Silent)
            .expect("large closed loop run");
        t_large_closed.push(start.elapsed().as_secs_f64());
        for l in 0..LOOPS {
            let p = g.component_index(&format!("l{l}_plant")).expect("plant");
            assert_eq!(bits(g.states(p)), bits(cl.system().loops()[l].state()));
        }
    }
    let per = |t: f64, n: u64| t / n as f64 * 1e9;
    if verbose {
        for (name, t, n) in [
            ("graph", &t_graph, steps),
            ("handwritten", &t_hand, steps),
            ("closed_loop", &t_closed, steps),
            ("graph200", &t_large, large_steps),
            ("closed_loop200", &t_large_closed, large_steps),
        ] {
            let each: Vec<String> = t.iter().map(|&s| format!("{:.1}", per(s, n))).collect();
            println!("{name}_ns_per_step_each={}", each.join(","));
        }
    }
    let ratios: Vec<f64> = t_graph.iter().zip(&t_hand).map(|(g, h)| g / h).collect();
    let (g, h, c) = (median(t_graph), median(t_hand), median(t_closed));
    let (gl, cl) = (median(t_large), median(t_large_closed));
    let components = (4 * LOOPS) as f64;
    println!(
        "graph_steps={steps} reps={reps} loop=4-state linear plant, sensor and PID at 10 ms, actuator; RK4, h=1ms"
    );
    println!(
        "graph_ns_per_step={:.2} handwritten_ns_per_step={:.2} closed_loop_ns_per_step={:.2}",
        per(g, steps),
        per(h, steps),
        per(c, steps)
    );
    println!(
        "graph_vs_closed_loop={:.3} graph_ratio_median_of_rounds={:.3}",
        g / c,
        median(ratios)
    );
    println!(
        "graph200_components={} graph200_steps={large_steps} graph200_ns_per_step={:.1} \
         graph200_ns_per_component_step={:.2} closed_loop200_ns_per_component_step={:.2}",
        4 * LOOPS,
        per(gl, large_steps),
        per(gl, large_steps) / components,
        per(cl, large_steps) / components
    );
    println!("graph_ratio={:.3}", g / h);
}
