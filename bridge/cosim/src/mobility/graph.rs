//! A graph component that moves its node: the output elements that are the
//! node's position (and speed) along a [`NodePath`], read after each
//! evaluation (bridge's `graph_mobility` builds them from a scenario's
//! `mobility` tables).

use controlsim::graph::Graph;
use protocol::NodeKinematics;

use super::NodePath;

/// One output element of the graph: component, port, element.
pub type Element = (usize, usize, usize);

/// How one graph component's outputs move its node.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphNodeMotion {
    /// Index (in the graph) of the component whose table this is.
    pub component: usize,
    path: NodePath,
    position: Element,
    velocity: Option<Element>,
    /// The library plant component whose own states the position and
    /// velocity are (what a model bound reads), if they are.
    plant: Option<usize>,
}

impl GraphNodeMotion {
    /// Component `component` moves `path`'s node: `position` and
    /// `velocity` are the output elements read (a library plant
    /// component's own states when `plant` names it, so that its model
    /// bounds the drift).
    pub fn new(
        component: usize,
        path: NodePath,
        (position, velocity): (Element, Option<Element>),
        plant: Option<usize>,
    ) -> Self {
        GraphNodeMotion {
            component,
            path,
            position,
            velocity,
            plant,
        }
    }

    pub fn node(&self) -> u32 {
        self.path.node
    }

    /// Position along the path and speed, from the last evaluation.
    fn along_path(&self, graph: &Graph) -> (f64, f64) {
        let read = |(c, p, e): Element| graph.output(c, p)[e];
        (read(self.position), self.velocity.map_or(0.0, read))
    }

    /// The node's position and velocity for the outputs of the boundary
    /// evaluated last.
    pub fn kinematics(&self, graph: &Graph) -> NodeKinematics {
        let (position, speed) = self.along_path(graph);
        self.path.kinematics(position, speed)
    }

    /// The farthest (metres) the node can get from the network's straight
    /// line within `seconds` of a sync now (see
    /// [`NodeMotion::max_drift`](super::NodeMotion::max_drift)); `None` when nothing
    /// bounds it.
    pub fn max_drift(&self, graph: &Graph, seconds: f64) -> Option<f64> {
        let (_, speed) = self.along_path(graph);
        let x = self.plant.map_or(&[][..], |c| graph.states(c));
        self.path.max_drift(x, speed, seconds)
    }
}
