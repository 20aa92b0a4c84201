//! Controllers: the config schema, triggering, and the runtime wrapper that
//! holds every controller's input, internal state and last output.
//!
//! # Laws
//! | `kind`              | law                                                    | module |
//! |---------------------|--------------------------------------------------------|--------|
//! | `pid`               | discrete PID, filtered derivative, anti-windup, limits | [`pid`] |
//! | `state_feedback`    | `u = -K y + N r`                                       | [`state_feedback`] |
//! | `observer`          | Luenberger current estimator + `u = -K x^ + N r`       | [`observer`] |
//! | `cacc`              | constant time-gap CACC with feed-forward               | [`cacc`] |
//! | `state_space`       | continuous-time `x_c' = A x_c + B e, u = C x_c + D e`  | [`continuous`] |
//! | `transfer_function` | continuous-time SISO `num(s)/den(s)` acting on `e`     | [`continuous`] |
//! | `equations`         | a text-equation model of `y` and `r`, integrated       | [`equations`] |
//! | `open_loop`         | `u = r`                                                | [`open_loop`] |
//! | `fmu`               | a Co-Simulation FMU (FMI 2.0 / 3.0)                    | [`fmu`] |
//!
//! # Inputs
//! A controller holds an input vector. Components `0..ny` are the measurement
//! (the loop's sensor channels); a CACC controller has one more, the
//! predecessor's acceleration, which arrives from elsewhere (V2V). Inputs start
//! at zero and are held until set.
//!
//! # Triggering and elapsed time
//! `trigger = "time"` (default): computed at `phase + n * period` (period
//! defaults to the sensor period). `trigger = "event"`: computed whenever a
//! measurement is accepted. The engine does not call controllers by itself;
//! the driver calls [`System::compute_control`](crate::System::compute_control)
//! at those instants, or, for a measurement that arrived between two
//! boundaries, [`System::compute_control_at`](crate::System::compute_control_at)
//! with its arrival time. Laws that depend on time (PID integral and
//! derivative, the observer's prediction) use the actual time elapsed since
//! the previous computation, so an event-triggered controller with irregular
//! arrivals is integrated correctly. On the very first computation there is no previous
//! one: the PID integrates nothing and its derivative term is zero; the
//! observer corrects its initial estimate without predicting.
//!
//! # Continuous-time controllers
//! `state_space` and `transfer_function` controllers are dynamic systems
//! integrated by the solver together with the plants, with the error
//! `e(t) = r(t) - y_held` (reference evaluated at the stage times). Their
//! output at a boundary is `C x_c + D e` (`compute_control`), and at an event
//! time inside the last step the same with the state at that time
//! (`compute_control_at`); the response of docs/design.md §4.4 (one solver step
//! ahead) is [`System::rollback_response`](crate::System::rollback_response)
//! (`rollback_response_at`). An `equations` controller is integrated and
//! answers the same way, with its model's inputs (the held measurement, then
//! the reference at the stage times) in place of `e`.

pub mod cacc;
pub mod continuous;
pub mod equations;
pub mod fmu;
pub mod observer;
pub mod open_loop;
pub mod pid;
pub mod state_feedback;

use netloop_time::SimTime;
use serde::{Deserialize, Serialize};

pub use cacc::CaccConfig;
pub use continuous::{ContinuousStateSpaceConfig, ContinuousTransferFunctionConfig};
pub use equations::EquationsControllerConfig;
pub use fmu::FmuControllerConfig;
pub use observer::ObserverConfig;
pub use open_loop::OpenLoopConfig;
pub use pid::{AntiWindup, DerivativeOn, PidConfig};
pub use state_feedback::StateFeedbackConfig;

use crate::config::PerChannel;
use crate::error::ConfigError;
use crate::key_path::KeyPath;
use crate::plant::linear::LinearSystem;
use crate::reference::Signal;
use crate::sensor::SensorSource;
use crate::solver::{SolverKind, Workspace};
use crate::time::{Periodic, StepSize};

