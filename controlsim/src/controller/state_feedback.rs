//! Static state feedback `u = sat(-K y + N r)`.
//!
//! `y` is the whole measurement vector (usually the plant's full state, i.e. a
//! plant whose outputs are its states); `K` is `m x ny` for `m` plant inputs.
//! `N` (`m x nr`) scales the `nr` reference channels, for example the
//! classic `N = 1 / (C (BK - A)^-1 B)` for zero steady-state error; without
//! `n` the law is a regulator and takes no reference.

use super::{BuildContext, LawShape, Limits, Step};
use crate::config::PerChannel;
use crate::error::ConfigError;
use crate::matrix::Matrix;

super::timing_fields! {
    /// `kind = "state_feedback"`.
    pub struct StateFeedbackConfig {
        /// Gain K, plant inputs x measurements; required.
        pub k: Vec<Vec<f64>>,
        /// Reference gain N, plant inputs x reference channels; default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub n: Option<Vec<Vec<f64>>>,
        /// Lower output limit per channel; default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub u_min: Option<PerChannel>,
        /// Upper output limit per channel; default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub u_max: Option<PerChannel>,
    }
}

#[derive(Clone, Debug)]
pub(crate) struct StateFeedback {
    k: Matrix,
    n: Option<Matrix>,
    limits: Limits,
}

/// Builds `N` with `m` rows; its column count is the number of references.
pub(crate) fn reference_gain(
    ctx: &BuildContext,
    n: &Option<Vec<Vec<f64>>>,
) -> Result<Option<Matrix>, ConfigError> {
    let Some(rows) = n else {
        ctx.check_references(0, "a law without `n`")?;
        return Ok(None);
    };
    let cols = rows.first().map_or(0, Vec::len);
    if cols == 0 {
        return Err(ConfigError::invalid(
            ctx.k("n"),
            "needs at least one column",
        ));
    }
    let n = Matrix::from_rows_shaped(&ctx.k("n"), rows, ctx.plant_inputs, cols)?;
    ctx.check_references(cols, &format!("an `n` with {cols} columns"))?;
    Ok(Some(n))
}

impl StateFeedback {
    pub(crate) fn new(
        ctx: &BuildContext,
        c: &StateFeedbackConfig,
    ) -> Result<(Self, LawShape), ConfigError> {
        let k = Matrix::from_rows_shaped(&ctx.k("k"), &c.k, ctx.plant_inputs, ctx.measurements)?;
        let n = reference_gain(ctx, &c.n)?;
        let limits = Limits::new(ctx, &c.u_min, &c.u_max)?;
        let shape = LawShape {
            extras: vec![],
            references: n.as_ref().map_or(0, Matrix::cols),
            state_names: vec![],
            state0: vec![],
            memory: 0,
        };
        Ok((StateFeedback { k, n, limits }, shape))
    }

    pub(crate) fn compute(&self, s: &Step, out: &mut [f64]) {
        let y = &s.input[..self.k.cols()];
        match &self.n {
            Some(n) => n.mul_into(s.reference, out),
            None => out.fill(0.0),
        }
        self.k.mul_sub_into(y, out);
        self.limits.apply_all(out);
    }
}
