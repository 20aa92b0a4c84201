//! The co-simulation proper: a control side (controlsim) and a network
//! stepped together under one of the three synchronisation schemes of
//! docs/design.md §4.
//!
//! # What happens at a step boundary `k`
//! Every scheme serves a boundary in the same order, which is the order of
//! controlsim's standalone closed loop, so that a zero-delay network
//! reproduces it bit for bit:
//!
//! 1. **U1** packets to controllers that take effect at `k` and were sent
//!    before `k h`, in canonical order (arrival time, flow, number, state
//!    index); each accepted one sets the controller's input, and an
//!    event-triggered controller responds at once, evaluated at the packet's
//!    arrival time (which lies in the step that ends at `k`), not at `k h`;
//! 2. **S** samples due at `k`, sent at `k h` (local loops: straight to the
//!    controller);
//! 3. **U2** packets to controllers sent at `k h` itself (a zero delay);
//! 4. **T** time-triggered controllers due at `k` compute and send;
//! 5. **D** packets and losses at the actuators that take effect at `k`.
//!
//! A packet that arrives at `t` takes effect at `k_a = ceil(t / h)` under
//! master-slave and event-driven sync, and at the first sync boundary after
//! `t` under time-stepping. It never acts before it arrived. The boundary at
//! the end of the run is not served: a packet that would act there or later
//! is reported as in flight.
//!
//! # Packet numbers
//! A sample's packet number is its index in the sensor's schedule, and a
//! time-triggered control packet's is its index in the controller's; so
//! master-slave can announce them to the network before it replays the
//! period that produces their values. Responses of event-triggered
//! controllers are numbered in the order they are computed.
//!
//! # Scheme drivers
//! `time_stepping.rs`, `master_slave.rs` and `event_driven.rs` decide when
//! the network runs and when boundaries are served, once for every control
//! side: they are generic over [`control_side::ControlSide`], which
//! `loop_side.rs` implements for the loops here and
//! bridge's `graph_session` for graphs. What a loop's boundary does is here.

// `control_side` and `network_driver` are public (and hidden) only for
// bridge's `graph_session`, which drives the same schemes until it moves
// into this crate too.
#[doc(hidden)]
pub mod control_side;
mod event_driven;
#[doc(hidden)]
pub mod event_rules;
mod loop_side;
pub(crate) mod master_slave;
#[doc(hidden)]
pub mod network_driver;
mod time_stepping;

use crate::ledger::FateSink;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use controlsim::{ApiError, Observer, StepError, System, Trigger};
use protocol::{Delivery, NodeKinematics, SimTime};

use crate::flows::{Direction, FlowTable};
use crate::ledger::{Ledger, LedgerError, Verdict};
use crate::mobility::NodeMotion;
use crate::network::{Network, NetworkError};
use crate::resolved::{OnLoss, ResolvedRun, ResponseKind, SchemeKind};
use crate::sync_scheme::{MasterSlave, SyncScheme};
use network_driver::{Class, Event, NetworkDriver, Placement, SyncClock};

/// Why a co-simulation stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Network(#[from] NetworkError),
    #[error("control side at simulated time {reached}: {source}")]
    Step { reached: SimTime, source: StepError },
    #[error("control side at simulated time {reached}: {source}")]
    Api { reached: SimTime, source: ApiError },
    #[error("packet bookkeeping at simulated time {reached}: {source}")]
    Ledger {
        reached: SimTime,
        source: LedgerError,
    },
    #[error("interrupted at simulated time {reached}")]
    Interrupted { reached: SimTime },
}

impl SessionError {
    /// The simulated time reached when the run stopped, where known.
    pub fn reached(&self) -> Option<SimTime> {
        match self {
            SessionError::Network(e) => e.reached(),
            SessionError::Step { reached, .. }
            | SessionError::Api { reached, .. }
            | SessionError::Ledger { reached, .. }
            | SessionError::Interrupted { reached } => Some(*reached),
        }
    }
}

/// Why a controller computes now.
#[derive(Clone, Copy, Debug)]
enum Cause {
    /// A time-triggered tick at boundary `k`.
    Tick(u64),
    /// An event-triggered response to a packet that arrived at this time.
    Arrival(SimTime),
}

