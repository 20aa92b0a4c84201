//! `run_to` evaluates a pure every-step output only where it is read
//! ([`demand`](super::demand)): the boundaries of the calls, counted, and
//! the graph it leaves, compared bit for bit with a run whose observer
//! reads every boundary.

use std::sync::{Arc, Mutex};

use netloop_time::SimTime;

use super::component::{Component, Ctx, Declaration, Inputs, Needs, Outputs, PortSpec, Timing};
use super::{Graph, GraphBuilder, GraphObserver, GraphRecorder, Unobserved};
use crate::error::ObserverError;
use crate::solver::SolverKind;
use crate::SystemConfig;

const STEP: SimTime = SimTime::from_millis(10);

/// Every third boundary from 1: 1, 4, 7, ...
const SAMPLED: Timing = Timing::Periodic {
    period: SimTime::from_millis(30),
    offset: SimTime::from_millis(10),
};

/// `y = k + sum of inputs (+ x)`, logging the boundaries of its `output`
/// calls (the log is the test's, read by nothing in the graph); optionally
/// one continuous state `x' = 1`.
#[derive(Debug)]
struct Probe {
    timing: Timing,
    needs: Needs,
    inputs: usize,
    direct: bool,
    state: bool,
    log: Arc<Mutex<Vec<u64>>>,
}

impl Probe {
    fn new(timing: Timing, needs: Needs) -> Self {
        Probe {
            timing,
            needs,
            inputs: 0,
            direct: true,
            state: false,
            log: Arc::default(),
        }
    }

    fn reading(mut self, direct: bool) -> Self {
        self.inputs = 1;
        self.direct = direct;
        self
    }

    fn integrating(mut self) -> Self {
        self.state = true;
        self
    }
}

const PURE: Needs = Needs {
    pure_output: true,
    ..Needs::OUTPUT_ONLY
};

impl Component for Probe {
    fn needs(&self) -> Needs {
        self.needs
    }

    fn declare(&self) -> Declaration {
        Declaration {
            inputs: (0..self.inputs)
                .map(|i| {
                    let p = PortSpec::new(format!("u{i}"), 1);
                    if self.direct {
                        p
                    } else {
                        p.delayed()
                    }
                })
                .collect(),
            outputs: vec![PortSpec::new("y", 1)],
            states: if self.state {
                vec!["x".into()]
            } else {
                Vec::new()
            },
            guards: 0,
            timing: self.timing,
        }
    }

    fn output(&mut self, cx: &mut Ctx, x: &[f64], u: &Inputs, y: &mut Outputs) {
        self.log.lock().unwrap().push(cx.k);
        y.port(0)[0] = cx.k as f64 + u.all().iter().sum::<f64>() + x.iter().sum::<f64>();
    }

    fn derivative(&self, _t: f64, _x: &[f64], _u: &Inputs, dx: &mut [f64]) {
        dx.fill(1.0);
    }
}

/// Reads the boundaries `k % every == 0`.
struct Every(u64);

impl GraphObserver for Every {
    fn observes(&self, k: u64) -> bool {
        k % self.0 == 0
    }

    fn observe(&mut self, _graph: &Graph) -> Result<(), ObserverError> {
        Ok(())
    }
}

/// `source` (an every-step probe) read by `reader` (declared first when
/// `reader_first`); the source's log.
fn pair(source: Probe, reader: Probe, reader_first: bool) -> (Graph, Arc<Mutex<Vec<u64>>>) {
    let log = source.log.clone();
    let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
    if reader_first {
        b.component("reader", reader).component("source", source);
    } else {
        b.component("source", source).component("reader", reader);
    }
    b.connect("source.y", "reader.u0");
    (b.build().unwrap(), log)
}

fn calls(log: &Arc<Mutex<Vec<u64>>>) -> Vec<u64> {
    std::mem::take(&mut *log.lock().unwrap())
}

