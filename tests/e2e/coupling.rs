//! The coupled cases over the real ns-3 server: the Unix-domain transport
//! gives byte for byte what TCP gives, so does spinning before each wait
//! (`spin_wait`), and `[sync] position_tolerance` lets a
//! platoon sync less while the positions ns-3 used stay within the tolerance
//! of the plants' true trajectories.

use std::cell::RefCell;
use std::path::Path;
use std::process::Command;
use std::rc::Rc;

use bridge::config::Scenario;
use bridge::loop_graph;
use bridge::mobility::node_motions;
use bridge::network::Ns3Network;
use bridge::packets_csv::PacketsCsv;
use bridge::server_command::ns3_options;
use controlsim::error::ObserverError;
use controlsim::graph::ObserveGraph;
use controlsim::view::{LoopObserver, LoopView};
use controlsim::System;
use protocol::{NodeKinematics, SimTime, Step};

use crate::support::{assert_success, Tap, Tapped};

/// Two vehicles over 802.11p for 3 s: the leader speeds up from 20 to 24 m/s
/// between 1 s and 2 s, the follower keeps its gap from its radar and its
/// leader's acceleration sent as packets. `{sync}` is spliced into `[sync]`,
/// `{server}` into `[network.server]`.
fn platoon(sync: &str, server: &str) -> String {
    format!(
        r#"
duration = "3s"
step = "1ms"
seed = 1
[sync]
scheme = "master_slave"
period = "20ms"
{sync}
[network]
backend = "ns3"
[network.server]
{server}
[network.ns3]
kind = "wave"
mac = "ocb"
[network.radio]
tx_power = 20.0
propagation = "log_distance"
phy_mode = "OfdmRate6MbpsBW10MHz"

[[loops]]
name = "leader"
plant_node = 0
controller_node = 0
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
points = [["0s", 20.0], ["1s", 20.0], ["2s", 24.0]]

[[loops]]
name = "follower"
plant_node = 1
controller_node = 1
predecessor = "leader"
feedforward = {{ size = 100, max_delay = "100ms", drop_stale = true }}
[loops.plant]
kind = "vehicle"
x0 = [0.0, 20.0, 0.0]
outputs = ["v"]
[loops.sensor]
period = "20ms"
source = "radar"
[loops.actuator]
min = -5.0
max = 3.0
[loops.controller]
kind = "cacc"
time_gap = 0.7
standstill = 2.0
trigger = "time"
period = "20ms"
"#
    )
}

/// Runs `netloop run` on `text` into `dir/<name>`; returns the run directory.
fn run_netloop(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, text).unwrap();
    let out = dir.join(name);
    let output = Command::new(env!("CARGO_BIN_EXE_netloop"))
        .args(["-q", "run"])
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_success(&output, name);
    out
}

fn summary(run: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap()
}

/// What a run says that does not depend on how it was configured to talk
/// to its server: the summary without the scenario echo and its hash.
fn summary_without_config(run: &Path) -> serde_json::Value {
    let mut value = summary(run);
    let object = value.as_object_mut().unwrap();
    object.remove("scenario");
    object.remove("config_hash");
    value
}

fn read(run: &Path, file: &str) -> Vec<u8> {
    std::fs::read(run.join(file)).unwrap()
}

/// Runs `a` and `b` configured differently in how they talk to the server
/// give the same outputs: timeseries.csv and packets.csv byte for byte,
/// the summary but for its scenario echo and hash. `what` labels the
/// failure.
fn assert_same_outputs(a: &Path, b: &Path, what: &str) {
    for file in ["timeseries.csv", "packets.csv"] {
        assert!(read(a, file) == read(b, file), "{file} differs {what}");
    }
    assert_eq!(
        summary_without_config(a),
        summary_without_config(b),
        "{what}"
    );
}

