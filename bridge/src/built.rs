//! A loop scenario built once: the control system, the nodes its plants
//! move, what the run observes and a builtin network's channel, made from a
//! [`Resolved`] scenario when it
//! is loaded ([`crate::scenario_file`]) and handed to the run
//! ([`crate::run::run_built`]) as it is, so that nothing is built twice
//! (an FMU is instantiated once) and every problem a run would hit before its
//! first step is a keyed error at load time.

use std::fmt;
use std::path::Path;

use crate::network::BuiltinNetwork;
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
    /// The builtin network's channel (its delay files read once); `None`
    /// for ns-3, which starts with the run.
    pub network: Option<BuiltinNetwork>,
}

impl Built {
    /// Builds the control system of `resolved` and checks the mobility,
    /// metrics and stop conditions against it, then builds a builtin
    /// network (relative delay files from `base_dir`).
    ///
    /// # Errors
    /// The first problem, naming its key.
    pub fn new(resolved: &Resolved, base_dir: &Path) -> Result<Built, ScenarioError> {
        let system = System::from_config(&resolved.system, resolved.scenario.control_seed())?;
        let motions = node_motions(resolved, &system)?;
        let (metrics, stop) = crate::run::observation_plan(resolved, &system)?;
        let scenario = &resolved.scenario;
        let network = crate::scenario_file::build_builtin(
            &scenario.network,
            scenario.seed,
            scenario.run,
            scenario.duration,
            base_dir,
        )?;
        Ok(Built {
            system,
            motions,
            metrics,
            stop,
            network,
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use crate::run::{run_built, RunOptions};
    use crate::scenario_file::{load, Override};

    /// Resolved once: a builtin channel is built, its delay file read, when
    /// the scenario is loaded, and the run sends its packets through that
    /// channel, so the file may be gone by the time the run starts.
    #[test]
    fn the_builtin_channel_is_built_when_loaded_and_run_as_built() {
        let dir = tempfile::tempdir().unwrap();
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let path = dir.path().join("servo.toml");
        std::fs::copy(root.join("examples/dc_servo_p2p.toml"), &path).unwrap();
        let delays = dir.path().join("delays.txt");
        std::fs::write(&delays, "2ms\n3ms\n").unwrap();
        let overrides: Vec<Override> = [
            "duration=\"1s\"",
            "network.backend=\"builtin\"",
            "network.builtin={ delay = { kind = \"empirical\", file = \"delays.txt\" } }",
        ]
        .iter()
        .map(|s| Override::parse_set(s).unwrap())
        .collect();
        let loaded = load(&path, &overrides).unwrap();
        assert!(loaded.built.network.is_some());
        std::fs::remove_file(&delays).unwrap();
        let out = dir.path().join("run");
        let options = RunOptions {
            out_dir: out.clone(),
            base_dir: loaded.base_dir.clone(),
            cancel: None,
        };
        run_built(&loaded.resolved, loaded.built, &options, None).unwrap();
        let packets = std::fs::read_to_string(out.join("packets.csv")).unwrap();
        let mut header = packets.lines().next().unwrap().split(',');
        let delay = header.position(|c| c == "delay_ns").unwrap();
        let delays: std::collections::BTreeSet<&str> = packets
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(delay).unwrap())
            .collect();
        assert_eq!(delays, ["2000000", "3000000"].into(), "{packets}");
    }
}
