//! Outputs pinned (issue 11: "byte-identical outputs for every existing
//! example and test scenario, before and after"): every scenario of
//! `examples/` (1 s of it, over the builtin network) and of
//! `tests/cli/graph_flows/`, and the servo example over a lossy channel under
//! each sync scheme, writes the `timeseries.csv` and `packets.csv` bytes it
//! wrote when these hashes were taken. A change that moves them on purpose
//! says which in its commit and updates the rows; the failure prints the
//! rows as they now are.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{assert_success, root, run_scenario};

/// (case, first 16 hex digits of the SHA-256 of `timeseries.csv`, of
/// `packets.csv`, or `""` for a run that writes none).
const PINNED: &[(&str, &str, &str)] = &[
    ("examples/abs_slip_blocks", "5756b8d1aa958c3e", ""),
    ("examples/bouncing_ball_blocks", "326b482a08f29583", ""),
    (
        "examples/bouncing_ball_equations",
        "455236290322b0ab",
        "2925d33d7f33a969",
    ),
    (
        "examples/cart_wave_graph",
        "ba0d8783f1384f30",
        "93a0bb82c8ba36b6",
    ),
    ("examples/cascade_servo_graph", "2542771ab46fb23d", ""),
    (
        "examples/cascade_servo_network_graph",
        "e88541b6b493c3d0",
        "cdeee6fd66fb786e",
    ),
    (
        "examples/central_servos_wifi_graph",
        "45ba5c34b7c45d1a",
        "68311c449d128f61",
    ),
    ("examples/cruise_control_blocks", "51bbdb14ec26d1b7", ""),
    (
        "examples/cruise_control_ns3",
        "8383445b1e49cc26",
        "70b755b3f82dd8ac",
    ),
    ("examples/cruise_control_subsystem", "cda2045f9de64cd4", ""),
    (
        "examples/dc_servo_p2p",
        "427e6de6a0da9b4e",
        "2432d4f83b280d56",
    ),
    (
        "examples/platoon_wave_bsm",
        "89587a36eb6db738",
        "1bca74a0579ea7e4",
    ),
    (
        "examples/remote_control_lte",
        "f989ecaad6a03830",
        "384a29bb11389f84",
    ),
    (
        "examples/servo_byo_plant_floor",
        "db51096350d7c326",
        "77a22870b77a57c5",
    ),
    (
        "examples/servo_equation_pi_p2p",
        "490d2325a5c4a358",
        "4af21fdefc64d177",
    ),
    (
        "examples/servo_wifi_interference",
        "823d641254c35f97",
        "5713c7380fedff12",
    ),
    (
        "examples/tank_level_wifi",
        "7d9e8f6ffb1cbfe4",
        "d2af5abe65308afb",
    ),
    (
        "examples/two_sensor_paths_graph",
        "5d1e1d4d0edd1398",
        "5c80a26bd761aed1",
    ),
    (
        "examples/van_der_pol_equations",
        "aa5e8b0c3d05c9be",
        "75172c6bc1576250",
    ),
    (
        "graph_flows/central_event_graph",
        "416b03b3392e781c",
        "3cbec9f77b8e611e",
    ),
    (
        "graph_flows/central_graph",
        "3530839e30b7c9a0",
        "3d970a53f5d6c162",
    ),
    (
        "graph_flows/central_rollback_graph",
        "e553130771bc5414",
        "3cbec9f77b8e611e",
    ),
    (
        "graph_flows/servo_event_graph",
        "7d1a62968a83ea8b",
        "1dde2065cda32d5e",
    ),
    (
        "graph_flows/servo_event_loops",
        "84b7a2a0a487cee5",
        "df1fde128ffb567c",
    ),
    (
        "graph_flows/servo_graph",
        "4564e1b18d013629",
        "54d9368ea2ffb191",
    ),
    (
        "graph_flows/servo_loops",
        "7c13d3a5319419b0",
        "2432d4f83b280d56",
    ),
    (
        "graph_flows/servo_rollback_graph",
        "787b1d77b1042612",
        "1dde2065cda32d5e",
    ),
    (
        "graph_flows/servo_rollback_loops",
        "f7a01690bb722cfd",
        "df1fde128ffb567c",
    ),
    (
        "graph_flows/two_loops_a",
        "6786b6ea5d80b8e4",
        "bd0b8e370f2a6d5d",
    ),
    (
        "graph_flows/two_loops_b",
        "e2ef8a3cfc6ac9fa",
        "901532d56d45580e",
    ),
    (
        "graph_flows/two_rollback_loops",
        "bc2252498ce1a4f0",
        "56ef068ab0398ca7",
    ),
    ("lossy/master_slave", "e292bef8948fc50e", "73542b0ef59a9d2a"),
    ("lossy/event_driven", "e292bef8948fc50e", "73542b0ef59a9d2a"),
    (
        "lossy/time_stepping",
        "d46e7593b58e3314",
        "c1f59c802a441099",
    ),
];

