//! The control side of a networked graph behind an I/O-free interface
//! (issue 11 item 6): an [`Endpoint`] owns the [`Graph`] and the
//! control-side description of its network flows ([`FlowEnd`]), and decides
//! everything about a step boundary that is a graph matter: the order of
//! receive, evaluate and send, which flows are due, the values they carry
//! and their packet numbers. It never sees a network, a clock of the
//! network or a sync scheme, as quinn-proto's endpoint never sees a socket:
//! the driver (the bridge's graph session) hands in what arrived and what
//! was lost ([`Endpoint::accept`], [`Endpoint::lose`]), asks for the
//! boundary to be evaluated ([`Endpoint::evaluate`]), takes what to send
//! ([`Endpoint::poll_transmit`]) and what to announce ahead
//! ([`Endpoint::announcements`]), and moves time
//! ([`Endpoint::integrate_step`]).
//!
//! # A step boundary `k`
//! 1. **Receive** ([`Endpoint::accept`], [`Endpoint::lose`], in the order
//!    the driver decides is canonical): an accepted packet is written into
//!    its flow's inlet (the whole sample, or for `multi_packet` the
//!    elements it carries), which counts as a new value at `k`; a loss
//!    writes zero there under [`LossPolicy::Zero`] and changes nothing under
//!    [`LossPolicy::Hold`]. The components that answer the flow (evaluated
//!    on new inputs, triggered by the inlet directly, the source of some
//!    flow) are evaluated at once at the instant the driver names
//!    ([`Graph::respond`]), and every flow carrying their answer (`update`
//!    from one of them, or `arrival` of this flow from one of them) is
//!    queued, numbered in the order answers are computed, to be sent as an
//!    answer to the arrival ([`SendAt::Answer`]).
//! 2. **Evaluate** the graph at `k` in its evaluation order.
//! 3. **Send.** Every flow due at `k` that did not send an answer, in flow
//!    order, with the values its source holds after the evaluation: a
//!    `periodic` flow at its instants, an `update` flow when its source got
//!    a new value at `k`, an `arrival` flow when a packet of its flow was
//!    accepted at `k` (once, as an answer to the last of them).
//!
//! # Packet numbers
//! A flow with a fixed schedule ([`FlowEnd::schedule`]: periodic flows, and
//! `update` flows whose source is evaluated at every step or periodically)
//! numbers its packet at boundary `k` by its index in the schedule,
//! `(k - phase) / period`, so its packets are known before the boundary is
//! served and can be announced ahead ([`Endpoint::announcements`]). Every
//! other flow numbers its packets in the order it sends them, from 0.

use std::collections::VecDeque;
use std::ops::Range;

use netloop_time::SimTime;

use super::component::Timing;
use super::engine::Graph;
use super::error::GraphError;

const NO_FIRST_PART: &str =
    "flows close a cycle of direct feedthrough: no part comes first (see `can_evaluate_in_parts`)";

/// When a flow sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendRule {
    /// At boundaries `phase + n period` (in steps, `phase < period`).
    Periodic { period: u64, phase: u64 },
    /// When its source port has a new value.
    Update,
    /// When a packet of the flow with this index was accepted.
    Arrival(usize),
}

/// What the receiver of a flow does with its inlet when a packet is lost
/// (or dropped by a receive policy).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LossPolicy {
    /// The inlet keeps the last value received.
    #[default]
    Hold,
    /// The inlet (or for `multi_packet` the lost element) goes to zero.
    Zero,
}

/// The control side of one network flow: where its values come from, the
/// inlet that receives them, when it sends and what its receiver does on
/// a loss.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowEnd {
    /// The source component's index in the graph.
    pub component: usize,
    /// The source's output port index.
    pub port: usize,
    /// The port's elements sent.
    pub elements: Range<usize>,
    /// The index of the [`Inlet`](super::Inlet) component that receives it.
    pub inlet: usize,
    pub rule: SendRule,
    pub on_loss: LossPolicy,
    /// One packet per element (the packet's state index is the element).
    pub multi_packet: bool,
    schedule: Option<(u64, u64)>,
}

