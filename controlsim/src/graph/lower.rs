//! Stateless blocks evaluated as a flat program (issue 13's `blocks_ratio`).
//!
//! A kind whose output at a boundary is a fixed arithmetic form of its
//! inputs (a constant, a gain, a sum with signs) may describe that form
//! ([`Component::lower`](super::Component::lower)). The graph then compiles
//! it, when the graph is built, into per-element instructions that read
//! their operands where the driving outputs hold them and write the
//! component's outputs in place: no inputs gathered, no `Ctx`, no dynamic
//! call. The instructions do the arithmetic of the kind's `output` in the
//! same order, so the bits are the same (tested against the kind's own
//! `output` in `tests`).
//!
//! A linear block (transfer function, state space, zero-pole-gain) lowers
//! its output `y = C x + D u` the same way, reading its continuous states
//! where the engine holds them ([`Lowered::StateSpace`]).
//!
//! Only components evaluated at every step, with no continuous states but
//! those of [`Lowered::StateSpace`], no guards,
//! [`Needs::OUTPUT_ONLY`](super::Needs::OUTPUT_ONLY), one output port and
//! outside an algebraic loop are lowered; everything else is served as
//! before. Consecutive lowered components of the evaluation order run as
//! one stretch of instructions (one `Program::run`).
//!
//! A sampled block (unit delay, zero-order hold, discrete integrator:
//! [`Lowered::Sampled`]) is lowered too, so that a diagram of library
//! blocks is one program run per boundary with no dynamic call: its
//! instructions start with a due check (the component's next due boundary,
//! as the engine keeps it) that skips them between samples, and its
//! discrete state lives in the program, updated after each step whose
//! starting boundary it was sampled at ([`Program::advance`]), as the
//! kind's `advance` does. The graph's snapshot, restore and
//! `discrete_states` read that state in the kind's own layout
//! ([`Program::save`]).

use std::ops::Range;

use super::component::{SavedState, StateMismatch};
use super::engine::Node;

/// The arithmetic form of a stateless kind's `output`, element by element;
/// `u` is the component's inputs (ports one after the other), `y` its one
/// output port.
#[derive(Clone, Debug, PartialEq)]
pub enum Lowered {
    /// `y = values` (no inputs).
    Constant(Vec<f64>),
    /// `y[e] = k * u[e]`.
    Scale(f64),
    /// `y[e] = ((0.0 ± u_0[e]) ± u_1[e]) ± ...`, left to right over the
    /// input ports, `-` where `negative[p]`; every port as wide as `y`.
    SignedSum { negative: Vec<bool> },
    /// `y[i] = ((0.0 + k[i][0] * u[0]) + k[i][1] * u[1]) + ...`, `k` row
    /// major with `cols` columns.
    Matrix { cols: usize, k: Vec<f64> },
    /// `y[i] = (((0.0 + c[i][0] * x[0]) + c[i][1] * x[1]) + ...) +
    /// d[i][0] * u[0] + ...`: the output of a linear block from its
    /// continuous states `x` (`c` row major, one column per state) and its
    /// inputs (`d` row major, one column per input element).
    StateSpace { c: Vec<f64>, d: Vec<f64> },
    /// A periodic kind with [`Needs::ADVANCE_WHEN_DUE`](super::Needs::ADVANCE_WHEN_DUE)
    /// and a discrete state `x` (its value when the graph is built): at a
    /// boundary it is due, `y = x` (or `y = u` for a hold); over a step
    /// that started at such a boundary, `x` moves as `law` says, from the
    /// input as it stands after the whole boundary. Its `save` must write
    /// the reals of `x`, then one word: 1 when it was sampled at the
    /// current boundary and not yet advanced, else 0.
    Sampled { law: SampledLaw, x: Vec<f64> },
    /// A periodic kind with [`Needs::OUTPUT_ONLY`](super::Needs::OUTPUT_ONLY)
    /// whose output at a boundary it is due is its input, `y = u` (an
    /// exact sensor's sample), and which keeps no state the program must
    /// hold: its `save` and `load` stay its own.
    Sample,
}

/// How a [`Lowered::Sampled`] block's output and state move.
#[derive(Clone, Debug, PartialEq)]
pub enum SampledLaw {
    /// `y = x`; then `x = u`.
    Delay,
    /// `y = u`; no state.
    Hold,
    /// `y = x`; then `x = clamp(x + k u, lower, upper)`, element by element.
    Integrator { k: f64, lower: f64, upper: f64 },
}

/// A lowered sampled block: its component and output port, and its
/// state's place in [`Program::state`].
#[derive(Clone, Debug)]
struct Sampled {
    node: usize,
    port: usize,
    x: Range<usize>,
}

/// One element of a sampled block's `advance`, when its output port
/// `port` is new at the step's start: `state[slot]` moves from
/// `values[src]` as `law` says (never [`SampledLaw::Hold`]).
#[derive(Clone, Debug)]
struct Move {
    port: usize,
    slot: usize,
    src: usize,
    law: SampledLaw,
}

/// One instruction: an output element is written directly (`Set`,
/// `Scale`) or summed in an accumulator `s`, one term per instruction, so
/// a sum costs one dispatch per term and no second table. A sum's first
/// term starts the accumulator (`Start*`: `s = 0.0 + term`, the same bits
/// as `Zero` then the term) and its last term stores it (`*Store`), so a
/// sum of `n >= 2` terms is `n` dispatches, not `n + 2`
/// ([`Program::sum`]).
#[derive(Clone, Copy, Debug)]
enum Op {
    /// `values[dst] = value`.
    Set { dst: usize, value: f64 },
    /// `values[dst] = k * values[src]`.
    Scale { dst: usize, src: usize, k: f64 },
    /// `s = 0.0`.
    Zero,
    /// `s = s + values[src]`.
    Add { src: usize },
    /// `s = s - values[src]`.
    Sub { src: usize },
    /// `s = s + k * values[src]`.
    MulAdd { src: usize, k: f64 },
    /// `s = s + k * x[state]`, `x` component `node`'s continuous states.
    StateMulAdd { node: usize, state: usize, k: f64 },
    /// `values[dst] = s`.
    Store { dst: usize },
    /// `s = 0.0 + values[src]`.
    Start { src: usize },
    /// `s = 0.0 - values[src]`.
    StartSub { src: usize },
    /// `s = 0.0 + k * values[src]`.
    StartMul { src: usize, k: f64 },
    /// `s = 0.0 + k * x[state]`, as [`Op::StateMulAdd`].
    StartState { node: usize, state: usize, k: f64 },
    /// `values[dst] = s + values[src]`.
    AddStore { src: usize, dst: usize },
    /// `values[dst] = s - values[src]`.
    SubStore { src: usize, dst: usize },
    /// `values[dst] = s + k * values[src]`.
    MulAddStore { src: usize, k: f64, dst: usize },
    /// `values[dst] = (0.0 + values[a]) + values[b]`: a sum of two.
    AddAdd { dst: usize, a: usize, b: usize },
    /// `values[dst] = (0.0 + values[a]) - values[b]`: a difference.
    AddSub { dst: usize, a: usize, b: usize },
    /// A sampled block's due check: unless component `node` is due now,
    /// skip the next `skip` instructions; else mark output port `port`
    /// new and move its next due boundary `period` steps on (as the
    /// engine's `mark_fresh` does).
    Due {
        node: u32,
        port: u32,
        skip: u32,
        period: u64,
    },
    /// `values[dst] = state[slot]`.
    Load { dst: usize, slot: usize },
    /// A one-element delay or integrator: [`Op::Due`] (nothing to skip),
    /// then `values[dst] = state[slot]` when due.
    DueLoad {
        node: u32,
        port: u32,
        dst: u32,
        slot: u32,
        period: u64,
    },
    /// A one-element hold: [`Op::Due`], then `values[dst] = values[src]`
    /// when due.
    DueCopy {
        node: u32,
        port: u32,
        dst: u32,
        src: u32,
        period: u64,
    },
    /// `values[dst] = values[src]`.
    Copy { dst: usize, src: usize },
}

