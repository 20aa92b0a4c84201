//! Snapshot and restore round trip of every registered component kind
//! (issue 11, item 6: rollback and replay work for every kind): each kind,
//! its inputs driven by varying signals, runs 37 steps; the snapshot taken
//! there is restored into a *freshly built* copy of the graph, and both run
//! on to step 90. Every output, continuous state and discrete state must be
//! the same bits at every boundary: a kind that kept some state outside its
//! `save`/`load` (a generator position, a held sample, a switch position, a
//! PID's clock) would diverge in the fresh copy.
//!
//! The lists are checked against the registries: every variant of
//! [`BlockConfig`] and [`PlantConfig`] is named by an exhaustive match, so
//! a new kind fails to compile here until it has a case. FMU plants need an
//! FMU binary. Of the controller kinds (each needs parameters shaped for
//! its plant) only the solver-integrated ones are here, answering directly
//! and by rollback.

use std::collections::BTreeSet;

use netloop_time::SimTime;

use super::adapters::{ActuatorComponent, PlantComponent, ReferenceComponent, SensorComponent};
use super::component::{Component, Ctx, Declaration, Inputs, Needs, Outputs, PortSpec, Timing};
use super::{Graph, GraphBuilder, Inlet};
use crate::blocks::{build, BlockConfig, BlockContext};
use crate::key_path::KeyPath;
use crate::plant::{PlantConfig, PlantModel};
use crate::reference::SignalConfig;
use crate::sensor::SensorConfig;
use crate::solver::SolverKind;
use crate::time::StepSize;
use crate::ActuatorConfig;

const STEP: SimTime = SimTime::from_millis(10);

/// A varying signal of `size` elements: `1.7 sin(0.37 k + 1.3 j)`, which
/// crosses zero, switches relays and drives integrators both ways.
#[derive(Debug)]
struct Drive {
    size: usize,
}

impl Component for Drive {
    fn needs(&self) -> Needs {
        Needs::OUTPUT_ONLY
    }

    fn declare(&self) -> Declaration {
        Declaration {
            inputs: Vec::new(),
            outputs: vec![PortSpec::new("y", self.size)],
            states: Vec::new(),
            guards: 0,
            timing: Timing::EveryStep,
        }
    }

    fn output(&mut self, cx: &mut Ctx, _: &[f64], _: &Inputs, y: &mut Outputs) {
        for (j, v) in y.port(0).iter_mut().enumerate() {
            *v = 1.7 * (0.37 * cx.k as f64 + 1.3 * j as f64).sin();
        }
    }
}

/// Builds a graph of the component `make()` gives, every input port driven.
fn graph_of(make: &dyn Fn() -> Box<dyn Component>) -> Graph {
    let c = make();
    let decl = c.declare();
    let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
    b.component_keyed(KeyPath::key("components").at(0), "c", c);
    for (j, p) in decl.inputs.iter().enumerate() {
        let name = format!("drive{j}");
        b.component_keyed(
            KeyPath::key("components").at(j + 1),
            &name,
            Box::new(Drive { size: p.size }),
        );
        b.connect(&format!("{name}.y"), &format!("c.{}", p.name));
    }
    b.build().unwrap()
}

/// Every output, continuous and discrete state at boundaries `k..=end`.
fn trace(g: &mut Graph, end: u64) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    let bits = |g: &Graph| {
        let mut v: Vec<u64> = g.values().iter().map(|x| x.to_bits()).collect();
        v.extend(g.states(0).iter().map(|x| x.to_bits()));
        v.extend(g.discrete_states(0).iter().map(|x| x.to_bits()));
        v
    };
    g.run_to(end, &mut |g: &Graph| out.push(bits(g))).unwrap();
    g.evaluate().unwrap();
    out.push(bits(g));
    out
}

