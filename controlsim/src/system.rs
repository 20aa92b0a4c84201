//! The engine: N loops sharing one step and one solver, advanced in
//! lock-step, with the calls a co-simulation driver needs at step boundaries.
//!
//! # Lifecycle
//! 1. Build: [`System::from_config`] (scenario file) or
//!    [`System::from_specs`] (with user-written plants). Everything is checked
//!    here; a built system never fails on configuration again.
//! 2. At each boundary `k` where something happens, in this order:
//!    - deliver what arrived at `k`: [`set_controller_input`](System::set_controller_input),
//!      [`set_actuator`](System::set_actuator) / [`zero_actuator`](System::zero_actuator);
//!    - take the samples due at `k`: [`sample`](System::sample) (and, for
//!      CACC, [`extra_input`](System::extra_input));
//!    - compute the controls due at `k`: [`compute_control`](System::compute_control)
//!      or, for continuous controllers, [`rollback_response`](System::rollback_response);
//!      an answer to a packet that arrived inside the step that ended at `k`
//!      is computed at its arrival time with the `_at` variants.
//!
//!    (The exact interleaving for the zero-delay case is fixed in
//!    [`closed_loop`](crate::closed_loop).)
//! 3. [`advance_to(k1, observer)`](System::advance_to): integrate steps
//!    `k..k1` with everything held; `observer` sees each boundary `k..k1-1`
//!    just before its step is integrated, after the driver's calls.
//! 4. At any boundary: [`snapshot`](System::snapshot) /
//!    [`restore`](System::restore), bit-exact.
//!
//! # Practical considerations
//! - All per-step work (`advance_to`) is allocation-free; a test with a
//!   counting allocator holds it to that.
//! - Loops only interact through radar sensors and CACC feed-forward, which
//!   read other loops' states *at the boundary*; no call at a boundary changes
//!   a state, so the order in which loops are served at one boundary does not
//!   matter.
//! - Plants with guard functions (a bouncing ball's floor) have their events
//!   located inside the step, reset there and integrated on to the end of the
//!   step ([`event`](crate::event)); the driver and observers see the
//!   boundaries as for any plant. Plants without guards take the plain
//!   solver step, with no event cost.
//! - A state that becomes NaN or infinite stops `advance_to` with
//!   [`StepError::NonFinite`] naming the loop, state and time.

use std::num::NonZeroU64;

use netloop_time::SimTime;

use crate::actuator::Actuator;
use crate::advance::{self, BadTarget};
use crate::config::{LoopConfig, LoopRef, SystemConfig};
use crate::controller::{BuildContext, Controller, ExtraInput, StepClock, Trigger};
use crate::error::{ApiError, ConfigError, ObserverError, StepError};
use crate::event::{Event, Guards, ZenoError};
use crate::key_path::KeyPath;
use crate::plant::{with_plant, Kinematics, Plant, PlantModel, Signature, TimeDomain};
use crate::reference::Signal;
use crate::sensor::{Sensor, SensorSource, RADAR_CHANNELS};
use crate::solver::{SolverKind, Workspace};
use crate::time::{Periodic, StepSize};

/// Sees the system at each boundary during [`System::advance_to`].
pub trait Observer {
    /// Called at boundary `system.k()`, after the driver's calls for that
    /// boundary and before the step is integrated.
    ///
    /// # Errors
    /// Any error stops `advance_to` with [`StepError::Observer`].
    fn observe(&mut self, system: &System) -> Result<(), ObserverError>;
}

/// The observer that does nothing, for silent runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Observer for Silent {
    #[inline]
    fn observe(&mut self, _: &System) -> Result<(), ObserverError> {
        Ok(())
    }
}

impl crate::view::LoopObserver for Silent {
    #[inline]
    fn observe_loops<V: crate::view::LoopView + ?Sized>(
        &mut self,
        _: &V,
    ) -> Result<(), ObserverError> {
        Ok(())
    }
}

impl<F: FnMut(&System)> Observer for F {
    #[inline]
    fn observe(&mut self, system: &System) -> Result<(), ObserverError> {
        self(system);
        Ok(())
    }
}

/// One loop for [`System::from_specs`]: a [`LoopConfig`] with the plant
/// already built, so it can be a user's own [`Plant`].
pub type LoopSpec = LoopConfig<PlantModel>;

