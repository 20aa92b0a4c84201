//! Moving nodes in the graph session (`netloop_cosim::session::graph`),
//! tested from scenarios: a moving cart as a graph hands the network the positions its
//! `[[loops]]` form hands it, step request by step request, under every
//! scheme (time-stepping too), and with a position tolerance bounded by
//! the cart's model it syncs exactly as the loop does. The network is the
//! builtin channel made to ask for positions, and it writes down every
//! step it is given, so no ns-3 is needed.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use controlsim::error::ObserverError;
use controlsim::graph::{Graph, ObserveGraph};
use controlsim::view::{LoopObserver, LoopView};
use controlsim::System;
use protocol::{Configured, FlowSpec, NodeKinematics, SimTime, Step, StepDone, Summary};

use crate::config::Scenario;
use crate::graph_session::GraphSession;
use crate::network::{BuiltinNetwork, Network, NetworkError};
use crate::packets_csv::PacketsCsv;

/// One step request as the network got it.
#[derive(Clone, Debug, PartialEq)]
struct Seen {
    until: SimTime,
    kinematics: Vec<NodeKinematics>,
}

/// The builtin channel, writing down every step; it says it takes
/// positions into account (it ignores them) when `positions_matter`.
struct Watched {
    inner: BuiltinNetwork,
    seen: Rc<RefCell<Vec<Seen>>>,
    positions_matter: bool,
}

impl Network for Watched {
    fn configure(&mut self, flows: &[FlowSpec]) -> Result<Configured, NetworkError> {
        self.inner.configure(flows)
    }

    fn begin_step(&mut self, step: Step) -> Result<(), NetworkError> {
        self.seen.borrow_mut().push(Seen {
            until: step.until,
            kinematics: step.kinematics.clone(),
        });
        self.inner.begin_step(step)
    }

    fn end_step(&mut self) -> Result<StepDone, NetworkError> {
        self.inner.end_step()
    }

    fn finish(&mut self) -> Result<Summary, NetworkError> {
        self.inner.finish()
    }

    fn reached(&self) -> SimTime {
        self.inner.reached()
    }

    fn may_deliver_instantly(&self) -> bool {
        self.inner.may_deliver_instantly()
    }

    fn uses_kinematics(&self) -> bool {
        self.positions_matter
    }

    fn software(&self) -> String {
        self.inner.software()
    }
}

/// 2 s of a cart (mass-spring-damper, force limited to ±2 N) stepped to
/// 1 m at 0.5 s over a 3 ms channel; `{sync}` is spliced into `[sync]`.
const HEADER: &str = r#"
duration = "2s"
step = "1ms"
seed = 1
[sync]
period = "10ms"
{sync}
[network]
backend = "builtin"
[network.builtin]
delay = { kind = "constant", value = "3ms" }
"#;

const LOOPS: &str = r#"
[[loops]]
name = "cart"
plant_node = 0
controller_node = 1
mobility = { position = "x", velocity = "v", origin = [5.0, 0.0, 0.0] }
[loops.plant]
kind = "mass_spring_damper"
x0 = [0.0, 0.0]
[loops.sensor]
period = "10ms"
[loops.actuator]
min = -2.0
max = 2.0
[loops.controller]
kind = "pid"
kp = 8.0
kd = 2.0
u_min = -2.0
u_max = 2.0
trigger = "time"
period = "10ms"
[loops.reference]
kind = "step"
at = "0.5s"
final = 1.0
"#;

const GRAPH: &str = r#"
[[components]]
name = "cart"
node = 0
mobility = { position = "cart.y[0]", velocity = "cart.y[1]", origin = [5.0, 0.0, 0.0] }
[components.plant]
kind = "mass_spring_damper"
x0 = [0.0, 0.0]
outputs = ["x", "v"]

[[components]]
name = "sensor"
node = 0
[components.sensor]
period = "10ms"

[[components]]
name = "pid"
node = 1
[components.controller]
kind = "pid"
kp = 8.0
kd = 2.0
u_min = -2.0
u_max = 2.0
trigger = "time"
period = "10ms"
[components.reference]
kind = "step"
at = "0.5s"
final = 1.0

[[components]]
name = "force"
node = 0
[components.actuator]
min = -2.0
max = 2.0

[[connections]]
from = "cart.y[0]"
to = "sensor.y"

[[connections]]
from = "sensor.y"
to = "pid.measurement"
name = "uplink"

[[connections]]
from = "pid.u"
to = "force.u"
name = "downlink"

[[connections]]
from = "force.u"
to = "cart.u"
"#;

fn text(sync: &str, body: &str) -> String {
    format!("{}{body}", HEADER.replace("{sync}", sync))
}

/// What a run handed the network, the cart's position at every boundary,
/// and the sync count.
struct Run {
    seen: Vec<Seen>,
    positions: Vec<f64>,
    syncs: u64,
}

