//! A graph as a [`ControlSide`]: every boundary is served in one pass
//! (receive, evaluate, send; see `graph_session.rs`), or in parts over a
//! network that may deliver at the send instant, and recorded, and the
//! graph is integrated one step at a time.

use controlsim::graph::GraphObserver;
use protocol::NodeKinematics;

use super::{GraphSession, GraphSessionError};
use crate::ledger::FateSink;
use crate::session::control_side::{begin_network_step, moves_nodes, time_of, ControlSide, Sends};
use crate::session::network_driver::{Class, Event, NetworkDriver};
use crate::sync_scheme::EventDriven;

impl<W: FateSink, O: GraphObserver> ControlSide<O> for GraphSession<W> {
    type Sink = W;
    type Error = GraphSessionError;

    fn driver(&self) -> &NetworkDriver<W> {
        &self.driver
    }

    fn driver_mut(&mut self) -> &mut NetworkDriver<W> {
        &mut self.driver
    }

    fn k(&self) -> u64 {
        self.graph().k()
    }

    fn interrupted(&self) -> GraphSessionError {
        GraphSessionError::Interrupted {
            reached: self.time(),
        }
    }

    fn serve(&mut self, k: u64, sends: Sends) -> Result<(), GraphSessionError> {
        GraphSession::serve(self, k, sends.unscheduled, sends.announced)
    }

    /// Records boundary `k` and integrates one step: a graph records every
    /// boundary.
    fn integrate(
        &mut self,
        k: u64,
        _limit: u64,
        observer: &mut O,
    ) -> Result<u64, GraphSessionError> {
        self.record_and_integrate(observer)?;
        Ok(k + 1)
    }

    /// What arrived before the sync point and acts at it is received, so
    /// that its answers go at this sync point. The boundary is evaluated
    /// now too only when evaluating it gives the network something: a
    /// packet without a schedule (sent at the sync point itself), or the
    /// positions of the nodes components move. Otherwise it is evaluated in
    /// the replay, with every packet that arrives exactly at the sync
    /// point received first, as syncing ahead receives it.
    fn serve_before_sync(&mut self, k: u64) -> Result<(), GraphSessionError> {
        if self.evaluated_in_replay() {
            return GraphSession::receive(self, k, self.answering_class());
        }
        let t = self.time_of(k);
        GraphSession::serve(self, k, t, false)
    }

    fn announce_period(&mut self, k0: u64, k1: u64) {
        GraphSession::announce_period(self, k0, k1);
    }

    fn announces_everything(&self) -> bool {
        self.endpoint.all_scheduled()
    }

    /// With moving nodes, boundary `start` is served, recorded and
    /// integrated before the network gets the period: its evaluation gives
    /// the positions at `start` (what a loop's plant state at `start` gives
    /// the network), and what it sends is held back for the next period's
    /// step, where it would have gone had the step been handed over first.
    fn begin_period(
        &mut self,
        start: u64,
        end: u64,
        observer: &mut O,
    ) -> Result<u64, GraphSessionError> {
        let until = time_of::<O, Self>(self, end);
        if !moves_nodes::<O, Self>(self) {
            begin_network_step::<O, Self>(self, until)?;
            return Ok(start);
        }
        let earlier = std::mem::take(&mut self.driver.outgoing);
        let send = self.driver.clock.scheduled_send_time(start);
        GraphSession::serve(self, start, send, false)?;
        let produced = std::mem::replace(&mut self.driver.outgoing, earlier);
        begin_network_step::<O, Self>(self, until)?;
        self.driver.outgoing = produced;
        self.record_and_integrate(observer)?;
        Ok(start + 1)
    }

    /// Event-driven phase U: what reaches the answering side as the
    /// network brings it.
    fn receive(&mut self, k: u64) -> Result<(), GraphSessionError> {
        GraphSession::receive(self, k, self.answering_class())
    }

    /// The boundary evaluated in one pass, with every packet event of it
    /// received first; or, evaluated in parts, its first part (a loop's
    /// plants and sensors, S).
    fn sample(&mut self, k: u64, sends: Sends) -> Result<(), GraphSessionError> {
        if self.instant {
            self.receive_before_part(k, 0)?;
            return self.evaluate_part(0, sends);
        }
        GraphSession::receive(self, k, Class::ACTUATOR)?;
        self.evaluate_and_send(k, sends.unscheduled, sends.announced)
    }

    fn later_parts(&mut self) -> usize {
        if self.instant {
            self.endpoint.parts() - 1
        } else {
            0
        }
    }

    fn serve_part(&mut self, k: u64, part: usize, sends: Sends) -> Result<(), GraphSessionError> {
        self.receive_before_part(k, part)?;
        self.evaluate_part(part, sends)
    }

    fn end_boundary(&mut self, k: u64) -> Result<(), GraphSessionError> {
        if self.instant {
            GraphSession::end_boundary(self, k)?;
        }
        Ok(())
    }

    /// A packet delivered at its send instant acts there.
    fn acts_at_send_boundary(&self) -> bool {
        self.instant
    }

    /// The graph is evaluated at every boundary, events or not.
    fn serve_events(&mut self, k: u64, sends: Sends) -> Result<(), GraphSessionError> {
        GraphSession::serve(self, k, sends.unscheduled, sends.announced)
    }

    /// The next boundary where a flow on a fixed schedule sends, or the
    /// next boundary when some flow has none.
    fn next_action(&self, k: u64) -> u64 {
        GraphSession::next_action(self, k)
    }

    fn kinematics(&self) -> Vec<NodeKinematics> {
        GraphSession::kinematics(self)
    }

    fn has_motions(&self) -> bool {
        GraphSession::has_motions(self)
    }

    fn drift_within(&self, seconds: f64, tolerance: f64) -> bool {
        GraphSession::drift_within(self, seconds, tolerance)
    }

    fn install_answer_rules(&mut self, scheme: EventDriven) -> Result<bool, GraphSessionError> {
        GraphSession::install_answer_rules(self, scheme)
    }

    fn holds(&self) -> impl Fn(&Event) -> bool + 'static {
        GraphSession::holds(self)
    }
}
