//! The loops of a `[[loops]]` system read from the graph they expand into
//! ([`loops::expand_loops`](super::loops::expand_loops)): a
//! [`LoopView`](crate::view::LoopView) over a [`Graph`], so the observers of a
//! loop run (recorder, metrics, stop conditions) read a graph run as they read
//! a [`System`](crate::System).
//!
//! Each loop's values come from its components as a
//! [`Loop`](crate::Loop) has them: the plant's state from the
//! [`PlantComponent`] (a continuous plant's from the engine, a discrete
//! plant's own), its outputs computed from that state and the actuator's
//! applied value (not the plant's `y` port, which is read with the input
//! held over the step that just ended), the reference from the
//! [`ControllerComponent`]'s signals, the controller's state and output, and
//! the [`ActuatorComponent`]'s held and applied values. Resets are the
//! engine's count for the plant's guards.

use netloop_time::SimTime;

use super::adapters::{ActuatorComponent, ControllerComponent, PlantComponent};
use super::engine::{Graph, GraphObserver};
use crate::error::ObserverError;
use crate::plant::{with_plant, Kinematics, Plant, Signature};
use crate::time::StepSize;
use crate::view::{LoopObserver, LoopView};

/// The components of one expanded loop (indices into the graph's
/// declaration order), and its predecessor loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopComponents {
    pub name: String,
    pub plant: usize,
    pub sensor: usize,
    pub controller: usize,
    /// CACC only: the sampler of the predecessor's acceleration.
    pub extra: Option<usize>,
    pub actuator: usize,
    pub predecessor: Option<usize>,
}

/// Which components of a graph each loop became, in loop order; made by
/// [`expand_loops`](super::loops::expand_loops).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopMap {
    pub(crate) loops: Vec<LoopComponents>,
}

impl LoopMap {
    pub fn loops(&self) -> &[LoopComponents] {
        &self.loops
    }
}

/// The graph of a `[[loops]]` system and which components each loop
/// became.
#[derive(Debug)]
pub struct ExpandedLoops {
    pub graph: Graph,
    pub map: LoopMap,
}

impl ExpandedLoops {
    /// The loops as they stand now.
    pub fn view(&self) -> GraphLoops<'_> {
        GraphLoops::new(&self.graph, &self.map).expect("expand_loops made the map for this graph")
    }
}

/// A map that does not fit the graph it was given.
#[derive(Debug, thiserror::Error)]
#[error("loop `{name}`: component {index} of the graph is not its {part}")]
pub struct MapMismatch {
    pub name: String,
    pub index: usize,
    pub part: &'static str,
}

/// The loops of an expanded graph as a [`LoopView`] (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct GraphLoops<'a> {
    graph: &'a Graph,
    map: &'a LoopMap,
}

impl Graph {
    /// Component `i` as the kind `T`, if it is one (a kind shows itself
    /// through [`Component::as_any`](super::Component::as_any)).
    ///
    /// # Panics
    /// For `i` out of range.
    pub fn component_as<T: 'static>(&self, i: usize) -> Option<&T> {
        self.nodes[i].component.as_any()?.downcast_ref()
    }

    /// Reset events located so far for component `i`'s guards.
    pub fn resets(&self, i: usize) -> u64 {
        self.nodes[i].resets
    }
}

impl<'a> GraphLoops<'a> {
    /// The view of `graph` through `map`.
    ///
    /// # Errors
    /// [`MapMismatch`] when a loop's plant, controller or actuator is not
    /// that kind of component in `graph` (a map of another graph).
    pub fn new(graph: &'a Graph, map: &'a LoopMap) -> Result<Self, MapMismatch> {
        let n = graph.nodes.len();
        for l in &map.loops {
            let bad = |index: usize, part| MapMismatch {
                name: l.name.clone(),
                index,
                part,
            };
            let is = |i: usize, ok: fn(&Graph, usize) -> bool| i < n && ok(graph, i);
            if !is(l.plant, |g, i| {
                g.component_as::<PlantComponent>(i).is_some()
            }) {
                return Err(bad(l.plant, "plant"));
            }
            if !is(l.controller, |g, i| {
                g.component_as::<ControllerComponent>(i).is_some()
            }) {
                return Err(bad(l.controller, "controller"));
            }
            if !is(l.actuator, |g, i| {
                g.component_as::<ActuatorComponent>(i).is_some()
            }) {
                return Err(bad(l.actuator, "actuator"));
            }
        }
        Ok(GraphLoops { graph, map })
    }