/// A controller as written in a scenario file: `kind = "..."` plus its
/// parameters and its timing (`trigger`, `period`, `phase`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ControllerConfig {
    Pid(PidConfig),
    StateFeedback(StateFeedbackConfig),
    Observer(ObserverConfig),
    Cacc(CaccConfig),
    StateSpace(ContinuousStateSpaceConfig),
    TransferFunction(ContinuousTransferFunctionConfig),
    OpenLoop(OpenLoopConfig),
    Fmu(FmuControllerConfig),
    Equations(EquationsControllerConfig),
}

/// `trigger = "time" | "event"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggerKind {
    #[default]
    Time,
    Event,
}

/// The timing keys every controller kind has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    pub trigger: TriggerKind,
    pub period: Option<SimTime>,
    pub phase: Option<SimTime>,
}

/// When a built controller computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// At the schedule's instants (in steps).
    Time(Periodic),
    /// On every accepted measurement.
    Event,
}

/// A controller input component that is not a measurement of the loop's own
/// sensor and so has to be delivered from elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtraInput {
    /// The acceleration of loop `predecessor`'s vehicle (CACC feed-forward).
    PredecessorAcceleration { predecessor: usize },
}

impl ControllerConfig {
    /// The `trigger` / `period` / `phase` keys.
    pub fn timing(&self) -> Timing {
        match self {
            ControllerConfig::Pid(c) => c.timing(),
            ControllerConfig::StateFeedback(c) => c.timing(),
            ControllerConfig::Observer(c) => c.timing(),
            ControllerConfig::Cacc(c) => c.timing(),
            ControllerConfig::StateSpace(c) => c.timing(),
            ControllerConfig::TransferFunction(c) => c.timing(),
            ControllerConfig::OpenLoop(c) => c.timing(),
            ControllerConfig::Fmu(c) => c.timing(),
            ControllerConfig::Equations(c) => c.timing(),
        }
    }
}

/// What a law needs to know about its loop to validate itself.
pub(crate) struct BuildContext<'a> {
    /// Key of the controller table, e.g. `loops[0].controller`.
    pub(crate) key: KeyPath,
    /// Key of the loop's reference, e.g. `loops[0].reference`.
    pub(crate) reference_key: KeyPath,
    /// Number of measured channels (the sensor's output).
    pub(crate) measurements: usize,
    /// Number of plant inputs (= controller outputs).
    pub(crate) plant_inputs: usize,
    /// Number of reference signals configured (0 means "zeros").
    pub(crate) references: usize,
    /// The plant's linear model and, if it is discrete, its period.
    pub(crate) plant_linear: Option<(&'a LinearSystem, Option<SimTime>)>,
    /// The actuator's saturation limits per channel (infinite when none).
    pub(crate) actuator_min: &'a [f64],
    pub(crate) actuator_max: &'a [f64],
    pub(crate) sensor_source: SensorSource,
    pub(crate) predecessor: Option<usize>,
}

impl BuildContext<'_> {
    pub(crate) fn k(&self, field: &str) -> KeyPath {
        self.key.child(field)
    }

    /// Checks the number of reference signals against what the law needs.
    pub(crate) fn check_references(&self, needed: usize, what: &str) -> Result<(), ConfigError> {
        if self.references != 0 && self.references != needed {
            return Err(ConfigError::invalid(
                self.reference_key.clone(),
                format!(
                    "{} reference signals given, but {what} takes {needed}",
                    self.references
                ),
            ));
        }
        Ok(())
    }

    pub(crate) fn check_siso_plant(&self, what: &str) -> Result<(), ConfigError> {
        if self.plant_inputs != 1 {
            return Err(ConfigError::invalid(
                self.key.clone(),
                format!(
                    "{what} has one output, but the plant has {} inputs",
                    self.plant_inputs
                ),
            ));
        }
        Ok(())
    }

    pub(crate) fn check_measurement_index(
        &self,
        field: &str,
        index: usize,
    ) -> Result<(), ConfigError> {
        if index >= self.measurements {
            return Err(ConfigError::invalid(
                self.k(field),
                format!(
                    "measurement {index} does not exist: the sensor has {} channel{}",
                    self.measurements,
                    if self.measurements == 1 { "" } else { "s" }
                ),
            ));
        }
        Ok(())
    }
}

