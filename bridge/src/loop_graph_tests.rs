//! A `[[loops]]` run through the graph session gives the bytes the loops'
//! own session gave (recorded before it was deleted): `timeseries.csv`, `packets.csv` and `summary.json`, under
//! every sync scheme, over a lossy channel with receive policies, with
//! rollback answers, a CACC platoon, moving nodes and loop names that are
//! not component names.

use std::path::{Path, PathBuf};

use crate::config::Backend;
use crate::run::{run_built, RunOptions};
use crate::scenario_file::{backend_override, load, load_text, Loaded, Override};
use test_support::pinned::assert_pinned;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The sync setups and channels of tests/cli's `scheme_cases`.
fn schemes() -> Vec<(&'static str, Vec<&'static str>)> {
    let lossy = [
        "network.builtin.delay={ kind = \"uniform\", min = \"1ms\", max = \"15ms\" }",
        "network.builtin.loss={ kind = \"bernoulli\", p = 0.2 }",
    ];
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
        ("lossy_master_slave", lossy.to_vec()),
        (
            "lossy_event_driven",
            [&lossy[..], &["sync.scheme=\"event_driven\""]].concat(),
        ),
        (
            "lossy_time_stepping",
            [&lossy[..], &["sync.scheme=\"time_stepping\""]].concat(),
        ),
    ]
}

fn overrides(sets: &[&str], builtin: bool) -> Vec<Override> {
    let mut o: Vec<Override> = sets
        .iter()
        .map(|s| Override::parse_set(s).unwrap())
        .collect();
    if builtin {
        o.insert(0, backend_override(Backend::Builtin));
    }
    o
}

/// The three data files of a run directory.
fn outputs(dir: &Path) -> [String; 3] {
    ["timeseries.csv", "packets.csv", "summary.json"].map(|f| {
        std::fs::read_to_string(dir.join(f))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.join(f).display()))
    })
}

/// The loops' own session's outputs for every case here, as SHA-256 of
/// `timeseries.csv`, `packets.csv` and `summary.json`: recorded from that
/// session (bridge/src/run.rs at 150aac6) before it was deleted, when the
/// graph session was shown equal to it case by case. One line per case
/// and file: `case<TAB>file<TAB>hash`.
const LOOP_SESSION_OUTPUTS: &str = include_str!("loop_graph_tests/loop_session_outputs.sha256");

/// Runs `load()` through the graph session and compares its outputs with
/// the loops' session's, recorded.
fn assert_same(what: &str, load: impl Fn() -> Loaded) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("graph");
    let loaded = load();
    let options = RunOptions {
        out_dir: out.clone(),
        base_dir: loaded.base_dir.clone(),
        cancel: None,
    };
    let outcome = run_built(&loaded.resolved, loaded.built, &options, None);
    assert!(
        outcome.is_ok(),
        "{what}: {:?}",
        outcome.err().map(|e| e.to_string())
    );
    let names = ["timeseries.csv", "packets.csv", "summary.json"];
    for (bytes, name) in outputs(&out).iter().zip(names) {
        assert_pinned(LOOP_SESSION_OUTPUTS, what, name, bytes.as_bytes());
    }
}

