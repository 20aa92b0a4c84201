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

mod versus_ns3;

use bridge::config::{Resolved, SchemeKind};
use protocol::SimTime;

use versus_ns3::{example, interleave, median, servo_p2p_alone};

const ROUNDS: usize = 9;

fn scenario(scheme: SchemeKind, period: Option<SimTime>, lookahead: bool) -> Resolved {
    let mut s = example("dc_servo_p2p.toml");
    s.duration = SimTime::from_secs(60);
    s.sync.scheme = scheme;
    s.sync.period = period;
    s.sync.lookahead = lookahead;
    s.resolve().unwrap()
}

/// ns-3 alone with the loop's traffic, checked to send what the loop sends.
fn ns3_alone() -> f64 {
    let (wall, line) = servo_p2p_alone(None);
    assert!(
        line.contains("\"sent\":6000"),
        "standalone sends what the loop sends: {line}"
    );
    wall
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
    let resolved: Vec<&Resolved> = variants.iter().map(|(_, r)| r).collect();
    let mut rounds = interleave(ROUNDS, &resolved, ns3_alone, |_| {});
    println!("# 60 s servo over p2p (1 Mbps, 2 ms), {ROUNDS} interleaved rounds, medians");
    let names: Vec<&str> = variants.iter().map(|(name, _)| *name).collect();
    let medians = rounds.print_table(&names, 36, 9);
    let (syncs, walls) = (&rounds.syncs, &rounds.walls);
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
