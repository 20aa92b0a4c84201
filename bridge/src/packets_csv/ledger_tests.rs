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

/// One thing that happens to packet 0 (sent at 10 ms) in a
/// [`ReportCase`], at a time in milliseconds.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// The network reports a copy received then; whether that report is
    /// the first, which settles the packet.
    Delivered(u64, bool),
    /// The network reports the packet lost then; whether that report is
    /// the first.
    Lost(u64, bool),
    /// The boundary applies the settled delivery (received then, applied
    /// at that step): [`VALUES`] are accepted.
    ApplyDelivery(u64),
    /// The boundary applies the settled loss (lost then).
    ApplyLoss(u64),
}

/// Reports of one packet in some order, and what the ledger makes of them:
/// the first report settles the packet, every later one is only counted.
struct ReportCase {
    what: &'static str,
    events: &'static [Event],
    /// The packet's row of packets.csv, by column.
    row: &'static [(&'static str, &'static str)],
    counts: FlowCounts,
}

fn report_cases() -> Vec<ReportCase> {
    use Event::*;
    vec![
        ReportCase {
            what: "a loss, then a delivery before and after it is applied",
            events: &[
                Lost(15, true),
                Delivered(16, false),
                ApplyLoss(15),
                Delivered(17, false),
            ],
            row: &[
                ("fate", "lost_queue"),
                ("lost_at_ns", "15000000"),
                ("arrival_ns", ""),
            ],
            counts: FlowCounts {
                sent: 1,
                lost_queue: 1,
                late_deliveries: 2,
                ..FlowCounts::default()
            },
        },
        ReportCase {
            what: "a delivery, then a loss before and after it is applied",
            events: &[
                Delivered(13, true),
                Lost(14, false),
                ApplyDelivery(13),
                Lost(20, false),
            ],
            row: &[
                ("fate", "accepted"),
                ("delay_ns", "3000000"),
                ("lost_at_ns", ""),
            ],
            counts: FlowCounts {
                sent: 1,
                delivered: 1,
                accepted: 1,
                late_losses: 2,
                ..FlowCounts::default()
            },
        },
        ReportCase {
            what: "a duplicate delivery, before and after it is applied",
            events: &[
                Delivered(12, true),
                Delivered(12, false),
                ApplyDelivery(12),
                Delivered(19, false),
            ],
            row: &[("fate", "accepted"), ("arrival_ns", "12000000")],
            counts: FlowCounts {
                sent: 1,
                delivered: 1,
                accepted: 1,
                duplicate_deliveries: 2,
                ..FlowCounts::default()
            },
        },
        ReportCase {
            what: "a second loss report",
            events: &[Lost(11, true), Lost(12, false), ApplyLoss(11)],
            row: &[("fate", "lost_queue"), ("lost_at_ns", "11000000")],
            counts: FlowCounts {
                sent: 1,
                lost_queue: 1,
                late_losses: 1,
                ..FlowCounts::default()
            },
        },
        // A first report still waiting for its boundary ends the run as in
        // flight, like any packet not applied by the end.
        ReportCase {
            what: "a settled delivery never applied",
            events: &[Delivered(12, true)],
            row: &[("fate", "in_flight"), ("arrival_ns", "")],
            counts: FlowCounts {
                sent: 1,
                in_flight: 1,
                ..FlowCounts::default()
            },
        },
    ]
}

#[test]
fn the_first_report_settles_a_packet_and_later_ones_are_counted() {
    for case in report_cases() {
        let what = case.what;
        let mut ledger = ledger();
        let mut applied_deliveries = 0;
        for &event in case.events {
            match event {
                Event::Delivered(ms, first) => {
                    let report = ledger.report_delivery(&delivery(0, ms));
                    assert_eq!(report, Ok(first), "{what}: {event:?}");
                }
                Event::Lost(ms, first) => {
                    let report = ledger.report_loss(&loss(0, ms));
                    assert_eq!(report, Ok(first), "{what}: {event:?}");
                }
                Event::ApplyDelivery(ms) => {
                    let verdict = ledger.deliver(&delivery(0, ms), ms);
                    let accepted = Verdict::Accept {
                        values: VALUES.to_vec(),
                        component: None,
                    };
                    assert_eq!(verdict, Ok(accepted), "{what}");
                    applied_deliveries += 1;
                }
                Event::ApplyLoss(ms) => ledger.lose(&loss(0, ms)).unwrap(),
            }
        }
        // Only an applied delivery is a delay sample, a late one is not.
        assert_eq!(
            ledger.delay_stats(UPLINK).count,
            applied_deliveries,
            "{what}"
        );
        let (counts, rows) = rows(ledger);
        assert_eq!(rows.len(), 1, "{what}");
        for &(column, value) in case.row {
            assert_eq!(field(&rows[0], column), value, "{what}: {column}");
        }
        assert_eq!(counts, case.counts, "{what}");
    }
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
