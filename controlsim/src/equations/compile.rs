//! Meaning: names resolved and checked, algebraic variables sorted, and the
//! flat instruction programs of [`eval`](super::eval) generated.
//!
//! # Checks, each reported at its place in the source
//! - a name used but never defined (`undefined variable`), a name defined
//!   twice (two equations for one variable, an equation for a parameter,
//!   two `der(x)`, two declarations), a state without `der(x) = ...`;
//! - `der(x)` or a reset of something that is not a state, `pre(x)` outside
//!   a reset, a `when` condition that is not a comparison;
//! - an unknown function, a wrong number of arguments, a division by a
//!   literal zero, a parameter or start value that is not constant;
//! - an algebraic loop: variables whose equations depend on each other in a
//!   cycle, named in order (`a -> b -> a`).
//!
//! # Sorting
//! Algebraic variables may be written in any order. Their dependency graph
//! (a variable's equation reading another variable) is sorted depth-first
//! in the order the equations are written, so the generated order is
//! deterministic; each program (derivatives, outputs, guards, one per
//! reset) evaluates only the variables it needs, in that order.
//!
//! # Generated code
//! Parameters are constants: every sub-expression of constants is folded
//! at compile time with the same functions the instructions use (so the
//! bits are those a run would compute). Chains of `+`/`-` become one
//! [`Instr::Lin`] over (coefficient, slot) terms where a term is
//! `constant * expr`, `expr * constant`, `-expr` or `expr`: the same
//! products and the same left-to-right sum as the written expression,
//! because `a - c*x == a + (-c)*x` and `-(c*x) == (-c)*x` exactly in IEEE
//! arithmetic. `x^2` is `x*x` (the correctly rounded square either way).
//! `if` evaluates every branch and selects (functions here have no side
//! effects; a NaN in the branch not taken is dropped).

use std::collections::{BTreeMap, HashMap};

use super::ast::{BinaryOp, ElementKind, Expr, Name, Span, Statement, UnaryOp};
use super::eval::{f, Checked, Instr};
use super::source::{EquationError, Source};

/// What a name stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Def {
    Param(usize),
    Input(usize),
    /// A state: a declared one or an element's memory.
    State(usize),
    Var(usize),
}

impl Def {
    fn what(self) -> &'static str {
        match self {
            Def::Param(_) => "a parameter",
            Def::Input(_) => "an input",
            Def::State(_) => "a state",
            Def::Var(_) => "a variable",
        }
    }
}

/// A value at compile time: known, or in a slot at run time.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Operand {
    Const(f64),
    Slot(u32),
}

/// Where reading names is allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Context {
    /// Parameters, start values, element constants: constants only.
    Constant,
    /// Equations, outputs, guards.
    Run,
    /// The right side of a `when` reset: `pre(x)` allowed.
    Reset,
}

/// A hysteresis relay: output `off` until the input rises to `high`, then
/// `on` until it falls to `low`. Its output is held in a state.
#[derive(Clone, Debug)]
struct Relay {
    state: usize,
    input: Expr,
    low: f64,
    high: f64,
    off: f64,
    on: f64,
}

/// A backlash (dead band of total width `width`) driven by a state `input`:
/// its output, held in a state, moves with the input only while the input
/// pushes on one side of the band.
#[derive(Clone, Debug)]
struct Backlash {
    state: usize,
    input: usize,
    half_width: f64,
}

/// One program of the evaluation form and where its results are.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Program {
    pub(crate) code: Checked,
    pub(crate) results: Vec<u32>,
}

/// A `when` reset: the program computes the new values (`results`), which
/// go to the states `targets`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ResetProgram {
    pub(crate) program: Program,
    pub(crate) targets: Vec<usize>,
}

/// A compiled model: names, start values, constants and programs.
#[derive(Clone, Debug, PartialEq)]
pub struct Compiled {
    pub state_names: Vec<String>,
    pub input_names: Vec<String>,
    pub output_names: Vec<String>,
    pub parameter_names: Vec<String>,
    /// Parameter values after overrides, in declaration order.
    pub parameter_values: Vec<f64>,
    pub x0: Vec<f64>,
    /// Initial slot values (constants set; the rest zero).
    pub(crate) slots: Vec<f64>,
    pub(crate) terms: Vec<(f64, u32)>,
    pub(crate) derivative: Program,
    pub(crate) output: Program,
    pub(crate) guards: Program,
    pub(crate) resets: Vec<ResetProgram>,
}

impl Compiled {
    /// Slot of the time.
    pub(crate) const TIME: usize = 0;

    /// First slot of the states (then the inputs).
    pub(crate) const STATES: usize = 1;

    /// Instructions in the derivative program, for reports and tests.
    pub fn derivative_len(&self) -> usize {
        self.derivative.code.len()
    }
}

/// A parameter override that names no parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct UnknownParameter {
    pub name: String,
    pub known: Vec<String>,
}

/// Why a model does not compile.
#[derive(Clone, Debug, PartialEq)]
pub enum CompileError {
    /// A problem in the text.
    Source(EquationError),
    /// An override for a parameter the model does not declare.
    UnknownParameter(UnknownParameter),
}

impl From<EquationError> for CompileError {
    fn from(e: EquationError) -> Self {
        CompileError::Source(e)
    }
}