/// Runs the round trip for one kind (see the module docs).
fn round_trip(name: &str, make: &dyn Fn() -> Box<dyn Component>) {
    let mut g = graph_of(make);
    g.run_to(37, &mut |_: &Graph| {}).unwrap();
    let snap = g.snapshot();
    let first = trace(&mut g, 90);
    let mut fresh = graph_of(make);
    fresh.restore(&snap).unwrap();
    assert!(
        fresh.snapshot() == snap,
        "{name}: restored snapshot differs"
    );
    let again = trace(&mut fresh, 90);
    assert!(first == again, "{name}: replay after restore differs");
    // The same graph, restored to its own past, replays the same bits too.
    g.restore(&snap).unwrap();
    assert!(
        trace(&mut g, 90) == first,
        "{name}: replay in place differs"
    );
}

fn step() -> StepSize {
    StepSize::new(STEP).unwrap()
}

/// One example of every block kind.
fn blocks(csv: &str) -> Vec<String> {
    [
        "kind = \"constant\"\nvalue = [1.0, 2.0]",
        "kind = \"step\"\ntime = 0.2",
        "kind = \"ramp\"\nslope = 2.0",
        "kind = \"sine\"\nfrequency = 3.0",
        "kind = \"square\"\nfrequency = 2.0",
        "kind = \"pulse\"\nperiod = 0.1",
        "kind = \"chirp\"\nf0 = 1.0\nf1 = 5.0\nt1 = 1.0",
        "kind = \"clock\"",
        "kind = \"random\"\ndistribution = \"normal\"\nwidth = 2",
        &format!("kind = \"from_csv\"\nfile = {csv:?}"),
        "kind = \"gain\"\nk = 2.0",
        "kind = \"sum\"\nsigns = \"+-\"",
        "kind = \"product\"\nops = \"**\"",
        "kind = \"function\"\nfunction = \"sin\"",
        "kind = \"min\"",
        "kind = \"max\"",
        "kind = \"power\"\nexponent = 2.0",
        "kind = \"relational\"\nop = \"<\"",
        "kind = \"logic\"\nop = \"xor\"",
        "kind = \"expr\"\nexpr = \"2 * u + 1\"",
        "kind = \"integrator\"\nlower = -0.3\nupper = 0.4",
        "kind = \"derivative\"",
        "kind = \"transfer_function\"\nnum = [1.0]\nden = [1.0, 3.0, 2.0]",
        "kind = \"state_space\"\na = [[0.0, 1.0], [-2.0, -3.0]]\nb = [[0.0], [1.0]]\nc = [[1.0, 0.0]]",
        "kind = \"zero_pole_gain\"\npoles = [-1.0, -4.0]\ngain = 2.0",
        "kind = \"transport_delay\"\ndelay = \"50ms\"",
        "kind = \"unit_delay\"\nperiod = \"30ms\"",
        "kind = \"zero_order_hold\"\nperiod = \"40ms\"",
        "kind = \"discrete_integrator\"\nperiod = \"20ms\"",
        "kind = \"discrete_transfer_function\"\nnum = [0.5, 0.1]\nden = [1.0, -0.5]\nperiod = \"20ms\"",
        "kind = \"discrete_state_space\"\na = [[0.5]]\nb = [[1.0]]\nc = [[1.0]]\nd = [[0.1]]",
        "kind = \"saturation\"\nlower = -1.0\nupper = 1.0",
        "kind = \"dead_zone\"\nstart = -0.5\nend = 0.5",
        "kind = \"relay\"\non_point = 0.5\noff_point = -0.5",
        "kind = \"backlash\"\ndeadband = 0.6",
        "kind = \"rate_limiter\"\nrising = 3.0\nfalling = -2.0",
        "kind = \"quantizer\"\ninterval = 0.25",
        "kind = \"friction\"\ncoulomb = 0.3\nviscous = 0.1",
        "kind = \"lookup_1d\"\nbreakpoints = [-1.0, 0.0, 1.0]\ntable = [2.0, 0.0, 1.0]",
        "kind = \"lookup_2d\"\nrows = [0.0, 1.0]\ncolumns = [0.0, 1.0]\ntable = [[0.0, 1.0], [2.0, 3.0]]",
        "kind = \"mux\"\nwidths = [1, 2]",
        "kind = \"demux\"\nwidths = [1, 2]",
        "kind = \"selector\"\nindices = [2, 0]\nwidth = 3",
        "kind = \"switch\"\nthreshold = 0.2",
        "kind = \"if\"\nconditions = \"u > 0.5\"",
        "kind = \"if_action\"\nexpr = \"3 * u\"",
        "kind = \"merge\"",
        "kind = \"equations\"\nequations = \"input e; state x; der(x) = e - x; output y = x + e;\"",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The position of a block kind in [`BlockConfig`], by an exhaustive match.
fn block_index(c: &BlockConfig) -> usize {
    use BlockConfig as B;
    match c {
        B::Constant(_) => 0,
        B::Step(_) => 1,
        B::Ramp(_) => 2,
        B::Sine(_) => 3,
        B::Square(_) => 4,
        B::Pulse(_) => 5,
        B::Chirp(_) => 6,
        B::Clock(_) => 7,
        B::Random(_) => 8,
        B::FromCsv(_) => 9,
        B::Gain(_) => 10,
        B::Sum(_) => 11,
        B::Product(_) => 12,
        B::Function(_) => 13,
        B::Min(_) => 14,
        B::Max(_) => 15,
        B::Power(_) => 16,
        B::Relational(_) => 17,
        B::Logic(_) => 18,
        B::Expr(_) => 19,
        B::Integrator(_) => 20,
        B::Derivative(_) => 21,
        B::TransferFunction(_) => 22,
        B::StateSpace(_) => 23,
        B::ZeroPoleGain(_) => 24,
        B::TransportDelay(_) => 25,
        B::UnitDelay(_) => 26,
        B::ZeroOrderHold(_) => 27,
        B::DiscreteIntegrator(_) => 28,
        B::DiscreteTransferFunction(_) => 29,
        B::DiscreteStateSpace(_) => 30,
        B::Saturation(_) => 31,
        B::DeadZone(_) => 32,
        B::Relay(_) => 33,
        B::Backlash(_) => 34,
        B::RateLimiter(_) => 35,
        B::Quantizer(_) => 36,
        B::Friction(_) => 37,
        B::Lookup1d(_) => 38,
        B::Lookup2d(_) => 39,
        B::Mux(_) => 40,
        B::Demux(_) => 41,
        B::Selector(_) => 42,
        B::Switch(_) => 43,
        B::If(_) => 44,
        B::IfAction(_) => 45,
        B::Merge(_) => 46,
        B::Equations(_) => 47,
    }
}
const BLOCK_KINDS: usize = 48;

#[test]
fn every_block_kind_round_trips_through_a_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("table.csv");
    std::fs::write(&csv, "t,a\n0,0\n0.3,1\n0.6,-1\n2,0\n").unwrap();
    let mut seen = BTreeSet::new();
    for text in blocks(csv.to_str().unwrap()) {
        let config: BlockConfig = toml::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        seen.insert(block_index(&config));
        let make = || -> Box<dyn Component> {
            let cx = BlockContext {
                step: step(),
                seed: 7,
                stream: 0,
            };
            build(&KeyPath::key("components").at(0).and("block"), &config, cx)
                .unwrap_or_else(|e| panic!("{text}: {e}"))
        };
        round_trip(&text, &make);
    }
    assert_eq!(seen, (0..BLOCK_KINDS).collect(), "a block kind has no case");
}

/// One example of every plant kind but FMUs.
fn plants() -> Vec<&'static str> {
    vec![
        "kind = \"state_space\"\na = [[0.0, 1.0], [-2.0, -0.5]]\nb = [[0.0], [1.0]]\nc = [[1.0, 0.0]]\nx0 = [0.3, 0.0]",
        "kind = \"discrete_state_space\"\nperiod = \"20ms\"\na = [[0.9]]\nb = [[0.1]]\nc = [[1.0]]",
        "kind = \"transfer_function\"\nnum = [1.0]\nden = [1.0, 2.0, 1.0]",
        "kind = \"discrete_transfer_function\"\nperiod = \"20ms\"\nnum = [0.1]\nden = [1.0, -0.9]",
        "kind = \"dc_servo\"",
        "kind = \"inverted_pendulum\"",
        "kind = \"vehicle\"",
        "kind = \"mass_spring_damper\"",
        "kind = \"bouncing_ball\"",
        "kind = \"equations\"\nequations = \"input u; state x(start = 1); der(x) = u - x; output y = x;\"",
    ]
}

