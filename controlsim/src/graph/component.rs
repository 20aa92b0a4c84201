//! The [`Component`] trait: what a Rust user implements to add a kind, and
//! the declaration of its ports, states, guards and timing.
//!
//! # The contract
//! A component owns its parameters and its discrete (internal) state; the
//! engine owns its continuous states, its input and output port values and
//! the guard modes, so those are snapshotted without the component's help.
//! At every boundary where the component is *due* (see [`Timing`]) the engine
//! gathers its inputs and calls [`output`](Component::output); it may update
//! internal state there (a PID's integral), because the engine calls it
//! exactly once per due boundary (an algebraic-loop solve restores the
//! component with [`save`](Component::save) / [`load`](Component::load)
//! around its trial evaluations). After every component was served, the
//! engine integrates continuous states over the step with the inputs held
//! ([`derivative`](Component::derivative), guards located inside the step as
//! for plants, see [`event`](crate::event)) and calls
//! [`advance`](Component::advance) for discrete bookkeeping over the step.
//!
//! Only what differs from the defaults needs writing: a static gain is
//! `declare` plus `output`.

use std::fmt;

use netloop_time::SimTime;

use super::lower::Lowered;
use crate::solver::{SolverKind, Workspace};
use crate::time::StepSize;

/// One port: a vector of `f64` with a fixed size.
#[derive(Clone, Debug, PartialEq)]
pub struct PortSpec {
    /// The port's name, as written in a connection (`servo.y`).
    pub name: String,
    pub size: usize,
    /// Names of the elements (empty, or exactly `size` names); used for
    /// recorded column names instead of `port[i]`.
    pub elements: Vec<String>,
    /// Unit of each element (`rad`, `V`) where known: empty, or exactly
    /// `size` entries. Shown on `check --graph`'s edges; see [`Self::unit`].
    pub units: Vec<Option<String>>,
    /// Input ports only: whether the value at an instant acts on an output at
    /// the same instant (direct feedthrough). Orders the evaluation; a cycle
    /// of such inputs is an algebraic loop.
    pub direct: bool,
    /// Input ports of a component evaluated on new inputs
    /// ([`Timing::OnInput`]) only: whether a new value here triggers it.
    pub trigger: bool,
}

impl PortSpec {
    /// A port of `size` elements, no names, no unit, direct feedthrough.
    pub fn new(name: impl Into<String>, size: usize) -> Self {
        PortSpec {
            name: name.into(),
            size,
            elements: Vec::new(),
            units: Vec::new(),
            direct: true,
            trigger: true,
        }
    }

    /// A port whose elements are named (its size is the number of names).
    pub fn named(name: impl Into<String>, elements: &[String]) -> Self {
        PortSpec {
            elements: elements.to_vec(),
            ..PortSpec::new(name, elements.len())
        }
    }

    /// Marks an input as not acting on any output at the same instant.
    pub fn delayed(mut self) -> Self {
        self.direct = false;
        self
    }

    /// Marks an input whose new values do not trigger an
    /// [`OnInput`](Timing::OnInput) component (read when something else does).
    pub fn passive(mut self) -> Self {
        self.trigger = false;
        self
    }

    /// Every element in `unit`.
    pub fn with_unit(self, unit: impl Into<String>) -> Self {
        let unit = unit.into();
        let units = vec![Some(unit); self.size];
        self.with_units(units)
    }

    /// Element `i` in `units[i]` (`None`: not known). Kept empty when no
    /// element has a unit.
    ///
    /// # Panics
    /// When `units` is not one entry per element.
    pub fn with_units(mut self, units: Vec<Option<String>>) -> Self {
        assert_eq!(
            units.len(),
            self.size,
            "port {}: one unit per element",
            self.name
        );
        self.units = if units.iter().all(Option::is_none) {
            Vec::new()
        } else {
            units
        };
        self
    }

    /// The unit of element `i`, if declared.
    pub fn unit(&self, i: usize) -> Option<&str> {
        self.units.get(i).and_then(Option::as_deref)
    }
}

/// When a component's [`output`](Component::output) is evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// At every boundary (plants, references, static blocks).
    EveryStep,
    /// At `offset + n * period` (sensors, time-triggered controllers,
    /// discrete blocks); both whole multiples of the step, `offset < period`,
    /// checked when the graph is built.
    Periodic { period: SimTime, offset: SimTime },
    /// At a boundary where one of its triggering inputs (all but those
    /// declared [`passive`](PortSpec::passive)) has a new value: its source
    /// was evaluated there (event-triggered controllers, actuators).
    OnInput,
}

