//! Loops over the real ns-3 wireless and cellular models (issue 5): range,
//! plant-driven mobility, contention, LTE through the core network, and
//! trace files that agree with packets.csv.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bridge::config::Scenario;
use bridge::run::{run, RunOptions, RunReport};

use crate::support::{server_binary, table_rows};
use test_support::fixtures::ServoPid;

/// A DC servo on node 0 with a time-triggered PID on node 1, sampled every
/// 10 ms, over the given `[network]` tables.
fn servo_over(network: &str, duration: &str, extra_loop: &str) -> String {
    format!(
        r#"
duration = "{duration}"
step = "1ms"
[sync]
scheme = "master_slave"
period = "10ms"
{network}
[network.server]
binary = "{server}"
{servo}"#,
        server = server_binary().display(),
        servo = ServoPid {
            extra: extra_loop,
            ..ServoPid::time_triggered_pd()
        }
        .toml()
    )
}

fn run_text(text: &str) -> (tempfile::TempDir, RunReport) {
    let dir = tempfile::tempdir().unwrap();
    let scenario = Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let resolved = scenario.resolve().unwrap_or_else(|e| panic!("{e}"));
    let options = RunOptions {
        out_dir: dir.path().join("run"),
        base_dir: PathBuf::from("."),
        cancel: None,
    };
    let report = run(&resolved, &options).unwrap_or_else(|e| panic!("run failed: {e}"));
    (dir, report)
}

/// Two WAVE nodes `distance` apart at 16 dBm with a propagation model.
fn wave_with(propagation: &str, distance: f64, extra: &str) -> String {
    format!(
        r#"[network]
backend = "ns3"
[network.ns3]
kind = "wave"
[network.radio]
tx_power = 16.0
propagation = "{propagation}"
[network.placement]
positions = [[0.0, 0.0, 0.0], [{distance}, 0.0, 0.0]]
{extra}"#
    )
}

/// WAVE with log-distance path loss and no fading: a frame's received power
/// is a function of distance alone, 16 dBm - 47.8 dB - 30 log10(d / 1 m),
/// which meets ns-3's -82 dBm preamble detection threshold at about 47 m.
fn wave(distance: f64, extra: &str) -> String {
    wave_with("log_distance", distance, extra)
}

fn uplink_ratio(report: &RunReport) -> f64 {
    report.summary.flows[0].delivery_ratio.unwrap()
}

/// With Nakagami-m fading after the log-distance loss (m = 1.5 within 80 m)
/// every frame draws its own received power around that mean, so delivery
/// fades out over tens of metres around the 47 m edge instead of stopping
/// there, and MAC retries (fresh draws) keep it up a little beyond. 2 s of
/// 10 ms samples: 200 packets per distance, enough to keep the points that
/// are about 0.3 apart in order.
#[test]
fn wave_delivery_falls_gradually_with_distance_under_fading() {
    let distances = [30.0, 50.0, 55.0, 62.0, 120.0];
    let ratios: Vec<f64> = distances
        .iter()
        .map(|&d| uplink_ratio(&run_text(&servo_over(&wave_with("nakagami", d, ""), "2s", "")).1))
        .collect();
    assert!(ratios[0] > 0.95, "close by: {distances:?} -> {ratios:?}");
    assert!(
        ratios[4] < 0.05,
        "far beyond range: {distances:?} -> {ratios:?}"
    );
    assert!(
        ratios.windows(2).all(|w| w[0] >= w[1]),
        "not monotone in distance: {distances:?} -> {ratios:?}"
    );
    let between = ratios.iter().filter(|r| (0.1..=0.9).contains(*r)).count();
    assert!(
        between >= 2,
        "a gradual fall, not one step: {distances:?} -> {ratios:?}"
    );
}

/// The largest distance (to 0.25 m) at which a static pair still exchanges
/// every packet: log-distance propagation without fading has a sharp edge.
fn static_range() -> f64 {
    let works = |d: f64| uplink_ratio(&run_text(&servo_over(&wave(d, ""), "200ms", "")).1) > 0.5;
    let (mut lo, mut hi) = (20.0, 400.0);
    assert!(works(lo) && !works(hi));
    while hi - lo > 0.25 {
        let mid = (lo + hi) / 2.0;
        if works(mid) {
            lo = mid
        } else {
            hi = mid
        }
    }
    lo
}

