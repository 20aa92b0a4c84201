//! Master-slave lookahead changes the sync count and nothing else: with
//! time-triggered controllers the outputs are byte-identical to syncing
//! every period, and with an event-triggered controller on the network the
//! bridge syncs every period regardless.

use crate::support::*;

fn run(lookahead: bool, controller: &str) -> (Vec<Vec<u8>>, serde_json::Value) {
    let header = format!(
        "duration = \"3s\"\nstep = \"1ms\"\nseed = 9\n[sync]\nscheme = \"master_slave\"\nperiod = \"2ms\"\nlookahead = {lookahead}\n"
    );
    let loops = servo_loop("a", 0, 1, controller, "uplink = { drop_stale = true }")
        + &servo_loop(
            "b",
            2,
            3,
            "trigger = \"time\"\nperiod = \"10ms\"",
            "downlink = { max_delay = \"6ms\" }",
        );
    let delay = r#"{ kind = "exponential", mean = "3ms", offset = "500us" }
loss = { kind = "bernoulli", p = 0.05 }"#;
    let (dir, _) = run_in_tempdir(&scenario(&header, delay, &loops));
    let run = dir.path().join("run");
    let files = ["timeseries.csv", "packets.csv"]
        .iter()
        .map(|f| read(&run.join(f)))
        .collect();
    (
        files,
        serde_json::from_slice(&read(&run.join("summary.json"))).unwrap(),
    )
}

#[test]
fn lookahead_gives_the_same_bytes_with_far_fewer_syncs() {
    let tt = "trigger = \"time\"\nperiod = \"5ms\"";
    let (ahead, ahead_summary) = run(true, tt);
    let (every, every_summary) = run(false, tt);
    assert!(ahead == every, "lookahead changed the results");
    let syncs = |s: &serde_json::Value| s["sync"]["syncs"].as_u64().unwrap();
    assert_eq!(syncs(&every_summary), 1500, "one sync per 2 ms period");
    assert_eq!(syncs(&ahead_summary), 3, "one sync per second of lookahead");
    // Everything else in the summary agrees too.
    let strip = |mut s: serde_json::Value| {
        s["sync"]["syncs"] = serde_json::Value::Null;
        s["scenario"]["sync"]["lookahead"] = serde_json::Value::Null;
        s["config_hash"] = serde_json::Value::Null;
        s
    };
    assert_eq!(strip(ahead_summary), strip(every_summary));
}

#[test]
fn an_event_triggered_controller_on_the_network_syncs_every_period() {
    let (ahead, summary) = run(true, "trigger = \"event\"");
    let (every, _) = run(false, "trigger = \"event\"");
    assert!(ahead == every);
    assert_eq!(summary["sync"]["syncs"].as_u64().unwrap(), 1500);
}
