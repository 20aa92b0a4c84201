//! The evaluation form: a flat array of register instructions over one
//! array of `f64` slots, run top to bottom with no branches between
//! instructions, no allocation and no names.
//!
//! # Slots
//! `[time | states | inputs | constants | variables and temporaries]`.
//! Constants are written once when the model is built; every other slot is
//! written before it is read in each run (the compiler orders the
//! instructions so), so a run depends only on time, states and inputs.
//!
//! # Why a register machine
//! Each instruction names its operands by slot index, so a run is one
//! `match` per instruction, with the operands in a contiguous array that
//! stays in L1 cache. Sums of products (`a*x + b*y - c*z`, the bulk of
//! linear and most physical models) are one [`Instr::Lin`] instruction that
//! walks a coefficient table, which keeps the interpretive overhead per
//! arithmetic operation small. A derivative or output program that is
//! affine in the states and inputs skips this machine (`affine.rs`). See
//! BENCHMARKS.md (`equations`) for the cost against compiled Rust.

use std::cell::Cell;

/// One instruction: `dst <- f(operands)`, all slot indices.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Instr {
    Add(u32, u32, u32),
    Sub(u32, u32, u32),
    Mul(u32, u32, u32),
    Div(u32, u32, u32),
    Pow(u32, u32, u32),
    Min(u32, u32, u32),
    Max(u32, u32, u32),
    Atan2(u32, u32, u32),
    Lt(u32, u32, u32),
    Le(u32, u32, u32),
    Gt(u32, u32, u32),
    Ge(u32, u32, u32),
    Eq(u32, u32, u32),
    Ne(u32, u32, u32),
    And(u32, u32, u32),
    Or(u32, u32, u32),
    Neg(u32, u32),
    Not(u32, u32),
    Sin(u32, u32),
    Cos(u32, u32),
    Tan(u32, u32),
    Asin(u32, u32),
    Acos(u32, u32),
    Atan(u32, u32),
    Exp(u32, u32),
    Log(u32, u32),
    Sqrt(u32, u32),
    Abs(u32, u32),
    Sign(u32, u32),
    /// `dst <- if c != 0 { a } else { b }`.
    Select(u32, u32, u32, u32),
    /// `dst <- sat(x, lo, hi)`.
    Sat(u32, u32, u32, u32),
    /// `dst <- deadzone(x, w)`.
    Deadzone(u32, u32, u32),
    /// `dst <- c0*s0 + c1*s1 + ...`, summed left to right, over the
    /// `len` terms from `start` of the term table.
    Lin(u32, u32, u32),
}

/// The scalar functions, shared by the run-time instructions and the
/// compiler's constant folding so that a folded constant has the bits the
/// instruction would have computed.
pub(crate) mod f {
    #[inline(always)]
    pub fn truth(b: bool) -> f64 {
        if b {
            1.0
        } else {
            0.0
        }
    }
    #[inline(always)]
    pub fn sign(x: f64) -> f64 {
        if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            // 0 for ±0; NaN stays NaN.
            x * 0.0
        }
    }
    /// `min(max(x, lo), hi)`: `hi` wins if the bounds cross.
    #[inline(always)]
    pub fn sat(x: f64, lo: f64, hi: f64) -> f64 {
        x.max(lo).min(hi)
    }
    /// Zero on `[-w, w]`, `x - w` above and `x + w` below.
    #[inline(always)]
    pub fn deadzone(x: f64, w: f64) -> f64 {
        if x > w {
            x - w
        } else if x < -w {
            x + w
        } else {
            0.0
        }
    }
    #[inline(always)]
    pub fn min(a: f64, b: f64) -> f64 {
        a.min(b)
    }
    #[inline(always)]
    pub fn max(a: f64, b: f64) -> f64 {
        a.max(b)
    }
}

impl Instr {
    /// The slot the instruction writes.
    pub(crate) fn destination(&self) -> u32 {
        self.operands().0[0]
    }

