//! Any plant as a component.

use std::cell::Cell;
use std::num::NonZeroU64;

use crate::advance;
use crate::error::ConfigError;
use crate::graph::component::{
    Component, Ctx, Declaration, Inputs, Needs, Outputs, PortSpec, SavedState, StateMismatch,
    StateReader, Timing,
};
use crate::key_path::KeyPath;
use crate::plant::{with_plant, Plant, PlantModel, Signature, TimeDomain};
use crate::solver::{SolverKind, Workspace};
use crate::time::StepSize;

/// Element names of a `motion` port.
pub const MOTION: [&str; 4] = ["position", "velocity", "acceleration", "length"];
/// The units of [`MOTION`]'s elements.
const MOTION_UNITS: [&str; 4] = ["m", "m/s", "m/s²", "m"];

/// A [`PlantModel`] (built-in or [`Custom`](PlantModel::Custom)) as a
/// component: input `u`, outputs `y` and (for plants with a body) `motion`.
///
/// Its outputs at a boundary are read with the input held over the step
/// that just ended (the left limit, `y(t_k^-)`): so `u` is not direct
/// feedthrough and a loop through a plant is never algebraic, and a sensor
/// sees exactly what a [`System`](crate::System)'s sensor sees. A continuous
/// plant's states are the component's continuous states; a discrete plant
/// (period `m` steps) keeps its state inside and updates it as the
/// [`System`](crate::System) does: input latched at boundaries `n m`, new
/// state from boundary `(n + 1) m`.
#[derive(Debug)]
pub struct PlantComponent {
    model: PlantModel,
    signature: Signature,
    motion: bool,
    discrete: Option<NonZeroU64>,
    /// The input over the last step (initially the input at the start),
    /// latched by [`integrate`](Component::integrate), which the engine
    /// calls with it at every step of a continuous plant without guards,
    /// so such a plant needs no `advance` call (cells: `integrate` takes
    /// `&self`); by `advance` where the engine does not call `integrate`
    /// (see [`latches_in_advance`](Self::latches_in_advance)).
    held: Box<[Cell<f64>]>,
    /// Scratch for the held input as a slice (plants of several inputs).
    held_now: Vec<f64>,
    /// Discrete plants: the state, the input latched for the period, scratch.
    xd: Vec<f64>,
    latched: Vec<f64>,
    next: Vec<f64>,
}

impl PlantComponent {
    /// `key` names the component in errors (`components[0]`); `step` is the
    /// graph's, against which a discrete plant's period is checked.
    ///
    /// # Errors
    /// [`ConfigError`] for a period off the step grid, a non-finite initial
    /// state or a discrete plant with guards.
    pub fn new(key: &KeyPath, model: PlantModel, step: StepSize) -> Result<Self, ConfigError> {
        let p = model.as_plant();
        let signature = p.signature();
        let n = signature.states.len();
        let m = signature.inputs.len();
        let discrete = match p.time_domain() {
            TimeDomain::Continuous => None,
            TimeDomain::Discrete { period } => Some(step.period_steps(period).map_err(
                |source| ConfigError::Time {
                    key: key.child("period"),
                    source,
                },
            )?),
        };
        if discrete.is_some() && p.guard_count() > 0 {
            return Err(ConfigError::invalid(
                key,
                "a discrete plant cannot have guards: events are located in continuous time",
            ));
        }
        let mut x0 = vec![0.0; n];
        p.initial_state(&mut x0);
        crate::matrix::check_finite_all(&key.child("x0"), &x0)?;
        let motion = p.kinematics(&x0).is_some();
        let (xd, next) = match discrete {
            Some(_) => (x0, vec![0.0; n]),
            None => (Vec::new(), Vec::new()),
        };
        Ok(PlantComponent {
            model,
            signature,
            motion,
            discrete,
            held: vec![Cell::new(0.0); m].into_boxed_slice(),
            held_now: vec![0.0; m],
            xd,
            latched: if discrete.is_some() {
                vec![0.0; m]
            } else {
                Vec::new()
            },
            next,
        })
    }

    pub fn signature(&self) -> &Signature {
        &self.signature
    }

