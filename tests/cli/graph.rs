//! Graph scenarios (`[[components]]`, `[[connections]]`) through the real
//! binary: the cascade example runs and names its columns by port, `check
//! --graph` prints the DOT, every bad graph exits 2 naming key and line, and
//! an algebraic loop is refused, solved, or stops the run when it cannot be.

use std::path::PathBuf;

use crate::support::{
    assert_check_and_run_refuse, assert_exit, column, read_csv, root, run, run_scenario, stderr,
    stdout,
};

fn cascade() -> String {
    std::fs::read_to_string(root().join("examples/cascade_servo_graph.toml")).unwrap()
}

/// Writes `text` as a scenario in a fresh directory.
fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// The cascade settles at the 1 rad step within the sensor's quantisation,
/// the inner loop's set-point is the outer controller's output, and the
/// columns are `component.port[.element]`.
#[test]
fn the_cascade_example_runs_and_names_columns_by_port() {
    let out = tempfile::tempdir().unwrap();
    let o = run(&[
        "run",
        root()
            .join("examples/cascade_servo_graph.toml")
            .to_str()
            .unwrap(),
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert_exit(&o, 0);
    let (header, rows) = read_csv(&out.path().join("timeseries.csv"));
    assert_eq!(
        header,
        [
            "time",
            "servo.y.theta",
            "servo.y.omega",
            "speed_sensor.y",
            "angle_sensor.y",
            "position.u",
            "velocity.u",
            "motor.u",
            "servo.x.theta",
            "servo.x.omega"
        ]
    );
    assert_eq!(rows.len(), 4001, "every step of 4 s, both ends");
    let last = &rows[4000];
    let theta: f64 = last[column(&header, "servo.y.theta")].parse().unwrap();
    assert!((theta - 1.0).abs() < 0.03, "theta {theta}");
    // The actuator saturates at 12 V while the outer loop asks for full speed.
    let motor: Vec<f64> = rows
        .iter()
        .map(|r| r[column(&header, "motor.u")].parse().unwrap())
        .collect();
    assert!(motor.iter().all(|u| u.abs() <= 12.0));
    // The outer PI runs every 10 ms: its output only changes there.
    let pos = column(&header, "position.u");
    for (k, w) in rows.windows(2).enumerate() {
        if (k + 1) % 10 != 0 {
            assert_eq!(w[0][pos], w[1][pos], "position.u changed at step {}", k + 1);
        }
    }
}

#[test]
fn check_prints_the_order_and_the_graph_as_dot() {
    let path = root().join("examples/cascade_servo_graph.toml");
    let o = run(&["check", path.to_str().unwrap()]);
    assert_exit(&o, 0);
    assert!(
        stdout(&o).contains(
            "evaluation order: servo, speed_sensor, angle_sensor, position, velocity, motor"
        ),
        "{}",
        stdout(&o)
    );
    let o = run(&["check", path.to_str().unwrap(), "--graph"]);
    assert_exit(&o, 0);
    let dot = stdout(&o);
    assert!(dot.starts_with("digraph netloop {"), "{dot}");
    assert!(
        dot.contains("subgraph cluster_0 {\n    label=\"node local\";"),
        "{dot}"
    );
    assert!(
        dot.contains("\"position\" [label=\"#4 position\\ncontroller\"];"),
        "{dot}"
    );
    assert!(
        dot.contains("\"position\" -> \"velocity\" [label=\"u -> measurement[1]\"];"),
        "{dot}"
    );
    // Components on two nodes are drawn in two clusters.
    let text = cascade().replace(
        "[[components]]\nname = \"servo\"\n",
        "[[components]]\nname = \"setpoint\"\nnode = \"panel\"\n[components.reference]\nkind = \"constant\"\nvalue = 1.0\n\n[[components]]\nname = \"servo\"\n",
    );
    let (_dir, p) = write(&text);
    let o = run(&["check", p.to_str().unwrap(), "--graph"]);
    assert_exit(&o, 0);
    assert!(
        stdout(&o).contains("label=\"node panel\";"),
        "{}",
        stdout(&o)
    );
    // A loops scenario shows the graph its loops expand into: plant,
    // sensor and actuator on the plant's node, the controller on its own,
    // the networked links as flows, and the five-phase order.
    let o = run(&[
        "check",
        root().join("examples/dc_servo_p2p.toml").to_str().unwrap(),
        "--graph",
    ]);
    assert_exit(&o, 0);
    let dot = stdout(&o);
    for line in [
        "label=\"node 0\";\n    \"servo_plant\" [label=\"#1 servo_plant\\nplant\"];\n    \"servo_sensor\" [label=\"#2 servo_sensor\\nsensor\"];\n    \"servo_actuator\" [label=\"#6 servo_actuator\\nactuator\"];",
        "label=\"node 1\";\n    \"servo_controller\" [label=\"#4 servo_controller\\ncontroller\"];",
        "\"servo_sensor\" -> \"servo_controller\" [label=\"servo uplink: y -> measurement\\nperiodic, port 9000\", style=bold, color=blue, fontcolor=blue];",
        "\"servo_actuator\" -> \"servo_plant\" [label=\"u -> u\"];",
        // The plant's kind declares its units.
        "\"servo_plant\" -> \"servo_sensor\" [label=\"y (rad) -> y\"];",
        "\"servo_plant\" -> \"servo_sensor\" -> \"servo_controller\" -> \"servo_actuator\" [style=dashed",
    ] {
        assert!(dot.contains(line), "{line}\nnot in\n{dot}");
    }
}

/// (what to replace, with what, the key named, the text of the line named).
const BAD: &[(&str, &str, &str, &str)] = &[
    // The run's own keys, by the rule of every scenario (no network here).
    (
        "duration = \"4s\"",
        "duration = \"0s\"",
        "duration",
        "duration = \"0s\"",
    ),
    ("seed = 1", "seed = 0", "seed", "seed = 0"),
    // Element 0 of the inner controller's measurement is left undriven.
    (
        "[[connections]]\nfrom = \"speed_sensor.y\"\nto = \"velocity.measurement[0]\"\n",
        "",
        "components[4]",
        "[[components]] #5",
    ),
    // Driven twice.
    (
        "to = \"velocity.measurement[1]\"\n",
        "to = \"velocity.measurement[1]\"\n\n[[connections]]\nfrom = \"servo.y[0]\"\nto = \"velocity.measurement[1]\"\n",
        "connections[5].to",
        "to = \"velocity.measurement[1]\"",
    ),
    // Two elements into one.
    (
        "from = \"servo.y[1]\"",
        "from = \"servo.y[0..2]\"",
        "connections[3].to",
        "to = \"velocity.measurement[0]\"",
    ),
    // No such port.
    ("to = \"motor.u\"", "to = \"motor.input\"", "connections[5].to", "to = \"motor.input\""),
    // No such component.
    ("from = \"motor.u\"", "from = \"engine.u\"", "connections[6].from", "from = \"engine.u\""),
    // A connection between nodes would be a network flow.
    (
        "name = \"position\"\n",
        "name = \"position\"\nnode = \"remote\"\n",
        "connections[2].to",
        "to = \"position.measurement\"",
    ),
    // A period off the step grid.
    ("period = \"1ms\"\n\n[[components]]\nname = \"motor\"", "period = \"1500us\"\n\n[[components]]\nname = \"motor\"", "components[4].controller.period", "period = \"1500us\""),
    // A sensor's period off the step grid.
    ("period = \"10ms\"", "period = \"10500us\"", "components[2].sensor.period", "period = \"10500us\""),
];

#[test]
fn bad_graphs_exit_2_naming_key_and_line() {
    let base = cascade();
    for (from, to, key, line_text) in BAD {
        assert!(base.contains(from), "{from}");
        let text = base.replacen(from, to, 1);
        let (_dir, path) = write(&text);
        // `[[components]] #n`: the n-th component's header line.
        let line = match line_text.strip_prefix("[[components]] #") {
            Some(n) => {
                text.lines()
                    .enumerate()
                    .filter(|(_, l)| *l == "[[components]]")
                    .nth(n.parse::<usize>().unwrap() - 1)
                    .unwrap()
                    .0
            }
            // The last such line: the one added or changed.
            None => {
                text.lines()
                    .enumerate()
                    .filter(|(_, l)| l == line_text)
                    .last()
                    .unwrap_or_else(|| panic!("no line {line_text}"))
                    .0
            }
        } + 1;
        let out = _dir.path().join("out");
        for err in assert_check_and_run_refuse(&path, &out, key) {
            assert!(
                err.contains(&format!("graph.toml:{line}:")),
                "{key} at line {line}:\n{err}"
            );
        }
    }
}

/// An algebraic loop is refused naming its members, or solved when asked.
#[test]
fn algebraic_loops_are_refused_or_solved() {
    let text = r#"
duration = "10ms"
step = "1ms"

[[components]]
name = "a"
[components.controller]
kind = "state_feedback"
k = [[0.5]]
n = [[1.0]]
period = "1ms"
[components.reference]
kind = "constant"
value = 1.0

[[components]]
name = "b"
[components.controller]
kind = "state_feedback"
k = [[0.25]]
period = "1ms"

[[connections]]
from = "a.u"
to = "b.measurement"

[[connections]]
from = "b.u"
to = "a.measurement"
"#;
    let (dir, path) = write(text);
    let o = run(&["check", path.to_str().unwrap()]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("`connections[0]`")
            && err.contains("algebraic loop")
            && err.contains("`a`, `b`"),
        "{err}"
    );
    assert!(err.contains("graph.toml:23:"), "{err}");

    std::fs::write(&path, format!("{text}\n[algebraic_loops]\nsolve = true\n")).unwrap();
    let out = dir.path().join("out");
    let o = run_scenario(&path, &out, &[]);
    assert_exit(&o, 0);
    let (header, rows) = read_csv(&out.join("timeseries.csv"));
    // a = 1 - 0.5 b, b = -0.25 a: a = 1 / (1 - 0.125) = 8/7, b = -2/7.
    let a: f64 = rows[3][column(&header, "a.u")].parse().unwrap();
    let b: f64 = rows[3][column(&header, "b.u")].parse().unwrap();
    assert!(
        (a - 8.0 / 7.0).abs() < 1e-10 && (b + 2.0 / 7.0).abs() < 1e-10,
        "{a} {b}"
    );
}

/// A nonlinear algebraic loop of blocks, `f = tanh(g)`, `g = -0.8 (f +
/// s)` with `s` a unit step at 5 ms: solved, every row is the fixed point
/// to the tolerance; allowed one Newton step, the run stops at 5 ms (exit
/// 1) with an error naming the loop and the time, and keeps the rows
/// before it.
#[test]
fn an_algebraic_loop_that_does_not_converge_stops_the_run_naming_it_and_the_time() {
    let text = r#"
duration = "10ms"
step = "1ms"

[[components]]
name = "s"
block = { kind = "step", time = 0.005 }

[[components]]
name = "f"
block = { kind = "function", function = "tanh" }

[[components]]
name = "sum"
block = { kind = "sum", signs = "++" }

[[components]]
name = "g"
block = { kind = "gain", k = -0.8 }

[[connections]]
from = "f.y"
to = "sum.u0"

[[connections]]
from = "s.y"
to = "sum.u1"

[[connections]]
from = "sum.y"
to = "g.u"

[[connections]]
from = "g.y"
to = "f.u"

[algebraic_loops]
solve = true
"#;
    let (dir, path) = write(text);
    let out = dir.path().join("solved");
    let o = run_scenario(&path, &out, &[]);
    assert_exit(&o, 0);
    let (header, rows) = read_csv(&out.join("timeseries.csv"));
    let (f, g) = (column(&header, "f.y"), column(&header, "g.y"));
    assert_eq!(rows.len(), 11);
    for row in &rows {
        let (f, g): (f64, f64) = (row[f].parse().unwrap(), row[g].parse().unwrap());
        assert!((g.tanh() - f).abs() <= 1e-10, "{row:?}");
    }
    assert_ne!(rows[4][f], rows[5][f], "the step moves the fixed point");

    std::fs::write(&path, format!("{text}max_iterations = 1\n")).unwrap();
    let out = dir.path().join("stopped");
    let o = run_scenario(&path, &out, &[]);
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert!(
        err.contains("algebraic loop f -> sum -> g -> f at t = 5ms")
            && err.contains("did not converge in 1 iteration ("),
        "{err}"
    );
    let (_, rows) = read_csv(&out.join("timeseries.csv"));
    assert_eq!(rows.len(), 5, "the rows of 0..=4 ms");
}