    /// Every slot the instruction names, and its term range if any.
    fn operands(&self) -> (Vec<u32>, Option<(u32, u32)>) {
        use Instr::*;
        match *self {
            Add(d, a, b)
            | Sub(d, a, b)
            | Mul(d, a, b)
            | Div(d, a, b)
            | Pow(d, a, b)
            | Min(d, a, b)
            | Max(d, a, b)
            | Atan2(d, a, b)
            | Lt(d, a, b)
            | Le(d, a, b)
            | Gt(d, a, b)
            | Ge(d, a, b)
            | Eq(d, a, b)
            | Ne(d, a, b)
            | And(d, a, b)
            | Or(d, a, b)
            | Deadzone(d, a, b) => (vec![d, a, b], None),
            Neg(d, a)
            | Not(d, a)
            | Sin(d, a)
            | Cos(d, a)
            | Tan(d, a)
            | Asin(d, a)
            | Acos(d, a)
            | Atan(d, a)
            | Exp(d, a)
            | Log(d, a)
            | Sqrt(d, a)
            | Abs(d, a)
            | Sign(d, a) => (vec![d, a], None),
            Select(d, c, a, b) | Sat(d, c, a, b) => (vec![d, c, a, b], None),
            Lin(d, start, len) => (vec![d], Some((start, len))),
        }
    }
}

/// A program whose every slot index (and every `Lin` term) is inside
/// `slots` slots and `terms`, with at least one term per `Lin`: checked
/// once when a model is built, so [`run`] can index without checks.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Checked(Vec<Instr>);

