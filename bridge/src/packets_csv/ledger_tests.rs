//! The ledger's tests (netloop_cosim::ledger), here because they read the
//! rows [`PacketsCsv`] writes from its fate events.

use protocol::{Delivery, DropEvent, DropReason, SimTime};

use crate::config::{LoopNetwork, OnLoss, ResolvedFlow, ResponseKind, TransportKind};
use crate::flows::{Direction, FlowTable};
use crate::ledger::*;
use crate::network::Violation;
use crate::packets_csv::PacketsCsv;

const UPLINK: u32 = 0;
const VALUES: [f64; 2] = [1.5, -2.0];

fn flow(port: u16) -> ResolvedFlow {
    ResolvedFlow {
        port,
        size: 64,
        multi_packet: false,
        transport: TransportKind::Udp,
        max_delay: None,
        drop_stale: false,
        on_loss: OnLoss::Hold,
    }
}

/// One loop over the network (uplink flow 0, downlink flow 1) with
/// packet 0 of the uplink sent at 10 ms, carrying [`VALUES`].
fn ledger() -> Ledger<PacketsCsv<Vec<u8>>> {
    ledger_into(PacketsCsv::new(Vec::new()))
}

/// [`ledger`] with its events going to `sink`.
fn ledger_into<S: FateSink>(sink: S) -> Ledger<S> {
    let lp = LoopNetwork {
        plant_node: 0,
        controller_node: 1,
        response: ResponseKind::Direct,
        uplink: flow(9000),
        downlink: flow(9001),
        feedforward: None,
        mobility: None,
    };
    let mut ledger = Ledger::new(FlowTable::new(&[lp]), vec!["servo".into()], sink);
    ledger.announce(UPLINK, 0, 1, SimTime::from_millis(10), 64);
    ledger.set_values(UPLINK, 0, &VALUES);
    ledger
}

fn delivery(number: u64, received_ms: u64) -> Delivery {
    Delivery {
        flow: UPLINK,
        number,
        state_index: 0,
        state_count: 1,
        sent: SimTime::from_millis(10),
        received: SimTime::from_millis(received_ms),
        size: 64,
    }
}

fn loss(number: u64, time_ms: u64) -> DropEvent {
    DropEvent {
        flow: UPLINK,
        number,
        state_index: 0,
        state_count: 1,
        sent: SimTime::from_millis(10),
        time: SimTime::from_millis(time_ms),
        node: 0,
        reason: DropReason::Queue,
    }
}

/// The rows of packets.csv, after the run is closed.
fn rows(mut ledger: Ledger<PacketsCsv<Vec<u8>>>) -> (FlowCounts, Vec<csv::StringRecord>) {
    ledger.close_in_flight().unwrap();
    let counts = ledger.counts()[UPLINK as usize].clone();
    let out = ledger.into_inner().unwrap();
    let mut reader = csv::Reader::from_reader(out.as_slice());
    (counts, reader.records().map(Result::unwrap).collect())
}

fn field<'a>(row: &'a csv::StringRecord, name: &str) -> &'a str {
    let columns = [
        "flow",
        "loop",
        "direction",
        "number",
        "state_index",
        "state_count",
        "src",
        "dst",
        "size",
        "sent_ns",
        "arrival_ns",
        "delay_ns",
        "fate",
        "applied_step",
        "lost_at_ns",
        "lost_node",
    ];
    &row[columns.iter().position(|c| *c == name).unwrap()]
}

/// Keeps the events it is given, as (number, fate, arrival, applied
/// step, loss), and says when it was flushed and finished.
#[derive(Default)]
struct Keep {
    events: Vec<(
        u64,
        Fate,
        Option<SimTime>,
        Option<u64>,
        Option<(SimTime, u32)>,
    )>,
    flushed: bool,
}

impl FateSink for Keep {
    type Output = Keep;
    fn record(&mut self, e: &FateEvent<'_>) -> Result<(), String> {
        assert_eq!(
            (e.flow, e.loop_name, e.direction),
            (UPLINK, "servo", Direction::Uplink)
        );
        assert_eq!((e.src, e.dst, e.size), (0, 1, 64));
        assert!(!self.flushed, "an event after the flush");
        self.events
            .push((e.number, e.fate, e.arrival, e.applied_step, e.lost));
        Ok(())
    }
    fn flush(&mut self) -> Result<(), String> {
        self.flushed = true;
        Ok(())
    }
    fn finish(self) -> Result<Keep, String> {
        Ok(self)
    }
}