/// A case: its name, the scenario file and the arguments after `--out`.
struct Case {
    name: String,
    file: PathBuf,
    args: Vec<String>,
}

fn set(assignment: &str) -> [String; 2] {
    ["--set".to_string(), assignment.to_string()]
}

/// Every scenario of `dir` (sweeps aside), named `prefix/stem`.
fn scenarios(dir: &Path, prefix: &str) -> Vec<(String, PathBuf)> {
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (format!("{prefix}/{stem}"), p)
        })
        .filter(|(name, _)| !name.starts_with("examples/sweep_"))
        .collect();
    files.sort();
    files
}

/// The examples over the builtin network (their own `[network.builtin]`,
/// else a constant 2 ms), 1 s each; the graph-flow test scenarios as they
/// are; the servo example over a random, lossy channel under each scheme.
fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (name, file) in scenarios(&root().join("examples"), "examples") {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut args = set("duration=\"1s\"").to_vec();
        if text.contains("\n[network]") {
            if text.contains("\n[network.builtin]") {
                args.extend(["--network".to_string(), "builtin".to_string()]);
            } else {
                args.extend(set("network.backend=\"builtin\""));
                args.extend(set(
                    "network.builtin={ delay = { kind = \"constant\", value = \"2ms\" } }",
                ));
            }
        }
        cases.push(Case { name, file, args });
    }
    for (name, file) in scenarios(&root().join("tests/cli/graph_flows"), "graph_flows") {
        cases.push(Case {
            name,
            file,
            args: Vec::new(),
        });
    }
    for scheme in ["master_slave", "event_driven", "time_stepping"] {
        let mut args = vec!["--network".to_string(), "builtin".to_string()];
        for s in [
            "duration=\"1s\"".to_string(),
            format!("sync.scheme=\"{scheme}\""),
            "network.builtin.delay={ kind = \"uniform\", min = \"1ms\", max = \"15ms\" }".into(),
            "network.builtin.loss={ kind = \"bernoulli\", p = 0.2 }".into(),
        ] {
            args.extend(set(&s));
        }
        cases.push(Case {
            name: format!("lossy/{scheme}"),
            file: root().join("examples/dc_servo_p2p.toml"),
            args,
        });
    }
    cases
}

/// The first 16 hex digits of the file's SHA-256, or `""` when it is absent.
fn hash(path: &Path) -> String {
    if !path.exists() {
        return String::new();
    }
    let o = Command::new("sha256sum").arg(path).output().unwrap();
    assert_success(&o, "sha256sum");
    String::from_utf8_lossy(&o.stdout)[..16].to_string()
}

#[test]
fn every_example_and_test_scenario_writes_the_pinned_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut now = Vec::new();
    for case in cases() {
        let out = dir.path().join(case.name.replace('/', "_"));
        let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
        let o = run_scenario(&case.file, &out, &[&["-q"][..], &args].concat());
        assert_success(&o, &case.name);
        now.push((
            case.name,
            hash(&out.join("timeseries.csv")),
            hash(&out.join("packets.csv")),
        ));
    }
    let pinned: Vec<(String, String, String)> = PINNED
        .iter()
        .map(|(n, t, p)| (n.to_string(), t.to_string(), p.to_string()))
        .collect();
    let changed: Vec<String> = now
        .iter()
        .filter(|row| !pinned.contains(row))
        .map(|(n, t, p)| format!("    (\"{n}\", \"{t}\", \"{p}\"),"))
        .collect();
    let gone: Vec<&str> = pinned
        .iter()
        .filter(|(n, ..)| !now.iter().any(|(m, ..)| m == n))
        .map(|(n, ..)| n.as_str())
        .collect();
    assert!(
        changed.is_empty() && gone.is_empty(),
        "outputs differ from the pinned ones (or a scenario has no row); now:\n{}\nno longer run: {gone:?}",
        changed.join("\n")
    );
}
