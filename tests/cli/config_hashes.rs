//! Config hashes name run directories, and `sweep --resume` finds the runs
//! it has done by them: a scenario must keep its hash when the way it is
//! read changes, and two files that mean the same run must have one hash
//! (the canonical form of bridge/src/config_hash.rs: an omitted default
//! and a written one hash the same). The pins below are canonical hashes;
//! the cases in other spellings (every key of every network kind, the
//! shared tables, each sync scheme) keep them when the reading changes.
//! A sweep directory written before the canonical form resumes by its
//! legacy hashes; one written while the hash covered the server's
//! timeouts resumes by the canonical hashes of then.

use std::path::Path;

use bridge::scenario_file::{self, Override};

use crate::support::root;

/// (example file, `--set` overrides, its config hash).
const CASES: &[(&str, &[&str], &str)] = &[
    ("dc_servo_p2p.toml", &[], "e355184aa9bb3ab9"),
    ("platoon_wave_bsm.toml", &[], "4635b9f6f097bebe"),
    ("remote_control_lte.toml", &[], "5ddacf7e1bf87c2c"),
    ("servo_wifi_interference.toml", &[], "30fd8b85823f2ba6"),
    ("bouncing_ball_equations.toml", &[], "88226c45b8a0e2cc"),
    // Every p2p key written, in other spellings than the canonical ones.
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3.nodes=3",
            "network.ns3.topology=\"star\"",
            "network.ns3.data_rate=\"1500kbps\"",
            "network.ns3.delay=\"2500us\"",
            "network.ns3.queue_size=7",
            "network.ns3.loss_rate=0.25",
        ],
        "27d2d987a46bb32c",
    ),
    // p2p on the builtin channel: [network.ns3] is kept, with its defaults.
    (
        "dc_servo_p2p.toml",
        &["network.backend=\"builtin\""],
        "bbc05d26a5798046",
    ),
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"wifi\", nodes = 2, standard = \"802.11n\", band = \"2.4GHz\", rate_manager = \"minstrel_ht\", channel_width = 40}",
        ],
        "f62a9d830786b2bd",
    ),
    (
        "dc_servo_p2p.toml",
        &["network.ns3={kind = \"wifi\"}"],
        "cb92108483addbef",
    ),
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"wave\", mac = \"wave\", channel_access = \"alternating\", bsm = { rate = 5.0 }}",
        ],
        "7cfe41d1d60408ec",
    ),
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"wave\", bsm = { nodes = [0, 1], size = 300, range = 80.0, max_jitter = \"5ms\" }}",
        ],
        "dc28cfe10e954ef8",
    ),
    ("dc_servo_p2p.toml", &["network.ns3={kind = \"wave\"}"], "7b5c6c18ac1915b1"),
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"lte\", ues = 2, enbs = 2, enb_positions = [[0.0, 0.0, 0.0], [100.0, 0.0, 0.0]], scheduler = \"rr\", bandwidth = 50, enb_tx_power = 20.0, ue_tx_power = 5.5, s1u_link_data_rate = \"1Gbps\", s1u_link_delay = \"1ms\", s5_link_data_rate = \"2Gbps\", s5_link_delay = \"3ms\", remote_host_data_rate = \"5Gbps\", remote_host_delay = \"0s\"}",
        ],
        "b455265416569259",
    ),
    ("dc_servo_p2p.toml", &["network.ns3={kind = \"lte\", ues = 2}"], "e185340a4b947d11"),
    // The shared tables, read from the server's schema: every key of each,
    // in other spellings than the canonical ones, and each table empty.
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"wifi\"}",
            "network.radio={tx_power = 20, propagation = \"nakagami\", log_distance_exponent = 2.5, reference_loss = 40, reference_distance = 2.0, nakagami_m = [1, 0.8, 0.6], nakagami_distances = [50.0, 150], max_range = 300.0, antenna_height = 2, phy_mode = \"OfdmRate6Mbps\", static_arp = false}",
        ],
        "9bd13750498eff14",
    ),
    (
        "dc_servo_p2p.toml",
        &["network.ns3={kind = \"wifi\"}", "network.radio={}"],
        "acf3c724419ff672",
    ),
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"lte\", ues = 2}",
            "network.radio={propagation = \"two_ray_ground\", antenna_height = 3.5}",
        ],
        "ea0bb79ffb05ecc5",
    ),
    (
        "dc_servo_p2p.toml",
        &[
            "network.placement={positions = [[0, 0, 0], [10.5, 0.0, 1]], spacing = 5, background_radius = 15.0}",
        ],
        "522054c60b92cc56",
    ),
    (
        "dc_servo_p2p.toml",
        &["network.placement={file = \"nodes.topo\"}"],
        "87d249c50c1e2816",
    ),
    ("dc_servo_p2p.toml", &["network.placement={}"], "32c883debb0f4b3d"),
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"wifi\"}",
            "network.background={nodes = 3}",
        ],
        "613a37cc0d222463",
    ),
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"wave\"}",
            "network.background={nodes = 2, traffic = \"on_off\", rate = \"1500kbps\", packet_size = 500, on = \"500ms\", off = \"2000ms\"}",
        ],
        "d9979471044046b5",
    ),
    (
        "dc_servo_p2p.toml",
        &["network.traces={pcap = true, drop_log = true}"],
        "ca2b1121c7a92294",
    ),
    (
        "dc_servo_p2p.toml",
        &["network.traces={pcap = true, ascii = true, flow_monitor = true, netanim = true, drop_log = true}"],
        "93ea30dd6fea72c1",
    ),
    ("dc_servo_p2p.toml", &["network.traces={}"], "dab66794ced0f236"),
    // Each sync scheme with its parameters: the scheme's own type made at
    // resolve time must not change what is hashed.
    (
        "dc_servo_p2p.toml",
        &["sync={scheme = \"time_stepping\", period = \"10ms\"}"],
        "6411dab610649d8e",
    ),
    (
        "dc_servo_p2p.toml",
        &["sync={scheme = \"master_slave\", period = \"20ms\", lookahead = false}"],
        "afbdca7cfcd3dee2",
    ),
    (
        "dc_servo_p2p.toml",
        &["sync={scheme = \"master_slave\", period = \"10ms\", computation_delay = \"1ms\"}"],
        "387e0f843bfea35c",
    ),
    (
        "dc_servo_p2p.toml",
        &["sync={scheme = \"event_driven\"}"],
        "74dd9a93ef8db1da",
    ),
    (
        "dc_servo_p2p.toml",
        &["sync={scheme = \"event_driven\", period = \"50ms\", rules = false}"],
        "86b0011dccab3600",
    ),
    (
        "servo_wifi_interference.toml",
        &["sync.rules=false"],
        "5470bab88ec5cc38",
    ),
    (
        "platoon_wave_bsm.toml",
        &["sync.position_tolerance=\"1cm\""],
        "d2b4883dd28c0d92",
    ),
];