/// Output limits per channel (`u_min`, `u_max`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Limits {
    lo: Vec<f64>,
    hi: Vec<f64>,
}

impl Limits {
    /// Unset sides are unlimited.
    ///
    /// # Errors
    /// [`ConfigError`] for lists of the wrong length, NaN, or `u_min > u_max`.
    pub(crate) fn new(
        ctx: &BuildContext,
        u_min: &Option<PerChannel>,
        u_max: &Option<PerChannel>,
    ) -> Result<Self, ConfigError> {
        let n = ctx.plant_inputs;
        Self::or_defaults(
            ctx,
            u_min,
            u_max,
            &vec![f64::NEG_INFINITY; n],
            &vec![f64::INFINITY; n],
        )
    }

    /// Unset sides take the given per-channel defaults.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub(crate) fn or_defaults(
        ctx: &BuildContext,
        u_min: &Option<PerChannel>,
        u_max: &Option<PerChannel>,
        lo_default: &[f64],
        hi_default: &[f64],
    ) -> Result<Self, ConfigError> {
        let n = ctx.plant_inputs;
        let side = |field: &str,
                    v: &Option<PerChannel>,
                    default: &[f64]|
         -> Result<Vec<f64>, ConfigError> {
            let key = ctx.k(field);
            let v = match v {
                None => default.to_vec(),
                Some(PerChannel::All(x)) => vec![*x; n],
                Some(PerChannel::Each(v)) => v.clone(),
            };
            if v.len() != n {
                return Err(ConfigError::Length {
                    key,
                    expected: n,
                    found: v.len(),
                });
            }
            if let Some(i) = v.iter().position(|x| x.is_nan()) {
                return Err(ConfigError::NotFinite {
                    key: key.clone().at(i),
                    value: v[i],
                });
            }
            Ok(v)
        };
        let lo = side("u_min", u_min, lo_default)?;
        let hi = side("u_max", u_max, hi_default)?;
        if let Some(i) = (0..n).find(|&i| lo[i] > hi[i]) {
            let unset = |v: &Option<PerChannel>| if v.is_none() { " (the default)" } else { "" };
            return Err(ConfigError::invalid(
                ctx.k("u_min"),
                format!(
                    "channel {i}: u_min {}{} is above u_max {}{}",
                    lo[i],
                    unset(u_min),
                    hi[i],
                    unset(u_max)
                ),
            ));
        }
        Ok(Limits { lo, hi })
    }

    /// Saturates `v` on channel `i`; returns the value and the side hit
    /// (`-1`, `0`, `+1`).
    #[inline]
    pub(crate) fn apply(&self, i: usize, v: f64) -> (f64, f64) {
        if v > self.hi[i] {
            (self.hi[i], 1.0)
        } else if v < self.lo[i] {
            (self.lo[i], -1.0)
        } else {
            (v, 0.0)
        }
    }

    #[inline]
    pub(crate) fn apply_all(&self, u: &mut [f64]) {
        for (i, ui) in u.iter_mut().enumerate() {
            *ui = self.apply(i, *ui).0;
        }
    }
}

/// What a law reports about itself when built.
pub(crate) struct LawShape {
    /// Extra input components after the measurement.
    pub(crate) extras: Vec<ExtraInput>,
    /// Number of reference channels the law reads.
    pub(crate) references: usize,
    /// Names of the recorded internal states.
    pub(crate) state_names: Vec<String>,
    /// Initial internal state.
    pub(crate) state0: Vec<f64>,
    /// Length of the bookkeeping memory (previous error, ...), initially 0.
    pub(crate) memory: usize,
}

/// The built law, dispatched statically.
#[derive(Clone, Debug)]
pub(crate) enum Law {
    Pid(pid::Pid),
    StateFeedback(state_feedback::StateFeedback),
    Observer(Box<observer::Observer>),
    Cacc(cacc::Cacc),
    Continuous(continuous::Continuous),
    OpenLoop(open_loop::OpenLoop),
    Fmu(fmu::FmuLaw),
    Equations(Box<equations::Equations>),
}

