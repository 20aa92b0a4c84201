//! Every kind controlsim has, as a [`Component`](super::Component).
//!
//! | adapter | inputs | outputs | timing |
//! |---------|--------|---------|--------|
//! | [`PlantComponent`] (any [`PlantModel`](crate::PlantModel)) | `u` (the plant's inputs; not direct feedthrough) | `y` (the plant's outputs), `motion` (`position`, `velocity`, `acceleration`, `length`; plants with a body only) | every step |
//! | [`SensorComponent`] | `y` (source `plant`), or `own` and `ahead` (`motion` ports; source `radar`) | `y` (the sample) | its period and phase |
//! | [`ActuatorComponent`] | `u` (the control) | `u` (the applied, saturated value) | on new input |
//! | [`ReferenceComponent`] | none | `r` (the signals at the boundary) | every step |
//! | [`ControllerComponent`] (any [`ControllerConfig`](crate::ControllerConfig)) | `measurement`, and `extra` (CACC: the predecessor's acceleration) | `u` | its period and phase, or on new input (`trigger = "event"`) |
//!
//! Inputs are direct feedthrough except a plant's `u`. The adapters wrap the
//! existing abstractions (the [`Plant`](crate::Plant) trait through
//! [`PlantModel`](crate::PlantModel), the built controller through
//! [`ControllerConfig`](crate::ControllerConfig)), so a new plant or
//! controller kind added there is a component kind with no change here.

mod actuator;
mod controller;
mod plant;
mod reference;
mod sensor;

pub use actuator::ActuatorComponent;
pub use controller::{ControllerComponent, ControllerShape};
pub use plant::{PlantComponent, MOTION};
pub use reference::ReferenceComponent;
pub use sensor::SensorComponent;

/// `dst.copy_from_slice(src)`, a single element (the common case: one
/// channel, one input) without a call to `memcpy`.
#[inline]
fn copy_values(dst: &mut [f64], src: &[f64]) {
    match (dst, src) {
        ([d], [s]) => *d = *s,
        (d, s) => d.copy_from_slice(s),
    }
}
