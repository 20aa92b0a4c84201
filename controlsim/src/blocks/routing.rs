//! Routing blocks: `mux`, `demux`, `selector`, `switch`, and the
//! If/IfAction/Merge pattern: an `if` block tests its conditions in order
//! and sets one element of its `action` output (the first condition that
//! holds, else the last, the `else` branch); an `if_action` block computes
//! its expressions only while its `action` input is set and holds its
//! output otherwise; a `merge` block passes on the input whose `action`
//! element is set.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::common::{numbered, one, output_only, port, two, width, Values};
use super::math::{ExprProgram, Expressions, RelOp};
use crate::error::ConfigError;
use crate::graph::{Component, Ctx, Inputs, Outputs, PortSpec};
use crate::key_path::KeyPath;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MuxConfig {
    /// Elements of each input `u0`, `u1`, ...; `y` is them one after the other.
    pub widths: Vec<usize>,
}

/// `mux`: concatenates its inputs.
#[derive(Clone, Debug)]
pub struct Mux {
    widths: Vec<usize>,
}

impl Mux {
    pub fn new(key: &KeyPath, c: &MuxConfig) -> Result<Self, ConfigError> {
        width(&key.child("widths"), c.widths.len())?;
        for (i, &w) in c.widths.iter().enumerate() {
            width(&key.child("widths").at(i), w)?;
        }
        width(&key.child("widths"), c.widths.iter().sum())?;
        Ok(Mux {
            widths: c.widths.clone(),
        })
    }
}

impl Component for Mux {
    output_only!(
        |b| b
            .widths
            .iter()
            .enumerate()
            .map(|(i, &w)| PortSpec::new(format!("u{i}"), w))
            .collect(),
        port("y", b.widths.iter().sum()),
    );

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        // Inputs are stored port after port: the concatenation.
        y.all().copy_from_slice(u.all());
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DemuxConfig {
    /// Elements of each output `y0`, `y1`, ...; `u` is them one after the other.
    pub widths: Vec<usize>,
}

/// `demux`: splits its input.
#[derive(Clone, Debug)]
pub struct Demux {
    widths: Vec<usize>,
}

impl Demux {
    pub fn new(key: &KeyPath, c: &DemuxConfig) -> Result<Self, ConfigError> {
        Mux::new(
            key,
            &MuxConfig {
                widths: c.widths.clone(),
            },
        )?;
        Ok(Demux {
            widths: c.widths.clone(),
        })
    }
}

impl Component for Demux {
    output_only!(
        |b| port("u", b.widths.iter().sum()),
        b.widths
            .iter()
            .enumerate()
            .map(|(i, &w)| PortSpec::new(format!("y{i}"), w))
            .collect(),
    );

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        y.all().copy_from_slice(u.all());
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectorConfig {
    /// Which elements of `u`, in the order `y` has them (repeats allowed).
    pub indices: Vec<usize>,
    /// Elements of `u`.
    pub width: usize,
}

/// `selector`: `y[j] = u[indices[j]]`.
#[derive(Clone, Debug)]
pub struct Selector {
    indices: Vec<usize>,
    width: usize,
}

impl Selector {
    pub fn new(key: &KeyPath, c: &SelectorConfig) -> Result<Self, ConfigError> {
        let w = width(&key.child("width"), c.width)?;
        width(&key.child("indices"), c.indices.len())?;
        if let Some(j) = c.indices.iter().position(|&i| i >= w) {
            return Err(ConfigError::invalid(
                key.child("indices").at(j),
                format!("{} is past the input's {w} elements", c.indices[j]),
            ));
        }
        Ok(Selector {
            indices: c.indices.clone(),
            width: w,
        })
    }
}

impl Component for Selector {
    output_only!(|b| port("u", b.width), port("y", b.indices.len()));

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        let u = u.all();
        for (yi, &i) in y.all().iter_mut().zip(&self.indices) {
            *yi = u[i];
        }
    }
}

fn ge() -> RelOp {
    RelOp::Ge
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// `y = u0` while `control op threshold` holds, else `u1`.
    #[serde(default = "ge")]
    pub op: RelOp,
    #[serde(default)]
    pub threshold: f64,
    #[serde(default = "one")]
    pub width: usize,
}

/// `switch`: passes `u0` or `u1` by its one-element `control` input.
#[derive(Clone, Debug)]
pub struct Switch {
    op: RelOp,
    threshold: f64,
    width: usize,
}

impl Switch {
    pub fn new(key: &KeyPath, c: &SwitchConfig) -> Result<Self, ConfigError> {
        Ok(Switch {
            op: c.op,
            threshold: super::common::finite(&key.child("threshold"), c.threshold)?,
            width: width(&key.child("width"), c.width)?,
        })
    }
}

impl Component for Switch {
    output_only!(
        |b| vec![
            PortSpec::new("u0", b.width),
            PortSpec::new("control", 1),
            PortSpec::new("u1", b.width),
        ],
        port("y", b.width),
    );

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        let pass = if self.op.holds(u.port(1)[0], self.threshold) {
            0
        } else {
            2
        };
        y.all().copy_from_slice(u.port(pass));
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IfConfig {
    /// Conditions over `u[0]`, `u[1]`, ... (or `u`), tested in order: the
    /// first that holds (non-zero) sets its `action` element; none sets the
    /// last (the `else` branch).
    pub conditions: Expressions,
    /// Elements of `u`.
    #[serde(default = "one")]
    pub inputs: usize,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, f64>,
}

/// `if`: one-hot `action` output, one element per condition plus `else`.
#[derive(Clone, Debug)]
pub struct If {
    program: ExprProgram,
    truth: Vec<f64>,
}

impl If {
    pub fn new(key: &KeyPath, c: &IfConfig) -> Result<Self, ConfigError> {
        let program = ExprProgram::new(
            &key.child("conditions"),
            &c.conditions.list(),
            c.inputs,
            &c.parameters,
        )?;
        Ok(If {
            truth: vec![0.0; program.outputs()],
            program,
        })
    }
}

impl Component for If {
    output_only!(
        |b| b.program.input_port(),
        port("action", b.truth.len() + 1)
    );

