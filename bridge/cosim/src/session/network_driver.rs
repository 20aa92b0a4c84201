//! The network half of a co-simulation, whose control side is
//! [`super::graph::GraphSession`] (graph scenarios, and the graphs
//! `[[loops]]` expand into).
//!
//! Whatever the control side is, the network side is the same: a
//! [`Network`] stepped synchronously (or begun and ended around the control
//! side's work), the [`Ledger`] that keeps every packet's tags and fate, the
//! queue of packet events waiting for the boundary where they take effect,
//! in canonical order, and the sends for the next step. [`NetworkDriver`]
//! holds all of that; the control side decides what a boundary does with
//! the events it takes from the queue and what it sends.
//!
//! # Canonical order
//! Events are keyed by ([`EventKey`]) boundary, receiver class (a loop's
//! controllers before its actuators, U before D; a graph has one class),
//! time, flow, packet number, state index, deliveries before losses. Only a
//! packet's first report is queued, so two events never share a packet.
//!
//! # Where an event takes effect
//! A packet arriving at `t` takes effect at `ceil(t / h)` under master-slave
//! and event-driven sync, and at the first sync boundary after `t` under
//! time-stepping ([`SyncClock::effect_step`]). A loss takes effect where the
//! packet would have, but never before the first boundary after it was sent
//! ([`SyncClock::loss_step`]). [`Placement`] says which rule a control side
//! follows for deliveries.

use crate::ledger::FateSink;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use protocol::{
    Delivery, DropEvent, FlowSpec, NodeKinematics, SendRequest, SimTime, Step, StepDone,
};

use crate::flows::FlowTable;
use crate::ledger::{Ledger, LedgerError};
use crate::network::{Network, NetworkError};
use crate::sync_scheme::{SyncScheme, TimeStepping};

/// The run's time grid and sync scheme: where packets are sent and where
/// they take effect.
#[derive(Clone, Copy, Debug)]
pub struct SyncClock {
    pub scheme: SyncScheme,
    pub step_ns: u64,
    /// The boundary at the end of the run (never served).
    pub end_step: u64,
}

impl SyncClock {
    pub fn time_of(&self, k: u64) -> SimTime {
        SimTime(k * self.step_ns)
    }

    /// The boundary at which a packet arriving at `t` takes effect.
    pub fn effect_step(&self, t: SimTime) -> u64 {
        match self.scheme {
            SyncScheme::TimeStepping(TimeStepping { period }) => {
                let period = period.get();
                // The first sync boundary strictly after t: a period's
                // deliveries are applied when the period is over.
                let period_ns = period * self.step_ns;
                (t.0 / period_ns + 1) * period
            }
            _ => t.0.div_ceil(self.step_ns),
        }
    }

    /// The boundary at which a packet lost at `t` after it was sent at
    /// `sent` takes effect: where it would have taken effect had it arrived
    /// when it was lost, but never before the first boundary after it was
    /// sent. ns-3 reports a loss when it happens: a receiver's PHY drop
    /// when the packet would have arrived (the builtin channel does the
    /// same), but a sender's queue drop at the send instant, before any
    /// packet sent then could have arrived over a link that takes time. A
    /// receiver cannot react to a packet before it could have received it.
    /// (Under event-driven sync over ns-3 the send boundary is also served
    /// before the network runs past the send, so a loss acting there would
    /// never act at all.)
    pub fn loss_step(&self, t: SimTime, sent: SimTime) -> u64 {
        self.effect_step(t).max(sent.0 / self.step_ns + 1)
    }

    /// When a packet produced at boundary `k` on a fixed schedule enters
    /// the network: at `k`, or under time-stepping at the end of the period
    /// that produced it.
    pub fn scheduled_send_time(&self, k: u64) -> SimTime {
        match self.scheme {
            SyncScheme::TimeStepping(TimeStepping { period }) => {
                let period = period.get();
                self.time_of((k / period + 1) * period)
            }
            _ => self.time_of(k),
        }
    }
}

/// Which of a boundary's receive phases an event belongs to, in the order
/// they are received: a loop serves its controllers' packets (U,
/// [`Class::CONTROLLER`]) before its actuators' and every loss (D,
/// [`Class::ACTUATOR`]); a graph evaluated in parts receives a flow's
/// events just before the part that holds its receiving end
/// ([`Class::part`], [`NetworkDriver::classify_by_part`]); any other graph
/// serves all its events in one phase, [`Class::ACTUATOR`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Class(u16);

