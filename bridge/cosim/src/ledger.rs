//! The bridge's packet ledger: the values each packet carries (the network
//! only carries sizes and tags), the receivers' policies, and the fate of
//! every packet, emitted as a [`FateEvent`] to a [`FateSink`] as each one is
//! resolved. The ledger does no I/O: the application's sink writes
//! `packets.csv` (bridge's `packets_csv`, which also holds this module's
//! tests: they read the rows it writes).
//!
//! Values are keyed by (flow, packet number); a multi-packet sample shares
//! one number and its packet `state_index` carries component `state_index`.
//! An entry is freed when all its packets are resolved, so memory follows the
//! packets in flight, not the length of the run. Delay samples are kept per
//! flow (8 bytes per delivered packet) for exact percentiles, and the keys
//! of lost packets, to tell a late delivery from a duplicate one.
//!
//! # The fate rule: the first report wins
//! A real network may report one packet twice: Wi-Fi drops a frame whose MAC
//! lifetime expired while a copy of it is still on the air and then
//! delivers that copy; a lost acknowledgement makes the receiver get a frame
//! twice, or the sender give up on one that arrived. The session hands every
//! report to [`Ledger::report_delivery`] or [`Ledger::report_loss`] in the
//! network's time order as it comes in, before anything acts on it: the
//! first report settles the packet's fate, and only it is applied. A later
//! report of the same packet changes nothing, whatever the sync scheme or
//! when its boundary comes, and is counted (`late_deliveries`,
//! `duplicate_deliveries`, `late_losses`) rather than dropped silently.
//! A packet netloop never sent, on a flow that does not exist, or reported
//! before its send is not network behaviour but a [`Violation`].

use std::collections::{BTreeMap, HashMap, HashSet};

use protocol::{Delivery, DropEvent, DropReason, SimTime};
use serde::Serialize;

use crate::aoi::AgeStats;
use crate::delay_stats::DelayStats;
use crate::flows::{Direction, FlowTable};
use crate::network::Violation;

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
    Accept {
        values: Vec<f64>,
        component: Option<usize>,
    },
    Drop(PolicyDrop),
}

/// Something the ledger cannot reconcile: a bug, or a network reporting
/// packets it was never given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LedgerError {
    #[error("the network reported packet {number} (state {state_index}) of flow {flow}, which was never sent")]
    UnknownPacket {
        flow: u32,
        number: u64,
        state_index: u16,
    },
    #[error("packet {number} of flow {flow} arrived before its values were produced (at {time})")]
    NoValues {
        flow: u32,
        number: u64,
        time: SimTime,
    },
    /// The sink of fate events failed (it says what and why).
    #[error("{0}")]
    Sink(String),
}

/// A packet's settled fate: all the ledger knows of it when it is resolved
/// (delivered and judged by the receiver's policies, lost, or still in
/// flight at the end). Each packet's is emitted once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FateEvent<'a> {
    pub flow: u32,
    pub loop_name: &'a str,
    pub direction: Direction,
    pub number: u64,
    pub state_index: u16,
    pub state_count: u16,
    pub src: u32,
    pub dst: u32,
    pub size: u32,
    pub sent: SimTime,
    /// When it reached the receiving application, if it did.
    pub arrival: Option<SimTime>,
    pub fate: Fate,
    /// The step at which its values act, if accepted.
    pub applied_step: Option<u64>,
    /// Where the network lost it: time and node.
    pub lost: Option<(SimTime, u32)>,
}

