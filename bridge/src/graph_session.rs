//! The co-simulation of a graph scenario with flows between nodes: the
//! graph ([`controlsim::graph::Graph`]) and a network stepped together
//! under one of the three sync schemes, the packets kept by the one
//! [`Ledger`] (tags, fates, `packets.csv`) exactly as for `[[loops]]`.
//!
//! # A step boundary `k`
//! 1. **Receive.** Every packet event that takes effect at `k`, in canonical
//!    order (arrival time, flow, number, state index): an accepted packet is
//!    written into its flow's inlet (the whole sample, or for `multi_packet`
//!    the one element its state index carries), which counts as a new value
//!    at `k`; a loss or a policy drop writes zero there under
//!    `on_loss = "zero"` and changes nothing under `hold`.
//! 2. **Evaluate** the graph at `k` in its evaluation order (components on
//!    new inputs, actuators for one, answer the packets of step 1 here).
//! 3. **Send.** Every flow due at `k`, in flow order, sends the values its
//!    source holds after the evaluation: a `periodic` flow at its instants,
//!    an `update` flow when its source got a new value at `k`, an `arrival`
//!    flow when a packet of its flow was accepted at `k`.
//!
//! Then the step is recorded and integrated. A packet arriving at `t` takes
//! effect at `ceil(t / h)` (master-slave, event-driven) or at the first sync
//! boundary after `t` (time-stepping), as for loops, but never at the
//! boundary it was sent at: that boundary was evaluated before it was sent,
//! so a zero-delay packet acts one step later. A loss takes effect where the
//! packet would have, as for loops. The boundary at the end of the run is
//! evaluated and recorded but not served: packets that would act there are
//! in flight.
//!
//! # Send times
//! A packet of a flow with a fixed schedule ([`GraphFlow::schedule`]) is
//! sent at its boundary (time-stepping: at the end of the sync period that
//! produced it). Other packets are sent at their boundary under
//! event-driven sync, at the first sync point at or after it under
//! master-slave (the network has run the period before the replay
//! produces them, as for an event-triggered loop controller's answers),
//! and at the end of the period under time-stepping.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use controlsim::graph::{Graph, GraphError, GraphObserver};
use protocol::{Delivery, DropEvent, FlowSpec, SendRequest, SimTime, Step, StepDone};

use crate::config::SchemeKind;
use crate::flows::FlowTable;
use crate::graph_flows::{zero_on_loss, GraphFlow, NetworkSide, SendRule};
use crate::ledger::{Ledger, LedgerError, Verdict};
use crate::network::{Network, NetworkError};

/// Why a graph co-simulation stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum GraphSessionError {
    #[error(transparent)]
    Network(#[from] NetworkError),
    #[error("control side at simulated time {reached}: {source}")]
    Graph {
        reached: SimTime,
        source: GraphError,
    },
    #[error("packet bookkeeping at simulated time {reached}: {source}")]
    Ledger {
        reached: SimTime,
        source: LedgerError,
    },
    #[error("interrupted at simulated time {reached}")]
    Interrupted { reached: SimTime },
}

/// A packet event waiting for its boundary, in canonical order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct EventKey {
    step: u64,
    time: SimTime,
    flow: u32,
    number: u64,
    state_index: u16,
    /// Deliveries before losses at one instant.
    loss: bool,
}

#[derive(Clone, Debug)]
enum Event {
    Delivery(Delivery),
    Drop(DropEvent),
}

/// The co-simulation of one networked graph run.
pub struct GraphSession<W: Write> {
    graph: Graph,
    network: Box<dyn Network>,
    flows: Vec<GraphFlow>,
    table: FlowTable,
    ledger: Ledger<W>,
    scheme: SchemeKind,
    step_ns: u64,
    end_step: u64,
    sync_steps: Option<u64>,
    queue: BTreeMap<EventKey, Event>,
    outgoing: Vec<SendRequest>,
    /// Per flow without a schedule: the next packet number.
    counters: Vec<u64>,
    /// Per flow: a packet was accepted at the boundary being served.
    arrived: Vec<bool>,
    /// The first boundary not yet served: an event reported after its
    /// boundary was served (a network that reports an event at exactly a
    /// step's end in the next step) acts at the next one.
    next_serve: u64,
    syncs: u64,
    cancel: Option<Arc<AtomicBool>>,
    description: String,
}

