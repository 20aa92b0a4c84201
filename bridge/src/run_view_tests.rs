//! A loop run's observer reads the graph the loops expand into as it reads
//! the [`System`]: for every `[[loops]]` example (the FMU ones, whose FMUs
//! are built by the e2e tests, aside), the zero-delay closed loop and the
//! expanded graph give the same `timeseries.csv` bytes, the same metrics
//! plans, control metrics, platoon metrics and resets, and the same stop
//! condition at the same boundary.

use std::path::{Path, PathBuf};

use controlsim::graph::{loops, ExpandedLoops, ObserveGraph};
use controlsim::{ClosedLoop, Delays, LoopView, ObserveSystem, Recorder, Response};

use super::{observation_plan, RunObserver};
use crate::config::Resolved;
use crate::scenario_file::{load, Override};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
}

/// The `[[loops]]` examples outside `examples/fmu/`.
fn loop_examples() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(example(""))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "toml")
                && std::fs::read_to_string(p)
                    .unwrap()
                    .lines()
                    .any(|l| l.trim() == "[[loops]]")
        })
        .collect();
    files.sort();
    files
}

/// Everything the run reports from its observer, as text (`Debug`, so a
/// NaN compares equal to itself).
#[derive(Debug, PartialEq)]
struct Observed {
    timeseries: String,
    /// Where the run ended: its boundary and the stop condition, if any.
    reached: u64,
    stopped: String,
    metrics: Vec<String>,
    resets: Vec<u64>,
    platoon: String,
}

fn observed<V: LoopView>(
    observer: RunObserver<Vec<u8>>,
    loops: &V,
    outcome: Result<(), String>,
) -> Observed {
    let stopped = format!("{:?}", observer.stopped);
    if observer.stopped.is_none() {
        outcome.unwrap();
    }
    let n = loops.loop_count();
    Observed {
        reached: loops.k(),
        stopped,
        metrics: (0..n)
            .map(|i| format!("{:?}", observer.metrics[i].finish(loops, i)))
            .collect(),
        resets: (0..n).map(|i| loops.resets(i)).collect(),
        platoon: format!("{:?}", observer.platoon.as_ref().map(|p| p.finish(loops))),
        timeseries: String::from_utf8(observer.recorder.finish(loops).unwrap()).unwrap(),
    }
}

fn through_the_system(resolved: &Resolved, system: controlsim::System) -> Observed {
    let plan = observation_plan(resolved, &system).unwrap();
    let every = resolved.scenario.record_every;
    let recorder = Recorder::new(&system, Vec::new(), every).unwrap();
    let observer = RunObserver::new(resolved, &system, recorder, None, plan);
    let mut closed = ClosedLoop::new(system, Delays::default(), Response::Direct);
    let mut on = ObserveSystem(observer);
    let outcome = closed
        .run_to(resolved.end_step, &mut on)
        .map_err(|e| e.to_string());
    observed(on.0, closed.system(), outcome)
}

fn through_the_graph(resolved: &Resolved) -> Observed {
    let ExpandedLoops { mut graph, map } =
        loops::expand_loops(&resolved.system, resolved.scenario.control_seed()).unwrap();
    let view = controlsim::graph::GraphLoops::new(&graph, &map).unwrap();
    let plan = observation_plan(resolved, &view).unwrap();
    let recorder = Recorder::new(&view, Vec::new(), resolved.scenario.record_every).unwrap();
    let observer = RunObserver::new(resolved, &view, recorder, None, plan);
    let mut on = ObserveGraph::new(&map, observer);
    let outcome = graph
        .run_to(resolved.end_step, &mut on)
        .map_err(|e| e.to_string());
    let view = controlsim::graph::GraphLoops::new(&graph, &map).unwrap();
    observed(on.into_inner(), &view, outcome)
}

fn assert_same(path: &Path, overrides: &[&str]) -> Observed {
    let overrides: Vec<Override> = overrides
        .iter()
        .map(|s| Override::parse_set(s).unwrap())
        .collect();
    let loaded = load(path, &overrides).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let resolved = &loaded.resolved;
    let graph = through_the_graph(resolved);
    let system = through_the_system(resolved, loaded.built.system);
    if graph.timeseries != system.timeseries {
        let line = graph
            .timeseries
            .lines()
            .zip(system.timeseries.lines())
            .position(|(a, b)| a != b);
        panic!(
            "{}: the graph's time series differs first at line {line:?}",
            path.display()
        );
    }
    assert_eq!(graph, system, "{}", path.display());
    system
}

#[test]
fn every_loop_example_observed_through_its_graph_is_the_system_run() {
    let files = loop_examples();
    assert!(files.len() >= 8, "{files:?}");
    for path in &files {
        let seen = assert_same(path, &[]);
        assert!(seen.timeseries.lines().count() > 100, "{}", path.display());
        assert_eq!(seen.stopped, "None");
        if path.ends_with("platoon_wave_bsm.toml") {
            assert!(seen.platoon.contains("followers"), "{}", seen.platoon);
        }
        if path.ends_with("bouncing_ball_equations.toml") {
            assert!(seen.resets.iter().any(|&r| r > 0), "{:?}", seen.resets);
        }
    }
}

/// Stop conditions on a state, an output and an applied input end both
/// runs at the same boundary with the same condition; metrics with set
/// points and weights agree.
#[test]
fn stop_conditions_and_weighted_metrics_agree_on_the_graph() {
    let servo = example("dc_servo_p2p.toml");
    let seen = assert_same(&servo, &["stop_when=\"servo.theta > 0.9\""]);
    assert!(seen.stopped.contains("unstable"), "{}", seen.stopped);
    assert!(
        seen.reached > 100 && seen.reached < 3000,
        "{}",
        seen.reached
    );
    let seen = assert_same(
        &servo,
        &[
            "stop_when.pushed=\"abs(servo.u.voltage) > 11.5 && t > 0.2\"",
            "stop_when.late=\"t > 2\"",
            "loops[0].metrics.q=[1.0, 0.1]",
            "loops[0].metrics.r=[0.01]",
            "loops[0].metrics.setpoint.omega=0.5",
        ],
    );
    assert!(seen.stopped.contains("late"), "{}", seen.stopped);
    let platoon = example("platoon_wave_bsm.toml");
    let seen = assert_same(&platoon, &["stop_when.fast=\"leader.y.v > 22\""]);
    assert!(seen.stopped.contains("fast"), "{}", seen.stopped);
    assert!(
        seen.reached > 2000 && seen.reached < 20_000,
        "{}",
        seen.reached
    );
}
