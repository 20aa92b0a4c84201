//! The graph's step and the System's are one (`controlsim::advance`): a
//! plant of every state size (the size-specialised and the general solver
//! path), with guards (text equations), gives the same bits in a graph as
//! in a `[[loops]]` system; a failing component stops both the same way;
//! and a periodic component stays on its grid across snapshot and restore.

use std::sync::atomic::{AtomicBool, Ordering};

use controlsim::graph::{loops, Graph, GraphBuilder, GraphError};
use controlsim::{
    ActuatorConfig, ClosedLoop, ControllerConfig, Delays, LoopSpec, Plant, PlantModel, Response,
    SensorConfig, Signature, Silent, SimTime, SolverKind, StepError, StepSize, System,
    SystemConfig, TimeDomain,
};

use crate::common::add_siso_loop;

fn parse(text: &str) -> SystemConfig {
    toml::from_str(text).unwrap_or_else(|e| panic!("{e}"))
}

/// One loop, PID at 10 ms, around a damped chain of `n` integrators
/// (`x_i' = -0.5 x_i + x_(i+1)`, the last driven by `u`, output `x_0`).
fn chain(n: usize, solver: &str) -> String {
    let row = |i: usize| {
        let cells: Vec<String> = (0..n)
            .map(|j| match j {
                _ if j == i => "-0.5".to_string(),
                _ if j == i + 1 => "1.0".to_string(),
                _ => "0.0".to_string(),
            })
            .collect();
        format!("[{}]", cells.join(", "))
    };
    let a: Vec<String> = (0..n).map(row).collect();
    let b: Vec<String> = (0..n)
        .map(|i| if i == n - 1 { "[1.0]" } else { "[0.0]" }.to_string())
        .collect();
    let c: Vec<String> = (0..n)
        .map(|i| if i == 0 { "1.0" } else { "0.0" }.to_string())
        .collect();
    let x0: Vec<String> = (0..n)
        .map(|i| format!("{}", 0.1 * (i + 1) as f64))
        .collect();
    format!(
        r#"
step = "1ms"
solver = "{solver}"
[[loops]]
name = "chain"
[loops.plant]
kind = "state_space"
a = [{}]
b = [{}]
c = [[{}]]
x0 = [{}]
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "pid"
kp = 2.0
ki = 0.5
[[loops.reference]]
kind = "step"
at = "50ms"
final = 1.0
"#,
        a.join(", "),
        b.join(", "),
        c.join(", "),
        x0.join(", ")
    )
}

/// The bouncing ball in text equations (guards located inside the step),
/// open loop.
fn ball() -> String {
    format!(
        r#"
step = "10ms"
[[loops]]
name = "ball"
[loops.plant]
kind = "equations"
equations = """
{}
"""
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "open_loop"
"#,
        crate::equations::BALL
    )
}

/// Every loop's plant state, per boundary, as bits: from the zero-delay
/// closed loop and from the loops' graph.
fn traces(text: &str, n: u64) -> (Vec<Vec<u64>>, Vec<Vec<u64>>) {
    let config = parse(text);
    let system = System::from_config(&config, 0).unwrap();
    let mut cl = ClosedLoop::new(system, Delays::default(), Response::Direct);
    let mut expected = Vec::new();
    cl.run_to(n, &mut |s: &System| {
        expected.push(s.loops()[0].state().iter().map(|v| v.to_bits()).collect());
    })
    .unwrap();
    let mut g = loops::expand(&config, 0).unwrap();
    let mut got = Vec::new();
    g.run_to(n, &mut |g: &Graph| {
        got.push(g.states(0).iter().map(|v| v.to_bits()).collect());
    })
    .unwrap();
    (expected, got)
}

#[test]
fn plants_of_every_size_step_the_same_in_a_graph_as_in_a_system() {
    for solver in ["rk4", "euler", "heun"] {
        for n in 1..=6 {
            let (expected, got) = traces(&chain(n, solver), 600);
            assert_eq!(got, expected, "{n} states, {solver}");
            assert_ne!(got[0], got[599], "{n} states, {solver}: the run moves");
        }
    }
    let (expected, got) = traces(&ball(), 2000);
    assert_eq!(got, expected, "equations with guards");
}

