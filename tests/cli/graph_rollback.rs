//! `response = "rollback"` for graph components that receive flows (issue 11
//! item 6; docs/cosimulation.md, "What a solver-integrated controller
//! sends"): the graph form of a `[[loops]]` rollback loop gives its bits
//! under every scheme, a central controller with two inbound flows answering
//! by rollback gives two independent rollback loops, and what cannot roll
//! back is refused at check, naming the key and line.

use crate::graph_flows::{
    assert_graph_equals_loops, file, run_into, scheme_cases, LOSSY_CHANNEL, SERVO_COLUMNS,
};
use crate::support::{assert_check_and_run_refuse, packets, series, summary};

/// Every scheme (all three take rollback), with computation delays, and
/// over a random, lossy channel.
fn schemes() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut cases = scheme_cases();
    cases.push((
        "lossy_time_stepping",
        [&LOSSY_CHANNEL[..], &["sync.scheme=\"time_stepping\""]].concat(),
    ));
    cases
}

/// The servo with a solver-integrated controller answering by rollback,
/// written as a graph, equals the `[[loops]]` form: every plant and control
/// value and every packet row. The same graph answering directly does not
/// (the key is not ignored).
#[test]
fn a_graph_controller_answering_by_rollback_equals_the_loop_form() {
    for (name, sets) in schemes() {
        let run = assert_graph_equals_loops(
            ("servo_rollback_loops.toml", &sets),
            ("servo_rollback_graph.toml", &sets),
            &SERVO_COLUMNS,
            name,
        );
        assert!(
            run.down.len() >= 70,
            "{name}: {} downlink packets",
            run.down.len()
        );
        assert_eq!(summary(&run.graph)["complete"], true, "{name}");
    }
    let dir = tempfile::tempdir().unwrap();
    let (r, d) = (dir.path().join("rollback"), dir.path().join("direct"));
    run_into(&file("servo_rollback_graph.toml"), &r, &[]);
    run_into(
        &file("servo_rollback_graph.toml"),
        &d,
        &["components[2].response=\"direct\""],
    );
    assert_ne!(series(&r, "motor.u"), series(&d, "motor.u"));
}

/// Two flows into one component answering by rollback: both samples of a
/// period arrive together (one fixed-delay link each); each packet is
/// answered on both downlinks, the first with the other servo's sample of
/// the period before, the second with both new, and the actuators act on
/// the last. With K block-diagonal every servo's states and control are
/// those of its own rollback loop (the independent oracle: `[[loops]]` and
/// `System::rollback_response_at`), bit for bit, under each scheme.
#[test]
fn a_central_controller_answering_two_flows_by_rollback_equals_two_rollback_loops() {
    let cases: [(&str, &[&str]); 4] = [
        ("master_slave", &[]),
        ("event_driven", &["sync.scheme=\"event_driven\""]),
        (
            "event_driven_delay",
            &[
                "sync.scheme=\"event_driven\"",
                "sync.computation_delay=\"2ms\"",
            ],
        ),
        ("time_stepping", &["sync.scheme=\"time_stepping\""]),
    ];
    for (name, sets) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (l, c) = (dir.path().join("loops"), dir.path().join("central"));
        run_into(&file("two_rollback_loops.toml"), &l, sets);
        run_into(&file("central_rollback_graph.toml"), &c, sets);
        for s in ["a", "b"] {
            for x in ["y.theta", "y.omega", "x.theta", "x.omega"] {
                assert_eq!(
                    series(&l, &format!("{s}.{x}")),
                    series(&c, &format!("servo_{s}.{x}")),
                    "{name}: {s}.{x}"
                );
            }
            assert_eq!(
                series(&l, &format!("{s}.u.voltage")),
                series(&c, &format!("motor_{s}.u")),
                "{name}: {s} control"
            );
            assert_eq!(
                packets(&l, &format!("{s}:uplink")),
                packets(&c, &format!("up_{s}")),
                "{name}: {s} uplink rows"
            );
            // Every accepted sample of either uplink is answered on this
            // downlink: twice the loop's answers.
            assert_eq!(
                packets(&c, &format!("down_{s}")).len(),
                2 * packets(&l, &format!("{s}:downlink")).len(),
                "{name}: {s} answers"
            );
        }
    }
}

/// What cannot answer by rollback is refused by `check` and `run`, exit 2,
/// naming the key and its line: a kind other than a controller, a
/// controller without a state to advance and restore, and a time-triggered
/// controller.
#[test]
fn rollback_that_cannot_work_is_refused_naming_the_key() {
    let base = std::fs::read_to_string(file("servo_rollback_graph.toml")).unwrap();
    let cases: [(&str, &str, &str, &str); 3] = [
        (
            "name = \"servo\"\nnode = 0\n",
            "name = \"servo\"\nnode = 0\nresponse = \"rollback\"\n",
            "components[0].response",
            "is a plant",
        ),
        (
            "kind = \"state_space\"\na = [[0.0]]\nb = [[1.0, 0.0]]\nc = [[0.5]]\nd = [[4.0, 0.6]]\nmeasurements = [0, 1]\ntrigger = \"event\"\n[[components.reference]]\nkind = \"step\"\nat = \"100ms\"\nfinal = 1.0\n\n[[components.reference]]\nkind = \"constant\"\nvalue = 0.0\n",
            "kind = \"pid\"\nkp = 20.0\nkd = 0.5\ntrigger = \"event\"\n",
            "components[2].response",
            "needs a solver-integrated controller",
        ),
        (
            "trigger = \"event\"",
            "trigger = \"time\"",
            "components[2].response",
            "is for event-triggered controllers",
        ),
    ];
    for (from, to, key, why) in cases {
        assert!(base.contains(from), "{from}");
        let text = base.replacen(from, to, 1);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("graph.toml");
        std::fs::write(&path, &text).unwrap();
        let line = text
            .lines()
            .position(|l| l == "response = \"rollback\"")
            .unwrap()
            + 1;
        let out = dir.path().join("out");
        for err in assert_check_and_run_refuse(&path, &out, key) {
            assert!(err.contains(why), "{key}: {why}\n{err}");
            assert!(
                err.contains(&format!("graph.toml:{line}:")),
                "{key} at line {line}:\n{err}"
            );
            assert!(!out.exists(), "{key}: no run directory");
        }
    }
}