    /// The plant model (its outputs and body motion for any state).
    pub fn model(&self) -> &PlantModel {
        &self.model
    }

    /// Whether `advance` must latch the held input: the engine integrates
    /// with [`integrate`](Component::integrate) only a continuous plant
    /// with states and no guards (it locates guards itself, and a discrete
    /// plant keeps its state inside).
    fn latches_in_advance(&self) -> bool {
        self.discrete.is_some()
            || self.signature.states.is_empty()
            || self.model.as_plant().guard_count() > 0
    }

    #[inline]
    fn latch(&self, u: &[f64]) {
        match (&*self.held, u) {
            ([h], [v]) => h.set(*v),
            (h, u) => {
                for (h, &v) in h.iter().zip(u) {
                    h.set(v);
                }
            }
        }
    }

    /// The plant's state: the continuous states `x` the engine holds, or a
    /// discrete plant's own.
    pub fn state<'a>(&'a self, x: &'a [f64]) -> &'a [f64] {
        if self.discrete.is_some() {
            &self.xd
        } else {
            x
        }
    }
}

impl Component for PlantComponent {
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn declare(&self) -> Declaration {
        let plant = self.model.as_plant();
        let with_units = |port: PortSpec| {
            let units = port.elements.iter().map(|e| plant.unit(e)).collect();
            port.with_units(units)
        };
        let mut outputs = vec![with_units(PortSpec::named("y", &self.signature.outputs))];
        if self.motion {
            let names: Vec<String> = MOTION.iter().map(|s| s.to_string()).collect();
            let units = MOTION_UNITS.iter().map(|u| Some(u.to_string())).collect();
            outputs.push(PortSpec::named("motion", &names).with_units(units));
        }
        Declaration {
            inputs: vec![with_units(PortSpec::named("u", &self.signature.inputs)).delayed()],
            outputs,
            states: if self.discrete.is_some() {
                Vec::new()
            } else {
                self.signature.states.clone()
            },
            guards: self.model.as_plant().guard_count(),
            timing: Timing::EveryStep,
        }
    }

    fn initial_state(&self, x: &mut [f64]) {
        if self.discrete.is_none() {
            self.model.as_plant().initial_state(x);
        }
    }

    fn initial_outputs(&self, y: &mut Outputs) {
        y.all().fill(0.0);
    }

    fn start(&mut self, u: &Inputs) {
        self.latch(u.port(0));
    }

    fn output(&mut self, cx: &mut Ctx, x: &[f64], _u: &Inputs, y: &mut Outputs) {
        let x = if self.discrete.is_some() {
            &self.xd[..]
        } else {
            x
        };
        let t = cx.now.as_secs_f64();
        let one;
        let held: &[f64] = match &*self.held {
            [h] => {
                one = [h.get()];
                &one
            }
            h => {
                for (d, c) in self.held_now.iter_mut().zip(h) {
                    *d = c.get();
                }
                &self.held_now
            }
        };
        with_plant!(&self.model, p => p.output(t, x, held, y.port(0)));
        if self.motion {
            if let Some(k) = with_plant!(&self.model, p => p.kinematics(x)) {
                y.port(1)
                    .copy_from_slice(&[k.position, k.velocity, k.acceleration, k.length]);
            }
        }
    }

    #[inline]
    fn derivative(&self, t: f64, x: &[f64], u: &Inputs, dx: &mut [f64]) {
        self.model.as_plant().derivative(t, x, u.port(0), dx);
    }

    /// The step a [`System`](crate::System) takes for the same plant
    /// (the crate's `advance` module), size-specialised and inlined.
    #[inline]
    fn integrate(
        &self,
        solver: SolverKind,
        ws: &mut Workspace,
        t: f64,
        h: f64,
        x: &mut [f64],
        u: &Inputs,
    ) {
        let u = u.port(0);
        advance::integrate_plant(&self.model, solver, ws, t, h, x, u);
        self.latch(u);
    }

    #[inline]
    fn integrate_stretch(
        &self,
        solver: SolverKind,
        ws: &mut Workspace,
        step: StepSize,
        k: u64,
        n: u64,
        x: &mut [f64],
        u: &Inputs,
    ) -> Result<(), u64> {
        let u = u.port(0);
        let done = advance::integrate_plant_stretch(&self.model, solver, ws, step, k, n, x, u);
        self.latch(u);
        done
    }