/// The co-simulation of one run.
pub struct Session<W: FateSink> {
    system: System,
    /// The network, the ledger and the queue of packet events.
    driver: NetworkDriver<W>,
    flows: FlowTable,
    computation_delay: SimTime,
    /// Per loop: whether the controller is event-triggered, whether it
    /// answers by rollback, the actuator's loss policy, and the plant's node.
    event_triggered: Vec<bool>,
    rollback: Vec<bool>,
    zero_on_loss: Vec<bool>,
    /// The nodes that plants move.
    motions: Vec<NodeMotion>,
    /// Per loop: the next number of an event-triggered control packet.
    response_numbers: Vec<u64>,
    /// Per loop: control values of a local controller waiting for phase D.
    local_controls: Vec<Vec<Vec<f64>>>,
    /// The time-triggered packets of the boundary being served were
    /// announced ahead (master-slave, answer rules): sending only fills in
    /// their values.
    announce_ahead: bool,
    /// Event-driven: the network took the event-triggered answers as rules
    /// (see `event_rules.rs`).
    rules_active: bool,
}

/// What a finished (or failed) session hands back.
pub struct SessionParts<W: FateSink> {
    pub system: System,
    pub network: Box<dyn Network>,
    pub ledger: Ledger<W>,
    pub syncs: u64,
}

