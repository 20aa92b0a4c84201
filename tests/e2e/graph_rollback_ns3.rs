//! `response = "rollback"` for a graph controller component over the real
//! ns-3 server: the servo whose solver-integrated controller answers by
//! rollback, written as a graph, gives the `[[loops]]` form's numbers over
//! an ns-3 point-to-point link under every sync scheme, with and without a
//! computation delay.

use crate::support::{packets, root, run_scenario as netloop, series, server_binary, summary};

#[test]
fn a_graph_controller_answering_by_rollback_over_ns3_equals_the_loop_form() {
    let server = server_binary();
    let dir = root().join("tests/cli/graph_flows");
    for (scheme, delay) in [
        ("master_slave", "0s"),
        ("master_slave", "3ms"),
        ("time_stepping", "0s"),
        ("event_driven", "0s"),
        ("event_driven", "1500us"),
    ] {
        let sets = vec![
            format!("sync.scheme=\"{scheme}\""),
            format!("sync.computation_delay=\"{delay}\""),
            "network.backend=\"ns3\"".to_string(),
            "network.ns3={ kind = \"p2p\", data_rate = \"1Mbps\", delay = \"2ms\", queue_size = 100 }"
                .to_string(),
            format!("network.server.binary={:?}", server.display().to_string()),
        ];
        let out = tempfile::tempdir().unwrap();
        let (l, g) = (out.path().join("loops"), out.path().join("graph"));
        netloop(&dir.join("servo_rollback_loops.toml"), &l, &sets);
        netloop(&dir.join("servo_rollback_graph.toml"), &g, &sets);
        let s = summary(&g);
        assert_eq!(s["complete"], true, "{scheme} {delay}");
        assert_eq!(s["network"]["backend"], "ns3", "{scheme} {delay}");
        for (a, b) in [
            ("servo.x.theta", "servo.x.theta"),
            ("servo.x.omega", "servo.x.omega"),
            ("servo.u.voltage", "motor.u"),
        ] {
            assert_eq!(series(&l, a), series(&g, b), "{scheme} {delay}: {a}");
        }
        let down = packets(&l, "servo:downlink");
        assert!(down.len() >= 95, "{scheme} {delay}: {} answers", down.len());
        assert_eq!(down, packets(&g, "downlink"), "{scheme} {delay}: answers");
        assert_eq!(
            packets(&l, "servo:uplink"),
            packets(&g, "uplink"),
            "{scheme} {delay}: uplink rows"
        );
    }
}