/// One term of a lowered sum, in [`Program::sum`].
#[derive(Clone, Copy)]
enum Term {
    Add(usize),
    Sub(usize),
    Mul(usize, f64),
    State(usize, usize, f64),
}

/// Every lowered component's instructions, in evaluation order, and the
/// lowered sampled blocks' discrete states.
#[derive(Clone, Debug, Default)]
pub(crate) struct Program {
    ops: Vec<Op>,
    /// The sampled blocks' discrete states, one after the other.
    state: Vec<f64>,
    sampled: Vec<Sampled>,
    /// The sampled blocks' `advance`, element by element.
    moves: Vec<Move>,
    /// The last boundary a sampled block was due at, as `run` saw it, so
    /// that [`advance`](Self::advance) returns at once over the steps
    /// between samples; `None` after a [`load`](Self::load) (unknown:
    /// every block's freshness is checked).
    sampled_at: Option<u64>,
    /// How long `values`, `nodes` and `fresh` must be for every index of
    /// `ops` to fall inside ([`finish`](Self::finish)); `run` checks
    /// these once, then reads and writes without a check per access.
    lens: Lens,
}

/// Lengths the program's indices need ([`Program::finish`]).
#[derive(Clone, Copy, Debug, Default)]
struct Lens {
    values: usize,
    nodes: usize,
    fresh: usize,
}

impl Program {
    /// Emits `values[dst] = ((0.0 + terms[0]) + terms[1]) + ...` (a term
    /// subtracted for [`Term::Sub`]): the first term starts the
    /// accumulator and the last stores it where they can, the same
    /// arithmetic in the same order as `Zero`, one op per term, `Store`.
    fn sum(&mut self, dst: usize, terms: &[Term]) {
        let Some((first, rest)) = terms.split_first() else {
            self.ops.extend([Op::Zero, Op::Store { dst }]);
            return;
        };
        match *terms {
            [Term::Add(a), Term::Add(b)] => return self.ops.push(Op::AddAdd { dst, a, b }),
            [Term::Add(a), Term::Sub(b)] => return self.ops.push(Op::AddSub { dst, a, b }),
            _ => {}
        }
        self.ops.push(match *first {
            Term::Add(src) => Op::Start { src },
            Term::Sub(src) => Op::StartSub { src },
            Term::Mul(src, k) => Op::StartMul { src, k },
            Term::State(node, state, k) => Op::StartState { node, state, k },
        });
        let (last, middle) = match rest.split_last() {
            Some((last, middle)) => (Some(*last), middle),
            None => (None, rest),
        };
        for term in middle {
            self.ops.push(match *term {
                Term::Add(src) => Op::Add { src },
                Term::Sub(src) => Op::Sub { src },
                Term::Mul(src, k) => Op::MulAdd { src, k },
                Term::State(node, state, k) => Op::StateMulAdd { node, state, k },
            });
        }
        match last {
            None => self.ops.push(Op::Store { dst }),
            Some(Term::Add(src)) => self.ops.push(Op::AddStore { src, dst }),
            Some(Term::Sub(src)) => self.ops.push(Op::SubStore { src, dst }),
            Some(Term::Mul(src, k)) => self.ops.push(Op::MulAddStore { src, k, dst }),
            Some(Term::State(node, state, k)) => self
                .ops
                .extend([Op::StateMulAdd { node, state, k }, Op::Store { dst }]),
        }
    }

    /// Compiles `form` for component `node` with `states` continuous
    /// states, whose input element `j` is `values[src[j]]` and whose output
    /// is `values[out]`; returns its instructions' range, or `None` when the
    /// shapes do not fit the form (the component is then served through
    /// `output`).
    pub(crate) fn compile(
        &mut self,
        form: &Lowered,
        (node, states): (usize, usize),
        src: &[usize],
        in_offsets: &[usize],
        out: Range<usize>,
    ) -> Option<Range<usize>> {
        let start = self.ops.len();
        let width = out.len();
        let stateless = states == 0 || matches!(form, Lowered::StateSpace { .. });
        if !stateless {
            return None;
        }
        match form {
            Lowered::Constant(values) => {
                if values.len() != width || !src.is_empty() {
                    return None;
                }
                for (dst, &value) in out.zip(values) {
                    self.ops.push(Op::Set { dst, value });
                }
            }
            Lowered::Scale(k) => {
                if src.len() != width {
                    return None;
                }
                for (dst, &s) in out.zip(src) {
                    self.ops.push(Op::Scale { dst, src: s, k: *k });
                }
            }
            Lowered::SignedSum { negative } => {
                let ports = in_offsets.len().checked_sub(1)?;
                if ports != negative.len()
                    || (0..ports).any(|p| in_offsets[p + 1] - in_offsets[p] != width)
                {
                    return None;
                }
                let mut terms = Vec::with_capacity(ports);
                for (e, dst) in out.enumerate() {
                    terms.clear();
                    terms.extend(negative.iter().enumerate().map(|(p, &neg)| {
                        let src = src[in_offsets[p] + e];
                        if neg {
                            Term::Sub(src)
                        } else {
                            Term::Add(src)
                        }
                    }));
                    self.sum(dst, &terms);
                }
            }
            Lowered::Matrix { cols, k } => {
                if src.len() != *cols || k.len() != width * cols {
                    return None;
                }
                let mut terms = Vec::with_capacity(*cols);
                for (i, dst) in out.enumerate() {
                    terms.clear();
                    terms.extend(
                        src.iter()
                            .enumerate()
                            .map(|(j, &s)| Term::Mul(s, k[i * cols + j])),
                    );
                    self.sum(dst, &terms);
                }
            }
            Lowered::Sampled { .. } | Lowered::Sample => return None,
            Lowered::StateSpace { c, d } => {
                if c.len() != width * states || d.len() != width * src.len() {
                    return None;
                }
                let mut terms = Vec::with_capacity(states + src.len());
                for (i, dst) in out.enumerate() {
                    terms.clear();
                    terms.extend(
                        (0..states).map(|state| Term::State(node, state, c[i * states + state])),
                    );
                    terms.extend(
                        src.iter()
                            .enumerate()
                            .map(|(j, &s)| Term::Mul(s, d[i * src.len() + j])),
                    );
                    self.sum(dst, &terms);
                }
            }
        }
        Some(start..self.ops.len())
    }

