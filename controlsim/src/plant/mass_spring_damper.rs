//! Mass-spring-damper with a control force and an external force signal:
//!
//! ```text
//! x' = v
//! m v' = u + F_ext(t) - c v - k x
//! ```
//!
//! States `[x, v]`, input `[force]`. `external_force` is any
//! [signal](crate::reference::SignalConfig), evaluated at the solver's stage
//! times, so a sinusoidal force is integrated as a smooth function of time.
//!
//! Known answer (the forced damped oscillator, `u = 0`,
//! `F_ext = F0 sin(w t)`, underdamped): steady state `X sin(w t - phi)` with
//! `X = F0 / sqrt((k - m w^2)^2 + (c w)^2)`, `phi = atan2(c w, k - m w^2)`,
//! plus the transient `e^(-zeta wn t) (A cos(wd t) + B sin(wd t))` fitted to
//! the initial conditions (see the plants integration test).

use serde::{Deserialize, Serialize};

use super::{Plant, Selection, Signature};
use crate::error::ConfigError;
use crate::key_path::KeyPath;
use crate::matrix::{check_non_negative, check_positive};
use crate::reference::{Signal, SignalConfig};

const STATES: [&str; 2] = ["x", "v"];
const INPUTS: [&str; 1] = ["force"];
/// The units of the states and the input (`super::units_of_kind`).
pub(super) const UNITS: [(&str, &str); 3] = [("x", "m"), ("v", "m/s"), ("force", "N")];

/// `kind = "mass_spring_damper"`; every key has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MassSpringDamperParams {
    /// Mass m, kg; default 1.
    pub mass: f64,
    /// Damping c, N s/m; default 0.5.
    pub damping: f64,
    /// Stiffness k, N/m; default 1.
    pub stiffness: f64,
    /// External force F_ext(t), N; default none (zero).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_force: Option<SignalConfig>,
    /// Initial `[x, v]`; default `[0, 0]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x0: Option<Vec<f64>>,
    /// Measured states; default `["x"]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Vec<String>>,
}

impl Default for MassSpringDamperParams {
    fn default() -> Self {
        MassSpringDamperParams {
            mass: 1.0,
            damping: 0.5,
            stiffness: 1.0,
            external_force: None,
            x0: None,
            outputs: None,
        }
    }
}

/// A built mass-spring-damper.
#[derive(Clone, Debug, PartialEq)]
pub struct MassSpringDamper {
    p: MassSpringDamperParams,
    force: Option<Signal>,
    sel: Selection,
}

impl MassSpringDamper {
    /// # Errors
    /// [`ConfigError`] naming a non-positive mass, a negative damping or
    /// stiffness, an invalid force signal, or a bad `x0` / `outputs`.
    pub fn new(key: &KeyPath, p: &MassSpringDamperParams) -> Result<Self, ConfigError> {
        let k = |f: &str| key.child(f);
        check_positive(&k("mass"), p.mass)?;
        check_non_negative(&k("damping"), p.damping)?;
        check_non_negative(&k("stiffness"), p.stiffness)?;
        let force = p
            .external_force
            .as_ref()
            .map(|s| Signal::new(&k("external_force"), s))
            .transpose()?;
        let sel = Selection::new(key, &STATES, &p.x0, &[0.0; 2], &p.outputs, &["x"])?;
        Ok(MassSpringDamper {
            p: p.clone(),
            force,
            sel,
        })
    }

    pub fn params(&self) -> &MassSpringDamperParams {
        &self.p
    }
}

impl Plant for MassSpringDamper {
    fn signature(&self) -> Signature {
        self.sel.signature(&STATES, &INPUTS)
    }

    fn unit(&self, signal: &str) -> Option<String> {
        super::unit_in(&UNITS, signal)
    }

    fn initial_state(&self, x0: &mut [f64]) {
        x0.copy_from_slice(&self.sel.x0);
    }

    #[inline]
    fn derivative(&self, t: f64, x: &[f64], u: &[f64], dx: &mut [f64]) {
        let p = &self.p;
        let f_ext = self.force.as_ref().map_or(0.0, |s| s.at_secs(t));
        dx[0] = x[1];
        dx[1] = (u[0] + f_ext - p.damping * x[1] - p.stiffness * x[0]) / p.mass;
    }

    #[inline]
    fn output(&self, _t: f64, x: &[f64], _u: &[f64], y: &mut [f64]) {
        self.sel.output(x, y);
    }
}
