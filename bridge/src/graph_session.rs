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
//!    `on_loss = "zero"` and changes nothing under `hold`. A component that
//!    answers the flow (on new inputs, triggered by the inlet directly, the
//!    source of a flow) is evaluated there at the packet's event time
//!    ([`Graph::respond`]) and its answer sent at once (`computation_delay`
//!    after the arrival), as a loop's event-triggered controller answers.
//! 2. **Evaluate** the graph at `k` in its evaluation order (components on
//!    new inputs, actuators for one, answer the packets of step 1 here).
//! 3. **Send.** Every flow due at `k` that did not send an answer, in flow
//!    order, sends the values its source holds after the evaluation: a `periodic` flow at its instants,
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
//! and at the end of the period under time-stepping. Answers, and the
//! packets of `arrival` flows, go at `GraphSession::answer_send_time`.

mod moving;

use crate::ledger::FateSink;
use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use controlsim::graph::{Graph, GraphError, GraphObserver};
use protocol::{FlowSpec, SimTime};

use crate::config::SchemeKind;
use crate::graph_flows::{zero_on_loss, GraphFlow, NetworkSide, SendRule};
use crate::ledger::{Ledger, LedgerError, Verdict};
use crate::network::{Network, NetworkError};
use crate::session::master_slave::{LOOKAHEAD, LOOKAHEAD_IN_FLIGHT, LOOKAHEAD_MAX_SENDS};
use crate::session::network_driver::{Event, NetworkDriver, Placement, SyncClock};
use crate::sync_scheme::SyncScheme;

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

/// The co-simulation of one networked graph run.
pub struct GraphSession<W: FateSink> {
    graph: Graph,
    /// The network, the ledger and the queue of packet events.
    driver: NetworkDriver<W>,
    flows: Vec<GraphFlow>,
    /// Per flow without a schedule: the next packet number.
    counters: Vec<u64>,
    /// Per flow: the arrival of the last packet accepted at the boundary
    /// being served.
    arrived: Vec<Option<SimTime>>,
    /// Per flow: the components that answer its packets at their arrival
    /// ([`Graph::respond`]): evaluated on new inputs, with a triggering
    /// input its inlet drives, and the source of some flow.
    responders: Vec<Vec<usize>>,
    /// Per flow: it was sent as an answer at the boundary being served
    /// (the send phase leaves it alone).
    answered: Vec<bool>,
    /// `[sync] computation_delay`: from an answered packet's arrival to
    /// the answer entering the network.
    computation_delay: SimTime,
    /// Master-slave may run the network ahead (`[sync] lookahead`).
    lookahead: bool,
    /// The nodes components move ([`crate::graph_mobility`]).
    motions: Vec<crate::graph_mobility::GraphNodeMotion>,
}

/// What a finished session hands back.
pub struct GraphSessionParts<W: FateSink> {
    pub graph: Graph,
    pub network: Box<dyn Network>,
    pub ledger: Ledger<W>,
    pub syncs: u64,
}

