//! The built [`Graph`] and its step: evaluate a boundary in the evaluation
//! order, let an observer see it, integrate the step.
//!
//! # One step
//! At boundary `k` ([`Graph::evaluate`]), for each block of the order
//! ([`order`](super::order)): a component that is due gets its inputs
//! gathered from the outputs that drive them and computes its outputs; an
//! algebraic loop is solved ([`newton`](super::newton)). Outputs of a
//! component that is not due hold their values. Then
//! ([`Graph::run_to`]) the observer sees the boundary, and the step is
//! integrated: every component's inputs are gathered again (so each sees the
//! values as they stand after the whole boundary), its continuous states are
//! integrated by the run's solver over `[k h, (k + 1) h]` with the inputs
//! held (guards located inside the step, [`event`](crate::event)), and its
//! [`advance`](super::Component::advance) is called. Components exchange
//! values only at boundaries, so integrating each with its inputs held is
//! integrating them together. A component's fault
//! ([`Component::fault`](super::Component::fault)), then a non-finite state,
//! stops the run at the new boundary.
//!
//! The target check, the step's interval and a plant's step (continuous or
//! discrete) are the (crate-private) `advance` module's, shared with
//! [`System`](crate::System), so a plant gives the same bits in both.
//!
//! Per-step work does not allocate: port values live in one vector, each
//! input is a list of copies from it, and all scratch is sized at build. A
//! periodic component keeps its next due boundary, so the per-boundary
//! check is a comparison, not a division. The step visits only the
//! components that have continuous states or an `advance`, and asks for
//! faults only those that can report one ([`Needs`]), lists made at build.

use netloop_time::SimTime;

use super::component::{Component, Ctx, Declaration, Inputs, Needs, Outputs, SavedState};
use super::demand::Demand;
use super::error::GraphError;
use super::lower::Program;
use super::newton::{Failure, LoopBlock};
use crate::advance::{self, BadTarget};
use crate::error::ObserverError;
use crate::event::Guards;
use crate::key_path::KeyPath;
use crate::solver::{SolverKind, Workspace};
use crate::time::{Periodic, StepSize};

/// Marks an output port never evaluated.
pub(crate) const NEVER: u64 = u64::MAX;

/// When a built component is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Schedule {
    EveryStep,
    Periodic(Periodic),
    OnInput,
}

/// One connection as the engine uses it: copy `len` values from
/// `values[src..]` to the component's `inputs[dst..]`; `src_port` is the
/// driving output port (for "has a new value").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Gather {
    pub(crate) src: usize,
    pub(crate) dst: usize,
    pub(crate) len: usize,
    pub(crate) src_port: usize,
    /// Whether a new value triggers an on-input component.
    pub(crate) trigger: bool,
}

#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) name: String,
    pub(crate) key: KeyPath,
    pub(crate) component: Box<dyn Component>,
    pub(crate) decl: Declaration,
    pub(crate) schedule: Schedule,
    pub(crate) inputs: Vec<f64>,
    pub(crate) in_offsets: Vec<usize>,
    pub(crate) out_offsets: Vec<usize>,
    pub(crate) out_base: usize,
    pub(crate) port_base: usize,
    pub(crate) gathers: Vec<Gather>,
    pub(crate) x: Vec<f64>,
    pub(crate) guards: Option<Guards>,
    /// Reset events (impacts) located so far, as a loop's
    /// [`resets`](crate::Loop::resets).
    pub(crate) resets: u64,
    /// A periodic component's next boundary not yet evaluated (kept so that
    /// the per-boundary check is a comparison, not a division); see
    /// [`Graph::reschedule`].
    pub(crate) next_due: u64,
}

impl Node {
    fn out_len(&self) -> usize {
        *self.out_offsets.last().unwrap_or(&0)
    }

    #[inline]
    pub(crate) fn gather(&mut self, values: &[f64]) {
        for g in &self.gathers {
            // Single elements (the common case) without a call to memcpy.
            if g.len == 1 {
                self.inputs[g.dst] = values[g.src];
            } else {
                self.inputs[g.dst..g.dst + g.len].copy_from_slice(&values[g.src..g.src + g.len]);
            }
        }
    }
}

/// When the step calls a component's `advance` ([`Needs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AdvanceWhen {
    Never,
    Always,
    /// When output port `fresh[.0]` is new at the step's start.
    Due(usize),
}