fn watched(
    builtin: &crate::network::BuiltinConfig,
    seed: u64,
    positions_matter: bool,
) -> (Watched, Rc<RefCell<Vec<Seen>>>) {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let inner = BuiltinNetwork::new(
        builtin,
        seed,
        0,
        Path::new(""),
        &crate::input::read_input_text,
    )
    .unwrap();
    (
        Watched {
            inner,
            seen: Rc::clone(&seen),
            positions_matter,
        },
        seen,
    )
}

fn run_loops(sync: &str) -> Run {
    run_loops_over(sync, true)
}

/// The cart's position at every boundary a loop run observes.
struct Positions(Vec<f64>);

impl LoopObserver for Positions {
    fn observe_loops<V: LoopView + ?Sized>(&mut self, view: &V) -> Result<(), ObserverError> {
        self.0.push(view.plant_state(0)[0]);
        Ok(())
    }
}

/// Runs the `[[loops]]` form as `run` does: expanded into a graph, its
/// plants moving their nodes ([`crate::loop_mobility`]).
fn run_loops_over(sync: &str, positions_matter: bool) -> Run {
    let resolved = Scenario::from_toml(&text(sync, LOOPS))
        .unwrap()
        .resolve()
        .unwrap();
    let system = System::from_config(&resolved.system, resolved.scenario.control_seed()).unwrap();
    let motions = crate::mobility::node_motions(&resolved, &system).unwrap();
    let builtin = resolved.scenario.network.builtin.clone().unwrap();
    let (network, seen) = watched(&builtin, resolved.scenario.seed, positions_matter);
    let (mut session, map) = crate::loop_graph::session(
        &resolved,
        &system,
        motions,
        Box::new(network),
        PacketsCsv::new(Vec::new()),
        None,
    )
    .unwrap();
    let mut positions = ObserveGraph::new(&map, Positions(Vec::new()));
    session.run(&mut positions).unwrap();
    let syncs = session.syncs();
    session.finish(true).1.unwrap();
    let seen = seen.borrow().clone();
    Run {
        seen,
        positions: positions.into_inner().0,
        syncs,
    }
}

fn run_graph(sync: &str) -> Run {
    run_graph_over(&text(sync, GRAPH), true).0
}

/// Runs a graph scenario over the watched builtin channel; also gives
/// its `packets.csv`.
fn run_graph_over(scenario: &str, positions_matter: bool) -> (Run, Vec<u8>) {
    let loaded = crate::graph_scenario::load_text(Path::new("cart.toml"), scenario, &[]).unwrap();
    let side = loaded.network.unwrap();
    let builtin = side.resolved.scenario.network.builtin.clone().unwrap();
    let (network, seen) = watched(&builtin, loaded.scenario.seed, positions_matter);
    let cart = loaded.graph.component_index("cart").unwrap();
    let mut session = GraphSession::new(
        loaded.graph,
        side.plan(),
        Box::new(network),
        PacketsCsv::new(Vec::new()),
        None,
    );
    let mut positions = Vec::new();
    session
        .run(&mut |g: &Graph| positions.push(g.states(cart)[0]))
        .unwrap();
    let syncs = session.syncs();
    let (parts, result) = session.finish(true);
    result.unwrap();
    let packets = parts.ledger.into_inner().unwrap();
    let seen = seen.borrow().clone();
    // A graph run also records the boundary at its end, a loop run not.
    assert_eq!(positions.len(), 2001);
    positions.pop();
    (
        Run {
            seen,
            positions,
            syncs,
        },
        packets,
    )
}

/// `a == b`, reporting the first difference only (the runs are long).
fn assert_same<T: PartialEq + std::fmt::Debug>(a: &[T], b: &[T], what: &str) {
    if let Some(i) = (0..a.len().min(b.len())).find(|&i| a[i] != b[i]) {
        panic!("{what}: first difference at {i}: {:?} vs {:?}", a[i], b[i]);
    }
    assert_eq!(a.len(), b.len(), "{what}: lengths");
}

/// Under each scheme the graph hands the network the loop's positions and
/// velocities at every step, bit for bit. Under time-stepping these are
/// the cart's state at the start of the period the step runs (a step
/// request handed over before the graph evaluated that boundary would
/// carry the outputs of the boundary before it).
#[test]
fn the_graph_hands_the_network_the_positions_its_loop_form_does() {
    for scheme in ["time_stepping", "master_slave", "event_driven"] {
        let sync = format!("scheme = \"{scheme}\"");
        let (l, g) = (run_loops(&sync), run_graph(&sync));
        assert_same(&l.positions, &g.positions, &format!("{scheme}: the cart"));
        assert!(
            *l.positions.last().unwrap() > 0.5,
            "{scheme}: the cart moves"
        );
        if scheme != "event_driven" {
            // Event-driven graphs stop at every boundary a flow may send at
            // (the same packets, more steps).
            assert_same(&l.seen, &g.seen, &format!("{scheme}: the step requests"));
            assert_eq!(l.syncs, g.syncs, "{scheme}: syncs");
        }
        if scheme == "time_stepping" {
            // A step to 10 (n + 1) ms carries the cart at 10 n ms.
            assert_eq!(g.seen.len(), 200);
            for (n, s) in g.seen.iter().enumerate() {
                assert_eq!(s.until, SimTime((n as u64 + 1) * 10_000_000));
                let k = &s.kinematics[0];
                assert_eq!(k.position[0], 5.0 + l.positions[10 * n], "step {n}");
            }
            assert!(g.seen.iter().any(|s| s.kinematics[0].velocity[0] > 0.1));
        }
    }
}