/// A plant driving its node away from the controller's at 20 m/s for 15 s:
/// its position is sent to ns-3 at every sync (50 ms), and the loop stops
/// exchanging packets where the static range test says it should, within
/// one sync period of travel. `plant` is the `[loops.plant]` body and
/// `mobility` the loop's mobility table, both for a speed of 20 m/s.
fn assert_driven_apart_at_the_static_range(plant: &str, mobility: &str) {
    let range = static_range();
    let (speed, sync) = (20.0, 0.05);
    let text = format!(
        r#"
duration = "15s"
step = "1ms"
[sync]
scheme = "master_slave"
period = "50ms"
{network}
[network.server]
binary = "{server}"
[[loops]]
name = "mover"
plant_node = 0
controller_node = 1
mobility = {mobility}
[loops.plant]
{plant}
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "open_loop"
"#,
        network = wave(0.0, ""),
        server = server_binary().display()
    );
    let (dir, report) = run_text(&text);
    assert!(
        report.summary.sync.syncs >= 290,
        "a moving node must sync every period"
    );
    let rows = crate::support::packet_rows(&dir.path().join("run"));
    let uplink = |r: &&BTreeMap<String, String>| r["direction"] == "uplink";
    let last_delivered = rows
        .iter()
        .filter(uplink)
        .filter(|r| !r["arrival_ns"].is_empty())
        .map(|r| r["sent_ns"].parse::<u64>().unwrap())
        .max()
        .unwrap();
    let first_lost_after = rows
        .iter()
        .filter(uplink)
        .filter(|r| r["fate"].starts_with("lost"))
        .map(|r| r["sent_ns"].parse::<u64>().unwrap())
        .filter(|&t| t > last_delivered / 2)
        .min()
        .unwrap();
    let cutoff = speed * last_delivered as f64 * 1e-9;
    assert!(
        (cutoff - range).abs() <= speed * sync + 0.25,
        "packets stopped at {cutoff:.2} m, static range {range:.2} m"
    );
    assert!(
        first_lost_after > last_delivered,
        "no packet gets through after the cut-off"
    );
}

/// A vehicle brings its own position and speed.
#[test]
fn nodes_driven_apart_stop_exchanging_packets_at_the_static_range() {
    assert_driven_apart_at_the_static_range(
        "kind = \"vehicle\"\nx0 = [0.0, 20.0, 0.0]\noutputs = [\"v\"]",
        "{ origin = [0.0, 0.0, 0.0], heading = [1.0, 0.0, 0.0] }",
    );
}

/// Any plant can move its node through the states the scenario names: here
/// a double integrator, a cart rolling freely (states `p` and `v`).
#[test]
fn plant_states_named_in_the_scenario_drive_the_node_to_the_static_range() {
    assert_driven_apart_at_the_static_range(
        "kind = \"state_space\"\na = [[0.0, 1.0], [0.0, 0.0]]\nb = [[0.0], [0.0]]\nc = [[1.0, 0.0]]\nd = [[0.0]]\n\
         x0 = [0.0, 20.0]\nstate_names = [\"p\", \"v\"]",
        "{ position = \"p\", velocity = \"v\" }",
    );
}

#[test]
fn background_nodes_raise_the_loop_delay() {
    let mean_delay = |nodes: u32| {
        let background = if nodes == 0 {
            String::new()
        } else {
            format!("[network.background]\nnodes = {nodes}\nrate = \"1Mbps\"\npacket_size = 1000\n")
        };
        let network = format!(
            "[network]\nbackend = \"ns3\"\n[network.ns3]\nkind = \"wifi\"\nstandard = \"802.11a\"\n\
             [network.placement]\nspacing = 10.0\n{background}"
        );
        let (_, report) = run_text(&servo_over(&network, "2s", ""));
        report.summary.flows[0].delay.mean_s.unwrap()
    };
    let (d0, d4, d8) = (mean_delay(0), mean_delay(4), mean_delay(8));
    assert!(
        d0 < d4 && d4 < d8,
        "mean uplink delay with 0/4/8 background nodes: {d0:e} {d4:e} {d8:e}"
    );
}

