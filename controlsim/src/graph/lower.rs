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

use std::ops::Range;

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
}

/// One instruction: an output element is written directly (`Set`,
/// `Scale`) or summed in an accumulator `s` from `Zero` to `Store`, one
/// term per instruction, so a sum costs one dispatch per term and no
/// second table.
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
}

/// Every lowered component's instructions, in evaluation order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Program {
    ops: Vec<Op>,
}

impl Program {
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
                for (e, dst) in out.enumerate() {
                    self.ops.push(Op::Zero);
                    for (p, &neg) in negative.iter().enumerate() {
                        let src = src[in_offsets[p] + e];
                        self.ops.push(if neg {
                            Op::Sub { src }
                        } else {
                            Op::Add { src }
                        });
                    }
                    self.ops.push(Op::Store { dst });
                }
            }
            Lowered::Matrix { cols, k } => {
                if src.len() != *cols || k.len() != width * cols {
                    return None;
                }
                for (i, dst) in out.enumerate() {
                    self.ops.push(Op::Zero);
                    for (j, &s) in src.iter().enumerate() {
                        self.ops.push(Op::MulAdd {
                            src: s,
                            k: k[i * cols + j],
                        });
                    }
                    self.ops.push(Op::Store { dst });
                }
            }
            Lowered::StateSpace { c, d } => {
                if c.len() != width * states || d.len() != width * src.len() {
                    return None;
                }
                for (i, dst) in out.enumerate() {
                    self.ops.push(Op::Zero);
                    for state in 0..states {
                        self.ops.push(Op::StateMulAdd {
                            node,
                            state,
                            k: c[i * states + state],
                        });
                    }
                    for (j, &s) in src.iter().enumerate() {
                        self.ops.push(Op::MulAdd {
                            src: s,
                            k: d[i * src.len() + j],
                        });
                    }
                    self.ops.push(Op::Store { dst });
                }
            }
        }
        Some(start..self.ops.len())
    }

    /// Runs instructions `range` on the graph's values (`nodes` for their
    /// continuous states).
    #[inline]
    pub(crate) fn run(&self, range: Range<usize>, values: &mut [f64], nodes: &[Node]) {
        let mut s = 0.0;
        for op in &self.ops[range] {
            match *op {
                Op::Set { dst, value } => values[dst] = value,
                Op::Scale { dst, src, k } => values[dst] = k * values[src],
                Op::Zero => s = 0.0,
                Op::Add { src } => s += values[src],
                Op::Sub { src } => s -= values[src],
                Op::MulAdd { src, k } => s += k * values[src],
                Op::StateMulAdd { node, state, k } => s += k * nodes[node].x[state],
                Op::Store { dst } => values[dst] = s,
            }
        }
    }
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
        build("block", &c, cx).unwrap()
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
}
