//! Nodes that graph components move (bridge's `graph_mobility`): their
//! positions go with every network step, and under master-slave they
//! decide how far the network may run ahead, as for loops
//! (`session/master_slave.rs`, "Position tolerance"): a moving node in a
//! network that depends on positions keeps lookahead off, and with
//! `[sync] position_tolerance` the network runs windows of as many whole
//! periods as no moving node can leave the tolerance of the network's
//! straight line. Under time-stepping a period's first boundary is served
//! before the network is handed the period, so that the positions it gets
//! are those of the period's start, as a loop's plant state gives them.

use controlsim::graph::GraphLoops;
use protocol::NodeKinematics;

use super::GraphSession;
use crate::ledger::FateSink;

impl<W: FateSink> GraphSession<W> {
    /// Positions and velocities of the moved nodes, from the outputs of the
    /// boundary evaluated last (a loop run's: from its plants' states).
    pub(super) fn kinematics(&self) -> Vec<NodeKinematics> {
        if let Some((map, motions)) = &self.loop_motions {
            let loops = GraphLoops::new(self.graph(), map).expect("the map is this graph's");
            return motions.iter().map(|m| m.kinematics(&loops)).collect();
        }
        self.motions
            .iter()
            .map(|m| m.kinematics(self.graph()))
            .collect()
    }

    /// Whether no moved node can be farther than `tolerance` from the
    /// network's extrapolation of it from now after `seconds`.
    pub(super) fn drift_within(&self, seconds: f64, tolerance: f64) -> bool {
        let within = |drift: Option<f64>| drift.is_some_and(|drift| drift <= tolerance);
        if let Some((map, motions)) = &self.loop_motions {
            let loops = GraphLoops::new(self.graph(), map).expect("the map is this graph's");
            return motions.iter().all(|m| within(m.max_drift(&loops, seconds)));
        }
        self.motions
            .iter()
            .all(|m| within(m.max_drift(self.graph(), seconds)))
    }

    /// Whether components or plants move nodes.
    pub(super) fn has_motions(&self) -> bool {
        !self.motions.is_empty() || self.loop_motions.is_some()
    }
}