/// An entry of the evaluation order.
#[derive(Debug)]
pub(crate) enum Stage {
    One(usize),
    Loop(LoopBlock),
    /// Consecutive components of the order evaluated by instructions `ops`
    /// of the graph's [`Program`] ([`lower`](super::lower)); `lowered` are
    /// their entries of [`Graph::lowered`], `fresh` the entries of
    /// [`Graph::lowered_fresh`] of those due at every boundary (the
    /// program marks the sampled ones).
    Lowered {
        lowered: std::ops::Range<usize>,
        ops: std::ops::Range<usize>,
        fresh: std::ops::Range<usize>,
    },
}

/// Sees the graph at each boundary during [`Graph::run_to`], after the
/// boundary was evaluated and before its step is integrated.
pub trait GraphObserver {
    /// Whether it reads the graph at boundary `k`: [`Graph::run_to`] calls
    /// [`observe`](Self::observe) only there, and elsewhere may leave out
    /// outputs no component reads ([`demand`](super::demand)). Default:
    /// every boundary.
    #[inline]
    fn observes(&self, k: u64) -> bool {
        let _ = k;
        true
    }

    /// # Errors
    /// Any error stops the run with [`GraphError::Observer`].
    fn observe(&mut self, graph: &Graph) -> Result<(), ObserverError>;
}

impl<F: FnMut(&Graph)> GraphObserver for F {
    fn observe(&mut self, graph: &Graph) -> Result<(), ObserverError> {
        self(graph);
        Ok(())
    }
}

/// Components joined by connections, on one step grid. Built by
/// [`GraphBuilder`](super::GraphBuilder).
#[derive(Debug)]
pub struct Graph {
    pub(crate) step: StepSize,
    pub(crate) solver: SolverKind,
    pub(crate) k: u64,
    /// Whether boundary `k` was evaluated.
    pub(crate) evaluated: bool,
    pub(crate) nodes: Vec<Node>,
    pub(crate) stages: Vec<Stage>,
    pub(crate) values: Vec<f64>,
    /// Per output port, the boundary it was last evaluated at.
    pub(crate) fresh: Vec<u64>,
    /// Per component, the boundary it last answered a packet at
    /// ([`Graph::respond`]).
    pub(crate) answered: Vec<u64>,
    port_names: Vec<String>,
    pub(crate) ws: Workspace,
    /// Scratch for restore's shape check.
    pub(crate) scratch: SavedState,
    /// The continuous states at the start of a stretch
    /// ([`run_quiet`](Self::run_quiet)), kept to put them back.
    pub(crate) stretch_start: Vec<f64>,
    /// Components the step serves (continuous states or an `advance`), in
    /// declaration order, with when to call `advance`.
    pub(crate) stepping: Vec<(usize, AdvanceWhen)>,
    /// Components that can report a fault, in declaration order.
    faulting: Vec<usize>,
    /// The lowered components' instructions (and the lowered sampled
    /// blocks' discrete states).
    pub(crate) program: Program,
    /// Which outputs `run_to` may leave out where nothing reads them.
    pub(crate) demand: Demand,
    /// Each lowered component and its one output port (in
    /// [`fresh`](Self::fresh)), in evaluation order.
    pub(crate) lowered: Vec<(usize, usize)>,
    /// The output ports of the lowered components due at every boundary,
    /// as [`Stage::Lowered`]'s `fresh` ranges index them.
    lowered_fresh: Vec<usize>,
}

