//! Graph scenarios with flows between nodes (issue 11 item 3) over the
//! builtin network: a flow is the same packet stream as a loop's uplink or
//! downlink, so a graph that is a loop gives the loop's numbers bit for bit,
//! and a block-diagonal central controller gives two independent loops.

use std::path::{Path, PathBuf};

use crate::support::{
    assert_check_and_run_refuse, assert_exit, packets, root, run, series, stdout, summary,
};

pub(crate) fn file(name: &str) -> PathBuf {
    root().join("tests/cli/graph_flows").join(name)
}

/// Runs `scenario` with `--set` overrides into `out`.
pub(crate) fn run_into(scenario: &Path, out: &Path, sets: &[&str]) {
    let mut args = vec![
        "run".to_string(),
        scenario.to_str().unwrap().to_string(),
        "--out".to_string(),
        out.to_str().unwrap().to_string(),
        "-q".to_string(),
    ];
    for s in sets {
        args.push("--set".into());
        args.push(s.to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&args);
    assert_exit(&o, 0);
}

/// A random, lossy builtin channel (uniform 1–15 ms delay, 20 % loss).
pub(crate) const LOSSY_CHANNEL: [&str; 2] = [
    "network.builtin.delay={ kind = \"uniform\", min = \"1ms\", max = \"15ms\" }",
    "network.builtin.loss={ kind = \"bernoulli\", p = 0.2 }",
];

/// The sync setups a graph is checked against its `[[loops]]` form under:
/// each scheme, computation delays, and master-slave and event-driven over
/// [`LOSSY_CHANNEL`]; named for the failure messages.
pub(crate) fn scheme_cases() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("master_slave", vec![]),
        ("master_slave_delay", vec!["sync.computation_delay=\"3ms\""]),
        ("event_driven", vec!["sync.scheme=\"event_driven\""]),
        (
            "event_driven_delay",
            vec![
                "sync.scheme=\"event_driven\"",
                "sync.computation_delay=\"1500us\"",
            ],
        ),
        ("time_stepping", vec!["sync.scheme=\"time_stepping\""]),
        ("lossy_master_slave", LOSSY_CHANNEL.to_vec()),
        (
            "lossy_event_driven",
            [&LOSSY_CHANNEL[..], &["sync.scheme=\"event_driven\""]].concat(),
        ),
    ]
}

/// The servo's states and control as the `[[loops]]` form and the graph
/// form name them.
pub(crate) const SERVO_COLUMNS: [(&str, &str); 3] = [
    ("servo.x.theta", "servo.x.theta"),
    ("servo.x.omega", "servo.x.omega"),
    ("servo.u.voltage", "motor.u"),
];

/// A `[[loops]]` run and its graph form, run into one temporary folder.
pub(crate) struct LoopsAndGraph {
    /// Holds both run directories until the caller is done with them.
    _dir: tempfile::TempDir,
    pub loops: PathBuf,
    pub graph: PathBuf,
    /// The servo loop's uplink and downlink rows (equal in both runs).
    pub up: Vec<Vec<String>>,
    pub down: Vec<Vec<String>>,
}

/// Runs `loops_file` with `loop_sets` and `graph_file` with `graph_sets`
/// (files of tests/cli/graph_flows) and checks that the graph run equals
/// the `[[loops]]` run bit for bit: each `(loops column, graph column)`
/// pair of the time series, and the servo loop's uplink and downlink rows
/// of packets.csv. `what` labels a failure.
pub(crate) fn assert_graph_equals_loops(
    (loops_file, loop_sets): (&str, &[&str]),
    (graph_file, graph_sets): (&str, &[&str]),
    columns: &[(&str, &str)],
    what: &str,
) -> LoopsAndGraph {
    let dir = tempfile::tempdir().unwrap();
    let (loops, graph) = (dir.path().join("loops"), dir.path().join("graph"));
    run_into(&file(loops_file), &loops, loop_sets);
    run_into(&file(graph_file), &graph, graph_sets);
    for (a, b) in columns {
        assert_eq!(series(&loops, a), series(&graph, b), "{what}: {a} vs {b}");
    }
    let (up, down) = (
        packets(&loops, "servo:uplink"),
        packets(&loops, "servo:downlink"),
    );
    assert_eq!(up, packets(&graph, "uplink"), "{what}: uplink rows");
    assert_eq!(down, packets(&graph, "downlink"), "{what}: downlink rows");
    LoopsAndGraph {
        _dir: dir,
        loops,
        graph,
        up,
        down,
    }
}