/// Arguments of one computation.
pub(crate) struct Step<'a> {
    /// The time of this computation.
    pub(crate) t: SimTime,
    /// Time since the previous computation; `None` on the first.
    pub(crate) dt: Option<SimTime>,
    pub(crate) input: &'a [f64],
    pub(crate) reference: &'a [f64],
}

impl Law {
    fn compute(&mut self, s: &Step, state: &mut [f64], memory: &mut [f64], out: &mut [f64]) {
        match self {
            Law::Pid(l) => l.compute(s, state, memory, out),
            Law::StateFeedback(l) => l.compute(s, out),
            Law::Observer(l) => l.compute(s, state, memory, out),
            Law::Cacc(l) => l.compute(s, out),
            Law::Continuous(l) => l.output(s.input, s.reference, state, out),
            Law::OpenLoop(l) => l.compute(s, out),
            Law::Fmu(l) => l.compute(s, out),
            // Evaluated by `Controller::compute` with its state at `s.t`.
            Law::Equations(_) => {}
        }
    }
}

/// A built controller with its runtime state.
#[derive(Clone, Debug)]
pub(crate) struct Controller {
    pub(crate) law: Law,
    pub(crate) trigger: Trigger,
    pub(crate) extras: Vec<ExtraInput>,
    pub(crate) measurements: usize,
    pub(crate) state_names: Vec<String>,
    // --- mutable state (all of it is in a snapshot) ---
    pub(crate) input: Vec<f64>,
    pub(crate) state: Vec<f64>,
    pub(crate) memory: Vec<f64>,
    pub(crate) output: Vec<f64>,
    pub(crate) last_time: Option<SimTime>,
    /// Continuous laws: the state and the held input at the start of the
    /// last integrated step, from which the state at an event time inside
    /// that step is recomputed (empty for other laws).
    pub(crate) step_start: Vec<f64>,
    pub(crate) step_input: Vec<f64>,
    // --- scratch ---
    reference: Vec<f64>,
    error: Vec<f64>,
    scratch: Vec<f64>,
}

impl Controller {
    /// # Errors
    /// [`ConfigError`] naming the first invalid key.
    pub(crate) fn new(
        ctx: &BuildContext,
        config: &ControllerConfig,
        step: StepSize,
        sensor_period: SimTime,
    ) -> Result<Self, ConfigError> {
        let trigger = resolve_timing(ctx, config.timing(), step, sensor_period)?;
        // Nominal time between computations: the period, or the sensor period
        // for an event-triggered controller (the measurement interval without a
        // network).
        let interval = match trigger {
            Trigger::Time(p) => SimTime(p.period.get() * step.as_nanos()),
            Trigger::Event => sensor_period,
        };
        let (law, shape) = match config {
            ControllerConfig::Pid(c) => {
                let (l, s) = pid::Pid::new(ctx, c, interval)?;
                (Law::Pid(l), s)
            }
            ControllerConfig::StateFeedback(c) => {
                let (l, s) = state_feedback::StateFeedback::new(ctx, c)?;
                (Law::StateFeedback(l), s)
            }
            ControllerConfig::Observer(c) => {
                let (l, s) = observer::Observer::new(ctx, c)?;
                (Law::Observer(Box::new(l)), s)
            }
            ControllerConfig::Cacc(c) => {
                let (l, s) = cacc::Cacc::new(ctx, c)?;
                (Law::Cacc(l), s)
            }
            ControllerConfig::StateSpace(c) => {
                let (l, s) = continuous::Continuous::from_state_space(ctx, c)?;
                (Law::Continuous(l), s)
            }
            ControllerConfig::TransferFunction(c) => {
                let (l, s) = continuous::Continuous::from_transfer_function(ctx, c)?;
                (Law::Continuous(l), s)
            }
            ControllerConfig::OpenLoop(c) => {
                let (l, s) = open_loop::OpenLoop::new(ctx, c)?;
                (Law::OpenLoop(l), s)
            }
            ControllerConfig::Fmu(c) => {
                let (l, s) = fmu::FmuLaw::new(ctx, c, trigger, step, sensor_period)?;
                (Law::Fmu(l), s)
            }
            ControllerConfig::Equations(c) => {
                let (l, s) = equations::Equations::new(ctx, c)?;
                (Law::Equations(Box::new(l)), s)
            }
        };
        let errors = match &law {
            Law::Continuous(c) => c.errors(),
            Law::Equations(l) => l.inputs(),
            _ => 0,
        };
        let input_len = ctx.measurements + shape.extras.len();
        let (step_start, step_input) = match &law {
            Law::Continuous(_) | Law::Equations(_) => (shape.state0.clone(), vec![0.0; input_len]),
            _ => (Vec::new(), Vec::new()),
        };
        Ok(Controller {
            law,
            trigger,
            measurements: ctx.measurements,
            input: vec![0.0; input_len],
            extras: shape.extras,
            state_names: shape.state_names,
            scratch: vec![0.0; shape.state0.len()],
            state: shape.state0,
            memory: vec![0.0; shape.memory],
            output: vec![0.0; ctx.plant_inputs],
            last_time: None,
            step_start,
            step_input,
            reference: vec![0.0; shape.references],
            error: vec![0.0; errors],
        })
    }

