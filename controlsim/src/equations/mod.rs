//! Text equations: a small equation-based modelling language, compiled
//! once to a flat register program and run as a [`Plant`](crate::Plant)
//! (`kind = "equations"` in a scenario).
//!
//! # The language
//! ```text
//! // A bouncing ball. Statements end with `;`; `//`, `#` and /* */ comment.
//! parameter g = 9.81;             // constants; may use other parameters
//! parameter e = 0.8;
//! input force;                    // actuator channels, in this order
//! state h(start = 10);            // states with start values (default 0)
//! state v(start = 15);
//! der(h) = v;                     // one `der` per state
//! der(v) = a;
//! a = -g + force;                 // algebraic variables, in any order
//! output h;                       // measured outputs, in this order
//! output speed = abs(v);          // an output can define a variable too
//! when h < 0 then h = 0, v = -e * pre(v);   // guard with resets
//! ```
//!
//! - **Expressions:** numbers, names, `time`, `+ - * / ^` (`^` binds
//!   tighter than unary minus: `-x^2 = -(x^2)`), comparisons
//!   `== <> != < <= > >=` and `and or not` (true is 1, false is 0, any
//!   non-zero is true), `if c then a elseif c2 then b else d`.
//! - **Functions:** `sin cos tan asin acos atan atan2 exp log sqrt abs sign
//!   min max pow`, and the nonlinear elements `sat(x, lo, hi)` (=
//!   `min(max(x, lo), hi)`) and `deadzone(x, w)` (0 on `[-w, w]`, `x - w`
//!   above, `x + w` below).
//! - **Stateful elements**, declared: `hysteresis r(x, low, high, off, on
//!   [, start]);` is a relay whose value `r` is `off` until `x` rises to
//!   `high`, then `on` until `x` falls to `low` (start: `off`); the
//!   switching instants are located like any guard. `backlash b(x, width
//!   [, start]);`, with `x` a state, is a dead band of total `width`: `b`
//!   follows `x` only while `x` pushes on one edge (start: `x`'s start).
//!   Its contact changes are not located (error of order `h * |der(x)|`
//!   per reversal). Both add a state named after the element.
//! - **Guards:** `when a < b then x = e1, y = e2;` fires when `a - b`
//!   falls to zero or below (`a > b`: when `b - a` does), located inside
//!   the step by [`event`](crate::event); the resets are computed from the
//!   state at the event (`pre(x)` is that value; plain `x` is too), then
//!   all set together. Only states can be reset.
//!
//! Errors (syntax and meaning) are [`EquationError`]s with the file, line,
//! column and a caret; see [`compile`] for the checks and the generated
//! code, [`eval`] for the evaluation form, and `affine` for the form a
//! program affine in the states and inputs takes instead (most linear
//! models: rows of terms read straight from the engine's vectors).

mod affine;
mod ast;
pub mod compile;
mod eval;
mod model;
mod parse;
mod source;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use compile::{CompileError, Compiled, UnknownParameter};
pub use model::EquationModel;
pub use source::{EquationError, Source};

use crate::error::ConfigError;
use crate::key_path::KeyPath;

/// `kind = "equations"`: a model in the equation language, from a file
/// (`source`) or inline (`equations`), with parameter overrides by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EquationsConfig {
    /// Path of a `.eq` file. The scenario loader reads it relative to the
    /// scenario file; a config built in code is read relative to the
    /// current directory unless [`loaded`](Self::loaded) is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The model's text inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equations: Option<String>,
    /// Parameter values by name, replacing those in the text.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, f64>,
    /// The text of `source`, read by whoever resolved its path (or the
    /// inline text placed at its lines in the scenario file), and the name
    /// errors call it by.
    #[serde(skip)]
    pub loaded: Option<Source>,
}

impl EquationModel {
    /// Builds the model of a config at `key` (`loops[0].plant`).
    ///
    /// # Errors
    /// [`ConfigError`] naming `key.source` / `key.equations` with the
    /// located report as its reason, or `key.parameters.NAME` for an
    /// override of an unknown parameter.
    pub fn from_config(key: &KeyPath, c: &EquationsConfig) -> Result<Self, ConfigError> {
        let (text_key, source) = match (&c.source, &c.equations) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::invalid(
                    key.child("equations"),
                    "give either `source` (a file) or `equations` (inline text), not both",
                ))
            }
            (None, None) => {
                return Err(ConfigError::invalid(
                    key,
                    "an `equations` model needs `source = \"model.eq\"` or `equations = \"\"\"...\"\"\"`",
                ))
            }
            (Some(path), None) => {
                let source = match &c.loaded {
                    Some(s) => s.clone(),
                    None => Source {
                        name: path.clone(),
                        text: crate::input::read_text_capped(
                            std::path::Path::new(path),
                            crate::limits::MAX_INPUT_BYTES,
                            "one file",
                        )
                        .map_err(|e| {
                            ConfigError::invalid(key.child("source"), format!("cannot read {path}: {e}"))
                        })?,
                    },
                };
                (key.child("source"), source)
            }
            (None, Some(text)) => (
                key.child("equations"),
                match &c.loaded {
                    // Placed in the file that holds it by the loader.
                    Some(s) => s.clone(),
                    None => Source {
                        name: key.child("equations").to_string(),
                        text: text.clone(),
                    },
                },
            ),
        };
        for (name, v) in &c.parameters {
            if !v.is_finite() {
                return Err(ConfigError::NotFinite {
                    key: key.child("parameters").and(name),
                    value: *v,
                });
            }
        }
        EquationModel::new(&source, &c.parameters).map_err(|e| match e {
            CompileError::Source(e) => {
                ConfigError::invalid(text_key, format!("{}\n{e}", e.message))
            }
            CompileError::UnknownParameter(u) => ConfigError::UnknownName {
                key: key.child("parameters").and(&u.name),
                name: u.name,
                known: u.known,
            },
        })
    }
}

#[cfg(test)]
mod tests;