    /// Compiles sampled block `node` (output port `port`, due every
    /// `period` steps) of `form`, whose input element `j` is
    /// `values[src[j]]` and whose output is `values[out]`; `None` when
    /// `form` is not [`Lowered::Sampled`] or the shapes do not fit.
    pub(crate) fn compile_sampled(
        &mut self,
        form: &Lowered,
        (node, port, period): (usize, usize, u64),
        src: &[usize],
        out: Range<usize>,
    ) -> Option<Range<usize>> {
        let Lowered::Sampled { law, x } = form else {
            return None;
        };
        let width = out.len();
        let states = if *law == SampledLaw::Hold { 0 } else { width };
        if src.len() != width || x.len() != states {
            return None;
        }
        let start = self.ops.len();
        let slots = self.state.len()..self.state.len() + states;
        let (node32, port32) = (u32::try_from(node).ok()?, u32::try_from(port).ok()?);
        if width == 1 {
            let dst = u32::try_from(out.start).ok()?;
            self.ops.push(match law {
                SampledLaw::Hold => Op::DueCopy {
                    node: node32,
                    port: port32,
                    dst,
                    src: u32::try_from(src[0]).ok()?,
                    period,
                },
                _ => Op::DueLoad {
                    node: node32,
                    port: port32,
                    dst,
                    slot: u32::try_from(slots.start).ok()?,
                    period,
                },
            });
        } else {
            self.ops.push(Op::Due {
                node: node32,
                port: port32,
                skip: u32::try_from(width).ok()?,
                period,
            });
            for (e, dst) in out.enumerate() {
                self.ops.push(match law {
                    SampledLaw::Hold => Op::Copy { dst, src: src[e] },
                    _ => Op::Load {
                        dst,
                        slot: slots.start + e,
                    },
                });
            }
        }
        self.state.extend_from_slice(x);
        if *law != SampledLaw::Hold {
            self.moves
                .extend(slots.clone().zip(src).map(|(slot, &src)| Move {
                    port,
                    slot,
                    src,
                    law: law.clone(),
                }));
        }
        self.sampled.push(Sampled {
            node,
            port,
            x: slots,
        });
        Some(start..self.ops.len())
    }

    /// Compiles [`Lowered::Sample`] component `node` (output port `port`,
    /// due every `period` steps), whose input element `j` is
    /// `values[src[j]]` and whose output is `values[out]`: its due check,
    /// then a copy per element; `None` for another form or shape. Unlike
    /// [`compile_sampled`](Self::compile_sampled) it keeps no state and
    /// no `advance`.
    pub(crate) fn compile_sample(
        &mut self,
        form: &Lowered,
        (node, port, period): (usize, usize, u64),
        src: &[usize],
        out: Range<usize>,
    ) -> Option<Range<usize>> {
        if *form != Lowered::Sample || src.len() != out.len() {
            return None;
        }
        let start = self.ops.len();
        self.ops.push(Op::Due {
            node: u32::try_from(node).ok()?,
            port: u32::try_from(port).ok()?,
            skip: u32::try_from(out.len()).ok()?,
            period,
        });
        for (dst, &src) in out.zip(src) {
            self.ops.push(Op::Copy { dst, src });
        }
        Some(start..self.ops.len())
    }

    /// Records the lengths the instructions' indices need, once every
    /// component is compiled; `run` relies on them.
    pub(crate) fn finish(&mut self) {
        let mut lens = Lens::default();
        let mut value = |i: usize| lens.values = lens.values.max(i + 1);
        for op in &self.ops {
            match *op {
                Op::Set { dst, .. } | Op::Store { dst } => value(dst),
                Op::Scale { dst, src, .. } | Op::Copy { dst, src } => {
                    value(dst);
                    value(src);
                }
                Op::Add { src }
                | Op::Sub { src }
                | Op::MulAdd { src, .. }
                | Op::Start { src }
                | Op::StartSub { src }
                | Op::StartMul { src, .. } => value(src),
                Op::AddStore { src, dst }
                | Op::SubStore { src, dst }
                | Op::MulAddStore { src, dst, .. } => {
                    value(dst);
                    value(src);
                }
                Op::AddAdd { dst, a, b } | Op::AddSub { dst, a, b } => {
                    value(dst);
                    value(a);
                    value(b);
                }
                Op::DueCopy { dst, src, .. } => {
                    value(dst as usize);
                    value(src as usize);
                }
                Op::DueLoad { dst, slot, .. } => {
                    value(dst as usize);
                    assert!(
                        (slot as usize) < self.state.len(),
                        "a sampled state slot past the end"
                    );
                }
                Op::Load { dst, slot } => {
                    value(dst);
                    assert!(slot < self.state.len(), "a sampled state slot past the end");
                }
                Op::Zero | Op::StateMulAdd { .. } | Op::StartState { .. } | Op::Due { .. } => {}
            }
        }
        for op in &self.ops {
            if let Op::Due { node, port, .. }
            | Op::DueLoad { node, port, .. }
            | Op::DueCopy { node, port, .. } = *op
            {
                lens.nodes = lens.nodes.max(node as usize + 1);
                lens.fresh = lens.fresh.max(port as usize + 1);
            }
        }
        self.lens = lens;
    }

