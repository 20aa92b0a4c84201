//! DC servo: a voltage-driven DC motor turning an inertia against viscous and
//! (smoothed) Coulomb friction.
//!
//! ```text
//! theta' = omega
//! J omega' = Kt (V - Ke omega) / R  -  b omega  -  Tc tanh(omega / ws)
//! ```
//!
//! States `[theta, omega]` (rad, rad/s), input `[voltage]` (V). The armature
//! inductance is neglected (electrical time constant much shorter than the
//! mechanical one), which is the usual servo model. Coulomb friction `Tc` is
//! smoothed with `tanh(omega / ws)`: an exact sign function would make the
//! right-hand side discontinuous and chatter with a fixed-step solver. Keep
//! `Tc / (J ws) * h` below about 2 for RK4 stability.
//!
//! Without Coulomb friction the servo is linear:
//! `theta(s)/V(s) = (Kt/R) / (s (J s + b + Kt Ke / R))`.
//! Defaults are the classic DC motor teaching example (J = 0.01, b = 0.1,
//! Kt = Ke = 0.01, R = 1): a mechanical pole at about 10 rad/s.

use serde::{Deserialize, Serialize};

use super::{Plant, Selection, Signature};
use crate::error::ConfigError;
use crate::key_path::KeyPath;
use crate::matrix::{check_non_negative, check_positive};

const STATES: [&str; 2] = ["theta", "omega"];
const INPUTS: [&str; 1] = ["voltage"];
/// The units of the states and the input (`super::units_of_kind`).
pub(super) const UNITS: [(&str, &str); 3] =
    [("theta", "rad"), ("omega", "rad/s"), ("voltage", "V")];

/// `kind = "dc_servo"`; every key has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DcServoParams {
    /// Rotor plus load inertia J, kg m^2; default 0.01.
    pub inertia: f64,
    /// Viscous friction b, N m s/rad; default 0.1.
    pub viscous_friction: f64,
    /// Coulomb friction torque Tc, N m; default 0 (none).
    pub coulomb_friction: f64,
    /// Speed ws of the tanh smoothing of Coulomb friction, rad/s; default 0.01.
    pub coulomb_smoothing: f64,
    /// Torque constant Kt, N m/A; default 0.01.
    pub torque_constant: f64,
    /// Back-EMF constant Ke, V s/rad; default 0.01.
    pub back_emf_constant: f64,
    /// Armature resistance R, ohm; default 1.
    pub resistance: f64,
    /// Initial `[theta, omega]`; default `[0, 0]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x0: Option<Vec<f64>>,
    /// Measured states, by name; default `["theta"]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Vec<String>>,
}

impl Default for DcServoParams {
    fn default() -> Self {
        DcServoParams {
            inertia: 0.01,
            viscous_friction: 0.1,
            coulomb_friction: 0.0,
            coulomb_smoothing: 0.01,
            torque_constant: 0.01,
            back_emf_constant: 0.01,
            resistance: 1.0,
            x0: None,
            outputs: None,
        }
    }
}

/// A built DC servo.
#[derive(Clone, Debug, PartialEq)]
pub struct DcServo {
    p: DcServoParams,
    sel: Selection,
}

impl DcServo {
    /// # Errors
    /// [`ConfigError`] naming a non-positive inertia, resistance or smoothing
    /// speed, a negative friction, or a bad `x0` / `outputs`.
    pub fn new(key: &KeyPath, p: &DcServoParams) -> Result<Self, ConfigError> {
        let k = |f: &str| key.child(f);
        check_positive(&k("inertia"), p.inertia)?;
        check_non_negative(&k("viscous_friction"), p.viscous_friction)?;
        check_non_negative(&k("coulomb_friction"), p.coulomb_friction)?;
        check_positive(&k("coulomb_smoothing"), p.coulomb_smoothing)?;
        crate::matrix::check_finite(&k("torque_constant"), p.torque_constant)?;
        crate::matrix::check_finite(&k("back_emf_constant"), p.back_emf_constant)?;
        check_positive(&k("resistance"), p.resistance)?;
        let sel = Selection::new(key, &STATES, &p.x0, &[0.0, 0.0], &p.outputs, &["theta"])?;
        Ok(DcServo { p: p.clone(), sel })
    }

    /// The parameters it was built from.
    pub fn params(&self) -> &DcServoParams {
        &self.p
    }
}

impl Plant for DcServo {
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
        let p = &self.p;
        let omega = x[1];
        let motor = p.torque_constant * (u[0] - p.back_emf_constant * omega) / p.resistance;
        let coulomb = if p.coulomb_friction == 0.0 {
            0.0
        } else {
            p.coulomb_friction * (omega / p.coulomb_smoothing).tanh()
        };
        dx[0] = omega;
        dx[1] = (motor - p.viscous_friction * omega - coulomb) / p.inertia;
    }

    #[inline]
    fn output(&self, _t: f64, x: &[f64], _u: &[f64], y: &mut [f64]) {
        self.sel.output(x, y);
    }
}