/// Everything the engine needs to know about a component, asked once when
/// the graph is built.
#[derive(Clone, Debug, PartialEq)]
pub struct Declaration {
    pub inputs: Vec<PortSpec>,
    pub outputs: Vec<PortSpec>,
    /// Names of the continuous states the engine integrates (may be empty).
    pub states: Vec<String>,
    /// Number of guard functions on the continuous states.
    pub guards: usize,
    pub timing: Timing,
}

/// Read access to a component's input values, port by port.
#[derive(Clone, Copy, Debug)]
pub struct Inputs<'a> {
    pub(crate) data: &'a [f64],
    pub(crate) offsets: &'a [usize],
}

impl<'a> Inputs<'a> {
    /// Input port `i` (in declaration order).
    #[inline]
    pub fn port(&self, i: usize) -> &'a [f64] {
        &self.data[self.offsets[i]..self.offsets[i + 1]]
    }

    /// Every input element, ports one after the other.
    #[inline]
    pub fn all(&self) -> &'a [f64] {
        self.data
    }
}

/// Write access to a component's output values, port by port. Values not
/// written keep what they held.
#[derive(Debug)]
pub struct Outputs<'a> {
    pub(crate) data: &'a mut [f64],
    pub(crate) offsets: &'a [usize],
}

impl Outputs<'_> {
    /// Output port `i` (in declaration order).
    #[inline]
    pub fn port(&mut self, i: usize) -> &mut [f64] {
        &mut self.data[self.offsets[i]..self.offsets[i + 1]]
    }

    /// Every output element, ports one after the other.
    #[inline]
    pub fn all(&mut self) -> &mut [f64] {
        self.data
    }
}

/// The instant a component is evaluated at and the run's step machinery.
#[derive(Debug)]
pub struct Ctx<'a> {
    /// The boundary index and its time.
    pub k: u64,
    pub now: SimTime,
    /// The instant the component is evaluated at: `now`, or for a component
    /// answering a packet ([`Graph::respond`](super::Graph::respond)) the
    /// packet's arrival, inside the step that ends at `now`. A kind whose
    /// law runs on its own clock (a PID's integral, a reference) reads it
    /// here; the step machinery stays on the grid.
    pub at: SimTime,
    pub step: StepSize,
    pub solver: SolverKind,
    /// Scratch for a component that integrates something itself.
    pub ws: &'a mut Workspace,
}

/// A component's internal state as plain numbers, for snapshots: reals
/// (compared bitwise) and words (counters, generator positions).
#[derive(Clone, Debug, Default)]
pub struct SavedState {
    pub reals: Vec<f64>,
    pub words: Vec<u64>,
}

impl SavedState {
    pub fn clear(&mut self) {
        self.reals.clear();
        self.words.clear();
    }

    /// A cursor to read the state back in the order it was written.
    pub fn reader(&self) -> StateReader<'_> {
        StateReader {
            state: self,
            reals: 0,
            words: 0,
        }
    }
}

/// Bitwise: the same state means the same bits.
impl PartialEq for SavedState {
    fn eq(&self, other: &Self) -> bool {
        self.words == other.words
            && self.reals.len() == other.reals.len()
            && self
                .reals
                .iter()
                .zip(&other.reals)
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }
}

/// Reads a [`SavedState`] back; running past its end is an error (a state
/// from a component of another shape), never a panic.
#[derive(Debug)]
pub struct StateReader<'a> {
    state: &'a SavedState,
    reals: usize,
    words: usize,
}

/// A saved state that does not fit the component it is loaded into.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the saved state does not fit: {0}")]
pub struct StateMismatch(pub String);