impl<W: FateSink> GraphSession<W> {
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
        let clock = SyncClock {
            scheme: side.resolved.sync,
            step_ns: graph.step_size().as_nanos(),
            end_step: side.resolved.end_step,
        };
        let ledger = Ledger::new(table.clone(), side.names(), packets_out);
        let responders = side
            .flows
            .iter()
            .map(|g| {
                graph
                    .triggered_by(g.inlet)
                    .into_iter()
                    .filter(|&c| side.flows.iter().any(|f| f.source.0 == c))
                    .collect()
            })
            .collect();
        GraphSession {
            driver: NetworkDriver::new(network, ledger, table, clock, Placement::Graph, cancel),
            flows: side.flows.clone(),
            counters: vec![0; n],
            arrived: vec![None; n],
            responders,
            answered: vec![false; n],
            computation_delay: side.resolved.scenario.sync.computation_delay,
            lookahead: side.resolved.scenario.sync.lookahead,
            motions: side.motions.clone(),
            graph,
        }
    }

    pub fn syncs(&self) -> u64 {
        self.driver.syncs
    }

    pub fn network_description(&self) -> &str {
        &self.driver.description
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
        let event_driven = self.driver.clock.scheme.kind() == SchemeKind::EventDriven;
        let specs: Vec<FlowSpec> = self
            .driver
            .flows
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
        self.driver.configure(&specs)?;
        match self.driver.clock.scheme {
            SyncScheme::TimeStepping(s) => self.run_time_stepping(s.period.get(), observer)?,
            SyncScheme::MasterSlave(s) => self.run_master_slave(s.period.get(), observer)?,
            SyncScheme::EventDriven(_) => self.run_event_driven(observer)?,
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
        let resolved = self
            .driver
            .resolve_leftovers()
            .map_err(|s| self.ledger_error(s));
        let summary = if network_alive {
            self.driver.network.finish().ok()
        } else {
            None
        };
        (
            GraphSessionParts {
                graph: self.graph,
                network: self.driver.network,
                ledger: self.driver.ledger,
                syncs: self.driver.syncs,
            },
            resolved.map(|()| summary),
        )
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
        let scheduled = self.flows.iter().all(|f| f.schedule.is_some());
        if self.lookahead && scheduled && !self.moves_nodes() {
            return self.run_master_slave_ahead(period, observer);
        }
        let tolerance = self.position_tolerance();
        if self.lookahead && scheduled && tolerance > 0.0 {
            return self.run_master_slave_tolerant(period, tolerance, observer);
        }
        let mut s = self.graph.k();
        while s < self.driver.clock.end_step {
            let e = (s + period).min(self.driver.clock.end_step);
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

    /// Master-slave lookahead (as for loops, see `session/master_slave.rs`):
    /// when every flow sends on a fixed schedule, every packet is announced
    /// before its period is replayed and the replay gives the network
    /// nothing, so the network runs windows of up to [`LOOKAHEAD`] ahead,
    /// two of them always with it. Each period is announced in the order
    /// syncing every period sends it (its first boundary, then the rest),
    /// so the network sees the same requests and the results are the same
    /// bits; only the sync count changes.
    fn run_master_slave_ahead<O: GraphObserver>(
        &mut self,
        period: u64,
        observer: &mut O,
    ) -> Result<(), GraphSessionError> {
        let max_periods = (LOOKAHEAD.0 / (period * self.driver.clock.step_ns)).max(1);
        let end_step = self.driver.clock.end_step;
        let mut in_flight = VecDeque::with_capacity(LOOKAHEAD_IN_FLIGHT);
        let mut announced = self.graph.k();
        while in_flight.len() < LOOKAHEAD_IN_FLIGHT && announced < end_step {
            let end = self.launch_window(announced, period, max_periods)?;
            in_flight.push_back((announced, end));
            announced = end;
        }
        while let Some((start, end)) = in_flight.pop_front() {
            self.driver.end_step(|_| false)?;
            if announced < end_step {
                let next = self.launch_window(announced, period, max_periods)?;
                in_flight.push_back((announced, next));
                announced = next;
            }
            for k in start..end {
                self.serve(k, self.time_of(k), true)?;
                self.record_and_integrate(observer)?;
            }
            debug_assert!(
                self.driver.outgoing.is_empty(),
                "a lookahead replay produced a packet to send"
            );
        }
        Ok(())
    }

    /// Announces whole periods from `start` until the window is full and
    /// hands its step to the network; returns the window's end.
    fn launch_window(
        &mut self,
        start: u64,
        period: u64,
        max_periods: u64,
    ) -> Result<u64, GraphSessionError> {
        let end_step = self.driver.clock.end_step;
        let mut end = start;
        for _ in 0..max_periods {
            if end >= end_step || self.driver.outgoing.len() >= LOOKAHEAD_MAX_SENDS {
                break;
            }
            let next = (end + period).min(end_step);
            self.announce(end, end + 1);
            self.announce(end + 1, next);
            end = next;
        }
        self.check_cancel()?;
        self.driver.begin_step(self.time_of(end), Vec::new())?;
        Ok(end)
    }

    /// Time-stepping: the network runs a period with what the previous one
    /// produced while the graph integrates it with what had arrived.
    fn run_time_stepping<O: GraphObserver>(
        &mut self,
        period: u64,
        observer: &mut O,
    ) -> Result<(), GraphSessionError> {
        let mut s = self.graph.k();
        while s < self.driver.clock.end_step {
            let e = (s + period).min(self.driver.clock.end_step);
            self.check_cancel()?;
            for k in self.begin_period(s, e, observer)?..e {
                let send = self.scheduled_send_time(k);
                self.serve(k, send, false)?;
                self.record_and_integrate(observer)?;
            }
            self.driver.end_step(|_| false)?;
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
        while k < self.driver.clock.end_step {
            let t = self.time_of(k);
            // Packets are received as the network reaches them, so that an
            // answer leaves at its arrival (plus the computation delay).
            self.begin_boundary();
            self.receive(k)?;
            while self.driver.network.reached() < t {
                self.network_step(t, true)?;
                self.receive(k)?;
            }
            self.evaluate_and_send(k, t, false)?;
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
            .min(self.driver.clock.end_step);
            if let Some(p) = self.driver.clock.scheme.max_steps() {
                next = next.min(k + p);
            }
            let reached = self.network_step(self.time_of(next), true)?;
            let target = reached
                .0
                .div_ceil(self.driver.clock.step_ns)
                .clamp(k + 1, next);
            self.record_and_integrate(observer)?;
            // Only losses can act before the target: serve them.
            for b in k + 1..target {
                let send = self.time_of(b).max(self.driver.network.reached());
                self.serve(b, send, false)?;
                self.record_and_integrate(observer)?;
            }
            k = target;
        }
        // Every loss up to the end is known.
        let t = self.time_of(self.driver.clock.end_step);
        while self.driver.network.reached() < t {
            self.network_step(t, false)?;
        }
        Ok(())
    }

    // ----- a boundary -----

    /// Serves boundary `k` (receive, evaluate, send). Packets of flows with
    /// a schedule were announced already when `announced`; the others are
    /// sent at `unscheduled_time`, answers at [`Self::answer_send_time`].
    fn serve(
        &mut self,
        k: u64,
        unscheduled_time: SimTime,
        announced: bool,
    ) -> Result<(), GraphSessionError> {
        self.begin_boundary();
        self.receive(k)?;
        self.evaluate_and_send(k, unscheduled_time, announced)
    }

    /// Forgets what the previous boundary received and answered.
    fn begin_boundary(&mut self) {
        self.arrived.fill(None);
        self.answered.fill(false);
    }

    /// Receive: every packet event queued for boundary `k`, in canonical
    /// order; an accepted packet is written into its inlet and answered by
    /// the components that answer it, whose flows send at once.
    fn receive(&mut self, k: u64) -> Result<(), GraphSessionError> {
        debug_assert_eq!(self.graph.k(), k);
        for key in self.driver.keys_at(k, None, None) {
            let event = self.driver.take(&key);
            match event {
                Event::Delivery(d) => {
                    let verdict = self
                        .driver
                        .ledger
                        .deliver(&d, k)
                        .map_err(|s| self.ledger_error(s))?;
                    let f = d.flow as usize;
                    match verdict {
                        Verdict::Accept { values, component } => {
                            let inlet = self.flows[f].inlet;
                            self.graph
                                .set_output(inlet, 0, component.unwrap_or(0), &values);
                            self.arrived[f] = Some(d.received);
                            self.answer(f, d.received);
                        }
                        Verdict::Drop(_) => self.on_loss(f, d.state_index),
                    }
                }
                Event::Drop(d) => {
                    self.driver
                        .ledger
                        .lose(&d)
                        .map_err(|s| self.ledger_error(s))?;
                    self.on_loss(d.flow as usize, d.state_index);
                }
            }
        }
        Ok(())
    }

    /// The components that answer flow `g` evaluate at the packet's
    /// arrival (under time-stepping at the boundary that delivers it, as a
    /// loop's event-triggered controller), and every flow that carries an
    /// answer (`update` from one of them, or `arrival` of `g` from one of
    /// them) sends it, numbered in the order answers are computed.
    fn answer(&mut self, g: usize, arrival: SimTime) {
        if self.responders[g].is_empty() {
            return;
        }
        let at = match self.driver.clock.scheme {
            SyncScheme::TimeStepping(_) => self.time(),
            _ => arrival,
        };
        for j in 0..self.responders[g].len() {
            self.graph.respond(self.responders[g][j], at);
        }
        let time = self.answer_send_time(arrival);
        for f in 0..self.flows.len() {
            let flow = &self.flows[f];
            let carries = match flow.rule {
                SendRule::Update => true,
                SendRule::Arrival(h) => h as usize == g,
                SendRule::Periodic { .. } => false,
            };
            if !carries || !self.responders[g].contains(&flow.source.0) {
                continue;
            }
            let (c, p, range) = flow.source.clone();
            let values = self.graph.output(c, p)[range].to_vec();
            let number = self.counters[f];
            self.counters[f] += 1;
            self.answered[f] = true;
            self.send(f, number, &values, time, false);
        }
    }

    /// Evaluate boundary `k`, then send every flow due there that did not
    /// send as an answer.
    fn evaluate_and_send(
        &mut self,
        k: u64,
        unscheduled_time: SimTime,
        announced: bool,
    ) -> Result<(), GraphSessionError> {
        self.driver.next_serve = k + 1;
        let reached = self.time();
        self.graph
            .evaluate()
            .map_err(|source| GraphSessionError::Graph { reached, source })?;
        for f in 0..self.flows.len() {
            if self.answered[f] {
                continue;
            }
            let flow = &self.flows[f];
            let (c, p, range) = flow.source.clone();
            let (due, unscheduled_time) = match flow.rule {
                SendRule::Periodic { period, phase } => {
                    (k >= phase && (k - phase) % period == 0, unscheduled_time)
                }
                SendRule::Update => (self.graph.is_fresh(c, p), unscheduled_time),
                // Once per boundary, `computation_delay` after the last
                // packet it follows.
                SendRule::Arrival(g) => match self.arrived[g as usize] {
                    Some(t) => (true, self.answer_send_time(t)),
                    None => (false, unscheduled_time),
                },
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

    /// When an answer to a packet that arrived at `arrival` enters the
    /// network, as a loop's event-triggered controller's: arrival plus
    /// `computation_delay` (event-driven); the first sync point at or after
    /// that (master-slave: the network has not run past the period the
    /// packet arrived in, except at a sync point it already ran); the end
    /// of the period that delivered it (time-stepping).
    fn answer_send_time(&self, arrival: SimTime) -> SimTime {
        let ready = arrival + self.computation_delay;
        let clock = &self.driver.clock;
        match clock.scheme {
            SyncScheme::EventDriven(_) => ready,
            SyncScheme::MasterSlave(m) => {
                let period_ns = m.period.get() * clock.step_ns;
                SimTime(ready.0.div_ceil(period_ns) * period_ns).max(self.driver.network.reached())
            }
            SyncScheme::TimeStepping(_) => self.scheduled_send_time(self.graph.k()),
        }
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

    /// Records a sample in the ledger and, unless it was announced ahead,
    /// queues its packets for the network.
    fn send(&mut self, f: usize, number: u64, values: &[f64], time: SimTime, announced: bool) {
        self.driver.send(f as u32, number, values, time, announced);
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
            let width = self.flows[f].source.2.len();
            let mut k = next_at_or_after(period, phase, k0);
            while k < k1 {
                let number = (k - phase) / period;
                self.driver
                    .announce(f as u32, number, width, self.time_of(k));
                k += period;
            }
        }
    }

    // ----- time -----

    fn time_of(&self, k: u64) -> SimTime {
        self.driver.clock.time_of(k)
    }

    /// When a packet of a scheduled flow produced at `k` enters the network.
    fn scheduled_send_time(&self, k: u64) -> SimTime {
        self.driver.clock.scheduled_send_time(k)
    }

    // ----- the network -----

    fn check_cancel(&self) -> Result<(), GraphSessionError> {
        if self.driver.cancelled() {
            return Err(GraphSessionError::Interrupted {
                reached: self.time(),
            });
        }
        Ok(())
    }

    /// One synchronous network step, with the positions of the nodes
    /// components move; its events join the queue.
    fn network_step(
        &mut self,
        until: SimTime,
        stop_at_delivery: bool,
    ) -> Result<SimTime, GraphSessionError> {
        self.check_cancel()?;
        let kinematics = self.kinematics();
        Ok(self
            .driver
            .step(until, stop_at_delivery, kinematics, |_| false)?)
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