/// The built-in functions and their arities.
const FUNCTIONS: &[(&str, usize)] = &[
    ("sin", 1),
    ("cos", 1),
    ("tan", 1),
    ("asin", 1),
    ("acos", 1),
    ("atan", 1),
    ("atan2", 2),
    ("exp", 1),
    ("log", 1),
    ("sqrt", 1),
    ("abs", 1),
    ("sign", 1),
    ("min", 2),
    ("max", 2),
    ("pow", 2),
    ("sat", 3),
    ("deadzone", 2),
];

struct Compiler<'a> {
    source: &'a Source,
    defs: HashMap<String, (Def, Span)>,
    params: Vec<(Name, Expr)>,
    param_values: Vec<Option<f64>>,
    param_busy: Vec<bool>,
    overrides: &'a BTreeMap<String, f64>,
    inputs: Vec<Name>,
    /// Declared states and element states, with their start expressions.
    states: Vec<(Name, Option<Expr>)>,
    ders: Vec<Option<Expr>>,
    vars: Vec<(Name, Expr)>,
    outputs: Vec<Name>,
    whens: Vec<(Expr, Vec<(Name, Expr)>, Span)>,
    relays: Vec<Relay>,
    backlashes: Vec<Backlash>,
    elements: Vec<(ElementKind, Name, Vec<Expr>, Span)>,
    // Code generation.
    slots: Vec<f64>,
    consts: HashMap<u64, u32>,
    terms: Vec<(f64, u32)>,
    code: Vec<Instr>,
    /// Per program: the operand of each variable emitted so far.
    var_ops: Vec<Option<Operand>>,
    /// Topological order of the variables.
    order: Vec<usize>,
}

/// Compiles a parsed model with parameter `overrides` by name.
///
/// # Errors
/// [`CompileError`]: the first problem found (see the module docs).
pub fn compile(
    source: &Source,
    statements: &[Statement],
    overrides: &BTreeMap<String, f64>,
) -> Result<Compiled, CompileError> {
    let mut c = Compiler {
        source,
        defs: HashMap::new(),
        params: Vec::new(),
        param_values: Vec::new(),
        param_busy: Vec::new(),
        overrides,
        inputs: Vec::new(),
        states: Vec::new(),
        ders: Vec::new(),
        vars: Vec::new(),
        outputs: Vec::new(),
        whens: Vec::new(),
        relays: Vec::new(),
        backlashes: Vec::new(),
        elements: Vec::new(),
        slots: Vec::new(),
        consts: HashMap::new(),
        terms: Vec::new(),
        code: Vec::new(),
        var_ops: Vec::new(),
        order: Vec::new(),
    };
    c.declare_all(statements)?;
    c.check_overrides()?;
    c.build()
}

impl<'a> Compiler<'a> {
    fn err(&self, span: Span, message: impl Into<String>) -> CompileError {
        CompileError::Source(EquationError::at(self.source, span, message))
    }