/// One loop of a built system: read access for recording and metrics.
#[derive(Debug)]
pub struct Loop {
    pub(crate) name: String,
    pub(crate) predecessor: Option<usize>,
    pub(crate) plant: PlantModel,
    pub(crate) signature: Signature,
    /// Update period in steps of a discrete plant.
    pub(crate) discrete: Option<NonZeroU64>,
    pub(crate) sensor_channels: Vec<String>,
    pub(crate) references: Vec<Signal>,
    // --- mutable state (all of it is in a snapshot) ---
    pub(crate) x: Vec<f64>,
    /// Input latched at the start of a discrete plant's period.
    pub(crate) latched: Vec<f64>,
    pub(crate) resets: u64,
    /// Guard modes and the last event, for plants with guards.
    pub(crate) guards: Option<Guards>,
    pub(crate) sensor: Sensor,
    pub(crate) actuator: Actuator,
    pub(crate) controller: Controller,
    // --- scratch ---
    x_next: Vec<f64>,
}

impl Loop {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The predecessor loop's index, if any.
    pub fn predecessor(&self) -> Option<usize> {
        self.predecessor
    }

    /// Plant state, input and output names (and so dimensions).
    pub fn signature(&self) -> &Signature {
        &self.signature
    }

    /// The plant.
    pub fn plant(&self) -> &PlantModel {
        &self.plant
    }

    /// Current plant state.
    pub fn state(&self) -> &[f64] {
        &self.x
    }

    /// Number of reset events (impacts) so far.
    pub fn resets(&self) -> u64 {
        self.resets
    }

    /// The last located event (reset or Zeno settle) of a plant with guards.
    pub fn last_event(&self) -> Option<Event> {
        self.guards.as_ref().and_then(|g| g.last)
    }

    /// Sensor schedule in steps.
    pub fn sensor_schedule(&self) -> Periodic {
        self.sensor.schedule
    }

    /// Names of the sensor's channels (plant outputs, or the radar's).
    pub fn sensor_channels(&self) -> &[String] {
        &self.sensor_channels
    }

    /// The last sample taken (zeros before the first).
    pub fn last_sample(&self) -> &[f64] {
        &self.sensor.sample
    }

    /// Value held by the actuator (what the controller sent).
    pub fn held_control(&self) -> &[f64] {
        &self.actuator.held
    }

    /// Value applied to the plant (held value after saturation).
    pub fn applied_control(&self) -> &[f64] {
        &self.actuator.applied
    }

    /// The controller's last output (zeros before the first computation).
    pub fn computed_control(&self) -> &[f64] {
        &self.controller.output
    }

    /// When the controller computes.
    pub fn controller_trigger(&self) -> Trigger {
        self.controller.trigger
    }

    /// Dimension of the controller input: measurement channels, then extras.
    pub fn controller_input_dim(&self) -> usize {
        self.controller.input.len()
    }

    /// Number of measurement components at the start of the controller input.
    pub fn measurement_dim(&self) -> usize {
        self.controller.measurements
    }

    /// Extra input components, in order, after the measurement.
    pub fn extra_inputs(&self) -> &[ExtraInput] {
        &self.controller.extras
    }

    /// The controller's held input.
    pub fn controller_input(&self) -> &[f64] {
        &self.controller.input
    }

    /// The controller's recorded internal state (PID integral and derivative,
    /// observer estimate, continuous controller state).
    pub fn controller_state(&self) -> &[f64] {
        &self.controller.state
    }

    pub fn controller_state_names(&self) -> &[String] {
        &self.controller.state_names
    }

    /// Whether the controller is solver-integrated.
    pub fn is_continuous_controller(&self) -> bool {
        self.controller.is_continuous()
    }

    /// Whether the controller has a rollback response: a solver-integrated
    /// one, or an FMU controller (rolled back with its FMU state).
    pub fn has_rollback_response(&self) -> bool {
        self.controller.has_rollback_response()
    }

    /// Number of reference channels.
    pub fn reference_dim(&self) -> usize {
        self.controller.reference_dim()
    }

    /// Reference values at time `t` (zeros when none are configured).
    pub fn reference_into(&self, t: SimTime, out: &mut [f64]) {
        crate::reference::values_into(&self.references, t, out);
    }

