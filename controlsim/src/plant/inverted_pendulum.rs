//! Inverted pendulum on a cart, full nonlinear model (Lagrange).
//!
//! Cart position `x`, pendulum angle `theta` from the upright (positive
//! towards +x), pendulum centre of mass at distance `l` from the pivot,
//! inertia `I` about the centre of mass, horizontal force `F` on the cart:
//!
//! ```text
//! (M + m) x'' + m l cos(theta) theta'' = F - b x' + m l sin(theta) theta'^2
//! m l cos(theta) x'' + (I + m l^2) theta'' = m g l sin(theta) - d theta'
//! ```
//!
//! solved for `(x'', theta'')` with the 2x2 mass matrix, whose determinant
//! `(M + m)(I + m l^2) - (m l cos theta)^2` is always positive.
//! States `[x, v, theta, omega]`, input `[force]`. Defaults are the classic
//! teaching example (M = 0.5 kg, m = 0.2 kg, l = 0.3 m, I = 0.006 kg m^2,
//! b = 0.1 N s/m).
//!
//! Known answers used by the tests: without friction and force the energy
//! `E = 1/2 (M+m) v^2 + m l v omega cos(theta) + 1/2 (I + m l^2) omega^2
//! + m g l cos(theta)` is conserved; small oscillations about the hanging
//! position (theta = pi) with a free cart have
//! `w^2 = m g l (M + m) / ((M + m)(I + m l^2) - m^2 l^2)`.

use serde::{Deserialize, Serialize};

use super::{Plant, Selection, Signature};
use crate::error::ConfigError;
use crate::key_path::KeyPath;
use crate::matrix::{check_non_negative, check_positive};

const STATES: [&str; 4] = ["x", "v", "theta", "omega"];
const INPUTS: [&str; 1] = ["force"];
/// The units of the states and the input (`super::units_of_kind`).
pub(super) const UNITS: [(&str, &str); 5] = [
    ("x", "m"),
    ("v", "m/s"),
    ("theta", "rad"),
    ("omega", "rad/s"),
    ("force", "N"),
];

/// `kind = "inverted_pendulum"`; every key has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InvertedPendulumParams {
    /// Cart mass M, kg; default 0.5.
    pub cart_mass: f64,
    /// Pendulum mass m, kg; default 0.2.
    pub pendulum_mass: f64,
    /// Pivot to centre of mass l, m; default 0.3.
    pub length: f64,
    /// Pendulum inertia about its centre of mass I, kg m^2; default 0.006.
    pub inertia: f64,
    /// Cart viscous friction b, N s/m; default 0.1.
    pub cart_friction: f64,
    /// Pivot viscous damping d, N m s/rad; default 0.
    pub pivot_damping: f64,
    /// Gravity g, m/s^2; default 9.81.
    pub gravity: f64,
    /// Initial `[x, v, theta, omega]`; default `[0, 0, 0, 0]` (upright, at rest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x0: Option<Vec<f64>>,
    /// Measured states; default `["x", "theta"]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Vec<String>>,
}

impl Default for InvertedPendulumParams {
    fn default() -> Self {
        InvertedPendulumParams {
            cart_mass: 0.5,
            pendulum_mass: 0.2,
            length: 0.3,
            inertia: 0.006,
            cart_friction: 0.1,
            pivot_damping: 0.0,
            gravity: 9.81,
            x0: None,
            outputs: None,
        }
    }
}

/// A built cart-pendulum.
#[derive(Clone, Debug, PartialEq)]
pub struct InvertedPendulum {
    p: InvertedPendulumParams,
    sel: Selection,
}

impl InvertedPendulum {
    /// # Errors
    /// [`ConfigError`] naming a non-positive mass or length, a negative
    /// inertia, friction or gravity, or a bad `x0` / `outputs`.
    pub fn new(key: &KeyPath, p: &InvertedPendulumParams) -> Result<Self, ConfigError> {
        let k = |f: &str| key.child(f);
        check_positive(&k("cart_mass"), p.cart_mass)?;
        check_positive(&k("pendulum_mass"), p.pendulum_mass)?;
        check_positive(&k("length"), p.length)?;
        check_non_negative(&k("inertia"), p.inertia)?;
        check_non_negative(&k("cart_friction"), p.cart_friction)?;
        check_non_negative(&k("pivot_damping"), p.pivot_damping)?;
        check_non_negative(&k("gravity"), p.gravity)?;
        let sel = Selection::new(key, &STATES, &p.x0, &[0.0; 4], &p.outputs, &["x", "theta"])?;
        Ok(InvertedPendulum { p: p.clone(), sel })
    }

    pub fn params(&self) -> &InvertedPendulumParams {
        &self.p
    }

    /// Total mechanical energy (kinetic plus potential, zero at the pivot
    /// height), for conservation checks.
    pub fn energy(&self, x: &[f64]) -> f64 {
        let p = &self.p;
        let (v, th, w) = (x[1], x[2], x[3]);
        let ml = p.pendulum_mass * p.length;
        0.5 * (p.cart_mass + p.pendulum_mass) * v * v
            + ml * v * w * th.cos()
            + 0.5 * (p.inertia + ml * p.length) * w * w
            + ml * p.gravity * th.cos()
    }
}

impl Plant for InvertedPendulum {
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
        let (v, th, w) = (x[1], x[2], x[3]);
        let (s, c) = th.sin_cos();
        let ml = p.pendulum_mass * p.length;
        let m11 = p.cart_mass + p.pendulum_mass;
        let m12 = ml * c;
        let m22 = p.inertia + ml * p.length;
        let f1 = u[0] - p.cart_friction * v + ml * s * w * w;
        let f2 = ml * p.gravity * s - p.pivot_damping * w;
        let det = m11 * m22 - m12 * m12;
        dx[0] = v;
        dx[1] = (m22 * f1 - m12 * f2) / det;
        dx[2] = w;
        dx[3] = (m11 * f2 - m12 * f1) / det;
    }

    #[inline]
    fn output(&self, _t: f64, x: &[f64], _u: &[f64], y: &mut [f64]) {
        self.sel.output(x, y);
    }
}