/// The servo loop written as a graph (sensor and actuator on node 0, PID on
/// node 1) equals the `[[loops]]` form under every sync scheme, with a
/// fixed delay and with random delays, losses and receive policies: every
/// plant value and control value, and every packets.csv row.
#[test]
fn a_graph_flow_equals_the_same_loop_written_as_loops() {
    let cases: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
        ("master_slave", vec![], vec![]),
        (
            "time_stepping",
            vec!["sync.scheme=\"time_stepping\""],
            vec!["sync.scheme=\"time_stepping\""],
        ),
        (
            "event_driven",
            vec!["sync.scheme=\"event_driven\""],
            vec!["sync.scheme=\"event_driven\""],
        ),
        (
            "lossy",
            [
                &LOSSY_CHANNEL[..],
                &[
                    "loops[0].uplink.drop_stale=true",
                    "loops[0].uplink.max_delay=\"12ms\"",
                    "loops[0].downlink.on_loss=\"zero\"",
                    "loops[0].downlink.multi_packet=true",
                ],
            ]
            .concat(),
            [
                &LOSSY_CHANNEL[..],
                &[
                    "connections[1].drop_stale=true",
                    "connections[1].max_delay=\"12ms\"",
                    "connections[2].on_loss=\"zero\"",
                    "connections[2].multi_packet=true",
                ],
            ]
            .concat(),
        ),
    ];
    for (name, loop_sets, graph_sets) in cases {
        let columns = [
            &[("servo.y.theta", "servo.y.theta")][..],
            &SERVO_COLUMNS[..],
        ]
        .concat();
        let run = assert_graph_equals_loops(
            ("servo_loops.toml", &loop_sets),
            ("servo_graph.toml", &graph_sets),
            &columns,
            name,
        );
        let (up, down) = (&run.up, &run.down);
        assert!(up.len() >= 99, "{name}: {} uplink packets", up.len());
        if name == "lossy" {
            let fates: Vec<&str> = up.iter().chain(down).map(|r| r[9].as_str()).collect();
            for fate in ["lost_phy", "dropped_max_delay", "accepted"] {
                assert!(fates.contains(&fate), "lossy: no {fate}");
            }
        }
        let s = summary(&run.graph);
        assert_eq!(s["complete"], true, "{name}");
        assert_eq!(s["flows"][0]["loop"], "uplink");
        assert_eq!(s["flows"][1]["direction"], "flow");
        let ls = summary(&run.loops);
        assert_eq!(s["totals"], ls["totals"], "{name}: totals");
    }
}

/// One controller on node 1 for two servos, K block-diagonal: each servo's
/// states, control and packets equal those of its loop run alone, bit for bit.
#[test]
fn a_block_diagonal_central_controller_equals_two_independent_loops() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("central"),
    );
    run_into(&file("two_loops_a.toml"), &a, &[]);
    run_into(&file("two_loops_b.toml"), &b, &[]);
    run_into(&file("central_graph.toml"), &c, &[]);
    for (alone, name) in [(&a, "a"), (&b, "b")] {
        for (x, y) in [
            ("y.theta", "y.theta"),
            ("y.omega", "y.omega"),
            ("x.theta", "x.theta"),
            ("x.omega", "x.omega"),
        ] {
            assert_eq!(
                series(alone, &format!("{name}.{x}")),
                series(&c, &format!("servo_{name}.{y}")),
                "{name}.{x}"
            );
        }
        assert_eq!(
            series(alone, &format!("{name}.u.voltage")),
            series(&c, &format!("motor_{name}.u")),
            "{name}: control"
        );
        assert_eq!(
            packets(alone, &format!("{name}:uplink")),
            packets(&c, &format!("up_{name}")),
            "{name}: uplink rows"
        );
        assert_eq!(
            packets(alone, &format!("{name}:downlink")),
            packets(&c, &format!("down_{name}")),
            "{name}: downlink rows"
        );
    }
    // The two servos really are controlled: both move towards zero.
    for name in ["a", "b"] {
        let theta: Vec<f64> = series(&c, &format!("servo_{name}.x.theta"))
            .iter()
            .map(|v| v.parse().unwrap())
            .collect();
        let (first, last) = (theta[0], *theta.last().unwrap());
        assert!(
            last.abs() < 0.8 * first.abs(),
            "{name}: theta {first} -> {last}"
        );
    }
}