impl FlowEnd {
    /// A flow from `elements` of output `port` of `component` into `inlet`;
    /// its schedule follows from `rule` and the source's timing in `graph`.
    pub fn new(
        graph: &Graph,
        (component, port, elements): (usize, usize, Range<usize>),
        inlet: usize,
        rule: SendRule,
        on_loss: LossPolicy,
        multi_packet: bool,
    ) -> Self {
        let step = graph.step_size().as_nanos();
        let schedule = match rule {
            SendRule::Periodic { period, phase } => Some((period, phase)),
            SendRule::Update => match graph.declaration(component).timing {
                Timing::EveryStep => Some((1, 0)),
                Timing::Periodic { period, offset } => Some((period.0 / step, offset.0 / step)),
                Timing::OnInput => None,
            },
            SendRule::Arrival(_) => None,
        };
        FlowEnd {
            component,
            port,
            elements,
            inlet,
            rule,
            on_loss,
            multi_packet,
            schedule,
        }
    }

    /// `(period, phase)` in steps when the flow sends on a fixed schedule:
    /// a periodic flow at its own instants, an `update` flow at the
    /// instants of a source evaluated at every step or periodically. Then
    /// packet `n` is the one of boundary `phase + n period`.
    pub fn schedule(&self) -> Option<(u64, u64)> {
        self.schedule
    }

    /// Values per sample.
    pub fn width(&self) -> usize {
        self.elements.len()
    }
}

/// When a packet is to enter the network, symbolically: the driver turns
/// it into a time under its sync scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendAt {
    /// An answer to a packet that arrived at this instant (an answering
    /// component's output, or an `arrival` flow's sample).
    Answer { arrival: SimTime },
    /// Produced at this boundary by a flow on a fixed schedule (the packet
    /// [`Endpoint::announcements`] gave for it).
    Scheduled { boundary: u64 },
    /// Produced at the boundary being served by a flow without a schedule.
    Unscheduled,
}

/// A sample to send: the packet(s) of one flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Transmit {
    /// The flow's index in [`Endpoint::flows`].
    pub flow: usize,
    pub number: u64,
    pub values: Vec<f64>,
    pub at: SendAt,
}

/// A packet of a scheduled flow known before its boundary is served: its
/// flow, number and width, to be sent at `boundary`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Announcement {
    pub flow: usize,
    pub number: u64,
    pub width: usize,
    pub boundary: u64,
}

/// A graph with network flows, served boundary by boundary (see the
/// module docs).
pub struct Endpoint {
    graph: Graph,
    flows: Vec<FlowEnd>,
    /// Per flow without a schedule: the next packet number.
    counters: Vec<u64>,
    /// Per flow: the components that answer its packets at their arrival.
    responders: Vec<Vec<usize>>,
    /// The boundary the per-boundary state below belongs to.
    boundary: u64,
    /// Per flow: the arrival of the last packet accepted at `boundary`.
    arrived: Vec<Option<SimTime>>,
    /// Per flow: it sent an answer at `boundary` (the send phase leaves it
    /// alone).
    answered: Vec<bool>,
    outbox: VecDeque<Transmit>,
    /// Per part of a boundary evaluated in parts, its components (empty
    /// until [`Endpoint::parts`] or [`Endpoint::evaluate_part`] asks).
    parts: Vec<Vec<bool>>,
}

