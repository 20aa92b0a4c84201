//! Evaluating only what is read, in [`Graph::run_to`].
//!
//! A plant is evaluated at every step, but its sensor reads its outputs only
//! at its samples: computing them at the other boundaries is work nobody
//! sees, unless the observer reads the boundary. So an every-step component
//! whose [`output`](super::Component::output) only computes
//! ([`Needs::pure_output`](super::Needs::pure_output)) has *lazy* outputs,
//! evaluated at a boundary of `run_to` only where a component that reads
//! them is due or the observer reads the boundary
//! ([`GraphObserver::observes`]). Its values at a boundary where it is
//! evaluated do not depend on the boundaries where it was not, so every
//! component sees the bits it would see if it were evaluated everywhere.
//!
//! A component's outputs are lazy when
//! - it is a stage of its own (not lowered, not in an algebraic loop),
//!   evaluated at every step, with `pure_output`, and not advanced only
//!   over steps it was due at (that reads its freshness);
//! - every component reading one of its outputs is periodic, comes after it
//!   in the evaluation order (so it reads the value of the same boundary),
//!   is a stage of its own, and does not gather its inputs for every step
//!   (no continuous states; `advance`, if any, only when due). An
//!   every-step, on-input or integrating reader makes the outputs needed
//!   at every boundary.
//!
//! A boundary is *quiet* when no component can be due there: every stage
//! is a lazy component, a periodic one whose next boundary lies later, or
//! an on-input one (inside `run_to` a port is new at a boundary only when
//! its component was evaluated there, so nothing triggers it), or lowered
//! components that cannot change there or that nobody reads there
//! ([`lowered_can_rest`](super::lower::lowered_can_rest): a diagram of
//! library blocks between the samples of its discrete blocks). A quiet
//! boundary is not evaluated at all; its step is integrated.
//!
//! Consecutive quiet boundaries that the observer does not read are
//! integrated as one stretch ([`Graph::run_quiet`]): no output changes
//! inside it, so every stepping component's inputs are gathered once for
//! the stretch, and no component is due, so only those advanced at every
//! step are advanced. Each step is otherwise the ordinary one (the same
//! calls in the same order, the same fault and non-finite checks after
//! it); components with guards take the ordinary step.
//!
//! The first boundary of a `run_to` call is evaluated in full (the driver
//! may have written inlets or answered packets there,
//! [`Graph::set_output`], [`Graph::respond`]), and so is the last, so that
//! the graph `run_to` leaves behind (values, freshness, snapshot) is bit
//! for bit the one an observer reading every boundary leaves. Only when `run_to`
//! stops with an error may a lazy output hold the value of the last
//! boundary that read it.
//!
//! [`Graph::evaluate`], [`Graph::integrate_step`] and the bridge's session,
//! which reads outputs after every evaluation, always evaluate in full.

use super::component::Inputs;
use super::engine::{AdvanceWhen, Graph, GraphObserver, Node, Schedule, Stage};
use super::GraphError;
use crate::error::ObserverError;

/// Which outputs are lazy and when a boundary can be quiet; made at build.
#[derive(Debug, Default)]
pub(crate) struct Demand {
    /// Per component: the components that read its outputs, when these
    /// are lazy.
    lazy: Vec<Option<Box<[usize]>>>,
    /// The periodic components, whose next boundaries end a quiet stretch.
    periodic: Vec<usize>,
    /// Whether any boundary can be quiet (every stage lazy, periodic or on
    /// input).
    pub(crate) quiet: bool,
    /// Whether quiet boundaries can be integrated as a stretch
    /// ([`Graph::run_quiet`]): no stepping component has guards.
    pub(crate) plain_steps: bool,
    /// Whether a stretch can integrate each component over all its steps
    /// at once ([`Component::integrate_stretch`](super::Component::integrate_stretch)):
    /// no step of it advances a component or can report a fault, so the
    /// components do not interact between its boundaries.
    pub(crate) whole_stretches: bool,
}

