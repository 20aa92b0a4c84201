//! `scripts/bench.sh overhead`: a 60 s simulated two-node servo loop over a
//! point-to-point link (examples/dc_servo_p2p.toml: 10 ms sampling, a
//! time-triggered PID, 1 Mbps and 2 ms), co-simulated under master-slave at
//! T = 10 ms and T = 1 ms, against ns-3 alone sending the same packets from
//! its own schedule (`netloop-server --standalone`). Also event-driven's
//! sync count and wall time against master-slave's, and master-slave
//! without lookahead to show what lookahead buys.
//!
//! Every variant is a whole run as a user starts it: server process
//! start-up included, outputs written (time series of every step). The
//! variants alternate in rounds on a shared, noisy machine; each ratio is
//! the median over rounds of that round's ratio. The last line is
//! `overhead_ratio_1ms=<co-simulation / ns-3 alone at T = 1 ms>`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use bridge::config::{Resolved, Scenario, SchemeKind};
use bridge::ns3::default_server_path;
use bridge::run::{run, RunOptions};
use protocol::SimTime;

const ROUNDS: usize = 9;

fn scenario(scheme: SchemeKind, period: Option<SimTime>, lookahead: bool) -> Resolved {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/dc_servo_p2p.toml");
    let mut s = Scenario::from_toml(&std::fs::read_to_string(path).unwrap()).unwrap();
    s.duration = SimTime::from_secs(60);
    s.sync.scheme = scheme;
    s.sync.period = period;
    s.sync.lookahead = lookahead;
    s.resolve().unwrap()
}

fn cosim(resolved: &Resolved, out: &Path) -> (Duration, u64) {
    let options = RunOptions {
        out_dir: out.to_path_buf(),
        ..Default::default()
    };
    let started = Instant::now();
    let report = run(resolved, &options).expect("co-simulation runs");
    (started.elapsed(), report.summary.sync.syncs)
}

fn ns3_alone() -> Duration {
    let started = Instant::now();
    let output = Command::new(default_server_path())
        .args([
            "--network=p2p",
            "--nodes=2",
            "--dataRate=1Mbps",
            "--delay=2ms",
            "--standalone",
            "--standaloneFlows=0>1:9000:64:10ms;1>0:9001:64:10ms",
            "--stopTime=60s",
        ])
        .output()
        .expect("start netloop-server (scripts/setup.sh builds it)");
    let wall = started.elapsed();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = String::from_utf8_lossy(&output.stdout);
    assert!(
        line.contains("\"sent\":6000"),
        "standalone sends what the loop sends: {line}"
    );
    wall
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let ms = SimTime::from_millis;
    let variants = [
        (
            "master-slave T=10ms",
            scenario(SchemeKind::MasterSlave, Some(ms(10)), true),
        ),
        (
            "master-slave T=1ms",
            scenario(SchemeKind::MasterSlave, Some(ms(1)), true),
        ),
        (
            "master-slave T=1ms, no lookahead",
            scenario(SchemeKind::MasterSlave, Some(ms(1)), false),
        ),
        (
            "event-driven",
            scenario(SchemeKind::EventDriven, None, true),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    // Warm the page cache: ns-3's libraries are large.
    ns3_alone();
    let mut alone = Vec::new();
    let mut walls = vec![Vec::new(); variants.len()];
    let mut ratios = vec![Vec::new(); variants.len()];
    let mut syncs = vec![0; variants.len()];
    for _ in 0..ROUNDS {
        let reference = ns3_alone().as_secs_f64();
        alone.push(reference);
        for (i, (_, resolved)) in variants.iter().enumerate() {
            let (wall, count) = cosim(resolved, &dir.path().join(i.to_string()));
            walls[i].push(wall.as_secs_f64());
            ratios[i].push(wall.as_secs_f64() / reference);
            syncs[i] = count;
        }
    }
    println!("# 60 s servo over p2p (1 Mbps, 2 ms), {ROUNDS} interleaved rounds, medians");
    println!(
        "{:<36} {:>9} {:>8} {:>9}",
        "variant", "wall_s", "syncs", "ratio"
    );
    println!(
        "{:<36} {:>9.3} {:>8} {:>9}",
        "ns-3 alone (--standalone)",
        median(&mut alone),
        "-",
        "1"
    );
    let mut medians = Vec::new();
    for (i, (name, _)) in variants.iter().enumerate() {
        let ratio = median(&mut ratios[i]);
        medians.push(ratio);
        println!(
            "{:<36} {:>9.3} {:>8} {:>9.3}",
            name,
            median(&mut walls[i]),
            syncs[i],
            ratio
        );
    }
    println!(
        "event_driven_syncs={} master_slave_syncs_10ms={}",
        syncs[3], syncs[0]
    );
    println!(
        "event_driven_vs_master_slave_wall={:.3}",
        median(&mut walls[3].clone()) / median(&mut walls[0].clone())
    );
    println!("overhead_ratio_1ms_no_lookahead={:.3}", medians[2]);
    println!("overhead_ratio_10ms={:.3}", medians[0]);
    println!("overhead_ratio_1ms={:.3}", medians[1]);
}
