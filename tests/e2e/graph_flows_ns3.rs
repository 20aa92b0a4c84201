//! Graph scenarios with flows over the real ns-3 server (issue 11 item 3):
//! the servo loop written as a graph gives the `[[loops]]` form's numbers
//! over an ns-3 point-to-point link under every sync scheme, and the three
//! graph examples over ns-3 do what their comments say: the central
//! controller stabilises both servos over Wi-Fi, the cascade holds its
//! outer loop over a link, and the two sensors' samples take two paths.

use std::path::{Path, PathBuf};

use crate::support::{
    packet_rows, packets, root, run_scenario as netloop, series, server_set, summary,
};

/// Runs the `[[loops]]` file and the graph file of tests/cli/graph_flows
/// with the `sync` settings over the same ns-3 point-to-point link (1 Mbit/s,
/// 2 ms, 100 packets of queue). Returns the folder holding both runs and
/// their run directories (loops, graph).
pub(crate) fn run_over_p2p(
    loops_file: &str,
    graph_file: &str,
    sync: &[String],
) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = root().join("tests/cli/graph_flows");
    let mut sets = sync.to_vec();
    sets.extend([
        "network.backend=\"ns3\"".to_string(),
        "network.ns3={ kind = \"p2p\", data_rate = \"1Mbps\", delay = \"2ms\", queue_size = 100 }"
            .to_string(),
        server_set(),
    ]);
    let out = tempfile::tempdir().unwrap();
    let (l, g) = (out.path().join("loops"), out.path().join("graph"));
    netloop(&dir.join(loops_file), &l, &sets);
    netloop(&dir.join(graph_file), &g, &sets);
    (out, l, g)
}

/// Checks that the graph run in `graph` equals the `[[loops]]` run in
/// `loops` to the bit: each `(loops column, graph column)` pair of the time
/// series, and the servo loop's uplink and downlink rows of packets.csv.
/// Returns the number of (uplink, downlink) rows, for the caller to check
/// that traffic flowed. `what` labels the failure.
pub(crate) fn assert_graph_equals_loops(
    loops: &Path,
    graph: &Path,
    columns: &[(&str, &str)],
    what: &str,
) -> (usize, usize) {
    for (a, b) in columns {
        assert_eq!(series(loops, a), series(graph, b), "{what}: {a}");
    }
    let up = packets(loops, "servo:uplink");
    assert_eq!(up, packets(graph, "uplink"), "{what}: uplink rows");
    let down = packets(loops, "servo:downlink");
    assert_eq!(down, packets(graph, "downlink"), "{what}: downlink rows");
    (up.len(), down.len())
}

#[test]
fn a_graph_flow_over_ns3_equals_the_same_loop_over_ns3() {
    for scheme in ["master_slave", "time_stepping", "event_driven"] {
        let sync = [format!("sync.scheme=\"{scheme}\"")];
        let (_out, l, g) = run_over_p2p("servo_loops.toml", "servo_graph.toml", &sync);
        let s = summary(&g);
        assert_eq!(s["complete"], true, "{scheme}");
        assert_eq!(s["network"]["backend"], "ns3", "{scheme}");
        assert!(
            s["versions"]["network"].as_str().unwrap().contains("ns-3"),
            "{scheme}: {}",
            s["versions"]["network"]
        );
        let columns = [
            ("servo.x.theta", "servo.x.theta"),
            ("servo.x.omega", "servo.x.omega"),
            ("servo.u.voltage", "motor.u"),
        ];
        let (up, _) = assert_graph_equals_loops(&l, &g, &columns, scheme);
        assert!(up >= 99, "{scheme}: {up} uplink rows");
    }
}

/// The servo loop with an event-triggered PID as a graph answers each
/// measurement at its arrival over an ns-3 point-to-point link, as the
/// `[[loops]]` form does: the same bits under every scheme, with a
/// computation delay.
/// The `sync` settings an answering controller's graph is checked against
/// its `[[loops]]` form under over ns-3: every scheme, master-slave and
/// event-driven also with a computation delay; labelled for the failure
/// messages.
pub(crate) fn schemes_with_delays() -> Vec<(String, Vec<String>)> {
    [
        ("master_slave", "0s"),
        ("master_slave", "3ms"),
        ("time_stepping", "0s"),
        ("event_driven", "0s"),
        ("event_driven", "1500us"),
    ]
    .map(|(scheme, delay)| {
        (
            format!("{scheme} {delay}"),
            vec![
                format!("sync.scheme=\"{scheme}\""),
                format!("sync.computation_delay=\"{delay}\""),
            ],
        )
    })
    .to_vec()
}