    pub fn graph(&self) -> &'a Graph {
        self.graph
    }

    #[inline]
    fn parts(&self, i: usize) -> &'a LoopComponents {
        &self.map.loops[i]
    }

    // `new` checked every kind, and a graph's components never change.
    #[inline]
    fn plant(&self, i: usize) -> &'a PlantComponent {
        self.graph
            .component_as(self.parts(i).plant)
            .expect("checked by GraphLoops::new")
    }

    #[inline]
    fn controller(&self, i: usize) -> &'a ControllerComponent {
        self.graph
            .component_as(self.parts(i).controller)
            .expect("checked by GraphLoops::new")
    }

    #[inline]
    fn actuator(&self, i: usize) -> &'a ActuatorComponent {
        self.graph
            .component_as(self.parts(i).actuator)
            .expect("checked by GraphLoops::new")
    }
}

impl LoopView for GraphLoops<'_> {
    #[inline]
    fn k(&self) -> u64 {
        self.graph.k()
    }
    #[inline]
    fn time(&self) -> SimTime {
        self.graph.time()
    }
    #[inline]
    fn step_size(&self) -> StepSize {
        self.graph.step_size()
    }
    #[inline]
    fn loop_count(&self) -> usize {
        self.map.loops.len()
    }
    fn loop_name(&self, i: usize) -> &str {
        &self.parts(i).name
    }
    fn predecessor(&self, i: usize) -> Option<usize> {
        self.parts(i).predecessor
    }
    fn signature(&self, i: usize) -> &Signature {
        self.plant(i).signature()
    }
    fn reference_dim(&self, i: usize) -> usize {
        self.controller(i).reference_dim()
    }
    fn controller_state_names(&self, i: usize) -> &[String] {
        self.controller(i).state_names()
    }
    fn plant_state(&self, i: usize) -> &[f64] {
        self.plant(i).state(self.graph.states(self.parts(i).plant))
    }
    fn controller_state(&self, i: usize) -> &[f64] {
        self.controller(i).state()
    }
    fn computed_control(&self, i: usize) -> &[f64] {
        self.graph.output(self.parts(i).controller, 0)
    }
    fn held_control(&self, i: usize) -> &[f64] {
        self.actuator(i).held()
    }
    fn applied_control(&self, i: usize) -> &[f64] {
        self.actuator(i).applied()
    }
    fn references_into(&self, i: usize, out: &mut [f64]) {
        self.controller(i).reference_into(self.graph.time(), out);
    }
    fn plant_outputs_into(&self, i: usize, out: &mut [f64]) {
        let t = self.graph.time().as_secs_f64();
        let (x, u) = (self.plant_state(i), self.applied_control(i));
        with_plant!(self.plant(i).model(), p => p.output(t, x, u, out));
    }
    fn kinematics(&self, i: usize) -> Option<Kinematics> {
        let x = self.plant_state(i);
        with_plant!(self.plant(i).model(), p => p.kinematics(x))
    }
    fn resets(&self, i: usize) -> u64 {
        self.graph.resets(self.parts(i).plant)
    }
}

/// A [`LoopObserver`] as the [`GraphObserver`] of an expanded graph
/// ([`Graph::run_to`]): it sees every boundary through [`GraphLoops`].
#[derive(Debug)]
pub struct ObserveGraph<'m, O> {
    map: &'m LoopMap,
    pub observer: O,
}

impl<'m, O: LoopObserver> ObserveGraph<'m, O> {
    pub fn new(map: &'m LoopMap, observer: O) -> Self {
        ObserveGraph { map, observer }
    }

    pub fn into_inner(self) -> O {
        self.observer
    }
}

impl<O: LoopObserver> GraphObserver for ObserveGraph<'_, O> {
    fn observe(&mut self, graph: &Graph) -> Result<(), ObserverError> {
        let view = GraphLoops::new(graph, self.map)?;
        self.observer.observe_loops(&view)
    }
}