impl Endpoint {
    /// Takes a built graph whose inlets the flows name.
    ///
    /// # Panics
    /// When a flow names a component, port, element or flow that does not
    /// exist (a bug of whoever resolved the flows).
    pub fn new(graph: Graph, flows: Vec<FlowEnd>) -> Self {
        for f in &flows {
            assert!(
                f.elements.end <= graph.output(f.component, f.port).len(),
                "flow elements past the end of the source port"
            );
            assert!(
                graph.output(f.inlet, 0).len() == f.width(),
                "flow inlet and source widths differ"
            );
            if let SendRule::Arrival(g) = f.rule {
                assert!(g < flows.len(), "arrival of an unknown flow");
            }
        }
        let responders = flows
            .iter()
            .map(|g| {
                graph
                    .triggered_by(g.inlet)
                    .into_iter()
                    .filter(|&c| flows.iter().any(|f| f.component == c))
                    .collect()
            })
            .collect();
        let n = flows.len();
        Endpoint {
            boundary: graph.k(),
            graph,
            flows,
            counters: vec![0; n],
            responders,
            arrived: vec![None; n],
            answered: vec![false; n],
            outbox: VecDeque::new(),
            parts: Vec::new(),
        }
    }

    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    pub fn into_graph(self) -> Graph {
        self.graph
    }

    pub fn flows(&self) -> &[FlowEnd] {
        &self.flows
    }

    /// Whether every flow sends on a fixed schedule, so that every packet
    /// can be announced before its boundary is served.
    pub fn all_scheduled(&self) -> bool {
        self.flows.iter().all(|f| f.schedule.is_some())
    }

    /// Per flow, the flow whose accepted packets it answers one for one,
    /// when that is all it sends: an `arrival` flow whose source answers
    /// its trigger at the arrival. A network can then send its packets by
    /// rule, without the control side (event-driven answer rules).
    pub fn answer_triggers(&self) -> Vec<Option<usize>> {
        self.flows
            .iter()
            .map(|f| match f.rule {
                SendRule::Arrival(g) if self.responders[g].contains(&f.component) => Some(g),
                _ => None,
            })
            .collect()
    }

    /// How many packets `flow` (one without a schedule) has numbered: the
    /// number its next packet gets.
    pub fn numbered(&self, flow: usize) -> u64 {
        self.counters[flow]
    }

    /// The first boundary after `k` where some flow may send on its own:
    /// the next scheduled instant when every flow has a schedule, else
    /// `k + 1`; `u64::MAX` when there are no flows.
    pub fn next_send_boundary(&self, k: u64) -> u64 {
        if !self.all_scheduled() {
            return k + 1;
        }
        self.flows
            .iter()
            .filter_map(|f| f.schedule)
            .map(|(period, phase)| next_at_or_after(period, phase, k + 1))
            .min()
            .unwrap_or(u64::MAX)
    }