fn plant_index(c: &PlantConfig) -> usize {
    use PlantConfig as P;
    match c {
        P::StateSpace(_) => 0,
        P::DiscreteStateSpace(_) => 1,
        P::TransferFunction(_) => 2,
        P::DiscreteTransferFunction(_) => 3,
        P::DcServo(_) => 4,
        P::InvertedPendulum(_) => 5,
        P::Vehicle(_) => 6,
        P::MassSpringDamper(_) => 7,
        P::BouncingBall(_) => 8,
        P::Equations(_) => 9,
        P::Fmu(_) => 10,
    }
}

#[test]
fn every_plant_kind_round_trips_through_a_snapshot() {
    // FMU plants: see the module docs.
    let mut seen = BTreeSet::from([10]);
    for text in plants() {
        let config: PlantConfig = toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        seen.insert(plant_index(&config));
        let make = || -> Box<dyn Component> {
            let model = PlantModel::from_config(&KeyPath::key("p"), &config).unwrap();
            Box::new(PlantComponent::new(&KeyPath::key("p"), model, step()).unwrap())
        };
        round_trip(text, &make);
    }
    assert_eq!(seen, (0..11).collect(), "a plant kind has no case");
}

/// The sensor (with noise and quantisation: its generator is state), the
/// actuator, a reference and a flow's receiving end.
#[test]
fn sensors_actuators_references_and_inlets_round_trip_through_a_snapshot() {
    let sensor: SensorConfig =
        toml::from_str("period = \"20ms\"\nphase = \"10ms\"\nnoise_std = 0.1\nquantization = 0.01")
            .unwrap();
    round_trip("sensor", &|| {
        let names = ["a".to_string(), "b".to_string()];
        Box::new(SensorComponent::new(&KeyPath::key("s"), &sensor, step(), &names, 3, 1).unwrap())
    });
    let actuator: ActuatorConfig = toml::from_str("min = -1.0\nmax = 1.0").unwrap();
    round_trip("actuator", &|| {
        Box::new(ActuatorComponent::new(&KeyPath::key("a"), &actuator, 2).unwrap())
    });
    let signals: Vec<SignalConfig> =
        vec![toml::from_str("kind = \"step\"\nat = \"100ms\"\nfinal = 1.0").unwrap()];
    round_trip("reference", &|| {
        Box::new(ReferenceComponent::new(&KeyPath::key("r"), &signals).unwrap())
    });
    round_trip("inlet", &|| Box::new(Inlet::new(3)));
}