impl Class {
    /// The first class: nothing is received before it.
    const FIRST: Class = Class(0);
    /// A loop's controllers (phase U), before part 1 of a boundary.
    pub const CONTROLLER: Class = Class(1);
    /// The last class: a loop's actuators and losses, every event of a
    /// graph not evaluated in parts.
    pub const ACTUATOR: Class = Class(u16::MAX);

    /// The events received before part `part` of a boundary evaluated in
    /// parts.
    pub fn part(part: usize) -> Class {
        Class(u16::try_from(part).unwrap_or(u16::MAX))
    }
}

/// A packet event waiting for the boundary where it takes effect, ordered
/// canonically (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct EventKey {
    pub step: u64,
    pub class: Class,
    pub time: SimTime,
    pub flow: u32,
    pub number: u64,
    pub state_index: u16,
    /// Deliveries before losses at one instant.
    pub loss: bool,
}

impl EventKey {
    /// Every key of boundary `k` in the given classes.
    fn range(k: u64, first: Class, last: Class) -> std::ops::RangeInclusive<EventKey> {
        let lo = EventKey {
            step: k,
            class: first,
            time: SimTime::ZERO,
            flow: 0,
            number: 0,
            state_index: 0,
            loss: false,
        };
        let hi = EventKey {
            step: k,
            class: last,
            time: SimTime::MAX,
            flow: u32::MAX,
            number: u64::MAX,
            state_index: u16::MAX,
            loss: true,
        };
        lo..=hi
    }
}

/// A report of the network about one packet.
#[derive(Clone, Debug)]
pub enum Event {
    Delivery(Delivery),
    Drop(DropEvent),
}

impl Event {
    /// The packet's flow and number.
    pub fn packet(&self) -> (u32, u64) {
        match self {
            Event::Delivery(d) => (d.flow, d.number),
            Event::Drop(d) => (d.flow, d.number),
        }
    }
}

/// The rule a control side follows for where its packets take effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// A run over a network that may deliver a packet at its send instant,
    /// whose boundaries are evaluated in parts: a delivery at its
    /// [`SyncClock::effect_step`], so a zero-delay packet acts at the
    /// boundary it was sent at (a loop's phase U2), unless that boundary
    /// was served already; a loss at its [`SyncClock::loss_step`].
    AtSendBoundary,
    /// Every other run: every event at its [`SyncClock::loss_step`] and
    /// never at a boundary already served (the boundary a packet was sent
    /// at was evaluated before it was sent).
    AfterSendBoundary,
}

/// The network, the packets' ledger and the queue of their events.
pub struct NetworkDriver<W: FateSink> {
    pub network: Box<dyn Network>,
    pub ledger: Ledger<W>,
    pub flows: FlowTable,
    pub clock: SyncClock,
    placement: Placement,
    /// Per flow, the class of all its events, for a graph evaluated in
    /// parts ([`Self::classify_by_part`]); `None`: by direction, as loops.
    part_classes: Option<Vec<Class>>,
    queue: BTreeMap<EventKey, Event>,
    /// Sends for the next network step.
    pub outgoing: Vec<SendRequest>,
    /// Reports held back by the control side (answers by rule the replay
    /// has not computed yet), by (flow, number), in the order they came.
    parked: BTreeMap<(u32, u64), Vec<Event>>,
    /// Graphs: the first boundary not yet served, the earliest an event
    /// reported now can act at.
    pub next_serve: u64,
    pub syncs: u64,
    cancel: Option<Arc<AtomicBool>>,
    /// The network's own description of itself, from its `Configured`.
    pub description: String,
}