impl Demand {
    /// `stepping` lists the components the step serves, with when it
    /// advances them.
    /// `lowered` lists the lowered components with their ports, as
    /// [`Stage::Lowered`] ranges index it.
    pub(crate) fn new(
        nodes: &[Node],
        stages: &[Stage],
        lowered: &[(usize, usize)],
        stepping: &[(usize, AdvanceWhen)],
        faulting: &[usize],
    ) -> Self {
        // Each component's stage and whether it is a stage of its own.
        let mut position = vec![(usize::MAX, false); nodes.len()];
        for (s, stage) in stages.iter().enumerate() {
            match stage {
                Stage::One(i) => position[*i] = (s, true),
                Stage::Lowered { lowered: run, .. } => {
                    for &(node, _) in &lowered[run.clone()] {
                        position[node] = (s, false);
                    }
                }
                Stage::Loop(block) => {
                    for &m in &block.members {
                        position[m] = (s, false);
                    }
                }
            }
        }
        let gathers_every_step = |c: usize| {
            stepping.iter().any(|&(i, when)| {
                i == c && (!nodes[c].x.is_empty() || !matches!(when, AdvanceWhen::Due(_)))
            })
        };
        let advanced_when_due = |c: usize| {
            stepping
                .iter()
                .any(|&(i, when)| i == c && matches!(when, AdvanceWhen::Due(_)))
        };
        let lazy = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let (at, own) = position[i];
                if !own
                    || n.schedule != Schedule::EveryStep
                    || !n.component.needs().pure_output
                    || advanced_when_due(i)
                {
                    return None;
                }
                let ports = n.port_base..n.port_base + n.decl.outputs.len();
                let mut readers = Vec::new();
                for (c, m) in nodes.iter().enumerate() {
                    if !m.gathers.iter().any(|g| ports.contains(&g.src_port)) {
                        continue;
                    }
                    let (after, alone) = position[c];
                    let sampled = matches!(m.schedule, Schedule::Periodic(_));
                    // A lowered sampled block reads its inputs only when due.
                    let alone = alone || matches!(stages[after], Stage::Lowered { .. });
                    if !sampled || !alone || after <= at || gathers_every_step(c) {
                        return None;
                    }
                    readers.push(c);
                }
                Some(readers.into_boxed_slice())
            })
            .collect::<Vec<_>>();
        let lowered_rest = super::lower::lowered_can_rest(nodes, lowered, &gathers_every_step);
        let quiet = stages.iter().all(|s| match s {
            Stage::One(i) => lazy[*i].is_some() || nodes[*i].schedule != Schedule::EveryStep,
            Stage::Lowered { .. } => lowered_rest,
            Stage::Loop(_) => false,
        });
        let periodic = (0..nodes.len())
            .filter(|&i| matches!(nodes[i].schedule, Schedule::Periodic(_)))
            .collect();
        let plain_steps = stepping.iter().all(|&(i, _)| nodes[i].guards.is_none());
        // Inside a stretch nothing is evaluated, so no port is new and a
        // component advanced when due is not advanced.
        let whole_stretches = plain_steps
            && faulting.is_empty()
            && stepping
                .iter()
                .all(|&(_, when)| when != AdvanceWhen::Always);
        Demand {
            lazy,
            periodic,
            quiet,
            plain_steps,
            whole_stretches,
        }
    }
}

impl Graph {
    /// Whether component `i`'s outputs are lazy and no reader is due at the
    /// current boundary (their evaluation can be left out).
    #[inline]
    pub(crate) fn unread(&self, i: usize) -> bool {
        match &self.demand.lazy[i] {
            Some(readers) => readers.iter().all(|&c| self.nodes[c].next_due != self.k),
            None => false,
        }
    }