#[test]
fn lte_through_the_remote_host_is_slower_than_wifi_and_above_the_core_delays() {
    // UE 0 holds the plant; the controller is on the remote host, node 1.
    let lte = r#"[network]
backend = "ns3"
[network.ns3]
kind = "lte"
ues = 1
s1u_link_delay = "2ms"
s5_link_delay = "1ms"
remote_host_delay = "10ms""#;
    let (dir, report) = run_text(&servo_over(lte, "2s", ""));
    assert!(report.summary.complete);
    let wifi = "[network]\nbackend = \"ns3\"\n[network.ns3]\nkind = \"wifi\"";
    let (_, wifi_report) = run_text(&servo_over(wifi, "2s", ""));
    let wifi_mean = wifi_report.summary.flows[0].delay.mean_s.unwrap();
    let core = 0.013;
    for flow in &report.summary.flows {
        assert!(flow.counts.delivered > 150, "{flow:?}");
        assert!(
            flow.delay.mean_s.unwrap() > wifi_mean,
            "LTE {:?} vs Wi-Fi {wifi_mean}",
            flow.delay
        );
    }
    for row in crate::support::packet_rows(&dir.path().join("run")) {
        if let Ok(delay) = row["delay_ns"].parse::<u64>() {
            assert!(
                delay as f64 * 1e-9 > core,
                "a packet beat the core network's delays: {row:?}"
            );
        }
    }
}

/// A loop whose plant and controller are both UEs: every packet goes up
/// through the eNB, S1-U, the SGW and S5 to the PGW, which routes it back
/// down the same way to the other UE (ns-3.37 has no sidelink). So its
/// delay is at least twice the S1-U and S5 link delays, plus two radio hops
/// of at least one 1 ms subframe each (scheduled at a subframe boundary,
/// delivered at the end of a transmission). The core delays are chosen so
/// that this bound (42 ms) is above what one trip through the core and two
/// radio hops take (about 20 + 16 ms): a packet that skipped a traversal
/// would fail it.
#[test]
fn lte_loop_between_two_ues_crosses_the_core_twice() {
    let (s1u, s5) = (0.015, 0.005);
    let lte = format!(
        r#"[network]
backend = "ns3"
[network.ns3]
kind = "lte"
ues = 2
s1u_link_delay = "{s1u}s"
s5_link_delay = "{s5}s"
[network.placement]
positions = [[100.0, 0.0, 0.0], [0.0, 100.0, 0.0]]"#
    );
    let (dir, report) = run_text(&servo_over(&lte, "2s", ""));
    assert!(report.summary.complete);
    let bound = 2.0 * (s1u + s5) + 2.0 * 0.001;
    for flow in &report.summary.flows {
        assert!(flow.src <= 1 && flow.dst <= 1, "UE to UE: {flow:?}");
        assert!(flow.counts.delivered > 150, "{flow:?}");
    }
    for row in crate::support::packet_rows(&dir.path().join("run")) {
        if let Ok(delay) = row["delay_ns"].parse::<u64>() {
            assert!(
                delay as f64 * 1e-9 > bound,
                "a packet beat two core traversals and two subframes: {row:?}"
            );
        }
    }
}

