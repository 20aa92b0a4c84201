//! The loops of a `[[loops]]` scenario as a [`ControlSide`]: a boundary is
//! served in the order U1, S, U2, T, D (see `session.rs`), and the system
//! is integrated from one boundary where something acts to the next.

use controlsim::{Observer, Trigger};
use protocol::NodeKinematics;

use super::control_side::{ControlSide, Sends};
use super::network_driver::{Event, NetworkDriver};
use super::{Session, SessionError};
use crate::ledger::FateSink;
use crate::sync_scheme::EventDriven;

impl<W: FateSink, O: Observer> ControlSide<O> for Session<W> {
    type Sink = W;
    type Error = SessionError;

    fn driver(&self) -> &NetworkDriver<W> {
        &self.driver
    }

    fn driver_mut(&mut self) -> &mut NetworkDriver<W> {
        &mut self.driver
    }

    fn k(&self) -> u64 {
        self.system.k()
    }

    fn interrupted(&self) -> SessionError {
        SessionError::Interrupted {
            reached: self.now(),
        }
    }

    fn serve(&mut self, k: u64, sends: Sends) -> Result<(), SessionError> {
        self.announce_ahead = sends.announced;
        self.serve_boundary(k)
    }

    /// Integrates to the first boundary after `k` where a sensor or a
    /// time-triggered controller acts or a packet event takes effect.
    fn integrate(&mut self, k: u64, limit: u64, observer: &mut O) -> Result<u64, SessionError> {
        let next = self
            .next_action_step(k)
            .min(self.driver.next_event_step(k).unwrap_or(u64::MAX))
            .min(limit);
        self.advance(next, observer)?;
        Ok(next)
    }

    /// U1 of `k`: the packets that arrived in the period's last step act at
    /// `k`, but arrived in the period before it: their controllers answer
    /// now, before the network runs past this sync point (the rest of the
    /// boundary is served in the replay).
    fn serve_before_sync(&mut self, k: u64) -> Result<(), SessionError> {
        let t = self.time_of(k);
        self.apply_controller_events(k, Some(t))
    }

    fn announce_period(&mut self, k0: u64, k1: u64) {
        Session::announce_period(self, k0, k1);
    }

    /// Every sample and tick is on a schedule; an event-triggered
    /// controller answering over the network is not.
    fn announces_everything(&self) -> bool {
        !self.has_responders()
    }

    fn receive(&mut self, k: u64) -> Result<(), SessionError> {
        self.apply_controller_events(k, None)
    }

    fn sample(&mut self, k: u64, sends: Sends) -> Result<(), SessionError> {
        self.announce_ahead = sends.announced;
        self.sample_due(k)
    }

    fn tick(&mut self, k: u64, sends: Sends) -> Result<(), SessionError> {
        self.announce_ahead = sends.announced;
        self.tick_due(k)
    }

    fn actuate(&mut self, k: u64) -> Result<(), SessionError> {
        self.apply_actuator_events(k)
    }

    /// Packets to controllers, then to actuators (no sensor or
    /// time-triggered controller acts here).
    fn serve_events(&mut self, k: u64, _sends: Sends) -> Result<(), SessionError> {
        self.apply_controller_events(k, None)?;
        self.apply_actuator_events(k)
    }

    fn next_action(&self, k: u64) -> u64 {
        self.next_action_step(k)
    }

    /// A zero-delay packet acts at the boundary it was sent at (U2).
    fn acts_at_send_boundary(&self) -> bool {
        true
    }

    fn install_answer_rules(&mut self, scheme: EventDriven) -> Result<bool, SessionError> {
        Session::install_answer_rules(self, scheme)
    }

    fn kinematics(&self) -> Vec<NodeKinematics> {
        Session::kinematics(self)
    }

    fn has_motions(&self) -> bool {
        !self.motions.is_empty()
    }

    fn drift_within(&self, seconds: f64, tolerance: f64) -> bool {
        self.motions.iter().all(|m| {
            m.max_drift(&self.system, seconds)
                .is_some_and(|drift| drift <= tolerance)
        })
    }

    fn holds(&self) -> impl Fn(&Event) -> bool + 'static {
        Session::holds(self)
    }
}

impl<W: FateSink> Session<W> {
    /// Whether an event-triggered controller answers over the network.
    fn has_responders(&self) -> bool {
        self.system.loops().iter().enumerate().any(|(i, lp)| {
            lp.controller_trigger() == Trigger::Event && self.flows.downlink(i).is_some()
        })
    }
}
