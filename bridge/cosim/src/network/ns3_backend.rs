//! [`Network`] over the real ns-3 server. Every answer of the server is
//! held to the stepping contract ([`check_step`]) before the session sees it:
//! the server is another program, and a broken promise is an error naming
//! it, never a panic or a silently wrong run.

use std::collections::VecDeque;

use protocol::{AnswerRule, Configured, FlowSpec, SimTime, Step, StepDone, Summary};

use super::{check_step, Asked, Network, NetworkError};
use netloop_ns3_client::{Ns3Client, Ns3Options};

/// The ns-3 server, spawned and handshaken.
pub struct Ns3Network {
    /// `None` once finished.
    client: Option<Ns3Client>,
    reached: SimTime,
    software: String,
    uses_kinematics: bool,
    /// Per flow id: whether a delivery on it may end a step early.
    stops: Vec<bool>,
    /// Steps begun whose answers are still to be read, oldest first.
    asked: VecDeque<Asked>,
}

impl Ns3Network {
    /// Spawns and connects to the server. `uses_kinematics` says whether
    /// the network kind depends on node positions (wireless) or not.
    ///
    /// # Errors
    /// Start-up failures of [`Ns3Client::start`].
    pub fn start(options: &Ns3Options, uses_kinematics: bool) -> Result<Self, NetworkError> {
        let client = Ns3Client::start(options)?;
        let software = client.server_software().to_string();
        Ok(Ns3Network {
            client: Some(client),
            reached: SimTime::ZERO,
            software,
            uses_kinematics,
            stops: Vec::new(),
            asked: VecDeque::new(),
        })
    }

    fn client(&mut self) -> &mut Ns3Client {
        self.client
            .as_mut()
            .expect("ns-3 network used after finish()")
    }

    /// The server's process id, for tests that kill it.
    pub fn server_pid(&self) -> Option<u32> {
        self.client.as_ref().map(Ns3Client::server_pid)
    }
}

impl Network for Ns3Network {
    fn configure(&mut self, flows: &[FlowSpec]) -> Result<Configured, NetworkError> {
        self.stops = vec![false; flows.len()];
        for f in flows {
            if let Some(stop) = self.stops.get_mut(f.flow as usize) {
                *stop = f.stop_on_delivery;
            }
        }
        Ok(self.client().configure(flows.to_vec())?)
    }

    fn install_rules(&mut self, rules: &[AnswerRule]) -> Result<bool, NetworkError> {
        if !rules.is_empty() {
            self.client().install_rules(rules.to_vec())?;
        }
        Ok(true)
    }

    fn begin_step(&mut self, step: Step) -> Result<(), NetworkError> {
        let asked = Asked {
            until: step.until,
            stop_at_delivery: step.stop_at_delivery,
        };
        self.client().begin_step(step)?;
        self.asked.push_back(asked);
        Ok(())
    }

    fn end_step(&mut self) -> Result<StepDone, NetworkError> {
        let done = self.client().end_step()?;
        let asked = self.asked.pop_front();
        check_step(&done, self.reached, asked, &self.stops).map_err(|violation| {
            NetworkError::Violation {
                reached: self.reached,
                violation,
            }
        })?;
        self.reached = done.reached;
        Ok(done)
    }

    fn finish(&mut self) -> Result<Summary, NetworkError> {
        let client = self.client.take().expect("finish() called twice");
        Ok(client.finish()?)
    }

    fn reached(&self) -> SimTime {
        self.reached
    }

    fn may_deliver_instantly(&self) -> bool {
        false
    }

    fn uses_kinematics(&self) -> bool {
        self.uses_kinematics
    }

    fn software(&self) -> String {
        self.software.clone()
    }
}