    /// Number of reference channels.
    pub(crate) fn reference_dim(&self) -> usize {
        self.reference.len()
    }

    pub(crate) fn is_continuous(&self) -> bool {
        matches!(self.law, Law::Continuous(_) | Law::Equations(_))
    }

    /// Whether [`fault`](Self::fault) can report anything: an FMU law only.
    pub(crate) fn can_fault(&self) -> bool {
        matches!(self.law, Law::Fmu(_))
    }

    /// Solver-integrated laws and FMU controllers answer by rollback.
    pub(crate) fn has_rollback_response(&self) -> bool {
        matches!(
            self.law,
            Law::Continuous(_) | Law::Equations(_) | Law::Fmu(_)
        )
    }

    /// A failed FMU call of an FMU controller (see [`fmu`]).
    pub(crate) fn fault(&self) -> Option<String> {
        match &self.law {
            Law::Fmu(l) => l.fault(),
            _ => None,
        }
    }

    /// Evaluates the law at time `t` (its clock and reference read there);
    /// the result is in `self.output`. A continuous law's state is the one
    /// at `t` (see [`StepClock::state_at`]).
    pub(crate) fn compute(&mut self, clock: &mut StepClock, refs: &[Signal], t: SimTime) {
        if let Some((law, mut parts)) = self.solver_law() {
            match law {
                SolverLaw::Continuous(l) => parts.compute(l, clock, refs, t),
                SolverLaw::Equations(l) => parts.compute(l, clock, refs, t),
            }
            self.last_time = Some(t);
            return;
        }
        load_reference(&mut self.reference, refs, t);
        let dt = self.last_time.map(|prev| t.saturating_sub(prev));
        let s = Step {
            t,
            dt,
            input: &self.input,
            reference: &self.reference,
        };
        self.law
            .compute(&s, &mut self.state, &mut self.memory, &mut self.output);
        self.last_time = Some(t);
    }

    /// Integrates a continuous-time controller's state over one step from `t`
    /// (seconds). Does nothing for other laws.
    #[inline]
    pub(crate) fn integrate(
        &mut self,
        solver: SolverKind,
        ws: &mut Workspace,
        refs: &[Signal],
        t: f64,
        h: f64,
    ) {
        if let Some((law, mut parts)) = self.solver_law() {
            match law {
                SolverLaw::Continuous(l) => parts.integrate(l, solver, ws, refs, t, h),
                SolverLaw::Equations(l) => parts.integrate(l, solver, ws, refs, t, h),
            }
        }
    }

