//! Math blocks: `gain` (scalar or matrix), `sum` with signs, `product` and
//! divide, `function` (abs, sign, sqrt, exp, log, trigonometric, ...),
//! `min`/`max`, `power`, `relational`, `logic` and `expr`, an expression of
//! the input elements in the equation language. All are direct
//! feedthrough, stateless and evaluated at every step.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::common::{finite, matrix, numbered, one, output_only, port, two, width};
use crate::equations::{CompileError, EquationModel, Source as EqSource};
use crate::error::ConfigError;
use crate::graph::{Component, Ctx, Inputs, Lowered, Outputs, PortSpec};
use crate::key_path::KeyPath;
use crate::plant::Plant;

/// A gain: a number (element-wise, `width` elements) or a matrix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum GainValue {
    Scalar(f64),
    Matrix(Vec<Vec<f64>>),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GainConfig {
    /// `y = k u`: a number, or a matrix (rows = outputs, columns = inputs).
    pub k: GainValue,
    /// Elements, for a scalar `k`.
    #[serde(default = "one")]
    pub width: usize,
}

/// `y = k u`.
#[derive(Clone, Debug)]
pub struct Gain {
    rows: usize,
    cols: usize,
    /// Row-major; one entry for a scalar gain.
    k: Vec<f64>,
    scalar: bool,
}

impl Gain {
    pub fn new(key: &KeyPath, c: &GainConfig) -> Result<Self, ConfigError> {
        match &c.k {
            GainValue::Scalar(k) => Ok(Gain {
                rows: width(&key.child("width"), c.width)?,
                cols: c.width,
                k: vec![finite(&key.child("k"), *k)?],
                scalar: true,
            }),
            GainValue::Matrix(m) => {
                let (rows, cols, k) = matrix(&key.child("k"), m)?;
                width(&key.child("k"), rows)?;
                width(&key.child("k").at(0), cols)?;
                Ok(Gain {
                    rows,
                    cols,
                    k,
                    scalar: false,
                })
            }
        }
    }
}

impl Component for Gain {
    output_only!(|b| port("u", b.cols), port("y", b.rows));

    fn lower(&self) -> Option<Lowered> {
        Some(if self.scalar {
            Lowered::Scale(self.k[0])
        } else {
            Lowered::Matrix {
                cols: self.cols,
                k: self.k.clone(),
            }
        })
    }

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        let u = u.all();
        let y = y.all();
        if self.scalar {
            let k = self.k[0];
            for (yi, ui) in y.iter_mut().zip(u) {
                *yi = k * ui;
            }
        } else {
            for (i, yi) in y.iter_mut().enumerate() {
                let row = &self.k[i * self.cols..(i + 1) * self.cols];
                *yi = row.iter().zip(u).fold(0.0, |s, (a, b)| s + a * b);
            }
        }
    }
}