/// Counts the UDP datagrams to `port` in a pcap of 802.11 frames (DLT 105),
/// PPP frames (DLT 9) or raw IPv4 packets (DLT 101, IP-level traces). An 802.11 datagram is counted once however often
/// the MAC retransmitted it: retransmissions share the sender's sequence
/// number.
fn udp_packets_to_port(pcap: &Path, port: u16) -> usize {
    let data = std::fs::read(pcap).unwrap();
    let dlt = u32::from_le_bytes(data[20..24].try_into().unwrap());
    let mut offset = 24;
    let mut ppp = 0;
    let mut wifi = std::collections::BTreeSet::new();
    while offset + 16 <= data.len() {
        let captured =
            u32::from_le_bytes(data[offset + 8..offset + 12].try_into().unwrap()) as usize;
        let frame = &data[offset + 16..offset + 16 + captured];
        offset += 16 + captured;
        let (ip, mpdu) = match dlt {
            9 if frame.len() > 2 && frame[..2] == [0x00, 0x21] => (&frame[2..], None),
            101 => (frame, None),
            105 => {
                if (frame[0] >> 2) & 0x3 != 2 {
                    continue; // not a data frame
                }
                let header = if frame[0] & 0x80 != 0 { 26 } else { 24 };
                let transmitter: [u8; 6] = frame[10..16].try_into().unwrap();
                let sequence = u16::from_le_bytes([frame[22], frame[23]]) >> 4;
                match frame.get(header..header + 8) {
                    Some([0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00]) => {
                        (&frame[header + 8..], Some((transmitter, sequence)))
                    }
                    _ => continue,
                }
            }
            other => panic!("unexpected link type {other}"),
        };
        let ihl = ((ip[0] & 0x0f) as usize) * 4;
        if ip[9] == 17 && u16::from_be_bytes([ip[ihl + 2], ip[ihl + 3]]) == port {
            match mpdu {
                Some(id) => {
                    wifi.insert(id);
                }
                None => ppp += 1,
            }
        }
    }
    ppp + wifi.len()
}

/// The one pcap file of a node's network device (`pcap-<node>-<device>.pcap`).
fn device_pcap(dir: &Path, node: u32) -> PathBuf {
    let prefix = format!("pcap-{node}-");
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&prefix)
        })
        .collect();
    assert_eq!(files.len(), 1, "one device on node {node}: {files:?}");
    files.into_iter().next().unwrap()
}

const TRACES: &str = "[network.traces]\npcap = true\nflow_monitor = true\ndrop_log = true\n";

fn lossy_p2p() -> String {
    format!(
        "[network]\nbackend = \"ns3\"\n[network.ns3]\nkind = \"p2p\"\nloss_rate = 0.1\n{TRACES}"
    )
}

/// Every packet the sender handed to its device is in that device's pcap
/// once (802.11 retries aside), and FlowMonitor counts what packets.csv
/// counts. WAVE at 20 m, well in range at 16 dBm: every packet is
/// transmitted and delivered.
#[test]
fn pcap_and_flow_monitor_agree_with_packets_csv() {
    for network in [lossy_p2p(), wave(20.0, TRACES)] {
        let (dir, report) = run_text(&servo_over(&network, "1s", ""));
        let ns3 = dir.path().join("run/ns3");
        let sent_uplink = report.summary.flows[0].counts.sent as usize;
        let sent_downlink = report.summary.flows[1].counts.sent as usize;
        assert_eq!(
            udp_packets_to_port(&device_pcap(&ns3, 0), 9000),
            sent_uplink,
            "{network}"
        );
        assert_eq!(
            udp_packets_to_port(&device_pcap(&ns3, 1), 9001),
            sent_downlink,
            "{network}"
        );

        // FlowMonitor: per 5-tuple, tx = sent and rx = delivered.
        let xml = std::fs::read_to_string(ns3.join("flowmon.xml")).unwrap();
        let doc = roxmltree::Document::parse(&xml).expect("FlowMonitor XML parses");
        let port_of: BTreeMap<String, u16> = doc
            .descendants()
            .filter(|n| n.has_tag_name("Flow") && n.attribute("destinationPort").is_some())
            .map(|n| {
                (
                    n.attribute("flowId").unwrap().to_string(),
                    n.attribute("destinationPort").unwrap().parse().unwrap(),
                )
            })
            .collect();
        let mut checked = 0;
        for stats in doc
            .descendants()
            .filter(|n| n.has_tag_name("Flow") && n.attribute("txPackets").is_some())
        {
            let port = port_of[stats.attribute("flowId").unwrap()];
            let Some(flow) = report.summary.flows.iter().find(|f| f.port == port) else {
                continue;
            };
            let tx: u64 = stats.attribute("txPackets").unwrap().parse().unwrap();
            let rx: u64 = stats.attribute("rxPackets").unwrap().parse().unwrap();
            assert_eq!(
                (tx, rx),
                (flow.counts.sent, flow.counts.delivered),
                "flow on port {port}"
            );
            checked += 1;
        }
        assert_eq!(checked, 2, "both loop flows in the FlowMonitor");
    }
}

