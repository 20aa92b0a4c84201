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
//! arithmetic operation small. See BENCHMARKS.md (`equations`) for the cost
//! against compiled Rust.

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

/// Runs `code` on `s`. `terms` is the coefficient table of [`Instr::Lin`].
#[inline]
pub(crate) fn run(code: &[Instr], terms: &[(f64, u32)], s: &[Cell<f64>]) {
    let g = |i: u32| s[i as usize].get();
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
                let t = &terms[start as usize..(start + len) as usize];
                let mut acc = t[0].0 * g(t[0].1);
                for &(c, i) in &t[1..] {
                    acc += c * g(i);
                }
                (d, acc)
            }
        };
        s[d as usize].set(v);
    }
}
