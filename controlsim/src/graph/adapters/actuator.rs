//! The actuator as a component.

use crate::actuator::{Actuator, ActuatorConfig};
use crate::error::ConfigError;
use crate::graph::component::{
    Component, Ctx, Declaration, Inputs, Needs, Outputs, PortSpec, SavedState, StateMismatch,
    StateReader, Timing,
};
use crate::key_path::KeyPath;

/// Zero-order hold with saturation: input `u` (the control), output `u`
/// (the applied value). Evaluated when its input has a new value, so it
/// holds its `initial` value until the first control arrives.
#[derive(Debug)]
pub struct ActuatorComponent {
    actuator: Actuator,
}

impl ActuatorComponent {
    /// An actuator of `channels` channels; `key` prefixes error keys.
    ///
    /// # Errors
    /// As the loop's actuator: bad limits or initial values.
    pub fn new(
        key: &KeyPath,
        config: &ActuatorConfig,
        channels: usize,
    ) -> Result<Self, ConfigError> {
        Ok(ActuatorComponent {
            actuator: Actuator::new(key, config, channels)?,
        })
    }

    /// The saturation limits per channel.
    pub fn limits(&self) -> (&[f64], &[f64]) {
        self.actuator.limits()
    }

    /// The value last received (before saturation).
    pub fn held(&self) -> &[f64] {
        &self.actuator.held
    }

    /// The value applied (after saturation).
    pub fn applied(&self) -> &[f64] {
        &self.actuator.applied
    }
}

impl Component for ActuatorComponent {
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn needs(&self) -> Needs {
        Needs::OUTPUT_ONLY
    }

    fn declare(&self) -> Declaration {
        let n = self.actuator.held.len();
        Declaration {
            inputs: vec![PortSpec::new("u", n)],
            outputs: vec![PortSpec::new("u", n)],
            states: Vec::new(),
            guards: 0,
            timing: Timing::OnInput,
        }
    }

    fn initial_outputs(&self, y: &mut Outputs) {
        y.port(0).copy_from_slice(&self.actuator.applied);
    }

    /// The applied value goes to `y` as it is computed: this is on the
    /// chain from the controller's output to the plant's next step.
    fn output(&mut self, _cx: &mut Ctx, _x: &[f64], u: &Inputs, y: &mut Outputs) {
        // One port each way: `all` is that port.
        for (i, (y, &v)) in y.all().iter_mut().zip(u.all()).enumerate() {
            *y = self.actuator.set(i, v);
        }
    }

    fn save(&self, into: &mut SavedState) {
        into.reals.extend_from_slice(&self.actuator.held);
    }

    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        from.reals(&mut self.actuator.held)?;
        for i in 0..self.actuator.held.len() {
            self.actuator.refresh(i);
        }
        Ok(())
    }
}
