//! A loop scenario built once: the control system, the nodes its plants
//! move and what the run observes, made from a [`Resolved`] scenario when it
//! is loaded ([`crate::scenario_file`]) and handed to the run
//! ([`crate::run::run_built`]) as it is, so that nothing is built twice
//! (an FMU is instantiated once) and every problem a run would hit before its
//! first step is a keyed error at load time.

use std::fmt;

use controlsim::System;

use crate::config::{Resolved, ScenarioError};
use crate::metrics::loops::LoopMetricsPlan;
use crate::mobility::{node_motions, NodeMotion};
use crate::stop::StopConditions;

/// Everything a loop run needs besides its network and its run directory.
pub struct Built {
    /// The control side, at time zero.
    pub system: System,
    /// How each plant moves its node ([`crate::mobility`]).
    pub motions: Vec<NodeMotion>,
    /// Per loop: the set points and weights of its control metrics.
    pub metrics: Vec<LoopMetricsPlan>,
    /// The conditions that end the run early.
    pub stop: StopConditions,
}

impl Built {
    /// Builds the control system of `resolved` and checks the mobility,
    /// metrics and stop conditions against it.
    ///
    /// # Errors
    /// The first problem, naming its key.
    pub fn new(resolved: &Resolved) -> Result<Built, ScenarioError> {
        let system = System::from_config(&resolved.system, resolved.scenario.control_seed())?;
        let motions = node_motions(resolved, &system)?;
        let (metrics, stop) = crate::run::observation_plan(resolved, &system)?;
        Ok(Built {
            system,
            motions,
            metrics,
            stop,
        })
    }
}

impl fmt::Debug for Built {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Built")
            .field("loops", &self.system.loops().len())
            .field("motions", &self.motions)
            .finish_non_exhaustive()
    }
}
