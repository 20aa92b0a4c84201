//! The bridge's packet ledger: the values each packet carries (the network
//! only carries sizes and tags), the receivers' policies, and the fate of
//! every packet, streamed to `packets.csv` as each one is resolved.
//!
//! Values are keyed by (flow, packet number); a multi-packet sample shares
//! one number and its packet `state_index` carries component `state_index`.
//! An entry is freed when all its packets are resolved, so memory follows the
//! packets in flight, not the length of the run. Delay samples are kept per
//! flow (8 bytes per delivered packet) for exact percentiles.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use protocol::{Delivery, DropEvent, DropReason, SimTime};
use serde::Serialize;

use crate::flows::FlowTable;
use crate::metrics::DelayStats;

/// Why a delivered packet was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyDrop {
    /// Its delay exceeded the flow's `max_delay`.
    MaxDelay,
    /// Its number was not above the last accepted one (`drop_stale`).
    Stale,
}

/// The end of a packet's story.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Accepted,
    Dropped(PolicyDrop),
    Lost(DropReason),
    InFlight,
}

impl Fate {
    pub fn as_str(self) -> &'static str {
        match self {
            Fate::Accepted => "accepted",
            Fate::Dropped(PolicyDrop::MaxDelay) => "dropped_max_delay",
            Fate::Dropped(PolicyDrop::Stale) => "dropped_stale",
            Fate::Lost(DropReason::Queue) => "lost_queue",
            Fate::Lost(DropReason::Phy) => "lost_phy",
            Fate::Lost(DropReason::Mac) => "lost_mac",
            Fate::Lost(DropReason::Routing) => "lost_routing",
            Fate::Lost(DropReason::Other) => "lost_other",
            Fate::InFlight => "in_flight",
        }
    }
}

/// What the receiver does with a delivered packet.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Apply these values: the whole sample (single-packet), or one component.
    Accept { values: Vec<f64>, component: Option<usize> },
    Drop(PolicyDrop),
}

/// Something the ledger cannot reconcile: a bug, or a network reporting
/// packets it was never given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LedgerError {
    #[error("the network reported packet {number} (state {state_index}) of flow {flow}, which was never sent")]
    UnknownPacket { flow: u32, number: u64, state_index: u16 },
    #[error("packet {number} of flow {flow} arrived before its values were produced (at {time})")]
    NoValues { flow: u32, number: u64, time: SimTime },
    #[error("cannot write packets.csv: {0}")]
    Csv(String),
}

/// Per-flow counters, for `summary.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FlowCounts {
    pub sent: u64,
    /// Reached the receiving application.
    pub delivered: u64,
    pub accepted: u64,
    pub dropped_max_delay: u64,
    pub dropped_stale: u64,
    pub lost_queue: u64,
    pub lost_phy: u64,
    pub lost_mac: u64,
    pub lost_routing: u64,
    pub lost_other: u64,
    pub in_flight: u64,
}

struct Stored {
    values: Vec<f64>,
    outstanding: u16,
}

struct Pending {
    sent: SimTime,
    size: u32,
    state_count: u16,
}

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

pub struct Ledger<W: Write> {
    flows: FlowTable,
    loop_names: Vec<String>,
    /// Values of samples not yet fully resolved, by (flow, number).
    values: HashMap<(u32, u64), Stored>,
    /// Packets sent and not yet resolved, by (flow, number, state index);
    /// ordered so the in-flight rows at the end come out in a fixed order.
    pending: BTreeMap<(u32, u64, u16), Pending>,
    last_accepted: HashMap<(u32, u16), u64>,
    counts: Vec<FlowCounts>,
    delays: Vec<Vec<u64>>,
    csv: csv::Writer<W>,
}

impl<W: Write> Ledger<W> {
    pub fn new(flows: FlowTable, loop_names: Vec<String>, out: W) -> Self {
        let n = flows.all().len();
        Ledger {
            flows,
            loop_names,
            values: HashMap::new(),
            pending: BTreeMap::new(),
            last_accepted: HashMap::new(),
            counts: vec![FlowCounts::default(); n],
            delays: vec![Vec::new(); n],
            csv: csv::WriterBuilder::new().has_headers(true).from_writer(out),
        }
    }

    /// Records that the packets of sample `number` on `flow` go out at `time`
    /// (`state_count` packets, one per state index; 1 for single-packet).
    pub fn announce(&mut self, flow: u32, number: u64, state_count: u16, time: SimTime, size: u32) {
        for state_index in 0..state_count {
            self.pending.insert((flow, number, state_index), Pending { sent: time, size, state_count });
        }
        self.counts[flow as usize].sent += state_count as u64;
        self.values.entry((flow, number)).or_insert(Stored { values: Vec::new(), outstanding: state_count });
    }

    /// The values of a sample, once produced (an announced sample may get its
    /// values later: master-slave announces sends before replaying them).
    pub fn set_values(&mut self, flow: u32, number: u64, values: &[f64]) {
        if let Some(stored) = self.values.get_mut(&(flow, number)) {
            stored.values.clear();
            stored.values.extend_from_slice(values);
        }
    }

