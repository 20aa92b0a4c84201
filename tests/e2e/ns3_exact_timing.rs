//! Packets over a point-to-point link arrive at exactly
//! send + d + (bytes on the wire × 8 / R), with all four tags intact.

use protocol::{SendRequest, SimTime};

use crate::support::*;

/// 8 Mbps makes one byte exactly 1 µs on the wire.
const RATE_BPS: u64 = 8_000_000;
const DELAY: SimTime = SimTime(3_000_000);
const PAYLOAD: u32 = 100;
/// UDP (8) + IPv4 (20) + PPP (2) headers.
const HEADERS: u64 = 30;

fn expected_arrival(sent: SimTime) -> SimTime {
    let wire_bits = (PAYLOAD as u64 + HEADERS) * 8;
    sent + DELAY + SimTime(wire_bits * 1_000_000_000 / RATE_BPS)
}

#[test]
fn two_hundred_packets_arrive_to_the_nanosecond_with_their_tags() {
    let mut client = bridge::ns3::Ns3Client::start(&options(&[
        "--network=p2p",
        "--nodes=2",
        "--dataRate=8Mbps",
        "--delay=3ms",
    ]))
    .unwrap();
    client.configure(vec![udp_flow(0, 0, 1)]).unwrap();

    // Irregular send times (a prime number of ns apart, not on any grid) and
    // every state index, so that no tag can be right by accident.
    let sends: Vec<SendRequest> = (0..200u64)
        .map(|i| SendRequest {
            flow: 0,
            number: 1000 + i,
            state_index: (i % 5) as u16,
            state_count: 5,
            time: SimTime(i * 1_000_003 + 17),
            size: PAYLOAD,
        })
        .collect();
    // Three steps: sends cross step boundaries, some arrive in a later step.
    let mut deliveries = Vec::new();
    let boundaries = [
        SimTime::from_millis(70),
        SimTime::from_millis(150),
        SimTime::from_millis(300),
    ];
    let mut remaining = sends.clone();
    for until in boundaries {
        let now: Vec<SendRequest> = remaining
            .iter()
            .filter(|s| s.time < until)
            .cloned()
            .collect();
        remaining.retain(|s| s.time >= until);
        deliveries.extend(step(&mut client, until, now).deliveries);
    }
    assert!(remaining.is_empty());
    assert_eq!(deliveries.len(), 200, "every packet delivered");
    for (sent, got) in sends.iter().zip(&deliveries) {
        assert_eq!(got.flow, 0, "PacketPortTag maps back to the flow");
        assert_eq!(got.number, sent.number, "PacketNumTag");
        assert_eq!(
            (got.state_index, got.state_count),
            (sent.state_index, 5),
            "StateNumTag"
        );
        assert_eq!(got.sent, sent.time, "SendTimeTag");
        assert_eq!(got.size, PAYLOAD);
        assert_eq!(
            got.received,
            expected_arrival(sent.time),
            "packet {}",
            sent.number
        );
    }
    let summary = client.finish().unwrap();
    assert_eq!(
        (
            summary.flows[0].sent,
            summary.flows[0].delivered,
            summary.flows[0].dropped
        ),
        (200, 200, 0)
    );
}