    /// The continuous controller's output one solver step after event time
    /// `t` (docs/design.md §4.4): its state at `t`, integrated one step `h` with the
    /// held input on a scratch copy, read against the reference at `t + h`.
    /// Identical to snapshot / advance one step / read / restore when `t` is
    /// the boundary, but touching nothing else. The result is in `self.output`.
    pub(crate) fn rollback(&mut self, clock: &mut StepClock, refs: &[Signal], t: SimTime) {
        if let Law::Fmu(law) = &self.law {
            // The FMU computes at `t` as directly, then looks one step ahead
            // and goes back to its state at `t` (see [`fmu`]).
            load_reference(&mut self.reference, refs, t);
            let t_next = SimTime(t.as_nanos().saturating_add(clock.step.as_nanos()));
            let mut reference_next = vec![0.0; self.reference.len()];
            load_reference(&mut reference_next, refs, t_next);
            let s = Step {
                t,
                dt: self.last_time.map(|prev| t.saturating_sub(prev)),
                input: &self.input,
                reference: &self.reference,
            };
            law.rollback(&s, t_next, &reference_next, &mut self.output);
            self.last_time = Some(t);
            return;
        }
        if let Some((law, mut parts)) = self.solver_law() {
            match law {
                SolverLaw::Continuous(l) => parts.rollback(l, clock, refs, t),
                SolverLaw::Equations(l) => parts.rollback(l, clock, refs, t),
            }
            self.last_time = Some(t);
        }
    }

    /// A solver-integrated law and the parts of the controller it works
    /// on, borrowed apart; `None` for the other laws.
    fn solver_law(&mut self) -> Option<(SolverLaw<'_>, FlowParts<'_>)> {
        let law = match &self.law {
            Law::Continuous(l) => SolverLaw::Continuous(l),
            Law::Equations(l) => SolverLaw::Equations(l),
            _ => return None,
        };
        let parts = FlowParts {
            input: &self.input,
            state: &mut self.state,
            step_start: &mut self.step_start,
            step_input: &mut self.step_input,
            reference: &mut self.reference,
            buf: &mut self.error,
            scratch: &mut self.scratch,
            output: &mut self.output,
        };
        Some((law, parts))
    }
}

/// A solver-integrated law: `state_space`/`transfer_function` or
/// `equations`.
enum SolverLaw<'a> {
    Continuous(&'a continuous::Continuous),
    Equations(&'a equations::Equations),
}

/// What a solver-integrated law reads and writes of its controller.
struct FlowParts<'a> {
    input: &'a [f64],
    state: &'a mut [f64],
    /// The state and held input at the start of the last integrated step.
    step_start: &'a mut [f64],
    step_input: &'a mut [f64],
    reference: &'a mut [f64],
    /// The law's stage scratch ([`Flow::load`]).
    buf: &'a mut [f64],
    /// The state at an event time.
    scratch: &'a mut [f64],
    output: &'a mut [f64],
}

impl FlowParts<'_> {
    /// One solver step of the state from `t` (seconds), keeping where it
    /// started for [`StepClock::state_at`].
    fn integrate<F: Flow>(
        &mut self,
        law: &F,
        solver: SolverKind,
        ws: &mut Workspace,
        refs: &[Signal],
        t: f64,
        h: f64,
    ) {
        self.step_start.copy_from_slice(self.state);
        self.step_input.copy_from_slice(self.input);
        let (input, buf) = (self.input, &mut *self.buf);
        solver.step(ws, t, h, self.state, |t, x, dx| {
            law.load(input, refs, t, buf);
            law.derivative(t, x, buf, dx);
        });
    }

    /// The output at event time `t`, from the state at `t`.
    fn compute<F: Flow>(&mut self, law: &F, clock: &mut StepClock, refs: &[Signal], t: SimTime) {
        self.state_at(law, clock, refs, t);
        load_reference(self.reference, refs, t);
        law.output(
            law.seconds(t),
            self.input,
            self.reference,
            self.scratch,
            self.buf,
            self.output,
        );
    }

    /// The output one solver step after event time `t` (docs/design.md
    /// §4.4), on a scratch copy of the state.
    fn rollback<F: Flow>(&mut self, law: &F, clock: &mut StepClock, refs: &[Signal], t: SimTime) {
        self.state_at(law, clock, refs, t);
        let (input, buf) = (self.input, &mut *self.buf);
        clock.solver.step(
            clock.ws,
            law.seconds(t),
            clock.step.as_secs_f64(),
            self.scratch,
            |t, x, dx| {
                law.load(input, refs, t, buf);
                law.derivative(t, x, buf, dx);
            },
        );
        let t_next = SimTime(t.as_nanos().saturating_add(clock.step.as_nanos()));
        load_reference(self.reference, refs, t_next);
        law.output(
            law.seconds(t_next),
            self.input,
            self.reference,
            self.scratch,
            self.buf,
            self.output,
        );
    }

    /// The state at event time `t` into `scratch`.
    fn state_at<F: Flow>(&mut self, law: &F, clock: &mut StepClock, refs: &[Signal], t: SimTime) {
        clock.state_at(
            law,
            refs,
            t,
            self.step_start,
            self.step_input,
            self.state,
            self.buf,
            self.scratch,
        );
    }
}

