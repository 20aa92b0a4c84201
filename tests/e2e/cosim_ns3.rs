//! Co-simulation over the real ns-3 server through the real `netloop`
//! binary: an ns-3 link with a fixed delay equals the builtin channel with
//! the same delay (transmission time included), runs repeat byte for byte,
//! and a server killed mid-run, or one that rejects the configuration, fails
//! the run cleanly with partial results and an error record.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use protocol::SimTime;

use crate::support::{assert_success, read_csv, server_binary};
use test_support::fixtures::{ServoPid, PID_GAINS};

/// A servo loop over a 1 Mbps, 2 ms point-to-point link; the builtin
/// equivalent delays each 64-byte packet by 2 ms + (64 + 30) * 8 us.
fn scenario(scheme: &str, controller: &str, extra: &str) -> String {
    scenario_sampled(scheme, controller, extra, "5ms")
}

fn scenario_sampled(scheme: &str, controller: &str, extra: &str, sensor_period: &str) -> String {
    format!(
        r#"
duration = "2s"
step = "1ms"
seed = 4
{extra}
[sync]
scheme = "{scheme}"
period = "10ms"
[network]
backend = "ns3"
[network.ns3]
kind = "p2p"
data_rate = "1Mbps"
delay = "2ms"
[network.builtin]
delay = {{ kind = "constant", value = "2752us" }}
[network.server]
binary = "{server}"
{servo}"#,
        server = server_binary().display(),
        servo = ServoPid {
            nodes: None,
            extra: "uplink = { drop_stale = true }\ndownlink = { max_delay = \"20ms\" }",
            sensor: &format!("period = \"{sensor_period}\"\nnoise_std = 0.001"),
            pid: &format!("{PID_GAINS}\n{controller}"),
            ..ServoPid::default()
        }
        .toml()
    )
}

fn netloop(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netloop"))
        .args(args)
        .output()
        .unwrap()
}

fn run_scenario(dir: &Path, name: &str, text: &str, extra_args: &[&str]) -> std::path::PathBuf {
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, text).unwrap();
    let out = dir.join(name);
    let mut args = vec![
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra_args);
    let result = netloop(&args);
    assert_success(&result, name);
    out
}

fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One packet per direction per sync period, so no two packets ever wait
/// for the same link: then the ns-3 link and the builtin channel must agree
/// on every bit of the trajectory and every byte of packets.csv.
#[test]
fn ns3_link_with_fixed_delay_equals_the_builtin_channel() {
    let dir = tempfile::tempdir().unwrap();
    for scheme in ["time_stepping", "master_slave", "event_driven"] {
        for controller in [
            "trigger = \"event\"",
            "trigger = \"time\"\nperiod = \"10ms\"",
        ] {
            let text = scenario_sampled(scheme, controller, "", "10ms");
            let name = format!("{scheme}-{}", controller.len());
            let ns3 = run_scenario(dir.path(), &format!("{name}-ns3"), &text, &[]);
            let builtin = run_scenario(
                dir.path(),
                &format!("{name}-builtin"),
                &text,
                &["--network", "builtin"],
            );
            let label = format!("{scheme}, {controller}");
            assert!(
                bytes(&ns3.join("timeseries.csv")) == bytes(&builtin.join("timeseries.csv")),
                "{label}: trajectories differ"
            );
            assert!(
                bytes(&ns3.join("packets.csv")) == bytes(&builtin.join("packets.csv")),
                "{label}: packet fates differ"
            );
            let summary: serde_json::Value =
                serde_json::from_slice(&bytes(&ns3.join("summary.json"))).unwrap();
            assert!(
                summary["versions"]["network"]
                    .as_str()
                    .unwrap()
                    .contains("ns-3.37"),
                "ran over real ns-3"
            );
            assert!(summary["flows"][0]["accepted"].as_u64().unwrap() > 150);
        }
    }
}

