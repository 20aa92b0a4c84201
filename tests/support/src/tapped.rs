//! A network that forwards every call to a real one (the builtin channel or
//! ns-3) while a test watches or bends what passes between it and the
//! session: the fake networks of the co-simulation tests state only what
//! they change, and the forwarding is written once.

use bridge::network::{Network, NetworkError};
use protocol::{AnswerRule, Configured, FlowSpec, SimTime, Step, StepDone, Summary};

/// What a test does between the session and the network. Every hook passes
/// the call through unchanged unless the test says otherwise.
pub trait Tap {
    /// Sees, and may change, a step before the network (which has reached
    /// `reached`) begins it.
    fn begin_step(&mut self, reached: SimTime, step: &mut Step) {
        let _ = (reached, step);
    }

    /// Sees, and may change, an answer before the session reads it.
    fn end_step(&mut self, done: &mut StepDone) {
        let _ = done;
    }

    /// Answers for the network when the session installs answer rules:
    /// `Some(carried_out)`, or `None` to hand the rules to the network.
    fn install_rules(&mut self, rules: &[AnswerRule]) -> Option<bool> {
        let _ = rules;
        None
    }

    /// Whether a packet may arrive at the instant it is sent, given what the
    /// network itself says.
    fn may_deliver_instantly(&self, network_says: bool) -> bool {
        network_says
    }
}

/// `inner` with `tap` between it and the session.
pub struct Tapped<N, T> {
    pub inner: N,
    pub tap: T,
}

impl<N: Network, T: Tap> Network for Tapped<N, T> {
    fn configure(&mut self, flows: &[FlowSpec]) -> Result<Configured, NetworkError> {
        self.inner.configure(flows)
    }

    fn install_rules(&mut self, rules: &[AnswerRule]) -> Result<bool, NetworkError> {
        match self.tap.install_rules(rules) {
            Some(carried_out) => Ok(carried_out),
            None => self.inner.install_rules(rules),
        }
    }

    fn begin_step(&mut self, mut step: Step) -> Result<(), NetworkError> {
        self.tap.begin_step(self.inner.reached(), &mut step);
        self.inner.begin_step(step)
    }

    fn end_step(&mut self) -> Result<StepDone, NetworkError> {
        let mut done = self.inner.end_step()?;
        self.tap.end_step(&mut done);
        Ok(done)
    }

    fn finish(&mut self) -> Result<Summary, NetworkError> {
        self.inner.finish()
    }

    fn reached(&self) -> SimTime {
        self.inner.reached()
    }

    fn may_deliver_instantly(&self) -> bool {
        self.tap
            .may_deliver_instantly(self.inner.may_deliver_instantly())
    }

    fn uses_kinematics(&self) -> bool {
        self.inner.uses_kinematics()
    }

    fn software(&self) -> String {
        self.inner.software()
    }
}