/// The engine's step grid as a controller evaluated at an event time needs
/// it: the boundary reached, the step, the solver and its workspace.
pub(crate) struct StepClock<'a> {
    pub(crate) now: SimTime,
    pub(crate) step: StepSize,
    pub(crate) solver: SolverKind,
    pub(crate) ws: &'a mut Workspace,
}

impl StepClock<'_> {
    /// A continuous law's state at event time `t` of the step that ended
    /// at `now`, into `out`: the state itself when `t` is the boundary, else
    /// the step's start integrated by one solver step to `t`, with the input
    /// held over that step (a packet acts on the law's dynamics from the
    /// boundary after its arrival, as on a plant's).
    #[allow(clippy::too_many_arguments)]
    fn state_at<F: Flow>(
        &mut self,
        law: &F,
        refs: &[Signal],
        t: SimTime,
        step_start: &[f64],
        step_input: &[f64],
        state: &[f64],
        error: &mut [f64],
        out: &mut [f64],
    ) {
        if t == self.now {
            out.copy_from_slice(state);
            return;
        }
        // Same time arithmetic as the engine's step (`t0` from nanoseconds).
        let start = self.now.as_nanos() - self.step.as_nanos();
        let t0 = start as f64 * 1e-9;
        let dt = (t.as_nanos() - start) as f64 * 1e-9;
        out.copy_from_slice(step_start);
        self.solver.step(self.ws, t0, dt, out, |t, x, dx| {
            law.load(step_input, refs, t, error);
            law.derivative(t, x, error, dx);
        });
    }
}

/// A solver-integrated law: the right-hand side of its state, from a
/// scratch vector loaded at each stage time (a `state_space` law's error
/// `r - y`, an `equations` law's inputs `[y, r]`).
trait Flow {
    /// An event time in seconds, as this law's arithmetic takes it.
    fn seconds(&self, t: SimTime) -> f64;
    fn load(&self, input: &[f64], refs: &[Signal], t: f64, buf: &mut [f64]);
    fn derivative(&self, t: f64, x: &[f64], buf: &[f64], dx: &mut [f64]);
    /// The output at `t` (seconds) from state `x`; `buf` is scratch.
    fn output(
        &self,
        t: f64,
        input: &[f64],
        reference: &[f64],
        x: &[f64],
        buf: &mut [f64],
        out: &mut [f64],
    );
}

impl Flow for continuous::Continuous {
    #[inline]
    fn seconds(&self, t: SimTime) -> f64 {
        t.as_secs_f64()
    }
    #[inline]
    fn load(&self, input: &[f64], refs: &[Signal], t: f64, buf: &mut [f64]) {
        self.error_at(input, refs, t, buf);
    }
    #[inline]
    fn derivative(&self, _t: f64, x: &[f64], buf: &[f64], dx: &mut [f64]) {
        continuous::Continuous::derivative(self, x, buf, dx);
    }
    #[inline]
    fn output(
        &self,
        _t: f64,
        input: &[f64],
        reference: &[f64],
        x: &[f64],
        _buf: &mut [f64],
        out: &mut [f64],
    ) {
        continuous::Continuous::output(self, input, reference, x, out);
    }
}

