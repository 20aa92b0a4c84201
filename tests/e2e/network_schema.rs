//! Network kinds are described once, by the server (`netloop-server
//! --describe`), and the bridge has no Rust of its own for any of them: the
//! schema committed for the standard kinds is the server's, every kind's
//! command line comes from its schema (keys, argument names, defaults),
//! every limit it declares is enforced and reported at the scenario key, and
//! a kind that only the C++ test suite adds (`toy`,
//! ns3-scenarios/tests/toy-kind-server.cc) is checked, run and overridden by
//! `netloop` like the others.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use bridge::config::Backend;
use bridge::network_schema::{self, ArgumentType, KindSchema, NetworkSchema};
use bridge::scenario_file;
use bridge::server_command::server_arguments;

use test_support::fixtures::p_servo_over_ns3;

use crate::support::server_binary;

/// The server of the C++ test suite with the extra `toy` kind.
fn toy_server() -> PathBuf {
    let path = server_binary().with_file_name("toy-kind-server");
    assert!(
        path.exists(),
        "{} not built: scripts/build-ns3.sh",
        path.display()
    );
    path
}

fn netloop(dir: &Path, server: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netloop"))
        .current_dir(dir)
        .env("NETLOOP_NS3_SERVER", server)
        .env("NETLOOP_CACHE_DIR", dir.join("cache"))
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A servo loop between nodes 0 and 1 over `[network.ns3]` = `ns3`.
fn scenario(ns3: &str) -> String {
    p_servo_over_ns3("300ms", ns3)
}

fn schema_of(server: &Path) -> NetworkSchema {
    NetworkSchema::clone(&network_schema::describe(server).expect("the server describes itself"))
}

/// The keys a kind needs besides `kind`.
fn required(kind: &KindSchema) -> String {
    if kind.node_count.required {
        format!("{} = 2\n", kind.node_count.key)
    } else {
        String::new()
    }
}

/// The schema committed in ns3-scenarios/network-schema.json, which the
/// bridge reads the standard kinds from, is what the server describes
/// (regenerate it with `ns3-scenarios/build/netloop-server --describe |
/// python3 -m json.tool --no-ensure-ascii > ns3-scenarios/network-schema.json`).
#[test]
fn the_committed_schema_is_the_servers() {
    let described = schema_of(&server_binary());
    assert_eq!(
        *network_schema::standard(),
        described,
        "ns3-scenarios/network-schema.json is not what {} --describe says: regenerate it",
        server_binary().display()
    );
}

/// Every kind's command line comes from the schema: for `kind = "x"` alone
/// the bridge passes each declared argument its declared default, from the
/// declared key, and nothing the server does not declare.
#[test]
fn the_kinds_command_lines_are_the_schemas() {
    let schema = schema_of(&server_binary());
    let names: Vec<&str> = schema.kinds.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["p2p", "wifi", "wave", "lte"]);
    let dir = tempfile::tempdir().unwrap();
    for kind in &schema.kinds {
        let text = scenario(&format!("kind = \"{}\"\n{}", kind.name, required(kind)));
        let loaded = scenario_file::load_text(&dir.path().join("s.toml"), &text, &[])
            .unwrap_or_else(|e| panic!("{}: {e}", kind.name));
        let arguments = server_arguments(&loaded.resolved, dir.path(), dir.path());
        for declared in &kind.arguments {
            let passed = arguments.iter().find(|a| a.name == declared.name);
            if let Some(a) = passed {
                assert_eq!(
                    a.key.to_string(),
                    format!("network.ns3.{}", declared.key),
                    "{}: --{}",
                    kind.name,
                    declared.name
                );
            }
            match (&declared.default, passed) {
                (Some(default), Some(a)) if declared.key != kind.node_count.key => {
                    assert_eq!(&a.value, default, "{}: --{}", kind.name, declared.name)
                }
                // Unset by default: the bridge leaves it to the server.
                (None, Some(a)) if declared.key != kind.node_count.key => {
                    panic!("{}: --{} passed though unset", kind.name, a.text)
                }
                _ => {}
            }
        }
        for a in arguments
            .iter()
            .filter(|a| a.key.to_string().starts_with("network.ns3.") && a.name != "network")
        {
            assert!(
                kind.argument(&a.name).is_some() || a.name == kind.node_count.argument,
                "{}: the bridge passes --{} which the server does not declare",
                kind.name,
                a.name
            );
        }
    }
}