#[test]
fn an_event_triggered_graph_over_ns3_equals_the_same_loop_over_ns3() {
    for (what, sync) in schemes_with_delays() {
        let (_out, l, g) = run_over_p2p("servo_event_loops.toml", "servo_event_graph.toml", &sync);
        assert_eq!(summary(&g)["complete"], true, "{what}");
        let columns = [
            ("servo.x.theta", "servo.x.theta"),
            ("servo.u.voltage", "motor.u"),
        ];
        let (_, down) = assert_graph_equals_loops(&l, &g, &columns, &what);
        assert!(down >= 95, "{what}: {down} answers");
    }
}

/// Runs `examples/NAME` over ns-3 and checks that it completes with the
/// flows `flows`, in order. Returns its folder and its summary.
fn run_example(name: &str, flows: &[&str]) -> (tempfile::TempDir, serde_json::Value) {
    let out = tempfile::tempdir().unwrap();
    netloop(
        &root().join("examples").join(name),
        out.path(),
        &[server_set()],
    );
    let s = summary(out.path());
    assert_eq!(s["complete"], true);
    let names: Vec<&str> = s["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["loop"].as_str().unwrap())
        .collect();
    assert_eq!(names, flows);
    (out, s)
}

#[test]
fn the_central_controller_stabilises_two_servos_over_wifi() {
    let (out, s) = run_example(
        "central_servos_wifi_graph.toml",
        &["up_a", "up_b", "down_a", "down_b"],
    );
    for f in s["flows"].as_array().unwrap() {
        assert!(f["sent"].as_u64().unwrap() >= 299, "{f}");
        assert!(f["delivery_ratio"].as_f64().unwrap() > 0.9, "{f}");
        // Over Wi-Fi a packet takes time: never zero, well under a period.
        let mean = f["delay"]["mean_s"].as_f64().unwrap();
        assert!(mean > 0.0 && mean < 0.01, "{f}");
    }
    for (servo, target) in [("servo_a", 1.0), ("servo_b", -0.5)] {
        let theta: f64 = series(out.path(), &format!("{servo}.x.theta"))
            .last()
            .unwrap()
            .parse()
            .unwrap();
        assert!((theta - target).abs() < 0.01, "{servo}: theta {theta}");
    }
}

/// The cascade with its outer loop over an ns-3 point-to-point link
/// (examples/cascade_servo_network_graph.toml): the figures its comment
/// states, and the same settling as the cascade on one node.
#[test]
fn the_cascade_example_holds_its_outer_loop_over_ns3() {
    let out = tempfile::tempdir().unwrap();
    let (net, local) = (out.path().join("net"), out.path().join("local"));
    netloop(
        &root().join("examples/cascade_servo_network_graph.toml"),
        &net,
        &[server_set()],
    );
    netloop(
        &root().join("examples/cascade_servo_graph.toml"),
        &local,
        &[],
    );
    let s = summary(&net);
    assert_eq!(s["complete"], true);
    assert_eq!(s["sync"]["syncs"], 4);
    let flows = s["flows"].as_array().unwrap();
    let names: Vec<&str> = flows.iter().map(|f| f["loop"].as_str().unwrap()).collect();
    assert_eq!(names, ["angle_up", "speed_ref_down"]);
    for f in flows {
        assert_eq!(f["sent"], 400, "{f}");
        assert_eq!(f["accepted"], 400, "{f}");
        // 2 ms propagation + 94 bytes on the wire at 1 Mbit/s.
        assert_eq!(f["delay"]["mean_s"].as_f64().unwrap(), 0.002752, "{f}");
    }
    let theta = |dir: &Path| -> Vec<f64> {
        series(dir, "servo.x.theta")
            .iter()
            .map(|v| v.parse().unwrap())
            .collect()
    };
    let (net_theta, local_theta) = (theta(&net), theta(&local));
    assert_eq!(net_theta.len(), 4001);
    assert!(net_theta[2000] > 0.99, "theta at 2 s: {}", net_theta[2000]);
    let peak = net_theta.iter().cloned().fold(f64::MIN, f64::max);
    assert!((peak - 1.016).abs() < 5e-4, "peak {peak}");
    let (last, local_last) = (net_theta[4000], local_theta[4000]);
    assert!((last - 1.015).abs() < 5e-4, "theta at 4 s: {last}");
    assert!(
        (last - local_last).abs() < 1e-3,
        "{last} vs one node {local_last}"
    );
}

/// examples/two_sensor_paths_graph.toml over Wi-Fi: the angle samples go
/// straight from the servo's node to the controller's, the speed samples
/// from the camera's node (3) by the relay's node, which sends each one it
/// accepts on at the first sync point after its arrival (master-slave,
/// 10 ms); the servo settles.
#[test]
fn the_two_sensor_example_sends_its_samples_by_two_paths() {
    let (out, _) = run_example(
        "two_sensor_paths_graph.toml",
        &["angle", "speed_hop1", "speed_hop2", "control"],
    );
    let rows = packet_rows(out.path());
    let of = |flow: &str| -> Vec<_> { rows.iter().filter(|r| r["loop"] == flow).collect() };
    for (flow, src, dst) in [
        ("angle", "0", "1"),
        ("speed_hop1", "3", "2"),
        ("speed_hop2", "2", "1"),
        ("control", "1", "0"),
    ] {
        let sent = of(flow);
        assert!(sent.len() >= 299, "{flow}: {} packets", sent.len());
        for r in sent {
            assert_eq!(
                (r["src"].as_str(), r["dst"].as_str()),
                (src, dst),
                "{flow}: {r:?}"
            );
        }
    }
    // The relay forwards every accepted speed sample, in the order they
    // arrive, at the first sync point at or after its arrival.
    let ns =
        |r: &std::collections::BTreeMap<String, String>, c: &str| -> u64 { r[c].parse().unwrap() };
    let mut accepted: Vec<_> = of("speed_hop1")
        .into_iter()
        .filter(|r| r["fate"] == "accepted")
        .collect();
    accepted.sort_by_key(|r| ns(r, "arrival_ns"));
    let mut forwarded = of("speed_hop2");
    forwarded.sort_by_key(|r| ns(r, "number"));
    assert_eq!(forwarded.len(), accepted.len());
    const SYNC: u64 = 10_000_000;
    for (a, f) in accepted.iter().zip(&forwarded) {
        assert_eq!(
            ns(f, "sent_ns"),
            ns(a, "arrival_ns").div_ceil(SYNC) * SYNC,
            "{a:?} -> {f:?}"
        );
    }
    let theta: f64 = series(out.path(), "servo.x.theta")
        .last()
        .unwrap()
        .parse()
        .unwrap();
    assert!((theta - 1.0).abs() < 0.01, "theta {theta}");
}

/// A graph flow that answers each accepted packet of another (`trigger =
/// "arrival"` from the component that answers it) goes to ns-3 as an
/// answer rule under event-driven sync: the same bytes as stopping at every
/// answer, over a lossy link, in one sync instead of one per answer.
#[test]
fn arrival_answers_over_ns3_are_rules_that_change_nothing_but_the_syncs() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("tests/cli/graph_flows/servo_event_graph.toml"))
        .unwrap()
        .replace(
            "name = \"downlink\"\n",
            "name = \"downlink\"\ntrigger = \"arrival\"\non_arrival_of = \"uplink\"\n",
        );
    assert!(text.contains("on_arrival_of"));
    let path = dir.path().join("answers.toml");
    std::fs::write(&path, text).unwrap();
    let run = |rules: &str| {
        let out = dir.path().join(format!("rules_{rules}"));
        let sets = [
            "network.backend=\"ns3\"",
            "network.ns3={ kind = \"p2p\", data_rate = \"1Mbps\", delay = \"2ms\", queue_size = 100, loss_rate = 0.1 }",
            "sync.scheme=\"event_driven\"",
            "sync.computation_delay=\"300us\"",
            &format!("sync.rules={rules}"),
        ];
        let sets: Vec<String> = sets
            .iter()
            .map(|s| s.to_string())
            .chain([server_set()])
            .collect();
        netloop(&path, &out, &sets);
        out
    };
    let (ahead, every) = (run("true"), run("false"));
    for file in ["timeseries.csv", "packets.csv"] {
        let read = |d: &Path| std::fs::read(d.join(file)).unwrap();
        assert!(read(&ahead) == read(&every), "{file} differs with rules");
    }
    let syncs = |d: &Path| summary(d)["sync"]["syncs"].as_u64().unwrap();
    assert_eq!(syncs(&ahead), 1, "one network step for the 1 s run");
    assert!(
        syncs(&every) > 500,
        "{} syncs at every answer",
        syncs(&every)
    );
    let rows = packet_rows(&ahead);
    assert!(
        rows.iter().any(|r| r["fate"].starts_with("lost_")),
        "losses"
    );
    assert!(
        rows.iter().filter(|r| r["loop"] == "downlink").count() > 50,
        "answers"
    );
}