/// Where a [`Ledger`] sends its [`FateEvent`]s, in the order packets are
/// resolved. Errors are messages; the ledger passes them on as
/// [`LedgerError::Sink`].
pub trait FateSink {
    /// What the sink gives back at the end (the written file, say).
    type Output;
    fn record(&mut self, event: &FateEvent<'_>) -> Result<(), String>;
    /// Called once, after the last event ([`Ledger::close_in_flight`]).
    fn flush(&mut self) -> Result<(), String>;
    fn finish(self) -> Result<Self::Output, String>;
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
    /// Delivered after they had been reported lost: not applied, their
    /// fate stays the loss (a Wi-Fi copy still on the air, for example).
    pub late_deliveries: u64,
    /// Delivered again after a first delivery: not applied again.
    pub duplicate_deliveries: u64,
    /// Reported lost after their fate was settled (by a delivery or an
    /// earlier loss): the fate stands.
    pub late_losses: u64,
}

impl FlowCounts {
    /// Delivered over sent; `None` for a flow that sent nothing.
    pub fn delivery_ratio(&self) -> Option<f64> {
        (self.sent > 0).then(|| self.delivered as f64 / self.sent as f64)
    }
}

/// Totals over flows: `totals += &flow_counts`.
impl std::ops::AddAssign<&FlowCounts> for FlowCounts {
    fn add_assign(&mut self, c: &FlowCounts) {
        self.sent += c.sent;
        self.delivered += c.delivered;
        self.accepted += c.accepted;
        self.dropped_max_delay += c.dropped_max_delay;
        self.dropped_stale += c.dropped_stale;
        self.lost_queue += c.lost_queue;
        self.lost_phy += c.lost_phy;
        self.lost_mac += c.lost_mac;
        self.lost_routing += c.lost_routing;
        self.lost_other += c.lost_other;
        self.in_flight += c.in_flight;
        self.late_deliveries += c.late_deliveries;
        self.duplicate_deliveries += c.duplicate_deliveries;
        self.late_losses += c.late_losses;
    }
}

struct Stored {
    values: Vec<f64>,
    outstanding: u16,
}

struct Pending {
    sent: SimTime,
    size: u32,
    state_count: u16,
    /// Whether the network has reported it, i.e. its fate is settled and
    /// waits to be applied.
    reported: bool,
}

/// Per flow, the packets ever sent: runs of consecutive numbers, by first
/// number, with their end (exclusive) and state count. Numbers go up by one
/// per sample, so a flow needs one run, and a report can be told apart from
/// one of a packet never sent long after the packet was freed.
#[derive(Clone, Debug, Default)]
struct SentNumbers(BTreeMap<u64, (u64, u16)>);

impl SentNumbers {
    fn insert(&mut self, number: u64, state_count: u16) {
        if let Some((_, (end, count))) = self.0.range_mut(..=number).next_back() {
            if number < *end {
                return;
            }
            if number == *end && *count == state_count {
                *end += 1;
                return;
            }
        }
        self.0.insert(number, (number + 1, state_count));
    }

    fn contains(&self, number: u64, state_index: u16) -> bool {
        self.0
            .range(..=number)
            .next_back()
            .is_some_and(|(_, &(end, count))| number < end && state_index < count)
    }
}

pub struct Ledger<S: FateSink> {
    flows: FlowTable,
    loop_names: Vec<String>,
    /// Values of samples not yet fully resolved, by (flow, number).
    values: HashMap<(u32, u64), Stored>,
    /// Packets sent and not yet resolved, by (flow, number, state index);
    /// ordered so the in-flight rows at the end come out in a fixed order.
    pending: BTreeMap<(u32, u64, u16), Pending>,
    /// Per flow: every packet ever sent.
    sent: Vec<SentNumbers>,
    /// Packets whose fate a loss report settled, to tell a late delivery
    /// from a duplicate one.
    lost: HashSet<(u32, u64, u16)>,
    last_accepted: HashMap<(u32, u16), u64>,
    counts: Vec<FlowCounts>,
    delays: Vec<Vec<u64>>,
    /// Per flow: `(received_ns, sent_ns)` of every accepted packet, for the
    /// age of information.
    updates: Vec<Vec<(u64, u64)>>,
    sink: S,
}

impl<S: FateSink> Ledger<S> {
    pub fn new(flows: FlowTable, loop_names: Vec<String>, sink: S) -> Self {
        let n = flows.all().len();
        Ledger {
            flows,
            loop_names,
            values: HashMap::new(),
            pending: BTreeMap::new(),
            sent: vec![SentNumbers::default(); n],
            lost: HashSet::new(),
            last_accepted: HashMap::new(),
            counts: vec![FlowCounts::default(); n],
            delays: vec![Vec::new(); n],
            updates: vec![Vec::new(); n],
            sink,
        }
    }