fn overrides(sets: &[&str]) -> Vec<Override> {
    sets.iter()
        .map(|s| Override::parse_set(s).unwrap_or_else(|e| panic!("{s}: {e}")))
        .collect()
}

fn hash_of(file: &str, sets: &[&str]) -> String {
    let path = root().join("examples").join(file);
    let loaded = scenario_file::load(Path::new(&path), &overrides(sets))
        .unwrap_or_else(|e| panic!("{file} {sets:?}: {e}"));
    bridge::run::config_hash(&loaded.resolved.scenario)
}

/// The legacy hash (what `sweep --resume` finds earlier sweeps' runs by)
/// is the one netloop wrote before the canonical form: (example, hash of
/// commit 3c1bec5).
const LEGACY: &[(&str, &str)] = &[
    ("dc_servo_p2p.toml", "d76e1f7b0fbbe4c1"),
    ("platoon_wave_bsm.toml", "fff823431e1a203d"),
    ("remote_control_lte.toml", "366116814bb85475"),
    ("servo_wifi_interference.toml", "4dea6f8f9eab6865"),
    ("bouncing_ball_equations.toml", "710afe516c69933f"),
];

#[test]
fn the_legacy_config_hash_is_the_one_earlier_versions_wrote() {
    for (file, expected) in LEGACY {
        let path = root().join("examples").join(file);
        let loaded = scenario_file::load(Path::new(&path), &[]).unwrap();
        let hash = bridge::config_hash::legacy_of_loops(&loaded.resolved.scenario);
        assert_eq!(hash, *expected, "{file}");
    }
}

/// The hash of `file` (a loop or a graph scenario) with its text edited:
/// each `(from, to)` replaced once, which must be there.
fn hash_of_edited(file: &str, edits: &[(&str, &str)], sets: &[&str]) -> String {
    let path = root().join("examples").join(file);
    let mut text = std::fs::read_to_string(&path).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{file} has no {from:?}");
        text = text.replacen(from, to, 1);
    }
    bridge::loaded_scenario::load_text(&path, &text, &overrides(sets))
        .unwrap_or_else(|e| panic!("{file} {edits:?} {sets:?}: {e}"))
        .config_hash()
}