/// Event-triggered solver-integrated controllers, answering directly and by
/// rollback (`response = "rollback"`): the look one step ahead keeps nothing
/// outside the saved state, so a restored copy replays the same answers.
#[test]
fn controllers_answering_by_rollback_round_trip_through_a_snapshot() {
    use super::adapters::{ControllerComponent, ControllerShape};
    use crate::controller::ControllerConfig;
    let signals: Vec<SignalConfig> =
        vec![toml::from_str("kind = \"sine\"\namplitude = 0.5\nfrequency = 2.0").unwrap()];
    for text in [
        "kind = \"state_space\"\na = [[0.0, 1.0], [-2.0, -0.5]]\nb = [[0.0], [1.0]]\nc = [[1.0, 0.3]]\nd = [[0.2]]\ntrigger = \"event\"",
        "kind = \"transfer_function\"\nnum = [1.0, 2.0]\nden = [1.0, 3.0, 2.0]\ntrigger = \"event\"",
    ] {
        let config: ControllerConfig = toml::from_str(text).unwrap();
        for rollback in [false, true] {
            round_trip(&format!("{text} (rollback {rollback})"), &|| {
                let shape = ControllerShape {
                    measurements: 1,
                    outputs: 1,
                    reference: &signals,
                    model: None,
                    limits: None,
                    default_period: Some(STEP),
                };
                let c = ControllerComponent::new(&KeyPath::key("c"), &config, shape, step()).unwrap();
                Box::new(if rollback {
                    c.answer_by_rollback(&KeyPath::key("response")).unwrap()
                } else {
                    c
                })
            });
        }
    }
}