/// LTE pcap files are named by ns-3 node id, as docs/scenario.md tabulates:
/// the EPC's PGW, SGW and MME are nodes 0-2, the remote host 3, eNB k is
/// 4 + k and UE i is 4 + enbs + i, traced at the IP level. With two eNBs,
/// UE 1's sends are in `pcap-n7-i1.pcap` and the remote host's in
/// `pcap-3-1.pcap`.
#[test]
fn lte_pcaps_are_named_by_ns3_node_id() {
    let lte = r#"[network]
backend = "ns3"
[network.ns3]
kind = "lte"
ues = 2
enbs = 2
[network.placement]
positions = [[100.0, 0.0, 0.0], [400.0, 0.0, 0.0]]
[network.traces]
pcap = true"#;
    // The plant on UE 1, the controller on the remote host (node `ues`).
    let text = servo_over(lte, "1s", "").replace(
        "plant_node = 0\ncontroller_node = 1",
        "plant_node = 1\ncontroller_node = 2",
    );
    let (dir, report) = run_text(&text);
    let ns3 = dir.path().join("run/ns3");
    let (uplink, downlink) = (&report.summary.flows[0], &report.summary.flows[1]);
    assert_eq!((uplink.src, downlink.src), (1, 2));
    assert_eq!(
        udp_packets_to_port(&ns3.join("pcap-n7-i1.pcap"), 9000),
        uplink.counts.sent as usize
    );
    assert_eq!(
        udp_packets_to_port(&ns3.join("pcap-3-1.pcap"), 9001),
        downlink.counts.sent as usize
    );
}

/// The drop log places every packet that packets.csv calls lost, with the
/// same node and reason, and only those are marked as reported.
#[test]
fn the_drop_log_says_where_each_lost_packet_died() {
    for network in [lossy_p2p(), wave(150.0, TRACES)] {
        let (dir, _) = run_text(&servo_over(&network, "1s", ""));
        let run = dir.path().join("run");
        let lost: BTreeMap<(String, String), (String, String)> = crate::support::packet_rows(&run)
            .into_iter()
            .filter(|r| r["fate"].starts_with("lost_"))
            .map(|r| {
                (
                    (r["flow"].clone(), r["number"].clone()),
                    (r["fate"][5..].to_string(), r["lost_node"].clone()),
                )
            })
            .collect();
        assert!(
            lost.len() > 5,
            "the scenario should lose packets: {network}"
        );
        let reported: BTreeMap<(String, String), (String, String)> =
            table_rows(&run.join("ns3/drops.csv"))
                .into_iter()
                .filter(|r| r["reported"] == "1")
                .map(|r| {
                    (
                        (r["flow"].clone(), r["number"].clone()),
                        (r["reason"].to_lowercase(), r["node"].clone()),
                    )
                })
                .collect();
        assert_eq!(reported, lost, "{network}");
    }
}