impl Graph {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        step: StepSize,
        solver: SolverKind,
        mut nodes: Vec<Node>,
        mut stages: Vec<Stage>,
        values: Vec<f64>,
        ports: usize,
        port_names: Vec<String>,
        ws: Workspace,
    ) -> Self {
        let (mut stepping, mut faulting) = (Vec::new(), Vec::new());
        for (i, node) in nodes.iter_mut().enumerate() {
            node.gather(&values);
            node.component.start(&Inputs {
                data: &node.inputs,
                offsets: &node.in_offsets,
            });
            let needs = node.component.needs();
            let when = match needs {
                Needs { advance: false, .. } => AdvanceWhen::Never,
                Needs {
                    advance_only_when_due: true,
                    ..
                } if !node.decl.outputs.is_empty() => AdvanceWhen::Due(node.port_base),
                _ => AdvanceWhen::Always,
            };
            if when != AdvanceWhen::Never || !node.x.is_empty() {
                stepping.push((i, when));
            }
            let fault = needs.fault;
            if fault {
                faulting.push(i);
            }
        }
        let (program, lowered, lowered_fresh) = lower_stages(&nodes, &mut stages);
        // The program does a lowered sampled block's `advance`.
        stepping.retain(|&(i, _)| !program.is_sampled(i));
        let demand = Demand::new(&nodes, &stages, &lowered, &stepping, &faulting);
        let answered = vec![NEVER; nodes.len()];
        let mut graph = Graph {
            step,
            solver,
            k: 0,
            evaluated: false,
            nodes,
            stages,
            values,
            fresh: vec![NEVER; ports],
            answered,
            port_names,
            ws,
            scratch: SavedState::default(),
            stretch_start: Vec::new(),
            stepping,
            faulting,
            program,
            demand,
            lowered,
            lowered_fresh,
        };
        graph.reschedule();
        graph
    }

    pub fn step_size(&self) -> StepSize {
        self.step
    }

    pub fn solver(&self) -> SolverKind {
        self.solver
    }

    /// The current boundary.
    pub fn k(&self) -> u64 {
        self.k
    }

    /// The current time, `k h`.
    pub fn time(&self) -> SimTime {
        SimTime(self.k * self.step.as_nanos())
    }

    /// Component names, in declaration order.
    pub fn component_names(&self) -> impl Iterator<Item = &str> {
        self.nodes.iter().map(|n| n.name.as_str())
    }

    /// Index of the component called `name`.
    pub fn component_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// Component `i`'s declaration.
    pub fn declaration(&self, i: usize) -> &Declaration {
        &self.nodes[i].decl
    }

    /// Component `i`'s continuous states now.
    pub fn states(&self, i: usize) -> &[f64] {
        &self.nodes[i].x
    }

    /// Component `i`'s discrete states worth recording
    /// ([`Component::discrete_states`]).
    pub fn discrete_states(&self, i: usize) -> &[f64] {
        match self.program.discrete_states(i) {
            Some(x) => x,
            None => self.nodes[i].component.discrete_states(),
        }
    }

    /// Output port `port` of component `i` (its current value).
    pub fn output(&self, i: usize, port: usize) -> &[f64] {
        let n = &self.nodes[i];
        &self.values[n.out_base + n.out_offsets[port]..n.out_base + n.out_offsets[port + 1]]
    }

    /// The value of output `component.port`, if both exist.
    pub fn value(&self, component: &str, port: &str) -> Option<&[f64]> {
        let i = self.component_index(component)?;
        let p = self.nodes[i]
            .decl
            .outputs
            .iter()
            .position(|q| q.name == port)?;
        Some(self.output(i, p))
    }

    /// Every output element, components and ports in declaration order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// A column name per element of [`values`](Self::values):
    /// `component.port[i]`, `component.port` for a one-element port, or
    /// `component.port.element` where the port names its elements.
    pub fn value_names(&self) -> Vec<String> {
        let mut names = Vec::with_capacity(self.values.len());
        for n in &self.nodes {
            for p in &n.decl.outputs {
                for i in 0..p.size {
                    names.push(match p.elements.get(i) {
                        Some(e) => format!("{}.{}.{e}", n.name, p.name),
                        None if p.size == 1 => format!("{}.{}", n.name, p.name),
                        None => format!("{}.{}[{i}]", n.name, p.name),
                    });
                }
            }
        }
        names
    }

    /// The evaluation order: one entry per block, a loop's members joined
    /// by `+`.
    pub fn order(&self) -> Vec<Vec<&str>> {
        let name = |i: usize| self.nodes[i].name.as_str();
        let mut order = Vec::new();
        for s in &self.stages {
            match s {
                Stage::One(i) => order.push(vec![name(*i)]),
                Stage::Lowered { lowered, .. } => order.extend(
                    self.lowered[lowered.clone()]
                        .iter()
                        .map(|&(i, _)| vec![name(i)]),
                ),
                Stage::Loop(b) => order.push(b.members.iter().map(|&i| name(i)).collect()),
            }
        }
        order
    }

    /// The key component `i` was added with (`components[i]`), for errors.
    pub fn component_key(&self, i: usize) -> &KeyPath {
        &self.nodes[i].key
    }

    /// Names of the output ports, `component.port`, in value order.
    pub fn port_names(&self) -> &[String] {
        &self.port_names
    }

    #[inline]
    fn due(&self, i: usize) -> bool {
        let n = &self.nodes[i];
        match n.schedule {
            Schedule::EveryStep => true,
            Schedule::Periodic(_) => n.next_due == self.k,
            // A component that answered its packets at this boundary
            // ([`Graph::respond`]) is done with it.
            Schedule::OnInput => {
                self.answered[i] != self.k
                    && n.gathers
                        .iter()
                        .any(|g| g.trigger && self.fresh[g.src_port] == self.k)
            }
        }
    }

    /// Computes component `i`'s outputs now (inputs already in place).
    fn compute(&mut self, i: usize) {
        self.compute_at(i, self.time());
    }

    /// Computes component `i`'s outputs at instant `at` of the step that
    /// ends now (inputs already in place).
    #[inline]
    pub(crate) fn compute_at(&mut self, i: usize, at: SimTime) {
        let now = self.time();
        let node = &mut self.nodes[i];
        let len = node.out_len();
        let mut cx = Ctx {
            k: self.k,
            now,
            at,
            step: self.step,
            solver: self.solver,
            ws: &mut self.ws,
        };
        node.component.output(
            &mut cx,
            &node.x,
            &Inputs {
                data: &node.inputs,
                offsets: &node.in_offsets,
            },
            &mut Outputs {
                data: &mut self.values[node.out_base..node.out_base + len],
                offsets: &node.out_offsets,
            },
        );
    }

    /// Gathers component `i`'s inputs, computes its outputs now and marks
    /// them new: what a stage of the order does for a due component, with
    /// the node and the time looked up once (a controller tick runs this
    /// on its chain from the plant's output to its next step).
    #[inline]
    fn serve(&mut self, i: usize) {
        let (k, now) = (self.k, self.time());
        let node = &mut self.nodes[i];
        node.gather(&self.values);
        let outputs = node.out_base..node.out_base + node.out_len();
        let mut cx = Ctx {
            k,
            now,
            at: now,
            step: self.step,
            solver: self.solver,
            ws: &mut self.ws,
        };
        node.component.output(
            &mut cx,
            &node.x,
            &Inputs {
                data: &node.inputs,
                offsets: &node.in_offsets,
            },
            &mut Outputs {
                data: &mut self.values[outputs],
                offsets: &node.out_offsets,
            },
        );
        let ports = node.port_base..node.port_base + node.decl.outputs.len();
        self.fresh[ports].fill(k);
        if let Schedule::Periodic(p) = node.schedule {
            node.next_due = k + p.period.get();
        }
    }

    /// Records that component `i` was evaluated at the current boundary.
    pub(crate) fn mark_fresh(&mut self, i: usize) {
        let n = &mut self.nodes[i];
        for p in 0..n.decl.outputs.len() {
            self.fresh[n.port_base + p] = self.k;
        }
        if let Schedule::Periodic(p) = n.schedule {
            n.next_due = self.k + p.period.get();
        }
    }

    /// Sets every periodic component's next boundary from the current one:
    /// the first instant at or after `k`, or after it when boundary `k` was
    /// already evaluated.
    pub(crate) fn reschedule(&mut self) {
        let from = self.k + u64::from(self.evaluated);
        for n in &mut self.nodes {
            if let Schedule::Periodic(p) = n.schedule {
                n.next_due = p.next_at_or_after(from);
            }
        }
    }

    /// Evaluates boundary `k` (once; a second call does nothing).
    ///
    /// # Errors
    /// [`GraphError::AlgebraicLoop`] when a loop's solve fails.
    pub fn evaluate(&mut self) -> Result<(), GraphError> {
        if self.evaluated {
            return Ok(());
        }
        self.evaluate_stages(false, None)
    }

    /// Evaluates the part of boundary `k` whose components `part` marks,
    /// in the evaluation order; `last`: the boundary is evaluated once
    /// this part is. A driver that delivers packets at the instant they are
    /// sent evaluates a boundary in parts around those deliveries (see
    /// [`Endpoint::evaluate_part`](super::Endpoint::evaluate_part)). An
    /// algebraic loop or a lowered run of components belongs to the part
    /// of its first member.
    ///
    /// # Errors
    /// As [`Graph::evaluate`].
    pub fn evaluate_part(&mut self, part: &[bool], last: bool) -> Result<(), GraphError> {
        if self.evaluated {
            return Ok(());
        }
        self.evaluate_stages(false, Some(part))?;
        self.evaluated = last;
        Ok(())
    }

    /// The components whose outputs order component `c` after them within
    /// a boundary: they drive an input of `c` that is direct feedthrough,
    /// or that triggers `c` when it is evaluated on new inputs.
    pub fn ordering_sources(&self, c: usize) -> Vec<usize> {
        let node = &self.nodes[c];
        let on_input = node.decl.timing == super::Timing::OnInput;
        let mut sources: Vec<usize> = node
            .gathers
            .iter()
            .filter(|g| {
                let port = node.in_offsets.partition_point(|&o| o <= g.dst) - 1;
                let input = &node.decl.inputs[port];
                input.direct || (input.trigger && on_input)
            })
            .filter_map(|g| {
                self.nodes.iter().position(|n| {
                    (n.port_base..n.port_base + n.decl.outputs.len()).contains(&g.src_port)
                })
            })
            .collect();
        sources.sort_unstable();
        sources.dedup();
        sources
    }

    /// Evaluates boundary `k` stage by stage; with `demanded`, leaves out
    /// the lazy outputs no component reads there ([`demand`](super::demand));
    /// with `part`, only the stages of the components it marks.
    pub(crate) fn evaluate_stages(
        &mut self,
        demanded: bool,
        part: Option<&[bool]>,
    ) -> Result<(), GraphError> {
        let mut stages = std::mem::take(&mut self.stages);
        let mut result = Ok(());
        for stage in &mut stages {
            if let Some(part) = part {
                let first = match stage {
                    Stage::One(i) => *i,
                    Stage::Loop(block) => block.members[0],
                    Stage::Lowered { lowered, .. } => self.lowered[lowered.start].0,
                };
                if !part[first] {
                    continue;
                }
            }
            match stage {
                Stage::One(i) => {
                    let i = *i;
                    if self.due(i) && !(demanded && self.unread(i)) {
                        self.serve(i);
                    }
                }
                Stage::Lowered { ops, fresh, .. } => {
                    self.program.run(
                        ops.clone(),
                        &mut self.values,
                        &mut self.nodes,
                        &mut self.fresh,
                        self.k,
                    );
                    for &port in &self.lowered_fresh[fresh.clone()] {
                        self.fresh[port] = self.k;
                    }
                }
                Stage::Loop(block) => {
                    if let Err(e) = self.solve_loop(block) {
                        result = Err(e);
                        break;
                    }
                }
            }
        }
        self.stages = stages;
        self.evaluated = result.is_ok();
        result
    }

    fn solve_loop(&mut self, block: &mut LoopBlock) -> Result<(), GraphError> {
        // Who is due: scheduled members, then members on new inputs until
        // nothing changes (a member's new value is new to the others).
        for (d, &m) in block.due.iter_mut().zip(&block.members) {
            *d = match self.nodes[m].schedule {
                Schedule::OnInput => false,
                _ => self.due(m),
            };
        }
        loop {
            let mut changed = false;
            for j in 0..block.members.len() {
                let m = block.members[j];
                if block.due[j] || self.nodes[m].schedule != Schedule::OnInput {
                    continue;
                }
                let fresh = self.nodes[m].gathers.iter().filter(|g| g.trigger).any(|g| {
                    self.fresh[g.src_port] == self.k
                        || block.members.iter().zip(&block.due).any(|(&c, &d)| {
                            let n = &self.nodes[c];
                            d && g.src_port >= n.port_base
                                && g.src_port < n.port_base + n.decl.outputs.len()
                        })
                });
                if fresh {
                    block.due[j] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        if !block.due.iter().any(|&d| d) {
            return Ok(());
        }
        for (j, &m) in block.members.iter().enumerate() {
            if block.due[j] {
                block.saved[j].clear();
                self.nodes[m].component.save(&mut block.saved[j]);
            }
        }
        for (z, &(_, _, src)) in block.newton.z.iter_mut().zip(&block.torn) {
            *z = self.values[src];
        }
        let LoopBlock {
            settings,
            members,
            torn,
            due,
            saved,
            newton,
            description,
        } = block;
        let graph = &mut *self;
        let eval = |z: &[f64], f: &mut [f64]| {
            for (j, &m) in members.iter().enumerate() {
                if !due[j] {
                    continue;
                }
                // A state the component saved itself always fits.
                let _ = graph.nodes[m].component.load(&mut saved[j].reader());
                let node = &mut graph.nodes[m];
                node.gather(&graph.values);
                for (&zi, &(tm, dst, _)) in z.iter().zip(torn.iter()) {
                    if tm == m {
                        node.inputs[dst] = zi;
                    }
                }
                graph.compute(m);
            }
            for (fi, &(_, _, src)) in f.iter_mut().zip(torn.iter()) {
                *fi = graph.values[src];
            }
        };
        match newton.solve(*settings, eval) {
            Ok(_) => {
                for (j, &m) in members.iter().enumerate() {
                    if due[j] {
                        self.mark_fresh(m);
                    }
                }
                Ok(())
            }
            Err(failure) => Err(GraphError::AlgebraicLoop {
                members: description.clone(),
                time: self.time(),
                reason: match failure {
                    Failure::NoConvergence { residual } => format!(
                        "Newton iteration did not converge in {} iteration{} (residual {residual:e}, tolerance {:e})",
                        settings.max_iterations,
                        if settings.max_iterations == 1 { "" } else { "s" },
                        settings.tolerance
                    ),
                    Failure::Singular => "the Newton Jacobian is singular: the loop has no unique solution".into(),
                    Failure::NotFinite => "the loop's values are not finite".into(),
                },
            }),
        }
    }
}

/// Replaces each stage of a component that can be lowered
/// ([`lower`](super::lower)) by its instructions, and each run of such
/// stages by one: evaluated at every step with [`Needs::OUTPUT_ONLY`], or
/// periodic with [`Needs::ADVANCE_WHEN_DUE`] and a sampled form; no guards,
/// no continuous states unless its form reads them, one output port, not
/// in an algebraic loop, every input element driven by a connection.
/// Returns the program, the lowered components with their ports, and the
/// ports of those due at every boundary.
fn lower_stages(
    nodes: &[Node],
    stages: &mut Vec<Stage>,
) -> (Program, Vec<(usize, usize)>, Vec<usize>) {
    let mut program = Program::default();
    let mut lowered = Vec::new();
    let mut lowered_fresh = Vec::new();
    let mut merged: Vec<Stage> = Vec::with_capacity(stages.len());
    for stage in stages.drain(..) {
        let Stage::One(i) = stage else {
            merged.push(stage);
            continue;
        };
        let Some(ops) = lower_one(&mut program, nodes, i) else {
            merged.push(stage);
            continue;
        };
        let fresh_start = lowered_fresh.len();
        lowered.push((i, nodes[i].port_base));
        if nodes[i].schedule == Schedule::EveryStep {
            lowered_fresh.push(nodes[i].port_base);
        }
        let (at, fresh_end) = (lowered.len() - 1, lowered_fresh.len());
        match merged.last_mut() {
            Some(Stage::Lowered {
                lowered: run,
                ops: run_ops,
                fresh,
            }) => {
                run.end = at + 1;
                run_ops.end = ops.end;
                fresh.end = fresh_end;
            }
            _ => merged.push(Stage::Lowered {
                lowered: at..at + 1,
                ops,
                fresh: fresh_start..fresh_end,
            }),
        }
    }
    *stages = merged;
    program.finish();
    (program, lowered, lowered_fresh)
}

/// Component `i`'s instructions, compiled into `program`, if it can be
/// lowered (see [`lower_stages`]).
fn lower_one(program: &mut Program, nodes: &[Node], i: usize) -> Option<std::ops::Range<usize>> {
    let n = &nodes[i];
    let sampled = match n.schedule {
        Schedule::EveryStep if n.component.needs() == Needs::OUTPUT_ONLY => None,
        Schedule::Periodic(p)
            if matches!(
                n.component.needs(),
                Needs::ADVANCE_WHEN_DUE | Needs::OUTPUT_ONLY
            ) =>
        {
            Some(p.period.get())
        }
        _ => return None,
    };
    if n.guards.is_some() || n.decl.outputs.len() != 1 {
        return None;
    }
    let form = n.component.lower()?;
    let mut src = vec![usize::MAX; n.inputs.len()];
    for g in &n.gathers {
        for e in 0..g.len {
            src[g.dst + e] = g.src + e;
        }
    }
    if src.contains(&usize::MAX) {
        return None;
    }
    let out = n.out_base..n.out_base + n.out_len();
    match sampled {
        // A periodic copy keeps nothing between its samples.
        Some(period) if n.x.is_empty() && n.component.needs() == Needs::OUTPUT_ONLY => {
            program.compile_sample(&form, (i, n.port_base, period), &src, out)
        }
        Some(period) if n.x.is_empty() => {
            program.compile_sampled(&form, (i, n.port_base, period), &src, out)
        }
        Some(_) => None,
        None => program.compile(&form, (i, n.x.len()), &src, &n.in_offsets, out),
    }
}

/// A component seen by the event locator: its inputs arrive as the flat
/// slice `u`, cut into ports by `offsets`.
struct Hybrid<'a> {
    component: &'a dyn Component,
    offsets: &'a [usize],
}

impl crate::event::Hybrid for Hybrid<'_> {
    #[inline]
    fn derivative(&self, t: f64, x: &[f64], u: &[f64], dx: &mut [f64]) {
        let u = Inputs {
            data: u,
            offsets: self.offsets,
        };
        self.component.derivative(t, x, &u, dx);
    }
    fn guards(&self, t: f64, x: &[f64], u: &[f64], g: &mut [f64]) {
        let u = Inputs {
            data: u,
            offsets: self.offsets,
        };
        self.component.guards(t, x, &u, g);
    }
    fn reset(&self, t: f64, x: &mut [f64], u: &[f64], guard: usize) {
        let u = Inputs {
            data: u,
            offsets: self.offsets,
        };
        self.component.reset(t, x, &u, guard);
    }
    fn settle(&self, t: f64, x: &mut [f64], u: &[f64], guard: usize) -> bool {
        let u = Inputs {
            data: u,
            offsets: self.offsets,
        };
        self.component.settle(t, x, &u, guard)
    }
}