/// The ledger's output is events, not a file: one per packet, in the
/// order the packets are resolved, those still in flight at the close.
#[test]
fn emits_one_fate_event_per_packet_as_it_is_resolved() {
    let mut ledger = ledger_into(Keep::default());
    for number in [1, 2] {
        ledger.announce(UPLINK, number, 1, SimTime::from_millis(10), 64);
        ledger.set_values(UPLINK, number, &VALUES);
    }
    ledger.lose(&loss(1, 11)).unwrap();
    assert_eq!(
        ledger.deliver(&delivery(0, 12), 12),
        Ok(Verdict::Accept {
            values: VALUES.to_vec(),
            component: None
        })
    );
    ledger.close_in_flight().unwrap();
    let keep = ledger.into_inner().unwrap();
    assert!(keep.flushed);
    let ms = SimTime::from_millis;
    assert_eq!(
        keep.events,
        [
            (
                1,
                Fate::Lost(DropReason::Queue),
                None,
                None,
                Some((ms(11), 0))
            ),
            (0, Fate::Accepted, Some(ms(12)), Some(12), None),
            (2, Fate::InFlight, None, None, None),
        ]
    );
}

#[test]
fn a_loss_then_a_delivery_stays_a_loss_and_counts_a_late_delivery() {
    let mut ledger = ledger();
    assert_eq!(ledger.report_loss(&loss(0, 15)), Ok(true));
    // The copy on the air arrives before the loss is applied ...
    assert_eq!(ledger.report_delivery(&delivery(0, 16)), Ok(false));
    ledger.lose(&loss(0, 15)).unwrap();
    // ... and another one after.
    assert_eq!(ledger.report_delivery(&delivery(0, 17)), Ok(false));
    assert_eq!(
        ledger.delay_stats(UPLINK).count,
        0,
        "a late delivery is no delay sample"
    );
    let (counts, rows) = rows(ledger);
    assert_eq!(rows.len(), 1);
    assert_eq!(field(&rows[0], "fate"), "lost_queue");
    assert_eq!(field(&rows[0], "lost_at_ns"), "15000000");
    assert_eq!(field(&rows[0], "arrival_ns"), "");
    assert_eq!(
        counts,
        FlowCounts {
            sent: 1,
            lost_queue: 1,
            late_deliveries: 2,
            ..FlowCounts::default()
        }
    );
}

#[test]
fn a_delivery_then_a_loss_stays_a_delivery_and_counts_a_late_loss() {
    let mut ledger = ledger();
    assert_eq!(ledger.report_delivery(&delivery(0, 13)), Ok(true));
    assert_eq!(ledger.report_loss(&loss(0, 14)), Ok(false));
    let verdict = ledger.deliver(&delivery(0, 13), 13).unwrap();
    assert_eq!(
        verdict,
        Verdict::Accept {
            values: VALUES.to_vec(),
            component: None
        }
    );
    assert_eq!(ledger.report_loss(&loss(0, 20)), Ok(false));
    let (counts, rows) = rows(ledger);
    assert_eq!(rows.len(), 1);
    assert_eq!(field(&rows[0], "fate"), "accepted");
    assert_eq!(field(&rows[0], "delay_ns"), "3000000");
    assert_eq!(field(&rows[0], "lost_at_ns"), "");
    assert_eq!(
        counts,
        FlowCounts {
            sent: 1,
            delivered: 1,
            accepted: 1,
            late_losses: 2,
            ..FlowCounts::default()
        }
    );
}

#[test]
fn a_duplicate_delivery_is_applied_once_and_counted() {
    let mut ledger = ledger();
    assert_eq!(ledger.report_delivery(&delivery(0, 12)), Ok(true));
    assert_eq!(ledger.report_delivery(&delivery(0, 12)), Ok(false));
    ledger.deliver(&delivery(0, 12), 12).unwrap();
    assert_eq!(ledger.report_delivery(&delivery(0, 19)), Ok(false));
    assert_eq!(ledger.delay_stats(UPLINK).count, 1);
    let (counts, rows) = rows(ledger);
    assert_eq!(rows.len(), 1);
    assert_eq!(field(&rows[0], "fate"), "accepted");
    assert_eq!(field(&rows[0], "arrival_ns"), "12000000");
    assert_eq!(
        counts,
        FlowCounts {
            sent: 1,
            delivered: 1,
            accepted: 1,
            duplicate_deliveries: 2,
            ..FlowCounts::default()
        }
    );
}