#[test]
fn simultaneous_sends_queue_in_ns3_but_not_in_the_builtin_channel() {
    let dir = tempfile::tempdir().unwrap();
    let text = scenario("time_stepping", "trigger = \"time\"\nperiod = \"5ms\"", "");
    let ns3 = run_scenario(dir.path(), "ts-ns3", &text, &[]);
    let builtin = run_scenario(dir.path(), "ts-builtin", &text, &["--network", "builtin"]);
    // Time-stepping applies packets at the next sync boundary, so the
    // queueing delay does not move any sample: same trajectory.
    assert!(bytes(&ns3.join("timeseries.csv")) == bytes(&builtin.join("timeseries.csv")));
    assert_same_fates_with_queueing(&ns3, &builtin, "time-stepping, 5 ms samples");
}

/// Time-stepping hands a period's two 5 ms samples to the network at the
/// same sync instant: ns-3's device queue sends the second one after the
/// first, one transmission time (752 us) later, which a queueless builtin
/// channel does not model. Fates and trajectories still agree, and the
/// difference is exactly the queueing delay.
fn assert_same_fates_with_queueing(ns3: &Path, builtin: &Path, label: &str) {
    let rows = |dir: &Path| read_csv(&dir.join("packets.csv")).1;
    let (a, b) = (rows(ns3), rows(builtin));
    assert_eq!(a.len(), b.len(), "{label}");
    let mut queued = 0;
    for (x, y) in a.iter().zip(&b) {
        // flow, loop, direction, number, state, count, src, dst, size, sent ... fate (12), applied step (13)
        for column in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13] {
            assert_eq!(
                x.get(column),
                y.get(column),
                "{label}: column {column} of {x:?} vs {y:?}"
            );
        }
        let (dx, dy): (u64, u64) = (x[11].parse().unwrap_or(0), y[11].parse().unwrap_or(0));
        match dx - dy {
            0 => {}
            752_000 => queued += 1,
            other => panic!("{label}: delay differs by {other} ns: {x:?}"),
        }
    }
    assert!(
        queued > 100,
        "{label}: expected the second packet of each burst to queue"
    );
}

#[test]
fn ns3_runs_repeat_byte_for_byte_and_the_run_number_matters() {
    let dir = tempfile::tempdir().unwrap();
    let lossy = |run: u32| {
        scenario(
            "event_driven",
            "trigger = \"event\"",
            &format!("run = {run}"),
        )
        .replace("delay = \"2ms\"\n", "delay = \"2ms\"\nloss_rate = 0.1\n")
    };
    let a = run_scenario(dir.path(), "a", &lossy(1), &[]);
    let b = run_scenario(dir.path(), "b", &lossy(1), &[]);
    let c = run_scenario(dir.path(), "c", &lossy(2), &[]);
    for file in ["timeseries.csv", "packets.csv", "summary.json"] {
        assert!(
            bytes(&a.join(file)) == bytes(&b.join(file)),
            "{file} differs between identical runs"
        );
    }
    assert!(
        bytes(&a.join("packets.csv")) != bytes(&c.join("packets.csv")),
        "run 2 lost the same packets as run 1"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&bytes(&a.join("summary.json"))).unwrap();
    assert!(
        summary["totals"]["lost_phy"].as_u64().unwrap() > 20,
        "the link loses packets"
    );
}

