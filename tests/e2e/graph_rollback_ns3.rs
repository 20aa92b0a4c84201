//! `response = "rollback"` for a graph controller component over the real
//! ns-3 server: the servo whose solver-integrated controller answers by
//! rollback, written as a graph, gives the `[[loops]]` form's numbers over
//! an ns-3 point-to-point link under every sync scheme, with and without a
//! computation delay.

use crate::graph_flows_ns3::{assert_graph_equals_loops, run_over_p2p, schemes_with_delays};
use crate::support::summary;

#[test]
fn a_graph_controller_answering_by_rollback_over_ns3_equals_the_loop_form() {
    for (what, sync) in schemes_with_delays() {
        let (_out, l, g) = run_over_p2p(
            "servo_rollback_loops.toml",
            "servo_rollback_graph.toml",
            &sync,
        );
        let s = summary(&g);
        assert_eq!(s["complete"], true, "{what}");
        assert_eq!(s["network"]["backend"], "ns3", "{what}");
        let columns = [
            ("servo.x.theta", "servo.x.theta"),
            ("servo.x.omega", "servo.x.omega"),
            ("servo.u.voltage", "motor.u"),
        ];
        let (_, down) = assert_graph_equals_loops(&l, &g, &columns, &what);
        assert!(down >= 95, "{what}: {down} answers");
    }
}
