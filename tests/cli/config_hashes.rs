//! Config hashes name run directories, and `sweep --resume` finds the runs
//! it has done by them: a scenario must keep its hash when the way it is
//! read changes. The hashes below were written by the bridge that had a
//! Rust type per ns-3 network kind; the kinds are now read from the
//! server's schema, and every key of every kind (defaults, written values,
//! optional tables) must still hash the same.

use std::path::Path;

use bridge::scenario_file::{self, Override};

use crate::support::root;

/// (example file, `--set` overrides, the config hash today's main gave it).
const CASES: &[(&str, &[&str], &str)] = &[
    ("dc_servo_p2p.toml", &[], "d76e1f7b0fbbe4c1"),
    ("platoon_wave_bsm.toml", &[], "fff823431e1a203d"),
    ("remote_control_lte.toml", &[], "366116814bb85475"),
    ("servo_wifi_interference.toml", &[], "4dea6f8f9eab6865"),
    ("bouncing_ball_equations.toml", &[], "710afe516c69933f"),
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
        "186db5779792ec81",
    ),
    // p2p on the builtin channel: [network.ns3] is kept, with its defaults.
    (
        "dc_servo_p2p.toml",
        &["network.backend=\"builtin\""],
        "0942eed1a51bdcf3",
    ),
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"wifi\", nodes = 2, standard = \"802.11n\", band = \"2.4GHz\", rate_manager = \"minstrel_ht\", channel_width = 40}",
        ],
        "1568615ae16c392d",
    ),
    (
        "dc_servo_p2p.toml",
        &["network.ns3={kind = \"wifi\"}"],
        "f5c130d4429254fb",
    ),
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"wave\", mac = \"wave\", channel_access = \"alternating\", bsm = { rate = 5.0 }}",
        ],
        "462991795cf48cfe",
    ),
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"wave\", bsm = { nodes = [0, 1], size = 300, range = 80.0, max_jitter = \"5ms\" }}",
        ],
        "d0fbe417d90cf1a3",
    ),
    ("dc_servo_p2p.toml", &["network.ns3={kind = \"wave\"}"], "50260d5cbc933355"),
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"lte\", ues = 2, enbs = 2, enb_positions = [[0.0, 0.0, 0.0], [100.0, 0.0, 0.0]], scheduler = \"rr\", bandwidth = 50, enb_tx_power = 20.0, ue_tx_power = 5.5, s1u_link_data_rate = \"1Gbps\", s1u_link_delay = \"1ms\", s5_link_data_rate = \"2Gbps\", s5_link_delay = \"3ms\", remote_host_data_rate = \"5Gbps\", remote_host_delay = \"0s\"}",
        ],
        "572f03ec5e3a4528",
    ),
    ("dc_servo_p2p.toml", &["network.ns3={kind = \"lte\", ues = 2}"], "85d2bae3f7567de3"),
    // The shared tables, read from the server's schema since: every key of
    // each, in other spellings than the canonical ones, and each table
    // empty (hashes written by the bridge that had a Rust type per table).
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"wifi\"}",
            "network.radio={tx_power = 20, propagation = \"nakagami\", log_distance_exponent = 2.5, reference_loss = 40, reference_distance = 2.0, nakagami_m = [1, 0.8, 0.6], nakagami_distances = [50.0, 150], max_range = 300.0, antenna_height = 2, phy_mode = \"OfdmRate6Mbps\", static_arp = false}",
        ],
        "3bc8cef2ccfb6ad8",
    ),
    (
        "dc_servo_p2p.toml",
        &["network.ns3={kind = \"wifi\"}", "network.radio={}"],
        "358f0445e96f2221",
    ),
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"lte\", ues = 2}",
            "network.radio={propagation = \"two_ray_ground\", antenna_height = 3.5}",
        ],
        "1c3ccfe0e9bff7e4",
    ),
    (
        "dc_servo_p2p.toml",
        &[
            "network.placement={positions = [[0, 0, 0], [10.5, 0.0, 1]], spacing = 5, background_radius = 15.0}",
        ],
        "994c6b775a4be395",
    ),
    (
        "dc_servo_p2p.toml",
        &["network.placement={file = \"nodes.topo\"}"],
        "6800d423e64e6e57",
    ),
    ("dc_servo_p2p.toml", &["network.placement={}"], "ccdeaaaca114de9e"),
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"wifi\"}",
            "network.background={nodes = 3}",
        ],
        "03eff0b51e9ab247",
    ),
    (
        "dc_servo_p2p.toml",
        &[
            "network.ns3={kind = \"wave\"}",
            "network.background={nodes = 2, traffic = \"on_off\", rate = \"1500kbps\", packet_size = 500, on = \"500ms\", off = \"2000ms\"}",
        ],
        "4c21b2491695dbc3",
    ),
    (
        "dc_servo_p2p.toml",
        &["network.traces={pcap = true, drop_log = true}"],
        "c942ad73ae3a13e9",
    ),
    (
        "dc_servo_p2p.toml",
        &["network.traces={pcap = true, ascii = true, flow_monitor = true, netanim = true, drop_log = true}"],
        "42e7512286bc1f6d",
    ),
    ("dc_servo_p2p.toml", &["network.traces={}"], "ee9ee93a4ccfce98"),
    // Each sync scheme with its parameters: the scheme's own type made at
    // resolve time must not change what is hashed (hashes from the bridge
    // before `SyncScheme`).
    (
        "dc_servo_p2p.toml",
        &["sync={scheme = \"time_stepping\", period = \"10ms\"}"],
        "94671fb37826272c",
    ),
    (
        "dc_servo_p2p.toml",
        &["sync={scheme = \"master_slave\", period = \"20ms\", lookahead = false}"],
        "a20362b939f660e9",
    ),
    (
        "dc_servo_p2p.toml",
        &["sync={scheme = \"master_slave\", period = \"10ms\", computation_delay = \"1ms\"}"],
        "7c5a60fae404bfdc",
    ),
    (
        "dc_servo_p2p.toml",
        &["sync={scheme = \"event_driven\"}"],
        "b7b2c0fa70cbea7d",
    ),
    (
        "dc_servo_p2p.toml",
        &["sync={scheme = \"event_driven\", period = \"50ms\", rules = false}"],
        "a63722b44e7ae2fd",
    ),
    (
        "servo_wifi_interference.toml",
        &["sync.rules=false"],
        "9dfcba22c1ccb8e3",
    ),
    (
        "platoon_wave_bsm.toml",
        &["sync.position_tolerance=\"1cm\""],
        "c0bac8c9cab9c153",
    ),
];

fn hash_of(file: &str, sets: &[&str]) -> String {
    let overrides: Vec<Override> = sets
        .iter()
        .map(|s| Override::parse_set(s).unwrap_or_else(|e| panic!("{s}: {e}")))
        .collect();
    let path = root().join("examples").join(file);
    let loaded = scenario_file::load(Path::new(&path), &overrides)
        .unwrap_or_else(|e| panic!("{file} {sets:?}: {e}"));
    bridge::run::config_hash(&loaded.resolved.scenario)
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