/// Kills the server of a long master-slave run and checks the failure:
/// exit code 1, a message naming the simulated time the results reach (the
/// same, non-zero, as summary.json's `reached_ns`), whole partial files.
fn killing_the_server_fails_the_run_and_keeps_partial_results(sync: &str) {
    let dir = tempfile::tempdir().unwrap();
    // Long enough to be killed in the middle: 600 s simulated, 1 ms sync
    // periods. With lookahead (the default here: the controller is
    // time-triggered) the network runs ahead in 1 s windows of 1000 periods;
    // without it, it syncs every period.
    let text = scenario("master_slave", "trigger = \"time\"\nperiod = \"5ms\"", "")
        .replace("duration = \"2s\"", "duration = \"600s\"")
        .replace("period = \"10ms\"", &format!("period = \"1ms\"\n{sync}"));
    let file = dir.path().join("long.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.path().join("long");
    let child = Command::new(env!("CARGO_BIN_EXE_netloop"))
        .args([
            "run",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let server = loop {
        if let Some(pid) = crate::ns3_bridge_robustness::child_server_of(child.id()) {
            break pid;
        }
        assert!(Instant::now() < deadline, "no server started");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Let the run write a good part of its time series first: waiting for
    // bytes on disk, not for wall time, holds on a loaded machine too.
    let partial = out.join("timeseries.csv.partial");
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::metadata(&partial).map_or(0, |m| m.len()) < 32 * 1024 {
        assert!(
            Instant::now() < deadline,
            "the run wrote no time series within 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the server we found.
    assert_eq!(
        unsafe { libc::kill(server as libc::pid_t, libc::SIGKILL) },
        0
    );
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the ns-3 server died"), "{stderr}");
    let reached: SimTime = stderr
        .split_once("partial results up to simulated time ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no simulated time reached in {stderr}"))
        .parse()
        .unwrap_or_else(|e| panic!("{e}: {stderr}"));

    let summary: serde_json::Value =
        serde_json::from_slice(&bytes(&out.join("summary.json"))).unwrap();
    assert_eq!(summary["complete"], false);
    assert!(summary["error"]
        .as_str()
        .unwrap()
        .contains("simulated time"));
    assert!(
        reached > SimTime::ZERO && reached < SimTime::from_secs(600),
        "{stderr}"
    );
    assert_eq!(summary["reached_ns"].as_u64(), Some(reached.0), "{stderr}");
    // The partial files are whole CSV up to where the run got.
    assert!(
        !out.join("timeseries.csv").exists() && !out.join("packets.csv").exists(),
        "looks complete"
    );
    let (header, rows) = read_csv(&out.join("timeseries.csv.partial"));
    for row in &rows {
        assert_eq!(row.len(), header.len(), "a torn row");
    }
    let count = rows.len();
    assert!(count > 100, "only {count} rows kept");
    let packets = read_csv(&out.join("packets.csv.partial")).1.len();
    assert!(packets > 100);
}

#[test]
fn killing_the_server_with_lookahead_fails_the_run_and_keeps_partial_results() {
    killing_the_server_fails_the_run_and_keeps_partial_results("");
}

#[test]
fn killing_the_server_without_lookahead_fails_the_run_and_keeps_partial_results() {
    killing_the_server_fails_the_run_and_keeps_partial_results("lookahead = false");
}

/// A run that ns-3 refuses to configure (a loop on node 2 of a network the
/// server was told, by an extra argument, has two nodes) still leaves its
/// error record: summary.json with `"complete": false` and the server's
/// reason, at simulated time 0, and the data files under partial names.
#[test]
fn a_configuration_the_server_rejects_leaves_an_error_record() {
    let dir = tempfile::tempdir().unwrap();
    let text = scenario("master_slave", "trigger = \"time\"\nperiod = \"10ms\"", "")
        .replace("name = \"servo\"", "name = \"servo\"\ncontroller_node = 2")
        .replace(
            "[network.server]",
            "[network.server]\nargs = [\"--nodes=2\"]",
        );
    let file = dir.path().join("rejected.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.path().join("rejected");
    let output = netloop(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("InvalidConfig")
            && stderr.contains("partial results up to simulated time 0s"),
        "{stderr}"
    );

    let summary: serde_json::Value =
        serde_json::from_slice(&bytes(&out.join("summary.json"))).unwrap();
    assert_eq!(summary["complete"], false);
    let error = summary["error"].as_str().unwrap();
    assert!(
        error.contains("InvalidConfig") && error.contains('2'),
        "{error}"
    );
    assert_eq!(summary["reached_ns"], 0);
    assert_eq!(summary["totals"]["sent"], 0);
    assert!(
        out.join("timeseries.csv.partial").exists() && out.join("packets.csv.partial").exists()
    );
    assert!(
        !out.join("timeseries.csv").exists() && !out.join("packets.csv").exists(),
        "looks complete"
    );
}