    /// Runs instructions `range` on the graph's values (`nodes` for their
    /// continuous states and next due boundaries, `fresh` marked for
    /// sampled blocks that are due at boundary `k`).
    ///
    /// # Panics
    /// When `values`, `nodes` or `fresh` are shorter than the graph the
    /// program was compiled for (never, for that graph: their lengths are
    /// fixed at build).
    #[inline]
    pub(crate) fn run(
        &mut self,
        range: Range<usize>,
        values: &mut [f64],
        nodes: &mut [Node],
        fresh: &mut [u64],
        k: u64,
    ) {
        // The one check that makes every access below fall inside.
        assert!(
            values.len() >= self.lens.values
                && nodes.len() >= self.lens.nodes
                && fresh.len() >= self.lens.fresh,
            "a program run on a graph it was not compiled for"
        );
        let ops = &self.ops[range];
        let mut s = 0.0;
        let mut pc = 0;
        let mut sampled = false;
        // SAFETY (every `get_unchecked` below): each index of a value, a
        // node or a fresh mark in `ops` is below the length `finish`
        // recorded in `lens`, checked above; a state slot is below
        // `state.len()` (checked by `finish`, and `state` never changes
        // length after it).
        let v = |i: usize, values: &[f64]| unsafe { *values.get_unchecked(i) };
        let set =
            |i: usize, x: f64, values: &mut [f64]| unsafe { *values.get_unchecked_mut(i) = x };
        // Whether sampled block `node` is due at `k`; if so, marks its
        // port new and moves its next due boundary on (as `mark_fresh`).
        let due = |node: u32, port: u32, period: u64, nodes: &mut [Node], fresh: &mut [u64]| {
            let n = unsafe { nodes.get_unchecked_mut(node as usize) };
            if n.next_due != k {
                return false;
            }
            n.next_due = k + period;
            unsafe { *fresh.get_unchecked_mut(port as usize) = k };
            true
        };
        while let Some(op) = ops.get(pc) {
            match *op {
                Op::Set { dst, value } => set(dst, value, values),
                Op::Scale { dst, src, k } => set(dst, k * v(src, values), values),
                Op::Zero => s = 0.0,
                Op::Add { src } => s += v(src, values),
                Op::Sub { src } => s -= v(src, values),
                Op::MulAdd { src, k } => s += k * v(src, values),
                Op::StateMulAdd { node, state, k } => s += k * nodes[node].x[state],
                Op::Store { dst } => set(dst, s, values),
                Op::Start { src } => s = 0.0 + v(src, values),
                Op::StartSub { src } => s = 0.0 - v(src, values),
                Op::StartMul { src, k } => s = 0.0 + k * v(src, values),
                Op::StartState { node, state, k } => s = 0.0 + k * nodes[node].x[state],
                Op::AddStore { src, dst } => set(dst, s + v(src, values), values),
                Op::SubStore { src, dst } => set(dst, s - v(src, values), values),
                Op::MulAddStore { src, k, dst } => set(dst, s + k * v(src, values), values),
                Op::AddAdd { dst, a, b } => set(dst, (0.0 + v(a, values)) + v(b, values), values),
                Op::AddSub { dst, a, b } => set(dst, (0.0 + v(a, values)) - v(b, values), values),
                Op::Due {
                    node,
                    port,
                    skip,
                    period,
                } => {
                    if due(node, port, period, nodes, fresh) {
                        sampled = true;
                    } else {
                        pc += skip as usize;
                    }
                }
                Op::DueLoad {
                    node,
                    port,
                    dst,
                    slot,
                    period,
                } => {
                    if due(node, port, period, nodes, fresh) {
                        sampled = true;
                        let x = unsafe { *self.state.get_unchecked(slot as usize) };
                        set(dst as usize, x, values);
                    }
                }
                Op::DueCopy {
                    node,
                    port,
                    dst,
                    src,
                    period,
                } => {
                    if due(node, port, period, nodes, fresh) {
                        sampled = true;
                        set(dst as usize, v(src as usize, values), values);
                    }
                }
                Op::Load { dst, slot } => {
                    set(dst, unsafe { *self.state.get_unchecked(slot) }, values);
                }
                Op::Copy { dst, src } => set(dst, v(src, values), values),
            }
            pc += 1;
        }
        if sampled {
            self.sampled_at = Some(k);
        }
    }

    /// Whether component `node` is a lowered sampled block (the program
    /// does its `output` and `advance`).
    pub(crate) fn is_sampled(&self, node: usize) -> bool {
        self.sampled.iter().any(|s| s.node == node)
    }

    /// The sampled blocks' `advance` over step `k`: the state of each one
    /// sampled at boundary `k` (its port new there) moves from its input
    /// as `values` hold it after the whole boundary.
    #[inline]
    pub(crate) fn advance(&mut self, k: u64, values: &[f64], fresh: &[u64]) {
        if self.sampled_at.is_some_and(|at| at != k) {
            return;
        }
        for m in &self.moves {
            if fresh[m.port] != k {
                continue;
            }
            let (x, u) = (&mut self.state[m.slot], values[m.src]);
            *x = match m.law {
                SampledLaw::Delay => u,
                SampledLaw::Hold => *x,
                SampledLaw::Integrator { k, lower, upper } => (*x + k * u).clamp(lower, upper),
            };
        }
    }

    fn find(&self, node: usize) -> Option<&Sampled> {
        self.sampled.iter().find(|s| s.node == node)
    }

    /// Lowered sampled block `node`'s discrete state, if it is one.
    pub(crate) fn discrete_states(&self, node: usize) -> Option<&[f64]> {
        self.find(node).map(|s| &self.state[s.x.clone()])
    }

    /// Writes lowered sampled block `node`'s internal state as its kind's
    /// `save` does ([`Lowered::Sampled`]; sampled = its port new at the
    /// current boundary `k`, as after its `output` and before its
    /// `advance`); `false` when it is not one.
    pub(crate) fn save(&self, node: usize, k: u64, fresh: &[u64], into: &mut SavedState) -> bool {
        let Some(s) = self.find(node) else {
            return false;
        };
        into.reals.extend_from_slice(&self.state[s.x.clone()]);
        into.words.push(u64::from(fresh[s.port] == k));
        true
    }

    /// Puts back lowered sampled block `node`'s state from what
    /// [`save`](Self::save) wrote (nothing when it is not one; the
    /// sampled word is the port's freshness, restored with the graph).
    ///
    /// # Errors
    /// [`StateMismatch`] for a state of another shape.
    pub(crate) fn load(&mut self, node: usize, from: &SavedState) -> Result<(), StateMismatch> {
        // The restored freshness decides which block is pending.
        self.sampled_at = None;
        let Some(i) = self.sampled.iter().position(|s| s.node == node) else {
            return Ok(());
        };
        let x = self.sampled[i].x.clone();
        let mut reader = from.reader();
        reader.reals(&mut self.state[x])?;
        reader.word()?;
        reader.finish()
    }
}

