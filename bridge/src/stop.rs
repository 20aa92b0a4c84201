//! Stop conditions: `stop_when` ends a run early when an expression over the
//! loops' signals becomes true, e.g. a pendulum that fell:
//!
//! ```toml
//! stop_when = "abs(pendulum.theta) > 1.5"          # status "unstable"
//! [stop_when]                                      # or named conditions
//! fell = "abs(pendulum.theta) > 1.5"
//! ran_off = "abs(pendulum.x) > 10"
//! ```
//!
//! The expression language is behind this module only ([`Condition`]), so it
//! can be replaced without touching the rest; today it is evalexpr's, with
//! builtins off and our own functions (`abs`, `sqrt`, `exp`, `ln`, `sin`,
//! `cos`, `tan`, `min`, `max`).
//!
//! Variables, for a loop named `L` (docs/scenario.md, `stop_when`):
//! `L.x.<state>`, `L.y.<output>`, `L.u.<input>` (the applied control),
//! `L.r<j>` (reference channel j), `L.<name>` (a state, else an output, by
//! name) and `t` (seconds). The conditions are checked at every solver
//! boundary, in name order; the first that holds ends the run there.

use std::collections::{BTreeMap, HashMap};

use controlsim::LoopView;
use evalexpr::error::EvalexprResultValue;
use evalexpr::{
    build_operator_tree, Context, DefaultNumericTypes, EvalexprError, EvalexprResult, Node, Value,
};
use serde::{Deserialize, Serialize};

use crate::config::{KeyPath, ScenarioError};

/// The status of a run stopped by an unnamed condition.
pub const UNSTABLE: &str = "unstable";

/// `stop_when` as written: one expression, or a table of named ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "an expression string, or a table of named expression strings"
)]
pub enum StopWhen {
    One(String),
    Named(BTreeMap<String, String>),
}

impl StopWhen {
    /// `(name, expression, key)` of every condition, in name order.
    pub fn conditions(&self) -> Vec<(String, String, KeyPath)> {
        match self {
            StopWhen::One(e) => vec![(UNSTABLE.into(), e.clone(), KeyPath::key("stop_when"))],
            StopWhen::Named(m) => m
                .iter()
                .map(|(n, e)| (n.clone(), e.clone(), KeyPath::key("stop_when").and(n)))
                .collect(),
        }
    }

    /// The statuses a run of this can end with besides `complete`.
    pub fn names(&self) -> Vec<String> {
        self.conditions().into_iter().map(|(n, _, _)| n).collect()
    }
}

/// Where a variable's value comes from at a boundary.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Source {
    Time,
    State(usize, usize),
    Output(usize, usize),
    Input(usize, usize),
    Reference(usize, usize),
}

