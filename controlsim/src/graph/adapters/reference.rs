//! Reference and disturbance signals as a component.

use crate::error::ConfigError;
use crate::graph::component::{
    Component, Ctx, Declaration, Inputs, Needs, Outputs, PortSpec, Timing,
};
use crate::key_path::KeyPath;
use crate::reference::{Signal, SignalConfig};

/// Signals evaluated at every boundary: no inputs, output `r` with one
/// element per signal. (A continuous controller that needs its reference
/// at the solver's stage times takes it as its own parameter instead, see
/// [`ControllerShape::reference`](super::ControllerShape::reference).)
#[derive(Debug)]
pub struct ReferenceComponent {
    signals: Vec<Signal>,
}

impl ReferenceComponent {
    /// # Errors
    /// [`ConfigError`] for a bad signal (keys `key.signals[j]`) or none.
    pub fn new(key: &KeyPath, signals: &[SignalConfig]) -> Result<Self, ConfigError> {
        if signals.is_empty() {
            return Err(ConfigError::invalid(
                key.child("signals"),
                "needs at least one signal",
            ));
        }
        let signals = signals
            .iter()
            .enumerate()
            .map(|(j, s)| Signal::new(&key.child("signals").at(j), s))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ReferenceComponent { signals })
    }
}

impl Component for ReferenceComponent {
    fn needs(&self) -> Needs {
        Needs::OUTPUT_ONLY
    }

    fn declare(&self) -> Declaration {
        Declaration {
            inputs: Vec::new(),
            outputs: vec![PortSpec::new("r", self.signals.len())],
            states: Vec::new(),
            guards: 0,
            timing: Timing::EveryStep,
        }
    }

    fn output(&mut self, cx: &mut Ctx, _x: &[f64], _u: &Inputs, y: &mut Outputs) {
        for (r, s) in y.port(0).iter_mut().zip(&self.signals) {
            *r = s.at(cx.now);
        }
    }
}