#[test]
fn a_pure_output_is_computed_where_a_sampler_or_the_observer_reads_it() {
    let sampled = || {
        pair(
            Probe::new(Timing::EveryStep, PURE),
            Probe::new(SAMPLED, Needs::OUTPUT_ONLY).reading(true),
            false,
        )
    };
    // The first and the last boundary in full, and the samples 1, 4, 7.
    let (mut g, log) = sampled();
    g.run_to(10, &mut Unobserved).unwrap();
    assert_eq!(calls(&log), [0, 1, 4, 7, 9]);
    // A second call starts with a full boundary again.
    g.run_to(16, &mut Unobserved).unwrap();
    assert_eq!(calls(&log), [10, 13, 15]);
    // Those too where the observer reads.
    let (mut h, log) = sampled();
    h.run_to(10, &mut Every(5)).unwrap();
    assert_eq!(calls(&log), [0, 1, 4, 5, 7, 9]);
    // An observer that reads every boundary (a closure) sees every one.
    let (mut f, log) = sampled();
    f.run_to(10, &mut |_: &Graph| {}).unwrap();
    assert_eq!(calls(&log), (0..10).collect::<Vec<_>>());
    // The sampler read the same values: y = k + (source's k) at 7.
    f.run_to(16, &mut |_: &Graph| {}).unwrap();
    assert_eq!(g.value("reader", "y").unwrap(), &[26.0]);
    assert_eq!(g.snapshot(), f.snapshot());
    // Nothing reads it at all: the first and last boundaries only.
    let source = Probe::new(Timing::EveryStep, PURE);
    let log = source.log.clone();
    let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
    b.component("source", source);
    let mut alone = b.build().unwrap();
    alone.run_to(10, &mut Unobserved).unwrap();
    assert_eq!(calls(&log), [0, 9]);
}

/// A reader that needs the value at every boundary keeps the source
/// evaluated at every boundary; so does a source that is not pure.
#[test]
fn outputs_read_at_every_boundary_are_computed_at_every_boundary() {
    let every: Vec<u64> = (0..10).collect();
    let cases = [
        // an every-step reader
        (
            Probe::new(Timing::EveryStep, PURE),
            Probe::new(Timing::EveryStep, Needs::OUTPUT_ONLY).reading(true),
            false,
        ),
        // an on-input reader (triggered by every new value)
        (
            Probe::new(Timing::EveryStep, PURE),
            Probe::new(Timing::OnInput, Needs::OUTPUT_ONLY).reading(true),
            false,
        ),
        // a sampler evaluated before the source: it reads the value of
        // the boundary before its own
        (
            Probe::new(Timing::EveryStep, PURE),
            Probe::new(SAMPLED, Needs::OUTPUT_ONLY).reading(false),
            true,
        ),
        // a sampler that integrates with its input held over every step
        (
            Probe::new(Timing::EveryStep, PURE),
            Probe::new(SAMPLED, Needs::OUTPUT_ONLY)
                .reading(true)
                .integrating(),
            false,
        ),
        // a source whose output is not pure
        (
            Probe::new(Timing::EveryStep, Needs::OUTPUT_ONLY),
            Probe::new(SAMPLED, Needs::OUTPUT_ONLY).reading(true),
            false,
        ),
    ];
    for (n, (source, reader, first)) in cases.into_iter().enumerate() {
        let (mut g, log) = pair(source, reader, first);
        g.run_to(10, &mut Unobserved).unwrap();
        assert_eq!(calls(&log), every, "case {n}");
    }
}

/// Two `[[loops]]` (continuous and discrete plants, sensors at different
/// periods and phases, an event-triggered controller) as a graph.
fn loops() -> Graph {
    let text = r#"
step = "1ms"
solver = "rk4"
[[loops]]
name = "a"
[loops.plant]
kind = "dc_servo"
[loops.sensor]
period = "7ms"
phase = "3ms"
noise_std = 0.01
[loops.controller]
kind = "pid"
kp = 2.0
ki = 1.0
kd = 0.1
[[loops.reference]]
kind = "step"
at = "20ms"
final = 1.0
[[loops]]
name = "b"
[loops.plant]
kind = "discrete_state_space"
a = [[1.0, 0.002], [-0.004, 0.9988]]
b = [[0.0], [0.002]]
c = [[1.0, 0.0]]
x0 = [0.3, -0.2]
period = "2ms"
[loops.sensor]
period = "4ms"
[loops.controller]
kind = "pid"
kp = 1.5
ki = 0.5
trigger = "event"
[[loops.reference]]
kind = "constant"
value = 0.5
"#;
    let config: SystemConfig = toml::from_str(text).unwrap();
    super::loops::expand(&config, 7).unwrap()
}