/// `check --graph` draws a flow as a network edge, named, with its trigger
/// and port, between the node clusters; an edge from a plant carries the
/// units its kind declares.
#[test]
fn check_draws_flows_as_network_edges() {
    let o = run(&[
        "check",
        file("servo_graph.toml").to_str().unwrap(),
        "--graph",
    ]);
    assert_exit(&o, 0);
    let dot = stdout(&o);
    assert!(
        dot.contains("\"sensor\" -> \"pid\" [label=\"uplink: y -> measurement\\non update, port 9000\", style=bold, color=blue, fontcolor=blue];"),
        "{dot}"
    );
    assert!(dot.contains("label=\"node 1\";"), "{dot}");
    assert!(
        dot.contains("\"servo\" -> \"sensor\" [label=\"y (rad) -> y\"];"),
        "{dot}"
    );
}

/// A sensor measures where it is: put on a node of its own (a roadside
/// camera with its own radio), it reads the servo as it did beside it, and
/// only its samples travel. Under every sync scheme, with losses too, the
/// time series is the same bits and every packet the same row but for the
/// uplink's source node.
#[test]
fn a_sensor_on_another_node_measures_the_plant_and_sends_from_its_node() {
    let dir = tempfile::tempdir().unwrap();
    for (what, sets) in scheme_cases() {
        let (beside, apart) = (
            dir.path().join(what),
            dir.path().join(format!("{what}_apart")),
        );
        run_into(&file("servo_graph.toml"), &beside, &sets);
        let moved = [&sets[..], &["components[1].node=2"]].concat();
        run_into(&file("servo_graph.toml"), &apart, &moved);
        assert_eq!(
            std::fs::read(beside.join("timeseries.csv")).unwrap(),
            std::fs::read(apart.join("timeseries.csv")).unwrap(),
            "{what}"
        );
        assert_eq!(
            packets(&beside, "downlink"),
            packets(&apart, "downlink"),
            "{what}"
        );
        // Columns from `number` on: src is the fourth.
        let from_node_2 = |mut r: Vec<String>| {
            assert_eq!(r[3], "0", "{what}: {r:?}");
            r[3] = "2".into();
            r
        };
        let up: Vec<_> = packets(&beside, "uplink")
            .into_iter()
            .map(from_node_2)
            .collect();
        assert!(up.len() >= 99, "{what}: {} uplink packets", up.len());
        assert_eq!(up, packets(&apart, "uplink"), "{what}");
        assert_eq!(
            summary(&apart)["flows"].as_array().unwrap().len(),
            2,
            "{what}"
        );
    }
}

