//! A program that is an affine map of the states and inputs, run straight
//! on the caller's `x` and `u`.
//!
//! Most linear models compile to `Lin`, `Add`, `Sub` and `k * x` `Mul`
//! instructions over states, inputs and constants only, with every result
//! either one such instruction or a state, an input or a constant
//! (`der(x1) = x2`). Such a
//! program needs no slot array: each result is a row of (coefficient,
//! source) terms read where the caller holds the values. That removes what
//! the register machine spends around the arithmetic (loading time, states
//! and inputs into the slots, one dispatch per instruction, reading the
//! results back), which for a linear plant is more than the arithmetic
//! itself (BENCHMARKS.md, `equations`).
//!
//! # Same bits
//! A row computes `c0*v0 + c1*v1 + ...` left to right, as [`Instr::Lin`]
//! does; `a + b` is `1*a + 1*b` and `a - b` is `1*a + (-1)*b`, equal in
//! IEEE arithmetic for every non-NaN value (multiplying by ±1 is exact, and
//! `a + (-b) == a - b`; a NaN state stops a run anyway);
//! a constant term's product `c*k` is computed once, at build, with the same
//! operation. A program that is not of this shape is not converted
//! ([`Affine::new`] returns `None`) and runs on the register machine.

use super::eval::Instr;

/// An affine program: one sum of (coefficient, value) terms per result,
/// read where the caller holds them (`x`, `u`) or from a one, so nothing is
/// copied.
///
/// A copy (`der(x1) = x2`) is the one term `1 * x2`, a constant `k` the one
/// term `k * 1`, a constant term `c * k` of a sum is `(c * k) * 1` with the
/// product folded at build: all exact, so the same bits as the register
/// machine's instructions.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Affine {
    /// One row per result, in order.
    rows: Box<[Row]>,
    /// The terms of the rows longer than four ([`Row::Long`]).
    long: Box<[Term]>,
    /// Number of states and inputs.
    n: usize,
    m: usize,
}

/// (coefficient, (source, offset)): source 0 reads `x`, 1 `u`, 2 the one.
type Term = (f64, (u32, u32));

/// One result's sum, its terms held inline by length so that a run picks
/// the row's code with one jump on the variant (rows of up to four terms,
/// the rows of most models) instead of comparing slice lengths; why:
/// BENCHMARKS.md, "blockkats: equations (seventh session)".
#[derive(Clone, Copy, Debug, PartialEq)]
enum Row {
    One(Term),
    Two([Term; 2]),
    Three([Term; 3]),
    Four([Term; 4]),
    /// `long[start..end]`, summed left to right.
    Long(u32, u32),
}

/// The slot layout an affine program is read against.
pub(crate) struct Layout<'a> {
    /// First slot of the states; the inputs follow them.
    pub(crate) states: usize,
    pub(crate) n: usize,
    pub(crate) m: usize,
    /// Every slot's initial value (constants hold theirs).
    pub(crate) initial: &'a [f64],
    /// Whether a slot is written by some instruction of some program (so
    /// it is not a constant).
    pub(crate) written: &'a [bool],
}

impl Layout<'_> {
    /// The value of slot `s` if it is a constant.
    fn constant(&self, s: u32) -> Option<f64> {
        let s = s as usize;
        (s >= self.states + self.n + self.m && s < self.initial.len() && !self.written[s])
            .then(|| self.initial[s])
    }

    /// What slot `s` holds when read outside any instruction's result, as
    /// a term `c * value`: (coefficient, index into `[x | u | 1]`).
    fn term(&self, c: f64, s: u32) -> Option<(f64, u32)> {
        let s = s as usize;
        let inputs = self.states + self.n;
        let one = (self.n + self.m) as u32;
        if (self.states..inputs + self.m).contains(&s) {
            Some((c, (s - self.states) as u32))
        } else if let Some(k) = self.constant(s as u32) {
            Some((c * k, one))
        } else {
            // time, or a slot some instruction computes
            None
        }
    }
}