impl<W: FateSink> Session<W> {
    /// Wires a built system to a started network; [`Session::run`]
    /// installs the flows in it. `motions` are the nodes the plants move
    /// ([`crate::mobility::NodeMotion`], which the application settles
    /// against the built system).
    pub fn new(
        resolved: &ResolvedRun,
        system: System,
        motions: Vec<NodeMotion>,
        network: Box<dyn Network>,
        packets_out: W,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Self {
        let flows = FlowTable::new(&resolved.loops);
        let n = system.loops().len();
        let mut event_triggered = Vec::with_capacity(n);
        let mut rollback = Vec::with_capacity(n);
        for (i, lp) in system.loops().iter().enumerate() {
            let et = lp.controller_trigger() == Trigger::Event;
            event_triggered.push(et);
            rollback.push(
                resolved.loops[i].response == ResponseKind::Rollback && lp.has_rollback_response(),
            );
        }
        let names = system
            .loops()
            .iter()
            .map(|l| l.name().to_string())
            .collect();
        let clock = SyncClock {
            scheme: resolved.sync,
            step_ns: system.step_size().as_nanos(),
            end_step: resolved.end_step,
        };
        let ledger = Ledger::new(flows.clone(), names, packets_out);
        Session {
            driver: NetworkDriver::new(
                network,
                ledger,
                flows.clone(),
                clock,
                Placement::Loops,
                cancel,
            ),
            flows,
            computation_delay: resolved.computation_delay,
            event_triggered,
            rollback,
            zero_on_loss: resolved
                .loops
                .iter()
                .map(|l| l.downlink.on_loss == OnLoss::Zero)
                .collect(),
            motions,
            response_numbers: vec![0; n],
            local_controls: vec![Vec::new(); n],
            announce_ahead: false,
            rules_active: false,
            system,
        }
    }

    /// Installs the flows in the network, then runs the whole
    /// co-simulation, `observer` seeing every boundary.
    ///
    /// # Errors
    /// The network rejects the flows; the first failure after that, naming
    /// the simulated time reached.
    pub fn run<O: Observer>(&mut self, observer: &mut O) -> Result<(), SessionError> {
        self.driver
            .configure(&self.flows.specs(&self.event_triggered))?;
        let scheme = self.driver.clock.scheme;
        control_side::run_scheme(scheme, self, observer)
    }

    /// Ends the network run (when it is still alive), resolves what is left
    /// and hands the parts back with the network's summary, if it gave one.
    /// The parts come back also when resolving fails, so that the caller can
    /// still record the failure. Called after `run`, whether it succeeded.
    ///
    /// # Errors
    /// Losses that cannot be recorded, in the second half of the result; a
    /// failing network is not an error here.
    pub fn finish(
        mut self,
        network_alive: bool,
    ) -> (
        SessionParts<W>,
        Result<Option<protocol::Summary>, SessionError>,
    ) {
        let resolved = self.resolve_leftovers();
        let summary = if network_alive {
            self.driver.network.finish().ok()
        } else {
            None
        };
        let parts = SessionParts {
            system: self.system,
            network: self.driver.network,
            ledger: self.driver.ledger,
            syncs: self.driver.syncs,
        };
        (parts, resolved.map(|()| summary))
    }

    /// Records the losses still queued and every packet without a fate.
    fn resolve_leftovers(&mut self) -> Result<(), SessionError> {
        self.driver
            .resolve_leftovers()
            .map_err(|source| self.ledger_error(source))
    }

    pub fn syncs(&self) -> u64 {
        self.driver.syncs
    }

    pub fn network_description(&self) -> &str {
        &self.driver.description
    }

    // ----- time -----

    fn time_of(&self, k: u64) -> SimTime {
        self.driver.clock.time_of(k)
    }

    fn now(&self) -> SimTime {
        self.system.time()
    }

    // ----- the network -----

    /// Positions and velocities of the nodes that plants move.
    fn kinematics(&self) -> Vec<NodeKinematics> {
        self.motions
            .iter()
            .map(|m| m.kinematics(&self.system))
            .collect()
    }

    /// The first boundary after `k` where a sensor or a time-triggered
    /// controller acts.
    fn next_action_step(&self, k: u64) -> u64 {
        let mut next = u64::MAX;
        for lp in self.system.loops() {
            next = next.min(lp.sensor_schedule().next_at_or_after(k + 1));
            if let Trigger::Time(schedule) = lp.controller_trigger() {
                next = next.min(schedule.next_at_or_after(k + 1));
            }
        }
        next
    }

    // ----- errors with the time attached -----

    fn api_error(&self, source: ApiError) -> SessionError {
        SessionError::Api {
            reached: self.now(),
            source,
        }
    }

    fn ledger_error(&self, source: LedgerError) -> SessionError {
        SessionError::Ledger {
            reached: self.now(),
            source,
        }
    }

    /// A queued delivery on a flow that does not exist (`enqueue` lets none in).
    fn unknown_flow(&self, d: &Delivery) -> SessionError {
        SessionError::Network(self.driver.unknown_flow(d))
    }

    fn advance<O: Observer>(&mut self, k1: u64, observer: &mut O) -> Result<(), SessionError> {
        let reached = self.now();
        self.system
            .advance_to(k1, observer)
            .map_err(|source| SessionError::Step { reached, source })
    }

    // ----- the boundary procedure -----

    /// Serves boundary `k` when every packet event up to it is known
    /// (master-slave replay, time-stepping): U1, S, U2, T, D.
    fn serve_boundary(&mut self, k: u64) -> Result<(), SessionError> {
        let t = self.time_of(k);
        self.apply_controller_events(k, Some(t))?;
        self.sample_due(k)?;
        self.apply_controller_events(k, None)?;
        self.tick_due(k)?;
        self.apply_actuator_events(k)
    }

    /// U: packets to controllers at `k` (only those sent before `sent_before`
    /// when given), in canonical order.
    fn apply_controller_events(
        &mut self,
        k: u64,
        sent_before: Option<SimTime>,
    ) -> Result<(), SessionError> {
        let keys = self.driver.keys_at(k, Some(Class::Controller), sent_before);
        for key in keys {
            let event = self.driver.take(&key);
            match event {
                Event::Delivery(d) => self.deliver_to_controller(k, &d)?,
                Event::Drop(d) => self
                    .driver
                    .ledger
                    .lose(&d)
                    .map_err(|source| self.ledger_error(source))?,
            }
        }
        Ok(())
    }

    /// D: packets and losses at actuators at `k`, then local controllers'
    /// values, in the order they were computed.
    fn apply_actuator_events(&mut self, k: u64) -> Result<(), SessionError> {
        let keys = self.driver.keys_at(k, Some(Class::Actuator), None);
        for key in keys {
            let event = self.driver.take(&key);
            match event {
                Event::Delivery(d) => self.deliver_to_actuator(k, &d)?,
                Event::Drop(d) => {
                    self.driver
                        .ledger
                        .lose(&d)
                        .map_err(|source| self.ledger_error(source))?;
                    self.on_actuator_loss(d.flow, d.state_index)?;
                }
            }
        }
        for i in 0..self.local_controls.len() {
            for u in std::mem::take(&mut self.local_controls[i]) {
                self.system
                    .set_actuators(i, &u)
                    .map_err(|e| self.api_error(e))?;
            }
        }
        Ok(())
    }

    /// The flow of a reported packet; a flow the bridge never made (a
    /// misbehaving server) is an error, not a panic.
    /// The flow a delivery names; a flow the bridge never made is the
    /// server breaking the protocol.
    fn flow_of(&self, d: &Delivery) -> Result<&crate::flows::Flow, SessionError> {
        self.flows.get(d.flow).ok_or_else(|| self.unknown_flow(d))
    }

    fn deliver_to_controller(&mut self, k: u64, d: &Delivery) -> Result<(), SessionError> {
        let flow = self.flow_of(d)?;
        let (i, direction) = (flow.loop_index, flow.direction);
        // Feed-forward values follow the measurement in the controller's input.
        let offset = match direction {
            Direction::Feedforward => self.system.loops()[i].measurement_dim(),
            _ => 0,
        };
        let (values, component) = match self
            .driver
            .ledger
            .deliver(d, k)
            .map_err(|source| self.ledger_error(source))?
        {
            Verdict::Accept { values, component } => (values, component),
            Verdict::Drop(_) => return Ok(()),
        };
        match component {
            Some(c) => self.system.set_controller_input(i, offset + c, values[0]),
            None if offset == 0 => self.system.set_controller_inputs(i, &values),
            None => values
                .iter()
                .enumerate()
                .try_for_each(|(j, &v)| self.system.set_controller_input(i, offset + j, v)),
        }
        .map_err(|e| self.api_error(e))?;
        // A controller answers its own measurements; feed-forward values are
        // held until then.
        if self.event_triggered[i] && direction == Direction::Uplink {
            self.respond(i, Cause::Arrival(d.received))?;
        }
        Ok(())
    }

    fn deliver_to_actuator(&mut self, k: u64, d: &Delivery) -> Result<(), SessionError> {
        let i = self.flow_of(d)?.loop_index;
        match self
            .driver
            .ledger
            .deliver(d, k)
            .map_err(|source| self.ledger_error(source))?
        {
            Verdict::Accept {
                values,
                component: Some(c),
            } => self
                .system
                .set_actuator(i, c, values[0])
                .map_err(|e| self.api_error(e)),
            Verdict::Accept {
                values,
                component: None,
            } => self
                .system
                .set_actuators(i, &values)
                .map_err(|e| self.api_error(e)),
            Verdict::Drop(_) => self.on_actuator_loss(d.flow, d.state_index),
        }
    }

    /// A control packet that will never be applied: `on_loss = "zero"`
    /// zeroes what it would have set, every actuator channel or, for a
    /// `multi_packet` downlink, the one channel its state index carries;
    /// `hold` keeps the value. A policy drop acts at the packet's arrival
    /// boundary, a network loss at its `loss_step`.
    fn on_actuator_loss(&mut self, flow: u32, state_index: u16) -> Result<(), SessionError> {
        let f = self.flows.get(flow).expect("known flow");
        if f.direction == Direction::Downlink && self.zero_on_loss[f.loop_index] {
            let i = f.loop_index;
            let zeroed = if f.config.multi_packet {
                self.system.set_actuator(i, usize::from(state_index), 0.0)
            } else {
                self.system.zero_actuator(i)
            };
            zeroed.map_err(|e| self.api_error(e))?;
        }
        Ok(())
    }

    /// S: every sensor due at `k` samples; the sample goes out on the uplink
    /// (or straight to a local controller).
    fn sample_due(&mut self, k: u64) -> Result<(), SessionError> {
        for i in 0..self.event_triggered.len() {
            if !self.system.sensor_due(i).map_err(|e| self.api_error(e))? {
                continue;
            }
            let reached = self.now();
            let api = |source| SessionError::Api { reached, source };
            let mut message = self.system.sample(i).map_err(api)?.to_vec();
            let mut extras = Vec::new();
            for j in 0..self.system.loops()[i].extra_inputs().len() {
                extras.push(
                    self.system
                        .extra_input(i, j)
                        .map_err(|e| self.api_error(e))?,
                );
            }
            let schedule = self.system.loops()[i].sensor_schedule();
            let number = (k - schedule.phase) / schedule.period.get();
            // The predecessor's values travel on their own link when there is
            // one; otherwise they arrive with the measurement.
            match self.flows.feedforward(i) {
                Some(flow) => {
                    let time = self.scheduled_send_time(k);
                    self.send(flow, number, &extras, time, self.announce_ahead);
                }
                None => message.extend_from_slice(&extras),
            }
            match self.flows.uplink(i) {
                None => {
                    self.system
                        .set_controller_inputs(i, &message)
                        .map_err(|e| self.api_error(e))?;
                    if self.event_triggered[i] {
                        self.respond(i, Cause::Arrival(self.time_of(k)))?;
                    }
                }
                Some(flow) => {
                    let time = self.scheduled_send_time(k);
                    self.send(flow, number, &message, time, self.announce_ahead);
                }
            }
        }
        Ok(())
    }

    /// T: every time-triggered controller due at `k` computes and sends.
    fn tick_due(&mut self, k: u64) -> Result<(), SessionError> {
        for i in 0..self.event_triggered.len() {
            if self
                .system
                .controller_due(i)
                .map_err(|e| self.api_error(e))?
            {
                self.respond(i, Cause::Tick(k))?;
            }
        }
        Ok(())
    }

    /// Computes loop `i`'s control at the instant of its cause (docs/design.md §4.4
    /// for rollback) and sends it.
    fn respond(&mut self, i: usize, cause: Cause) -> Result<(), SessionError> {
        let reached = self.now();
        let api = |source| SessionError::Api { reached, source };
        let at = self.evaluation_time(cause);
        let u = if self.rollback[i] {
            self.system
                .rollback_response_at(i, at)
                .map_err(api)?
                .to_vec()
        } else {
            self.system.compute_control_at(i, at).map_err(api)?.to_vec()
        };
        let Some(flow) = self.flows.downlink(i) else {
            self.local_controls[i].push(u);
            return Ok(());
        };
        match cause {
            Cause::Tick(k) => {
                let Trigger::Time(schedule) = self.system.loops()[i].controller_trigger() else {
                    unreachable!("ticks come from time-triggered controllers")
                };
                let number = (k - schedule.phase) / schedule.period.get();
                let time = self.scheduled_send_time(k);
                self.send(flow, number, &u, time, self.announce_ahead);
            }
            Cause::Arrival(arrival) => {
                let number = self.response_numbers[i];
                self.response_numbers[i] += 1;
                let time = self.response_send_time(arrival);
                if self.rules_active {
                    self.driver.answer_by_rule(flow, number, &u, time)?;
                } else {
                    self.send(flow, number, &u, time, false);
                }
            }
        }
        Ok(())
    }

    /// The instant a controller is evaluated at: a tick's boundary; for an
    /// answer, the arrival of the packet it answers (master-slave and
    /// event-driven receive exactly, and the packet is served at the first
    /// boundary at or after it, so the arrival lies in the step just
    /// integrated), or under time-stepping the sync boundary where the
    /// control side receives it.
    fn evaluation_time(&self, cause: Cause) -> SimTime {
        match (cause, self.driver.clock.scheme.kind()) {
            (Cause::Tick(k), _) => self.time_of(k),
            (Cause::Arrival(_), SchemeKind::TimeStepping) => self.now(),
            (Cause::Arrival(arrival), _) => arrival,
        }
    }

    /// When a sample or tick produced at boundary `k` enters the network.
    fn scheduled_send_time(&self, k: u64) -> SimTime {
        self.driver.clock.scheduled_send_time(k)
    }

    /// When a response to a packet that arrived at `arrival` enters the network.
    fn response_send_time(&self, arrival: SimTime) -> SimTime {
        let ready = arrival + self.computation_delay;
        match self.driver.clock.scheme {
            SyncScheme::EventDriven(_) => ready,
            SyncScheme::MasterSlave(MasterSlave { period, .. }) => {
                let period = period.get();
                // The first sync point at or after it is ready. The replay
                // serves every answer in the period its packet arrived in
                // (see `master_slave.rs`), before the network runs past the
                // end of that period, so that point is still ahead, except
                // for a zero-delay packet sent at a sync point and answered
                // there at once: the network has run that period already.
                let period_ns = period * self.driver.clock.step_ns;
                SimTime(ready.0.div_ceil(period_ns) * period_ns).max(self.driver.network.reached())
            }
            SyncScheme::TimeStepping(_) => self.scheduled_send_time(self.system.k()),
        }
    }

    /// Records a sample's packets in the ledger and, unless they were
    /// announced ahead, queues them for the network.
    fn send(&mut self, flow: u32, number: u64, values: &[f64], time: SimTime, announced: bool) {
        self.driver.send(flow, number, values, time, announced);
    }

    /// Master-slave: announces the time-triggered packets of boundaries
    /// `[k0, k1)` ahead of the replay that fills in their values.
    fn announce_period(&mut self, k0: u64, k1: u64) {
        for i in 0..self.event_triggered.len() {
            let lp = &self.system.loops()[i];
            let mut planned = Vec::new();
            let extras = lp.extra_inputs().len();
            if let Some(flow) = self.flows.feedforward(i) {
                planned.push((flow, lp.sensor_schedule(), extras));
            }
            if let Some(flow) = self.flows.uplink(i) {
                let carried = if self.flows.feedforward(i).is_some() {
                    0
                } else {
                    extras
                };
                planned.push((flow, lp.sensor_schedule(), lp.measurement_dim() + carried));
            }
            if let (Some(flow), Trigger::Time(schedule)) =
                (self.flows.downlink(i), lp.controller_trigger())
            {
                planned.push((flow, schedule, lp.held_control().len()));
            }
            for (flow, schedule, width) in planned {
                let mut k = schedule.next_at_or_after(k0);
                while k < k1 {
                    let number = (k - schedule.phase) / schedule.period.get();
                    let time = self.time_of(k);
                    self.driver.announce(flow, number, width, time);
                    k += schedule.period.get();
                }
            }
        }
    }
}