#[test]
fn a_default_written_out_hashes_as_the_default_left_out() {
    let servo = "dc_servo_p2p.toml";
    let base = hash_of_edited(servo, &[], &[]);
    // Flow keys: the example writes `size` and `on_loss` with their
    // defaults; the ports are left out.
    let flows = [
        ("uplink = { size = 64 }", "uplink = {}"),
        (
            "downlink = { size = 64, on_loss = \"hold\" }",
            "downlink = {}",
        ),
    ];
    assert_eq!(
        hash_of_edited(servo, &flows, &[]),
        base,
        "flow defaults left out"
    );
    let ports = [
        (
            "uplink = { size = 64 }",
            "uplink = { size = 64, port = 9000 }",
        ),
        ("on_loss = \"hold\" }", "on_loss = \"hold\", port = 9001 }"),
    ];
    assert_eq!(
        hash_of_edited(servo, &ports, &[]),
        base,
        "default ports written"
    );
    assert_eq!(
        hash_of_edited(
            servo,
            &[],
            &["loops[0].feedforward={port = 9002, size = 64}"]
        ),
        base,
        "feed-forward defaults written"
    );
    // Loop keys: nodes 2 i and 2 i + 1.
    let nodes = [("plant_node = 0\ncontroller_node = 1\n", "")];
    assert_eq!(
        hash_of_edited(servo, &nodes, &[]),
        base,
        "default nodes left out"
    );
    // Sync keys.
    assert_eq!(
        hash_of_edited(
            servo,
            &[],
            &["sync={scheme = \"master_slave\", period = \"10ms\", computation_delay = \"0s\", lookahead = true, position_tolerance = \"0m\", rules = true}"]
        ),
        base,
        "sync defaults written"
    );
    // Network keys.
    assert_eq!(
        hash_of_edited(
            servo,
            &[],
            &["network.server={connect_timeout = \"30s\", step_timeout = \"300s\", spin_wait = \"0s\", args = []}"]
        ),
        base,
        "server defaults written"
    );
    // Graph connection and component keys.
    let cart = "cart_wave_graph.toml";
    let flow = [(
        "name = \"uplink\"\n",
        "name = \"uplink\"\nsize = 64\non_loss = \"hold\"\ntransport = \"udp\"\ndrop_stale = false\nmulti_packet = false\ntrigger = \"update\"\n",
    )];
    assert_eq!(
        hash_of_edited(cart, &flow, &[]),
        hash_of_edited(cart, &[], &[]),
        "connection defaults written"
    );
    assert_eq!(
        hash_of_edited(cart, &[], &["components[0].response=\"direct\""]),
        hash_of_edited(cart, &[], &[]),
        "component defaults written"
    );
}

/// How netloop talks to its server never changes what a run computes, so
/// the hash leaves it out: raising a timeout and resuming a sweep redoes
/// nothing.
#[test]
fn the_server_conversation_settings_leave_the_config_hash_as_it_was() {
    let servo = "dc_servo_p2p.toml";
    let base = hash_of_edited(servo, &[], &[]);
    for sets in [
        &["network.server.step_timeout=\"301s\""][..],
        &["network.server.connect_timeout=\"2s\""],
        &["network.server.spin_wait=\"50us\""],
        &["network.server.transport=\"unix\""],
        &["network.server.transport=\"shm\""],
    ] {
        assert_eq!(hash_of_edited(servo, &[], sets), base, "{sets:?}");
    }
    let cart = "cart_wave_graph.toml";
    assert_eq!(
        hash_of_edited(cart, &[], &["network.server.step_timeout=\"1s\""]),
        hash_of_edited(cart, &[], &[])
    );
}

#[test]
fn a_changed_value_changes_the_config_hash() {
    let servo = "dc_servo_p2p.toml";
    let base = hash_of_edited(servo, &[], &[]);
    for sets in [
        &["loops[0].uplink.size=65"][..],
        &["loops[0].downlink.on_loss=\"zero\""],
        &["loops[0].uplink.port=9100"],
        &["loops[0].controller_node=2"],
        &["sync.lookahead=false"],
        &["seed=2"],
        // The program and what it is told stay in the hash.
        &["network.server.binary=\"my-server\""],
        &["network.server.args=[\"--ns3::TcpSocket::SegmentSize=536\"]"],
        &["network.server.params.loss=0.1"],
    ] {
        assert_ne!(hash_of_edited(servo, &[], sets), base, "{sets:?}");
    }
    let cart = "cart_wave_graph.toml";
    let flow = [("name = \"uplink\"\n", "name = \"uplink\"\nsize = 65\n")];
    assert_ne!(
        hash_of_edited(cart, &flow, &[]),
        hash_of_edited(cart, &[], &[])
    );
}