impl Affine {
    /// The program `code` with results `results` (slots) and Lin term table
    /// `lin_terms`, if it is affine in the states and inputs: only `Lin`,
    /// `Add`, `Sub` and constant-times-value `Mul` instructions, reading states, inputs and constants
    /// only (no time, no instruction's result), each writing its own slot.
    pub(crate) fn new(
        code: &[Instr],
        results: &[u32],
        lin_terms: &[(f64, u32)],
        layout: &Layout,
    ) -> Option<Affine> {
        // Slot written -> its terms.
        let mut computed: Vec<(u32, Vec<(f64, u32)>)> = Vec::new();
        for ins in code {
            let (d, row) = match *ins {
                Instr::Lin(d, start, len) => {
                    let t = lin_terms.get(start as usize..(start + len) as usize)?;
                    let row: Option<Vec<_>> = t.iter().map(|&(c, s)| layout.term(c, s)).collect();
                    (d, row?)
                }
                Instr::Add(d, a, b) => (d, vec![layout.term(1.0, a)?, layout.term(1.0, b)?]),
                Instr::Sub(d, a, b) => (d, vec![layout.term(1.0, a)?, layout.term(-1.0, b)?]),
                // `k * x` or `x * k`: one term (IEEE products commute).
                Instr::Mul(d, a, b) => match (layout.constant(a), layout.constant(b)) {
                    (Some(k), None) => (d, vec![layout.term(k, b)?]),
                    (None, Some(k)) => (d, vec![layout.term(k, a)?]),
                    _ => return None,
                },
                _ => return None,
            };
            if row.is_empty() || computed.iter().any(|(w, _)| *w == d) {
                return None;
            }
            computed.push((d, row));
        }
        let mut rows = Vec::with_capacity(results.len());
        let mut long = Vec::new();
        let (n, m) = (layout.n as u32, layout.m as u32);
        let place = |&(c, i): &(f64, u32)| match i {
            i if i < n => (c, (0, i)),
            i if i < n + m => (c, (1, i - n)),
            _ => (c, (2, 0)),
        };
        for &r in results {
            let row: Vec<Term> = match computed.iter().find(|(w, _)| *w == r) {
                Some((_, row)) => row.iter().map(place).collect(),
                None => vec![place(&layout.term(1.0, r)?)],
            };
            rows.push(match row[..] {
                [a] => Row::One(a),
                [a, b] => Row::Two([a, b]),
                [a, b, c] => Row::Three([a, b, c]),
                [a, b, c, d] => Row::Four([a, b, c, d]),
                _ => {
                    let start = long.len() as u32;
                    long.extend_from_slice(&row);
                    Row::Long(start, long.len() as u32)
                }
            });
        }
        Some(Affine {
            rows: rows.into(),
            long: long.into(),
            n: layout.n,
            m: layout.m,
        })
    }

    /// Computes every result into `out` from the states `x` and inputs `u`.
    ///
    /// Inlined into the caller (the solver's stages, through
    /// [`Plant::derivative`](crate::Plant::derivative)): a call costs more
    /// than a small model's arithmetic.
    ///
    /// # Panics
    /// If `x`, `u` or `out` is shorter than the program was built for
    /// (the engine always passes the model's own sizes).
    #[inline(always)]
    pub(crate) fn run(&self, x: &[f64], u: &[f64], out: &mut [f64]) {
        assert!(x.len() >= self.n && u.len() >= self.m && out.len() >= self.rows.len());
        let one = 1.0f64;
        let bases: [*const f64; 3] = [x.as_ptr(), u.as_ptr(), &one];
        // SAFETY: a term's source is 0 (a state), 1 (an input) or 2 (the
        // one) with an offset below `n`, `m` or 1 (built so), and `x` and
        // `u` are at least that long (asserted above).
        let g = |(c, (src, off)): Term| {
            c * unsafe { *bases.get_unchecked(src as usize).add(off as usize) }
        };
        for (i, row) in self.rows.iter().enumerate() {
            let v = match row {
                Row::One(a) => g(*a),
                Row::Two([a, b]) => g(*a) + g(*b),
                Row::Three([a, b, c]) => g(*a) + g(*b) + g(*c),
                Row::Four([a, b, c, d]) => g(*a) + g(*b) + g(*c) + g(*d),
                Row::Long(start, end) => {
                    // SAFETY: `start < end <= long.len()` (built so).
                    let t = unsafe { self.long.get_unchecked(*start as usize..*end as usize) };
                    let mut acc = g(t[0]);
                    for &term in &t[1..] {
                        acc += g(term);
                    }
                    acc
                }
            };
            // SAFETY: `i < rows.len() <= out.len()` (asserted above).
            unsafe { *out.get_unchecked_mut(i) = v };
        }
    }
}
