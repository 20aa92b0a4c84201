//! The co-simulation of a graph scenario with flows between nodes: the
//! graph, served by its I/O-free [`Endpoint`], and a network stepped
//! together under one of the three sync schemes, the packets kept by the
//! one [`Ledger`] (tags, fates, `packets.csv`) exactly as for `[[loops]]`.
//!
//! # A step boundary `k`
//! What a boundary does on the control side (receive, answer, evaluate,
//! send, and the packet numbers) is the endpoint's business
//! ([`controlsim::graph::endpoint`]). The session only routes and moves
//! time: it hands the endpoint every packet event that takes effect at `k`,
//! in canonical order (arrival time, flow, number, state index), with the
//! instant an answering component is evaluated at (the arrival; under
//! time-stepping the boundary), asks it to evaluate `k`, and gives every
//! sample it produces a send time and the network.
//!
//! Then the step is recorded and integrated. A packet arriving at `t` takes
//! effect at `ceil(t / h)` (master-slave, event-driven) or at the first sync
//! boundary after `t` (time-stepping), as for loops. Over a network that
//! may deliver a packet at its send instant (a builtin channel whose delay
//! can be zero) the boundary is evaluated in parts ([`Endpoint::parts`]),
//! each part's packets received just before it, so a zero-delay packet
//! acts at the boundary it was sent at and zero delay equals no network;
//! otherwise a packet never acts at the boundary it was sent at (that
//! boundary was evaluated before it was sent). A loss takes effect where
//! the packet would have, as for loops. The boundary at the end of the run is
//! evaluated and recorded but not served: packets that would act there are
//! in flight.
//!
//! # Send times
//! The endpoint says when a sample goes symbolically ([`SendAt`]); the
//! session turns that into a time. A packet of a flow with a fixed schedule
//! ([`controlsim::graph::FlowEnd::schedule`]) is sent at its boundary
//! (time-stepping: at the end of the sync period that produced it). Other
//! packets are sent at their boundary under event-driven sync, at the
//! first sync point at or after it under master-slave (the network has run
//! the period before the replay produces them, as for an event-triggered
//! loop controller's answers), and at the end of the period under
//! time-stepping. Answers, and the packets of `arrival` flows, go at
//! `GraphSession::answer_send_time`.
//!
//! # Sync schemes
//! The schemes are the loops' drivers (`session/time_stepping.rs`,
//! `master_slave.rs`, `event_driven.rs`), generic over
//! `ControlSide` (`control_side.rs`); `side.rs` says how a
//! graph serves and integrates the boundaries they ask for.

mod answer_rules;
mod moving;
mod side;

use crate::ledger::FateSink;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use controlsim::graph::{
    Endpoint, FlowEnd, Graph, GraphError, GraphObserver, LoopMap, SendAt, Timing,
};
use protocol::{FlowSpec, SimTime};

use crate::flows::FlowTable;
use crate::ledger::{Ledger, LedgerError, Verdict};
use crate::mobility::{GraphNodeMotion, NodeMotion};
use crate::network::{Network, NetworkError};
use crate::session::control_side::{run_scheme, Sends};
use crate::session::network_driver::{Class, Event, NetworkDriver, Placement, SyncClock};
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

/// What a graph's session needs to know of its flows and its network side
/// besides the graph (bridge's `graph_flows::NetworkSide::plan` makes it
/// from a scenario).
#[derive(Clone, Debug)]
pub struct GraphPlan {
    /// The flows as the ledger and `packets.csv` know them, and their names.
    pub table: FlowTable,
    pub names: Vec<String>,
    /// Per flow, its control side (source, inlet, send rule, loss policy).
    pub flows: Vec<FlowEnd>,
    /// The flows as the network is told about them.
    pub specs: Vec<FlowSpec>,
    pub scheme: SyncScheme,
    /// The boundary the run ends at.
    pub end_step: u64,
    /// `[sync] computation_delay`.
    pub computation_delay: SimTime,
    /// The nodes components move.
    pub motions: Vec<GraphNodeMotion>,
    /// A `[[loops]]` run's: per flow, the flow whose accepted packets it
    /// answers one for one, from its loops (see `answer_rules.rs`; `None`
    /// when some answer cannot be a rule). `None` for a graph scenario,
    /// whose answers the endpoint knows.
    pub loop_answer_triggers: Option<Option<Vec<Option<usize>>>>,
}