/// After every `run_to` call, an unobserved run's graph (values, freshness,
/// states, internal states) is the bits of one observed at every boundary,
/// and both go on alike.
#[test]
fn an_unobserved_run_leaves_the_graph_as_an_observed_run_does() {
    let (mut lazy, mut full) = (loops(), loops());
    for k1 in [1, 2, 37, 38, 100, 250] {
        lazy.run_to(k1, &mut Unobserved).unwrap();
        full.run_to(k1, &mut |_: &Graph| {}).unwrap();
        assert_eq!(lazy.snapshot(), full.snapshot(), "after run_to({k1})");
    }
    lazy.evaluate().unwrap();
    full.evaluate().unwrap();
    assert_eq!(lazy.snapshot(), full.snapshot());
}

/// A recorder writing every fourth boundary reads only those, and writes
/// the rows an observer reading every boundary writes.
#[test]
fn a_recorder_reads_only_the_rows_it_writes() {
    let every = std::num::NonZeroU64::new(4).unwrap();
    let mut g = loops();
    let mut rec = GraphRecorder::new(&g, Vec::new(), every).unwrap();
    assert!(rec.observes(8) && !rec.observes(9));
    g.run_to(120, &mut rec).unwrap();
    let lazy = rec.finish().unwrap();

    /// Reads every boundary, records as the recorder does.
    struct All<W: std::io::Write>(GraphRecorder<W>);
    impl<W: std::io::Write> GraphObserver for All<W> {
        fn observe(&mut self, graph: &Graph) -> Result<(), ObserverError> {
            self.0.observe(graph)
        }
    }
    let mut h = loops();
    let mut all = All(GraphRecorder::new(&h, Vec::new(), every).unwrap());
    h.run_to(120, &mut all).unwrap();
    assert_eq!(all.0.rows(), 30);
    assert_eq!(lazy, all.0.finish().unwrap());
}

#[test]
fn built_in_plants_have_pure_outputs_custom_ones_not() {
    use super::adapters::PlantComponent;
    use crate::plant::{PlantConfig, PlantModel};
    let step = crate::time::StepSize::new(STEP).unwrap();
    let config: PlantConfig = toml::from_str("kind = \"dc_servo\"").unwrap();
    let model = PlantModel::from_config(&crate::KeyPath::key("plant"), &config).unwrap();
    let plant = PlantComponent::new(&crate::KeyPath::key("plant"), model, step).unwrap();
    assert!(plant.needs().pure_output);
    let PlantModel::DcServo(servo) =
        PlantModel::from_config(&crate::KeyPath::key("plant"), &config).unwrap()
    else {
        unreachable!("a dc_servo")
    };
    let custom = PlantModel::Custom(Box::new(servo));
    let plant = PlantComponent::new(&crate::KeyPath::key("plant"), custom, step).unwrap();
    assert!(!plant.needs().pure_output);
}

/// A state that turns infinite from `t = 0.055` s on (`x' = 1` before),
/// sampled every third boundary from 1.
#[derive(Debug)]
struct Blowup;

impl Blowup {
    const AT: f64 = 0.055;
}

/// [`Blowup`]'s state turning infinite from `at` seconds on (never for an
/// infinite `at`).
#[derive(Debug)]
struct BlowupAt(f64);

impl Component for BlowupAt {
    fn declare(&self) -> Declaration {
        Blowup.declare()
    }

    fn needs(&self) -> Needs {
        Needs::OUTPUT_ONLY
    }

    fn output(&mut self, cx: &mut Ctx, x: &[f64], u: &Inputs, y: &mut Outputs) {
        Blowup.output(cx, x, u, y);
    }

    fn derivative(&self, t: f64, _x: &[f64], _u: &Inputs, dx: &mut [f64]) {
        dx[0] = if t >= self.0 { f64::INFINITY } else { 1.0 };
    }
}

impl Component for Blowup {
    fn declare(&self) -> Declaration {
        Declaration {
            inputs: Vec::new(),
            outputs: vec![PortSpec::new("y", 1)],
            states: vec!["x".into()],
            guards: 0,
            timing: SAMPLED,
        }
    }

    fn needs(&self) -> Needs {
        Needs::OUTPUT_ONLY
    }

    fn output(&mut self, _cx: &mut Ctx, x: &[f64], _u: &Inputs, y: &mut Outputs) {
        y.port(0)[0] = x[0];
    }