/// Whether the lowered components may all be left out at a boundary where
/// no periodic component is due (a quiet boundary of [`Graph::run_to`],
/// [`demand`](super::demand)), for the stages around them allow it: each
/// lowered component evaluated at every step either
/// - cannot change there: it has no continuous states and every input is
///   driven by a periodic or on-input component or by another such
///   lowered component (a lowered form reads neither time nor anything
///   else), so it holds the value its last evaluation gave; or
/// - changes at every step (continuous states, or reading such a
///   component) but is read only when its readers are due: by periodic
///   components that gather their inputs only then, or by lowered
///   components read so in turn. Nobody reads it at a quiet boundary.
///
/// `gathers_every_step(c)`: whether component `c` reads its inputs at
/// every step (continuous states, or an `advance` not only when due).
///
/// [`Graph::run_to`]: super::Graph::run_to
pub(crate) fn lowered_can_rest(
    nodes: &[Node],
    lowered: &[(usize, usize)],
    gathers_every_step: &dyn Fn(usize) -> bool,
) -> bool {
    use super::engine::Schedule;
    let n = nodes.len();
    let mut is_lowered = vec![false; n];
    for &(i, _) in lowered {
        is_lowered[i] = true;
    }
    let owner = |port: usize| {
        nodes
            .iter()
            .position(|m| (m.port_base..m.port_base + m.decl.outputs.len()).contains(&port))
    };
    // Per component, the components its inputs come from.
    let sources: Vec<Vec<usize>> = nodes
        .iter()
        .map(|m| m.gathers.iter().filter_map(|g| owner(g.src_port)).collect())
        .collect();
    // Whether a component's outputs can change at a quiet boundary (or
    // between two of them), to a fixed point.
    let mut changes: Vec<bool> = (0..n)
        .map(|i| {
            nodes[i].schedule == Schedule::EveryStep && (!is_lowered[i] || !nodes[i].x.is_empty())
        })
        .collect();
    loop {
        let mut moved = false;
        for c in 0..n {
            if !changes[c]
                && nodes[c].schedule == Schedule::EveryStep
                && sources[c].iter().any(|&s| changes[s])
            {
                changes[c] = true;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    // Whether changing component `c` is read only by components reading
    // it when due, through at most `depth` lowered ones.
    fn read_when_due(
        c: usize,
        depth: usize,
        nodes: &[Node],
        sources: &[Vec<usize>],
        is_lowered: &[bool],
        gathers_every_step: &dyn Fn(usize) -> bool,
    ) -> bool {
        (0..nodes.len())
            .filter(|&r| sources[r].contains(&c))
            .all(|r| {
                !gathers_every_step(r)
                    && match nodes[r].schedule {
                        Schedule::Periodic(_) => true,
                        Schedule::EveryStep => {
                            is_lowered[r]
                                && depth > 0
                                && read_when_due(
                                    r,
                                    depth - 1,
                                    nodes,
                                    sources,
                                    is_lowered,
                                    gathers_every_step,
                                )
                        }
                        Schedule::OnInput => false,
                    }
            })
    }
    lowered.iter().all(|&(c, _)| {
        nodes[c].schedule != Schedule::EveryStep
            || !changes[c]
            || read_when_due(c, n, nodes, &sources, &is_lowered, gathers_every_step)
    })
}

#[cfg(test)]
mod tests {
    use netloop_time::SimTime;

    use crate::blocks::{build, BlockConfig, BlockContext};
    use crate::graph::{Component, Ctx, Graph, GraphBuilder, Inputs, Outputs};
    use crate::solver::{SolverKind, Workspace};
    use crate::time::StepSize;

    const STEP: SimTime = SimTime::from_millis(10);

    fn block(text: &str) -> Box<dyn Component> {
        let c: BlockConfig = toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let cx = BlockContext {
            step: StepSize::new(STEP).unwrap(),
            seed: 1,
            stream: 0,
        };
        build(&crate::KeyPath::key("block"), &c, cx).unwrap()
    }

    /// What the kind's own `output` computes from `u` (ports of `widths`).
    fn by_output(text: &str, u: &[f64], widths: &[usize], out: usize) -> Vec<f64> {
        output_on(text, &[], u, widths, out)
    }

    /// What kind `text`'s own `output` computes from states `x` and inputs
    /// `u` (ports of `widths`), with `out` outputs.
    fn output_on(text: &str, x: &[f64], u: &[f64], widths: &[usize], out: usize) -> Vec<f64> {
        let mut c = block(text);
        let mut offsets = vec![0];
        for w in widths {
            offsets.push(offsets.last().unwrap() + w);
        }
        let mut y = vec![f64::NAN; out];
        let mut ws = Workspace::new(x.len().max(1));
        let mut cx = Ctx {
            k: 0,
            now: SimTime::ZERO,
            at: SimTime::ZERO,
            step: StepSize::new(STEP).unwrap(),
            solver: SolverKind::Rk4,
            ws: &mut ws,
        };
        let y_offsets = [0, out];
        c.output(
            &mut cx,
            x,
            &Inputs {
                data: u,
                offsets: &offsets,
            },
            &mut Outputs {
                data: &mut y,
                offsets: &y_offsets,
            },
        );
        y
    }

    /// The lowered components' names, in evaluation order.
    fn lowered_names(g: &Graph) -> Vec<&str> {
        g.lowered
            .iter()
            .map(|&(node, _)| g.nodes[node].name.as_str())
            .collect()
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    const A: &str = "kind = \"constant\"\nvalue = [-0.0, 1.5, -2.25]";
    const B: &str = "kind = \"constant\"\nvalue = [0.0, 0.1, 3e-17]";
    const SUM: &str = "kind = \"sum\"\nsigns = \"-+-\"\nwidth = 3";
    const GAIN: &str = "kind = \"gain\"\nk = 0.1\nwidth = 3";
    const MATRIX: &str = "kind = \"gain\"\nk = [[1.0, 0.2, -3.0], [-0.5, 0.25, 1e-3]]";

    /// Constants, a sum with signs, a scalar and a matrix gain, fed by each
    /// other and by a clock (not lowered: it depends on time).
    fn graph() -> Graph {
        let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
        b.component_keyed("a", "a", block(A));
        b.component_keyed("b", "b", block(B));
        b.component_keyed("clock", "clock", block("kind = \"clock\""));
        b.component_keyed("sum", "sum", block(SUM));
        b.component_keyed("gain", "gain", block(GAIN));
        b.component_keyed("matrix", "matrix", block(MATRIX));
        b.connect("a.y", "sum.u0");
        b.connect("b.y", "sum.u1");
        b.connect("clock.y", "sum.u2[0]");
        b.connect("a.y[1..3]", "sum.u2[1..3]");
        b.connect("sum.y", "gain.u");
        b.connect("gain.y", "matrix.u");
        b.build().unwrap()
    }

    #[test]
    fn every_constant_sum_and_gain_is_lowered_and_the_clock_is_not() {
        let g = graph();
        assert_eq!(lowered_names(&g), ["a", "b", "sum", "gain", "matrix"]);
    }

    /// Bit for bit what each kind's own `output` gives, signed zeros
    /// included (`0.0 - 0.0` is `+0.0`, `-0.0 * 0.1` is `-0.0`), at
    /// several boundaries.
    #[test]
    fn lowered_blocks_give_the_bits_of_their_output() {
        let mut g = graph();
        for k in 0..4u64 {
            g.evaluate().unwrap();
            let a = g.value("a", "y").unwrap().to_vec();
            let b = g.value("b", "y").unwrap().to_vec();
            assert_eq!(bits(&a), bits(&by_output(A, &[], &[], 3)));
            assert_eq!(bits(&b), bits(&by_output(B, &[], &[], 3)));
            let t = (k as f64) * 0.01;
            let u: Vec<f64> = [&a[..], &b[..], &[t, a[1], a[2]]].concat();
            let sum = by_output(SUM, &u, &[3, 3, 3], 3);
            assert_eq!(bits(g.value("sum", "y").unwrap()), bits(&sum), "k = {k}");
            let gain = by_output(GAIN, &sum, &[3], 3);
            assert_eq!(bits(g.value("gain", "y").unwrap()), bits(&gain));
            let matrix = by_output(MATRIX, &gain, &[3], 2);
            assert_eq!(bits(g.value("matrix", "y").unwrap()), bits(&matrix));
            // The hand-computed first element: 0 - (-0) + 0 - t.
            assert_eq!(sum[0].to_bits(), (0.0 - -0.0 + 0.0 - t).to_bits());
            g.integrate_step().unwrap();
        }
    }

    /// A sum's first term starts the accumulator and its last stores it:
    /// one instruction per term and element (a one-term sum two, a matrix
    /// row one per column, `a + b` and `a - b` one), with the bits of the kind's own `output` where
    /// the start `0.0 + u` or `0.0 - u` matters (signed zeros).
    #[test]
    fn sums_take_one_instruction_per_term() {
        let z = [-0.0, 0.0];
        for (text, ports, per_element) in [
            ("kind = \"sum\"\nsigns = \"+\"\nwidth = 2", 1, 2),
            ("kind = \"sum\"\nsigns = \"-\"\nwidth = 2", 1, 2),
            ("kind = \"sum\"\nsigns = \"+-\"\nwidth = 2", 2, 1),
            ("kind = \"sum\"\nsigns = \"++\"\nwidth = 2", 2, 1),
            ("kind = \"sum\"\nsigns = \"-+\"\nwidth = 2", 2, 2),
            ("kind = \"sum\"\nsigns = \"-+-\"\nwidth = 2", 3, 3),
            ("kind = \"gain\"\nk = [[1.0, -0.5], [0.25, 2.0]]", 1, 2),
        ] {
            let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
            b.component_keyed("z", "z", block("kind = \"constant\"\nvalue = [-0.0, 0.0]"));
            b.component_keyed("s", "s", block(text));
            for p in 0..ports {
                let port = if text.contains("gain") {
                    "u".to_string()
                } else {
                    format!("u{p}")
                };
                b.connect("z.y", &format!("s.{port}"));
            }
            let mut g = b.build().unwrap();
            // The constant's two `Set`s, then the sum's.
            assert_eq!(g.program.ops.len() - 2, 2 * per_element, "{text}");
            g.evaluate().unwrap();
            let u = z.repeat(ports);
            let own = by_output(text, &u, &vec![2; ports], 2);
            assert_eq!(bits(g.value("s", "y").unwrap()), bits(&own), "{text}");
        }
    }

    const TF: &str = "kind = \"transfer_function\"\nnum = [2.0, -1.0, 3.0]\nden = [1.0, 0.5, 4.0]";
    const SS: &str = "kind = \"state_space\"\na = [[0.0, 1.0], [-2.0, -0.3]]\nb = [[0.0], [1.0]]\nc = [[1.0, 0.0], [0.5, -0.25]]\nd = [[0.0], [1e-3]]\nx0 = [-0.0, 0.7]";
    const ZPK: &str = "kind = \"zero_pole_gain\"\nzeros = [-3.0]\npoles = [-1.0, -4.0]\ngain = 2.0";

    /// What a linear kind's own `output` computes from its states `x` and
    /// its input `u` (one element), with `out` outputs.
    fn linear_by_output(text: &str, x: &[f64], u: f64, out: usize) -> Vec<f64> {
        output_on(text, x, &[u], &[1], out)
    }

    /// A chain clock -> transfer function (direct feedthrough) -> state
    /// space (two outputs) -> zero-pole-gain -> gain: every linear block
    /// is lowered, reading its continuous states, and runs of lowered
    /// stages are one stage each.
    fn linear_graph() -> Graph {
        let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
        b.component_keyed("clock", "clock", block("kind = \"clock\""));
        b.component_keyed("tf", "tf", block(TF));
        b.component_keyed("ss", "ss", block(SS));
        b.component_keyed("zpk", "zpk", block(ZPK));
        b.component_keyed("gain", "gain", block("kind = \"gain\"\nk = -2.5"));
        b.connect("clock.y", "tf.u");
        b.connect("tf.y", "ss.u");
        b.connect("ss.y[1]", "zpk.u");
        b.connect("zpk.y", "gain.u");
        b.build().unwrap()
    }

    #[test]
    fn linear_blocks_are_lowered_and_consecutive_ones_run_as_one_stage() {
        let g = linear_graph();
        assert_eq!(lowered_names(&g), ["tf", "ss", "zpk", "gain"]);
        assert_eq!(g.stages.len(), 2, "the clock, then one lowered run");
        assert_eq!(
            g.order(),
            [["clock"], ["tf"], ["ss"], ["zpk"], ["gain"]],
            "the order still names every component"
        );
    }

    /// The lowered `y = C x + D u` is bit for bit each linear kind's own
    /// `output` on the states the engine holds, at boundaries along a run
    /// (signed zero in `x0` included).
    #[test]
    fn lowered_linear_blocks_give_the_bits_of_their_output() {
        let mut g = linear_graph();
        let [tf, ss, zpk] = ["tf", "ss", "zpk"].map(|n| g.component_index(n).unwrap());
        for k in 0..40u64 {
            g.evaluate().unwrap();
            let t = g.value("clock", "y").unwrap()[0];
            let tf_y = linear_by_output(TF, g.states(tf), t, 1);
            assert_eq!(bits(g.value("tf", "y").unwrap()), bits(&tf_y), "k = {k}");
            let ss_y = linear_by_output(SS, g.states(ss), tf_y[0], 2);
            assert_eq!(bits(g.value("ss", "y").unwrap()), bits(&ss_y), "k = {k}");
            let zpk_y = linear_by_output(ZPK, g.states(zpk), ss_y[1], 1);
            assert_eq!(bits(g.value("zpk", "y").unwrap()), bits(&zpk_y), "k = {k}");
            assert_eq!(
                g.value("gain", "y").unwrap()[0].to_bits(),
                (-2.5 * zpk_y[0]).to_bits()
            );
            assert!(g.is_fresh(tf, 0) && g.is_fresh(zpk, 0));
            g.integrate_step().unwrap();
        }
        assert!(g.states(ss)[1] != 0.7, "the states moved");
    }

    /// A lowered component's outputs are new at every boundary, as when
    /// its `output` was called.
    #[test]
    fn lowered_outputs_are_fresh_at_every_boundary() {
        let mut g = graph();
        let sum = g.component_index("sum").unwrap();
        for _ in 0..3 {
            g.evaluate().unwrap();
            assert!(g.is_fresh(sum, 0));
            g.integrate_step().unwrap();
            assert!(!g.is_fresh(sum, 0));
        }
    }

    /// A component served through its own `output` and `advance`: every
    /// call forwarded but `lower`, for the behaviour lowering must keep.
    #[derive(Debug)]
    struct Unlowered(Box<dyn Component>);

    impl Component for Unlowered {
        fn declare(&self) -> crate::graph::Declaration {
            self.0.declare()
        }
        fn initial_state(&self, x: &mut [f64]) {
            self.0.initial_state(x);
        }
        fn initial_outputs(&self, y: &mut Outputs) {
            self.0.initial_outputs(y);
        }
        fn start(&mut self, u: &Inputs) {
            self.0.start(u);
        }
        fn output(&mut self, cx: &mut Ctx, x: &[f64], u: &Inputs, y: &mut Outputs) {
            self.0.output(cx, x, u, y);
        }
        fn advance(&mut self, cx: &mut Ctx, u: &Inputs) {
            self.0.advance(cx, u);
        }
        fn needs(&self) -> crate::graph::Needs {
            self.0.needs()
        }
        fn discrete_states(&self) -> &[f64] {
            self.0.discrete_states()
        }
        fn save(&self, into: &mut crate::graph::SavedState) {
            self.0.save(into);
        }
        fn load(
            &mut self,
            from: &mut crate::graph::StateReader,
        ) -> Result<(), crate::graph::StateMismatch> {
            self.0.load(from)
        }
    }

    const ZOH: &str = "kind = \"zero_order_hold\"\nperiod = \"20ms\"\nphase = \"10ms\"";
    const DELAY: &str =
        "kind = \"unit_delay\"\nperiod = \"30ms\"\nphase = \"10ms\"\ninitial = 0.25";
    const LOOP_DELAY: &str = "kind = \"unit_delay\"\nperiod = \"20ms\"\nphase = \"10ms\"";
    const INTEGRATOR: &str = "kind = \"discrete_integrator\"\nperiod = \"30ms\"\nphase = \"20ms\"\ngain = 2.0\ninitial = 0.01\nlower = -0.3\nupper = 0.02";

    /// clock -> gain -> hold -> delay -> integrator, and the hold summed
    /// with its own running sum through a delay (the cruise-control PID's
    /// pattern), each sampled block at its own period and phase; with
    /// `lowered` false the sampled blocks are served through their own
    /// `output` and `advance`.
    fn sampled_graph(lowered: bool) -> Graph {
        let wrap = |text: &str| -> Box<dyn Component> {
            if lowered {
                block(text)
            } else {
                Box::new(Unlowered(block(text)))
            }
        };
        let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
        b.component_keyed("clock", "clock", block("kind = \"clock\""));
        b.component_keyed("g", "g", block("kind = \"gain\"\nk = -3.0"));
        b.component_keyed("zoh", "zoh", wrap(ZOH));
        b.component_keyed("d", "d", wrap(DELAY));
        b.component_keyed("acc", "acc", block("kind = \"sum\"\nsigns = \"++\""));
        b.component_keyed("s", "s", wrap(LOOP_DELAY));
        b.component_keyed("int", "int", wrap(INTEGRATOR));
        b.connect("clock.y", "g.u");
        b.connect("g.y", "zoh.u");
        b.connect("zoh.y", "d.u");
        b.connect("zoh.y", "acc.u0");
        b.connect("s.y", "acc.u1");
        b.connect("acc.y", "s.u");
        b.connect("d.y", "int.u");
        b.build().unwrap()
    }

    /// Everything a boundary shows: every output's bits, whether each
    /// port is new, every discrete state.
    fn seen(g: &Graph) -> (Vec<u64>, Vec<bool>, Vec<u64>) {
        let n = g.component_names().count();
        let fresh = (0..n)
            .filter(|&i| !g.declaration(i).outputs.is_empty())
            .map(|i| g.is_fresh(i, 0))
            .collect();
        let discrete = (0..n).flat_map(|i| bits(g.discrete_states(i))).collect();
        (bits(g.values()), fresh, discrete)
    }

    #[test]
    fn delays_holds_and_integrators_are_lowered_into_one_run() {
        let g = sampled_graph(true);
        assert_eq!(
            lowered_names(&g),
            ["g", "zoh", "d", "s", "acc", "int"],
            "every block but the clock"
        );
        assert_eq!(g.stages.len(), 2, "the clock, then one lowered run");
        assert!(
            g.stepping.is_empty(),
            "the program advances the sampled blocks"
        );
        let g = sampled_graph(false);
        assert_eq!(lowered_names(&g), ["g", "acc"]);
        // A discrete transfer function keeps its own `output`.
        let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
        b.component_keyed("clock", "clock", block("kind = \"clock\""));
        b.component_keyed(
            "dtf",
            "dtf",
            block("kind = \"discrete_transfer_function\"\nnum = [1.0]\nden = [1.0, -0.5]\nperiod = \"20ms\""),
        );
        b.connect("clock.y", "dtf.u");
        assert!(lowered_names(&b.build().unwrap()).is_empty());
    }

    /// The lowered sampled blocks give, at every boundary (at and between
    /// their sample instants), the outputs, freshness, discrete states and
    /// snapshot the blocks give through their own `output` and `advance`.
    #[test]
    fn lowered_sampled_blocks_behave_as_their_own_output_and_advance() {
        let (mut lowered, mut own) = (sampled_graph(true), sampled_graph(false));
        let mut g1 = 0.0;
        for k in 0..90u64 {
            lowered.evaluate().unwrap();
            own.evaluate().unwrap();
            assert_eq!(seen(&lowered), seen(&own), "k = {k}");
            assert!(lowered.snapshot() == own.snapshot(), "k = {k}");
            // Known answers: the hold samples at odd k, the delay at
            // k = 1, 4, 7, ... gives what it took a sample earlier, the
            // integrator starts at 0.01 and stops at its upper limit.
            let zoh = lowered.value("zoh", "y").unwrap()[0];
            let d = lowered.value("d", "y").unwrap()[0];
            if k == 1 {
                g1 = zoh;
                assert_eq!(zoh.to_bits(), (-3.0 * 0.01f64).to_bits());
            }
            if k == 0 {
                assert_eq!((zoh, d), (0.0, 0.25));
            }
            if (1..4).contains(&k) {
                assert_eq!(d, 0.25, "k = {k}");
            }
            if (4..7).contains(&k) {
                assert_eq!(d.to_bits(), g1.to_bits(), "k = {k}");
            }
            let int = lowered.value("int", "y").unwrap()[0];
            if k < 5 {
                assert_eq!(int, 0.01, "k = {k}");
            }
            if k == 5 {
                // 0.01 + (2 * 0.03) * 0.25 = 0.025 (the delay's initial
                // value taken at k = 2), clamped to the upper limit.
                assert!(0.01 + (2.0 * 0.03) * 0.25 > 0.02);
                assert_eq!(int, 0.02);
            }
            lowered.integrate_step().unwrap();
            own.integrate_step().unwrap();
            assert!(lowered.snapshot() == own.snapshot(), "after step {k}");
        }
        // Through `run_to`, stretches that end anywhere in a period.
        for k1 in [93u64, 97, 100, 131, 132] {
            lowered.run_to(k1, &mut crate::graph::Unobserved).unwrap();
            own.run_to(k1, &mut crate::graph::Unobserved).unwrap();
            assert!(lowered.snapshot() == own.snapshot(), "k1 = {k1}");
            assert_eq!(seen(&lowered), seen(&own));
        }
    }

    /// Rollback: a snapshot taken before a boundary is evaluated, or
    /// between its evaluation and its step (a sample pending its
    /// `advance`), restores the lowered state, and the run from it repeats
    /// bit for bit; a snapshot of the same diagram served through the
    /// blocks' own calls restores into the lowered one and runs on as it.
    #[test]
    fn lowered_sampled_blocks_roll_back_bit_for_bit() {
        let mut g = sampled_graph(true);
        g.run_to(7, &mut crate::graph::Unobserved).unwrap();
        let before = g.snapshot();
        g.evaluate().unwrap();
        assert!(
            g.is_fresh(g.component_index("d").unwrap(), 0),
            "d is due at 7"
        );
        let pending = g.snapshot();
        let mut first = Vec::new();
        for _ in 7..40 {
            g.evaluate().unwrap();
            first.push(seen(&g));
            g.integrate_step().unwrap();
        }
        for snap in [&before, &pending] {
            g.restore(snap).unwrap();
            assert!(g.snapshot() == *snap);
            let again: Vec<_> = (7..40)
                .map(|_| {
                    g.evaluate().unwrap();
                    let s = seen(&g);
                    g.integrate_step().unwrap();
                    s
                })
                .collect();
            assert_eq!(again, first);
        }
        let mut own = sampled_graph(false);
        own.run_to(7, &mut crate::graph::Unobserved).unwrap();
        own.evaluate().unwrap();
        let theirs = own.snapshot();
        assert!(theirs == pending);
        g.restore(&theirs).unwrap();
        for (k, expected) in (7..40).zip(&first) {
            g.evaluate().unwrap();
            assert_eq!(&seen(&g), expected, "k = {k}");
            g.integrate_step().unwrap();
        }
    }

    /// A diagram of library blocks only: a constant through a transfer
    /// function into the sampled blocks (the cruise-control shape).
    fn quiet_graph() -> Graph {
        let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
        b.component_keyed("c", "c", block("kind = \"constant\"\nvalue = 1.0"));
        b.component_keyed(
            "tf",
            "tf",
            block("kind = \"transfer_function\"\nnum = [1.0]\nden = [1.0, 2.0]"),
        );
        b.component_keyed("err", "err", block("kind = \"sum\"\nsigns = \"+-\""));
        b.component_keyed("zoh", "zoh", block(ZOH));
        b.component_keyed("d", "d", block(DELAY));
        b.component_keyed("acc", "acc", block("kind = \"sum\"\nsigns = \"++\""));
        b.component_keyed("s", "s", block(LOOP_DELAY));
        b.component_keyed("int", "int", block(INTEGRATOR));
        b.component_keyed("u", "u", block("kind = \"sum\"\nsigns = \"+++\""));
        b.connect("c.y", "err.u0");
        b.connect("tf.y", "err.u1");
        b.connect("err.y", "zoh.u");
        b.connect("zoh.y", "d.u");
        b.connect("zoh.y", "acc.u0");
        b.connect("s.y", "acc.u1");
        b.connect("acc.y", "s.u");
        b.connect("d.y", "int.u");
        b.connect("acc.y", "u.u0");
        b.connect("int.y", "u.u1");
        b.connect("d.y", "u.u2");
        b.connect("u.y", "tf.u");
        b.build().unwrap()
    }

    /// Between the samples nothing in that diagram can change but the
    /// transfer function's states, which only the hold reads: `run_to`
    /// unobserved integrates those boundaries only and stops, wherever,
    /// in the state of a run that evaluates every boundary.
    #[test]
    fn a_lowered_diagram_rests_between_samples_with_the_same_bits() {
        let (mut rested, mut full) = (quiet_graph(), quiet_graph());
        assert!(rested.demand.quiet);
        assert_eq!(lowered_names(&rested).len(), 9);
        for k1 in [1u64, 2, 3, 8, 9, 30, 31, 32, 100, 161, 500] {
            rested.run_to(k1, &mut crate::graph::Unobserved).unwrap();
            while full.k() < k1 {
                full.integrate_step().unwrap();
            }
            assert!(rested.snapshot() == full.snapshot(), "k1 = {k1}");
            assert_eq!(seen(&rested), seen(&full), "k1 = {k1}");
        }
        assert!(rested.value("tf", "y").unwrap()[0] != 0.0);
        // A clock read by a sampled block through a gain (every step, not
        // lowered) keeps every boundary busy.
        assert!(!sampled_graph(true).demand.quiet);
        // As does a transfer function reading a changing sum.
        let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
        b.component_keyed(
            "tf",
            "tf",
            block("kind = \"transfer_function\"\nnum = [1.0]\nden = [1.0, 2.0]"),
        );
        b.component_keyed(
            "tf2",
            "tf2",
            block("kind = \"transfer_function\"\nnum = [1.0]\nden = [1.0, 3.0]"),
        );
        b.component_keyed("c", "c", block("kind = \"constant\"\nvalue = 1.0"));
        b.component_keyed("e", "e", block("kind = \"sum\"\nsigns = \"+-\""));
        b.component_keyed("zoh", "zoh", block(ZOH));
        b.connect("c.y", "e.u0");
        b.connect("tf.y", "e.u1");
        b.connect("e.y", "tf2.u");
        b.connect("tf2.y", "zoh.u");
        b.connect("zoh.y", "tf.u");
        assert!(!b.build().unwrap().demand.quiet);
    }
}