/// With `[sync] position_tolerance` and no declared bound, the cart's model
/// with the force limits of the actuator component that drives it bounds
/// its drift as the loop's does: the same windows (sync count and step
/// requests) and the same run. Without the limits nothing bounds it, and
/// the scenario is refused naming the key.
#[test]
fn a_tolerance_is_kept_from_the_carts_model_as_for_its_loop() {
    let sync = "scheme = \"master_slave\"\nposition_tolerance = \"1cm\"";
    let (l, g) = (run_loops(sync), run_graph(sync));
    assert_same(&l.positions, &g.positions, "the cart");
    assert_same(&l.seen, &g.seen, "the step requests");
    assert_eq!(l.syncs, g.syncs);
    assert!(g.syncs < 200 / 2, "{} syncs in 200 periods", g.syncs);

    let unlimited = text(sync, GRAPH).replace("min = -2.0\nmax = 2.0\n", "");
    let e = crate::graph_scenario::load_text(Path::new("cart.toml"), &unlimited, &[])
        .err()
        .expect("no bound");
    let message = e.to_string();
    assert!(
        message.contains("sync.position_tolerance") && message.contains("`min` and `max`"),
        "{message}"
    );
}

/// A network that ignores positions (the builtin channel as it is) is
/// handed the moving node's position with every step all the same (under
/// master-slave in lookahead windows too, as loops always were), and the
/// positions are harmless: the cart, `packets.csv`, the sync count and the
/// steps' ends are those of the same graph without `mobility`, whose steps
/// carry no positions, and master-slave runs ahead as it does without it.
/// Each step carries the cart where the graph has evaluated it last (its
/// recorded position at that boundary, plus the path's origin).
#[test]
fn positions_sent_to_a_network_that_ignores_them_change_nothing() {
    let mobility =
        "mobility = { position = \"cart.y[0]\", velocity = \"cart.y[1]\", origin = [5.0, 0.0, 0.0] }\n";
    assert!(GRAPH.contains(mobility));
    for scheme in ["time_stepping", "master_slave", "event_driven"] {
        let sync = format!("scheme = \"{scheme}\"");
        let (moving, moving_packets) = run_graph_over(&text(&sync, GRAPH), false);
        let still_text = text(&sync, GRAPH).replace(mobility, "");
        let (still, still_packets) = run_graph_over(&still_text, false);
        assert_same(
            &moving.positions,
            &still.positions,
            &format!("{scheme}: the cart"),
        );
        assert!(
            *moving.positions.last().unwrap() > 0.5,
            "{scheme}: the cart moves"
        );
        assert!(!moving_packets.is_empty());
        assert_eq!(moving_packets, still_packets, "{scheme}: packets.csv");
        assert_eq!(moving.syncs, still.syncs, "{scheme}: syncs");
        let ends = |r: &Run| r.seen.iter().map(|s| s.until).collect::<Vec<_>>();
        assert_same(
            &ends(&moving),
            &ends(&still),
            &format!("{scheme}: step ends"),
        );
        assert!(still.seen.iter().all(|s| s.kinematics.is_empty()));
        for s in &moving.seen {
            assert_eq!(s.kinematics.len(), 1, "{scheme}: one moving node");
        }
        let carried = |s: &Seen| s.kinematics[0].position[0];
        match scheme {
            // The network gets the period first: a step to 10 (n + 1) ms
            // carries the cart as evaluated at 10 n ms - 1 step (at the
            // start, its initial output).
            "time_stepping" => {
                assert_eq!(moving.seen.len(), 200);
                for (n, s) in moving.seen.iter().enumerate() {
                    let expected = if n == 0 {
                        0.0
                    } else {
                        moving.positions[10 * n - 1]
                    };
                    assert_eq!(carried(s), 5.0 + expected, "step {n}");
                }
            }
            // Lookahead windows of 1 s, both handed over at the start with
            // the cart at rest at 0, as the loop form does.
            "master_slave" => {
                let loops = run_loops_over(&sync, false);
                assert_eq!(moving.seen.len(), 2);
                assert_same(&loops.seen, &moving.seen, "the loop form's windows");
                assert_eq!(loops.syncs, moving.syncs);
                assert!(moving.seen.iter().all(|s| carried(s) == 5.0));
            }
            _ => {
                let recorded = |p: f64| p == 5.0 || moving.positions.iter().any(|x| 5.0 + x == p);
                assert!(moving.seen.iter().all(|s| recorded(carried(s))));
                assert!(moving.seen.iter().any(|s| carried(s) > 5.5));
            }
        }
    }
}
