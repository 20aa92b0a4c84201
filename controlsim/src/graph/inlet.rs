//! Values that come into a graph from outside it: the receiving end of a
//! network flow (issue 11 item 3).
//!
//! A connection between components on different nodes is not evaluated by
//! the graph: its source's values travel as packets, and what arrives is
//! written into an [`Inlet`] that drives the destination in the
//! connection's place. The driver (the bridge's graph session) writes with
//! [`Graph::set_output`] before it evaluates a boundary; the written port
//! counts as new at that boundary, so a component evaluated on new inputs
//! (an actuator, an event-triggered controller) answers it there, and it
//! holds its value until the next write, as a receiver holds the last
//! packet. The driver learns what to send from [`Graph::is_fresh`] and
//! [`Graph::output`] after the boundary was evaluated.

use super::component::{Component, Ctx, Declaration, Inputs, Needs, Outputs, PortSpec, Timing};
use super::engine::Graph;

/// A component with one output `y` of `size` elements, written from outside
/// ([`Graph::set_output`]) and never evaluated by the graph itself.
#[derive(Clone, Debug)]
pub struct Inlet {
    size: usize,
}

impl Inlet {
    pub fn new(size: usize) -> Self {
        Inlet { size }
    }
}

impl Component for Inlet {
    fn needs(&self) -> Needs {
        Needs::OUTPUT_ONLY
    }

    fn declare(&self) -> Declaration {
        Declaration {
            inputs: Vec::new(),
            outputs: vec![PortSpec::new("y", self.size)],
            states: Vec::new(),
            guards: 0,
            // No input can make it due: only the driver writes it.
            timing: Timing::OnInput,
        }
    }

    fn output(&mut self, _cx: &mut Ctx, _x: &[f64], _u: &Inputs, _y: &mut Outputs) {}
}

impl Graph {
    /// Writes `values` into output port `port` of component `i` from element
    /// `first` on, and marks the port new at the current boundary. Call it
    /// before the boundary is evaluated (an [`Inlet`]'s port; writing a port
    /// the graph evaluates is overwritten when its component is due).
    ///
    /// # Panics
    /// When the boundary was evaluated already, or the elements are out of
    /// the port: both are driver bugs.
    pub fn set_output(&mut self, i: usize, port: usize, first: usize, values: &[f64]) {
        assert!(
            !self.evaluated,
            "set_output after boundary {} was evaluated",
            self.k
        );
        let n = &self.nodes[i];
        let start = n.out_base + n.out_offsets[port] + first;
        assert!(
            first + values.len() <= n.out_offsets[port + 1] - n.out_offsets[port],
            "set_output past the end of the port"
        );
        let base = n.port_base;
        self.values[start..start + values.len()].copy_from_slice(values);
        self.fresh[base + port] = self.k;
    }

    /// Whether output port `port` of component `i` got a new value at the
    /// current boundary (its component was due there, or it was written).
    pub fn is_fresh(&self, i: usize, port: usize) -> bool {
        self.fresh[self.nodes[i].port_base + port] == self.k
    }

    /// Whether the current boundary was evaluated.
    pub fn is_evaluated(&self) -> bool {
        self.evaluated
    }

    /// Index of output port `port` of component `i`, if it has one.
    pub fn output_index(&self, i: usize, port: &str) -> Option<usize> {
        self.nodes[i]
            .decl
            .outputs
            .iter()
            .position(|p| p.name == port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::adapters::ActuatorComponent;
    use crate::graph::GraphBuilder;
    use crate::solver::SolverKind;
    use crate::ActuatorConfig;
    use netloop_time::SimTime;

    /// A written inlet drives its consumer at that boundary and holds after.
    #[test]
    fn a_written_inlet_is_new_once_and_holds() {
        let mut b = GraphBuilder::new(SimTime::from_millis(1), SolverKind::Rk4);
        b.component("rx", Inlet::new(1));
        let act = ActuatorComponent::new("a", &ActuatorConfig::default(), 1).unwrap();
        b.component("act", act);
        b.connect("rx.y", "act.u");
        let mut g = b.build().unwrap();
        g.set_output(0, 0, 0, &[2.5]);
        g.evaluate().unwrap();
        assert!(g.is_fresh(0, 0));
        assert_eq!(g.value("act", "u").unwrap(), &[2.5]);
        g.integrate_step().unwrap();
        g.evaluate().unwrap();
        assert!(!g.is_fresh(0, 0) && !g.is_fresh(1, 0));
        assert_eq!(g.value("rx", "y").unwrap(), &[2.5]);
    }
}