    /// Records that the packets of sample `number` on `flow` go out at `time`
    /// (`state_count` packets, one per state index; 1 for single-packet).
    pub fn announce(&mut self, flow: u32, number: u64, state_count: u16, time: SimTime, size: u32) {
        for state_index in 0..state_count {
            self.pending.insert(
                (flow, number, state_index),
                Pending {
                    sent: time,
                    size,
                    state_count,
                    reported: false,
                },
            );
        }
        self.sent[flow as usize].insert(number, state_count);
        self.counts[flow as usize].sent += state_count as u64;
        self.values.entry((flow, number)).or_insert(Stored {
            values: Vec::new(),
            outstanding: state_count,
        });
    }

    /// The values of a sample, once produced (an announced sample may get its
    /// values later: master-slave announces sends before replaying them).
    pub fn set_values(&mut self, flow: u32, number: u64, values: &[f64]) {
        if let Some(stored) = self.values.get_mut(&(flow, number)) {
            stored.values.clear();
            stored.values.extend_from_slice(values);
        }
    }

    /// Takes the network's report of a delivery, in the network's time
    /// order, before anything acts on it. Returns whether it is the first
    /// report of the packet, which settles its fate and is to be applied
    /// ([`Ledger::deliver`]); a later one is only counted.
    ///
    /// # Errors
    /// A packet of an unknown flow, never sent, or delivered before its send.
    pub fn report_delivery(&mut self, d: &Delivery) -> Result<bool, Violation> {
        let key = (d.flow, d.number, d.state_index);
        // The send time netloop asked for, or the one the packet's tag
        // carries if later: the packet exists at neither before it.
        let sent = self
            .check_known(key)?
            .map_or(d.sent, |asked| asked.max(d.sent));
        if d.received < sent {
            return Err(Violation::DeliveredBeforeSent {
                flow: d.flow,
                number: d.number,
                state_index: d.state_index,
                at: d.received,
                sent,
            });
        }
        if self.settle(key) {
            return Ok(true);
        }
        let counts = &mut self.counts[d.flow as usize];
        if self.lost.contains(&key) {
            counts.late_deliveries += 1;
        } else {
            counts.duplicate_deliveries += 1;
        }
        Ok(false)
    }

    /// Takes the network's report of a loss, as [`Ledger::report_delivery`]
    /// does a delivery; the first report is to be applied ([`Ledger::lose`]).
    ///
    /// # Errors
    /// A packet of an unknown flow, never sent, or lost before its send.
    pub fn report_loss(&mut self, e: &DropEvent) -> Result<bool, Violation> {
        let key = (e.flow, e.number, e.state_index);
        let sent = self
            .check_known(key)?
            .map_or(e.sent, |asked| asked.max(e.sent));
        if e.time < sent {
            return Err(Violation::LostBeforeSent {
                flow: e.flow,
                number: e.number,
                state_index: e.state_index,
                at: e.time,
                sent,
            });
        }
        if self.settle(key) {
            self.lost.insert(key);
            return Ok(true);
        }
        self.counts[e.flow as usize].late_losses += 1;
        Ok(false)
    }

    /// That a reported packet exists; its send time while it is pending.
    fn check_known(
        &self,
        (flow, number, state_index): (u32, u64, u16),
    ) -> Result<Option<SimTime>, Violation> {
        let Some(sent) = self.sent.get(flow as usize) else {
            return Err(Violation::UnknownFlow {
                flow,
                number,
                state_index,
                flows: self.sent.len(),
            });
        };
        if !sent.contains(number, state_index) {
            return Err(Violation::UnknownPacket {
                flow,
                number,
                state_index,
            });
        }
        Ok(self
            .pending
            .get(&(flow, number, state_index))
            .map(|p| p.sent))
    }

    /// Marks a known packet reported; whether this was its first report (a
    /// packet no longer pending was settled and resolved already).
    fn settle(&mut self, key: (u32, u64, u16)) -> bool {
        match self.pending.get_mut(&key) {
            Some(p) if !p.reported => {
                p.reported = true;
                true
            }
            _ => false,
        }
    }