#[test]
fn a_second_loss_report_is_a_late_loss() {
    let mut ledger = ledger();
    assert_eq!(ledger.report_loss(&loss(0, 11)), Ok(true));
    assert_eq!(ledger.report_loss(&loss(0, 12)), Ok(false));
    ledger.lose(&loss(0, 11)).unwrap();
    let (counts, rows) = rows(ledger);
    assert_eq!((rows.len(), field(&rows[0], "lost_at_ns")), (1, "11000000"));
    assert_eq!(
        counts,
        FlowCounts {
            sent: 1,
            lost_queue: 1,
            late_losses: 1,
            ..FlowCounts::default()
        }
    );
}

/// A first report still waiting for its boundary ends the run as in
/// flight, like any packet not applied by the end.
#[test]
fn a_settled_packet_not_yet_applied_ends_in_flight() {
    let mut ledger = ledger();
    assert_eq!(ledger.report_delivery(&delivery(0, 12)), Ok(true));
    let (counts, rows) = rows(ledger);
    assert_eq!(field(&rows[0], "fate"), "in_flight");
    assert_eq!(
        counts,
        FlowCounts {
            sent: 1,
            in_flight: 1,
            ..FlowCounts::default()
        }
    );
}

#[test]
fn reports_that_are_not_network_behaviour_are_violations() {
    let mut ledger = ledger();
    let mut on_flow_7 = delivery(0, 12);
    on_flow_7.flow = 7;
    assert_eq!(
        ledger.report_delivery(&on_flow_7),
        Err(Violation::UnknownFlow {
            flow: 7,
            number: 0,
            state_index: 0,
            flows: 2
        })
    );
    let mut lost_on_flow_7 = loss(0, 12);
    lost_on_flow_7.flow = 7;
    assert!(matches!(
        ledger.report_loss(&lost_on_flow_7),
        Err(Violation::UnknownFlow { flow: 7, .. })
    ));
    assert_eq!(
        ledger.report_delivery(&delivery(1, 12)),
        Err(Violation::UnknownPacket {
            flow: UPLINK,
            number: 1,
            state_index: 0
        })
    );
    let mut second_state = delivery(0, 12);
    second_state.state_index = 1;
    assert_eq!(
        ledger.report_delivery(&second_state),
        Err(Violation::UnknownPacket {
            flow: UPLINK,
            number: 0,
            state_index: 1
        })
    );
    // Sent at 10 ms: netloop's own record counts, whatever the tag says.
    let mut early = delivery(0, 9);
    early.sent = SimTime::from_millis(5);
    let err = ledger.report_delivery(&early).unwrap_err();
    assert_eq!(
        err,
        Violation::DeliveredBeforeSent {
            flow: UPLINK,
            number: 0,
            state_index: 0,
            at: SimTime::from_millis(9),
            sent: SimTime::from_millis(10)
        }
    );
    assert_eq!(
        err.to_string(),
        "it delivered packet 0 (state 0) of flow 0 at 9ms, before it was sent at 10ms"
    );
    assert!(matches!(
        ledger.report_loss(&loss(0, 9)),
        Err(Violation::LostBeforeSent { .. })
    ));
    // None of these settled the packet.
    assert_eq!(ledger.report_delivery(&delivery(0, 12)), Ok(true));
    assert_eq!(
        ledger.counts()[0],
        FlowCounts {
            sent: 1,
            ..FlowCounts::default()
        }
    );
}

/// Long after a packet is resolved and freed, a report of it is still
/// told apart from one of a packet never sent.
#[test]
fn resolved_packets_are_remembered_by_number() {
    let mut ledger = ledger();
    for number in 1..5 {
        ledger.announce(UPLINK, number, 1, SimTime::from_millis(10 + number), 64);
        ledger.set_values(UPLINK, number, &VALUES);
    }
    for number in 0..5 {
        assert_eq!(ledger.report_loss(&loss(number, 20)), Ok(true));
        ledger.lose(&loss(number, 20)).unwrap();
    }
    assert_eq!(ledger.report_delivery(&delivery(3, 30)), Ok(false));
    assert!(matches!(
        ledger.report_delivery(&delivery(5, 30)),
        Err(Violation::UnknownPacket { number: 5, .. })
    ));
    assert_eq!(ledger.counts()[0].late_deliveries, 1);
}