impl Graph {
    /// Runs from the current boundary to `k1`: each boundary `k < k1` is
    /// evaluated, shown to `observer` where it [`observes`](GraphObserver::observes)
    /// it, and integrated. Boundary `k1` is not evaluated (it belongs to the
    /// next call). Where the observer does not read a boundary, outputs no
    /// component reads there may be left out ([`demand`](super::demand));
    /// the last boundary is evaluated in full, so the graph is left as if
    /// every boundary had been.
    ///
    /// # Errors
    /// [`GraphError`]; `Backwards` and `TimeOverflow` change nothing, the
    /// others stop at the boundary they name (a lazy output then holds its
    /// value of the last boundary that read it).
    pub fn run_to<O: GraphObserver + ?Sized>(
        &mut self,
        k1: u64,
        observer: &mut O,
    ) -> Result<(), GraphError> {
        match advance::check_target(self.step, self.k, k1) {
            Ok(()) => {}
            Err(BadTarget::Backwards) => {
                return Err(GraphError::Backwards {
                    from: self.k,
                    to: k1,
                })
            }
            Err(BadTarget::TimeOverflow) => return Err(GraphError::TimeOverflow { to: k1 }),
        }
        // The first boundary (the driver may have written inlets there) and
        // the last are evaluated in full; `busy` is found at the second.
        let (first, mut busy) = (self.k, 0);
        while self.k < k1 {
            let observed = observer.observes(self.k);
            if observed || self.k == first || self.k + 1 == k1 {
                self.evaluate()?;
            } else if self.k < busy && self.demand.plain_steps {
                // Quiet: nothing is due, nothing is read, up to `busy`
                // (the last boundary is evaluated in full).
                self.run_quiet(busy.min(k1 - 1), &*observer)?;
                continue;
            } else if self.k < busy {
                self.evaluated = true;
            } else {
                self.evaluate_demanded(&mut busy)?;
            }
            if observed {
                observer
                    .observe(self)
                    .map_err(|source| GraphError::Observer {
                        step: self.k,
                        source,
                    })?;
            }
            self.step_evaluated()?;
        }
        Ok(())
    }