    fn line_of(&self, span: Span) -> usize {
        self.source.text[..span.start.min(self.source.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    fn define(&mut self, name: &Name, def: Def) -> Result<(), CompileError> {
        if let Some((old, old_span)) = self.defs.get(&name.text) {
            return Err(self.err(
                name.span,
                format!(
                    "`{}` is defined twice: it is already {} (line {})",
                    name.text,
                    old.what(),
                    self.line_of(*old_span)
                ),
            ));
        }
        self.defs.insert(name.text.clone(), (def, name.span));
        Ok(())
    }

    /// Pass 1: every definition, in the order written.
    fn declare_all(&mut self, statements: &[Statement]) -> Result<(), CompileError> {
        let mut ders: Vec<(Name, Expr, Span)> = Vec::new();
        for st in statements {
            match st {
                Statement::Parameter(n, e) => {
                    self.define(n, Def::Param(self.params.len()))?;
                    self.params.push((n.clone(), e.clone()));
                }
                Statement::Input(n) => {
                    self.define(n, Def::Input(self.inputs.len()))?;
                    self.inputs.push(n.clone());
                }
                Statement::State(n, start) => {
                    self.define(n, Def::State(self.states.len()))?;
                    self.states.push((n.clone(), start.clone()));
                }
                Statement::Element(kind, n, args, span) => {
                    self.define(n, Def::State(self.states.len()))?;
                    self.states.push((n.clone(), None));
                    self.elements.push((*kind, n.clone(), args.clone(), *span));
                }
                Statement::Output(n, value) => {
                    if let Some(e) = value {
                        self.define(n, Def::Var(self.vars.len()))?;
                        self.vars.push((n.clone(), e.clone()));
                    }
                    if let Some(old) = self.outputs.iter().find(|o| o.text == n.text) {
                        return Err(self.err(
                            n.span,
                            format!(
                                "`{}` is declared an output twice (first at line {})",
                                n.text,
                                self.line_of(old.span)
                            ),
                        ));
                    }
                    self.outputs.push(n.clone());
                }
                Statement::Equation(n, e) => {
                    if let Some((Def::State(_), _)) = self.defs.get(&n.text) {
                        return Err(self.err(
                            n.span,
                            format!(
                                "`{0}` is a state, so it is defined by `der({0}) = ...`, not by an equation for `{0}`",
                                n.text
                            ),
                        ));
                    }
                    self.define(n, Def::Var(self.vars.len()))?;
                    self.vars.push((n.clone(), e.clone()));
                }
                Statement::Der(n, e, span) => ders.push((n.clone(), e.clone(), *span)),
                Statement::When(cond, resets, span) => {
                    self.whens.push((cond.clone(), resets.clone(), *span))
                }
            }
        }
        self.ders = vec![None; self.states.len()];
        let element_states: Vec<usize> = self
            .elements
            .iter()
            .map(|(_, n, _, _)| match self.defs[&n.text].0 {
                Def::State(i) => i,
                _ => unreachable!("elements are states"),
            })
            .collect();
        for (n, e, span) in ders {
            match self.defs.get(&n.text).map(|d| d.0) {
                None => return Err(self.undefined(&n)),
                Some(Def::State(i)) if !element_states.contains(&i) => {
                    if self.ders[i].is_some() {
                        return Err(self.err(span, format!("`der({})` is defined twice", n.text)));
                    }
                    self.ders[i] = Some(e);
                }
                Some(Def::State(_)) => {
                    return Err(self.err(
                        span,
                        format!(
                            "`{}` is an element; its state follows its input, it has no `der`",
                            n.text
                        ),
                    ))
                }
                Some(d) => {
                    return Err(self.err(
                        n.span,
                        format!(
                            "`der({0})`: `{0}` is {1}, not a state; declare it with `state {0}`",
                            n.text,
                            d.what()
                        ),
                    ))
                }
            }
        }
        for (i, (n, _)) in self.states.iter().enumerate() {
            if self.ders[i].is_none() && !element_states.contains(&i) {
                return Err(self.err(
                    n.span,
                    format!("state `{0}` has no equation `der({0}) = ...`", n.text),
                ));
            }
        }
        if self.outputs.is_empty() {
            return Err(self.err(
                Span { start: 0, end: 0 },
                "the model has no output: declare one with `output name;` or `output name = expression;`",
            ));
        }
        self.param_values = vec![None; self.params.len()];
        self.param_busy = vec![false; self.params.len()];
        Ok(())
    }

    fn undefined(&self, n: &Name) -> CompileError {
        self.err(n.span, format!("undefined variable `{}`", n.text))
    }

    fn check_overrides(&self) -> Result<(), CompileError> {
        for name in self.overrides.keys() {
            if !matches!(self.defs.get(name), Some((Def::Param(_), _))) {
                return Err(CompileError::UnknownParameter(UnknownParameter {
                    name: name.clone(),
                    known: self.params.iter().map(|(n, _)| n.text.clone()).collect(),
                }));
            }
        }
        Ok(())
    }

    /// A parameter's value (its override, else its expression), evaluated
    /// once; parameters may refer to each other in any order.
    fn param_value(&mut self, i: usize, used_at: Span) -> Result<f64, CompileError> {
        if let Some(v) = self.param_values[i] {
            return Ok(v);
        }
        let (name, expr) = self.params[i].clone();
        if let Some(&v) = self.overrides.get(&name.text) {
            self.param_values[i] = Some(v);
            return Ok(v);
        }
        if self.param_busy[i] {
            return Err(self.err(
                used_at,
                format!("parameter `{}` depends on itself", name.text),
            ));
        }
        self.param_busy[i] = true;
        let v = self.constant(&expr, &format!("parameter `{}`", name.text))?;
        self.param_busy[i] = false;
        self.param_values[i] = Some(v);
        Ok(v)
    }

    /// An expression that must be constant.
    fn constant(&mut self, e: &Expr, what: &str) -> Result<f64, CompileError> {
        match self.expr(e, Context::Constant)? {
            Operand::Const(v) => Ok(v),
            Operand::Slot(_) => Err(self.err(
                e.span(),
                format!("the value of {what} must be constant (numbers and parameters)"),
            )),
        }
    }

    fn slot(&mut self) -> u32 {
        self.slots.push(0.0);
        (self.slots.len() - 1) as u32
    }

    fn const_slot(&mut self, v: f64) -> u32 {
        if let Some(&s) = self.consts.get(&v.to_bits()) {
            return s;
        }
        let s = self.slot();
        self.slots[s as usize] = v;
        self.consts.insert(v.to_bits(), s);
        s
    }

    fn slot_of(&mut self, op: Operand) -> u32 {
        match op {
            Operand::Slot(s) => s,
            Operand::Const(v) => self.const_slot(v),
        }
    }

    fn emit(&mut self, make: impl FnOnce(u32) -> Instr) -> Operand {
        let d = self.slot();
        self.code.push(make(d));
        Operand::Slot(d)
    }

    /// A name read in an expression.
    fn read(&mut self, n: &Name, ctx: Context) -> Result<Operand, CompileError> {
        let Some(&(def, _)) = self.defs.get(&n.text) else {
            return Err(self.undefined(n));
        };
        let inputs = self.inputs.len();
        let states = self.states.len();
        match (def, ctx) {
            (Def::Param(i), _) => Ok(Operand::Const(self.param_value(i, n.span)?)),
            (_, Context::Constant) => Err(self.err(
                n.span,
                format!(
                    "`{}` is {}: only numbers and parameters are allowed here",
                    n.text,
                    def.what()
                ),
            )),
            (Def::State(i), _) => {
                let s = (Compiled::STATES + i) as u32;
                match self.backlashes.iter().find(|b| b.state == i).cloned() {
                    // A backlash reads as its held position clamped to the band
                    // around its input: exact while the input pushes.
                    Some(b) => {
                        let x = (Compiled::STATES + b.input) as u32;
                        let hw = self.const_slot(b.half_width);
                        let Operand::Slot(lo) = self.emit(|d| Instr::Sub(d, x, hw)) else {
                            unreachable!()
                        };
                        let Operand::Slot(hi) = self.emit(|d| Instr::Add(d, x, hw)) else {
                            unreachable!()
                        };
                        Ok(self.emit(|d| Instr::Sat(d, s, lo, hi)))
                    }
                    None => Ok(Operand::Slot(s)),
                }
            }
            (Def::Input(i), _) => Ok(Operand::Slot((Compiled::STATES + states + i) as u32)),
            (Def::Var(i), _) => {
                let _ = inputs;
                Ok(self.var_ops[i].expect("variables are emitted before they are read"))
            }
        }
    }

    fn expr(&mut self, e: &Expr, ctx: Context) -> Result<Operand, CompileError> {
        Ok(match e {
            Expr::Number(v, _) => Operand::Const(*v),
            Expr::Time(s) => {
                if ctx == Context::Constant {
                    return Err(self.err(
                        *s,
                        "`time` is not constant: only numbers and parameters are allowed here",
                    ));
                }
                Operand::Slot(Compiled::TIME as u32)
            }
            Expr::Var(n) => self.read(n, ctx)?,
            Expr::Pre(n, s) => {
                if ctx != Context::Reset {
                    return Err(self.err(
                        *s,
                        "`pre(x)` is only allowed on the right side of a `when` reset",
                    ));
                }
                self.read(n, ctx)?
            }
            Expr::Unary(op, a, _) => {
                let a = self.expr(a, ctx)?;
                match (op, a) {
                    (UnaryOp::Neg, Operand::Const(v)) => Operand::Const(-v),
                    (UnaryOp::Not, Operand::Const(v)) => Operand::Const(f::truth(v == 0.0)),
                    (UnaryOp::Neg, Operand::Slot(s)) => self.emit(|d| Instr::Neg(d, s)),
                    (UnaryOp::Not, Operand::Slot(s)) => self.emit(|d| Instr::Not(d, s)),
                }
            }
            Expr::Binary(BinaryOp::Add | BinaryOp::Sub, _, _, _) => self.sum(e, ctx)?,
            Expr::Binary(op, a, b, _) => {
                if let (BinaryOp::Div, Expr::Number(z, s)) = (op, &**b) {
                    if *z == 0.0 {
                        return Err(self.err(*s, "division by a literal zero"));
                    }
                }
                let (x, y) = (self.expr(a, ctx)?, self.expr(b, ctx)?);
                self.binary(*op, x, y)
            }
            Expr::If(branches, otherwise, _) => {
                let mut arms = Vec::new();
                for (c, v) in branches {
                    arms.push((self.expr(c, ctx)?, self.expr(v, ctx)?));
                }
                let mut result = self.expr(otherwise, ctx)?;
                for (c, v) in arms.into_iter().rev() {
                    result = match c {
                        Operand::Const(c) => {
                            if c != 0.0 {
                                v
                            } else {
                                result
                            }
                        }
                        Operand::Slot(c) => {
                            let (a, b) = (self.slot_of(v), self.slot_of(result));
                            self.emit(|d| Instr::Select(d, c, a, b))
                        }
                    };
                }
                result
            }
            Expr::Call(n, args, span) => {
                let Some(&(_, arity)) = FUNCTIONS.iter().find(|(f, _)| *f == n.text) else {
                    let known: Vec<&str> = FUNCTIONS.iter().map(|(f, _)| *f).collect();
                    let hint = if matches!(self.defs.get(&n.text), Some((Def::State(_), _))) {
                        " (hysteresis and backlash are declared as elements: `hysteresis name(...);`)"
                    } else {
                        ""
                    };
                    return Err(self.err(
                        n.span,
                        format!(
                            "unknown function `{}`{hint}; the functions are {}",
                            n.text,
                            known.join(", ")
                        ),
                    ));
                };
                if args.len() != arity {
                    return Err(self.err(
                        *span,
                        format!(
                            "`{}` takes {arity} argument{}, found {}",
                            n.text,
                            if arity == 1 { "" } else { "s" },
                            args.len()
                        ),
                    ));
                }
                let ops: Vec<Operand> = args
                    .iter()
                    .map(|a| self.expr(a, ctx))
                    .collect::<Result<_, _>>()?;
                self.call(&n.text, &ops)
            }
        })
    }

    fn binary(&mut self, op: BinaryOp, x: Operand, y: Operand) -> Operand {
        if let (Operand::Const(a), Operand::Const(b)) = (x, y) {
            return Operand::Const(match op {
                BinaryOp::Or => f::truth(a != 0.0 || b != 0.0),
                BinaryOp::And => f::truth(a != 0.0 && b != 0.0),
                BinaryOp::Eq => f::truth(a == b),
                BinaryOp::Ne => f::truth(a != b),
                BinaryOp::Le => f::truth(a <= b),
                BinaryOp::Ge => f::truth(a >= b),
                BinaryOp::Lt => f::truth(a < b),
                BinaryOp::Gt => f::truth(a > b),
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                BinaryOp::Div => a / b,
                BinaryOp::Pow if b == 2.0 => a * a,
                BinaryOp::Pow => a.powf(b),
            });
        }
        if op == BinaryOp::Pow && y == Operand::Const(2.0) {
            let a = self.slot_of(x);
            return self.emit(|d| Instr::Mul(d, a, a));
        }
        let (a, b) = (self.slot_of(x), self.slot_of(y));
        self.emit(|d| match op {
            BinaryOp::Or => Instr::Or(d, a, b),
            BinaryOp::And => Instr::And(d, a, b),
            BinaryOp::Eq => Instr::Eq(d, a, b),
            BinaryOp::Ne => Instr::Ne(d, a, b),
            BinaryOp::Le => Instr::Le(d, a, b),
            BinaryOp::Ge => Instr::Ge(d, a, b),
            BinaryOp::Lt => Instr::Lt(d, a, b),
            BinaryOp::Gt => Instr::Gt(d, a, b),
            BinaryOp::Add => Instr::Add(d, a, b),
            BinaryOp::Sub => Instr::Sub(d, a, b),
            BinaryOp::Mul => Instr::Mul(d, a, b),
            BinaryOp::Div => Instr::Div(d, a, b),
            BinaryOp::Pow => Instr::Pow(d, a, b),
        })
    }

    fn call(&mut self, name: &str, ops: &[Operand]) -> Operand {
        if ops.iter().all(|o| matches!(o, Operand::Const(_))) {
            let v: Vec<f64> = ops
                .iter()
                .map(|o| match o {
                    Operand::Const(v) => *v,
                    Operand::Slot(_) => unreachable!(),
                })
                .collect();
            return Operand::Const(match name {
                "sin" => v[0].sin(),
                "cos" => v[0].cos(),
                "tan" => v[0].tan(),
                "asin" => v[0].asin(),
                "acos" => v[0].acos(),
                "atan" => v[0].atan(),
                "exp" => v[0].exp(),
                "log" => v[0].ln(),
                "sqrt" => v[0].sqrt(),
                "abs" => v[0].abs(),
                "sign" => f::sign(v[0]),
                "atan2" => v[0].atan2(v[1]),
                "min" => f::min(v[0], v[1]),
                "max" => f::max(v[0], v[1]),
                "pow" => v[0].powf(v[1]),
                "deadzone" => f::deadzone(v[0], v[1]),
                _ => f::sat(v[0], v[1], v[2]),
            });
        }
        let s: Vec<u32> = ops.iter().map(|&o| self.slot_of(o)).collect();
        self.emit(|d| match name {
            "sin" => Instr::Sin(d, s[0]),
            "cos" => Instr::Cos(d, s[0]),
            "tan" => Instr::Tan(d, s[0]),
            "asin" => Instr::Asin(d, s[0]),
            "acos" => Instr::Acos(d, s[0]),
            "atan" => Instr::Atan(d, s[0]),
            "exp" => Instr::Exp(d, s[0]),
            "log" => Instr::Log(d, s[0]),
            "sqrt" => Instr::Sqrt(d, s[0]),
            "abs" => Instr::Abs(d, s[0]),
            "sign" => Instr::Sign(d, s[0]),
            "atan2" => Instr::Atan2(d, s[0], s[1]),
            "min" => Instr::Min(d, s[0], s[1]),
            "max" => Instr::Max(d, s[0], s[1]),
            "pow" => Instr::Pow(d, s[0], s[1]),
            "deadzone" => Instr::Deadzone(d, s[0], s[1]),
            _ => Instr::Sat(d, s[0], s[1], s[2]),
        })
    }

    /// One term of a sum: `(coefficient, value)` with the term's value
    /// exactly `coefficient * value` (module docs).
    fn term(&mut self, e: &Expr, ctx: Context) -> Result<(f64, Operand), CompileError> {
        match e {
            Expr::Unary(UnaryOp::Neg, a, _) => {
                let (c, v) = self.term(a, ctx)?;
                Ok((-c, v))
            }
            Expr::Binary(BinaryOp::Mul, a, b, _) => {
                let (x, y) = (self.expr(a, ctx)?, self.expr(b, ctx)?);
                Ok(match (x, y) {
                    (Operand::Const(k), Operand::Slot(_)) => (k, y),
                    (Operand::Slot(_), Operand::Const(k)) => (k, x),
                    _ => (1.0, self.binary(BinaryOp::Mul, x, y)),
                })
            }
            _ => Ok((1.0, self.expr(e, ctx)?)),
        }
    }

    /// A chain of `+` and `-` (left-associative): one `Lin` instruction.
    fn sum(&mut self, e: &Expr, ctx: Context) -> Result<Operand, CompileError> {
        let mut leaves: Vec<(bool, &Expr)> = Vec::new();
        let mut cur = e;
        while let Expr::Binary(op @ (BinaryOp::Add | BinaryOp::Sub), a, b, _) = cur {
            leaves.push((*op == BinaryOp::Sub, b));
            cur = a;
        }
        leaves.push((false, cur));
        leaves.reverse();
        let mut terms = Vec::with_capacity(leaves.len());
        for (negate, leaf) in leaves {
            let (c, v) = self.term(leaf, ctx)?;
            terms.push((if negate { -c } else { c }, v));
        }
        // Constant terms keep their value as the coefficient of a 1.
        let terms: Vec<(f64, Operand)> = terms
            .into_iter()
            .map(|(c, v)| match v {
                Operand::Const(k) => (c * k, Operand::Const(1.0)),
                v => (c, v),
            })
            .collect();
        if terms.iter().all(|(_, v)| matches!(v, Operand::Const(_))) {
            let mut acc = terms[0].0;
            for (c, _) in &terms[1..] {
                acc += c;
            }
            return Ok(Operand::Const(acc));
        }
        if let [(c0, a), (c1, b)] = terms[..] {
            if c0 == 1.0 && c1.abs() == 1.0 {
                let (a, b) = (self.slot_of(a), self.slot_of(b));
                return Ok(if c1 == 1.0 {
                    self.emit(|d| Instr::Add(d, a, b))
                } else {
                    self.emit(|d| Instr::Sub(d, a, b))
                });
            }
        }
        let start = self.terms.len() as u32;
        for (c, v) in &terms {
            let s = self.slot_of(*v);
            self.terms.push((*c, s));
        }
        let len = terms.len() as u32;
        Ok(self.emit(|d| Instr::Lin(d, start, len)))
    }

    /// Variables read by `e` (directly).
    fn reads(&self, e: &Expr, out: &mut Vec<usize>) {
        match e {
            Expr::Var(n) | Expr::Pre(n, _) => {
                if let Some((Def::Var(i), _)) = self.defs.get(&n.text) {
                    out.push(*i);
                }
            }
            Expr::Number(..) | Expr::Time(_) => {}
            Expr::Unary(_, a, _) => self.reads(a, out),
            Expr::Binary(_, a, b, _) => {
                self.reads(a, out);
                self.reads(b, out);
            }
            Expr::If(branches, otherwise, _) => {
                for (c, v) in branches {
                    self.reads(c, out);
                    self.reads(v, out);
                }
                self.reads(otherwise, out);
            }
            Expr::Call(_, args, _) => args.iter().for_each(|a| self.reads(a, out)),
        }
    }

    /// Sorts the variables (depth first, in written order); a cycle is an
    /// algebraic loop.
    fn sort(&mut self) -> Result<(), CompileError> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Busy,
            Done,
        }
        let n = self.vars.len();
        let deps: Vec<Vec<usize>> = (0..n)
            .map(|i| {
                let mut d = Vec::new();
                self.reads(&self.vars[i].1, &mut d);
                d
            })
            .collect();
        let mut mark = vec![Mark::New; n];
        let mut order = Vec::with_capacity(n);
        for root in 0..n {
            if mark[root] != Mark::New {
                continue;
            }
            // Iterative DFS with an explicit path, to name a cycle.
            let mut path: Vec<(usize, usize)> = vec![(root, 0)];
            mark[root] = Mark::Busy;
            while let Some(&mut (v, ref mut k)) = path.last_mut() {
                if *k < deps[v].len() {
                    let w = deps[v][*k];
                    *k += 1;
                    match mark[w] {
                        Mark::New => {
                            mark[w] = Mark::Busy;
                            path.push((w, 0));
                        }
                        Mark::Busy => {
                            let from = path.iter().position(|&(p, _)| p == w).unwrap_or(0);
                            let mut names: Vec<&str> = path[from..]
                                .iter()
                                .map(|&(p, _)| self.vars[p].0.text.as_str())
                                .collect();
                            names.push(&self.vars[w].0.text);
                            return Err(self.err(
                                self.vars[w].0.span,
                                format!(
                                    "algebraic loop: {} (these equations depend on each other; break the cycle, e.g. with a state)",
                                    names.join(" -> ")
                                ),
                            ));
                        }
                        Mark::Done => {}
                    }
                } else {
                    mark[v] = Mark::Done;
                    order.push(v);
                    path.pop();
                }
            }
        }
        self.order = order;
        Ok(())
    }

    /// Starts a program whose roots read `roots`: emits the variables they
    /// need, in sorted order.
    fn begin(&mut self, roots: &[&Expr]) -> Result<(), CompileError> {
        self.code = Vec::new();
        self.var_ops = vec![None; self.vars.len()];
        let mut need = vec![false; self.vars.len()];
        let mut stack = Vec::new();
        for r in roots {
            self.reads(r, &mut stack);
        }
        while let Some(v) = stack.pop() {
            if !need[v] {
                need[v] = true;
                let mut more = Vec::new();
                self.reads(&self.vars[v].1, &mut more);
                stack.extend(more);
            }
        }
        for k in 0..self.order.len() {
            let v = self.order[k];
            if need[v] {
                let e = self.vars[v].1.clone();
                self.var_ops[v] = Some(self.expr(&e, Context::Run)?);
            }
        }
        Ok(())
    }

    fn finish(&mut self, results: Vec<Operand>) -> Program {
        let results = results.into_iter().map(|o| self.slot_of(o)).collect();
        // Slots and terms only grow after this, so the check holds for the
        // model's final arrays.
        Program {
            code: Checked::new(
                std::mem::take(&mut self.code),
                &self.terms,
                self.slots.len(),
            ),
            results,
        }
    }

    fn build(mut self) -> Result<Compiled, CompileError> {
        // Slots: time, states, inputs; then constants and temporaries.
        self.slots = vec![0.0; Compiled::STATES + self.states.len() + self.inputs.len()];
        for i in 0..self.params.len() {
            let span = self.params[i].0.span;
            self.param_value(i, span)?;
        }
        self.elements_resolve()?;
        let mut x0 = Vec::with_capacity(self.states.len());
        for i in 0..self.states.len() {
            let (n, start) = self.states[i].clone();
            let v = match (&start, self.relays.iter().find(|r| r.state == i)) {
                (Some(e), _) => self.constant(e, &format!("the start of `{}`", n.text))?,
                (None, Some(r)) => r.off,
                (None, None) => 0.0,
            };
            x0.push(v);
        }
        // Backlash elements start at their input (mid-band) unless given.
        for b in self.backlashes.clone() {
            if self.states[b.state].1.is_none() {
                x0[b.state] = x0[b.input];
            }
        }
        self.sort()?;

        // Derivatives.
        let ders: Vec<Option<Expr>> = self.ders.clone();
        let roots: Vec<&Expr> = ders.iter().flatten().collect();
        let relay_inputs: Vec<Expr> = self.relays.iter().map(|r| r.input.clone()).collect();
        self.begin(&roots)?;
        let mut results = Vec::with_capacity(self.states.len());
        for d in &ders {
            results.push(match d {
                Some(e) => self.expr(e, Context::Run)?,
                None => Operand::Const(0.0),
            });
        }
        for b in self.backlashes.clone() {
            results[b.state] = self.backlash_rate(&b, results[b.input]);
        }
        let derivative = self.finish(results);

        // Outputs.
        let outputs: Vec<Expr> = self.outputs.iter().map(|n| Expr::Var(n.clone())).collect();
        for n in &self.outputs {
            if !self.defs.contains_key(&n.text) {
                return Err(self.undefined(n));
            }
        }
        self.begin(&outputs.iter().collect::<Vec<_>>())?;
        let mut results = Vec::new();
        for o in &outputs {
            results.push(self.expr(o, Context::Run)?);
        }
        let output = self.finish(results);

        // Guards: each `when`, then each relay.
        let whens = self.whens.clone();
        let mut guard_exprs = Vec::new();
        for (cond, _, span) in &whens {
            let g = match cond {
                Expr::Binary(BinaryOp::Lt | BinaryOp::Le, a, b, s) => {
                    Expr::Binary(BinaryOp::Sub, a.clone(), b.clone(), *s)
                }
                Expr::Binary(BinaryOp::Gt | BinaryOp::Ge, a, b, s) => {
                    Expr::Binary(BinaryOp::Sub, b.clone(), a.clone(), *s)
                }
                _ => {
                    return Err(self.err(
                        if cond.span().end > cond.span().start { cond.span() } else { *span },
                        "a `when` condition must be one comparison: `a < b`, `a <= b`, `a > b` or `a >= b`",
                    ))
                }
            };
            guard_exprs.push(g);
        }
        let mut roots: Vec<&Expr> = guard_exprs.iter().collect();
        roots.extend(relay_inputs.iter());
        self.begin(&roots)?;
        let mut results = Vec::new();
        for g in &guard_exprs {
            results.push(self.expr(g, Context::Run)?);
        }
        for r in self.relays.clone() {
            results.push(self.relay_guard(&r)?);
        }
        let guards = self.finish(results);

        // Resets.
        let mut resets = Vec::new();
        for (_, assigns, _) in &whens {
            let mut targets = Vec::new();
            for (n, _) in assigns {
                match self.defs.get(&n.text).map(|d| d.0) {
                    None => return Err(self.undefined(n)),
                    Some(Def::State(i)) if self.ders[i].is_some() => {
                        if targets.contains(&i) {
                            return Err(self.err(
                                n.span,
                                format!("`{}` is reset twice in one `when`", n.text),
                            ));
                        }
                        targets.push(i);
                    }
                    Some(d) => {
                        return Err(self.err(
                            n.span,
                            format!(
                                "a `when` can only reset states: `{}` is {}",
                                n.text,
                                if matches!(d, Def::State(_)) {
                                    "an element"
                                } else {
                                    d.what()
                                }
                            ),
                        ))
                    }
                }
            }
            let values: Vec<&Expr> = assigns.iter().map(|(_, e)| e).collect();
            self.begin(&values)?;
            let mut results = Vec::new();
            for v in &values {
                results.push(self.expr(v, Context::Reset)?);
            }
            resets.push(ResetProgram {
                program: self.finish(results),
                targets,
            });
        }
        for r in self.relays.clone() {
            // Toggle: on -> off, anything else -> on.
            let s = self.slot_of(Operand::Slot((Compiled::STATES + r.state) as u32));
            let on = self.const_slot(r.on);
            let off = self.const_slot(r.off);
            self.code = Vec::new();
            let is_on = self.emit(|d| Instr::Eq(d, s, on));
            let Operand::Slot(c) = is_on else {
                unreachable!()
            };
            let next = self.emit(|d| Instr::Select(d, c, off, on));
            resets.push(ResetProgram {
                program: self.finish(vec![next]),
                targets: vec![r.state],
            });
        }

        Ok(Compiled {
            state_names: self.states.iter().map(|(n, _)| n.text.clone()).collect(),
            input_names: self.inputs.iter().map(|n| n.text.clone()).collect(),
            output_names: self.outputs.iter().map(|n| n.text.clone()).collect(),
            parameter_names: self.params.iter().map(|(n, _)| n.text.clone()).collect(),
            parameter_values: self.param_values.iter().map(|v| v.unwrap_or(0.0)).collect(),
            x0,
            slots: self.slots,
            terms: self.terms,
            derivative,
            output,
            guards,
            resets,
        })
    }

    /// Checks the elements' arguments and records them.
    fn elements_resolve(&mut self) -> Result<(), CompileError> {
        for (kind, n, args, span) in self.elements.clone() {
            let Def::State(state) = self.defs[&n.text].0 else {
                unreachable!()
            };
            match kind {
                ElementKind::Hysteresis => {
                    if !(5..=6).contains(&args.len()) {
                        return Err(self.err(span, format!(
                            "`hysteresis {}(input, low, high, off, on[, start])` takes 5 or 6 arguments, found {}",
                            n.text, args.len()
                        )));
                    }
                    let low = self.constant(&args[1], "a hysteresis's `low`")?;
                    let high = self.constant(&args[2], "a hysteresis's `high`")?;
                    if low > high {
                        return Err(self.err(
                            args[1].span().to(args[2].span()),
                            format!("hysteresis `{}`: low {low} is above high {high}", n.text),
                        ));
                    }
                    let off = self.constant(&args[3], "a hysteresis's `off`")?;
                    let on = self.constant(&args[4], "a hysteresis's `on`")?;
                    if let Some(start) = args.get(5) {
                        self.states[state].1 = Some(start.clone());
                    }
                    self.relays.push(Relay {
                        state,
                        input: args[0].clone(),
                        low,
                        high,
                        off,
                        on,
                    });
                }
                ElementKind::Backlash => {
                    if !(2..=3).contains(&args.len()) {
                        return Err(self.err(
                            span,
                            format!(
                            "`backlash {}(input, width[, start])` takes 2 or 3 arguments, found {}",
                            n.text, args.len()
                        ),
                        ));
                    }
                    let input = match &args[0] {
                        Expr::Var(x) => match self.defs.get(&x.text).map(|d| d.0) {
                            Some(Def::State(i)) if self.ders[i].is_some() => i,
                            None => return Err(self.undefined(x)),
                            _ => {
                                return Err(self.err(
                                    x.span,
                                    format!(
                                    "a backlash's input must be a state (it moves with `der({})`)",
                                    x.text
                                ),
                                ))
                            }
                        },
                        other => {
                            return Err(self.err(
                                other.span(),
                                "a backlash's input must be a state (it moves with its `der`)",
                            ))
                        }
                    };
                    let width = self.constant(&args[1], "a backlash's `width`")?;
                    if width < 0.0 {
                        return Err(self.err(
                            args[1].span(),
                            format!("backlash `{}`: width {width} is negative", n.text),
                        ));
                    }
                    if let Some(start) = args.get(2) {
                        self.states[state].1 = Some(start.clone());
                    }
                    self.backlashes.push(Backlash {
                        state,
                        input,
                        half_width: 0.5 * width,
                    });
                }
            }
        }
        Ok(())
    }

    /// A relay's guard: while on, `input - low`; while off, `high - input`.
    fn relay_guard(&mut self, r: &Relay) -> Result<Operand, CompileError> {
        let x = self.expr(&r.input, Context::Run)?;
        let x = self.slot_of(x);
        let s = (Compiled::STATES + r.state) as u32;
        let (on, low, high) = (
            self.const_slot(r.on),
            self.const_slot(r.low),
            self.const_slot(r.high),
        );
        let Operand::Slot(is_on) = self.emit(|d| Instr::Eq(d, s, on)) else {
            unreachable!()
        };
        let Operand::Slot(a) = self.emit(|d| Instr::Sub(d, x, low)) else {
            unreachable!()
        };
        let Operand::Slot(b) = self.emit(|d| Instr::Sub(d, high, x)) else {
            unreachable!()
        };
        Ok(self.emit(|d| Instr::Select(d, is_on, a, b)))
    }

    /// A backlash's rate: the input's rate while it pushes on an edge of
    /// the band (`x - y >= w/2` moving up, `y - x >= w/2` moving down),
    /// else 0.
    fn backlash_rate(&mut self, b: &Backlash, dx: Operand) -> Operand {
        let x = (Compiled::STATES + b.input) as u32;
        let y = (Compiled::STATES + b.state) as u32;
        let dx = self.slot_of(dx);
        let (hw, zero) = (self.const_slot(b.half_width), self.const_slot(0.0));
        let op = |me: &mut Self, make: &dyn Fn(u32) -> Instr| -> u32 {
            match me.emit(make) {
                Operand::Slot(s) => s,
                Operand::Const(_) => unreachable!(),
            }
        };
        let up_gap = op(self, &|d| Instr::Sub(d, x, y));
        let down_gap = op(self, &|d| Instr::Sub(d, y, x));
        let at_top = op(self, &|d| Instr::Ge(d, up_gap, hw));
        let at_bottom = op(self, &|d| Instr::Ge(d, down_gap, hw));
        let rising = op(self, &|d| Instr::Gt(d, dx, zero));
        let falling = op(self, &|d| Instr::Lt(d, dx, zero));
        let push_up = op(self, &|d| Instr::And(d, at_top, rising));
        let push_down = op(self, &|d| Instr::And(d, at_bottom, falling));
        let pushed = op(self, &|d| Instr::Or(d, push_up, push_down));
        Operand::Slot(op(self, &|d| Instr::Select(d, pushed, dx, zero)))
    }
}