    fn output(&mut self, cx: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        self.program
            .eval(super::common::secs(cx.now), u.all(), &mut self.truth);
        let taken = self
            .truth
            .iter()
            .position(|&v| v != 0.0)
            .unwrap_or(self.truth.len());
        for (i, a) in y.all().iter_mut().enumerate() {
            *a = if i == taken { 1.0 } else { 0.0 };
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IfActionConfig {
    /// As `expr`'s: what the branch computes while its `action` is set.
    pub expr: Expressions,
    #[serde(default = "one")]
    pub inputs: usize,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, f64>,
    /// The output before the branch first runs.
    #[serde(default = "zero")]
    pub initial: Values,
}

fn zero() -> Values {
    Values::One(0.0)
}

/// `if_action`: an expression block that runs only while its one-element
/// `action` input is non-zero, holding its output otherwise.
#[derive(Clone, Debug)]
pub struct IfAction {
    program: ExprProgram,
    initial: Vec<f64>,
}

impl IfAction {
    pub fn new(key: &KeyPath, c: &IfActionConfig) -> Result<Self, ConfigError> {
        let program =
            ExprProgram::new(&key.child("expr"), &c.expr.list(), c.inputs, &c.parameters)?;
        let initial = c
            .initial
            .resolve(&key.child("initial"), program.outputs())?;
        Ok(IfAction { program, initial })
    }
}

impl Component for IfAction {
    output_only!(
        |b| [port("action", 1), b.program.input_port()].concat(),
        port("y", b.program.outputs()),
    );

    fn initial_outputs(&self, y: &mut Outputs) {
        y.all().copy_from_slice(&self.initial);
    }

    fn output(&mut self, cx: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        if u.port(0)[0] != 0.0 {
            let x = &u.all()[1..];
            self.program.eval(super::common::secs(cx.now), x, y.all());
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MergeConfig {
    /// Number of inputs `u0`, `u1`, ... (and elements of `action`).
    #[serde(default = "two")]
    pub inputs: usize,
    #[serde(default = "one")]
    pub width: usize,
}

/// `merge`: `y = u_i` for the first set element `i` of `action`; holds
/// when none is set.
#[derive(Clone, Debug)]
pub struct Merge {
    inputs: usize,
    width: usize,
}

impl Merge {
    pub fn new(key: &KeyPath, c: &MergeConfig) -> Result<Self, ConfigError> {
        Ok(Merge {
            inputs: width(&key.child("inputs"), c.inputs)?,
            width: width(&key.child("width"), c.width)?,
        })
    }
}

impl Component for Merge {
    output_only!(
        |b| [numbered("u", b.inputs, b.width), port("action", b.inputs)].concat(),
        port("y", b.width),
    );

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        if let Some(i) = u.port(self.inputs).iter().position(|&a| a != 0.0) {
            y.all().copy_from_slice(u.port(i));
        }
    }
}
