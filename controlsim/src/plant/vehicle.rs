//! Vehicle longitudinal dynamics with a first-order engine (driveline) lag,
//! the standard model of platooning and CACC studies:
//!
//! ```text
//! p' = v
//! v' = a - c_d v |v|
//! a' = (u - a) / tau
//! ```
//!
//! States `[p, v, a]` (front-bumper position m, speed m/s, engine
//! acceleration m/s^2), input `[u]` (desired acceleration, m/s^2). `tau` is the
//! engine lag; `c_d` (1/m) an optional quadratic drag per unit mass, default 0,
//! which makes the model linear. The gap to this vehicle is measured to
//! `p - length`.
//!
//! Known answer (no drag, from rest, step `u = U`):
//! `a = U (1 - e^(-t/tau))`, `v = U (t - tau (1 - e^(-t/tau)))`,
//! `p = p0 + U (t^2/2 - tau t + tau^2 (1 - e^(-t/tau)))`.

use serde::{Deserialize, Serialize};

use super::{Kinematics, Plant, Selection, Signature};
use crate::error::ConfigError;
use crate::key_path::KeyPath;
use crate::matrix::{check_non_negative, check_positive};

const STATES: [&str; 3] = ["p", "v", "a"];
const INPUTS: [&str; 1] = ["u"];
/// The units of the states and the input (`super::units_of_kind`).
pub(super) const UNITS: [(&str, &str); 4] =
    [("p", "m"), ("v", "m/s"), ("a", "m/s²"), ("u", "m/s²")];

/// `kind = "vehicle"`; every key has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VehicleParams {
    /// Engine lag tau, s; default 0.1.
    pub engine_lag: f64,
    /// Vehicle length, m; default 4.
    pub length: f64,
    /// Quadratic drag per unit mass c_d, 1/m; default 0.
    pub drag: f64,
    /// Initial `[p, v, a]`; default `[0, 0, 0]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x0: Option<Vec<f64>>,
    /// Measured states; default `["p", "v", "a"]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Vec<String>>,
}

impl Default for VehicleParams {
    fn default() -> Self {
        VehicleParams {
            engine_lag: 0.1,
            length: 4.0,
            drag: 0.0,
            x0: None,
            outputs: None,
        }
    }
}

/// A built vehicle.
#[derive(Clone, Debug, PartialEq)]
pub struct Vehicle {
    p: VehicleParams,
    sel: Selection,
}

impl Vehicle {
    /// # Errors
    /// [`ConfigError`] naming a non-positive engine lag, a negative length or
    /// drag, or a bad `x0` / `outputs`.
    pub fn new(key: &KeyPath, p: &VehicleParams) -> Result<Self, ConfigError> {
        let k = |f: &str| key.child(f);
        check_positive(&k("engine_lag"), p.engine_lag)?;
        check_non_negative(&k("length"), p.length)?;
        check_non_negative(&k("drag"), p.drag)?;
        let sel = Selection::new(key, &STATES, &p.x0, &[0.0; 3], &p.outputs, &STATES)?;
        Ok(Vehicle { p: p.clone(), sel })
    }

    pub fn params(&self) -> &VehicleParams {
        &self.p
    }
}

impl Plant for Vehicle {
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
    fn derivative(&self, _t: f64, x: &[f64], u: &[f64], dx: &mut [f64]) {
        let (v, a) = (x[1], x[2]);
        dx[0] = v;
        dx[1] = a - self.p.drag * v * v.abs();
        dx[2] = (u[0] - a) / self.p.engine_lag;
    }

    #[inline]
    fn output(&self, _t: f64, x: &[f64], _u: &[f64], y: &mut [f64]) {
        self.sel.output(x, y);
    }

    fn kinematics(&self, x: &[f64]) -> Option<Kinematics> {
        Some(Kinematics {
            position: x[0],
            velocity: x[1],
            acceleration: x[2] - self.p.drag * x[1] * x[1].abs(),
            length: self.p.length,
        })
    }
}