/// A TCP uplink over a lossy link: TCP retransmits, so nothing is lost to
/// the application, every message arrives whole and in order, and losses
/// show up as delay instead.
#[test]
fn tcp_flows_trade_loss_for_delay() {
    let lossy = "[network]\nbackend = \"ns3\"\n[network.ns3]\nkind = \"p2p\"\nloss_rate = 0.05\ndata_rate = \"10Mbps\"\n";
    let (_, udp) = run_text(&servo_over(lossy, "3s", ""));
    let (dir, tcp) = run_text(&servo_over(lossy, "3s", "uplink = { transport = \"tcp\" }"));
    let (u, t) = (&udp.summary.flows[0], &tcp.summary.flows[0]);
    assert!(u.counts.lost_phy > 5, "the link loses UDP packets: {u:?}");
    assert_eq!(
        t.counts.lost_phy + t.counts.lost_queue + t.counts.lost_other,
        0,
        "TCP loses nothing: {t:?}"
    );
    assert_eq!(t.counts.delivered + t.counts.in_flight, t.counts.sent);
    assert!(
        t.delay.max_s.unwrap() > 2.0 * u.delay.max_s.unwrap(),
        "retransmissions show as delay: {:?} vs {:?}",
        t.delay,
        u.delay
    );
    // In order: a byte stream cannot overtake itself.
    let numbers: Vec<u64> = crate::support::packet_rows(&dir.path().join("run"))
        .iter()
        .filter(|r| r["direction"] == "uplink" && !r["arrival_ns"].is_empty())
        .map(|r| r["number"].parse().unwrap())
        .collect();
    assert!(
        numbers.windows(2).all(|w| w[0] < w[1]),
        "TCP messages arrived out of order"
    );
}

/// FlowMonitor's (txPackets, rxPackets) per destination port: its own byte
/// tags at the IP layer, a count kept independently of netloop's.
fn flow_monitor_by_port(xml_path: &Path) -> BTreeMap<u16, (u64, u64)> {
    let xml = std::fs::read_to_string(xml_path).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("FlowMonitor XML parses");
    let port_of: BTreeMap<String, u16> = doc
        .descendants()
        .filter(|n| n.has_tag_name("Flow") && n.attribute("destinationPort").is_some())
        .map(|n| {
            (
                n.attribute("flowId").unwrap().to_string(),
                n.attribute("destinationPort").unwrap().parse().unwrap(),
            )
        })
        .collect();
    doc.descendants()
        .filter(|n| n.has_tag_name("Flow") && n.attribute("txPackets").is_some())
        .map(|n| {
            let count = |a: &str| n.attribute(a).unwrap().parse::<u64>().unwrap();
            (
                port_of[n.attribute("flowId").unwrap()],
                (count("txPackets"), count("rxPackets")),
            )
        })
        .collect()
}

/// The LTE network of `examples/remote_control_lte.toml`: one UE 100 m from
/// the eNB, the remote host (node 1) 13 ms of core links away.
const LTE_REMOTE: &str = r#"[network]
backend = "ns3"
[network.ns3]
kind = "lte"
ues = 1
s1u_link_delay = "2ms"
s5_link_delay = "1ms"
remote_host_delay = "10ms"
[network.placement]
positions = [[100.0, 0.0, 0.0]]
"#;

/// At a 1 or 2 ms uplink period LTE's RLC concatenates several packets into
/// one transmission and rebuilds them from its pieces; netloop must still
/// attribute every delivery to the packet whose bytes arrived. Counted
/// independently of netloop's tags: FlowMonitor (its own byte tags) and the
/// remote host's pcap (the datagrams on its link) against packets.csv.
#[test]
fn lte_fast_uplinks_deliver_each_packet_as_itself() {
    for period in ["1ms", "2ms"] {
        let network = format!("{LTE_REMOTE}[network.traces]\npcap = true\nflow_monitor = true\n");
        let text = servo_over(&network, "1s", "").replace(
            "[loops.sensor]\nperiod = \"10ms\"",
            &format!("[loops.sensor]\nperiod = \"{period}\""),
        );
        let (dir, report) = run_text(&text);
        assert!(report.summary.complete, "{period}");
        let rows = crate::support::packet_rows(&dir.path().join("run"));
        let flows = flow_monitor_by_port(&dir.path().join("run/ns3/flowmon.xml"));
        for flow in &report.summary.flows {
            let arrived = rows
                .iter()
                .filter(|r| r["flow"] == flow.flow.to_string() && !r["arrival_ns"].is_empty())
                .count();
            assert_eq!(arrived as u64, flow.counts.delivered, "{period}: {flow:?}");
            assert_eq!(
                flows[&flow.port],
                (flow.counts.sent, flow.counts.delivered),
                "{period}: FlowMonitor vs {flow:?}"
            );
        }
        let uplink = &report.summary.flows[0];
        assert!(
            uplink.counts.sent >= 500 && uplink.counts.delivered > 9 * uplink.counts.sent / 10,
            "{period}: {uplink:?}"
        );
        // The remote host (ns-3 node 3) saw exactly the uplink datagrams netloop delivered.
        let remote_host = udp_packets_to_port(&dir.path().join("run/ns3/pcap-3-1.pcap"), 9000);
        assert_eq!(remote_host as u64, uplink.counts.delivered, "{period}");
        for row in rows.iter().filter(|r| r["direction"] == "uplink") {
            if let Ok(delay) = row["delay_ns"].parse::<u64>() {
                assert!(
                    delay > 13_000_000,
                    "{period}: faster than the core links: {row:?}"
                );
            }
        }
    }
}