/// The co-simulation of one networked graph run.
pub struct GraphSession<W: FateSink> {
    /// The graph and its flows' control side.
    endpoint: Endpoint,
    /// The network, the ledger and the queue of packet events.
    driver: NetworkDriver<W>,
    /// `[sync] computation_delay`: from an answered packet's arrival to
    /// the answer entering the network.
    computation_delay: SimTime,
    /// The nodes components move.
    motions: Vec<GraphNodeMotion>,
    /// A `[[loops]]` run's: its loops in the graph and the nodes their
    /// plants move ([`GraphSession::moved_by_loops`]).
    loop_motions: Option<(LoopMap, Vec<NodeMotion>)>,
    /// The flows as the network is told about them.
    specs: Vec<FlowSpec>,
    /// Whether the boundary at the end is evaluated and observed (a loop
    /// run's recorder writes it as the loops leave it when it finishes).
    evaluates_end: bool,
    /// A loop run's `(period, phase)` of every sensor and time-triggered
    /// controller: event-driven sync stops where one acts, as the loops'
    /// session did, not at every boundary an answering flow could send.
    loop_schedules: Option<Vec<(u64, u64)>>,
    /// Per flow, the flow whose accepted packets it answers one for one
    /// (see `answer_rules.rs`); `None` when some answer cannot be a rule.
    answer_triggers: Option<Vec<Option<usize>>>,
    /// Event-driven: the network took those answers as rules.
    rules_active: bool,
    /// A run over a network that may deliver a packet at its send
    /// instant: boundaries are evaluated in parts around such deliveries
    /// ([`Self::serve_in_parts`]).
    instant: bool,
}

/// What a finished session hands back.
pub struct GraphSessionParts<W: FateSink> {
    pub graph: Graph,
    pub network: Box<dyn Network>,
    pub ledger: Ledger<W>,
    pub syncs: u64,
}