/// One value just outside a declared limit, as the scenario writes it.
fn outside(argument: &network_schema::ArgumentSchema) -> Vec<String> {
    let mut values = Vec::new();
    let integer = argument.kind == ArgumentType::Integer;
    let number = |x: f64| {
        if integer {
            format!("{}", x as i64)
        } else {
            format!("{x:?}")
        }
    };
    if let Some(min) = argument.min {
        values.push(number(if integer { min - 1.0 } else { min - 0.5 }));
    }
    if let Some(max) = argument.max {
        values.push(number(if integer { max + 1.0 } else { max + 0.5 }));
    }
    if let Some(above) = argument.above {
        values.push(number(above));
    }
    if let Some(bad) = (1..200)
        .map(f64::from)
        .find(|x| !argument.allowed.is_empty() && !argument.allowed.contains(x))
    {
        values.push(number(bad));
    }
    if !argument.choices.is_empty() {
        values.push("\"zz_bogus\"".into());
    }
    values
}

/// `key = value` for a dotted key: `bsm.rate` is `bsm = { rate = ... }`.
fn assignment(key: &str, value: &str) -> String {
    match key.split_once('.') {
        Some((table, inner)) => format!("{table} = {{ {inner} = {value} }}"),
        None => format!("{key} = {value}"),
    }
}