#[test]
fn outputs_are_byte_identical_over_tcp_and_unix() {
    let dir = tempfile::tempdir().unwrap();
    // Syncing every period: the most exchanges, each over the transport.
    let exact = "lookahead = false";
    let tcp = run_netloop(dir.path(), "tcp", &platoon(exact, r#"transport = "tcp""#));
    let default = run_netloop(dir.path(), "default", &platoon(exact, ""));
    for transport in ["unix", "auto", "shm"] {
        let other = run_netloop(
            dir.path(),
            transport,
            &platoon(exact, &format!("transport = \"{transport}\"")),
        );
        assert_same_outputs(&tcp, &other, &format!("over {transport}"));
        assert_eq!(
            summary(&other)["scenario"]["network"]["server"]["transport"],
            transport
        );
    }
    // TCP is the default, and the default is not written out.
    assert_eq!(read(&tcp, "summary.json"), read(&default, "summary.json"));
    assert_eq!(summary(&tcp)["sync"]["syncs"], 150);
}

/// Spinning changes when each side looks for the other's answer, never what
/// is exchanged: every output is byte for byte what blocking gives.
#[test]
fn spinning_before_each_wait_gives_byte_identical_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let exact = "lookahead = false";
    for transport in ["tcp", "unix", "shm"] {
        let server = format!("transport = \"{transport}\"");
        let blocking = run_netloop(dir.path(), transport, &platoon(exact, &server));
        let spinning = run_netloop(
            dir.path(),
            &format!("{transport}_spin"),
            &platoon(exact, &format!("{server}\nspin_wait = \"50us\"")),
        );
        assert_same_outputs(
            &blocking,
            &spinning,
            &format!("when spinning over {transport}"),
        );
        assert_eq!(
            summary(&spinning)["scenario"]["network"]["server"]["spin_wait"],
            "50us"
        );
        // Not spinning is the default, and the default is not written out.
        assert!(summary(&blocking)["scenario"]["network"]["server"]
            .get("spin_wait")
            .is_none());
    }
}

#[test]
fn a_spin_longer_than_a_millisecond_is_refused_naming_the_key() {
    let text = platoon("", r#"spin_wait = "2ms""#);
    let e = Scenario::from_toml(&text).unwrap().resolve().unwrap_err();
    assert_eq!(e.key.to_string(), "network.server.spin_wait");
    assert!(e.message.contains("1ms"), "{}", e.message);
    let ok = platoon("", r#"spin_wait = "1ms""#);
    assert!(Scenario::from_toml(&ok).unwrap().resolve().is_ok());
}

#[test]
fn a_zero_tolerance_is_todays_exact_sync() {
    let dir = tempfile::tempdir().unwrap();
    let today = run_netloop(dir.path(), "today", &platoon("", ""));
    let zero = run_netloop(
        dir.path(),
        "zero",
        &platoon(r#"position_tolerance = "0m""#, ""),
    );
    for file in ["timeseries.csv", "packets.csv", "summary.json"] {
        assert!(read(&today, file) == read(&zero, file), "{file} differs");
    }
    // A moving node in a radio network: one sync per 20 ms period.
    assert_eq!(summary(&zero)["sync"]["syncs"], 150);
}

/// One step as the network was given it: from when, to when, and the
/// positions and velocities it moved the nodes with.
#[derive(Clone, Debug)]
struct StepSeen {
    from: SimTime,
    until: SimTime,
    kinematics: Vec<NodeKinematics>,
}

/// Writes down every step request the real ns-3 network is given.
struct Recorded {
    steps: Rc<RefCell<Vec<StepSeen>>>,
}

impl Tap for Recorded {
    fn begin_step(&mut self, reached: SimTime, step: &mut Step) {
        self.steps.borrow_mut().push(StepSeen {
            from: reached,
            until: step.until,
            kinematics: step.kinematics.clone(),
        });
    }
}

/// Runs the platoon through the bridge's session over the real server;
/// returns the steps the network saw, the plants' true positions at every
/// step boundary, and the sync count.
fn run_recorded(sync: &str) -> (Vec<StepSeen>, Vec<(SimTime, Vec<f64>)>, u64) {
    run_recorded_scenario(&platoon(sync, ""), |plants| {
        plants.iter().map(|p| p.position.unwrap()).collect()
    })
}

/// As [`run_recorded`] for any scenario; `truth` gives the nodes' true x
/// positions (by node index) from the plants at each step boundary.
fn run_recorded_scenario(
    text: &str,
    truth_of: impl Fn(&[PlantAt]) -> Vec<f64>,
) -> (Vec<StepSeen>, Vec<(SimTime, Vec<f64>)>, u64) {
    let dir = tempfile::tempdir().unwrap();
    let resolved = Scenario::from_toml(text).unwrap().resolve().unwrap();
    let system = System::from_config(&resolved.system, resolved.scenario.control_seed()).unwrap();
    let motions = node_motions(&resolved, &system).unwrap();
    let options = ns3_options(&resolved, dir.path(), dir.path(), None);
    let steps = Rc::new(RefCell::new(Vec::new()));
    let network = Tapped {
        inner: Ns3Network::start(&options, true).unwrap(),
        tap: Recorded {
            steps: Rc::clone(&steps),
        },
    };
    let (mut session, map) = loop_graph::session(
        &resolved,
        &system,
        motions,
        Box::new(network),
        PacketsCsv::new(Vec::new()),
        None,
    )
    .unwrap();
    let mut truth = Truth {
        of: truth_of,
        seen: Vec::new(),
    };
    session
        .run(&mut ObserveGraph::new(&map, &mut truth))
        .unwrap();
    let truth = truth.seen;
    let syncs = session.syncs();
    let (_, finished) = session.finish(true);
    finished.unwrap();
    let steps = steps.borrow().clone();
    (steps, truth, syncs)
}

/// What the truth of a boundary is made of, per loop: the plant's
/// position as its kinematics give it, and its first state.
#[derive(Clone, Copy)]
struct PlantAt {
    position: Option<f64>,
    first_state: f64,
}

/// The nodes' true positions at every boundary, as `of` reads them.
struct Truth<F> {
    of: F,
    seen: Vec<(SimTime, Vec<f64>)>,
}

impl<F: Fn(&[PlantAt]) -> Vec<f64>> LoopObserver for Truth<F> {
    fn observe_loops<V: LoopView + ?Sized>(&mut self, view: &V) -> Result<(), ObserverError> {
        let plants: Vec<PlantAt> = (0..view.loop_count())
            .map(|i| PlantAt {
                position: view.kinematics(i).map(|k| k.position),
                first_state: view.plant_state(i)[0],
            })
            .collect();
        self.seen.push((view.time(), (self.of)(&plants)));
        Ok(())
    }
}

/// The farthest any node was, at any step boundary, from the straight line
/// the network moved it on.
fn worst_drift(steps: &[StepSeen], truth: &[(SimTime, Vec<f64>)]) -> f64 {
    let mut worst: f64 = 0.0;
    for step in steps {
        for k in &step.kinematics {
            let node = k.node as usize;
            for (t, positions) in truth
                .iter()
                .filter(|(t, _)| *t >= step.from && *t <= step.until)
            {
                let elapsed = (t.0 - step.from.0) as f64 * 1e-9;
                let line = k.position[0] + k.velocity[0] * elapsed;
                assert_eq!(k.position[1..], [0.0, 0.0]);
                worst = worst.max((line - positions[node]).abs());
            }
        }
    }
    worst
}

#[test]
fn with_a_tolerance_the_positions_ns3_used_stay_within_it_and_it_syncs_less() {
    let tolerance = 0.01;
    let (exact_steps, exact_truth, exact_syncs) = run_recorded("");
    let (steps, truth, syncs) = run_recorded(r#"position_tolerance = "1cm""#);
    assert_eq!(exact_syncs, 150);
    assert_eq!(syncs, steps.len() as u64);
    // The truth is observed at every boundary of the run, once.
    assert_eq!(truth.len(), 3000);
    assert_eq!(truth[2999].0, SimTime::from_millis(2999));

    // Each sync hands the network the plants' positions at that instant...
    for step in &steps {
        let (_, at) = truth.iter().find(|(t, _)| *t == step.from).unwrap();
        for k in &step.kinematics {
            assert_eq!(k.position[0], at[k.node as usize], "{step:?}");
        }
        // ... and covers whole 20 ms periods.
        assert_eq!((step.until.0 - step.from.0) % 20_000_000, 0, "{step:?}");
    }
    let drift = worst_drift(&steps, &truth);
    assert!(drift <= tolerance, "drifted {drift} m");
    // Syncing every period keeps the drift far smaller, and it is not zero
    // (the leader accelerates): the tolerance is what admits the rest.
    let exact_drift = worst_drift(&exact_steps, &exact_truth);
    assert!(
        exact_drift > 0.0 && exact_drift < drift,
        "{exact_drift} {drift}"
    );
    assert!(
        syncs * 2 < exact_syncs,
        "{syncs} syncs with a tolerance, {exact_syncs} without"
    );
    // Cruising (the first second) the windows are longest; accelerating,
    // shorter: 1 cm allows 4 periods at a = 0 (8 m/s² of input range
    // through a 0.1 s engine lag: 8 t³ / 0.6 <= 0.01 for t <= 0.0909 s).
    assert_eq!(steps[0].until, SimTime::from_millis(80));
}

/// A cart (mass-spring-damper, force limited to ±2 N) whose position moves
/// node 0 along x from 5 m, controlled over 802.11p from the static node 1:
/// a plant that is not a vehicle, moved through `mobility.position`.
fn cart(sync: &str, velocity: &str) -> String {
    format!(
        r#"
duration = "3s"
step = "1ms"
seed = 1
[sync]
scheme = "master_slave"
period = "10ms"
{sync}
[network]
backend = "ns3"
[network.ns3]
kind = "wave"
mac = "ocb"
[network.radio]
tx_power = 20.0
propagation = "log_distance"
phy_mode = "OfdmRate6MbpsBW10MHz"

[[loops]]
name = "cart"
plant_node = 0
controller_node = 1
mobility = {{ position = "x", {velocity} origin = [5.0, 0.0, 0.0] }}
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
trigger = "time"
period = "10ms"
[loops.reference]
kind = "step"
at = "0.5s"
final = 1.0
"#
    )
}

/// The cart's true node position, `5 + x`, at node 0.
fn cart_truth(plants: &[PlantAt]) -> Vec<f64> {
    vec![5.0 + plants[0].first_state]
}

#[test]
fn a_cart_moved_through_its_states_stays_within_the_tolerance_and_syncs_less() {
    let tolerance: f64 = 0.01;
    for velocity in [r#"velocity = "v","#, ""] {
        let (exact_steps, exact_truth, exact_syncs) =
            run_recorded_scenario(&cart("", velocity), cart_truth);
        let (steps, truth, syncs) =
            run_recorded_scenario(&cart(r#"position_tolerance = "1cm""#, velocity), cart_truth);
        assert_eq!(exact_syncs, 300, "{velocity}");
        assert_eq!(syncs, steps.len() as u64);
        for step in &steps {
            let (_, at) = truth.iter().find(|(t, _)| *t == step.from).unwrap();
            for k in &step.kinematics {
                assert_eq!(k.position[0], at[k.node as usize], "{step:?}");
            }
            assert_eq!((step.until.0 - step.from.0) % 10_000_000, 0, "{step:?}");
        }
        // The cart moves (0 to ~0.9 m), so syncing every period it drifts
        // too. The error admitted: the tolerance, or one period's drift
        // where that is larger (a node resting between syncs while the cart
        // runs at ~1 m/s: a window is never shorter than a period).
        let exact_drift = worst_drift(&exact_steps, &exact_truth);
        assert!(exact_drift > 0.0, "{velocity}");
        let drift = worst_drift(&steps, &truth);
        let admitted = if velocity.is_empty() {
            tolerance.max(1.05 * exact_drift)
        } else {
            tolerance
        };
        assert!(
            drift <= admitted,
            "{velocity}: drifted {drift} m ({exact_drift} m syncing every period)"
        );
        // Extrapolated with its velocity the cart needs under half the syncs
        // (156 of 300 when it rests between syncs, which is bounded by its
        // speed).
        let fewer = if velocity.is_empty() {
            syncs
        } else {
            syncs * 2
        };
        assert!(
            fewer < exact_syncs,
            "{velocity}: {syncs} syncs with a tolerance, {exact_syncs} without"
        );
    }
}

/// `netloop check` refuses a tolerance that nothing bounds: exit 2, the
/// key named, before any server starts.
#[test]
fn check_refuses_a_tolerance_for_an_unbounded_moving_plant() {
    let dir = tempfile::tempdir().unwrap();
    let text = cart(r#"position_tolerance = "1cm""#, r#"velocity = "v","#)
        .replace("min = -2.0\nmax = 2.0\n", "");
    assert!(!text.contains("min = -2.0"));
    let file = dir.path().join("unbounded.toml");
    std::fs::write(&file, &text).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_netloop"))
        .arg("check")
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("sync.position_tolerance") && stderr.contains("loops[0]"),
        "{stderr}"
    );
    // Declaring a bound is accepted.
    let declared = text.replace("origin = [5.0", "max_acceleration = 2.0, origin = [5.0");
    std::fs::write(&file, &declared).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_netloop"))
        .arg("check")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_tolerance_is_a_length_of_master_slave_sync() {
    let resolve = |sync: &str| Scenario::from_toml(&platoon(sync, "")).map(|s| s.resolve());
    let ok = resolve(r#"position_tolerance = "10mm""#).unwrap().unwrap();
    assert_eq!(ok.scenario.sync.position_tolerance.0, 0.01);
    let e = resolve(r#"position_tolerance = "1km""#).unwrap_err();
    assert!(
        e.to_string().contains("position_tolerance") && e.to_string().contains("not a unit"),
        "{e}"
    );
    let e = resolve(r#"position_tolerance = "-1cm""#).unwrap_err();
    assert!(e.to_string().contains("not negative"), "{e}");
    let text = platoon(r#"position_tolerance = "1cm""#, "")
        .replace("scheme = \"master_slave\"", "scheme = \"time_stepping\"");
    let e = Scenario::from_toml(&text).unwrap().resolve().unwrap_err();
    assert_eq!(e.key.to_string(), "sync.position_tolerance");
    assert!(e.message.contains("master_slave"), "{}", e.message);
}
