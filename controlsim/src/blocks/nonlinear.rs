//! Nonlinear blocks: `saturation`, `dead_zone`, `quantizer`, `friction`
//! (Coulomb and viscous) are static; `relay` (with hysteresis),
//! `backlash` and `rate_limiter` keep a state; `lookup_1d` and
//! `lookup_2d` interpolate tables linearly with a documented
//! extrapolation. All are direct feedthrough and evaluated every step.

use serde::{Deserialize, Serialize};

use super::common::{
    finite, finite_all, matrix, numbered, one, output_only, port, positive, secs, unit, width,
};
use crate::error::ConfigError;
use crate::graph::{Component, Ctx, Inputs, Outputs, SavedState, StateMismatch, StateReader};
use crate::key_path::KeyPath;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaturationConfig {
    pub lower: f64,
    pub upper: f64,
    #[serde(default = "one")]
    pub width: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeadZoneConfig {
    /// The zone `[start, end]` gives 0; outside, `u - end` or `u - start`.
    pub start: f64,
    pub end: f64,
    #[serde(default = "one")]
    pub width: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuantizerConfig {
    /// `y = interval * round(u / interval)` (halves away from zero).
    pub interval: f64,
    #[serde(default = "one")]
    pub width: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrictionConfig {
    /// `y = coulomb * sign(u) + viscous * u`.
    #[serde(default)]
    pub coulomb: f64,
    #[serde(default)]
    pub viscous: f64,
    #[serde(default = "one")]
    pub width: usize,
}

#[derive(Clone, Copy, Debug)]
enum StaticLaw {
    Saturation { lower: f64, upper: f64 },
    DeadZone { start: f64, end: f64 },
    Quantizer { q: f64 },
    Friction { coulomb: f64, viscous: f64 },
}

/// A memoryless element-wise nonlinearity.
#[derive(Clone, Debug)]
pub struct Static {
    law: StaticLaw,
    width: usize,
}

impl Static {
    pub fn saturation(key: &KeyPath, c: &SaturationConfig) -> Result<Self, ConfigError> {
        let lower = finite(&key.child("lower"), c.lower)?;
        let upper = finite(&key.child("upper"), c.upper)?;
        if lower > upper {
            return Err(ConfigError::invalid(
                key.child("upper"),
                "must not be below `lower`",
            ));
        }
        Ok(Static {
            law: StaticLaw::Saturation { lower, upper },
            width: width(&key.child("width"), c.width)?,
        })
    }

    pub fn dead_zone(key: &KeyPath, c: &DeadZoneConfig) -> Result<Self, ConfigError> {
        let start = finite(&key.child("start"), c.start)?;
        let end = finite(&key.child("end"), c.end)?;
        if start > end {
            return Err(ConfigError::invalid(
                key.child("end"),
                "must not be below `start`",
            ));
        }
        Ok(Static {
            law: StaticLaw::DeadZone { start, end },
            width: width(&key.child("width"), c.width)?,
        })
    }

    pub fn quantizer(key: &KeyPath, c: &QuantizerConfig) -> Result<Self, ConfigError> {
        Ok(Static {
            law: StaticLaw::Quantizer {
                q: positive(&key.child("interval"), c.interval)?,
            },
            width: width(&key.child("width"), c.width)?,
        })
    }

    pub fn friction(key: &KeyPath, c: &FrictionConfig) -> Result<Self, ConfigError> {
        Ok(Static {
            law: StaticLaw::Friction {
                coulomb: finite(&key.child("coulomb"), c.coulomb)?,
                viscous: finite(&key.child("viscous"), c.viscous)?,
            },
            width: width(&key.child("width"), c.width)?,
        })
    }

    #[inline]
    fn apply(&self, u: f64) -> f64 {
        match self.law {
            StaticLaw::Saturation { lower, upper } => u.clamp(lower, upper),
            StaticLaw::DeadZone { start, end } => {
                if u > end {
                    u - end
                } else if u < start {
                    u - start
                } else {
                    0.0
                }
            }
            StaticLaw::Quantizer { q } => q * (u / q).round(),
            StaticLaw::Friction { coulomb, viscous } => {
                let s = if u > 0.0 {
                    1.0
                } else if u < 0.0 {
                    -1.0
                } else {
                    0.0
                };
                coulomb * s + viscous * u
            }
        }
    }
}

impl Component for Static {
    output_only!(|b| port("u", b.width), port("y", b.width));

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        for (yi, &ui) in y.all().iter_mut().zip(u.all()) {
            *yi = self.apply(ui);
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelayConfig {
    /// Switches on when `u >= on_point`.
    pub on_point: f64,
    /// Switches off when `u <= off_point` (`off_point <= on_point`).
    pub off_point: f64,
    #[serde(default = "unit")]
    pub on_value: f64,
    #[serde(default)]
    pub off_value: f64,
    /// Starts on.
    #[serde(default)]
    pub initially_on: bool,
    #[serde(default = "one")]
    pub width: usize,
}

/// `relay`: on/off with hysteresis between `off_point` and `on_point`.
#[derive(Clone, Debug)]
pub struct Relay {
    on_point: f64,
    off_point: f64,
    on_value: f64,
    off_value: f64,
    on: Vec<bool>,
}

impl Relay {
    pub fn new(key: &KeyPath, c: &RelayConfig) -> Result<Self, ConfigError> {
        let on_point = finite(&key.child("on_point"), c.on_point)?;
        let off_point = finite(&key.child("off_point"), c.off_point)?;
        if off_point > on_point {
            return Err(ConfigError::invalid(
                key.child("off_point"),
                "must not be above `on_point`",
            ));
        }
        Ok(Relay {
            on_point,
            off_point,
            on_value: finite(&key.child("on_value"), c.on_value)?,
            off_value: finite(&key.child("off_value"), c.off_value)?,
            on: vec![c.initially_on; width(&key.child("width"), c.width)?],
        })
    }
}

impl Component for Relay {
    output_only!(|b| port("u", b.on.len()), port("y", b.on.len()));

    fn initial_outputs(&self, y: &mut Outputs) {
        for (yi, &on) in y.all().iter_mut().zip(&self.on) {
            *yi = if on { self.on_value } else { self.off_value };
        }
    }

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        for ((yi, on), &ui) in y.all().iter_mut().zip(self.on.iter_mut()).zip(u.all()) {
            if ui >= self.on_point {
                *on = true;
            } else if ui <= self.off_point {
                *on = false;
            }
            *yi = if *on { self.on_value } else { self.off_value };
        }
    }

    fn save(&self, into: &mut SavedState) {
        into.words.extend(self.on.iter().map(|&b| u64::from(b)));
    }

    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        for on in &mut self.on {
            *on = from.word()? != 0;
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BacklashConfig {
    /// Total width of the dead band.
    pub deadband: f64,
    #[serde(default)]
    pub initial: f64,
    #[serde(default = "one")]
    pub width: usize,
}

/// `backlash`: the output follows the input only while the input pushes on
/// an edge of the band `[y - deadband/2, y + deadband/2]`.
#[derive(Clone, Debug)]
pub struct Backlash {
    half: f64,
    y: Vec<f64>,
}

impl Backlash {
    pub fn new(key: &KeyPath, c: &BacklashConfig) -> Result<Self, ConfigError> {
        let d = finite(&key.child("deadband"), c.deadband)?;
        if d < 0.0 {
            return Err(ConfigError::invalid(
                key.child("deadband"),
                "must not be negative",
            ));
        }
        Ok(Backlash {
            half: 0.5 * d,
            y: vec![
                finite(&key.child("initial"), c.initial)?;
                width(&key.child("width"), c.width)?
            ],
        })
    }
}

impl Component for Backlash {
    output_only!(|b| port("u", b.y.len()), port("y", b.y.len()));

    fn initial_outputs(&self, y: &mut Outputs) {
        y.all().copy_from_slice(&self.y);
    }

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        for (s, &ui) in self.y.iter_mut().zip(u.all()) {
            if ui - self.half > *s {
                *s = ui - self.half;
            } else if ui + self.half < *s {
                *s = ui + self.half;
            }
        }
        y.all().copy_from_slice(&self.y);
    }

    fn save(&self, into: &mut SavedState) {
        into.reals.extend_from_slice(&self.y);
    }

    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        from.reals(&mut self.y)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimiterConfig {
    /// Largest rate of rise, units per second (> 0).
    pub rising: f64,
    /// Largest rate of fall, units per second (< 0).
    pub falling: f64,
    #[serde(default = "one")]
    pub width: usize,
}

/// `rate_limiter`: `y(k) = y(k-1) + clamp(u(k) - y(k-1), falling dt,
/// rising dt)`; the first output is the input.
#[derive(Clone, Debug)]
pub struct RateLimiter {
    rising: f64,
    falling: f64,
    y: Vec<f64>,
    /// Seconds of the last output; NaN before the first.
    t: f64,
}

impl RateLimiter {
    pub fn new(key: &KeyPath, c: &RateLimiterConfig) -> Result<Self, ConfigError> {
        let rising = positive(&key.child("rising"), c.rising)?;
        let falling = finite(&key.child("falling"), c.falling)?;
        if falling >= 0.0 {
            return Err(ConfigError::invalid(
                key.child("falling"),
                "must be negative",
            ));
        }
        Ok(RateLimiter {
            rising,
            falling,
            y: vec![0.0; width(&key.child("width"), c.width)?],
            t: f64::NAN,
        })
    }
}

impl Component for RateLimiter {
    output_only!(|b| port("u", b.y.len()), port("y", b.y.len()));

    fn output(&mut self, cx: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        let t = secs(cx.now);
        let dt = t - self.t;
        for (s, &ui) in self.y.iter_mut().zip(u.all()) {
            *s = if self.t.is_nan() {
                ui
            } else {
                *s + (ui - *s).clamp(self.falling * dt, self.rising * dt)
            };
        }
        self.t = t;
        y.all().copy_from_slice(&self.y);
    }

    fn save(&self, into: &mut SavedState) {
        into.reals.extend_from_slice(&self.y);
        into.reals.push(self.t);
    }

    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        from.reals(&mut self.y)?;
        let mut t = [0.0];
        from.reals(&mut t)?;
        self.t = t[0];
        Ok(())
    }
}

/// What a table gives outside its breakpoints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Extrapolation {
    /// The end segment's line continued.
    #[default]
    Linear,
    /// The end value held.
    Clip,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lookup1dConfig {
    /// Strictly increasing, at least two.
    pub breakpoints: Vec<f64>,
    /// One value per breakpoint.
    pub table: Vec<f64>,
    #[serde(default)]
    pub extrapolation: Extrapolation,
    #[serde(default = "one")]
    pub width: usize,
}

fn check_breakpoints(key: &KeyPath, b: &[f64]) -> Result<(), ConfigError> {
    finite_all(key, b)?;
    if b.len() < 2 {
        return Err(ConfigError::invalid(key, "needs at least two breakpoints"));
    }
    if let Some(i) = b.windows(2).position(|w| w[1] <= w[0]) {
        return Err(ConfigError::invalid(
            key.clone().at(i + 1),
            "breakpoints must be strictly increasing",
        ));
    }
    Ok(())
}

/// The segment `i` (between `b[i]` and `b[i+1]`) and the fraction along it
/// for `x`; outside, the end segment with a fraction below 0 or above 1
/// (`clip` limits it to [0, 1]).
#[inline]
fn locate(b: &[f64], x: f64, e: Extrapolation) -> (usize, f64) {
    let n = b.len();
    let i = b.partition_point(|&v| v <= x).clamp(1, n - 1) - 1;
    let f = (x - b[i]) / (b[i + 1] - b[i]);
    let f = match e {
        Extrapolation::Linear => f,
        Extrapolation::Clip => f.clamp(0.0, 1.0),
    };
    (i, f)
}

/// `lookup_1d`: `y = table(u)`, linear between breakpoints.
#[derive(Clone, Debug)]
pub struct Lookup1d {
    b: Vec<f64>,
    t: Vec<f64>,
    e: Extrapolation,
    width: usize,
}

impl Lookup1d {
    pub fn new(key: &KeyPath, c: &Lookup1dConfig) -> Result<Self, ConfigError> {
        check_breakpoints(&key.child("breakpoints"), &c.breakpoints)?;
        finite_all(&key.child("table"), &c.table)?;
        if c.table.len() != c.breakpoints.len() {
            return Err(ConfigError::invalid(
                key.child("table"),
                format!(
                    "has {} values for {} breakpoints",
                    c.table.len(),
                    c.breakpoints.len()
                ),
            ));
        }
        Ok(Lookup1d {
            b: c.breakpoints.clone(),
            t: c.table.clone(),
            e: c.extrapolation,
            width: width(&key.child("width"), c.width)?,
        })
    }
}

impl Component for Lookup1d {
    output_only!(|b| port("u", b.width), port("y", b.width));

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        for (yi, &ui) in y.all().iter_mut().zip(u.all()) {
            let (i, f) = locate(&self.b, ui, self.e);
            *yi = self.t[i] + f * (self.t[i + 1] - self.t[i]);
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lookup2dConfig {
    /// Breakpoints of the first input `u0` (the table's rows).
    pub rows: Vec<f64>,
    /// Breakpoints of the second input `u1` (the table's columns).
    pub columns: Vec<f64>,
    /// `rows` x `columns` values.
    pub table: Vec<Vec<f64>>,
    #[serde(default)]
    pub extrapolation: Extrapolation,
    #[serde(default = "one")]
    pub width: usize,
}

/// `lookup_2d`: `y = table(u0, u1)`, bilinear.
#[derive(Clone, Debug)]
pub struct Lookup2d {
    r: Vec<f64>,
    c: Vec<f64>,
    t: Vec<f64>,
    e: Extrapolation,
    width: usize,
}

impl Lookup2d {
    pub fn new(key: &KeyPath, c: &Lookup2dConfig) -> Result<Self, ConfigError> {
        check_breakpoints(&key.child("rows"), &c.rows)?;
        check_breakpoints(&key.child("columns"), &c.columns)?;
        let (nr, nc, t) = matrix(&key.child("table"), &c.table)?;
        if nr != c.rows.len() || nc != c.columns.len() {
            return Err(ConfigError::invalid(
                key.child("table"),
                format!(
                    "must be {} x {} (rows x columns)",
                    c.rows.len(),
                    c.columns.len()
                ),
            ));
        }
        Ok(Lookup2d {
            r: c.rows.clone(),
            c: c.columns.clone(),
            t,
            e: c.extrapolation,
            width: width(&key.child("width"), c.width)?,
        })
    }
}

impl Component for Lookup2d {
    output_only!(|b| numbered("u", 2, b.width), port("y", b.width));

    fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
        let nc = self.c.len();
        let (a, b) = (u.port(0), u.port(1));
        for (e, yi) in y.port(0).iter_mut().enumerate() {
            let (i, fr) = locate(&self.r, a[e], self.e);
            let (j, fc) = locate(&self.c, b[e], self.e);
            let t = |r: usize, c: usize| self.t[r * nc + c];
            let low = t(i, j) + fc * (t(i, j + 1) - t(i, j));
            let high = t(i + 1, j) + fc * (t(i + 1, j + 1) - t(i + 1, j));
            *yi = low + fr * (high - low);
        }
    }
}