    fn derivative(&self, t: f64, _x: &[f64], _u: &Inputs, dx: &mut [f64]) {
        dx[0] = if t >= Self::AT { f64::INFINITY } else { 1.0 };
    }
}

/// Boundaries 2, 3 and 5 are quiet (nothing due, nothing read), so an
/// unobserved run integrates steps 2–3 and 5 as stretches: the state that
/// turns infinite over step 5 stops it at boundary 6 with the error of a
/// run observed at every boundary, the graph left alike.
#[test]
fn a_quiet_stretch_stops_where_a_state_turns_non_finite() {
    let build = || {
        let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
        b.component("blowup", Blowup);
        b.build().unwrap()
    };
    let (mut lazy, mut full) = (build(), build());
    let e = lazy.run_to(10, &mut Unobserved).unwrap_err();
    let f = full.run_to(10, &mut |_: &Graph| {}).unwrap_err();
    assert_eq!(format!("{e:?}"), format!("{f:?}"));
    assert!(
        matches!(e, super::GraphError::NonFinite { step: 6, .. }),
        "{e:?}"
    );
    assert_eq!(lazy.k(), 6);
    assert_eq!(lazy.snapshot(), full.snapshot());
}

/// Several components with states in one stretch are integrated one at a
/// time over the whole stretch: where one turns non-finite, the run stops
/// at the earliest such step, naming the first component (in declaration
/// order) non-finite there, every state left as after that step, exactly
/// as a run observed at every boundary (each step of every component in
/// turn). Boundaries 1, 4 and 7 are due; the others quiet.
#[test]
fn a_stretch_of_several_components_stops_at_the_earliest_non_finite_step() {
    let never = f64::INFINITY;
    // (blow-up times in declaration order, the component named, its step)
    let cases: [(&[f64], &str, u64); 5] = [
        (&[never, 0.055], "c1", 6),
        (&[0.055, never], "c0", 6),
        (&[never, 0.055, 0.025], "c2", 3),
        (&[0.025, never, 0.025], "c0", 3),
        (&[never, 0.045, never], "c1", 5),
    ];
    for (n, (at, named, step)) in cases.into_iter().enumerate() {
        let build = || {
            let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
            for (i, &t) in at.iter().enumerate() {
                b.component(&format!("c{i}"), BlowupAt(t));
            }
            b.build().unwrap()
        };
        let (mut lazy, mut full) = (build(), build());
        let e = lazy.run_to(10, &mut Unobserved).unwrap_err();
        let f = full.run_to(10, &mut |_: &Graph| {}).unwrap_err();
        assert_eq!(format!("{e:?}"), format!("{f:?}"), "case {n}");
        match e {
            super::GraphError::NonFinite {
                component, step: s, ..
            } => assert_eq!((component.as_str(), s), (named, step), "case {n}"),
            other => panic!("case {n}: {other:?}"),
        }
        assert_eq!(lazy.k(), step, "case {n}");
        assert_eq!(lazy.snapshot(), full.snapshot(), "case {n}");
    }
}

/// A continuous plant without guards takes its held input (what its
/// outputs read) from `integrate`, so the step does not call its
/// `advance`; a discrete plant, one with guards and one without states
/// (whose `integrate` the step does not call) are advanced.
#[test]
fn only_plants_that_integrate_without_guards_skip_advance() {
    use super::adapters::PlantComponent;
    use crate::plant::{PlantConfig, PlantModel};
    let step = crate::time::StepSize::new(SimTime::from_millis(1)).unwrap();
    let advanced = |text: &str| {
        let config: PlantConfig = toml::from_str(text).unwrap();
        let model = PlantModel::from_config(&crate::KeyPath::key("plant"), &config).unwrap();
        PlantComponent::new(&crate::KeyPath::key("plant"), model, step)
            .unwrap()
            .needs()
            .advance
    };
    assert!(!advanced("kind = \"dc_servo\""));
    assert!(!advanced(
        "kind = \"state_space\"\na = [[-1.0]]\nb = [[1.0]]\nc = [[1.0]]"
    ));
    assert!(advanced("kind = \"bouncing_ball\""));
    assert!(advanced(
        "kind = \"discrete_state_space\"\na = [[0.5]]\nb = [[1.0]]\nc = [[1.0]]\nperiod = \"2ms\""
    ));
}