    /// Plant outputs at time `t` for the current state and applied input.
    pub fn outputs_into(&self, t: SimTime, out: &mut [f64]) {
        let t = t.as_secs_f64();
        with_plant!(&self.plant, p => p.output(t, &self.x, &self.actuator.applied, out));
    }

    /// The plant's body motion, for vehicles.
    pub fn kinematics(&self) -> Option<Kinematics> {
        with_plant!(&self.plant, p => p.kinematics(&self.x))
    }

    /// Integrates step `k` (from `t` seconds, length `h`).
    ///
    /// # Errors
    /// [`ZenoError`] from a plant with guards that cannot settle; the plant
    /// state is then left as it was, the controller is integrated.
    #[inline]
    fn integrate(
        &mut self,
        k: u64,
        t: f64,
        h: f64,
        step: StepSize,
        solver: SolverKind,
        ws: &mut Workspace,
    ) -> Result<(), ZenoError> {
        let mut outcome = Ok(());
        let u = &self.actuator.applied;
        match self.discrete {
            None => match self.guards.as_mut() {
                None => advance::integrate_plant(&self.plant, solver, ws, t, h, &mut self.x, u),
                Some(guards) => match advance::integrate_plant_with_guards(
                    &self.plant,
                    guards,
                    solver,
                    ws,
                    t,
                    h,
                    &mut self.x,
                    u,
                ) {
                    Ok(n) => self.resets += n,
                    Err(e) => outcome = Err(e),
                },
            },
            Some(m) => advance::advance_discrete(
                &self.plant,
                m.get(),
                k,
                step,
                &mut self.x,
                &mut self.latched,
                &mut self.x_next,
                u,
            ),
        }
        self.controller
            .integrate(solver, ws, &self.references, t, h);
        outcome
    }

    /// A failure a component reported (an FMU call that returned an error).
    #[inline]
    fn fault(&self) -> Option<String> {
        with_plant!(&self.plant, p => p.fault()).or_else(|| self.controller.fault())
    }

    /// The first non-finite state, as (what, name, value).
    #[inline]
    fn non_finite(&self) -> Option<(&'static str, String, f64)> {
        if let Some(i) = self.x.iter().position(|v| !v.is_finite()) {
            return Some(("plant state", self.signature.states[i].clone(), self.x[i]));
        }
        let xc = &self.controller.state;
        xc.iter().position(|v| !v.is_finite()).map(|i| {
            (
                "controller state",
                self.controller.state_names[i].clone(),
                xc[i],
            )
        })
    }
}

/// N loops, one step, one solver. See the module docs.
#[derive(Debug)]
pub struct System {
    step: StepSize,
    solver: SolverKind,
    k: u64,
    loops: Vec<Loop>,
    ws: Workspace,
}

impl System {
    /// Builds the system of a scenario; `seed` seeds the sensor noise.
    ///
    /// # Errors
    /// [`ConfigError`] naming the key of the first problem: a zero step, a
    /// period or phase off the step grid, inconsistent dimensions, a size
    /// above [`crate::limits`], an out-of-range parameter, a duplicate loop
    /// name, a bad predecessor.
    pub fn from_config(config: &SystemConfig, seed: u64) -> Result<Self, ConfigError> {
        crate::limits::check(config)?;
        let names: Vec<&str> = config.loops.iter().map(|l| l.name.as_str()).collect();
        let mut builder = Builder::new(config.step, config.solver, &names, seed)?;
        for (i, l) in config.loops.iter().enumerate() {
            let key = KeyPath::key("loops").at(i).and("plant");
            let plant = PlantModel::from_config_at(&key, &l.plant, config.step)?;
            builder.add(i, l, plant)?;
        }
        builder.finish()
    }

    /// Builds a system from loops whose plants are already built (for
    /// [`PlantModel::Custom`] plants).
    ///
    /// # Errors
    /// As [`from_config`](Self::from_config).
    pub fn from_specs(
        step: SimTime,
        solver: SolverKind,
        specs: Vec<LoopSpec>,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut builder = Builder::new(step, solver, &names, seed)?;
        for (i, s) in specs.into_iter().enumerate() {
            let (l, plant) = s.take_plant();
            builder.add(i, &l, plant)?;
        }
        builder.finish()
    }

