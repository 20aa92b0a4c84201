//! A platoon over the network: each follower's radar is local, but its
//! predecessor's acceleration (the CACC feed-forward) travels from the
//! predecessor's vehicle to the follower's controller as packets.

use controlsim::{ClosedLoop, Delays, Recorder, Response, System};

use crate::support::*;

fn vehicle(
    name: &str,
    node: u32,
    predecessor: Option<&str>,
    x0: f64,
    controller: &str,
    extra: &str,
) -> String {
    let predecessor = predecessor
        .map(|p| format!("predecessor = \"{p}\""))
        .unwrap_or_default();
    format!(
        r#"
[[loops]]
name = "{name}"
plant_node = {node}
controller_node = {node}
{predecessor}
{extra}
[loops.plant]
kind = "vehicle"
x0 = [{x0}, 20.0, 0.0]
outputs = ["v"]
[loops.actuator]
min = -5.0
max = 3.0
{controller}
"#
    )
}

fn platoon(scheme: &str, delay: &str) -> String {
    let header = format!(
        "duration = \"20s\"\nstep = \"1ms\"\n[sync]\nscheme = \"{scheme}\"\nperiod = \"20ms\"\n"
    );
    let lead = r#"[loops.sensor]
period = "20ms"
[loops.controller]
kind = "pid"
kp = 1.0
ki = 0.2
[loops.reference]
kind = "piecewise_linear"
points = [["0s", 20.0], ["2s", 20.0], ["6s", 24.0]]"#;
    let follower = r#"[loops.sensor]
period = "20ms"
source = "radar"
[loops.controller]
kind = "cacc"
time_gap = 0.7
trigger = "time"
period = "20ms""#;
    let loops = vehicle("lead", 0, None, 60.0, lead, "")
        + &vehicle(
            "f1",
            1,
            Some("lead"),
            30.0,
            follower,
            "feedforward = { size = 200 }",
        )
        + &vehicle("f2", 2, Some("f1"), 0.0, follower, "");
    scenario(&header, delay, &loops)
}

#[test]
fn zero_delay_platoon_equals_the_closed_loop() {
    for scheme in ["master_slave", "event_driven"] {
        let text = platoon(scheme, r#"{ kind = "constant", value = "0s" }"#);
        let resolved = resolve(&text);
        let system = System::from_config(&resolved.system, resolved.scenario.seed).unwrap();
        let mut closed = ClosedLoop::new(system, Delays::default(), Response::Direct);
        let mut recorder =
            Recorder::new(closed.system(), Vec::new(), std::num::NonZeroU64::MIN).unwrap();
        closed.run_to(resolved.end_step, &mut recorder).unwrap();
        let expected = recorder.finish(closed.system()).unwrap();
        let (dir, report) = run_in_tempdir(&text);
        assert!(
            read(&dir.path().join("run/timeseries.csv")) == expected,
            "{scheme}: platoon differs from the closed loop"
        );
        // Only feed-forward packets cross the network (controllers are on board).
        let flows = &report.summary.flows;
        assert_eq!(flows.len(), 2);
        assert!(flows
            .iter()
            .all(|f| f.direction == bridge::flows::Direction::Feedforward));
        assert_eq!(
            (flows[0].src, flows[0].dst, flows[1].src, flows[1].dst),
            (0, 1, 1, 2)
        );
        assert!(flows.iter().all(|f| f.counts.accepted > 900));
    }
}

#[test]
fn delayed_feedforward_still_settles_at_the_time_gap() {
    let text = platoon(
        "event_driven",
        r#"{ kind = "uniform", min = "5ms", max = "30ms" }"#,
    );
    let (dir, report) = run_in_tempdir(&text);
    let run = dir.path().join("run");
    let rows = packet_rows(&run);
    assert!(rows.iter().all(|r| r["direction"] == "feedforward"));
    assert!(rows.iter().any(|r| r["size"] == "200") && rows.iter().any(|r| r["size"] == "64"));
    // Both followers at 24 m/s with gap standstill + time_gap * v = 2 + 0.7 * 24.
    for (ahead, behind) in [("lead", "f1"), ("f1", "f2")] {
        let p_ahead = *column(&run, &format!("{ahead}.x.p")).last().unwrap();
        let p_behind = *column(&run, &format!("{behind}.x.p")).last().unwrap();
        let v = *column(&run, &format!("{behind}.x.v")).last().unwrap();
        let gap = p_ahead - 4.0 - p_behind;
        assert!((v - 24.0).abs() < 0.05, "{behind} at {v} m/s");
        assert!((gap - 18.8).abs() < 0.2, "{behind} gap {gap}");
    }
    assert!(report.summary.complete);
}