fn default_signs() -> String {
    "++".into()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SumConfig {
    /// One `+` or `-` per input `u0`, `u1`, ...: `"+-"` is `u0 - u1`.
    #[serde(default = "default_signs")]
    pub signs: String,
    #[serde(default = "one")]
    pub width: usize,
}

/// `y = ±u0 ± u1 ± ...`, summed left to right from 0.
#[derive(Clone, Debug)]
pub struct Sum {
    signs: Vec<f64>,
    width: usize,
}

impl Sum {
    pub fn new(key: &KeyPath, c: &SumConfig) -> Result<Self, ConfigError> {
        let signs = c
            .signs
            .chars()
            .map(|ch| match ch {
                '+' => Ok(1.0),
                '-' => Ok(-1.0),
                _ => Err(ConfigError::invalid(
                    key.child("signs"),
                    format!("`{ch}` is not `+` or `-`"),
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        width(&key.child("signs"), signs.len())?;
        Ok(Sum {
            signs,
            width: width(&key.child("width"), c.width)?,
        })
    }
}

impl Component for Sum {
    output_only!(
        |b| numbered("u", b.signs.len(), b.width),
        port("y", b.width)
    );

    fn lower(&self) -> Option<Lowered> {
        Some(Lowered::SignedSum {
            negative: self.signs.iter().map(|&sign| sign <= 0.0).collect(),
        })
    }

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        let y = y.port(0);
        for (e, yi) in y.iter_mut().enumerate() {
            let mut s = 0.0;
            for (p, &sign) in self.signs.iter().enumerate() {
                let v = u.port(p)[e];
                s = if sign > 0.0 { s + v } else { s - v };
            }
            *yi = s;
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProductConfig {
    /// One `*` or `/` per input: `"*/"` is `u0 / u1`.
    #[serde(default = "default_ops")]
    pub ops: String,
    #[serde(default = "one")]
    pub width: usize,
}

fn default_ops() -> String {
    "**".into()
}

/// `y = 1 (*|/) u0 (*|/) u1 ...`, element-wise, left to right.
#[derive(Clone, Debug)]
pub struct Product {
    divide: Vec<bool>,
    width: usize,
}

impl Product {
    pub fn new(key: &KeyPath, c: &ProductConfig) -> Result<Self, ConfigError> {
        let divide = c
            .ops
            .chars()
            .map(|ch| match ch {
                '*' => Ok(false),
                '/' => Ok(true),
                _ => Err(ConfigError::invalid(
                    key.child("ops"),
                    format!("`{ch}` is not `*` or `/`"),
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        width(&key.child("ops"), divide.len())?;
        Ok(Product {
            divide,
            width: width(&key.child("width"), c.width)?,
        })
    }
}

impl Component for Product {
    output_only!(
        |b| numbered("u", b.divide.len(), b.width),
        port("y", b.width)
    );

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        let y = y.port(0);
        for (e, yi) in y.iter_mut().enumerate() {
            // The first factor as it is (`u0 / u1` is that, not `1 * u0 / u1`).
            let mut s = if self.divide[0] {
                1.0 / u.port(0)[e]
            } else {
                u.port(0)[e]
            };
            for (p, &div) in self.divide.iter().enumerate().skip(1) {
                let v = u.port(p)[e];
                s = if div { s / v } else { s * v };
            }
            *yi = s;
        }
    }
}

/// The element-wise functions of the `function` block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FunctionKind {
    Abs,
    Sign,
    Sqrt,
    Exp,
    Log,
    Log10,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Square,
    Reciprocal,
    Floor,
    Ceil,
    Round,
}

impl FunctionKind {
    #[inline]
    fn apply(self, x: f64) -> f64 {
        use FunctionKind as F;
        match self {
            F::Abs => x.abs(),
            F::Sign => {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    x
                }
            }
            F::Sqrt => x.sqrt(),
            F::Exp => x.exp(),
            F::Log => x.ln(),
            F::Log10 => x.log10(),
            F::Sin => x.sin(),
            F::Cos => x.cos(),
            F::Tan => x.tan(),
            F::Asin => x.asin(),
            F::Acos => x.acos(),
            F::Atan => x.atan(),
            F::Sinh => x.sinh(),
            F::Cosh => x.cosh(),
            F::Tanh => x.tanh(),
            F::Square => x * x,
            F::Reciprocal => 1.0 / x,
            F::Floor => x.floor(),
            F::Ceil => x.ceil(),
            F::Round => x.round(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionConfig {
    pub function: FunctionKind,
    #[serde(default = "one")]
    pub width: usize,
}

/// `y = f(u)` element-wise.
#[derive(Clone, Debug)]
pub struct Function {
    f: FunctionKind,
    width: usize,
}

impl Function {
    pub fn new(key: &KeyPath, c: &FunctionConfig) -> Result<Self, ConfigError> {
        Ok(Function {
            f: c.function,
            width: width(&key.child("width"), c.width)?,
        })
    }
}

impl Component for Function {
    output_only!(|b| port("u", b.width), port("y", b.width));

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        for (yi, &ui) in y.all().iter_mut().zip(u.all()) {
            *yi = self.f.apply(ui);
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MinMaxConfig {
    /// Number of inputs `u0`, `u1`, ...
    #[serde(default = "two")]
    pub inputs: usize,
    #[serde(default = "one")]
    pub width: usize,
}

/// `min` / `max` of its inputs, element-wise.
#[derive(Clone, Debug)]
pub struct MinMax {
    max: bool,
    inputs: usize,
    width: usize,
}

impl MinMax {
    pub fn new(key: &KeyPath, c: &MinMaxConfig, max: bool) -> Result<Self, ConfigError> {
        Ok(MinMax {
            max,
            inputs: width(&key.child("inputs"), c.inputs)?,
            width: width(&key.child("width"), c.width)?,
        })
    }
}

impl Component for MinMax {
    output_only!(|b| numbered("u", b.inputs, b.width), port("y", b.width));

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        for (e, yi) in y.port(0).iter_mut().enumerate() {
            let mut m = u.port(0)[e];
            for p in 1..self.inputs {
                let v = u.port(p)[e];
                m = if self.max { m.max(v) } else { m.min(v) };
            }
            *yi = m;
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerConfig {
    /// `y = u ^ exponent`.
    pub exponent: f64,
    #[serde(default = "one")]
    pub width: usize,
}

/// `y = u ^ exponent` element-wise (`powi` for a whole exponent).
#[derive(Clone, Debug)]
pub struct Power {
    exponent: f64,
    width: usize,
}

impl Power {
    pub fn new(key: &KeyPath, c: &PowerConfig) -> Result<Self, ConfigError> {
        Ok(Power {
            exponent: finite(&key.child("exponent"), c.exponent)?,
            width: width(&key.child("width"), c.width)?,
        })
    }
}

impl Component for Power {
    output_only!(|b| port("u", b.width), port("y", b.width));

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        for (yi, &ui) in y.all().iter_mut().zip(u.all()) {
            *yi = ui.powf(self.exponent);
        }
    }
}

/// A comparison of `u0` with `u1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RelOp {
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = "==")]
    Eq,
    #[serde(rename = "!=")]
    Ne,
}

impl RelOp {
    #[inline]
    pub(crate) fn holds(self, a: f64, b: f64) -> bool {
        match self {
            RelOp::Lt => a < b,
            RelOp::Le => a <= b,
            RelOp::Gt => a > b,
            RelOp::Ge => a >= b,
            RelOp::Eq => a == b,
            RelOp::Ne => a != b,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelationalConfig {
    /// `"<"`, `"<="`, `">"`, `">="`, `"=="` or `"!="`.
    pub op: RelOp,
    #[serde(default = "one")]
    pub width: usize,
}

/// `y = 1` where `u0 op u1` holds, else 0.
#[derive(Clone, Debug)]
pub struct Relational {
    op: RelOp,
    width: usize,
}

impl Relational {
    pub fn new(key: &KeyPath, c: &RelationalConfig) -> Result<Self, ConfigError> {
        Ok(Relational {
            op: c.op,
            width: width(&key.child("width"), c.width)?,
        })
    }
}

impl Component for Relational {
    output_only!(|b| numbered("u", 2, b.width), port("y", b.width));

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        let (a, b) = (u.port(0), u.port(1));
        for (e, yi) in y.port(0).iter_mut().enumerate() {
            *yi = if self.op.holds(a[e], b[e]) { 1.0 } else { 0.0 };
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogicOp {
    And,
    Or,
    Xor,
    Nand,
    Nor,
    Not,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogicConfig {
    pub op: LogicOp,
    /// Number of inputs (`not`: 1).
    #[serde(default = "two")]
    pub inputs: usize,
    #[serde(default = "one")]
    pub width: usize,
}

/// Boolean logic on "non-zero is true": `y` is 1 or 0.
#[derive(Clone, Debug)]
pub struct Logic {
    op: LogicOp,
    inputs: usize,
    width: usize,
}

impl Logic {
    pub fn new(key: &KeyPath, c: &LogicConfig) -> Result<Self, ConfigError> {
        let inputs = if c.op == LogicOp::Not {
            1
        } else {
            width(&key.child("inputs"), c.inputs)?
        };
        Ok(Logic {
            op: c.op,
            inputs,
            width: width(&key.child("width"), c.width)?,
        })
    }
}

impl Component for Logic {
    output_only!(|b| numbered("u", b.inputs, b.width), port("y", b.width));

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        for (e, yi) in y.port(0).iter_mut().enumerate() {
            let trues = (0..self.inputs).filter(|&p| u.port(p)[e] != 0.0).count();
            let v = match self.op {
                LogicOp::And => trues == self.inputs,
                LogicOp::Or => trues > 0,
                LogicOp::Xor => trues % 2 == 1,
                LogicOp::Nand => trues != self.inputs,
                LogicOp::Nor => trues == 0,
                LogicOp::Not => trues == 0,
            };
            *yi = if v { 1.0 } else { 0.0 };
        }
    }
}

/// One expression, or one per output element.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Expressions {
    One(String),
    Many(Vec<String>),
}

impl Expressions {
    pub(crate) fn list(&self) -> Vec<String> {
        match self {
            Expressions::One(s) => vec![s.clone()],
            Expressions::Many(v) => v.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExprConfig {
    /// `y = expr(u)`: an expression of the equation language over `u[0]`,
    /// `u[1]`, ... (or `u` when `inputs = 1`), `time` and the
    /// `parameters`; a list gives one output element each.
    pub expr: Expressions,
    /// Elements of the input `u`; 0 for none (a function of `time`).
    #[serde(default = "one")]
    pub inputs: usize,
    /// Named constants the expression uses.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, f64>,
}

/// Expressions compiled once by the equation language's compiler to its
/// register program (no allocation, no names per evaluation).
#[derive(Clone, Debug)]
pub struct ExprProgram {
    model: EquationModel,
    inputs: usize,
    outputs: usize,
}

impl ExprProgram {
    /// Compiles `exprs` over `inputs` input elements; `key` names the
    /// `expr` key in errors.
    pub(crate) fn new(
        key: &KeyPath,
        exprs: &[String],
        inputs: usize,
        parameters: &BTreeMap<String, f64>,
    ) -> Result<Self, ConfigError> {
        if inputs > 0 {
            width(&key.child("inputs"), inputs)?;
        }
        width(key, exprs.len())?;
        let mut text = String::new();
        for (name, v) in parameters {
            finite(&key.child("parameters").and(name), *v)?;
            text.push_str(&format!("parameter {name} = {v:e};\n"));
        }
        for i in 0..inputs {
            text.push_str(&format!("input u_{i};\n"));
        }
        if inputs == 1 {
            text.push_str("u = u_0;\n");
        }
        for (j, e) in exprs.iter().enumerate() {
            if e.contains(';') {
                return Err(ConfigError::invalid(
                    key.clone().at(j),
                    "an expression has no `;`",
                ));
            }
            text.push_str(&format!("output y_{j} = {};\n", index_to_names(e)));
        }
        let source = EqSource {
            name: key.to_string(),
            text,
        };
        let model = EquationModel::new(&source, &BTreeMap::new()).map_err(|e| match e {
            CompileError::Source(e) => {
                ConfigError::invalid(key, format!("in the expression: {}", e.message))
            }
            CompileError::UnknownParameter(u) => {
                ConfigError::invalid(key, format!("unknown parameter {}", u.name))
            }
        })?;
        Ok(ExprProgram {
            model,
            inputs,
            outputs: exprs.len(),
        })
    }

    #[inline]
    pub(crate) fn eval(&self, t: f64, u: &[f64], y: &mut [f64]) {
        self.model.output(t, &[], u, y);
    }

    pub(crate) fn outputs(&self) -> usize {
        self.outputs
    }

    /// The input `u`, none when the expressions read no input.
    pub(crate) fn input_port(&self) -> Vec<PortSpec> {
        if self.inputs == 0 {
            Vec::new()
        } else {
            vec![PortSpec::new("u", self.inputs)]
        }
    }
}

/// `u[3]` -> `u_3` (the equation language has no indexing).
fn index_to_names(e: &str) -> String {
    let mut out = String::with_capacity(e.len());
    let b = e.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let prev_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i] == b'u' && !prev_ident && b.get(i + 1) == Some(&b'[') {
            let digits: String = e[i + 2..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            if !digits.is_empty() && b.get(i + 2 + digits.len()) == Some(&b']') {
                out.push_str("u_");
                out.push_str(&digits);
                i += 3 + digits.len();
                continue;
            }
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

/// `expr`: `y[j] = expr_j(u, time)`.
#[derive(Clone, Debug)]
pub struct Expr {
    program: ExprProgram,
}

impl Expr {
    pub fn new(key: &KeyPath, c: &ExprConfig) -> Result<Self, ConfigError> {
        Ok(Expr {
            program: ExprProgram::new(&key.child("expr"), &c.expr.list(), c.inputs, &c.parameters)?,
        })
    }
}

impl Component for Expr {
    output_only!(|b| b.program.input_port(), port("y", b.program.outputs()));

    fn output(&mut self, cx: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        self.program
            .eval(super::common::secs(cx.now), u.all(), y.all());
    }
}
