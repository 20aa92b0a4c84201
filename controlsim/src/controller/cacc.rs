//! Cooperative adaptive cruise control: constant time-gap spacing with
//! feed-forward of the predecessor's acceleration (received over V2V).
//!
//! With the radar measurement `[gap, relative_speed, speed, acceleration]`
//! and the predecessor's acceleration `a_pred` as input component 4:
//!
//! ```text
//! desired gap  d_ref = standstill + time_gap * v
//! e     = gap - d_ref
//! e'    = relative_speed - time_gap * a
//! u     = sat(feedforward * a_pred + kp e + kd e')
//! ```
//!
//! Defaults follow Ploeg et al. (2011): `time_gap = 0.7 s`, `kp = 0.2`,
//! `kd = 0.7`, for vehicles with an engine lag around 0.1 s; with those the
//! follower's closed loop `tau s^3 + (1 + kd h) s^2 + (kd + kp h) s + kp` is
//! stable. The loop needs `predecessor` and `sensor.source = "radar"`.

use super::{BuildContext, ExtraInput, LawShape, Limits, Step};
use crate::config::PerChannel;
use crate::error::ConfigError;
use crate::matrix::{check_finite, check_non_negative};
use crate::sensor::SensorSource;

super::timing_fields! {
    /// `kind = "cacc"`; every law key has a default.
    pub struct CaccConfig {
        /// Time gap h, s; default 0.7.
        #[serde(default = "default_time_gap")]
        pub time_gap: f64,
        /// Standstill distance, m; default 2.
        #[serde(default = "default_standstill")]
        pub standstill: f64,
        /// Gain on the spacing error, 1/s^2; default 0.2.
        #[serde(default = "default_kp")]
        pub kp: f64,
        /// Gain on its rate, 1/s; default 0.7.
        #[serde(default = "default_kd")]
        pub kd: f64,
        /// Gain on the predecessor's acceleration; default 1.
        #[serde(default = "default_feedforward")]
        pub feedforward: f64,
        /// Lower acceleration command limit; default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub u_min: Option<f64>,
        /// Upper acceleration command limit; default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub u_max: Option<f64>,
    }
}

fn default_time_gap() -> f64 {
    0.7
}
fn default_standstill() -> f64 {
    2.0
}
fn default_kp() -> f64 {
    0.2
}
fn default_kd() -> f64 {
    0.7
}
fn default_feedforward() -> f64 {
    1.0
}

/// Index of the feed-forward input component.
pub const PREDECESSOR_ACCELERATION_INPUT: usize = 4;

#[derive(Clone, Debug)]
pub(crate) struct Cacc {
    time_gap: f64,
    standstill: f64,
    kp: f64,
    kd: f64,
    ff: f64,
    limits: Limits,
}

impl Cacc {
    pub(crate) fn new(ctx: &BuildContext, c: &CaccConfig) -> Result<(Self, LawShape), ConfigError> {
        check_non_negative(&ctx.k("time_gap"), c.time_gap)?;
        check_finite(&ctx.k("standstill"), c.standstill)?;
        check_finite(&ctx.k("kp"), c.kp)?;
        check_finite(&ctx.k("kd"), c.kd)?;
        check_finite(&ctx.k("feedforward"), c.feedforward)?;
        ctx.check_siso_plant("a cacc controller")?;
        ctx.check_references(0, "a cacc controller")?;
        let Some(predecessor) = ctx.predecessor else {
            return Err(ConfigError::invalid(
                ctx.key.clone(),
                "a cacc controller needs the loop's `predecessor`",
            ));
        };
        if ctx.sensor_source != SensorSource::Radar {
            return Err(ConfigError::invalid(
                ctx.key.clone(),
                "a cacc controller needs sensor.source = \"radar\"",
            ));
        }
        let limits = Limits::new(
            ctx,
            &c.u_min.map(PerChannel::All),
            &c.u_max.map(PerChannel::All),
        )?;
        let law = Cacc {
            time_gap: c.time_gap,
            standstill: c.standstill,
            kp: c.kp,
            kd: c.kd,
            ff: c.feedforward,
            limits,
        };
        let shape = LawShape {
            extras: vec![ExtraInput::PredecessorAcceleration { predecessor }],
            references: 0,
            state_names: vec![],
            state0: vec![],
            memory: 0,
        };
        Ok((law, shape))
    }

    pub(crate) fn compute(&self, s: &Step, out: &mut [f64]) {
        let (gap, dv, v, a) = (s.input[0], s.input[1], s.input[2], s.input[3]);
        let a_pred = s.input[PREDECESSOR_ACCELERATION_INPUT];
        let e = gap - (self.standstill + self.time_gap * v);
        let de = dv - self.time_gap * a;
        out[0] = self
            .limits
            .apply(0, self.ff * a_pred + self.kp * e + self.kd * de)
            .0;
    }
}