/// Every limit the server declares, of every kind (the toy's too), is
/// enforced: `netloop check` exits 2 naming the key and its line.
#[test]
fn every_declared_limit_is_enforced_at_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let server = toy_server();
    let schema = schema_of(&server);
    let mut checked = 0;
    for kind in &schema.kinds {
        for argument in &kind.arguments {
            for value in outside(argument) {
                let line = assignment(&argument.key, &value);
                // The node count is the one the limit is about when it is the key.
                let required = if argument.key == kind.node_count.key {
                    String::new()
                } else {
                    required(kind)
                };
                let text = scenario(&format!("kind = \"{}\"\n{required}{line}\n", kind.name));
                let file = dir.path().join("limit.toml");
                std::fs::write(&file, &text).unwrap();
                let o = netloop(dir.path(), &server, &["check", "limit.toml"]);
                let err = stderr(&o);
                let what = format!("{}: {line}", kind.name);
                assert_eq!(o.status.code(), Some(2), "{what}: {err}");
                let key = format!("network.ns3.{}", argument.key.split('.').next().unwrap());
                assert!(err.contains(&key), "{what}: the key is named: {err}");
                let at = text.lines().position(|l| l == line).unwrap() + 1;
                assert!(
                    err.contains(&format!("limit.toml:{at}:")),
                    "{what}: line {at}: {err}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "only {checked} limits");
}

/// The toy kind of the C++ test suite: described by its server, checked key
/// by key (type, limits, unknown keys, `--set`), and run for real.
#[test]
fn a_kind_added_on_the_cpp_side_is_checked_and_run_without_rust() {
    let dir = tempfile::tempdir().unwrap();
    let server = toy_server();
    let good = scenario(
        "kind = \"toy\"\nrate = \"10Mbps\"\nmtu = 1400\nmode = \"busy_bus\"\npreamble = true\n",
    );
    std::fs::write(dir.path().join("toy.toml"), &good).unwrap();
    let o = netloop(dir.path(), &server, &["check", "toy.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // The scenario's keys become the declared arguments, in the scenario's spelling.
    let loaded = scenario_file::load_text(&dir.path().join("toy.toml"), &good, &[]);
    // (load_text asks the default server: the toy one only through the binary key.)
    assert!(loaded.is_err(), "the shipped server has no toy kind");
    let with_binary = good.replace(
        "backend = \"ns3\"",
        &format!(
            "backend = \"ns3\"\n[network.server]\nbinary = {:?}",
            server.display().to_string()
        ),
    );
    let loaded = scenario_file::load_text(&dir.path().join("toy.toml"), &with_binary, &[]).unwrap();
    assert_eq!(loaded.resolved.scenario.network.backend, Backend::Ns3);
    let line: Vec<String> = server_arguments(&loaded.resolved, dir.path(), dir.path())
        .into_iter()
        .map(|a| a.text)
        .collect();
    assert_eq!(
        line,
        [
            "--seed=1",
            "--run=1",
            "--network=toy",
            "--nodes=2",
            "--toyRate=10Mbps",
            // Not written: the declared default, made explicit.
            "--toyDelay=1ms",
            "--toyMtu=1400",
            "--toyPreamble=true",
            "--toyMode=busyBus",
        ]
    );

    let cases = [
        (
            "mtu = 10",
            "network.ns3.mtu",
            "10 is not in [68, 9000] (bytes)",
        ),
        (
            "mode = \"loud\"",
            "network.ns3.mode",
            "unknown variant `loud`",
        ),
        ("mtu = \"big\"", "network.ns3.mtu", "a non-negative integer"),
        (
            "colour = \"red\"",
            "network.ns3.colour",
            "unknown field `colour`\n  --> bad.toml:10:1",
        ),
        (
            "nodes = 65",
            "network.ns3.nodes",
            "65 is too many: at most 64",
        ),
        ("delay = \"1 fortnight\"", "network.ns3.delay", "fortnight"),
    ];
    for (line, key, message) in cases {
        let text = scenario(&format!("kind = \"toy\"\n{line}\n"));
        std::fs::write(dir.path().join("bad.toml"), &text).unwrap();
        let o = netloop(dir.path(), &server, &["check", "bad.toml"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{line}: {err}");
        assert!(err.contains(key) && err.contains(message), "{line}: {err}");
        assert!(err.contains("bad.toml:10:"), "{line}: the line: {err}");
    }
    // `--set` reaches the kind's keys like any other.
    let o = netloop(
        dir.path(),
        &server,
        &["check", "toy.toml", "--set", "network.ns3.mtu=9001"],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("network.ns3.mtu") && err.contains("--set"),
        "{err}"
    );
    // An unknown kind lists the kinds the server describes.
    std::fs::write(
        dir.path().join("odd.toml"),
        scenario("kind = \"tokenring\""),
    )
    .unwrap();
    let o = netloop(dir.path(), &server, &["check", "odd.toml"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("unknown network kind `tokenring`")
            && err.contains("`p2p`, `wifi`, `wave`, `lte`, `custom`, `toy`"),
        "{err}"
    );

    // And it runs: the servo loop over the toy CSMA bus.
    let o = netloop(
        dir.path(),
        &server,
        &["run", "toy.toml", "--out", "out", "--quiet"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let packets = std::fs::read_to_string(dir.path().join("out/packets.csv")).unwrap();
    assert!(packets.lines().count() > 20, "{packets}");
}

/// A graph scenario takes a kind only the server describes as a loop
/// scenario does: examples/two_sensor_paths_graph.toml with its Wi-Fi
/// replaced by the toy bus is checked (a bad toy key at its key and line,
/// exit 2) and runs, every flow over the bus.
#[test]
fn a_kind_added_on_the_cpp_side_carries_a_graph_scenarios_flows() {
    let dir = tempfile::tempdir().unwrap();
    let server = toy_server();
    let example = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/two_sensor_paths_graph.toml"),
    )
    .unwrap();
    let wifi = "kind = \"wifi\"\nstandard = \"802.11a\"\nrate_manager = \"constant\"\n";
    let radio =
        "[network.radio]\ntx_power = 16.0\npropagation = \"log_distance\"\nphy_mode = \"OfdmRate6Mbps\"\n";
    assert!(example.contains(wifi) && example.contains(radio));
    let toy = |ns3: &str| {
        example
            .replace(wifi, &format!("kind = \"toy\"\n{ns3}"))
            .replace(radio, "")
            .replace("duration = \"3s\"", "duration = \"300ms\"")
    };
    std::fs::write(dir.path().join("graph.toml"), toy("mtu = 1400\n")).unwrap();
    let o = netloop(dir.path(), &server, &["check", "graph.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    let bad = toy("mtu = 10\n");
    let line = bad.lines().position(|l| l == "mtu = 10").unwrap() + 1;
    std::fs::write(dir.path().join("bad.toml"), &bad).unwrap();
    for args in [
        &["check", "bad.toml"][..],
        &["run", "bad.toml", "--out", "bad_out"],
    ] {
        let o = netloop(dir.path(), &server, args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("error: `network.ns3.mtu`: 10 is not in [68, 9000] (bytes)")
                && err.contains(&format!("bad.toml:{line}:")),
            "{args:?}: {err}"
        );
    }

    let o = netloop(
        dir.path(),
        &server,
        &["run", "graph.toml", "--out", "out", "--quiet"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["complete"], true);
    assert_eq!(summary["network"]["description"], "toy bus of 4 nodes");
    let flows = summary["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 4);
    for f in flows {
        assert!(f["accepted"].as_u64().unwrap() >= 25, "{f}");
    }
}

/// `key = value` for a shared table's argument, as a scenario writes it: an
/// array key's element (`nakagami_m[1]`) within the array of its table's
/// defaults; the error names the element.
fn shared_assignment(
    table: &network_schema::TableSchema,
    argument: &network_schema::ArgumentSchema,
    value: &str,
) -> (String, String) {
    let Some((key, _)) = argument.key.split_once('[') else {
        return (format!("{} = {value}", argument.key), argument.key.clone());
    };
    let elements: Vec<String> = table
        .arguments
        .iter()
        .filter(|a| a.key.starts_with(&format!("{key}[")))
        .map(|a| {
            if a.name == argument.name {
                value.to_string()
            } else {
                format!("{:?}", a.default.as_ref().unwrap().parse::<f64>().unwrap())
            }
        })
        .collect();
    (
        format!("{key} = [{}]", elements.join(", ")),
        argument.key.clone(),
    )
}

/// Every limit the server declares for a shared table (`[network.radio]`,
/// `[network.placement]`, `[network.background]`, `[network.traces]`) is
/// enforced before a run: `netloop check` exits 2 naming the key (an array
/// key's element) and its line, on a kind that takes the whole table.
#[test]
fn every_shared_table_limit_is_enforced_at_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_binary();
    let schema = schema_of(&server);
    let mut checked = 0;
    for table in &schema.tables {
        for argument in &table.arguments {
            for value in outside(argument) {
                let (line, key) = shared_assignment(table, argument, &value);
                let required: String = table
                    .arguments
                    .iter()
                    .filter(|a| a.required && a.name != argument.name)
                    .map(|a| format!("{} = 1\n", a.key))
                    .collect();
                let text = scenario(&format!(
                    "kind = \"wifi\"\n[network.{}]\n{required}{line}\n",
                    table.name
                ));
                std::fs::write(dir.path().join("limit.toml"), &text).unwrap();
                let o = netloop(dir.path(), &server, &["check", "limit.toml"]);
                let err = stderr(&o);
                let what = format!("[network.{}] {line}", table.name);
                assert_eq!(o.status.code(), Some(2), "{what}: {err}");
                let key = format!("network.{}.{key}", table.name);
                assert!(
                    err.starts_with(&format!("error: `{key}`: ")),
                    "{what}: the key is named: {err}"
                );
                let at = text.lines().position(|l| l == line).unwrap() + 1;
                assert!(
                    err.contains(&format!("limit.toml:{at}:")),
                    "{what}: line {at}: {err}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 15, "only {checked} limits");
}

/// Which shared tables a kind takes is its schema's: the toy kind of the C++
/// test suite (no positions) takes placement but has no radio, and LTE
/// takes the propagation keys of the radio only, three models of five; each
/// refusal names the key.
#[test]
fn each_kind_takes_the_shared_tables_its_schema_says() {
    let dir = tempfile::tempdir().unwrap();
    let server = toy_server();
    let cases: &[(&str, Option<(&str, &str)>)] = &[
        ("kind = \"toy\"\n[network.placement]\nspacing = 5.0", None),
        (
            "kind = \"toy\"\n[network.radio]\ntx_power = 20.0",
            Some(("network.radio", "toy has no radio")),
        ),
        (
            "kind = \"toy\"\n[network.background]\nnodes = 2",
            Some(("network.background", "toy has no background traffic")),
        ),
        (
            "kind = \"lte\"\nues = 2\n[network.radio]\npropagation = \"two_ray_ground\"\nantenna_height = 3.0",
            None,
        ),
        (
            "kind = \"lte\"\nues = 2\n[network.radio]\ntx_power = 20.0",
            Some((
                "network.radio.tx_power",
                "lte does not take `tx_power`: lte takes propagation settings only; set enb_tx_power and ue_tx_power in [network.ns3]",
            )),
        ),
        (
            "kind = \"lte\"\nues = 2\n[network.radio]\npropagation = \"nakagami\"",
            Some((
                "network.radio.propagation",
                "\"nakagami\" is not available for lte: use one of \"friis\", \"log_distance\", \"two_ray_ground\"",
            )),
        ),
    ];
    for (ns3, expected) in cases {
        std::fs::write(dir.path().join("use.toml"), scenario(ns3)).unwrap();
        let o = netloop(dir.path(), &server, &["check", "use.toml"]);
        let err = stderr(&o);
        match expected {
            None => assert_eq!(o.status.code(), Some(0), "{ns3}: {err}"),
            Some((key, message)) => {
                assert_eq!(o.status.code(), Some(2), "{ns3}: {err}");
                assert!(
                    err.starts_with(&format!("error: `{key}`: {message}")),
                    "{ns3}: {err}"
                );
            }
        }
    }
}