/// `netloop ns3 probe` over LTE at a 1 ms period: every packet FlowMonitor
/// saw arrive is a delivery of the probe, each of its own packet.
#[test]
fn lte_probe_at_one_millisecond_matches_flow_monitor() {
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("flowmon.xml");
    let flow_monitor = format!("--flowMonitor={}", xml.display());
    let options = crate::support::options(&["--network=lte", &flow_monitor]);
    let spec = bridge::probe::ProbeSpec {
        packets: 500,
        period: protocol::SimTime(1_000_000),
        size: 64,
        src: 0,
        dst: 1,
        port: 9000,
        drain: protocol::SimTime(1_000_000_000),
    };
    let report = bridge::probe::run_probe(&options, &spec).expect("probe");
    let (tx, rx) = flow_monitor_by_port(&xml)[&9000];
    assert_eq!(tx, 500);
    assert_eq!(
        report.delivered() as u64,
        rx,
        "probe deliveries vs FlowMonitor"
    );
    assert!(
        report.delivery_ratio() > 0.9,
        "only packets sent before the UE attached die: {}",
        report.delivery_ratio()
    );
    for r in &report.records {
        if let Some(received) = r.received {
            assert!(
                received.0 - r.sent.0 > 10_000_000,
                "faster than the remote host link: {r:?}"
            );
        }
    }
}

/// A send at instant t enters ns-3 at the same place among t's events
/// whichever sync mode announced it: master-slave with and without
/// lookahead and event-driven give the same packets.csv and timeseries.csv
/// over LTE, whose 1 ms subframes put network events at every whole
/// millisecond a sample is sent. (Time-stepping is left out: it sends at the
/// end of the period that produced a packet and applies it at the next sync
/// boundary, so its packets legitimately differ.) A 1 ms controller period
/// puts a send on every subframe start.
#[test]
fn lte_packets_are_the_same_in_every_sync_mode() {
    let base = servo_over(LTE_REMOTE, "1s", "").replace(
        "trigger = \"time\"\nperiod = \"10ms\"",
        "trigger = \"time\"\nperiod = \"1ms\"",
    );
    assert!(base.contains("period = \"1ms\""));
    let variants = [
        ("master_slave", base.clone()),
        (
            "master_slave without lookahead",
            base.replace(
                "scheme = \"master_slave\"",
                "scheme = \"master_slave\"\nlookahead = false",
            ),
        ),
        (
            "event_driven",
            base.replace("scheme = \"master_slave\"", "scheme = \"event_driven\""),
        ),
    ];
    let mut runs = Vec::new();
    for (name, text) in &variants {
        let (dir, report) = run_text(text);
        assert!(report.summary.complete, "{name}");
        let read = |file: &str| std::fs::read(dir.path().join("run").join(file)).unwrap();
        runs.push((
            name,
            report.summary.sync.syncs,
            read("packets.csv"),
            read("timeseries.csv"),
        ));
    }
    assert!(
        runs[0].1 < runs[1].1,
        "lookahead syncs less often: {} vs {}",
        runs[0].1,
        runs[1].1
    );
    for (name, _, packets, timeseries) in &runs[1..] {
        assert!(
            packets == &runs[0].2,
            "packets.csv of {name} differs from master-slave with lookahead"
        );
        assert!(
            timeseries == &runs[0].3,
            "timeseries.csv of {name} differs from master-slave with lookahead"
        );
    }
}