impl StateReader<'_> {
    /// The next `out.len()` reals.
    ///
    /// # Errors
    /// [`StateMismatch`] when fewer are left.
    pub fn reals(&mut self, out: &mut [f64]) -> Result<(), StateMismatch> {
        let end = self.reals + out.len();
        let src = self.state.reals.get(self.reals..end).ok_or_else(|| {
            StateMismatch(format!("{} reals wanted at {}", out.len(), self.reals))
        })?;
        out.copy_from_slice(src);
        self.reals = end;
        Ok(())
    }

    /// The next word.
    ///
    /// # Errors
    /// [`StateMismatch`] when none is left.
    pub fn word(&mut self) -> Result<u64, StateMismatch> {
        let w = *self
            .state
            .words
            .get(self.words)
            .ok_or_else(|| StateMismatch(format!("a word wanted at {}", self.words)))?;
        self.words += 1;
        Ok(w)
    }

    /// Checks that everything was read.
    ///
    /// # Errors
    /// [`StateMismatch`] when something is left over.
    pub fn finish(self) -> Result<(), StateMismatch> {
        if self.reals != self.state.reals.len() || self.words != self.state.words.len() {
            return Err(StateMismatch(format!(
                "{} reals and {} words left over",
                self.state.reals.len() - self.reals,
                self.state.words.len() - self.words
            )));
        }
        Ok(())
    }
}

/// Which per-step calls a kind needs besides [`output`](Component::output),
/// asked once when the graph is built ([`Component::needs`]). The engine
/// skips what is not needed: for a component with neither continuous
/// states nor `advance`, the inputs gathered again before the step and the
/// `advance` call; without `fault`, the fault check after every step; with
/// `pure_output`, an every-step component's `output` where nothing reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needs {
    /// Whether [`advance`](Component::advance) does anything.
    pub advance: bool,
    /// With `advance`: only over a step whose starting boundary the
    /// component was due at (a sampled discrete block's update); told by
    /// its first output port being new there, so a kind with no output
    /// port is advanced at every step.
    pub advance_only_when_due: bool,
    /// Whether [`fault`](Component::fault) can ever report a failure.
    pub fault: bool,
    /// Whether [`output`](Component::output) only computes: it changes
    /// nothing that a later `output`, `advance`, `derivative` or `save`
    /// reads, so its values at a boundary do not depend on whether it was
    /// called at earlier ones. Then [`Graph::run_to`](super::Graph::run_to)
    /// may skip it, for a component evaluated at every step, at a boundary
    /// where neither a component nor the observer reads its outputs (a
    /// plant between the samples of its sensor; see
    /// [`demand`](super::demand)).
    pub pure_output: bool,
}

impl Needs {
    /// Every call (the default: always correct).
    pub const ALL: Needs = Needs {
        advance: true,
        advance_only_when_due: false,
        fault: true,
        pure_output: false,
    };
    /// `output` only (with `derivative` when the kind has states): a kind
    /// that keeps the default `advance` and `fault`.
    pub const OUTPUT_ONLY: Needs = Needs {
        advance: false,
        advance_only_when_due: false,
        fault: false,
        pure_output: false,
    };
    /// `advance` at every step, no `fault`.
    pub const ADVANCE: Needs = Needs {
        advance: true,
        advance_only_when_due: false,
        fault: false,
        pure_output: false,
    };
    /// `advance` after each boundary the component was due at, no `fault`.
    pub const ADVANCE_WHEN_DUE: Needs = Needs {
        advance: true,
        advance_only_when_due: true,
        fault: false,
        pure_output: false,
    };
}

/// A kind of component. See the module docs for the contract; every method
/// but `declare` and `output` has a default.
pub trait Component: fmt::Debug + Send {
    /// Ports, states, guards and timing; asked once when the graph is built.
    fn declare(&self) -> Declaration;

    /// Writes the initial continuous states.
    fn initial_state(&self, x: &mut [f64]) {
        x.fill(0.0);
    }

    /// Writes the outputs held before the first evaluation. Default: zeros.
    fn initial_outputs(&self, y: &mut Outputs) {
        y.all().fill(0.0);
    }

    /// Called once after every initial output is in place, with the inputs
    /// as they then stand.
    fn start(&mut self, u: &Inputs) {
        let _ = u;
    }

    /// Computes the outputs at a boundary where the component is due; `x`
    /// holds its continuous states there.
    fn output(&mut self, cx: &mut Ctx, x: &[f64], u: &Inputs, y: &mut Outputs);

    /// `dx = f(t, x, u)`, `t` in seconds, the inputs held over the step.
    fn derivative(&self, t: f64, x: &[f64], u: &Inputs, dx: &mut [f64]) {
        let _ = (t, x, u);
        dx.fill(0.0);
    }

