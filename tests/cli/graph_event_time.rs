//! Event-triggered graph components over the network (issue 11, item 6 for
//! graphs): a component evaluated on new inputs that sends over the network
//! answers every packet at its arrival, as a `[[loops]]` event-triggered
//! controller does, and its answer leaves `computation_delay` later. The
//! graph form of the servo loop with an event-triggered PID equals the
//! `[[loops]]` form bit for bit under every scheme, and the send instants
//! are the ones computed by hand from the fixed-delay link.

use std::path::Path;

use crate::graph_flows::{
    assert_graph_equals_loops, file, run_into, scheme_cases, LOSSY_CHANNEL, SERVO_COLUMNS,
};
use crate::support::{column, packets, read_csv, summary};

/// One column of packets.csv for one stream, in packet-number order.
fn packet_column(dir: &Path, stream: &str, name: &str) -> Vec<u64> {
    let (header, rows) = read_csv(&dir.join("packets.csv"));
    let (l, n, c) = (
        column(&header, "loop"),
        column(&header, "number"),
        column(&header, name),
    );
    let mut v: Vec<(u64, u64)> = rows
        .into_iter()
        .filter(|r| r[l] == stream)
        .map(|r| (r[n].parse().unwrap(), r[c].parse().unwrap()))
        .collect();
    v.sort();
    v.into_iter().map(|(_, x)| x).collect()
}

/// The event-triggered servo as a graph equals the `[[loops]]` form: every
/// plant and control value and every packet row, under the three schemes,
/// with computation delays, and over a random, lossy channel.
#[test]
fn an_event_triggered_graph_component_answers_as_a_loop_controller_does() {
    let cases = scheme_cases();
    for (name, sets) in cases {
        let run = assert_graph_equals_loops(
            ("servo_event_loops.toml", &sets),
            ("servo_event_graph.toml", &sets),
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
}

/// Independent oracle: over a 2.752 ms link, sample `n` leaves at `10 n` ms
/// and arrives at `10 n + 2.752` ms; event-driven sync sends the PID's
/// answer at the arrival plus `computation_delay` (1.5 ms), master-slave at
/// the first 10 ms sync point at or after it. Every answer's instant, and
/// the step where it acts, is computed here by hand.
#[test]
fn answers_leave_at_the_arrival_plus_the_computation_delay() {
    let dir = tempfile::tempdir().unwrap();
    let (ed, ms) = (dir.path().join("ed"), dir.path().join("ms"));
    let delay = ["sync.computation_delay=\"1500us\""];
    run_into(
        &file("servo_event_graph.toml"),
        &ed,
        &[&delay[..], &["sync.scheme=\"event_driven\""]].concat(),
    );
    run_into(
        &file("servo_event_graph.toml"),
        &ms,
        &["sync.computation_delay=\"8ms\""],
    );
    const MS: u64 = 1_000_000;
    let link = 2_752_000;
    let arrivals = packet_column(&ed, "uplink", "arrival_ns");
    assert_eq!(arrivals.len(), 100, "one sample per 10 ms over 1 s");
    for (n, &a) in arrivals.iter().enumerate() {
        assert_eq!(a, n as u64 * 10 * MS + link, "sample {n}");
    }
    // Event-driven: arrival + 1.5 ms; acts at ceil(that + link / 1 ms).
    let sent = packet_column(&ed, "downlink", "sent_ns");
    let applied = packet_column(&ed, "downlink", "applied_step");
    // The last sample's answer leaves after the end's boundary was reached.
    assert!(sent.len() >= 99, "{} answers", sent.len());
    for (n, (&s, &k)) in sent.iter().zip(&applied).enumerate() {
        let expected = n as u64 * 10 * MS + link + 1_500_000;
        assert_eq!(s, expected, "answer {n} sent");
        assert_eq!(k, (expected + link).div_ceil(MS), "answer {n} applied");
    }
    // Master-slave with 8 ms: 10 n + 10.752 ms -> the sync point 10 n + 20 ms.
    let sent = packet_column(&ms, "downlink", "sent_ns");
    assert!(sent.len() >= 98, "{} answers", sent.len());
    for (n, &s) in sent.iter().enumerate() {
        assert_eq!(s, (n as u64 * 10 + 20) * MS, "master-slave answer {n}");
    }
}

/// `computation_delay` was refused for graph scenarios; now it is taken and
/// changes when answers leave, and nothing else in a graph whose flows all
/// run on a fixed schedule.
#[test]
fn computation_delay_leaves_a_time_triggered_graph_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run_into(&file("servo_graph.toml"), &a, &[]);
    run_into(
        &file("servo_graph.toml"),
        &b,
        &["sync.computation_delay=\"4ms\""],
    );
    for f in ["timeseries.csv", "packets.csv"] {
        assert!(
            std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap(),
            "{f} differs"
        );
    }
}

/// Two flows into one event-triggered component: both samples of a period
/// arrive at `10 n + 3.5` ms (one fixed-delay link each), and each is
/// answered at once on both downlinks, so every downlink sends two answers
/// per period, both at the arrival plus `computation_delay`, numbered in
/// the order they were computed: the count and every instant by hand.
#[test]
fn a_component_with_two_inbound_flows_answers_every_packet() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("central");
    run_into(
        &file("central_event_graph.toml"),
        &out,
        &[
            "sync.scheme=\"event_driven\"",
            "sync.computation_delay=\"1ms\"",
        ],
    );
    const MS: u64 = 1_000_000;
    for up in ["up_a", "up_b"] {
        let arrivals = packet_column(&out, up, "arrival_ns");
        assert_eq!(arrivals.len(), 100, "{up}");
        for (n, &a) in arrivals.iter().enumerate() {
            assert_eq!(a, n as u64 * 10 * MS + 3_500_000, "{up} {n}");
        }
    }
    for down in ["down_a", "down_b"] {
        let sent = packet_column(&out, down, "sent_ns");
        assert_eq!(sent.len(), 200, "{down}: one answer per accepted sample");
        for (m, &s) in sent.iter().enumerate() {
            assert_eq!(s, (m as u64 / 2) * 10 * MS + 4_500_000, "{down} answer {m}");
        }
    }
}

/// Several flows into one component under master-slave replay (the network
/// runs each period before the control side replays it) give the bits of
/// event-driven sync, where the network is stepped to every packet: random
/// delays and losses on both uplinks of the central controller.
#[test]
fn replay_with_several_flows_into_one_component_equals_direct_stepping() {
    let dir = tempfile::tempdir().unwrap();
    let (ms, ed) = (dir.path().join("ms"), dir.path().join("ed"));
    run_into(
        &file("central_graph.toml"),
        &ms,
        &[&LOSSY_CHANNEL[..], &["sync.lookahead=false"]].concat(),
    );
    run_into(
        &file("central_graph.toml"),
        &ed,
        &[&LOSSY_CHANNEL[..], &["sync.scheme=\"event_driven\""]].concat(),
    );
    assert!(
        std::fs::read(ms.join("timeseries.csv")).unwrap()
            == std::fs::read(ed.join("timeseries.csv")).unwrap(),
        "timeseries.csv differs"
    );
    for flow in ["up_a", "up_b", "down_a", "down_b"] {
        let rows = packets(&ms, flow);
        assert!(rows.len() >= 99, "{flow}: {} rows", rows.len());
        assert_eq!(rows, packets(&ed, flow), "{flow}");
    }
}