    /// Applies the receiver's policies to a delivery that takes effect at
    /// step `applied_step`, records its fate and says what to apply.
    ///
    /// # Errors
    /// A packet that was never sent, or whose values do not exist yet.
    pub fn deliver(&mut self, d: &Delivery, applied_step: u64) -> Result<Verdict, LedgerError> {
        let key = (d.flow, d.number, d.state_index);
        let pending = self
            .pending
            .remove(&key)
            .ok_or(LedgerError::UnknownPacket {
                flow: d.flow,
                number: d.number,
                state_index: d.state_index,
            })?;
        let flow = match self.flows.get(d.flow) {
            Some(f) => f.config.clone(),
            None => {
                return Err(LedgerError::UnknownPacket {
                    flow: d.flow,
                    number: d.number,
                    state_index: d.state_index,
                })
            }
        };
        let delay = d.received.0.saturating_sub(pending.sent.0);
        let counts = &mut self.counts[d.flow as usize];
        counts.delivered += 1;
        self.delays[d.flow as usize].push(delay);

        let stale_key = (d.flow, d.state_index);
        let verdict = if flow.max_delay.is_some_and(|limit| delay > limit.0) {
            counts.dropped_max_delay += 1;
            Verdict::Drop(PolicyDrop::MaxDelay)
        } else if flow.drop_stale
            && self
                .last_accepted
                .get(&stale_key)
                .is_some_and(|&last| d.number <= last)
        {
            counts.dropped_stale += 1;
            Verdict::Drop(PolicyDrop::Stale)
        } else {
            counts.accepted += 1;
            self.updates[d.flow as usize].push((d.received.0, pending.sent.0));
            self.last_accepted.insert(stale_key, d.number);
            let stored = self.values.get(&(d.flow, d.number));
            let values = match stored {
                Some(s) if !s.values.is_empty() => &s.values,
                _ => {
                    return Err(LedgerError::NoValues {
                        flow: d.flow,
                        number: d.number,
                        time: d.received,
                    })
                }
            };
            if pending.state_count > 1 {
                let component = d.state_index as usize;
                let value = *values.get(component).ok_or(LedgerError::UnknownPacket {
                    flow: d.flow,
                    number: d.number,
                    state_index: d.state_index,
                })?;
                Verdict::Accept {
                    values: vec![value],
                    component: Some(component),
                }
            } else {
                Verdict::Accept {
                    values: values.clone(),
                    component: None,
                }
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
        let pending = self
            .pending
            .remove(&key)
            .ok_or(LedgerError::UnknownPacket {
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
        self.write_row(
            key,
            &pending,
            None,
            Fate::Lost(e.reason),
            None,
            Some((e.time, e.node)),
        )?;
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
        self.sink.flush().map_err(LedgerError::Sink)
    }

    pub fn counts(&self) -> &[FlowCounts] {
        &self.counts
    }

    pub fn delay_stats(&self, flow: u32) -> DelayStats {
        DelayStats::from_nanos(self.delays[flow as usize].clone())
    }

    /// Age of information at the flow's receiver up to `end`.
    pub fn age_stats(&self, flow: u32, end: SimTime) -> AgeStats {
        AgeStats::from_updates(self.updates[flow as usize].clone(), end.0)
    }

    /// What the sink gives back at the end ([`FateSink::finish`]).
    ///
    /// # Errors
    /// The sink failed.
    pub fn into_inner(self) -> Result<S::Output, LedgerError> {
        self.sink.finish().map_err(LedgerError::Sink)
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
        let event = FateEvent {
            flow: flow_id,
            loop_name: &self.loop_names[flow.loop_index],
            direction: flow.direction,
            number,
            state_index,
            state_count: p.state_count,
            src: flow.src,
            dst: flow.dst,
            size: p.size,
            sent: p.sent,
            arrival,
            fate,
            applied_step,
            lost,
        };
        self.sink.record(&event).map_err(LedgerError::Sink)
    }
}