    /// The packets of the scheduled flows at boundaries `[k0, k1)`, flow by
    /// flow, each flow's in boundary order: the numbers and widths that
    /// evaluating those boundaries will send.
    pub fn announcements(&self, k0: u64, k1: u64) -> impl Iterator<Item = Announcement> + '_ {
        let scheduled = self.flows.iter().enumerate().filter_map(|(flow, f)| {
            f.schedule
                .map(|(period, phase)| (flow, f.width(), period, phase))
        });
        scheduled.flat_map(move |(flow, width, period, phase)| {
            let first = next_at_or_after(period, phase, k0);
            std::iter::successors(Some(first), move |k| Some(k + period))
                .take_while(move |&k| k < k1)
                .map(move |k| Announcement {
                    flow,
                    number: (k - phase) / period,
                    width,
                    boundary: k,
                })
        })
    }

    // ----- receive -----

    /// A packet of `flow` accepted at the current boundary: `values` are
    /// written into its inlet from element `first` on (0, or a
    /// `multi_packet` packet's state index). It arrived at `arrival`; the
    /// components that answer the flow are evaluated at `evaluate_at`
    /// (the arrival, or the boundary when the driver's scheme cannot place
    /// it inside the step), and their answers queued.
    ///
    /// # Panics
    /// After [`Endpoint::evaluate`] at this boundary (a driver bug), or
    /// when the values do not fit the inlet.
    pub fn accept(
        &mut self,
        flow: usize,
        first: usize,
        values: &[f64],
        arrival: SimTime,
        evaluate_at: SimTime,
    ) {
        self.begin_boundary();
        self.graph
            .set_output(self.flows[flow].inlet, 0, first, values);
        self.arrived[flow] = Some(arrival);
        self.answer(flow, arrival, evaluate_at);
    }

    /// A packet of `flow` lost (or dropped by a receive policy) acting at
    /// the current boundary: under [`LossPolicy::Zero`] its inlet goes to
    /// zero, for a `multi_packet` flow only element `state_index`.
    ///
    /// # Panics
    /// After [`Endpoint::evaluate`] at this boundary (a driver bug).
    pub fn lose(&mut self, flow: usize, state_index: usize) {
        self.begin_boundary();
        let f = &self.flows[flow];
        if f.on_loss != LossPolicy::Zero {
            return;
        }
        let inlet = f.inlet;
        if f.multi_packet {
            self.graph.set_output(inlet, 0, state_index, &[0.0]);
        } else {
            let zeros = vec![0.0; f.width()];
            self.graph.set_output(inlet, 0, 0, &zeros);
        }
    }

    /// The components answering `g` evaluate at `at`, and every flow that
    /// carries an answer (`update` from one of them, or `arrival` of `g`
    /// from one of them) is queued.
    fn answer(&mut self, g: usize, arrival: SimTime, at: SimTime) {
        if self.responders[g].is_empty() {
            return;
        }
        for &c in &self.responders[g] {
            self.graph.respond(c, at);
        }
        for f in 0..self.flows.len() {
            let flow = &self.flows[f];
            let carries = match flow.rule {
                SendRule::Update => true,
                SendRule::Arrival(h) => h == g,
                SendRule::Periodic { .. } => false,
            };
            if !carries || !self.responders[g].contains(&flow.component) {
                continue;
            }
            let number = self.counters[f];
            self.counters[f] += 1;
            self.answered[f] = true;
            self.queue(f, number, SendAt::Answer { arrival });
        }
    }

    // ----- evaluate and send -----

    /// Evaluates the current boundary and queues every flow due there that
    /// did not send an answer, in flow order.
    ///
    /// # Errors
    /// As [`Graph::evaluate`].
    pub fn evaluate(&mut self) -> Result<(), GraphError> {
        self.begin_boundary();
        self.graph.evaluate()?;
        self.queue_due(None);
        Ok(())
    }

    /// How many parts [`Endpoint::evaluate_part`] splits a boundary into:
    /// part 0 is everything no flow's packet reaches within the boundary;
    /// part `n + 1` what is reached through one more flow from part `n`
    /// (a flow's inlet is one part after its source). For `[[loops]]`:
    /// plants and sensors, then controllers, then actuators.
    ///
    /// # Panics
    /// When flows close a cycle in which every connection is direct
    /// feedthrough (no part would be first): ask [`Endpoint::can_evaluate_in_parts`]
    /// first.
    pub fn parts(&mut self) -> usize {
        self.part_masks().len()
    }

    /// Whether a boundary can be evaluated in parts: no cycle through
    /// flows in which every connection is direct feedthrough (its packets
    /// could only act at their own send instant by solving it).
    pub fn can_evaluate_in_parts(&self) -> bool {
        self.levels().is_some()
    }

    /// Per flow, the part holding its receiving end: where a packet
    /// delivered at its send instant must be received.
    ///
    /// # Panics
    /// As [`Endpoint::parts`].
    pub fn flow_parts(&self) -> Vec<usize> {
        let levels = self.levels().expect(NO_FIRST_PART);
        self.flows.iter().map(|f| levels[f.inlet]).collect()
    }

    /// Evaluates part `part` of the current boundary (see
    /// [`Endpoint::parts`]) and queues the flows due from its components:
    /// a driver whose network may deliver a packet at the instant it is
    /// sent hands in those deliveries between the parts, so that they act
    /// at the boundary they were sent at. Parts are evaluated in order;
    /// the last completes the boundary as [`Endpoint::evaluate`] does.
    ///
    /// # Errors
    /// As [`Graph::evaluate`].
    pub fn evaluate_part(&mut self, part: usize) -> Result<(), GraphError> {
        self.begin_boundary();
        let last = part + 1 == self.part_masks().len();
        self.graph.evaluate_part(&self.parts[part], last)?;
        self.queue_due(Some(part));
        Ok(())
    }

    /// Per part, which components it holds (computed once).
    fn part_masks(&mut self) -> &mut Vec<Vec<bool>> {
        if self.parts.is_empty() {
            let levels = self.levels().expect(NO_FIRST_PART);
            let count = levels.iter().max().map_or(1, |m| m + 1);
            self.parts = (0..count)
                .map(|p| levels.iter().map(|&l| l == p).collect())
                .collect();
        }
        &mut self.parts
    }

    /// Per component, its part: the most flows on a path to it; `None`
    /// when flows close a cycle of direct feedthrough.
    fn levels(&self) -> Option<Vec<usize>> {
        let n = self.graph.component_names().count();
        let sources: Vec<Vec<usize>> = (0..n).map(|c| self.graph.ordering_sources(c)).collect();
        let mut level = vec![0; n];
        for _ in 0..=n {
            let mut changed = false;
            for c in 0..n {
                let mut l = sources[c].iter().map(|&s| level[s]).max().unwrap_or(0);
                for f in self.flows.iter().filter(|f| f.inlet == c) {
                    l = l.max(level[f.component] + 1);
                }
                if l > level[c] {
                    level[c] = l;
                    changed = true;
                }
            }
            if !changed {
                return Some(level);
            }
        }
        None
    }

    /// Queues every flow due at the current boundary that did not send an
    /// answer, in flow order; with `part`, only those whose source is in it.
    fn queue_due(&mut self, part: Option<usize>) {
        let k = self.graph.k();
        for f in 0..self.flows.len() {
            if self.answered[f] {
                continue;
            }
            if let Some(p) = part {
                if !self.parts[p][self.flows[f].component] {
                    continue;
                }
            }
            let flow = &self.flows[f];
            let due = match flow.rule {
                SendRule::Periodic { period, phase } => k >= phase && (k - phase) % period == 0,
                SendRule::Update => self.graph.is_fresh(flow.component, flow.port),
                SendRule::Arrival(g) => self.arrived[g].is_some(),
            };
            if !due {
                continue;
            }
            let (number, at) = match (flow.schedule, flow.rule) {
                (Some((period, phase)), _) => {
                    ((k - phase) / period, SendAt::Scheduled { boundary: k })
                }
                // Once per boundary, answering the last packet it follows.
                (None, SendRule::Arrival(g)) => {
                    let arrival = self.arrived[g].expect("due");
                    (self.next_number(f), SendAt::Answer { arrival })
                }
                (None, _) => (self.next_number(f), SendAt::Unscheduled),
            };
            self.queue(f, number, at);
        }
    }

    /// The boundary at the end of the run: evaluated for the record,
    /// nothing sent (its packets could act only after the end).
    ///
    /// # Errors
    /// As [`Graph::evaluate`].
    pub fn evaluate_unserved(&mut self) -> Result<(), GraphError> {
        self.graph.evaluate()
    }

    /// The next sample to send, in the order they were produced.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.outbox.pop_front()
    }

    /// Integrates the step from the current boundary (evaluated first if
    /// it was not) to the next.
    ///
    /// # Errors
    /// As [`Graph::integrate_step`].
    pub fn integrate_step(&mut self) -> Result<(), GraphError> {
        self.graph.integrate_step()
    }

    fn next_number(&mut self, f: usize) -> u64 {
        let number = self.counters[f];
        self.counters[f] += 1;
        number
    }

    fn queue(&mut self, flow: usize, number: u64, at: SendAt) {
        let f = &self.flows[flow];
        let values = self.graph.output(f.component, f.port)[f.elements.clone()].to_vec();
        self.outbox.push_back(Transmit {
            flow,
            number,
            values,
            at,
        });
    }

    /// Forgets what an earlier boundary received and answered.
    fn begin_boundary(&mut self) {
        let k = self.graph.k();
        if self.boundary != k {
            self.boundary = k;
            self.arrived.fill(None);
            self.answered.fill(false);
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