    /// Integrates step `k` (evaluating boundary `k` first if that was not
    /// done) and moves to boundary `k + 1`.
    ///
    /// # Errors
    /// As [`run_to`](Self::run_to).
    pub fn integrate_step(&mut self) -> Result<(), GraphError> {
        self.evaluate()?;
        self.step_evaluated()
    }

    /// [`integrate_step`](Self::integrate_step) once boundary `k` is
    /// evaluated ([`run_to`](Self::run_to) has just done it).
    fn step_evaluated(&mut self) -> Result<(), GraphError> {
        debug_assert!(self.evaluated);
        if self.demand.plain_steps {
            return self.step_plain::<true>();
        }
        let k = self.k;
        let now = self.time();
        let (t, h) = advance::interval(self.step, k);
        let mut zeno = None;
        // Whether every continuous state is finite: one test per component
        // here, the first non-finite state found below only when one is not.
        let mut finite = true;
        for &(i, when) in &self.stepping {
            let advance = match when {
                AdvanceWhen::Never => false,
                AdvanceWhen::Always => true,
                AdvanceWhen::Due(port) => self.fresh[port] == k,
            };
            if !advance && self.nodes[i].x.is_empty() {
                continue;
            }
            let node = &mut self.nodes[i];
            node.gather(&self.values);
            let u = Inputs {
                data: &node.inputs,
                offsets: &node.in_offsets,
            };
            if !node.x.is_empty() {
                let component = &*node.component;
                match &mut node.guards {
                    Some(guards) => {
                        let hybrid = Hybrid {
                            component,
                            offsets: &node.in_offsets,
                        };
                        match guards.step(
                            &hybrid,
                            self.solver,
                            &mut self.ws,
                            t,
                            h,
                            &mut node.x,
                            &node.inputs,
                        ) {
                            Ok(n) => node.resets += n,
                            Err(e) => {
                                zeno.get_or_insert((node.name.clone(), e));
                            }
                        }
                    }
                    None => component.integrate(self.solver, &mut self.ws, t, h, &mut node.x, &u),
                }
                finite &= advance::all_finite(&node.x);
            }
            if advance {
                let mut cx = Ctx {
                    k,
                    now,
                    at: now,
                    step: self.step,
                    solver: self.solver,
                    ws: &mut self.ws,
                };
                node.component.advance(&mut cx, &u);
            }
        }
        self.program.advance(k, &self.values, &self.fresh);
        self.k = k + 1;
        self.evaluated = false;
        if let Some((component, e)) = zeno {
            return Err(GraphError::Zeno {
                component,
                guard: e.guard,
                time: e.time,
                step: k,
            });
        }
        self.after_step(finite)
    }

