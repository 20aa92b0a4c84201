//! Open loop: `u = r`, one reference channel per plant input. The
//! measurement is accepted and ignored. For feed-forward experiments, for
//! plants driven by a known signal (a forced oscillator, a dropped ball), and
//! as a baseline that a network cannot disturb.

use super::{BuildContext, LawShape, Step};
use crate::error::ConfigError;

super::timing_fields! {
    /// `kind = "open_loop"`: only the timing keys.
    pub struct OpenLoopConfig {}
}

#[derive(Clone, Debug)]
pub(crate) struct OpenLoop;

impl OpenLoop {
    pub(crate) fn new(
        ctx: &BuildContext,
        _c: &OpenLoopConfig,
    ) -> Result<(Self, LawShape), ConfigError> {
        ctx.check_references(
            ctx.plant_inputs,
            "an open_loop controller (one per plant input)",
        )?;
        let shape = LawShape {
            extras: vec![],
            references: ctx.plant_inputs,
            state_names: vec![],
            state0: vec![],
            memory: 0,
        };
        Ok((OpenLoop, shape))
    }

    pub(crate) fn compute(&self, s: &Step, out: &mut [f64]) {
        out.copy_from_slice(s.reference);
    }
}
