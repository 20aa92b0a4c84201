//! Shared helpers: building systems from TOML text, a plain driver that
//! makes the per-boundary calls of the documented order, and bitwise traces.

use controlsim::graph::adapters::{
    ActuatorComponent, ControllerComponent, ControllerShape, PlantComponent, SensorComponent,
};
use controlsim::graph::GraphBuilder;
use controlsim::KeyPath;
use controlsim::{
    ActuatorConfig, ControllerConfig, PlantModel, SensorConfig, Silent, StepSize, System,
    SystemConfig, Trigger,
};

/// Parses and builds; panics with the error text (tests only).
pub fn build(toml_text: &str, seed: u64) -> System {
    let cfg: SystemConfig = toml::from_str(toml_text).unwrap_or_else(|e| panic!("parse: {e}"));
    System::from_config(&cfg, seed).unwrap_or_else(|e| panic!("build: {e}"))
}

/// Adds a one-loop graph to `b`, in this order: `plant` (the model, one
/// output `y`), `sensor`, the controller `controller` (one measurement, one
/// output, no reference; its period from its config) and `actuator` (no
/// limits), connected plant -> sensor -> controller -> actuator -> plant.
pub fn add_siso_loop(
    b: &mut GraphBuilder,
    h: StepSize,
    plant: PlantModel,
    sensor: &SensorConfig,
    (controller, config): (&str, &ControllerConfig),
) {
    let shape = ControllerShape {
        measurements: 1,
        outputs: 1,
        reference: &[],
        model: None,
        limits: None,
        default_period: None,
    };
    b.component(
        "plant",
        PlantComponent::new(&KeyPath::key("p"), plant, h).unwrap(),
    );
    b.component(
        "sensor",
        SensorComponent::new(&KeyPath::key("s"), sensor, h, &["y".to_string()], 0, 0).unwrap(),
    );
    b.component(
        controller,
        ControllerComponent::new(&KeyPath::key("c"), config, shape, h).unwrap(),
    );
    b.component(
        "actuator",
        ActuatorComponent::new(&KeyPath::key("a"), &ActuatorConfig::default(), 1).unwrap(),
    );
    b.connect("plant.y", "sensor.y")
        .connect("sensor.y", &format!("{controller}.measurement"))
        .connect(&format!("{controller}.u"), "actuator.u")
        .connect("actuator.u", "plant.u");
}

/// One boundary of a zero-delay closed loop, written out as the documented
/// call sequence (closed_loop module docs): sample, extras, input, compute
/// (event-triggered), compute (time-triggered tick), actuator.
pub fn serve_boundary(sys: &mut System, i: usize) {
    let event = sys.loops()[i].controller_trigger() == Trigger::Event;
    let mut computed: Vec<Vec<f64>> = Vec::new();
    if sys.sensor_due(i).unwrap() {
        let mut msg = sys.sample(i).unwrap().to_vec();
        for j in 0..sys.loops()[i].extra_inputs().len() {
            msg.push(sys.extra_input(i, j).unwrap());
        }
        sys.set_controller_inputs(i, &msg).unwrap();
        if event {
            computed.push(sys.compute_control(i).unwrap().to_vec());
        }
    }
    if sys.controller_due(i).unwrap() {
        computed.push(sys.compute_control(i).unwrap().to_vec());
    }
    for u in computed {
        sys.set_actuators(i, &u).unwrap();
    }
}

/// Runs `steps` boundaries with the direct-wired driver above.
pub fn run_direct(sys: &mut System, steps: u64) {
    for _ in 0..steps {
        for i in 0..sys.loops().len() {
            serve_boundary(sys, i);
        }
        let k = sys.k();
        sys.advance_to(k + 1, &mut Silent).unwrap();
    }
}

/// Every f64 of every loop's mutable, observable state, as bits.
pub fn bits(sys: &System) -> Vec<u64> {
    let mut v = vec![sys.k()];
    for lp in sys.loops() {
        for s in [
            lp.state(),
            lp.controller_state(),
            lp.controller_input(),
            lp.held_control(),
            lp.applied_control(),
            lp.computed_control(),
            lp.last_sample(),
        ] {
            v.extend(s.iter().map(|x| x.to_bits()));
        }
    }
    v
}