    /// Integrates the continuous states `x` over one step from `t` over `h`
    /// (seconds) with the inputs held; called for components without
    /// guards (the engine locates guards itself). The default runs the
    /// run's solver on [`derivative`](Self::derivative); a kind overrides it
    /// only to do the same arithmetic faster (a plant takes the
    /// size-specialised path a [`System`](crate::System) takes).
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
        solver.step(ws, t, h, x, |t, x, dx| self.derivative(t, x, u, dx));
    }

    /// Integrates `n` steps from boundary `k` with the inputs held, for a
    /// stretch of quiet boundaries where nothing reads or changes this
    /// component's inputs: the bits of `n` calls of
    /// [`integrate`](Self::integrate), each over its step's interval. Stops
    /// after the first step that leaves a state non-finite and returns
    /// `Err(j)`, `j` the steps done. A kind overrides it only to take the
    /// per-step dispatch out of the loop (a plant does).
    #[allow(clippy::too_many_arguments)]
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
        for j in 0..n {
            let (t, h) = crate::advance::interval(step, k + j);
            self.integrate(solver, ws, t, h, x, u);
            if !crate::advance::all_finite(x) {
                return Err(j + 1);
            }
        }
        Ok(())
    }

    /// Discrete bookkeeping for step `cx.k` (from `cx.now` to the next
    /// boundary), after the continuous states were integrated over it.
    fn advance(&mut self, cx: &mut Ctx, u: &Inputs) {
        let _ = (cx, u);
    }

    /// Guard values `g_i(t, x, u)`; guard `i` fires when `g_i` falls to zero
    /// or below (as [`Plant::guards`](crate::Plant::guards)).
    fn guards(&self, t: f64, x: &[f64], u: &Inputs, g: &mut [f64]) {
        let _ = (t, x, u, g);
    }

    /// The reset map at a located event.
    fn reset(&self, t: f64, x: &mut [f64], u: &Inputs, guard: usize) {
        let _ = (t, x, u, guard);
    }

    /// Accumulating (Zeno) events: put `x` at rest and return `true`, or
    /// `false` to stop the run.
    fn settle(&self, t: f64, x: &mut [f64], u: &Inputs, guard: usize) -> bool {
        let _ = (t, x, u, guard);
        false
    }

    /// A failure the component reports after a step (a failed FMU call);
    /// the run then stops with [`GraphError::Component`](super::GraphError::Component)
    /// carrying this message. Default: none.
    fn fault(&self) -> Option<String> {
        None
    }

    /// Which per-step calls this kind needs ([`Needs`]); asked once at
    /// build. Default: [`Needs::ALL`]. A kind that keeps the default
    /// `advance` and `fault` returns [`Needs::OUTPUT_ONLY`] to be served
    /// faster; claiming less than it needs is a bug of the kind (its
    /// `advance` or `fault` is then never called).
    fn needs(&self) -> Needs {
        Needs::ALL
    }

    /// For a kind evaluated at every step whose output is a fixed form of
    /// its inputs (and, for [`Lowered::StateSpace`], of its continuous
    /// states): its `output` as an arithmetic form the engine runs in its
    /// place, reading the inputs where they are produced
    /// ([`lower`](super::lower)). It must give the bits `output` gives.
    /// Default: none.
    fn lower(&self) -> Option<Lowered> {
        None
    }

    /// Discrete states worth recording (a discrete plant's state), as
    /// opposed to the continuous states the engine holds. Default: none.
    fn discrete_states(&self) -> &[f64] {
        &[]
    }

    /// The component as [`Any`](std::any::Any), so that a reader that knows
    /// the kind can see its internals ([`Graph::component_as`](super::Graph::component_as);
    /// the [`loop_view`](super::loop_view) reads a loop's plant, controller
    /// and actuator this way). Default: none, the kind stays opaque.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }

    /// Appends the internal state (everything `output` and `advance` change
    /// besides the engine-owned values) to `into`.
    fn save(&self, into: &mut SavedState) {
        let _ = into;
    }

    /// Puts back what [`save`](Self::save) wrote.
    ///
    /// # Errors
    /// [`StateMismatch`] for a state of another shape (the component may then
    /// be partly restored; the engine checks shapes before it loads).
    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        let _ = from;
        Ok(())
    }
}