/// A sweep directory written by netloop at commit 3c1bec5, before the
/// canonical form (tests/cli/fixtures/sweep_before_canonical: four builtin
/// runs, their summaries, timings and outcomes, runs named by legacy
/// hashes): `--resume` finds every run done and runs none again.
#[test]
fn a_sweep_made_before_canonical_hashes_resumes_with_nothing_to_run() {
    resumes_with_nothing_to_run("sweep_before_canonical", 4, &[]);
}

/// A sweep directory written by netloop at commit 93fd37f, whose hashes
/// covered `[network.server] step_timeout` (two builtin runs with it set):
/// `--resume` finds both done.
#[test]
fn a_sweep_made_when_hashes_covered_the_server_timeouts_resumes_with_nothing_to_run() {
    resumes_with_nothing_to_run("sweep_before_server_settings", 2, &[]);
}

/// A sweep run now and resumed with its step timeout raised runs nothing
/// again: the timeout is not in the hash.
#[test]
fn a_sweep_resumed_with_a_raised_timeout_runs_nothing_again() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = sweep("sweep_before_server_settings", &out, &[], false);
    crate::support::assert_exit(&o, 0);
    let raised = [(
        "\"network.server.step_timeout\" = \"60s\"",
        "\"network.server.step_timeout\" = \"600s\"",
    )];
    let o = sweep("sweep_before_server_settings", &out, &raised, true);
    crate::support::assert_exit(&o, 0);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("resume: 2 of 2 runs already complete, 0 to run"),
        "{stderr}"
    );
}

/// Resumes a copy of the sweep in tests/cli/fixtures/`name` (its
/// `sweep.toml` with `edits` made) and checks that none of its `runs`
/// runs was run again and no run was added.
fn resumes_with_nothing_to_run(name: &str, runs: usize, edits: &[(&str, &str)]) {
    let fixture = root().join("tests/cli/fixtures").join(name);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    copy_dir(&fixture.join("out"), &out);
    let run_dirs = std::fs::read_dir(out.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect::<Vec<_>>();
    assert_eq!(run_dirs.len(), runs);
    let timings = || {
        run_dirs
            .iter()
            .map(|r| std::fs::read_to_string(r.join("timing.json")).unwrap())
            .collect::<Vec<_>>()
    };
    let before = timings();
    let o = sweep(name, &out, edits, true);
    crate::support::assert_exit(&o, 0);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!(
            "resume: {runs} of {runs} runs already complete, 0 to run"
        )),
        "{name} {edits:?}: {stderr}"
    );
    assert_eq!(timings(), before, "no run was run again");
    let runs_after = std::fs::read_dir(out.join("runs")).unwrap().count();
    assert_eq!(runs_after, runs, "no run directory was added");
}

/// `netloop sweep` of tests/cli/fixtures/`name`/sweep.toml with `edits`
/// made (written beside it, so that its scenario path holds) into `out`.
fn sweep(name: &str, out: &Path, edits: &[(&str, &str)], resume: bool) -> std::process::Output {
    let fixture = root().join("tests/cli/fixtures").join(name);
    let mut text = std::fs::read_to_string(fixture.join("sweep.toml")).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{name}/sweep.toml has no {from:?}");
        text = text.replacen(from, to, 1);
    }
    let file = tempfile::Builder::new()
        .suffix(".toml")
        .tempfile_in(&fixture)
        .unwrap();
    std::fs::write(file.path(), text).unwrap();
    let mut command = crate::support::netloop();
    command.arg("sweep").arg(file.path()).arg("--out").arg(out);
    if resume {
        command.arg("--resume");
    }
    command.output().unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn every_network_kind_keeps_its_config_hash() {
    let mut wrong = Vec::new();
    for (file, sets, expected) in CASES {
        let hash = hash_of(file, sets);
        if hash != *expected {
            wrong.push(format!("{file} {sets:?}: {hash}, expected {expected}"));
        }
    }
    assert!(wrong.is_empty(), "changed hashes:\n{}", wrong.join("\n"));
}