/// Max-norm distance.
pub fn max_err(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// `expm(A t) x0 + integral_0^t expm(A s) ds B u` for a constant input, via
/// the matrix exponential of the augmented matrix [[A, B u], [0, 0]].
pub fn exact_linear(a: &[Vec<f64>], bu: &[f64], x0: &[f64], t: f64) -> Vec<f64> {
    let n = a.len();
    let mut m = nalgebra::DMatrix::<f64>::zeros(n + 1, n + 1);
    for i in 0..n {
        for j in 0..n {
            m[(i, j)] = a[i][j] * t;
        }
        m[(i, n)] = bu[i] * t;
    }
    let e = m.exp();
    let mut z = nalgebra::DVector::<f64>::zeros(n + 1);
    for i in 0..n {
        z[i] = x0[i];
    }
    z[n] = 1.0;
    let r = e * z;
    (0..n).map(|i| r[i]).collect()
}

/// A system with one loop of nearly every kind: noisy PID servo with
/// saturation, event-triggered observer, continuous PI on a transfer
/// function, bouncing ball, a two-vehicle platoon (PID leader, radar + CACC
/// follower with noise), and a discrete plant under state feedback.
pub const RICH: &str = r#"
step = "1ms"
solver = "rk4"

[[loops]]
name = "servo"
[loops.plant]
kind = "dc_servo"
coulomb_friction = 0.001
[loops.sensor]
period = "10ms"
noise_std = 0.001
quantization = 0.0005
[loops.actuator]
min = -6.0
max = 6.0
[loops.controller]
kind = "pid"
kp = 40.0
ki = 20.0
kd = 2.0
u_min = -6.0
u_max = 6.0
anti_windup = "back_calculation"
[loops.reference]
kind = "step"
at = "50ms"
final = 1.0

[[loops]]
name = "obs"
[loops.plant]
kind = "state_space"
a = [[0.0, 1.0], [-2.0, -3.0]]
b = [[0.0], [1.0]]
c = [[1.0, 0.0]]
x0 = [0.5, 0.0]
[loops.sensor]
period = "10ms"
phase = "3ms"
noise_std = 0.002
[loops.controller]
kind = "observer"
trigger = "event"
l = [[0.5], [5.0]]
k = [[1.0, 0.5]]
n = [[3.0]]
[loops.reference]
kind = "square"
period = "400ms"
high = 1.0

[[loops]]
name = "pi"
[loops.plant]
kind = "transfer_function"
num = [2.0]
den = [1.0, 1.0]
[loops.sensor]
period = "5ms"
[loops.controller]
kind = "transfer_function"
num = [1.5, 3.0]
den = [1.0, 0.0]
period = "5ms"
[loops.reference]
kind = "sine"
amplitude = 0.5
frequency = 2.0
offset = 1.0

[[loops]]
name = "ball"
[loops.plant]
kind = "bouncing_ball"
x0 = [0.4, 0.0]
[loops.sensor]
period = "20ms"
[loops.controller]
kind = "open_loop"

[[loops]]
name = "lead"
[loops.plant]
kind = "vehicle"
x0 = [30.0, 20.0, 0.0]
outputs = ["v"]
[loops.sensor]
period = "20ms"
[loops.actuator]
min = -5.0
max = 3.0
[loops.controller]
kind = "pid"
kp = 1.0
ki = 0.2
[loops.reference]
kind = "piecewise_linear"
points = [["0s", 20.0], ["200ms", 20.0], ["600ms", 24.0]]

[[loops]]
name = "follow"
predecessor = "lead"
[loops.plant]
kind = "vehicle"
x0 = [0.0, 20.0, 0.0]
[loops.sensor]
period = "20ms"
source = "radar"
noise_std = [0.05, 0.01, 0.01, 0.0]
[loops.actuator]
min = -5.0
max = 3.0
[loops.controller]
kind = "cacc"
time_gap = 0.7
trigger = "event"

[[loops]]
name = "disc"
[loops.plant]
kind = "discrete_state_space"
period = "10ms"
a = [[1.0, 0.01], [0.0, 0.99]]
b = [[0.0], [0.01]]
c = [[1.0, 0.0], [0.0, 1.0]]
x0 = [1.0, 0.0]
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "state_feedback"
k = [[10.0, 5.0]]
"#;