    /// Applies the receiver's policies to a delivery that takes effect at
    /// step `applied_step`, records its fate and says what to apply.
    ///
    /// # Errors
    /// A packet that was never sent, or whose values do not exist yet.
    pub fn deliver(&mut self, d: &Delivery, applied_step: u64) -> Result<Verdict, LedgerError> {
        let key = (d.flow, d.number, d.state_index);
        let pending = self.pending.remove(&key).ok_or(LedgerError::UnknownPacket {
            flow: d.flow,
            number: d.number,
            state_index: d.state_index,
        })?;
        let flow = self.flows.get(d.flow).expect("pending packets have known flows").config.clone();
        let delay = d.received.0.saturating_sub(pending.sent.0);
        let counts = &mut self.counts[d.flow as usize];
        counts.delivered += 1;
        self.delays[d.flow as usize].push(delay);

        let stale_key = (d.flow, d.state_index);
        let verdict = if flow.max_delay.is_some_and(|limit| delay > limit.0) {
            counts.dropped_max_delay += 1;
            Verdict::Drop(PolicyDrop::MaxDelay)
        } else if flow.drop_stale && self.last_accepted.get(&stale_key).is_some_and(|&last| d.number <= last) {
            counts.dropped_stale += 1;
            Verdict::Drop(PolicyDrop::Stale)
        } else {
            counts.accepted += 1;
            self.last_accepted.insert(stale_key, d.number);
            let stored = self.values.get(&(d.flow, d.number));
            let values = match stored {
                Some(s) if !s.values.is_empty() => &s.values,
                _ => return Err(LedgerError::NoValues { flow: d.flow, number: d.number, time: d.received }),
            };
            if pending.state_count > 1 {
                let component = d.state_index as usize;
                let value = *values.get(component).ok_or(LedgerError::UnknownPacket {
                    flow: d.flow,
                    number: d.number,
                    state_index: d.state_index,
                })?;
                Verdict::Accept { values: vec![value], component: Some(component) }
            } else {
                Verdict::Accept { values: values.clone(), component: None }
            }
        };
        let fate = match &verdict {
            Verdict::Accept { .. } => Fate::Accepted,
            Verdict::Drop(p) => Fate::Dropped(*p),
        };
        let applied = matches!(fate, Fate::Accepted).then_some(applied_step);
        self.write_row(key, &pending, Some(d.received), fate, applied, None)?;
        self.release(d.flow, d.number);
        Ok(verdict)
    }

    /// Records a packet lost inside the network.
    ///
    /// # Errors
    /// A packet that was never sent.
    pub fn lose(&mut self, e: &DropEvent) -> Result<(), LedgerError> {
        let key = (e.flow, e.number, e.state_index);
        let pending = self.pending.remove(&key).ok_or(LedgerError::UnknownPacket {
            flow: e.flow,
            number: e.number,
            state_index: e.state_index,
        })?;
        let counts = &mut self.counts[e.flow as usize];
        match e.reason {
            DropReason::Queue => counts.lost_queue += 1,
            DropReason::Phy => counts.lost_phy += 1,
            DropReason::Mac => counts.lost_mac += 1,
            DropReason::Routing => counts.lost_routing += 1,
            DropReason::Other => counts.lost_other += 1,
        }
        self.write_row(key, &pending, None, Fate::Lost(e.reason), None, Some((e.time, e.node)))?;
        self.release(e.flow, e.number);
        Ok(())
    }

    /// Writes a row for every packet still unresolved and flushes. Call once,
    /// at the end of the run (complete or not).
    ///
    /// # Errors
    /// Writing failed.
    pub fn close_in_flight(&mut self) -> Result<(), LedgerError> {
        let pending = std::mem::take(&mut self.pending);
        for (key, p) in &pending {
            self.counts[key.0 as usize].in_flight += 1;
            self.write_row(*key, p, None, Fate::InFlight, None, None)?;
        }
        self.values.clear();
        self.csv.flush().map_err(|e| LedgerError::Csv(e.to_string()))
    }

    pub fn counts(&self) -> &[FlowCounts] {
        &self.counts
    }

    pub fn delay_stats(&self, flow: u32) -> DelayStats {
        DelayStats::from_nanos(self.delays[flow as usize].clone())
    }

    /// The underlying writer, flushed.
    ///
    /// # Errors
    /// Flushing failed.
    pub fn into_inner(self) -> Result<W, LedgerError> {
        self.csv.into_inner().map_err(|e| LedgerError::Csv(e.to_string()))
    }

    fn release(&mut self, flow: u32, number: u64) {
        if let Some(stored) = self.values.get_mut(&(flow, number)) {
            stored.outstanding -= 1;
            if stored.outstanding == 0 {
                self.values.remove(&(flow, number));
            }
        }
    }

    fn write_row(
        &mut self,
        (flow_id, number, state_index): (u32, u64, u16),
        p: &Pending,
        arrival: Option<SimTime>,
        fate: Fate,
        applied_step: Option<u64>,
        lost: Option<(SimTime, u32)>,
    ) -> Result<(), LedgerError> {
        let flow = self.flows.get(flow_id).expect("known flow");
        let row = Row {
            flow: flow_id,
            loop_name: &self.loop_names[flow.loop_index],
            direction: flow.direction.as_str(),
            number,
            state_index,
            state_count: p.state_count,
            src: flow.src,
            dst: flow.dst,
            size: p.size,
            sent_ns: p.sent.0,
            arrival_ns: arrival.map(|t| t.0),
            delay_ns: arrival.map(|t| t.0.saturating_sub(p.sent.0)),
            fate: fate.as_str(),
            applied_step,
            lost_at_ns: lost.map(|(t, _)| t.0),
            lost_node: lost.map(|(_, n)| n),
        };
        self.csv.serialize(row).map_err(|e| LedgerError::Csv(e.to_string()))
    }
}