impl Checked {
    /// # Panics
    /// On an index out of range: a compiler bug, never input-dependent.
    pub(crate) fn new(code: Vec<Instr>, terms: &[(f64, u32)], slots: usize) -> Self {
        for ins in &code {
            let (ops, range) = ins.operands();
            assert!(
                ops.iter().all(|&o| (o as usize) < slots),
                "{ins:?} outside {slots} slots"
            );
            if let Some((start, len)) = range {
                let t = terms
                    .get(start as usize..start as usize + len as usize)
                    .expect("Lin terms inside the table");
                assert!(
                    len >= 1 && t.iter().all(|&(_, o)| (o as usize) < slots),
                    "{ins:?}"
                );
            }
        }
        Checked(code)
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn instructions(&self) -> &[Instr] {
        &self.0
    }
}

/// Runs `code` on `s`. `terms` is the coefficient table of [`Instr::Lin`];
/// `code` was checked against both ([`Checked::new`]), and `s` and `terms`
/// must be the ones it was checked against (the model holds all three).
#[inline]
pub(crate) fn run(code: &Checked, terms: &[(f64, u32)], s: &[Cell<f64>]) {
    let code = &code.0;
    // SAFETY: `Checked::new` verified every index against these lengths,
    // and the model never changes the program, the term table or the
    // number of slots after building.
    let g = |i: u32| unsafe { s.get_unchecked(i as usize) }.get();
    for ins in code {
        let (d, v) = match *ins {
            Instr::Add(d, a, b) => (d, g(a) + g(b)),
            Instr::Sub(d, a, b) => (d, g(a) - g(b)),
            Instr::Mul(d, a, b) => (d, g(a) * g(b)),
            Instr::Div(d, a, b) => (d, g(a) / g(b)),
            Instr::Pow(d, a, b) => (d, g(a).powf(g(b))),
            Instr::Min(d, a, b) => (d, f::min(g(a), g(b))),
            Instr::Max(d, a, b) => (d, f::max(g(a), g(b))),
            Instr::Atan2(d, a, b) => (d, g(a).atan2(g(b))),
            Instr::Lt(d, a, b) => (d, f::truth(g(a) < g(b))),
            Instr::Le(d, a, b) => (d, f::truth(g(a) <= g(b))),
            Instr::Gt(d, a, b) => (d, f::truth(g(a) > g(b))),
            Instr::Ge(d, a, b) => (d, f::truth(g(a) >= g(b))),
            Instr::Eq(d, a, b) => (d, f::truth(g(a) == g(b))),
            Instr::Ne(d, a, b) => (d, f::truth(g(a) != g(b))),
            Instr::And(d, a, b) => (d, f::truth(g(a) != 0.0 && g(b) != 0.0)),
            Instr::Or(d, a, b) => (d, f::truth(g(a) != 0.0 || g(b) != 0.0)),
            Instr::Neg(d, a) => (d, -g(a)),
            Instr::Not(d, a) => (d, f::truth(g(a) == 0.0)),
            Instr::Sin(d, a) => (d, g(a).sin()),
            Instr::Cos(d, a) => (d, g(a).cos()),
            Instr::Tan(d, a) => (d, g(a).tan()),
            Instr::Asin(d, a) => (d, g(a).asin()),
            Instr::Acos(d, a) => (d, g(a).acos()),
            Instr::Atan(d, a) => (d, g(a).atan()),
            Instr::Exp(d, a) => (d, g(a).exp()),
            Instr::Log(d, a) => (d, g(a).ln()),
            Instr::Sqrt(d, a) => (d, g(a).sqrt()),
            Instr::Abs(d, a) => (d, g(a).abs()),
            Instr::Sign(d, a) => (d, f::sign(g(a))),
            Instr::Select(d, c, a, b) => (d, if g(c) != 0.0 { g(a) } else { g(b) }),
            Instr::Sat(d, x, lo, hi) => (d, f::sat(g(x), g(lo), g(hi))),
            Instr::Deadzone(d, x, w) => (d, f::deadzone(g(x), g(w))),
            Instr::Lin(d, start, len) => {
                // SAFETY: as above; `len >= 1`.
                let t = unsafe { terms.get_unchecked(start as usize..(start + len) as usize) };
                // Short sums (most rows of a model) unrolled.
                let v = match t {
                    &[(c0, i0), (c1, i1)] => c0 * g(i0) + c1 * g(i1),
                    &[(c0, i0), (c1, i1), (c2, i2)] => c0 * g(i0) + c1 * g(i1) + c2 * g(i2),
                    &[(c0, i0), (c1, i1), (c2, i2), (c3, i3)] => {
                        c0 * g(i0) + c1 * g(i1) + c2 * g(i2) + c3 * g(i3)
                    }
                    _ => {
                        let (c0, i0) = unsafe { *t.get_unchecked(0) };
                        let mut acc = c0 * g(i0);
                        for &(c, i) in unsafe { t.get_unchecked(1..) } {
                            acc += c * g(i);
                        }
                        acc
                    }
                };
                (d, v)
            }
        };
        // SAFETY: as above.
        unsafe { s.get_unchecked(d as usize) }.set(v);
    }
}

/// Whether any of a program's `results` is computed from a slot in
/// `inputs`: followed through the instructions in order (a slot written
/// again takes the dependency of its new value), so a model whose outputs
/// read only states and time is not direct feedthrough.
pub(crate) fn reads_any(
    program: &super::compile::Program,
    terms: &[(f64, u32)],
    slots: usize,
    inputs: std::ops::Range<usize>,
) -> bool {
    let mut from_input = vec![false; slots];
    for flag in &mut from_input[inputs] {
        *flag = true;
    }
    for ins in &program.code.0 {
        let (ops, range) = ins.operands();
        let mut reads = ops[1..].iter().any(|&o| from_input[o as usize]);
        if let Some((start, len)) = range {
            reads |= terms[start as usize..(start + len) as usize]
                .iter()
                .any(|&(_, o)| from_input[o as usize]);
        }
        from_input[ops[0] as usize] = reads;
    }
    program.results.iter().any(|&r| from_input[r as usize])
}
