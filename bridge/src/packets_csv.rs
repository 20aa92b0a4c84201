//! `packets.csv`: one row per packet, written as the ledger settles each
//! packet's fate ([`FateEvent`]s, docs/design.md §5.4 and §8.3).
//!
//! The ledger decides and emits; this writer is the application's side of
//! it, so the co-simulation core does no file I/O. The rows come in the
//! ledger's order: as packets are resolved, then the ones still in flight at
//! the end.

use std::io::Write;

use serde::Serialize;

use crate::ledger::{FateEvent, FateSink};

/// One row of `packets.csv`; the field order is the column order.
#[derive(Serialize)]
struct Row<'a> {
    flow: u32,
    #[serde(rename = "loop")]
    loop_name: &'a str,
    direction: &'static str,
    number: u64,
    state_index: u16,
    state_count: u16,
    src: u32,
    dst: u32,
    size: u32,
    sent_ns: u64,
    arrival_ns: Option<u64>,
    delay_ns: Option<u64>,
    fate: &'static str,
    applied_step: Option<u64>,
    lost_at_ns: Option<u64>,
    lost_node: Option<u32>,
}

impl<'a> From<&FateEvent<'a>> for Row<'a> {
    fn from(e: &FateEvent<'a>) -> Self {
        Row {
            flow: e.flow,
            loop_name: e.loop_name,
            direction: e.direction.as_str(),
            number: e.number,
            state_index: e.state_index,
            state_count: e.state_count,
            src: e.src,
            dst: e.dst,
            size: e.size,
            sent_ns: e.sent.0,
            arrival_ns: e.arrival.map(|t| t.0),
            delay_ns: e.arrival.map(|t| t.0.saturating_sub(e.sent.0)),
            fate: e.fate.as_str(),
            applied_step: e.applied_step,
            lost_at_ns: e.lost.map(|(t, _)| t.0),
            lost_node: e.lost.map(|(_, n)| n),
        }
    }
}

/// Writes the ledger's fate events to `out` as `packets.csv` (with its
/// header); [`FateSink::finish`] flushes and gives `out` back.
pub struct PacketsCsv<W: Write> {
    csv: csv::Writer<W>,
}

impl<W: Write> PacketsCsv<W> {
    pub fn new(out: W) -> Self {
        PacketsCsv {
            csv: csv::WriterBuilder::new().has_headers(true).from_writer(out),
        }
    }
}

fn failed(e: impl std::fmt::Display) -> String {
    format!("cannot write packets.csv: {e}")
}

impl<W: Write> FateSink for PacketsCsv<W> {
    type Output = W;

    fn record(&mut self, event: &FateEvent<'_>) -> Result<(), String> {
        self.csv.serialize(Row::from(event)).map_err(failed)
    }

    fn flush(&mut self) -> Result<(), String> {
        self.csv.flush().map_err(failed)
    }

    fn finish(self) -> Result<W, String> {
        self.csv.into_inner().map_err(failed)
    }
}

#[cfg(test)]
mod ledger_tests;

#[cfg(test)]
mod tests {
    use protocol::{DropReason, SimTime};

    use super::*;
    use crate::flows::Direction;
    use crate::ledger::{Fate, PolicyDrop};

    fn event(fate: Fate) -> FateEvent<'static> {
        FateEvent {
            flow: 1,
            loop_name: "servo",
            direction: Direction::Downlink,
            number: 7,
            state_index: 0,
            state_count: 1,
            src: 1,
            dst: 0,
            size: 64,
            sent: SimTime::from_millis(10),
            arrival: None,
            fate,
            applied_step: None,
            lost: None,
        }
    }

    /// The header and one row of each kind, byte for byte: the columns are
    /// the contract of docs/design.md §8.3 and the Python package.
    #[test]
    fn writes_the_header_and_one_row_per_event() {
        let mut csv = PacketsCsv::new(Vec::new());
        let accepted = FateEvent {
            arrival: Some(SimTime::from_micros(12_500)),
            applied_step: Some(13),
            ..event(Fate::Accepted)
        };
        let stale = FateEvent {
            arrival: Some(SimTime::from_millis(11)),
            ..event(Fate::Dropped(PolicyDrop::Stale))
        };
        let lost = FateEvent {
            lost: Some((SimTime::from_millis(11), 2)),
            ..event(Fate::Lost(DropReason::Mac))
        };
        for e in [&accepted, &stale, &lost, &event(Fate::InFlight)] {
            csv.record(e).unwrap();
        }
        let text = String::from_utf8(csv.finish().unwrap()).unwrap();
        assert_eq!(
            text,
            "flow,loop,direction,number,state_index,state_count,src,dst,size,sent_ns,arrival_ns,delay_ns,fate,applied_step,lost_at_ns,lost_node\n\
             1,servo,downlink,7,0,1,1,0,64,10000000,12500000,2500000,accepted,13,,\n\
             1,servo,downlink,7,0,1,1,0,64,10000000,11000000,1000000,dropped_stale,,,\n\
             1,servo,downlink,7,0,1,1,0,64,10000000,,,lost_mac,,11000000,2\n\
             1,servo,downlink,7,0,1,1,0,64,10000000,,,in_flight,,,\n"
        );
    }
}
