//! The loop observers' view ([`LoopView`]) of a system and of the graph it
//! expands into: with zero delays, the zero-delay `ClosedLoop` and the
//! expanded graph give the same bits through every method of the view at
//! every boundary, so the same `timeseries.csv` bytes from one `Recorder`.

use controlsim::graph::{loops, ExpandedLoops, GraphLoops, ObserveGraph};
use controlsim::{
    ClosedLoop, Delays, LoopObserver, LoopView, ObserveSystem, Recorder, Response, SystemConfig,
};

use crate::common::{build, RICH};
use crate::config::MORE;

/// Equation-language plant (with guards: a ball kicked up by its input)
/// and controller (a PI), and a loop with two references.
const EQUATIONS: &str = r#"
step = "1ms"
solver = "rk4"

[[loops]]
name = "eq_ball"
[loops.plant]
kind = "equations"
equations = """
parameter g = 9.81;
parameter e = 0.8;
input force;
state h(start = 1);
state v(start = 0);
der(h) = v;
der(v) = -g + force;
when h < 0 then h = 0, v = -e * pre(v);
output h;
"""
[loops.sensor]
period = "10ms"
[loops.actuator]
min = 0.0
max = 5.0
[loops.controller]
kind = "equations"
equations = "input y; input r; state xi; der(xi) = 2 * (r - y); output u = 3 * (r - y) + xi;"
period = "10ms"
[loops.reference]
kind = "step"
at = "300ms"
final = 0.5
"#;

const SYSTEMS: [(&str, u64); 3] = [(RICH, 42), (MORE, 3), (EQUATIONS, 5)];

fn parse(text: &str) -> SystemConfig {
    toml::from_str(text).unwrap_or_else(|e| panic!("{e}"))
}

/// The bits of everything a view offers at one boundary, loop by loop.
#[derive(Default)]
struct Trace(Vec<Vec<u64>>);

impl LoopObserver for Trace {
    fn observe_loops<V: LoopView + ?Sized>(
        &mut self,
        v: &V,
    ) -> Result<(), controlsim::error::ObserverError> {
        self.0.push(everything(v));
        Ok(())
    }
}

fn everything<V: LoopView + ?Sized>(v: &V) -> Vec<u64> {
    let mut out = vec![v.k(), v.time().as_nanos(), v.step_size().as_nanos()];
    out.push(v.loop_count() as u64);
    let bits = |out: &mut Vec<u64>, xs: &[f64]| out.extend(xs.iter().map(|x| x.to_bits()));
    for i in 0..v.loop_count() {
        out.extend(v.loop_name(i).bytes().map(u64::from));
        out.push(v.predecessor(i).map_or(u64::MAX, |p| p as u64));
        let s = v.signature(i);
        out.extend([s.states.len(), s.inputs.len(), s.outputs.len()].map(|n| n as u64));
        out.push(v.reference_dim(i) as u64);
        out.push(v.controller_state_names(i).len() as u64);
        bits(&mut out, v.plant_state(i));
        bits(&mut out, v.controller_state(i));
        bits(&mut out, v.computed_control(i));
        bits(&mut out, v.held_control(i));
        bits(&mut out, v.applied_control(i));
        let mut r = vec![0.0; v.reference_dim(i)];
        v.references_into(i, &mut r);
        bits(&mut out, &r);
        let mut y = vec![0.0; s.outputs.len()];
        v.plant_outputs_into(i, &mut y);
        bits(&mut out, &y);
        if let Some(k) = v.kinematics(i) {
            bits(
                &mut out,
                &[k.position, k.velocity, k.acceleration, k.length],
            );
        }
        out.push(v.resets(i));
    }
    out
}

fn closed_loop(text: &str, seed: u64) -> ClosedLoop {
    ClosedLoop::new(build(text, seed), Delays::default(), Response::Direct)
}

fn expanded(text: &str, seed: u64) -> ExpandedLoops {
    loops::expand_loops(&parse(text), seed).unwrap_or_else(|e| panic!("{e}"))
}

