//! Text equations against compiled Rust plants, through the same engine.
//!
//! Two models, each integrated for `STEPS` RK4 steps of 1 ms by a
//! [`System`] driven with `advance_to(k + STEPS, &mut Silent)`:
//! - **linear**: the 4-state plant of the `rk4` bench (`x' = A x + B u`, u
//!   held at 1), as the built-in `state_space` plant (its derivative is a
//!   size-specialised, fully unrolled Rust loop) and as equations written
//!   row by row in the same order, so both do the same arithmetic; the
//!   final states are checked to be bit-identical;
//! - **pendulum**: `theta'' = -g/l sin(theta) - b theta' + u / (m l^2)`, as
//!   a Rust [`Plant`] (`PlantModel::Custom`) and as equations; the final
//!   states are checked to be bit-identical too.
//!
//! Each variant runs `REPS` times, interleaved; the medians are printed with
//! the ratio per model, and the last line is `equations_ratio=<the larger
//! of the two ratios>` (goal <= 2.0).
//!
//! Run with `scripts/bench.sh equations` or
//! `cargo bench -p controlsim --bench equations`.

use std::hint::black_box;
use std::time::Instant;

use controlsim::{
    ActuatorConfig, ControllerConfig, LoopSpec, Plant, PlantModel, SensorConfig, Signature, Silent,
    SimTime, SolverKind, System, SystemConfig,
};

#[path = "../tests/support/linear4.rs"]
mod linear4;

const STEPS: u64 = 2_000_000;
const REPS: usize = 11;

fn scenario(plant: &str) -> System {
    let text = format!(
        r#"
step = "1ms"
solver = "rk4"
[[loops]]
name = "plant"
[loops.plant]
{plant}
[loops.sensor]
period = "10ms"
[loops.actuator]
initial = 1.0
[loops.controller]
kind = "open_loop"
"#
    );
    let cfg: SystemConfig = toml::from_str(&text).expect("bench scenario parses");
    System::from_config(&cfg, 0).expect("bench scenario builds")
}

fn linear_builtin() -> System {
    scenario(&linear4::plant_keys(true))
}

fn linear_equations() -> System {
    scenario(&format!(
        "kind = \"equations\"\nequations = \"\"\"{}\"\"\"",
        linear4::EQUATIONS
    ))
}

const G: f64 = 9.81;
const L: f64 = 0.5;
const B: f64 = 0.1;
const M: f64 = 0.2;

/// The pendulum written in Rust, as a user would.
#[derive(Debug)]
struct Pendulum;

impl Plant for Pendulum {
    fn signature(&self) -> Signature {
        Signature {
            states: vec!["theta".into(), "omega".into()],
            inputs: vec!["torque".into()],
            outputs: vec!["theta".into()],
        }
    }
    fn initial_state(&self, x0: &mut [f64]) {
        x0.copy_from_slice(&[1.0, 0.0]);
    }
    #[inline]
    fn derivative(&self, _t: f64, x: &[f64], u: &[f64], dx: &mut [f64]) {
        dx[0] = x[1];
        dx[1] = -(G / L) * x[0].sin() - B * x[1] + u[0] / (M * (L * L));
    }
    fn output(&self, _t: f64, x: &[f64], _u: &[f64], y: &mut [f64]) {
        y[0] = x[0];
    }
}

fn pendulum_rust() -> System {
    let spec = LoopSpec {
        name: "plant".into(),
        predecessor: None,
        plant: PlantModel::Custom(Box::new(Pendulum)),
        sensor: toml::from_str::<SensorConfig>("period = \"10ms\"").unwrap(),
        actuator: toml::from_str::<ActuatorConfig>("initial = 1.0").unwrap(),
        controller: toml::from_str::<ControllerConfig>("kind = \"open_loop\"").unwrap(),
        reference: Default::default(),
    };
    System::from_specs(SimTime::from_millis(1), SolverKind::Rk4, vec![spec], 0)
        .expect("bench pendulum builds")
}

fn pendulum_equations() -> System {
    scenario(
        r#"kind = "equations"
equations = """
parameter g = 9.81;
parameter l = 0.5;
parameter b = 0.1;
parameter m = 0.2;
input torque;
state theta(start = 1);
state omega(start = 0);
der(theta) = omega;
der(omega) = -(g / l) * sin(theta) - b * omega + torque / (m * l^2);
output theta;
""""#,
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times `steps` steps of a fresh system; returns seconds and final state.
fn time(make: fn() -> System, steps: u64) -> (f64, Vec<f64>) {
    let mut sys = make();
    let start = Instant::now();
    sys.advance_to(black_box(steps), &mut Silent)
        .expect("bench run");
    (
        start.elapsed().as_secs_f64(),
        sys.loops()[0].state().to_vec(),
    )
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn main() {
    let timed = std::env::args().any(|a| a == "--bench");
    let steps = if timed { STEPS } else { 10_000 };
    let reps = if timed { REPS } else { 1 };
    let models: [(&str, fn() -> System, fn() -> System); 2] = [
        ("linear", linear_builtin, linear_equations),
        ("pendulum", pendulum_rust, pendulum_equations),
    ];
    // `EQUATIONS_BENCH_ONLY=<model>_rust|<model>_equations` runs that one
    // variant alone, for instruction counts under callgrind.
    if let Ok(only) = std::env::var("EQUATIONS_BENCH_ONLY") {
        for (name, rust, eq) in &models {
            if only == format!("{name}_rust") {
                time(*rust, steps);
            } else if only == format!("{name}_equations") {
                time(*eq, steps);
            }
        }
        return;
    }
    let mut times = vec![(Vec::new(), Vec::new()); models.len()];
    for _ in 0..reps {
        for (i, (name, rust, eq)) in models.iter().enumerate() {
            let (tr, xr) = time(*rust, steps);
            let (te, xe) = time(*eq, steps);
            assert_eq!(
                bits(&xr),
                bits(&xe),
                "{name}: Rust {xr:?} vs equations {xe:?}"
            );
            times[i].0.push(tr);
            times[i].1.push(te);
        }
    }
    println!("equations_steps={steps} reps={reps} rk4 h=1ms (median ns per step)");
    let mut worst: f64 = 0.0;
    for ((name, _, _), (tr, te)) in models.iter().zip(times) {
        let (r, e) = (median(tr), median(te));
        let per = |t: f64| t / steps as f64 * 1e9;
        let ratio = e / r;
        worst = worst.max(ratio);
        println!(
            "{name}_rust_ns_per_step={:.2} {name}_equations_ns_per_step={:.2} {name}_ratio={ratio:.3}",
            per(r),
            per(e)
        );
    }
    println!("equations_ratio={worst:.3}");
}
