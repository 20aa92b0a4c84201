//! A compiled model as a [`Plant`]: the programs run on the model's own
//! slot array, so a step does no allocation and no name look-up.

use std::cell::Cell;
use std::collections::BTreeMap;

use super::affine::{Affine, Layout};
use super::compile::{compile, CompileError, Compiled, Program};
use super::eval::{reads_any, run};
use super::parse::parse;
use super::source::Source;
use crate::plant::{Plant, Signature};

/// A model ready to run: compiled programs and their slots.
///
/// The slots are scratch space written at the start of every call (time,
/// states and inputs, then every temporary in order), so calls do not
/// depend on each other and a snapshot of the engine's vectors is a
/// snapshot of the model. They are `Cell`s because [`Plant`] methods take
/// `&self`.
#[derive(Clone, Debug)]
pub struct EquationModel {
    compiled: Compiled,
    slots: Box<[Cell<f64>]>,
    n: usize,
    m: usize,
    /// The derivative and output programs run straight on `x` and `u`
    /// when they are affine in them (most linear models); `None`: on the
    /// slots.
    affine_derivative: Option<Affine>,
    affine_output: Option<Affine>,
}

impl EquationModel {
    /// Parses and compiles `source` with parameter `overrides`.
    ///
    /// # Errors
    /// [`CompileError`]: a located problem in the text, or an override of a
    /// parameter the model does not have.
    pub fn new(source: &Source, overrides: &BTreeMap<String, f64>) -> Result<Self, CompileError> {
        let statements = parse(source)?;
        let compiled = compile(source, &statements, overrides)?;
        Ok(Self::from_compiled(compiled))
    }

    fn from_compiled(compiled: Compiled) -> Self {
        let slots = compiled.slots.iter().map(|&v| Cell::new(v)).collect();
        let (n, m) = (compiled.state_names.len(), compiled.input_names.len());
        let mut written = vec![false; compiled.slots.len()];
        let programs = [&compiled.derivative, &compiled.output, &compiled.guards]
            .into_iter()
            .chain(compiled.resets.iter().map(|r| &r.program));
        for p in programs {
            for ins in p.code.instructions() {
                written[ins.destination() as usize] = true;
            }
        }
        let layout = Layout {
            states: Compiled::STATES,
            n,
            m,
            initial: &compiled.slots,
            written: &written,
        };
        let affine =
            |p: &Program| Affine::new(p.code.instructions(), &p.results, &compiled.terms, &layout);
        let affine_derivative = affine(&compiled.derivative);
        let affine_output = affine(&compiled.output);
        EquationModel {
            n,
            m,
            affine_derivative,
            affine_output,
            compiled,
            slots,
        }
    }

    /// The derivative and outputs computed on the slots (the register
    /// machine) even where an affine program exists: the reference the
    /// affine path is tested against.
    #[cfg(test)]
    pub(crate) fn on_slots(&self, t: f64, x: &[f64], u: &[f64], dx: &mut [f64], y: &mut [f64]) {
        self.load(t, x, u);
        run(
            &self.compiled.derivative.code,
            &self.compiled.terms,
            &self.slots,
        );
        self.store(&self.compiled.derivative.results, dx);
        self.load(t, x, u);
        run(
            &self.compiled.output.code,
            &self.compiled.terms,
            &self.slots,
        );
        self.store(&self.compiled.output.results, y);
    }

    /// Whether the derivative program runs as an affine map of the states
    /// and inputs (see `affine.rs`), for tests.
    pub fn derivative_is_affine(&self) -> bool {
        self.affine_derivative.is_some()
    }

    /// Whether the output program does, for tests.
    pub fn output_is_affine(&self) -> bool {
        self.affine_output.is_some()
    }

    /// The compiled form (names, start values, parameter values).
    pub fn compiled(&self) -> &Compiled {
        &self.compiled
    }

    #[inline(always)]
    fn load(&self, t: f64, x: &[f64], u: &[f64]) {
        let s = &self.slots;
        s[Compiled::TIME].set(t);
        for (c, &v) in s[Compiled::STATES..Compiled::STATES + self.n].iter().zip(x) {
            c.set(v);
        }
        let u0 = Compiled::STATES + self.n;
        for (c, &v) in s[u0..u0 + self.m].iter().zip(u) {
            c.set(v);
        }
    }

    #[inline(always)]
    fn store(&self, results: &[u32], out: &mut [f64]) {
        for (o, &r) in out.iter_mut().zip(results) {
            *o = self.slots[r as usize].get();
        }
    }

    /// Whether the outputs read the inputs at the same instant (direct
    /// feedthrough), found from the output program.
    pub fn output_reads_inputs(&self) -> bool {
        let u0 = Compiled::STATES + self.n;
        reads_any(
            &self.compiled.output,
            &self.compiled.terms,
            self.slots.len(),
            u0..u0 + self.m,
        )
    }

    /// Number of `when` clauses (the first guards; relays follow).
    fn guard_total(&self) -> usize {
        self.compiled.guards.results.len()
    }
}

impl Plant for EquationModel {
    fn signature(&self) -> Signature {
        Signature {
            states: self.compiled.state_names.clone(),
            inputs: self.compiled.input_names.clone(),
            outputs: self.compiled.output_names.clone(),
        }
    }

    fn initial_state(&self, x0: &mut [f64]) {
        x0.copy_from_slice(&self.compiled.x0);
    }

    #[inline(always)]
    fn derivative(&self, t: f64, x: &[f64], u: &[f64], dx: &mut [f64]) {
        if let Some(a) = &self.affine_derivative {
            return a.run(x, u, dx);
        }
        self.load(t, x, u);
        let p = &self.compiled.derivative;
        run(&p.code, &self.compiled.terms, &self.slots);
        self.store(&p.results, dx);
    }

    fn output(&self, t: f64, x: &[f64], u: &[f64], y: &mut [f64]) {
        if let Some(a) = &self.affine_output {
            return a.run(x, u, y);
        }
        self.load(t, x, u);
        let p = &self.compiled.output;
        run(&p.code, &self.compiled.terms, &self.slots);
        self.store(&p.results, y);
    }

    fn guard_count(&self) -> usize {
        self.guard_total()
    }

    fn guards(&self, t: f64, x: &[f64], u: &[f64], g: &mut [f64]) {
        self.load(t, x, u);
        let p = &self.compiled.guards;
        run(&p.code, &self.compiled.terms, &self.slots);
        self.store(&p.results, g);
    }

    /// All new values are computed from the state at the event, then set.
    fn reset(&self, t: f64, x: &mut [f64], u: &[f64], guard: usize) {
        let Some(r) = self.compiled.resets.get(guard) else {
            return;
        };
        self.load(t, x, u);
        run(&r.program.code, &self.compiled.terms, &self.slots);
        for (&target, &slot) in r.targets.iter().zip(&r.program.results) {
            x[target] = self.slots[slot as usize].get();
        }
    }
}