/// Every value of the view, at every boundary and at the end, is the same
/// bits from the system and from its graph; the runs move, the ball
/// bounces and the vehicles have a body.
#[test]
fn a_system_and_its_graph_give_the_same_view_at_every_boundary() {
    const N: u64 = 1200;
    for (text, seed) in SYSTEMS {
        let mut cl = closed_loop(text, seed);
        let mut expected = ObserveSystem(Trace::default());
        cl.run_to(N, &mut expected).unwrap();
        expected.0 .0.push(everything(cl.system()));

        let mut g = expanded(text, seed);
        let mut got = ObserveGraph::new(&g.map, Trace::default());
        g.graph.run_to(N, &mut got).unwrap();
        let mut got = got.into_inner();
        got.0.push(everything(&g.view()));

        assert_eq!(got.0.len(), expected.0 .0.len());
        for (k, (a, b)) in got.0.iter().zip(&expected.0 .0).enumerate() {
            assert_eq!(a, b, "boundary {k}");
        }
        assert_ne!(got.0[100], got.0[1100], "the run moves");
        let view = g.view();
        let system = cl.system();
        for i in 0..view.loop_count() {
            assert_eq!(
                view.resets(i),
                system.loops()[i].resets(),
                "{}",
                view.loop_name(i)
            );
        }
    }
    let g = expanded(RICH, 42);
    let view = g.view();
    let ball = (0..view.loop_count())
        .find(|&i| view.loop_name(i) == "ball")
        .unwrap();
    assert_eq!(view.resets(ball), 0, "before the run");
    let mut g = expanded(RICH, 42);
    g.graph
        .run_to(N, &mut |_: &controlsim::graph::Graph| {})
        .unwrap();
    assert!(g.view().resets(ball) > 0, "the ball bounced");
    assert!(
        g.view().kinematics(5).is_some(),
        "the follower is a vehicle"
    );
    assert_eq!(g.view().predecessor(5), Some(4));
}

/// One recorder, shown the system or its graph, writes the same bytes, on
/// every recording grid.
#[test]
fn the_recorder_writes_the_same_time_series_from_the_graph() {
    const N: u64 = 1000;
    for (text, seed) in SYSTEMS {
        for every in [1, 7].map(|n| std::num::NonZeroU64::new(n).unwrap()) {
            let mut cl = closed_loop(text, seed);
            let mut rec = Recorder::new(cl.system(), Vec::new(), every).unwrap();
            cl.run_to(N, &mut rec).unwrap();
            let expected = rec.finish(cl.system()).unwrap();

            let mut g = expanded(text, seed);
            let rec = Recorder::new(&g.view(), Vec::new(), every).unwrap();
            let mut on_graph = ObserveGraph::new(&g.map, rec);
            g.graph.run_to(N, &mut on_graph).unwrap();
            let got = on_graph.into_inner().finish(&g.view()).unwrap();

            assert!(expected.len() > 10_000, "a trajectory worth comparing");
            if got != expected {
                let (g, e) = (
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&expected),
                );
                let line = g.lines().zip(e.lines()).position(|(a, b)| a != b);
                panic!("every {every}: the graph's time series differs first at line {line:?}");
            }
        }
    }
}

/// A reset count is state: restoring a snapshot puts it back.
#[test]
fn a_graph_snapshot_restores_the_count_of_resets() {
    let mut g = expanded(RICH, 42);
    let ball = g.map.loops().iter().position(|l| l.name == "ball").unwrap();
    let plant = g.map.loops()[ball].plant;
    let snap = g.graph.snapshot();
    g.graph
        .run_to(1200, &mut |_: &controlsim::graph::Graph| {})
        .unwrap();
    assert!(g.graph.resets(plant) > 0);
    g.graph.restore(&snap).unwrap();
    assert_eq!(g.graph.resets(plant), 0);
}

/// A map fits only its own graph.
#[test]
fn a_map_of_another_graph_is_refused() {
    let rich = expanded(RICH, 42);
    let more = expanded(MORE, 3);
    let err = GraphLoops::new(&more.graph, &rich.map).unwrap_err();
    assert!(err.to_string().contains("is not its"), "{err}");
}