impl Flow for equations::Equations {
    #[inline]
    fn seconds(&self, t: SimTime) -> f64 {
        secs(t)
    }
    #[inline]
    fn load(&self, input: &[f64], refs: &[Signal], t: f64, buf: &mut [f64]) {
        self.inputs_at(input, refs, t, buf);
    }
    #[inline]
    fn derivative(&self, t: f64, x: &[f64], buf: &[f64], dx: &mut [f64]) {
        equations::Equations::derivative(self, t, x, buf, dx);
    }
    #[inline]
    fn output(
        &self,
        t: f64,
        input: &[f64],
        reference: &[f64],
        x: &[f64],
        buf: &mut [f64],
        out: &mut [f64],
    ) {
        equations::Equations::output(self, t, input, reference, x, buf, out);
    }
}

/// Seconds of `t` as the engine computes a step's start (from nanoseconds).
#[inline]
fn secs(t: SimTime) -> f64 {
    t.as_nanos() as f64 * 1e-9
}

/// Reference values at `t`; no signals means zeros (the count was checked to
/// be all or none).
fn load_reference(out: &mut [f64], refs: &[Signal], t: SimTime) {
    if refs.is_empty() {
        out.fill(0.0);
    }
    for (r, s) in out.iter_mut().zip(refs) {
        *r = s.at(t);
    }
}

/// Turns the timing keys into a trigger, checking them against the step.
fn resolve_timing(
    ctx: &BuildContext,
    timing: Timing,
    step: StepSize,
    sensor_period: SimTime,
) -> Result<Trigger, ConfigError> {
    match timing.trigger {
        TriggerKind::Event => {
            for (field, v) in [("period", timing.period), ("phase", timing.phase)] {
                if v.is_some() {
                    return Err(ConfigError::invalid(
                        ctx.k(field),
                        "an event-triggered controller has no schedule; remove it or use trigger = \"time\"",
                    ));
                }
            }
            Ok(Trigger::Event)
        }
        TriggerKind::Time => {
            let period_t = timing.period.unwrap_or(sensor_period);
            let period = step
                .period_steps(period_t)
                .map_err(|source| ConfigError::Time {
                    key: ctx.k("period"),
                    source,
                })?;
            let phase_t = timing.phase.unwrap_or(SimTime::ZERO);
            let phase = step.steps_in(phase_t).map_err(|source| ConfigError::Time {
                key: ctx.k("phase"),
                source,
            })?;
            if phase >= period.get() {
                return Err(ConfigError::invalid(
                    ctx.k("phase"),
                    format!("{phase_t} must be less than the period {period_t}"),
                ));
            }
            Ok(Trigger::Time(Periodic { period, phase }))
        }
    }
}

/// Declares the timing keys on a controller config struct and implements
/// `timing()`; used by every kind so the keys read the same everywhere.
macro_rules! timing_fields {
    (
        $(#[$outer:meta])*
        pub struct $name:ident { $($(#[$meta:meta])* pub $field:ident : $ty:ty,)* }
    ) => {
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        $(#[$outer])*
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($(#[$meta])* pub $field: $ty,)*
            /// `"time"` (default) or `"event"`.
            #[serde(default)]
            pub trigger: $crate::controller::TriggerKind,
            /// Period of a time-triggered controller; default: the sensor period.
            #[serde(default, with = "netloop_time::duration::option", skip_serializing_if = "Option::is_none")]
            pub period: Option<netloop_time::SimTime>,
            /// Offset of its first computation; default `0s`.
            #[serde(default, with = "netloop_time::duration::option", skip_serializing_if = "Option::is_none")]
            pub phase: Option<netloop_time::SimTime>,
        }

        impl $name {
            /// The timing keys.
            pub fn timing(&self) -> $crate::controller::Timing {
                $crate::controller::Timing { trigger: self.trigger, period: self.period, phase: self.phase }
            }
        }
    };
}
pub(crate) use timing_fields;