    /// The first boundary at or after the current one where a component can
    /// be due: the earliest next boundary of a periodic component, or the
    /// current one when boundaries are never quiet.
    pub(crate) fn busy_from(&self) -> u64 {
        if !self.demand.quiet {
            return self.k;
        }
        self.demand
            .periodic
            .iter()
            .map(|&i| self.nodes[i].next_due)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Evaluates the current boundary for the components only, leaving out
    /// lazy outputs nobody reads, and sets `busy` to the next boundary that
    /// is not quiet ([`busy_from`](Self::busy_from)): `run_to` only
    /// integrates the boundaries before it.
    ///
    /// # Errors
    /// As [`evaluate`](Self::evaluate).
    pub(crate) fn evaluate_demanded(&mut self, busy: &mut u64) -> Result<(), super::GraphError> {
        if self.evaluated {
            return Ok(());
        }
        self.evaluate_stages(true, None)?;
        *busy = self.busy_from();
        Ok(())
    }
}

impl Graph {
    /// Integrates from the current boundary, quiet and not observed, to
    /// boundary `end` (at most the next busy one) or to the first boundary
    /// before it that `observer` reads, whichever comes first; needs
    /// [`Demand::plain_steps`]. See the module docs.
    ///
    /// # Errors
    /// As [`run_to`](Graph::run_to), at the boundary after the failing step.
    pub(crate) fn run_quiet<O: GraphObserver + ?Sized>(
        &mut self,
        end: u64,
        observer: &O,
    ) -> Result<(), GraphError> {
        debug_assert!(self.demand.plain_steps && self.k < end);
        // Nothing is evaluated up to `end`: the values gathered now hold.
        for &(i, _) in &self.stepping {
            let node = &mut self.nodes[i];
            node.gather(&self.values);
        }
        if self.demand.whole_stretches {
            let mut stop = self.k + 1;
            while stop < end && !observer.observes(stop) {
                stop += 1;
            }
            return self.integrate_stretch(stop);
        }
        loop {
            // No component is due, so one advanced when due is not here.
            self.step_plain::<false>()?;
            if self.k >= end || observer.observes(self.k) {
                return Ok(());
            }
        }
    }

    /// Integrates every stepping component from the current boundary to
    /// `end` with its gathered inputs held, one component at a time
    /// ([`Demand::whole_stretches`]): the bits of the step-by-step
    /// stretch. Where a state turns non-finite, every component is put
    /// back and integrated only up to the earliest such step, so the run
    /// stops where, and naming what, the step-by-step stretch would.
    ///
    /// # Errors
    /// As [`run_to`](Graph::run_to), at the boundary after the failing step.
    fn integrate_stretch(&mut self, end: u64) -> Result<(), GraphError> {
        let (k, solver, step) = (self.k, self.solver, self.step);
        let mut steps = end - k;
        let with_states = self
            .stepping
            .iter()
            .filter(|&&(i, _)| !self.nodes[i].x.is_empty());
        // Only a second component with states can have gone past the
        // earliest non-finite step and need putting back.
        let mut put_back = with_states.clone().nth(1).is_some();
        if put_back {
            self.stretch_start.clear();
            for &(i, _) in with_states {
                self.stretch_start.extend_from_slice(&self.nodes[i].x);
            }
        }
        let mut finite = true;
        loop {
            for &(i, _) in &self.stepping {
                let node = &mut self.nodes[i];
                if node.x.is_empty() {
                    continue;
                }
                let u = Inputs {
                    data: &node.inputs,
                    offsets: &node.in_offsets,
                };
                if let Err(done) = node.component.integrate_stretch(
                    solver,
                    &mut self.ws,
                    step,
                    k,
                    steps,
                    &mut node.x,
                    &u,
                ) {
                    finite = false;
                    steps = steps.min(done);
                }
            }
            if finite || !put_back {
                break;
            }
            // Once more from the start, every component to the earliest
            // non-finite step (where at least one stops again).
            let mut at = 0;
            for &(i, _) in &self.stepping {
                let x = &mut self.nodes[i].x;
                let len = x.len();
                x.copy_from_slice(&self.stretch_start[at..at + len]);
                at += len;
            }
            put_back = false;
        }
        self.k = k + steps;
        self.evaluated = false;
        self.after_step(finite)
    }
}

/// An observer that reads nothing: [`Graph::run_to`] then evaluates only
/// what the components read (and the last boundary in full). For runs
/// whose result is read at the end (a benchmark, a test of final states).
#[derive(Clone, Copy, Debug, Default)]
pub struct Unobserved;

impl GraphObserver for Unobserved {
    #[inline]
    fn observes(&self, _k: u64) -> bool {
        false
    }

    fn observe(&mut self, _graph: &Graph) -> Result<(), ObserverError> {
        Ok(())
    }
}