/// Resolves a variable name against the built loops.
fn source_of<V: LoopView + ?Sized>(loops: &V, name: &str) -> Option<Source> {
    if name == "t" {
        return Some(Source::Time);
    }
    // Loop names may contain dots: try every split.
    for i in 0..loops.loop_count() {
        let Some(rest) = name
            .strip_prefix(loops.loop_name(i))
            .and_then(|r| r.strip_prefix('.'))
        else {
            continue;
        };
        let sig = loops.signature(i);
        let find = |names: &[String], n: &str| names.iter().position(|s| s == n);
        let found = if let Some(s) = rest.strip_prefix("x.").and_then(|n| find(&sig.states, n)) {
            Some(Source::State(i, s))
        } else if let Some(o) = rest.strip_prefix("y.").and_then(|n| find(&sig.outputs, n)) {
            Some(Source::Output(i, o))
        } else if let Some(u) = rest.strip_prefix("u.").and_then(|n| find(&sig.inputs, n)) {
            Some(Source::Input(i, u))
        } else if let Some(s) = find(&sig.states, rest) {
            Some(Source::State(i, s))
        } else if let Some(o) = find(&sig.outputs, rest) {
            Some(Source::Output(i, o))
        } else {
            rest.strip_prefix('r')
                .and_then(|j| j.parse::<usize>().ok())
                .filter(|&j| j < loops.reference_dim(i))
                .map(|j| Source::Reference(i, j))
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The names a loop offers, for messages.
fn names_of<V: LoopView + ?Sized>(loops: &V) -> String {
    let mut out = vec!["t".to_string()];
    for i in 0..loops.loop_count() {
        let n = loops.loop_name(i);
        let sig = loops.signature(i);
        out.extend(sig.states.iter().map(|s| format!("{n}.x.{s}")));
        out.extend(sig.outputs.iter().map(|s| format!("{n}.y.{s}")));
        out.extend(sig.inputs.iter().map(|s| format!("{n}.u.{s}")));
        out.extend((0..loops.reference_dim(i)).map(|j| format!("{n}.r{j}")));
    }
    out.join(", ")
}

/// The values of the variables at one boundary, as evalexpr reads them.
#[derive(Debug, Default)]
struct Frame {
    slots: HashMap<String, usize>,
    values: Vec<Value<DefaultNumericTypes>>,
}

impl Context for Frame {
    type NumericTypes = DefaultNumericTypes;

    fn get_value(&self, identifier: &str) -> Option<&Value<DefaultNumericTypes>> {
        self.slots.get(identifier).map(|&i| &self.values[i])
    }

    fn call_function(
        &self,
        identifier: &str,
        argument: &Value<DefaultNumericTypes>,
    ) -> EvalexprResultValue<DefaultNumericTypes> {
        let one = |f: fn(f64) -> f64| -> EvalexprResultValue<DefaultNumericTypes> {
            Ok(Value::Float(f(argument.as_number()?)))
        };
        let two = |f: fn(f64, f64) -> f64| -> EvalexprResultValue<DefaultNumericTypes> {
            let args = argument.as_fixed_len_tuple(2)?;
            Ok(Value::Float(f(args[0].as_number()?, args[1].as_number()?)))
        };
        match identifier {
            "abs" => one(f64::abs),
            "sqrt" => one(f64::sqrt),
            "exp" => one(f64::exp),
            "ln" => one(f64::ln),
            "sin" => one(f64::sin),
            "cos" => one(f64::cos),
            "tan" => one(f64::tan),
            "min" => two(f64::min),
            "max" => two(f64::max),
            _ => Err(EvalexprError::FunctionIdentifierNotFound(
                identifier.to_string(),
            )),
        }
    }

    fn are_builtin_functions_disabled(&self) -> bool {
        true
    }

    fn set_builtin_functions_disabled(
        &mut self,
        _disabled: bool,
    ) -> EvalexprResult<(), DefaultNumericTypes> {
        Ok(())
    }
}

/// One compiled condition.
#[derive(Debug)]
struct Condition {
    name: String,
    expression: String,
    tree: Node<DefaultNumericTypes>,
}

/// Why a run stopped early (summary.json `stop`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stopped {
    /// The condition's name: `unstable` for a single `stop_when` string.
    pub condition: String,
    pub expression: String,
    pub time_ns: u64,
    pub time_s: f64,
}

/// The stop conditions of a run, compiled against its loops (a system or
/// its graph, [`LoopView`]).
#[derive(Debug, Default)]
pub struct StopConditions {
    conditions: Vec<Condition>,
    frame: Frame,
    sources: Vec<Source>,
}

impl StopConditions {
    /// Compiles `stop_when` against the built system and tries each
    /// condition once with every variable zero.
    ///
    /// # Errors
    /// An expression that does not parse, names an unknown variable or
    /// function, or is not a true/false condition; the key names it.
    pub fn new<V: LoopView + ?Sized>(
        stop_when: Option<&StopWhen>,
        loops: &V,
    ) -> Result<Self, ScenarioError> {
        let mut out = StopConditions::default();
        for (name, expression, key) in stop_when.map(StopWhen::conditions).unwrap_or_default() {
            let bad = |message: String| ScenarioError::new(key.clone(), message);
            if name.is_empty() {
                return Err(bad("a condition needs a non-empty name".into()));
            }
            let tree = build_operator_tree::<DefaultNumericTypes>(&expression)
                .map_err(|e| bad(format!("`{expression}` is not an expression: {e}")))?;
            for variable in tree.iter_variable_identifiers() {
                if out.frame.slots.contains_key(variable) {
                    continue;
                }
                let source = source_of(loops, variable).ok_or_else(|| {
                    bad(format!(
                        "unknown variable `{variable}` in `{expression}`; the variables are {}",
                        names_of(loops)
                    ))
                })?;
                out.frame
                    .slots
                    .insert(variable.to_string(), out.sources.len());
                out.frame.values.push(Value::Float(0.0));
                out.sources.push(source);
            }
            match tree.eval_boolean_with_context(&out.frame) {
                Ok(_) => {}
                Err(EvalexprError::ExpectedBoolean { actual }) => {
                    return Err(bad(format!(
                        "`{expression}` gives a number ({actual}), not a condition: compare it, e.g. `abs(...) > 1.5`"
                    )))
                }
                Err(e) => return Err(bad(format!("`{expression}`: {e}"))),
            }
            out.conditions.push(Condition {
                name,
                expression,
                tree,
            });
        }
        Ok(out)
    }

    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// The first condition that holds at the current boundary, given each
    /// loop's outputs and references there.
    ///
    /// # Errors
    /// A condition that cannot be evaluated (it named a value it cannot use).
    pub fn check<V: LoopView + ?Sized>(
        &mut self,
        loops: &V,
        outputs: &[Vec<f64>],
        references: &[Vec<f64>],
    ) -> Result<Option<Stopped>, String> {
        if self.conditions.is_empty() {
            return Ok(None);
        }
        let time = loops.time();
        for (slot, source) in self.frame.values.iter_mut().zip(&self.sources) {
            let v = match *source {
                Source::Time => time.as_secs_f64(),
                Source::State(i, s) => loops.plant_state(i)[s],
                Source::Output(i, o) => outputs[i][o],
                Source::Input(i, u) => loops.applied_control(i)[u],
                Source::Reference(i, j) => references[i][j],
            };
            *slot = Value::Float(v);
        }
        for c in &self.conditions {
            let holds = c
                .tree
                .eval_boolean_with_context(&self.frame)
                .map_err(|e| format!("stop condition `{}` ({}): {e}", c.name, c.expression))?;
            if holds {
                return Ok(Some(Stopped {
                    condition: c.name.clone(),
                    expression: c.expression.clone(),
                    time_ns: time.0,
                    time_s: time.as_secs_f64(),
                }));
            }
        }
        Ok(None)
    }
}