/// What a finished session hands back.
pub struct GraphSessionParts<W: Write> {
    pub graph: Graph,
    pub network: Box<dyn Network>,
    pub ledger: Ledger<W>,
    pub syncs: u64,
}

impl<W: Write> GraphSession<W> {
    /// Wires a built graph (with the inlets of `side`'s flows) to a started
    /// network; [`GraphSession::run`] installs the flows.
    pub fn new(
        graph: Graph,
        side: &NetworkSide,
        network: Box<dyn Network>,
        packets_out: W,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Self {
        let table = side.table();
        let n = side.flows.len();
        GraphSession {
            ledger: Ledger::new(table.clone(), side.names(), packets_out),
            table,
            flows: side.flows.clone(),
            scheme: side.resolved.scenario.sync.scheme,
            step_ns: graph.step_size().as_nanos(),
            end_step: side.resolved.end_step,
            sync_steps: side.resolved.sync_steps,
            queue: BTreeMap::new(),
            outgoing: Vec::new(),
            counters: vec![0; n],
            arrived: vec![false; n],
            next_serve: 0,
            syncs: 0,
            cancel,
            description: String::new(),
            graph,
            network,
        }
    }

    pub fn syncs(&self) -> u64 {
        self.syncs
    }

    pub fn network_description(&self) -> &str {
        &self.description
    }

    pub fn time(&self) -> SimTime {
        self.graph.time()
    }

    /// Installs the flows and runs to the end, `observer` seeing every
    /// boundary (the last one too).
    ///
    /// # Errors
    /// The first failure, naming the simulated time reached.
    pub fn run<O: GraphObserver>(&mut self, observer: &mut O) -> Result<(), GraphSessionError> {
        let event_driven = self.scheme == SchemeKind::EventDriven;
        let specs: Vec<FlowSpec> = self
            .table
            .all()
            .iter()
            .map(|f| FlowSpec {
                flow: f.id,
                port: f.config.port,
                src: f.src,
                dst: f.dst,
                transport: f.config.transport.into(),
                // Event-driven sync moves to the boundary where a packet acts.
                stop_on_delivery: event_driven,
            })
            .collect();
        self.description = self.network.configure(&specs)?.description;
        match (self.scheme, self.sync_steps) {
            (SchemeKind::TimeStepping, Some(p)) => self.run_time_stepping(p, observer)?,
            (SchemeKind::MasterSlave, Some(p)) => self.run_master_slave(p, observer)?,
            _ => self.run_event_driven(observer)?,
        }
        // The last boundary is evaluated and recorded, not served.
        let reached = self.time();
        let graph_error = |source| GraphSessionError::Graph { reached, source };
        self.graph.evaluate().map_err(graph_error)?;
        observer
            .observe(&self.graph)
            .map_err(|source| GraphError::Observer {
                step: self.graph.k(),
                source,
            })
            .map_err(graph_error)
    }

    /// Resolves what is left (queued losses, packets without a fate) and
    /// ends the network run when it is alive.
    pub fn finish(
        mut self,
        network_alive: bool,
    ) -> (
        GraphSessionParts<W>,
        Result<Option<protocol::Summary>, GraphSessionError>,
    ) {
        let resolved = self.resolve_leftovers();
        let summary = if network_alive {
            self.network.finish().ok()
        } else {
            None
        };
        (
            GraphSessionParts {
                graph: self.graph,
                network: self.network,
                ledger: self.ledger,
                syncs: self.syncs,
            },
            resolved.map(|()| summary),
        )
    }

    fn resolve_leftovers(&mut self) -> Result<(), GraphSessionError> {
        let drops: Vec<DropEvent> = self
            .queue
            .values()
            .filter_map(|e| match e {
                Event::Drop(d) => Some(d.clone()),
                Event::Delivery(_) => None,
            })
            .collect();
        for d in &drops {
            self.ledger.lose(d).map_err(|s| self.ledger_error(s))?;
        }
        self.queue.clear();
        self.ledger
            .close_in_flight()
            .map_err(|s| self.ledger_error(s))
    }

    // ----- the schemes -----

    /// Master-slave: serve the period's first boundary (its events are all
    /// known), announce the scheduled packets of the rest, run the network
    /// to the period's end, replay the rest.
    fn run_master_slave<O: GraphObserver>(
        &mut self,
        period: u64,
        observer: &mut O,
    ) -> Result<(), GraphSessionError> {
        let mut s = self.graph.k();
        while s < self.end_step {
            let e = (s + period).min(self.end_step);
            self.serve(s, self.time_of(s), false)?;
            self.announce(s + 1, e);
            self.network_step(self.time_of(e), false)?;
            self.record_and_integrate(observer)?;
            for k in s + 1..e {
                self.serve(k, self.time_of(e), true)?;
                self.record_and_integrate(observer)?;
            }
            s = e;
        }
        Ok(())
    }

    /// Time-stepping: the network runs a period with what the previous one
    /// produced while the graph integrates it with what had arrived.
    fn run_time_stepping<O: GraphObserver>(
        &mut self,
        period: u64,
        observer: &mut O,
    ) -> Result<(), GraphSessionError> {
        let mut s = self.graph.k();
        while s < self.end_step {
            let e = (s + period).min(self.end_step);
            self.check_cancel()?;
            let request = self.step_request(self.time_of(e), false);
            self.network.begin_step(request)?;
            self.syncs += 1;
            for k in s..e {
                let send = self.scheduled_send_time(k);
                self.serve(k, send, false)?;
                self.record_and_integrate(observer)?;
            }
            let done = self.network.end_step()?;
            self.enqueue(done)?;
            s = e;
        }
        Ok(())
    }

    /// Event-driven: the network runs to the next boundary where a packet
    /// may be sent (every boundary when a flow has no fixed schedule), or
    /// stops at the first delivery; the graph moves to the boundary where
    /// that delivery acts.
    fn run_event_driven<O: GraphObserver>(
        &mut self,
        observer: &mut O,
    ) -> Result<(), GraphSessionError> {
        let predictable = self.flows.iter().all(|f| f.schedule.is_some());
        let mut k = self.graph.k();
        while k < self.end_step {
            let t = self.time_of(k);
            while self.network.reached() < t {
                self.network_step(t, true)?;
            }
            self.serve(k, t, false)?;
            let mut next = if predictable {
                self.flows
                    .iter()
                    .filter_map(|f| f.schedule)
                    .map(|(p, phase)| next_at_or_after(p, phase, k + 1))
                    .min()
                    .unwrap_or(u64::MAX)
            } else {
                k + 1
            }
            .min(self.end_step);
            if let Some(p) = self.sync_steps {
                next = next.min(k + p);
            }
            let reached = self.network_step(self.time_of(next), true)?;
            let target = reached.0.div_ceil(self.step_ns).clamp(k + 1, next);
            self.record_and_integrate(observer)?;
            // Only losses can act before the target: serve them.
            for b in k + 1..target {
                let send = self.time_of(b).max(self.network.reached());
                self.serve(b, send, false)?;
                self.record_and_integrate(observer)?;
            }
            k = target;
        }
        // Every loss up to the end is known.
        let t = self.time_of(self.end_step);
        while self.network.reached() < t {
            self.network_step(t, false)?;
        }
        Ok(())
    }

    // ----- a boundary -----

    /// Serves boundary `k` (receive, evaluate, send). Packets of flows with
    /// a schedule were announced already when `announced`; the others are
    /// sent at `unscheduled_time`.
    fn serve(
        &mut self,
        k: u64,
        unscheduled_time: SimTime,
        announced: bool,
    ) -> Result<(), GraphSessionError> {
        debug_assert_eq!(self.graph.k(), k);
        self.next_serve = k + 1;
        self.arrived.fill(false);
        let keys: Vec<EventKey> = self
            .queue
            .range(Self::range_of(k))
            .map(|(key, _)| *key)
            .collect();
        for key in keys {
            let event = self.queue.remove(&key).expect("key taken from the queue");
            match event {
                Event::Delivery(d) => {
                    let verdict = self
                        .ledger
                        .deliver(&d, k)
                        .map_err(|s| self.ledger_error(s))?;
                    let f = d.flow as usize;
                    match verdict {
                        Verdict::Accept { values, component } => {
                            let inlet = self.flows[f].inlet;
                            self.graph
                                .set_output(inlet, 0, component.unwrap_or(0), &values);
                            self.arrived[f] = true;
                        }
                        Verdict::Drop(_) => self.on_loss(f, d.state_index),
                    }
                }
                Event::Drop(d) => {
                    self.ledger.lose(&d).map_err(|s| self.ledger_error(s))?;
                    self.on_loss(d.flow as usize, d.state_index);
                }
            }
        }
        let reached = self.time();
        self.graph
            .evaluate()
            .map_err(|source| GraphSessionError::Graph { reached, source })?;
        for f in 0..self.flows.len() {
            let flow = &self.flows[f];
            let (c, p, range) = flow.source.clone();
            let due = match flow.rule {
                SendRule::Periodic { period, phase } => k >= phase && (k - phase) % period == 0,
                SendRule::Update => self.graph.is_fresh(c, p),
                SendRule::Arrival(g) => self.arrived[g as usize],
            };
            if !due {
                continue;
            }
            let values = self.graph.output(c, p)[range].to_vec();
            match flow.schedule {
                Some((period, phase)) => {
                    let number = (k - phase) / period;
                    let time = self.scheduled_send_time(k);
                    self.send(f, number, &values, time, announced);
                }
                None => {
                    let number = self.counters[f];
                    self.counters[f] += 1;
                    self.send(f, number, &values, unscheduled_time, false);
                }
            }
        }
        Ok(())
    }

    /// `on_loss = "zero"`: the inlet (or the lost element) goes to zero.
    fn on_loss(&mut self, f: usize, state_index: u16) {
        let flow = &self.flows[f];
        if !zero_on_loss(flow) {
            return;
        }
        let inlet = flow.inlet;
        if flow.config.multi_packet {
            self.graph
                .set_output(inlet, 0, usize::from(state_index), &[0.0]);
        } else {
            let zeros = vec![0.0; flow.source.2.len()];
            self.graph.set_output(inlet, 0, 0, &zeros);
        }
    }

    fn record_and_integrate<O: GraphObserver>(
        &mut self,
        observer: &mut O,
    ) -> Result<(), GraphSessionError> {
        let reached = self.time();
        let k = self.graph.k();
        observer
            .observe(&self.graph)
            .map_err(|source| GraphSessionError::Graph {
                reached,
                source: GraphError::Observer { step: k, source },
            })?;
        self.graph
            .integrate_step()
            .map_err(|source| GraphSessionError::Graph { reached, source })
    }

    // ----- packets -----

    fn packet_count(&self, f: usize) -> u16 {
        let flow = &self.flows[f];
        if flow.config.multi_packet {
            flow.source.2.len() as u16
        } else {
            1
        }
    }

    /// Records a sample in the ledger and, unless it was announced ahead,
    /// queues its packets for the network.
    fn send(&mut self, f: usize, number: u64, values: &[f64], time: SimTime, announced: bool) {
        let flow = f as u32;
        if !announced {
            let (size, count) = (self.flows[f].config.size, self.packet_count(f));
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
        self.ledger.set_values(flow, number, values);
    }

    /// Master-slave: announces the scheduled packets of boundaries
    /// `[k0, k1)` before the network runs them.
    fn announce(&mut self, k0: u64, k1: u64) {
        for f in 0..self.flows.len() {
            let Some((period, phase)) = self.flows[f].schedule else {
                continue;
            };
            // A flow on new values of its source sends at its source's
            // instants; a periodic flow at its own.
            let mut k = next_at_or_after(period, phase, k0);
            while k < k1 {
                let number = (k - phase) / period;
                let (size, count) = (self.flows[f].config.size, self.packet_count(f));
                let time = self.time_of(k);
                let flow = f as u32;
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
                k += period;
            }
        }
    }

    // ----- time -----

    fn time_of(&self, k: u64) -> SimTime {
        SimTime(k * self.step_ns)
    }

    /// When a packet of a scheduled flow produced at `k` enters the network.
    fn scheduled_send_time(&self, k: u64) -> SimTime {
        match (self.scheme, self.sync_steps) {
            (SchemeKind::TimeStepping, Some(p)) => self.time_of((k / p + 1) * p),
            _ => self.time_of(k),
        }
    }

    /// The boundary where a packet sent at `sent` and arriving (or lost) at
    /// `t` takes effect.
    fn effect_step(&self, t: SimTime, sent: SimTime) -> u64 {
        let step = match (self.scheme, self.sync_steps) {
            (SchemeKind::TimeStepping, Some(p)) => (t.0 / (p * self.step_ns) + 1) * p,
            _ => t.0.div_ceil(self.step_ns),
        };
        step.max(sent.0 / self.step_ns + 1).max(self.next_serve)
    }

    fn range_of(k: u64) -> std::ops::RangeInclusive<EventKey> {
        let lo = EventKey {
            step: k,
            time: SimTime::ZERO,
            flow: 0,
            number: 0,
            state_index: 0,
            loss: false,
        };
        let hi = EventKey {
            step: k,
            time: SimTime::MAX,
            flow: u32::MAX,
            number: u64::MAX,
            state_index: u16::MAX,
            loss: true,
        };
        lo..=hi
    }

    // ----- the network -----

    fn check_cancel(&self) -> Result<(), GraphSessionError> {
        if self
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            return Err(GraphSessionError::Interrupted {
                reached: self.time(),
            });
        }
        Ok(())
    }

    fn step_request(&mut self, until: SimTime, stop_at_delivery: bool) -> Step {
        Step {
            until,
            stop_at_delivery,
            sends: std::mem::take(&mut self.outgoing),
            // Graph components do not move nodes (yet).
            kinematics: Vec::new(),
        }
    }

    fn network_step(
        &mut self,
        until: SimTime,
        stop_at_delivery: bool,
    ) -> Result<SimTime, GraphSessionError> {
        self.check_cancel()?;
        let step = self.step_request(until, stop_at_delivery);
        let done = self.network.step(step)?;
        self.syncs += 1;
        self.enqueue(done)
    }

    /// Queues a step's events at their boundaries, each report going to the
    /// ledger first (only a packet's first report is queued).
    fn enqueue(&mut self, done: StepDone) -> Result<SimTime, GraphSessionError> {
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
        let reached = done.reached;
        let violation =
            |violation| GraphSessionError::Network(NetworkError::Violation { reached, violation });
        for event in events {
            let key = match &event {
                Event::Delivery(d) => {
                    if !self.ledger.report_delivery(d).map_err(violation)? {
                        continue;
                    }
                    EventKey {
                        step: self.effect_step(d.received, d.sent),
                        time: d.received,
                        flow: d.flow,
                        number: d.number,
                        state_index: d.state_index,
                        loss: false,
                    }
                }
                Event::Drop(d) => {
                    if !self.ledger.report_loss(d).map_err(violation)? {
                        continue;
                    }
                    EventKey {
                        step: self.effect_step(d.time, d.sent),
                        time: d.time,
                        flow: d.flow,
                        number: d.number,
                        state_index: d.state_index,
                        loss: true,
                    }
                }
            };
            self.queue.insert(key, event);
        }
        Ok(reached)
    }

    fn ledger_error(&self, source: LedgerError) -> GraphSessionError {
        GraphSessionError::Ledger {
            reached: self.time(),
            source,
        }
    }
}

/// The first `phase + n period` at or after `k`.
fn next_at_or_after(period: u64, phase: u64, k: u64) -> u64 {
    if k <= phase {
        phase
    } else {
        phase + (k - phase).div_ceil(period) * period
    }
}