/// A restored snapshot taken after boundary `k` was evaluated (the sensor
/// and PID sampled there) goes on with the next samples at `k + 10`, `k +
/// 20`, ..., as the uninterrupted run does; in the same graph and in a
/// rebuilt one. Taken before the evaluation, the samples at `k` happen
/// after the restore.
#[test]
fn periodic_components_stay_on_their_grid_across_snapshot_and_restore() {
    let config = parse(&chain(2, "rk4"));
    let trace = |g: &mut Graph, n: u64| {
        let k1 = g.k() + n;
        let mut out = Vec::new();
        g.run_to(k1, &mut |g: &Graph| {
            out.push(g.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        })
        .unwrap();
        out
    };
    for evaluated in [true, false] {
        let mut g = loops::expand(&config, 0).unwrap();
        g.run_to(60, &mut |_: &Graph| {}).unwrap();
        if evaluated {
            g.evaluate().unwrap();
        }
        let snap = g.snapshot();
        let first = trace(&mut g, 100);
        g.restore(&snap).unwrap();
        assert_eq!(trace(&mut g, 100), first, "evaluated: {evaluated}");
        let mut rebuilt = loops::expand(&config, 0).unwrap();
        rebuilt.run_to(13, &mut |_: &Graph| {}).unwrap();
        rebuilt.restore(&snap).unwrap();
        assert_eq!(trace(&mut rebuilt, 100), first, "evaluated: {evaluated}");
        // The PID's output moves at every tenth boundary, and only there.
        let names = g.value_names();
        let base = names
            .iter()
            .position(|p| p == "chain_controller.u")
            .unwrap();
        let u: Vec<u64> = first.iter().map(|row| row[base]).collect();
        for k in 1..u.len() {
            let sampled = (60 + k) % 10 == 0;
            assert_eq!(u[k] != u[k - 1], sampled, "boundary {}", 60 + k);
        }
    }
}

/// A discrete plant whose update fails from `t = 4 ms` on, as an FMU whose
/// `doStep` returns an error.
#[derive(Debug, Default)]
struct FailsLate {
    failed: AtomicBool,
}

impl Plant for FailsLate {
    fn signature(&self) -> Signature {
        Signature {
            states: vec!["x".into()],
            inputs: vec!["u".into()],
            outputs: vec!["y".into()],
        }
    }

    fn time_domain(&self) -> TimeDomain {
        TimeDomain::Discrete {
            period: SimTime::from_millis(1),
        }
    }

    fn initial_state(&self, x0: &mut [f64]) {
        x0[0] = 0.0;
    }

    fn update(&self, t: f64, x: &[f64], _u: &[f64], next: &mut [f64]) {
        next[0] = x[0] + 1.0;
        if t >= 0.0035 {
            self.failed.store(true, Ordering::Relaxed);
        }
    }

    fn output(&self, _t: f64, x: &[f64], _u: &[f64], y: &mut [f64]) {
        y[0] = x[0];
    }

    fn fault(&self) -> Option<String> {
        self.failed
            .load(Ordering::Relaxed)
            .then(|| "doStep failed".to_string())
    }
}

/// The failure inside step 4 stops a System at boundary 5 (5 ms) with
/// `StepError::Component`, and the graph at the same boundary with
/// `GraphError::Component` naming the component and carrying the message.
#[test]
fn a_failing_component_stops_the_graph_as_it_stops_a_system() {
    let ms = SimTime::from_millis(1);
    let sensor: SensorConfig = toml::from_str("period = \"1ms\"").unwrap();
    let ctrl: ControllerConfig =
        toml::from_str("kind = \"state_feedback\"\nk = [[0.0]]\nperiod = \"1ms\"").unwrap();
    let mut system = System::from_specs(
        ms,
        SolverKind::Rk4,
        vec![LoopSpec {
            name: "p".into(),
            predecessor: None,
            plant: PlantModel::Custom(Box::new(FailsLate::default())),
            sensor: sensor.clone(),
            actuator: ActuatorConfig::default(),
            controller: ctrl.clone(),
            reference: Default::default(),
        }],
        0,
    )
    .unwrap();
    let err = system.advance_to(100, &mut Silent).unwrap_err();
    let StepError::Component {
        message,
        time,
        step,
        ..
    } = err
    else {
        panic!("{err}")
    };
    assert_eq!(
        (message.as_str(), time, step),
        ("doStep failed", SimTime::from_millis(5), 5)
    );

    let h = StepSize::new(ms).unwrap();
    let mut b = GraphBuilder::new(ms, SolverKind::Rk4);
    let plant = PlantModel::Custom(Box::new(FailsLate::default()));
    add_siso_loop(&mut b, h, plant, &sensor, ("ctrl", &ctrl));
    let mut g = b.build().unwrap();
    let err = g.run_to(100, &mut |_: &Graph| {}).unwrap_err();
    let GraphError::Component {
        component,
        message,
        time,
        step,
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(
        (component.as_str(), message.as_str(), *time, *step),
        ("plant", "doStep failed", SimTime::from_millis(5), 5)
    );
    assert_eq!(g.k(), 5);
    assert!(
        err.to_string().contains("component `plant`: doStep failed"),
        "{err}"
    );
}