impl<W: FateSink> NetworkDriver<W> {
    pub fn new(
        network: Box<dyn Network>,
        ledger: Ledger<W>,
        flows: FlowTable,
        clock: SyncClock,
        placement: Placement,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Self {
        NetworkDriver {
            network,
            ledger,
            flows,
            clock,
            placement,
            part_classes: None,
            queue: BTreeMap::new(),
            outgoing: Vec::new(),
            parked: BTreeMap::new(),
            next_serve: 0,
            syncs: 0,
            cancel,
            description: String::new(),
        }
    }

    /// A graph evaluated in parts: every event of flow `f` (delivery or
    /// loss) is received just before part `parts[f]`, the part of the
    /// flow's receiving end, so a loss set to zero acts where the packet
    /// would have.
    pub fn classify_by_part(&mut self, parts: &[usize]) {
        self.part_classes = Some(parts.iter().map(|&p| Class::part(p)).collect());
    }

    /// Installs the flows in the network and keeps its description.
    pub fn configure(&mut self, specs: &[FlowSpec]) -> Result<(), NetworkError> {
        self.description = self.network.configure(specs)?.description;
        Ok(())
    }

    /// Whether the user asked the run to stop.
    pub fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// The next step request, taking the sends queued so far.
    pub fn step_request(
        &mut self,
        until: SimTime,
        stop_at_delivery: bool,
        kinematics: Vec<NodeKinematics>,
    ) -> Step {
        Step {
            until,
            stop_at_delivery,
            sends: std::mem::take(&mut self.outgoing),
            kinematics,
        }
    }

    /// One synchronous network step; its events join the queue (unless
    /// `holds` keeps them back, see [`NetworkDriver::enqueue`]). Returns
    /// the time the network reached.
    pub fn step(
        &mut self,
        until: SimTime,
        stop_at_delivery: bool,
        kinematics: Vec<NodeKinematics>,
        holds: impl Fn(&Event) -> bool,
    ) -> Result<SimTime, NetworkError> {
        let step = self.step_request(until, stop_at_delivery, kinematics);
        let done = self.network.step(step)?;
        self.syncs += 1;
        self.enqueue(done, holds)
    }

    /// Hands the network a step to run while the control side works.
    pub fn begin_step(
        &mut self,
        until: SimTime,
        kinematics: Vec<NodeKinematics>,
    ) -> Result<(), NetworkError> {
        let request = self.step_request(until, false, kinematics);
        self.network.begin_step(request)?;
        self.syncs += 1;
        Ok(())
    }

    /// Waits for the step begun first and queues its events.
    pub fn end_step(&mut self, holds: impl Fn(&Event) -> bool) -> Result<SimTime, NetworkError> {
        let done = self.network.end_step()?;
        self.enqueue(done, holds)
    }

    /// Queues a step's events at the boundaries where they take effect and
    /// returns the time reached. Each report goes to the ledger first, in
    /// time order (deliveries before losses at one instant): only the first
    /// report of a packet is queued (see [`crate::ledger`] for the rule).
    /// A report `holds` says is not for now is parked until
    /// [`NetworkDriver::release`].
    ///
    /// # Errors
    /// A report of a packet the network was never given.
    pub fn enqueue(
        &mut self,
        done: StepDone,
        holds: impl Fn(&Event) -> bool,
    ) -> Result<SimTime, NetworkError> {
        let mut events: Vec<Event> = done
            .deliveries
            .into_iter()
            .map(Event::Delivery)
            .chain(done.drops.into_iter().map(Event::Drop))
            .collect();
        events.sort_by_key(|e| match e {
            Event::Delivery(d) => (d.received, 0),
            Event::Drop(d) => (d.time, 1),
        });
        for event in events {
            if holds(&event) {
                self.parked.entry(event.packet()).or_default().push(event);
            } else {
                self.take_report(event, done.reached)?;
            }
        }
        Ok(done.reached)
    }

    /// Hands one report to the ledger and, if it is the packet's first,
    /// queues it at the boundary where it takes effect.
    fn take_report(&mut self, event: Event, reached: SimTime) -> Result<(), NetworkError> {
        let violation = |violation| NetworkError::Violation { reached, violation };
        let first = match &event {
            Event::Delivery(d) => self.ledger.report_delivery(d).map_err(violation)?,
            Event::Drop(d) => self.ledger.report_loss(d).map_err(violation)?,
        };
        if first {
            let key = self.key_of(&event);
            self.queue.insert(key, event);
        }
        Ok(())
    }

    fn key_of(&self, event: &Event) -> EventKey {
        let (time, sent, flow, number, state_index, loss) = match event {
            Event::Delivery(d) => (d.received, d.sent, d.flow, d.number, d.state_index, false),
            Event::Drop(d) => (d.time, d.sent, d.flow, d.number, d.state_index, true),
        };
        // Deliveries to a loop's controller act before those to actuators
        // and before losses (a graph's flows are all in the last class,
        // unless it is evaluated in parts).
        let class = match &self.part_classes {
            Some(classes) => classes
                .get(flow as usize)
                .copied()
                .unwrap_or(Class::ACTUATOR),
            None if !loss
                && self
                    .flows
                    .get(flow)
                    .is_some_and(|f| f.direction.to_controller()) =>
            {
                Class::CONTROLLER
            }
            None => Class::ACTUATOR,
        };
        // Never at a boundary already served (the one a packet was sent at,
        // unless it is evaluated in parts around such deliveries).
        let step = match (self.placement, loss) {
            (Placement::AtSendBoundary, false) => self.clock.effect_step(time),
            _ => self.clock.loss_step(time, sent),
        }
        .max(self.next_serve);
        EventKey {
            step,
            class,
            time,
            flow,
            number,
            state_index,
            loss,
        }
    }

    /// Queues the reports of packet (`flow`, `number`) that were parked,
    /// now that the control side knows it.
    pub fn release(&mut self, flow: u32, number: u64) -> Result<(), NetworkError> {
        let reached = self.network.reached();
        for event in self.parked.remove(&(flow, number)).unwrap_or_default() {
            self.take_report(event, reached)?;
        }
        Ok(())
    }

    /// A report still parked: one the control side never released.
    pub fn first_parked(&self) -> Option<&Event> {
        self.parked.values().flatten().next()
    }

    /// The first of boundary `k`'s events still queued in the classes up
    /// to `last`, in canonical order, deliveries only when sent before
    /// `sent_before` (where given); a report released while `k` is served
    /// (an answer by rule) joins in its place.
    pub fn first_at(&self, k: u64, last: Class, sent_before: Option<SimTime>) -> Option<EventKey> {
        self.queue
            .range(EventKey::range(k, Class::FIRST, last))
            .find(|(_, e)| match (e, sent_before) {
                (Event::Delivery(d), Some(limit)) => d.sent < limit,
                _ => true,
            })
            .map(|(key, _)| *key)
    }

    pub fn take(&mut self, key: &EventKey) -> Event {
        self.queue.remove(key).expect("key taken from the queue")
    }

    /// How many events are queued.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// How many packets a sample of `values` values takes on `flow`: one
    /// per value for a `multi_packet` flow, else one.
    pub fn state_count(&self, flow: u32, values: usize) -> u16 {
        if self
            .flows
            .get(flow)
            .expect("known flow")
            .config
            .multi_packet
        {
            values as u16
        } else {
            1
        }
    }

    /// Tells the ledger of a sample of `width` values sent at `time` and
    /// queues its packets for the network.
    pub fn announce(&mut self, flow: u32, number: u64, width: usize, time: SimTime) {
        let size = self.flows.get(flow).expect("known flow").config.size;
        let count = self.state_count(flow, width);
        self.ledger.announce(flow, number, count, time, size);
        self.outgoing
            .extend((0..count).map(|state_index| SendRequest {
                flow,
                number,
                state_index,
                state_count: count,
                time,
                size,
            }));
    }

    /// Records a sample's values in the ledger and, unless its packets were
    /// announced ahead, announces them first.
    pub fn send(&mut self, flow: u32, number: u64, values: &[f64], time: SimTime, announced: bool) {
        if !announced {
            self.announce(flow, number, values.len(), time);
        }
        self.ledger.set_values(flow, number, values);
    }

    /// Records the losses still queued and every packet without a fate.
    /// Losses already reported are losses whatever the control side did.
    pub fn resolve_leftovers(&mut self) -> Result<(), LedgerError> {
        let drops: Vec<DropEvent> = self
            .queue
            .values()
            .filter_map(|e| match e {
                Event::Drop(d) => Some(d.clone()),
                Event::Delivery(_) => None,
            })
            .collect();
        for d in &drops {
            self.ledger.lose(d)?;
        }
        self.queue.clear();
        self.ledger.close_in_flight()
    }
}
