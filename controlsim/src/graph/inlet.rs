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
use netloop_time::SimTime;

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

    /// Evaluates on-input component `i` at instant `at` of the step that
    /// ends at the current boundary: its answer to a packet that arrived
    /// then (an event-triggered controller is clocked at the arrival, as a
    /// loop's is). Its inputs are taken as they stand: the inlets written so
    /// far at this boundary, every other output as it was held over the
    /// step. Its outputs count as new at the boundary, whose evaluation then
    /// leaves it alone (its outputs there are those of its last answer; a
    /// component answers once per packet, so twice when two packets act at
    /// one boundary). Call it before the boundary is evaluated. A
    /// controller that answers by rollback
    /// ([`ControllerComponent::answer_by_rollback`](super::adapters::ControllerComponent::answer_by_rollback))
    /// gives its output one solver step after `at` here, its state left as
    /// it was at `at`.
    ///
    /// # Panics
    /// When the boundary was evaluated already (a driver bug).
    pub fn respond(&mut self, i: usize, at: SimTime) {
        assert!(
            !self.evaluated,
            "respond after boundary {} was evaluated",
            self.k
        );
        self.nodes[i].gather(&self.values);
        self.compute_at(i, at);
        self.mark_fresh(i);
        self.answered[i] = self.k;
    }

    /// The components evaluated on new inputs ([`Timing::OnInput`]) with a
    /// triggering input driven directly by an output of component `src`,
    /// in declaration order.
    pub fn triggered_by(&self, src: usize) -> Vec<usize> {
        let n = &self.nodes[src];
        let ports = n.port_base..n.port_base + n.decl.outputs.len();
        (0..self.nodes.len())
            .filter(|&i| {
                let m = &self.nodes[i];
                m.decl.timing == Timing::OnInput
                    && m.gathers
                        .iter()
                        .any(|g| g.trigger && ports.contains(&g.src_port))
            })
            .collect()
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
    use crate::key_path::KeyPath;
    use crate::solver::SolverKind;
    use crate::ActuatorConfig;

    /// A written inlet drives its consumer at that boundary and holds after.
    #[test]
    fn a_written_inlet_is_new_once_and_holds() {
        let mut b = GraphBuilder::new(SimTime::from_millis(1), SolverKind::Rk4);
        b.component("rx", Inlet::new(1));
        let act =
            ActuatorComponent::new(&KeyPath::key("a"), &ActuatorConfig::default(), 1).unwrap();
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

    /// A PID (ki = 1, e = 1) with `trigger = "event"` behind an inlet.
    fn pid_behind_inlet() -> Graph {
        use crate::graph::adapters::{ControllerComponent, ControllerShape};
        let config: crate::ControllerConfig =
            toml::from_str("kind = \"pid\"\nkp = 0.0\nki = 1.0\ntrigger = \"event\"").unwrap();
        let step = crate::time::StepSize::new(SimTime::from_millis(1)).unwrap();
        let pid = ControllerComponent::new(
            &KeyPath::key("pid"),
            &config,
            ControllerShape {
                measurements: 1,
                outputs: 1,
                reference: &[],
                model: None,
                limits: None,
                default_period: Some(SimTime::from_millis(10)),
            },
            step,
        )
        .unwrap();
        let mut b = GraphBuilder::new(SimTime::from_millis(1), SolverKind::Rk4);
        b.component("rx", Inlet::new(1));
        b.component("pid", pid);
        b.connect("rx.y", "pid.measurement");
        b.build().unwrap()
    }

    /// Writes `y` into the inlet at boundary `k`, answered at `at` when given.
    fn packet_at(g: &mut Graph, k: u64, y: f64, at: Option<SimTime>) -> f64 {
        while g.k() < k {
            g.integrate_step().unwrap();
        }
        g.set_output(0, 0, 0, &[y]);
        if let Some(at) = at {
            g.respond(1, at);
        }
        g.evaluate().unwrap();
        g.value("pid", "u").unwrap()[0]
    }

    /// Answered at the arrivals 3.5 ms and 13.25 ms, the PID's integral runs
    /// over the 9.75 ms between them (`I += dt ki e`, e = 0 - (-1)), not
    /// over the 10 ms between the boundaries 4 and 14 where the packets act;
    /// the boundary's evaluation leaves the answer alone.
    #[test]
    fn a_component_answers_at_the_arrival_on_its_own_clock() {
        let mut g = pid_behind_inlet();
        assert_eq!(g.triggered_by(0), vec![1]);
        assert_eq!(packet_at(&mut g, 4, -1.0, Some(SimTime(3_500_000))), 0.0);
        let u = packet_at(&mut g, 14, -1.0, Some(SimTime(13_250_000)));
        assert_eq!(u, SimTime(9_750_000).as_secs_f64());
        assert!(g.is_fresh(1, 0));

        let mut on_grid = pid_behind_inlet();
        assert_eq!(packet_at(&mut on_grid, 4, -1.0, None), 0.0);
        assert_eq!(packet_at(&mut on_grid, 14, -1.0, None), 0.01);
    }

    /// The boundary a component answered at is part of the snapshot: a
    /// graph restored there does not evaluate it again.
    #[test]
    fn an_answer_survives_a_snapshot_round_trip() {
        let mut g = pid_behind_inlet();
        packet_at(&mut g, 4, -1.0, Some(SimTime(3_500_000)));
        while g.k() < 14 {
            g.integrate_step().unwrap();
        }
        g.set_output(0, 0, 0, &[-1.0]);
        g.respond(1, SimTime(13_250_000));
        let snap = g.snapshot();
        g.evaluate().unwrap();
        let u = g.value("pid", "u").unwrap()[0];
        let mut h = pid_behind_inlet();
        h.restore(&snap).unwrap();
        assert_eq!(h.snapshot(), snap);
        h.evaluate().unwrap();
        assert_eq!(h.value("pid", "u").unwrap()[0].to_bits(), u.to_bits());
    }
}