    /// [`step_evaluated`](Self::step_evaluated) where no stepping component
    /// has guards ([`Demand::plain_steps`](super::demand::Demand)): the
    /// same calls in the same order without the event locator's path.
    /// `GATHER = false` keeps the inputs gathered for the previous step,
    /// for a stretch of quiet boundaries, where no output changes
    /// ([`run_quiet`](Self::run_quiet)).
    #[inline]
    pub(crate) fn step_plain<const GATHER: bool>(&mut self) -> Result<(), GraphError> {
        let k = self.k;
        let now = self.time();
        let (t, h) = advance::interval(self.step, k);
        let (solver, step) = (self.solver, self.step);
        let mut finite = true;
        for &(i, when) in &self.stepping {
            let advance = match when {
                AdvanceWhen::Never => false,
                AdvanceWhen::Always => true,
                AdvanceWhen::Due(port) => self.fresh[port] == k,
            };
            let node = &mut self.nodes[i];
            if GATHER && (advance || !node.x.is_empty()) {
                node.gather(&self.values);
            }
            let u = Inputs {
                data: &node.inputs,
                offsets: &node.in_offsets,
            };
            if !node.x.is_empty() {
                node.component
                    .integrate(solver, &mut self.ws, t, h, &mut node.x, &u);
                finite &= advance::all_finite(&node.x);
            }
            if advance {
                let mut cx = Ctx {
                    k,
                    now,
                    at: now,
                    step,
                    solver,
                    ws: &mut self.ws,
                };
                node.component.advance(&mut cx, &u);
            }
        }
        // The lowered sampled blocks, as in `step_evaluated`.
        self.program.advance(k, &self.values, &self.fresh);
        self.k = k + 1;
        self.evaluated = false;
        self.after_step(finite)
    }

    /// The end of a step, at the new boundary: a component's fault, then
    /// (unless `finite`) a non-finite continuous state stops the run.
    #[inline]
    pub(crate) fn after_step(&self, finite: bool) -> Result<(), GraphError> {
        // Faults before non-finite states, as in a System's step.
        for &i in &self.faulting {
            let node = &self.nodes[i];
            if let Some(message) = node.component.fault() {
                return Err(GraphError::Component {
                    component: node.name.clone(),
                    message,
                    time: self.time(),
                    step: self.k,
                });
            }
        }
        if finite {
            return Ok(());
        }
        // Every component with continuous states is stepping.
        for &(i, _) in &self.stepping {
            let node = &self.nodes[i];
            if let Some(i) = node.x.iter().position(|v| !v.is_finite()) {
                return Err(GraphError::NonFinite {
                    component: node.name.clone(),
                    state: node.decl.states[i].clone(),
                    value: node.x[i],
                    time: self.time(),
                    step: self.k,
                });
            }
        }
        Ok(())
    }
}