/// A sensor's input is its measurement, never a flow: flow keys on it are
/// refused, naming the key, wherever the sensor is; and a controller's
/// output on another node is refused as a measurement.
#[test]
fn flow_keys_on_a_sensors_measurement_are_refused() {
    let base = std::fs::read_to_string(file("servo_graph.toml")).unwrap();
    let text = base
        .replacen(
            "name = \"sensor\"\nnode = 0",
            "name = \"sensor\"\nnode = 2",
            1,
        )
        .replacen("to = \"sensor.y\"\n", "to = \"sensor.y\"\nsize = 32\n", 1);
    assert!(text.contains("node = 2") && text.contains("size = 32"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.toml");
    std::fs::write(&path, &text).unwrap();
    for err in assert_check_and_run_refuse(&path, &dir.path().join("out"), "connections[0].size") {
        assert!(err.contains("is a sensor"), "{err}");
    }
    // A controller's output on another node is data, not a measurement.
    let text = base.replacen(
        "from = \"servo.y\"\nto = \"sensor.y\"\n",
        "from = \"pid.u\"\nto = \"sensor.y\"\n",
        1,
    );
    assert!(text.contains("from = \"pid.u\""));
    std::fs::write(&path, &text).unwrap();
    for err in assert_check_and_run_refuse(&path, &dir.path().join("out"), "connections[0].from") {
        assert!(err.contains("send it as a flow"), "{err}");
    }
}

/// `text` (a graph scenario with a network) with every component on one
/// node and no network: its flows become plain connections (their keys
/// dropped; with zero delay no receive policy drops a packet).
fn on_one_node(text: &str) -> String {
    let start = text.find("[sync]").expect("a [sync] table");
    let end = text.find("[[components]]").expect("components");
    let flow_key = |l: &str| {
        [
            "name",
            "trigger",
            "period",
            "offset",
            "on_arrival_of",
            "port",
            "size",
            "multi_packet",
            "transport",
            "max_delay",
            "drop_stale",
            "on_loss",
        ]
        .iter()
        .any(|k| l.starts_with(&format!("{k} = ")))
    };
    let mut local = String::new();
    let mut component = false;
    for line in text[..start].lines().chain(text[end..].lines()) {
        if line.starts_with("[[") {
            component = line == "[[components]]";
        }
        if line.starts_with("node = ") {
            local.push_str("node = \"local\"\n");
        } else if component || !flow_key(line) {
            local.push_str(line);
            local.push('\n');
        }
    }
    local
}

/// Zero delay equals no network, for a graph as for loops: over a builtin
/// channel that delivers at the send instant, every packet acts at the
/// boundary it was sent at (the boundary is evaluated in parts around
/// those deliveries), so the run is the same graph on one node, bit for
/// bit, in every value the two share, up to the end (which a networked run
/// evaluates without serving). The servo (sensor, then the PID,
/// then the motor: three parts) under master-slave and event-driven sync;
/// examples/two_sensor_paths_graph.toml (speed samples forwarded by a relay
/// that answers each: four parts) under event-driven sync.
#[test]
fn zero_delay_flows_act_where_they_were_sent_as_on_one_node() {
    let dir = tempfile::tempdir().unwrap();
    let zero = "network.builtin={ delay = { kind = \"constant\", value = \"0s\" } }";
    let cases = [
        (file("servo_graph.toml"), "master_slave"),
        (file("servo_graph.toml"), "event_driven"),
        (
            root().join("examples/two_sensor_paths_graph.toml"),
            "event_driven",
        ),
    ];
    for (n, (path, scheme)) in cases.iter().enumerate() {
        let what = format!("{} {scheme}", path.display());
        let text = std::fs::read_to_string(path).unwrap();
        let local_file = dir.path().join(format!("local{n}.toml"));
        std::fs::write(&local_file, on_one_node(&text)).unwrap();
        let (networked, local) = (
            dir.path().join(format!("net{n}")),
            dir.path().join(format!("local{n}")),
        );
        run_into(
            path,
            &networked,
            &[
                "network.backend=\"builtin\"",
                zero,
                &format!("sync.scheme=\"{scheme}\""),
            ],
        );
        run_into(&local_file, &local, &[]);
        let (header, _) = test_support::tables::read_csv(&local.join("timeseries.csv"));
        assert!(header.len() >= 6, "{what}: {header:?}");
        // Every row but the last: the end is evaluated, not served (no
        // packet is delivered there), in every networked run.
        for column in &header {
            let (a, b) = (series(&local, column), series(&networked, column));
            assert_eq!(a.len(), b.len(), "{what}: {column}");
            let rows = a.len() - 1;
            let first = (0..rows).find(|&i| a[i] != b[i]);
            assert_eq!(
                first, None,
                "{what}: {column} differs from row {first:?} on"
            );
        }
        // The packets did travel, each acting at its own boundary.
        let rows = test_support::tables::packet_rows(&networked);
        assert!(rows.len() >= 200, "{what}: {} packets", rows.len());
        for r in rows {
            let sent: u64 = r["sent_ns"].parse().unwrap();
            assert_eq!(r["delay_ns"], "0", "{what}: {r:?}");
            assert_eq!(
                r["applied_step"],
                (sent / 1_000_000).to_string(),
                "{what}: {r:?}"
            );
        }
    }
}

/// A `periodic` flow sends at `offset + n period` whatever its source did:
/// the servo's uplink every 20 ms from 5 ms, while the sensor samples every
/// 10 ms from 0. Packet `n` leaves at 5 + 20 n ms carrying the sample held
/// then, and the receiving end holds it from the boundary it acts at.
#[test]
fn a_periodic_flow_sends_on_its_own_schedule_what_its_source_holds() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let text = std::fs::read_to_string(file("servo_graph.toml"))
        .unwrap()
        .replacen(
            "name = \"uplink\"\n",
            "name = \"uplink\"\ntrigger = \"periodic\"\nperiod = \"20ms\"\noffset = \"5ms\"\n",
            1,
        );
    let path = dir.path().join("periodic.toml");
    std::fs::write(&path, text).unwrap();
    run_into(&path, &out, &[]);
    let rows: Vec<_> = test_support::tables::packet_rows(&out)
        .into_iter()
        .filter(|r| r["loop"] == "uplink")
        .collect();
    assert_eq!(rows.len(), 50, "1 s of 20 ms");
    let sensor = series(&out, "sensor.y.theta");
    let received = series(&out, "uplink.y");
    const MS: u64 = 1_000_000;
    for (n, r) in rows.iter().enumerate() {
        let num = |c: &str| -> u64 { r[c].parse().unwrap() };
        assert_eq!(num("number"), n as u64, "{r:?}");
        assert_eq!(num("sent_ns"), (5 + 20 * n as u64) * MS, "{r:?}");
        assert_eq!(r["fate"], "accepted", "{r:?}");
        let (sent, applied) = ((num("sent_ns") / MS) as usize, num("applied_step") as usize);
        assert_eq!(applied as u64, num("arrival_ns").div_ceil(MS), "{r:?}");
        // What it carried: the sample the sensor held when it left (taken
        // at 0, 10, 20 ms, ...), held at the receiver until the next one.
        let last = rows.get(n + 1).map_or(received.len(), |next| {
            next["applied_step"].parse::<usize>().unwrap()
        });
        for row in applied..last {
            assert_eq!(received[row], sensor[sent], "packet {n} at row {row}");
        }
    }
}

/// (what to replace, with what, the key named, the text of the line named).
const BAD: &[(&str, &str, &str, &str)] = &[
    // Flow keys on a connection within one node.
    (
        "from = \"servo.y\"\nto = \"sensor.y\"\n",
        "from = \"servo.y\"\nto = \"sensor.y\"\nsize = 32\n",
        "connections[0].size",
        "size = 32",
    ),
    // No such trigger.
    (
        "name = \"uplink\"\n",
        "name = \"uplink\"\ntrigger = \"sometimes\"\n",
        "connections[1].trigger",
        "trigger = \"sometimes\"",
    ),
    // A period off the step grid.
    (
        "name = \"uplink\"\n",
        "name = \"uplink\"\ntrigger = \"periodic\"\nperiod = \"1500us\"\n",
        "connections[1].period",
        "period = \"1500us\"",
    ),
    // A periodic trigger without a period.
    (
        "name = \"uplink\"\n",
        "name = \"uplink\"\ntrigger = \"periodic\"\n",
        "connections[1].trigger",
        "trigger = \"periodic\"",
    ),
    // A period for a flow that is not periodic.
    (
        "name = \"uplink\"\n",
        "name = \"uplink\"\nperiod = \"10ms\"\n",
        "connections[1].period",
        "period = \"10ms\"",
    ),
    // Arrival of a flow that does not exist.
    (
        "name = \"downlink\"\n",
        "name = \"downlink\"\ntrigger = \"arrival\"\non_arrival_of = \"upward\"\n",
        "connections[2].on_arrival_of",
        "on_arrival_of = \"upward\"",
    ),
    // No port 0.
    (
        "name = \"downlink\"\n",
        "name = \"downlink\"\nport = 0\n",
        "connections[2].port",
        "port = 0",
    ),
    // A node that is not a network node index.
    (
        "name = \"pid\"\nnode = 1\n",
        "name = \"pid\"\nnode = \"remote\"\n",
        "components[2].node",
        "node = \"remote\"",
    ),
    // The builtin channel is checked when the file is read.
    (
        "delay = { kind = \"constant\", value = \"2752us\" }\n",
        "delay = { kind = \"constant\", value = \"2752us\" }\nloss = { kind = \"bernoulli\", p = 1.5 }\n",
        "network.builtin.loss",
        "",
    ),
    // A flow needs [sync].
    (
        "[sync]\nscheme = \"master_slave\"\nperiod = \"10ms\"\n",
        "",
        "sync",
        "",
    ),
    // The network's rules are a loop scenario's: a node past the count,
    (
        "backend = \"builtin\"\n",
        "backend = \"ns3\"\n\n[network.ns3]\nkind = \"wifi\"\nnodes = 1\n",
        "components[2].node",
        "node = 1",
    ),
    // and a custom program must be named.
    (
        "backend = \"builtin\"\n",
        "backend = \"ns3\"\n\n[network.ns3]\nkind = \"custom\"\nnodes = 2\n",
        "network.server.binary",
        "",
    ),
];

#[test]
fn bad_flows_exit_2_naming_key_and_line() {
    let base = std::fs::read_to_string(file("servo_graph.toml")).unwrap();
    for (from, to, key, line_text) in BAD {
        assert!(base.contains(from), "{from}");
        let text = base.replacen(from, to, 1);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("graph.toml");
        std::fs::write(&path, &text).unwrap();
        let out = dir.path().join("out");
        for err in assert_check_and_run_refuse(&path, &out, key) {
            if !line_text.is_empty() {
                let line = text
                    .lines()
                    .enumerate()
                    .filter(|(_, l)| l == line_text)
                    .last()
                    .unwrap_or_else(|| panic!("no line {line_text}"))
                    .0
                    + 1;
                assert!(
                    err.contains(&format!("graph.toml:{line}:")),
                    "{key} at line {line}:\n{err}"
                );
            }
            assert!(
                !out.exists(),
                "{key}: a bad scenario leaves no run directory"
            );
        }
    }
}

/// Master-slave lookahead for graphs: every flow of the servo graph sends on
/// a fixed schedule, so the network runs 1 s windows ahead (2.5 s: three
/// syncs instead of 250), as the `[[loops]]` form does, and the results are
/// the bits of syncing every period, with random delays and losses too.
#[test]
fn a_graph_lets_the_network_run_ahead_under_master_slave_as_loops_do() {
    let lossy = [
        "duration=\"2500ms\"",
        "network.builtin.delay={ kind = \"uniform\", min = \"1ms\", max = \"15ms\" }",
        "network.builtin.loss={ kind = \"bernoulli\", p = 0.2 }",
    ];
    let dir = tempfile::tempdir().unwrap();
    let (ahead, every, l) = (
        dir.path().join("ahead"),
        dir.path().join("every"),
        dir.path().join("loops"),
    );
    run_into(&file("servo_graph.toml"), &ahead, &lossy);
    let no_lookahead = [&lossy[..], &["sync.lookahead=false"]].concat();
    run_into(&file("servo_graph.toml"), &every, &no_lookahead);
    run_into(&file("servo_loops.toml"), &l, &lossy);
    for f in ["timeseries.csv", "packets.csv"] {
        assert!(
            std::fs::read(ahead.join(f)).unwrap() == std::fs::read(every.join(f)).unwrap(),
            "{f} differs with lookahead"
        );
    }
    assert_eq!(summary(&ahead)["sync"]["syncs"], 3);
    assert_eq!(summary(&every)["sync"]["syncs"], 250);
    assert_eq!(summary(&l)["sync"]["syncs"], 3);
    assert_eq!(
        packets(&l, "servo:uplink"),
        packets(&ahead, "uplink"),
        "uplink rows"
    );
    assert_eq!(
        packets(&l, "servo:downlink"),
        packets(&ahead, "downlink"),
        "downlink rows"
    );
    assert_eq!(series(&l, "servo.x.theta"), series(&ahead, "servo.x.theta"));
}
