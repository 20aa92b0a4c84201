//! Bouncing ball: free fall onto a floor at height 0 with a coefficient of
//! restitution, the classic hybrid system with a reset event.
//!
//! ```text
//! h' = v,  v' = -g + F/m          (flight)
//! guard h: falls to 0             =>  impact: h = 0, v = e |v_impact|
//! ```
//!
//! States `[h, v]`, input `[force]` (an upward force, default held at 0).
//!
//! The floor is the plant's one guard, `g = h`, so the solver locates each
//! impact inside its step ([`event`](crate::event)), applies the reset there
//! and integrates the rebound for the rest of the step. The reset puts the
//! ball exactly on the floor with the rebound speed it has at the floor: the
//! located state may be a hair below (the event takes the bracket's end past
//! the crossing), so the impact speed follows from energy over that overshoot,
//! `v_imp^2 = v^2 - 2 a h` with `a = -g + F/m` the (held) acceleration, and the
//! ball leaves with `v = e |v_imp|`.
//!
//! With `e < 1` the flights shrink geometrically and the impacts accumulate at
//! a finite time (Zeno): dropped or thrown with impact speed `v1` at `t1`, the
//! impacts are at `t1 + sum_{j<k} 2 e^j v1 / g` and accumulate at
//! `t1 + 2 e v1 / (g (1 - e))`. The solver detects the accumulation when a
//! flight gets shorter than [`ZENO_GAP`](crate::event::ZENO_GAP) and the ball
//! [settles](Plant::settle): it rests on the floor (`h = v = 0`), where the
//! floor carries it (`v' = 0`) as long as the net force points down; an
//! upward net force lifts it off again.
use serde::{Deserialize, Serialize};

use super::{Plant, Selection, Signature};
use crate::error::ConfigError;
use crate::key_path::KeyPath;
use crate::matrix::{check_non_negative, check_positive};

const STATES: [&str; 2] = ["h", "v"];
const INPUTS: [&str; 1] = ["force"];
/// The units of the states and the input (`super::units_of_kind`).
pub(super) const UNITS: [(&str, &str); 3] = [("h", "m"), ("v", "m/s"), ("force", "N")];

/// `kind = "bouncing_ball"`; every key has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BouncingBallParams {
    /// Gravity g, m/s^2; default 9.81.
    pub gravity: f64,
    /// Coefficient of restitution e in [0, 1]; default 0.8.
    pub restitution: f64,
    /// Mass m, kg (only scales the input force); default 1.
    pub mass: f64,
    /// Initial `[h, v]`; default `[1, 0]` (dropped from 1 m).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x0: Option<Vec<f64>>,
    /// Measured states; default `["h"]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Vec<String>>,
}

impl Default for BouncingBallParams {
    fn default() -> Self {
        BouncingBallParams {
            gravity: 9.81,
            restitution: 0.8,
            mass: 1.0,
            x0: None,
            outputs: None,
        }
    }
}

/// A built bouncing ball.
#[derive(Clone, Debug, PartialEq)]
pub struct BouncingBall {
    p: BouncingBallParams,
    sel: Selection,
}

impl BouncingBall {
    /// # Errors
    /// [`ConfigError`] naming a negative gravity, a restitution outside
    /// `[0, 1]`, a non-positive mass, or a bad `x0` / `outputs`.
    pub fn new(key: &KeyPath, p: &BouncingBallParams) -> Result<Self, ConfigError> {
        let k = |f: &str| key.child(f);
        check_non_negative(&k("gravity"), p.gravity)?;
        check_non_negative(&k("restitution"), p.restitution)?;
        if p.restitution > 1.0 {
            return Err(ConfigError::invalid(
                k("restitution"),
                format!(
                    "must be at most 1 (no energy gain), found {}",
                    p.restitution
                ),
            ));
        }
        check_positive(&k("mass"), p.mass)?;
        let sel = Selection::new(key, &STATES, &p.x0, &[1.0, 0.0], &p.outputs, &["h"])?;
        Ok(BouncingBall { p: p.clone(), sel })
    }

    pub fn params(&self) -> &BouncingBallParams {
        &self.p
    }
}

impl Plant for BouncingBall {
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
        let a = -self.p.gravity + u[0] / self.p.mass;
        dx[0] = x[1];
        // At rest on the floor, the floor carries a downward net force.
        dx[1] = if x[0] == 0.0 && x[1] == 0.0 && a < 0.0 {
            0.0
        } else {
            a
        };
    }

    #[inline]
    fn output(&self, _t: f64, x: &[f64], _u: &[f64], y: &mut [f64]) {
        self.sel.output(x, y);
    }

    fn guard_count(&self) -> usize {
        1
    }

    /// The floor: height above it.
    #[inline]
    fn guards(&self, _t: f64, x: &[f64], _u: &[f64], g: &mut [f64]) {
        g[0] = x[0];
    }

    fn reset(&self, _t: f64, x: &mut [f64], u: &[f64], _guard: usize) {
        let (h, v) = (x[0], x[1]);
        let a = -self.p.gravity + u[0] / self.p.mass;
        let v_imp = (v * v - 2.0 * a * h).max(0.0).sqrt();
        x[0] = 0.0;
        x[1] = self.p.restitution * v_imp;
    }

    /// The impacts accumulate: the ball rests on the floor.
    fn settle(&self, _t: f64, x: &mut [f64], _u: &[f64], _guard: usize) -> bool {
        x[0] = 0.0;
        x[1] = 0.0;
        true
    }
}
