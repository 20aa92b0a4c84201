//! The receive error model loses packets reproducibly: the same seed and run
//! lose the same packets, another run loses others, and the fraction lost
//! matches the configured rate.

use std::collections::BTreeSet;

use protocol::{DropReason, SimTime};

use crate::support::*;

/// Sends `n` packets one per millisecond with the given run number; returns
/// the numbers of the lost ones, checking that every packet is accounted for.
fn lost_packets(n: u64, run: u32) -> BTreeSet<u64> {
    let run_arg = format!("--run={run}");
    let mut client = bridge::ns3::Ns3Client::start(&options(&[
        "--network=p2p",
        "--nodes=2",
        "--dataRate=10Mbps",
        "--delay=1ms",
        "--lossRate=0.2",
        "--seed=42",
        &run_arg,
    ]))
    .unwrap();
    client.configure(vec![udp_flow(0, 0, 1)]).unwrap();
    let sends = (0..n)
        .map(|i| send(0, i, SimTime::from_millis(i), 50))
        .collect();
    let done = step(&mut client, SimTime::from_millis(n + 100), sends);
    let delivered: BTreeSet<u64> = done.deliveries.iter().map(|d| d.number).collect();
    let dropped: BTreeSet<u64> = done.drops.iter().map(|d| d.number).collect();
    assert!(
        done.drops
            .iter()
            .all(|d| d.reason == DropReason::Phy && d.node == 1),
        "error-model drops at the receiver"
    );
    assert!(delivered.is_disjoint(&dropped));
    assert_eq!(
        delivered.len() + dropped.len(),
        n as usize,
        "no packet unaccounted for"
    );
    client.finish().unwrap();
    dropped
}

#[test]
fn same_seed_same_losses_other_run_other_losses() {
    let first = lost_packets(1000, 1);
    assert_eq!(first, lost_packets(1000, 1));
    assert_ne!(first, lost_packets(1000, 2));
}

#[test]
fn loss_fraction_is_within_three_sigma_of_the_rate() {
    let n = 5000u64;
    let lost = lost_packets(n, 3).len() as f64;
    let sigma = (n as f64 * 0.2 * 0.8).sqrt();
    assert!(
        (lost - 0.2 * n as f64).abs() < 3.0 * sigma,
        "lost {lost} of {n}, expected 1000 ± {:.0}",
        3.0 * sigma
    );
}
