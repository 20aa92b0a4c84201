//! `kind = "equations"`: a controller written in the text-equation language
//! ([`crate::equations`]), the same language and compiler as an `equations`
//! plant.
//!
//! ```text
//! inputs  = [y_0 .. y_{ny-1}, r_0 .. r_{nr-1}]   (held measurement, then reference)
//! der(x)  = f(t, x, inputs)                      (integrated with the plants)
//! u       = outputs(t, x, inputs)                (one per plant input)
//! ```
//!
//! The model's `input`s are, in declaration order, every measured channel
//! of the loop's sensor and then the reference channels (as many as the
//! model declares beyond the measurement; a scenario's `reference` list
//! must give that many, or none for zeros). Its `output`s are the plant
//! inputs, in order. Its states are integrated by the scenario's solver in
//! lock-step with the plants, exactly as a `state_space` controller's
//! ([`continuous`](super::continuous)): the measurement is held between
//! updates and the reference evaluated at the stage times; the output is
//! read at the controller's computations (`trigger`, `period`, `phase`),
//! and the rollback response is the same expression one solver step later.
//!
//! A PI controller is
//! ```text
//! parameter kp = 2; parameter ki = 1;
//! input y; input r;
//! state xi;
//! der(xi) = ki * e;
//! e = r - y;
//! output u = kp * e + xi;
//! ```
//! which under Euler, with the period equal to the step, gives the same
//! bits as `kind = "pid"` with `kd = 0` (its integral `I += dt * (ki *
//! e_prev)` is Euler's `xi += h * der(xi)` with `der(xi) = ki * e`).
//!
//! Guards (`when`, `hysteresis`) are not supported in a controller: the
//! event location of [`crate::event`] acts on a plant's states with its
//! input held, and a controller's reference varies inside the step. A model
//! with guards is an error naming the key.

use std::collections::BTreeMap;

use super::{BuildContext, LawShape};
use crate::equations::{EquationModel, EquationsConfig, Source};
use crate::error::ConfigError;
use crate::plant::Plant;
use crate::reference::Signal;

super::timing_fields! {
    /// `kind = "equations"` (controller): a model from a `.eq` file
    /// (`source`) or inline (`equations`), with parameter overrides.
    pub struct EquationsControllerConfig {
        /// Path of a `.eq` file (read relative to the scenario file).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub source: Option<String>,
        /// The model's text inline.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub equations: Option<String>,
        /// Parameter values by name, replacing those in the text.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        pub parameters: BTreeMap<String, f64>,
        /// The text, as read by the scenario loader (see
        /// [`EquationsConfig::loaded`]).
        #[serde(skip)]
        pub loaded: Option<Source>,
    }
}

impl EquationsControllerConfig {
    /// The model part, as an `equations` plant's config.
    fn model(&self) -> EquationsConfig {
        EquationsConfig {
            source: self.source.clone(),
            equations: self.equations.clone(),
            parameters: self.parameters.clone(),
            loaded: self.loaded.clone(),
        }
    }
}

/// The built law: the compiled model and its input vector.
#[derive(Clone, Debug)]
pub(crate) struct Equations {
    model: EquationModel,
    /// Number of measured channels (the first inputs).
    measurements: usize,
}

impl Equations {
    pub(crate) fn new(
        ctx: &BuildContext,
        c: &EquationsControllerConfig,
    ) -> Result<(Self, LawShape), ConfigError> {
        let model = EquationModel::from_config(&ctx.key, &c.model())?;
        let text_key = if c.source.is_some() {
            ctx.k("source")
        } else {
            ctx.k("equations")
        };
        let sig = model.signature();
        let ny = ctx.measurements;
        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        if sig.inputs.len() < ny {
            return Err(ConfigError::invalid(
                text_key,
                format!(
                    "the model declares {}, but a controller's inputs are the sensor's {} \
                     (then the reference channels): declare an `input` for each",
                    plural(sig.inputs.len(), "input"),
                    plural(ny, "measured channel"),
                ),
            ));
        }
        let references = sig.inputs.len() - ny;
        ctx.check_references(
            references,
            &format!(
                "this controller (its model's inputs after the {})",
                plural(ny, "measured channel")
            ),
        )?;
        if sig.outputs.len() != ctx.plant_inputs {
            return Err(ConfigError::invalid(
                text_key,
                format!(
                    "the model declares {}, but the plant has {}: a controller's outputs are the plant's inputs",
                    plural(sig.outputs.len(), "output"),
                    plural(ctx.plant_inputs, "input"),
                ),
            ));
        }
        if model.guard_count() > 0 {
            return Err(ConfigError::invalid(
                text_key,
                "a controller cannot have guards (`when`, `hysteresis`): events are located on a \
                 plant's states; model the switching in the plant, or with `if` / `sat`",
            ));
        }
        let mut state0 = vec![0.0; sig.states.len()];
        model.initial_state(&mut state0);
        let shape = LawShape {
            extras: vec![],
            references,
            state_names: sig.states,
            state0,
            memory: 0,
        };
        Ok((
            Equations {
                model,
                measurements: ny,
            },
            shape,
        ))
    }

    /// Length of the model's input vector (measurement and reference).
    pub(crate) fn inputs(&self) -> usize {
        self.model.compiled().input_names.len()
    }

    /// The model's inputs at a stage time `t` (seconds): the held
    /// measurement, then the reference there (zeros without signals).
    #[inline]
    pub(crate) fn inputs_at(&self, input: &[f64], refs: &[Signal], t: f64, buf: &mut [f64]) {
        let (y, r) = buf.split_at_mut(self.measurements);
        y.copy_from_slice(&input[..self.measurements]);
        for (i, ri) in r.iter_mut().enumerate() {
            *ri = refs.get(i).map_or(0.0, |s| s.at_secs(t));
        }
    }

    #[inline]
    pub(crate) fn derivative(&self, t: f64, x: &[f64], inputs: &[f64], dx: &mut [f64]) {
        self.model.derivative(t, x, inputs, dx);
    }

    /// `u` at time `t` (seconds) from the state `x`, the held measurement
    /// and the reference values already read at `t`; `buf` is scratch of
    /// [`inputs`](Self::inputs) entries.
    pub(crate) fn output(
        &self,
        t: f64,
        input: &[f64],
        reference: &[f64],
        x: &[f64],
        buf: &mut [f64],
        out: &mut [f64],
    ) {
        let (y, r) = buf.split_at_mut(self.measurements);
        y.copy_from_slice(&input[..self.measurements]);
        r.copy_from_slice(reference);
        self.model.output(t, x, buf, out);
    }
}
