//! An event-triggered controller over a real ns-3 point-to-point link with a
//! fixed delay is evaluated at the arrival of each measurement (reference,
//! measurement and its PID clock at that instant), as an independent PID
//! clocked at the arrivals computes it: the ns-3 version of
//! `bridge/tests/cosim/event_time.rs`, with the same oracle.

use std::process::Command;

use crate::support::{assert_success, packet_rows, server_binary, timeseries_column};

#[path = "../../bridge/tests/cosim/pid_oracle.rs"]
mod pid_oracle;

/// A 1 Mbps, 2 ms link: a 64-byte sample sent at 1.0 s arrives at
/// 1.002752 s, before the reference's edge at 1.0028 s.
fn scenario(scheme: &str) -> String {
    format!(
        r#"
duration = "1.5s"
step = "1ms"
seed = 5
[sync]
scheme = "{scheme}"
period = "10ms"
[network]
backend = "ns3"
[network.ns3]
kind = "p2p"
data_rate = "1Mbps"
delay = "2ms"
[network.server]
binary = "{server}"
{loop_}"#,
        server = server_binary().display(),
        loop_ = pid_oracle::SERVO_LOOP
    )
}

#[test]
fn over_a_p2p_link_the_event_triggered_pid_is_clocked_at_the_arrivals() {
    let dir = tempfile::tempdir().unwrap();
    for scheme in ["event_driven", "master_slave"] {
        let file = dir.path().join(format!("{scheme}.toml"));
        std::fs::write(&file, scenario(scheme)).unwrap();
        let out = dir.path().join(scheme);
        let result = Command::new(env!("CARGO_BIN_EXE_netloop"))
            .args([
                "run",
                file.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert_success(&result, scheme);
        let rows = packet_rows(&out);
        let uplink: Vec<(u64, u64)> = rows
            .iter()
            .filter(|r| r["direction"] == "uplink" && r["fate"] == "accepted")
            .map(|r| {
                (
                    r["number"].parse().unwrap(),
                    r["arrival_ns"].parse().unwrap(),
                )
            })
            .collect();
        // The link's own delay, transmission time included, on every packet.
        assert!(
            rows.iter()
                .filter(|r| r["direction"] == "uplink")
                .all(|r| r["delay_ns"] == "2752000"),
            "{scheme}: fixed delay"
        );
        let (checked, across) = pid_oracle::check(
            scheme,
            &uplink,
            &timeseries_column(&out, "servo.y.theta"),
            &timeseries_column(&out, "servo.uc.voltage"),
            &timeseries_column(&out, "servo.xc.integral"),
            &timeseries_column(&out, "servo.xc.derivative"),
        );
        assert!(checked > 250, "{scheme}: {checked} answers checked");
        assert_eq!(
            across, 6,
            "{scheme}: every edge falls between an arrival and its boundary"
        );
    }
}