    pub fn step_size(&self) -> StepSize {
        self.step
    }

    pub fn solver(&self) -> SolverKind {
        self.solver
    }

    /// The current boundary index.
    pub fn k(&self) -> u64 {
        self.k
    }

    /// The current time, `k * h`.
    pub fn time(&self) -> SimTime {
        SimTime(self.k * self.step.as_nanos())
    }

    pub fn loops(&self) -> &[Loop] {
        &self.loops
    }

    /// Index of the loop called `name`.
    pub fn loop_index(&self, name: &str) -> Option<usize> {
        self.loops.iter().position(|l| l.name == name)
    }

    /// The loop at `index`.
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`].
    pub fn get(&self, index: usize) -> Result<&Loop, ApiError> {
        self.loops.get(index).ok_or(ApiError::NoSuchLoop {
            index,
            count: self.loops.len(),
        })
    }

    fn get_mut(&mut self, index: usize) -> Result<&mut Loop, ApiError> {
        let count = self.loops.len();
        self.loops
            .get_mut(index)
            .ok_or(ApiError::NoSuchLoop { index, count })
    }

    /// Integrates from the current step to `k1` with all inputs held, calling
    /// `observer` at each boundary `k..k1` before its step (not at `k1`: that
    /// boundary belongs to the next call). `k1 == k` does nothing.
    ///
    /// # Errors
    /// [`StepError::Backwards`], [`StepError::TimeOverflow`] (nothing done);
    /// [`StepError::Observer`], [`StepError::NonFinite`] (stopped at the
    /// boundary named).
    pub fn advance_to<O: Observer + ?Sized>(
        &mut self,
        k1: u64,
        observer: &mut O,
    ) -> Result<(), StepError> {
        match advance::check_target(self.step, self.k, k1) {
            Ok(()) => {}
            Err(BadTarget::Backwards) => {
                return Err(StepError::Backwards {
                    from: self.k,
                    to: k1,
                })
            }
            Err(BadTarget::TimeOverflow) => {
                return Err(StepError::TimeOverflow {
                    to: k1,
                    step: self.step.get(),
                })
            }
        }
        while self.k < k1 {
            if let Err(source) = observer.observe(self) {
                return Err(StepError::Observer {
                    step: self.k,
                    source,
                });
            }
            self.integrate_step()?;
        }
        Ok(())
    }

    /// [`advance_to`](Self::advance_to) with the [`Silent`] observer.
    ///
    /// # Errors
    /// As `advance_to`.
    pub fn advance_silent(&mut self, k1: u64) -> Result<(), StepError> {
        self.advance_to(k1, &mut Silent)
    }

    #[inline]
    fn integrate_step(&mut self) -> Result<(), StepError> {
        let k = self.k;
        let (t, h) = advance::interval(self.step, k);
        let (step, solver) = (self.step, self.solver);
        let mut zeno = None;
        for lp in &mut self.loops {
            if let Err(e) = lp.integrate(k, t, h, step, solver, &mut self.ws) {
                zeno.get_or_insert((lp.name.clone(), e));
            }
        }
        self.k = k + 1;
        if let Some((loop_name, e)) = zeno {
            return Err(StepError::Zeno {
                loop_name,
                guard: e.guard,
                time: e.time,
                step: k,
            });
        }
        for lp in &self.loops {
            if let Some(message) = lp.fault() {
                return Err(StepError::Component {
                    loop_name: lp.name.clone(),
                    message,
                    time: self.time(),
                    step: self.k,
                });
            }
        }
        for lp in &self.loops {
            if let Some((what, state, value)) = lp.non_finite() {
                return Err(StepError::NonFinite {
                    loop_name: lp.name.clone(),
                    what,
                    state,
                    value,
                    time: self.time(),
                    step: self.k,
                });
            }
        }
        Ok(())
    }

    /// Whether loop `i`'s sensor is due at the current boundary.
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`].
    pub fn sensor_due(&self, i: usize) -> Result<bool, ApiError> {
        Ok(self.get(i)?.sensor.schedule.is_due(self.k))
    }

    /// Whether loop `i`'s controller is time-triggered and due now.
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`].
    pub fn controller_due(&self, i: usize) -> Result<bool, ApiError> {
        Ok(match self.get(i)?.controller.trigger {
            Trigger::Time(s) => s.is_due(self.k),
            Trigger::Event => false,
        })
    }

    /// Samples loop `i`'s sensor now: true values, plus noise (advancing the
    /// sensor's generator), then quantisation. The bridge decides when.
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`].
    pub fn sample(&mut self, i: usize) -> Result<&[f64], ApiError> {
        let t = self.time();
        let radar = match self.get(i)?.sensor.source {
            SensorSource::Plant => None,
            SensorSource::Radar => {
                let own = &self.loops[i];
                // Both were checked to be vehicles when the system was built.
                let me = own.kinematics().unwrap_or(ZERO_KINEMATICS);
                let ahead = own
                    .predecessor
                    .and_then(|p| self.loops[p].kinematics())
                    .unwrap_or(ZERO_KINEMATICS);
                Some([
                    ahead.position - ahead.length - me.position,
                    ahead.velocity - me.velocity,
                    me.velocity,
                    me.acceleration,
                ])
            }
        };
        let lp = &mut self.loops[i];
        match radar {
            Some(v) => lp.sensor.sample.copy_from_slice(&v),
            None => {
                let ts = t.as_secs_f64();
                with_plant!(&lp.plant, p => p.output(ts, &lp.x, &lp.actuator.applied, &mut lp.sensor.sample));
            }
        }
        lp.sensor.corrupt();
        Ok(&lp.sensor.sample)
    }

    /// The current value of extra controller input `j` of loop `i` (counted
    /// from 0 after the measurement), read exactly from its source: for CACC,
    /// the predecessor vehicle's acceleration. The component index for
    /// [`set_controller_input`](Self::set_controller_input) is
    /// `measurement_dim() + j`.
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`], [`ApiError::NoSuchChannel`].
    pub fn extra_input(&self, i: usize, j: usize) -> Result<f64, ApiError> {
        let lp = self.get(i)?;
        let extra = lp
            .controller
            .extras
            .get(j)
            .ok_or_else(|| ApiError::NoSuchChannel {
                loop_name: lp.name.clone(),
                what: "extra input",
                index: j,
                len: lp.controller.extras.len(),
            })?;
        Ok(match *extra {
            ExtraInput::PredecessorAcceleration { predecessor } => self.loops[predecessor]
                .kinematics()
                .map_or(0.0, |k| k.acceleration),
        })
    }

    /// Sets component `index` of loop `i`'s held controller input.
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`], [`ApiError::NoSuchChannel`].
    pub fn set_controller_input(
        &mut self,
        i: usize,
        index: usize,
        value: f64,
    ) -> Result<(), ApiError> {
        let lp = self.get_mut(i)?;
        let len = lp.controller.input.len();
        match lp.controller.input.get_mut(index) {
            Some(v) => {
                *v = value;
                Ok(())
            }
            None => Err(ApiError::NoSuchChannel {
                loop_name: lp.name.clone(),
                what: "controller input",
                index,
                len,
            }),
        }
    }

    /// Sets the first `values.len()` components of the controller input.
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`], [`ApiError::WrongLength`] when longer than
    /// the input.
    pub fn set_controller_inputs(&mut self, i: usize, values: &[f64]) -> Result<(), ApiError> {
        let lp = self.get_mut(i)?;
        let expected = lp.controller.input.len();
        if values.len() > expected {
            return Err(ApiError::WrongLength {
                loop_name: lp.name.clone(),
                what: "controller input",
                expected,
                found: values.len(),
            });
        }
        lp.controller.input[..values.len()].copy_from_slice(values);
        Ok(())
    }

    /// Evaluates loop `i`'s controller now with its held input and the
    /// reference at the current time, updating its internal state; returns the
    /// control (also kept as the loop's computed control). For a continuous
    /// controller this is the direct output `C x_c + D e`.
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`].
    pub fn compute_control(&mut self, i: usize) -> Result<&[f64], ApiError> {
        self.compute_control_at(i, self.time())
    }

    /// Evaluates loop `i`'s controller at event time `t`, a time within the
    /// step that ended at the current boundary (`(k-1) h < t <= k h`): an
    /// event-triggered controller answering a packet that arrived at `t`,
    /// served at the boundary where the packet acts. The law's clock (PID
    /// integral and derivative interval, observer prediction) and the
    /// reference are read at `t`; a continuous controller's state is its
    /// state at `t` (the step's start integrated by one solver step to `t`
    /// with the input held over the step), so the output is
    /// `C x_c(t) + D (r(t) - y)`. At `t = k h` this is
    /// [`compute_control`](Self::compute_control).
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`], [`ApiError::EventTime`].
    pub fn compute_control_at(&mut self, i: usize, t: SimTime) -> Result<&[f64], ApiError> {
        self.check_event_time(i, t)?;
        let (now, step, solver) = (self.time(), self.step, self.solver);
        let lp = &mut self.loops[i];
        let mut clock = StepClock {
            now,
            step,
            solver,
            ws: &mut self.ws,
        };
        lp.controller.compute(&mut clock, &lp.references, t);
        Ok(&lp.controller.output)
    }

    /// docs/design.md §4.4: the response of a continuous (solver-integrated)
    /// controller with its current held input, as "snapshot; advance exactly
    /// one solver step silently; read the controller output; restore". The
    /// controller state is integrated one step on a scratch copy, which gives
    /// the same bits while leaving every state, generator and input of the
    /// system untouched. The result becomes the loop's computed control.
    /// Apply the received value with
    /// [`set_controller_input`](Self::set_controller_input) first.
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`], [`ApiError::NotContinuous`].
    pub fn rollback_response(&mut self, i: usize) -> Result<&[f64], ApiError> {
        self.rollback_response_at(i, self.time())
    }

    /// [`rollback_response`](Self::rollback_response) at event time `t`
    /// within the last step (as for
    /// [`compute_control_at`](Self::compute_control_at)): the controller's
    /// state at `t`, advanced one solver step `h` with the held input, read
    /// against the reference at `t + h`. Nothing of the system moves.
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`], [`ApiError::NotContinuous`],
    /// [`ApiError::EventTime`].
    pub fn rollback_response_at(&mut self, i: usize, t: SimTime) -> Result<&[f64], ApiError> {
        self.check_event_time(i, t)?;
        let (now, step, solver) = (self.time(), self.step, self.solver);
        let lp = &mut self.loops[i];
        if !lp.controller.has_rollback_response() {
            return Err(ApiError::NotContinuous {
                loop_name: lp.name.clone(),
            });
        }
        let mut clock = StepClock {
            now,
            step,
            solver,
            ws: &mut self.ws,
        };
        lp.controller.rollback(&mut clock, &lp.references, t);
        Ok(&lp.controller.output)
    }

    /// Checks that loop `i` exists and `t` lies in the step that ended now.
    fn check_event_time(&self, i: usize, t: SimTime) -> Result<(), ApiError> {
        let lp = self.get(i)?;
        let now = self.time();
        let earliest = if self.k == 0 {
            now
        } else {
            SimTime(now.as_nanos() - self.step.as_nanos() + 1)
        };
        if t < earliest || t > now {
            return Err(ApiError::EventTime {
                loop_name: lp.name.clone(),
                time: t,
                earliest,
                now,
            });
        }
        Ok(())
    }

    /// Sets channel `index` of loop `i`'s actuator; held from now on,
    /// saturated when applied.
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`], [`ApiError::NoSuchChannel`].
    pub fn set_actuator(&mut self, i: usize, index: usize, value: f64) -> Result<(), ApiError> {
        let lp = self.get_mut(i)?;
        let len = lp.actuator.held.len();
        if index >= len {
            return Err(ApiError::NoSuchChannel {
                loop_name: lp.name.clone(),
                what: "actuator",
                index,
                len,
            });
        }
        lp.actuator.set(index, value);
        Ok(())
    }

    /// Sets every actuator channel.
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`], [`ApiError::WrongLength`].
    pub fn set_actuators(&mut self, i: usize, values: &[f64]) -> Result<(), ApiError> {
        let lp = self.get_mut(i)?;
        let expected = lp.actuator.held.len();
        if values.len() != expected {
            return Err(ApiError::WrongLength {
                loop_name: lp.name.clone(),
                what: "actuator",
                expected,
                found: values.len(),
            });
        }
        for (j, &v) in values.iter().enumerate() {
            lp.actuator.set(j, v);
        }
        Ok(())
    }

    /// Sets every actuator channel to zero (the `on_loss = "zero"` policy).
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`].
    pub fn zero_actuator(&mut self, i: usize) -> Result<(), ApiError> {
        let lp = self.get_mut(i)?;
        for j in 0..lp.actuator.held.len() {
            lp.actuator.set(j, 0.0);
        }
        Ok(())
    }

    /// Loop `i`'s plant outputs now (true values, no sensor effects).
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`], [`ApiError::WrongLength`] for a wrong `out`.
    pub fn outputs_into(&self, i: usize, out: &mut [f64]) -> Result<(), ApiError> {
        let lp = self.get(i)?;
        check_len(lp, "plant output", lp.signature.outputs.len(), out.len())?;
        lp.outputs_into(self.time(), out);
        Ok(())
    }

    /// Loop `i`'s reference values now.
    ///
    /// # Errors
    /// [`ApiError::NoSuchLoop`], [`ApiError::WrongLength`] for a wrong `out`.
    pub fn reference_into(&self, i: usize, out: &mut [f64]) -> Result<(), ApiError> {
        let lp = self.get(i)?;
        check_len(lp, "reference", lp.reference_dim(), out.len())?;
        lp.reference_into(self.time(), out);
        Ok(())
    }

    pub(crate) fn loops_mut(&mut self) -> &mut [Loop] {
        &mut self.loops
    }

    pub(crate) fn set_k(&mut self, k: u64) {
        self.k = k;
    }
}

fn check_len(lp: &Loop, what: &'static str, expected: usize, found: usize) -> Result<(), ApiError> {
    if expected == found {
        Ok(())
    } else {
        Err(ApiError::WrongLength {
            loop_name: lp.name.clone(),
            what,
            expected,
            found,
        })
    }
}

const ZERO_KINEMATICS: Kinematics = Kinematics {
    position: 0.0,
    velocity: 0.0,
    acceleration: 0.0,
    length: 0.0,
};

/// Builds loops one by one with shared checks.
struct Builder<'a> {
    step: StepSize,
    solver: SolverKind,
    names: &'a [&'a str],
    seed: u64,
    loops: Vec<Loop>,
}

impl<'a> Builder<'a> {
    fn new(
        step: SimTime,
        solver: SolverKind,
        names: &'a [&'a str],
        seed: u64,
    ) -> Result<Self, ConfigError> {
        let step = StepSize::new(step).map_err(|source| ConfigError::Time {
            key: "step".into(),
            source,
        })?;
        if names.is_empty() {
            return Err(ConfigError::invalid("loops", "needs at least one loop"));
        }
        for (i, name) in names.iter().enumerate() {
            if name.is_empty() {
                return Err(ConfigError::invalid(
                    KeyPath::key("loops").at(i).and("name"),
                    "must not be empty",
                ));
            }
            if let Some(j) = names[..i].iter().position(|n| n == name) {
                return Err(ConfigError::invalid(
                    KeyPath::key("loops").at(i).and("name"),
                    format!("\"{name}\" is already the name of loops[{j}]"),
                ));
            }
        }
        Ok(Builder {
            step,
            solver,
            names,
            seed,
            loops: Vec::with_capacity(names.len()),
        })
    }

    fn resolve(&self, i: usize, r: &Option<LoopRef>) -> Result<Option<usize>, ConfigError> {
        let key = KeyPath::key("loops").at(i).and("predecessor");
        let index = match r {
            None => return Ok(None),
            Some(LoopRef::Index(j)) => {
                if *j >= self.names.len() {
                    return Err(ConfigError::invalid(
                        key,
                        format!(
                            "loop {j} does not exist: there are {} loops",
                            self.names.len()
                        ),
                    ));
                }
                *j
            }
            Some(LoopRef::Name(n)) => {
                self.names
                    .iter()
                    .position(|m| m == n)
                    .ok_or_else(|| ConfigError::UnknownName {
                        key: key.clone(),
                        name: n.clone(),
                        known: self.names.iter().map(|s| s.to_string()).collect(),
                    })?
            }
        };
        if index == i {
            return Err(ConfigError::invalid(
                key,
                "a loop cannot be its own predecessor",
            ));
        }
        Ok(Some(index))
    }

    /// Adds loop `i`, `l` with `plant` built (whatever `l` holds as its
    /// plant is not read).
    fn add<P>(
        &mut self,
        i: usize,
        l: &LoopConfig<P>,
        plant: PlantModel,
    ) -> Result<(), ConfigError> {
        let LoopConfig {
            name,
            predecessor,
            plant: _,
            sensor,
            actuator,
            controller,
            reference,
        } = l;
        let reference = &reference.0;
        let key = KeyPath::key("loops").at(i);
        let predecessor = self.resolve(i, predecessor)?;
        let signature = plant.as_plant().signature();
        let (n, m) = (signature.states.len(), signature.inputs.len());
        let discrete = match plant.as_plant().time_domain() {
            TimeDomain::Continuous => None,
            TimeDomain::Discrete { period } => Some(self.step.period_steps(period).map_err(
                |source| ConfigError::Time {
                    key: key.child("plant").and("period"),
                    source,
                },
            )?),
        };
        let mut x = vec![0.0; n];
        plant.as_plant().initial_state(&mut x);
        crate::matrix::check_finite_all(&key.child("plant").and("x0"), &x)?;
        let guard_count = plant.as_plant().guard_count();
        if guard_count > 0 && discrete.is_some() {
            return Err(ConfigError::invalid(
                key.child("plant"),
                "a discrete plant cannot have guards: events are located in continuous time; \
                 its update can make the jump itself",
            ));
        }
        let guards = (guard_count > 0).then(|| Guards::new(guard_count, n));

        let sensor_channels: Vec<String> = match sensor.source {
            SensorSource::Plant => signature.outputs.clone(),
            SensorSource::Radar => {
                if predecessor.is_none() {
                    return Err(ConfigError::invalid(
                        key.child("sensor").and("source"),
                        "a radar sensor needs the loop's `predecessor`",
                    ));
                }
                RADAR_CHANNELS.iter().map(|s| s.to_string()).collect()
            }
        };
        let sensor_built = Sensor::new(
            &key.child("sensor"),
            sensor,
            self.step,
            sensor_channels.len(),
            self.seed,
            i as u64,
        )?;
        let actuator = Actuator::new(&key.child("actuator"), actuator, m)?;
        let references = reference
            .iter()
            .enumerate()
            .map(|(j, s)| Signal::new(&key.child("reference").at(j), s))
            .collect::<Result<Vec<_>, _>>()?;
        let ctx = BuildContext {
            key: key.child("controller"),
            reference_key: key.child("reference"),
            measurements: sensor_channels.len(),
            plant_inputs: m,
            references: references.len(),
            plant_linear: plant.linear(),
            actuator_min: actuator.limits().0,
            actuator_max: actuator.limits().1,
            sensor_source: sensor.source,
            predecessor,
        };
        let controller = Controller::new(&ctx, controller, self.step, sensor.period)?;
        self.loops.push(Loop {
            name: name.to_string(),
            predecessor,
            signature,
            discrete,
            sensor_channels,
            references,
            x_next: vec![0.0; n],
            latched: vec![0.0; m],
            x,
            resets: 0,
            guards,
            sensor: sensor_built,
            actuator,
            controller,
            plant,
        });
        Ok(())
    }

    fn finish(self) -> Result<System, ConfigError> {
        // Radar sensors and CACC feed-forward read vehicle kinematics.
        for (i, lp) in self.loops.iter().enumerate() {
            let needs = lp.sensor.source == SensorSource::Radar || !lp.controller.extras.is_empty();
            let Some(p) = lp.predecessor.filter(|_| needs) else {
                continue;
            };
            for (who, l) in [(i, lp), (p, &self.loops[p])] {
                if l.kinematics().is_none() {
                    return Err(ConfigError::invalid(
                        KeyPath::key("loops").at(i).and("predecessor"),
                        format!(
                            "loop `{}` (loops[{who}]) has no position and speed; a radar sensor and cacc \
                             need vehicle plants on both loops",
                            l.name
                        ),
                    ));
                }
            }
        }
        let max_dim = self
            .loops
            .iter()
            .map(|l| l.x.len().max(l.controller.state.len()))
            .max()
            .unwrap_or(0);
        Ok(System {
            step: self.step,
            solver: self.solver,
            k: 0,
            loops: self.loops,
            ws: Workspace::new(max_dim),
        })
    }
}