    fn advance(&mut self, cx: &mut Ctx, u: &Inputs) {
        let u = u.port(0);
        if let Some(m) = self.discrete {
            advance::advance_discrete(
                &self.model,
                m.get(),
                cx.k,
                cx.step,
                &mut self.xd,
                &mut self.latched,
                &mut self.next,
                u,
            );
        }
        self.latch(u);
    }

    fn guards(&self, t: f64, x: &[f64], u: &Inputs, g: &mut [f64]) {
        self.model.as_plant().guards(t, x, u.port(0), g);
    }

    fn reset(&self, t: f64, x: &mut [f64], u: &Inputs, guard: usize) {
        self.model.as_plant().reset(t, x, u.port(0), guard);
    }

    fn settle(&self, t: f64, x: &mut [f64], u: &Inputs, guard: usize) -> bool {
        self.model.as_plant().settle(t, x, u.port(0), guard)
    }

    /// The built-in kinds never fail and compute their outputs from the
    /// state, the held input and the time alone; a plant from outside the
    /// crate (an FMU is one) may fail, and its `output` is not known to be
    /// pure, so it is evaluated at every boundary.
    ///
    /// `advance` only latches the held input (and steps a discrete plant),
    /// so it is needed only where `integrate` does not latch it.
    fn needs(&self) -> Needs {
        let custom = matches!(self.model, PlantModel::Custom(_));
        Needs {
            advance: self.latches_in_advance(),
            fault: custom,
            pure_output: !custom,
            ..Needs::ADVANCE
        }
    }

    fn fault(&self) -> Option<String> {
        with_plant!(&self.model, p => p.fault())
    }

    fn discrete_states(&self) -> &[f64] {
        &self.xd
    }

    fn save(&self, into: &mut SavedState) {
        into.reals.extend(self.held.iter().map(Cell::get));
        into.reals.extend_from_slice(&self.xd);
        into.reals.extend_from_slice(&self.latched);
    }

    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        from.reals(&mut self.held_now)?;
        self.latch(&self.held_now);
        from.reals(&mut self.xd)?;
        from.reals(&mut self.latched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plant::PlantConfig;

    fn declared(toml_text: &str) -> Declaration {
        let key = KeyPath::key("plant");
        let config: PlantConfig = toml::from_str(toml_text).unwrap();
        let model = PlantModel::from_config(&key, &config).unwrap();
        let step = StepSize::new(crate::time::SimTime::from_millis(1)).unwrap();
        PlantComponent::new(&key, model, step).unwrap().declare()
    }

    fn units(port: &PortSpec) -> Vec<Option<&str>> {
        (0..port.size).map(|i| port.unit(i)).collect()
    }

    /// A built-in kind's ports carry its units, element by element, in the
    /// order the outputs are chosen; a body's motion too.
    #[test]
    fn built_in_plants_declare_the_units_of_every_element() {
        let servo = declared("kind = \"dc_servo\"\noutputs = [\"omega\", \"theta\"]");
        assert_eq!(units(&servo.outputs[0]), [Some("rad/s"), Some("rad")]);
        assert_eq!(units(&servo.inputs[0]), [Some("V")]);
        let car = declared("kind = \"vehicle\"");
        assert_eq!(car.outputs[1].name, "motion");
        assert_eq!(
            units(&car.outputs[1]),
            [Some("m"), Some("m/s"), Some("m/s²"), Some("m")]
        );
        assert_eq!(units(&car.inputs[0]), [Some("m/s²")]);
    }

    /// A kind whose signals the user names declares no unit: its ports
    /// keep no unit list at all.
    #[test]
    fn user_named_plants_declare_none() {
        let tf = declared("kind = \"transfer_function\"\nnum = [1.0]\nden = [1.0, 1.0]");
        assert!(tf.outputs[0].units.is_empty() && tf.inputs[0].units.is_empty());
        assert_eq!(tf.outputs[0].unit(0), None);
    }
}