impl<W: FateSink> GraphSession<W> {
    /// Wires a built graph (with the inlets of `plan`'s flows) to a started
    /// network; [`GraphSession::run`] installs the flows.
    pub fn new(
        graph: Graph,
        plan: GraphPlan,
        network: Box<dyn Network>,
        packets_out: W,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Self {
        let GraphPlan {
            table,
            names,
            flows,
            specs,
            scheme,
            end_step,
            computation_delay,
            motions,
            loop_answer_triggers,
        } = plan;
        let loop_run = loop_answer_triggers.is_some();
        let clock = SyncClock {
            scheme,
            step_ns: graph.step_size().as_nanos(),
            end_step,
        };
        let ledger = Ledger::new(table.clone(), names, packets_out);
        let endpoint = Endpoint::new(graph, flows);
        let answer_triggers =
            loop_answer_triggers.unwrap_or_else(|| Some(endpoint.answer_triggers()));
        // A packet delivered at its send instant acts at once, at the
        // boundary it was sent at (see `serve_in_parts`), unless flows close
        // a cycle of direct feedthrough: there it acts one step later.
        let instant = network.may_deliver_instantly() && endpoint.can_evaluate_in_parts();
        let placement = if instant {
            Placement::AtSendBoundary
        } else {
            Placement::AfterSendBoundary
        };
        let mut driver = NetworkDriver::new(network, ledger, table, clock, placement, cancel);
        if instant && !loop_run {
            // A loop run keeps its loops' classes: controllers, then
            // actuators and losses.
            driver.classify_by_part(&endpoint.flow_parts());
        }
        GraphSession {
            driver,
            endpoint,
            instant,
            answer_triggers,
            rules_active: false,
            computation_delay,
            motions,
            loop_motions: None,
            evaluates_end: true,
            loop_schedules: None,
            specs,
        }
    }

    /// A `[[loops]]` run's session: `motions` (the nodes the plants move,
    /// bridge's `loop_mobility`) read the loops of `map` in the graph, and
    /// the boundary at the end is neither evaluated nor observed: the
    /// loops' recorder writes it as it stands when it finishes, and their
    /// metrics end before it.
    pub fn of_loops(mut self, map: LoopMap, motions: Vec<NodeMotion>) -> Self {
        self.evaluates_end = false;
        let step = self.graph().step_size().as_nanos();
        let schedules = map
            .loops()
            .iter()
            .flat_map(|l| [l.sensor, l.controller])
            .filter_map(|c| match self.graph().declaration(c).timing {
                Timing::Periodic { period, offset } => Some((period.0 / step, offset.0 / step)),
                _ => None,
            })
            .collect();
        self.loop_schedules = Some(schedules);
        if !motions.is_empty() {
            self.loop_motions = Some((map, motions));
        }
        self
    }

    /// The first boundary after `k` where the control side sends on its
    /// own (see [`Endpoint::next_send_boundary`]); a loop run's, where a
    /// sensor or a time-triggered controller acts.
    fn next_action(&self, k: u64) -> u64 {
        match &self.loop_schedules {
            None => self.endpoint.next_send_boundary(k),
            Some(schedules) => schedules
                .iter()
                .map(|&(period, phase)| {
                    if k < phase {
                        phase
                    } else {
                        phase + (k + 1 - phase).div_ceil(period) * period
                    }
                })
                .min()
                .unwrap_or(u64::MAX),
        }
    }

    /// Whether a period's first boundary can wait for the replay under
    /// master-slave (see `side.rs`, `serve_before_sync`): a loop run's
    /// always (its unscheduled sends go at the period's end, its positions
    /// are plant states); a graph's when every flow has a schedule and no
    /// component moves a node.
    fn evaluated_in_replay(&self) -> bool {
        self.is_loop_run() || (self.endpoint.all_scheduled() && self.motions.is_empty())
    }

    /// Whether this is a `[[loops]]` run ([`Self::of_loops`]).
    fn is_loop_run(&self) -> bool {
        self.loop_schedules.is_some()
    }

    /// The events received as they come and before the sync point (phase
    /// U): a loop run's controllers' (its actuators' wait for phase D); a
    /// graph's every inlet's.
    fn answering_class(&self) -> Class {
        if self.is_loop_run() {
            Class::CONTROLLER
        } else {
            Class::ACTUATOR
        }
    }

    pub fn syncs(&self) -> u64 {
        self.driver.syncs
    }

    pub fn network_description(&self) -> &str {
        &self.driver.description
    }

    pub fn time(&self) -> SimTime {
        self.endpoint.graph().time()
    }

    fn graph(&self) -> &Graph {
        self.endpoint.graph()
    }

    /// Installs the flows and runs to the end, `observer` seeing every
    /// boundary (the last one too).
    ///
    /// # Errors
    /// The first failure, naming the simulated time reached.
    pub fn run<O: GraphObserver>(&mut self, observer: &mut O) -> Result<(), GraphSessionError> {
        self.driver.configure(&self.specs)?;
        let scheme = self.driver.clock.scheme;
        run_scheme(scheme, self, observer)?;
        // The last boundary is evaluated and recorded, not served.
        let reached = self.time();
        let graph_error = |source| GraphSessionError::Graph { reached, source };
        if !self.evaluates_end {
            return Ok(());
        }
        self.endpoint.evaluate_unserved().map_err(graph_error)?;
        observer
            .observe(self.endpoint.graph())
            .map_err(|source| GraphError::Observer {
                step: self.graph().k(),
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
                graph: self.endpoint.into_graph(),
                network: self.driver.network,
                ledger: self.driver.ledger,
                syncs: self.driver.syncs,
            },
            resolved.map(|()| summary),
        )
    }

    // ----- a boundary -----

    /// Serves boundary `k` (receive, evaluate, send), unless it was served
    /// already (master-slave serves a period's first boundary before the
    /// sync). Packets of flows with a schedule were announced already when
    /// `announced`; the others are sent at `unscheduled_time`, answers at
    /// [`Self::answer_send_time`].
    fn serve(
        &mut self,
        k: u64,
        unscheduled_time: SimTime,
        announced: bool,
    ) -> Result<(), GraphSessionError> {
        if k < self.driver.next_serve {
            return Ok(());
        }
        if self.instant {
            return self.serve_in_parts(k, unscheduled_time, announced);
        }
        self.receive(k, Class::ACTUATOR)?;
        self.evaluate_and_send(k, unscheduled_time, announced)
    }

    /// A run over a network that may deliver a packet at its send instant
    /// serves a boundary evaluated in parts ([`Endpoint::evaluate_part`]),
    /// receiving before each part the packets that reach it: first what
    /// was sent before (a loop run's controllers' only, U1), then part 0
    /// (a loop's plants and sensors, S), then for each further part the
    /// packets delivered to it at the send instant (a loop's controllers,
    /// U2 and T; its actuators, D). Every packet event of the boundary is
    /// known (master-slave replays a period the network ran).
    fn serve_in_parts(
        &mut self,
        k: u64,
        unscheduled: SimTime,
        announced: bool,
    ) -> Result<(), GraphSessionError> {
        let sends = Sends {
            unscheduled,
            announced,
        };
        let now = self.time_of(k);
        self.receive_sent_before(k, self.answering_class(), Some(now))?;
        for part in 0..self.endpoint.parts() {
            self.receive_before_part(k, part)?;
            self.evaluate_part(part, sends)?;
        }
        self.end_boundary(k)
    }

    /// What is left of boundary `k` after its last part (the last part
    /// received every event known by then; this takes what a settle after
    /// it reported); the boundary is served from now on, and an event
    /// reported later acts at the next one.
    fn end_boundary(&mut self, k: u64) -> Result<(), GraphSessionError> {
        self.receive(k, Class::ACTUATOR)?;
        self.driver.next_serve = k + 1;
        Ok(())
    }

    /// What a part of a boundary evaluated in parts receives first: the
    /// events of the flows into it and into earlier parts; before the last
    /// part, every event left.
    fn receive_before_part(&mut self, k: u64, part: usize) -> Result<(), GraphSessionError> {
        let class = if part + 1 == self.endpoint.parts() {
            Class::ACTUATOR
        } else {
            Class::part(part)
        };
        self.receive(k, class)
    }

    /// Evaluates part `part` of the boundary and sends what it produced.
    fn evaluate_part(&mut self, part: usize, sends: Sends) -> Result<(), GraphSessionError> {
        let reached = self.time();
        self.endpoint
            .evaluate_part(part)
            .map_err(|source| GraphSessionError::Graph { reached, source })?;
        self.transmit(Some(sends))
    }

    /// Receive: every packet event queued for boundary `k` in the classes
    /// up to `last`, in canonical order, handed to the endpoint; the
    /// answers it computes at once go out at once (under answer rules, the
    /// reports of an answer join the queue as it is computed, and are
    /// received here in their place). A graph's flows are all of one
    /// class; a loop run's controllers receive before its actuators.
    fn receive(&mut self, k: u64, last: Class) -> Result<(), GraphSessionError> {
        self.receive_sent_before(k, last, None)
    }

    /// [`Self::receive`], deliveries only of packets sent before
    /// `sent_before` (where given).
    fn receive_sent_before(
        &mut self,
        k: u64,
        last: Class,
        sent_before: Option<SimTime>,
    ) -> Result<(), GraphSessionError> {
        debug_assert_eq!(self.graph().k(), k);
        while let Some(key) = self.driver.first_at(k, last, sent_before) {
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
                            // Time-stepping cannot place an answer inside
                            // the period: it is computed at the boundary,
                            // as a loop's event-triggered controller's.
                            let at = match self.driver.clock.scheme {
                                SyncScheme::TimeStepping(_) => self.time(),
                                _ => d.received,
                            };
                            let first = component.map_or(0, usize::from);
                            self.endpoint.accept(f, first, &values, d.received, at);
                            self.transmit(None)?;
                        }
                        Verdict::Drop(_) => self.endpoint.lose(f, usize::from(d.state_index)),
                    }
                }
                Event::Drop(d) => {
                    self.driver
                        .ledger
                        .lose(&d)
                        .map_err(|s| self.ledger_error(s))?;
                    self.endpoint
                        .lose(d.flow as usize, usize::from(d.state_index));
                }
            }
        }
        Ok(())
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
        self.endpoint
            .evaluate()
            .map_err(|source| GraphSessionError::Graph { reached, source })?;
        self.transmit(Some(Sends {
            unscheduled: unscheduled_time,
            announced,
        }))
    }

    /// Sends every sample the endpoint produced, in its order: answers at
    /// [`Self::answer_send_time`], scheduled ones at
    /// [`Self::scheduled_send_time`] (only their values recorded when they
    /// were announced), the rest as `sends` says. A receive (`sends` is
    /// `None`) produces answers only; under answer rules the network sent
    /// those already, and the ledger only learns their values.
    fn transmit(&mut self, sends: Option<Sends>) -> Result<(), GraphSessionError> {
        while let Some(t) = self.endpoint.poll_transmit() {
            let (time, announced) = match (t.at, sends) {
                (SendAt::Answer { arrival }, _) if self.answers_by_rule(t.flow) => {
                    let time = self.answer_send_time(arrival);
                    self.driver
                        .answer_by_rule(t.flow as u32, t.number, &t.values, time)?;
                    continue;
                }
                (SendAt::Answer { arrival }, _) => (self.answer_send_time(arrival), false),
                (SendAt::Scheduled { boundary }, _) => (
                    self.scheduled_send_time(boundary),
                    sends.is_some_and(|s| s.announced),
                ),
                (SendAt::Unscheduled, Some(s)) => (s.unscheduled, false),
                (SendAt::Unscheduled, None) => {
                    unreachable!("the endpoint sends unscheduled samples only when it evaluates")
                }
            };
            self.driver
                .send(t.flow as u32, t.number, &t.values, time, announced);
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
            SyncScheme::TimeStepping(_) => self.scheduled_send_time(self.graph().k()),
        }
    }

    fn record_and_integrate<O: GraphObserver>(
        &mut self,
        observer: &mut O,
    ) -> Result<(), GraphSessionError> {
        let reached = self.time();
        let k = self.graph().k();
        observer
            .observe(self.endpoint.graph())
            .map_err(|source| GraphSessionError::Graph {
                reached,
                source: GraphError::Observer { step: k, source },
            })?;
        self.endpoint
            .integrate_step()
            .map_err(|source| GraphSessionError::Graph { reached, source })
    }

    // ----- packets -----

    /// Master-slave: announces the scheduled packets of the period
    /// `[k0, k1)` that were not sent yet, in the order syncing every period
    /// sends them: its first boundary (served before the sync, or announced
    /// on its own), then the rest.
    fn announce_period(&mut self, k0: u64, k1: u64) {
        let first_unsent = k0.max(self.driver.next_serve);
        if first_unsent == k0 {
            self.announce(k0, k0 + 1);
            self.announce(k0 + 1, k1);
        } else {
            self.announce(first_unsent, k1);
        }
    }

    /// Announces the scheduled packets of boundaries `[k0, k1)`, flow by flow.
    fn announce(&mut self, k0: u64, k1: u64) {
        for a in self.endpoint.announcements(k0, k1) {
            let time = self.driver.clock.time_of(a.boundary);
            self.driver.announce(a.flow as u32, a.number, a.width, time);
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

    fn ledger_error(&self, source: LedgerError) -> GraphSessionError {
        GraphSessionError::Ledger {
            reached: self.time(),
            source,
        }
    }
}