fn file_case(path: PathBuf, sets: &[&str], builtin: bool) -> impl Fn() -> Loaded {
    let o = overrides(sets, builtin);
    move || load(&path, &o).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_servo_loop_through_the_graph_session_is_the_loop_session_under_every_scheme() {
    let servo = root().join("tests/cli/graph_flows/servo_loops.toml");
    for (name, sets) in schemes() {
        assert_same(name, file_case(servo.clone(), &sets, false));
    }
    let policies = [
        "network.builtin.delay={ kind = \"uniform\", min = \"1ms\", max = \"15ms\" }",
        "network.builtin.loss={ kind = \"bernoulli\", p = 0.2 }",
        "loops[0].uplink.drop_stale=true",
        "loops[0].uplink.max_delay=\"12ms\"",
        "loops[0].downlink.on_loss=\"zero\"",
        "loops[0].downlink.multi_packet=true",
        "loops[0].uplink.multi_packet=true",
    ];
    assert_same("policies", file_case(servo, &policies, false));
}

#[test]
fn event_triggered_and_rollback_loops_through_the_graph_session() {
    for file in [
        "servo_event_loops.toml",
        "servo_rollback_loops.toml",
        "two_rollback_loops.toml",
        "two_loops_a.toml",
    ] {
        let path = root().join("tests/cli/graph_flows").join(file);
        for (name, sets) in schemes() {
            assert_same(
                &format!("{file} {name}"),
                file_case(path.clone(), &sets, false),
            );
        }
    }
}

/// A zero delay: a packet acts at the boundary it was sent at (the loops'
/// phases U2 and D), under every scheme, with losses and receive policies,
/// and with event-triggered and rollback answers.
#[test]
fn zero_delay_loops_through_the_graph_session() {
    let zero = "network.builtin.delay={ kind = \"constant\", value = \"0s\" }";
    let lossy = "network.builtin.loss={ kind = \"bernoulli\", p = 0.2 }";
    for file in [
        "servo_loops.toml",
        "servo_event_loops.toml",
        "servo_rollback_loops.toml",
        "two_loops_a.toml",
    ] {
        let path = root().join("tests/cli/graph_flows").join(file);
        for (name, sets) in schemes() {
            // The schemes' own channel, its delay made zero.
            let mut sets: Vec<&str> = sets
                .into_iter()
                .filter(|s| !s.starts_with("network.builtin.delay"))
                .collect();
            sets.push(zero);
            assert_same(
                &format!("{file} zero delay {name}"),
                file_case(path.clone(), &sets, false),
            );
            sets.push(lossy);
            sets.push("sync.computation_delay=\"0s\"");
            assert_same(
                &format!("{file} zero delay, lossy {name}"),
                file_case(path.clone(), &sets, false),
            );
        }
    }
}

#[test]
fn moving_nodes_through_the_graph_session() {
    let path = root().join("tests/cli/graph_mobility/cart_loops.toml");
    for (name, sets) in schemes() {
        assert_same(
            &format!("cart {name}"),
            file_case(path.clone(), &sets, false),
        );
    }
}

/// Every `[[loops]]` example (its network made builtin), at its own sync
/// scheme and over a lossy channel.
#[test]
fn every_loop_example_through_the_graph_session() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
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
    assert!(files.len() >= 8, "{files:?}");
    let lossy = [
        "network.builtin={ delay = { kind = \"uniform\", min = \"1ms\", max = \"15ms\" }, loss = { kind = \"bernoulli\", p = 0.2 } }",
    ];
    for path in files {
        let what = format!("examples/{}", path.file_name().unwrap().to_string_lossy());
        assert_same(&what, file_case(path.clone(), &lossy, true));
    }
}

/// Loop names with a space and a dot, and one that the renaming must not
/// take, in a two-car platoon (CACC feed-forward on its own link).
#[test]
fn loop_names_that_are_not_component_names() {
    let text = r#"
duration = "2s"
step = "1ms"
seed = 3
[sync]
scheme = "master_slave"
period = "10ms"
[network]
backend = "builtin"
[network.builtin]
delay = { kind = "uniform", min = "1ms", max = "9ms" }
loss = { kind = "bernoulli", p = 0.1 }

[[loops]]
name = "lead car"
plant_node = 0
controller_node = 1
[loops.plant]
kind = "dc_servo"
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "pid"
kp = 20.0
period = "10ms"
[loops.reference]
kind = "step"
at = "100ms"
final = 1.0

[[loops]]
name = "v1.0"
plant_node = 2
controller_node = 3
[loops.plant]
kind = "dc_servo"
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "pid"
kp = 10.0
period = "10ms"

[[loops]]
name = "v1_0-1"
plant_node = 4
controller_node = 4
[loops.plant]
kind = "dc_servo"
[loops.sensor]
period = "5ms"
[loops.controller]
kind = "pid"
kp = 5.0
period = "5ms"
"#;
    let path = root().join("names.toml");
    assert_same("names", || {
        load_text(&path, text, &[]).unwrap_or_else(|e| panic!("{e}"))
    });
}
