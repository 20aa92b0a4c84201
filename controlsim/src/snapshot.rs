//! Bit-exact snapshot and restore of all mutable state (docs/design.md §3.3, §4.4).
//!
//! A snapshot holds state only, never parameters: for each loop the plant
//! state, a discrete plant's latched input, the reset count, the guard modes
//! and last event of a plant with guards, the sensor's
//! generator and last sample, the actuator's held values, and the
//! controller's held input, internal state (PID integrator and filter,
//! observer estimate, continuous state), bookkeeping memory, last output and
//! last computation time, and a continuous controller's state and input at
//! the start of the last step (for evaluations at an event time inside it);
//! plus the step index. Restoring copies it back into
//! the existing buffers (no allocation), after checking every length first,
//! so a snapshot from a differently shaped system is a [`ShapeMismatch`]
//! and the system is left untouched.
//!
//! Everything derived (the actuator's saturated values, an observer's cached
//! discretisation) is recomputed or keyed by its inputs, so a restored system
//! computes exactly the same bits as one that never left.
//!
//! Messages in flight belong to the driver, not the system: a
//! [`ClosedLoop`](crate::ClosedLoop) with delays snapshots them together with
//! the system in a [`ClosedLoopSnapshot`](crate::ClosedLoopSnapshot).

use netloop_time::SimTime;
use rand_chacha::ChaCha8Rng;

use crate::error::ShapeMismatch;
use crate::event::{Event, GuardMode};
use crate::system::{Loop, System};

/// The complete mutable state of a [`System`] at one boundary.
#[derive(Clone, Debug)]
pub struct Snapshot {
    k: u64,
    loops: Vec<LoopState>,
}

#[derive(Clone, Debug)]
struct LoopState {
    x: Vec<f64>,
    latched: Vec<f64>,
    resets: u64,
    guard_modes: Vec<GuardMode>,
    last_event: Option<Event>,
    rng: ChaCha8Rng,
    sample: Vec<f64>,
    held: Vec<f64>,
    input: Vec<f64>,
    state: Vec<f64>,
    memory: Vec<f64>,
    output: Vec<f64>,
    last_time: Option<SimTime>,
    step_start: Vec<f64>,
    step_input: Vec<f64>,
}

impl Snapshot {
    /// The boundary it was taken at.
    pub fn k(&self) -> u64 {
        self.k
    }
}

/// Bitwise equality (so NaN equals the same NaN, and 0.0 differs from -0.0):
/// "the same snapshot" means the same bits.
impl PartialEq for Snapshot {
    fn eq(&self, other: &Self) -> bool {
        fn bits(a: &[f64], b: &[f64]) -> bool {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
        }
        self.k == other.k
            && self.loops.len() == other.loops.len()
            && self.loops.iter().zip(&other.loops).all(|(a, b)| {
                bits(&a.x, &b.x)
                    && bits(&a.latched, &b.latched)
                    && a.resets == b.resets
                    && a.guard_modes == b.guard_modes
                    && same_event(a.last_event, b.last_event)
                    && a.rng == b.rng
                    && bits(&a.sample, &b.sample)
                    && bits(&a.held, &b.held)
                    && bits(&a.input, &b.input)
                    && bits(&a.state, &b.state)
                    && bits(&a.memory, &b.memory)
                    && bits(&a.output, &b.output)
                    && a.last_time == b.last_time
                    && bits(&a.step_start, &b.step_start)
                    && bits(&a.step_input, &b.step_input)
            })
    }
}

/// Bitwise, like the rest of the comparison.
fn same_event(a: Option<Event>, b: Option<Event>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.time.to_bits() == b.time.to_bits() && a.guard == b.guard && a.kind == b.kind
        }
        _ => false,
    }
}

fn capture(lp: &Loop) -> LoopState {
    let (guard_modes, last_event) = match &lp.guards {
        Some(g) => (g.modes.clone(), g.last),
        None => (Vec::new(), None),
    };
    LoopState {
        x: lp.x.clone(),
        latched: lp.latched.clone(),
        resets: lp.resets,
        guard_modes,
        last_event,
        rng: lp.sensor.rng.clone(),
        sample: lp.sensor.sample.clone(),
        held: lp.actuator.held.clone(),
        input: lp.controller.input.clone(),
        state: lp.controller.state.clone(),
        memory: lp.controller.memory.clone(),
        output: lp.controller.output.clone(),
        last_time: lp.controller.last_time,
        step_start: lp.controller.step_start.clone(),
        step_input: lp.controller.step_input.clone(),
    }
}

fn check(i: usize, lp: &Loop, s: &LoopState) -> Result<(), ShapeMismatch> {
    let guards = lp.guards.as_ref().map_or(0, |g| g.modes.len());
    let parts: [(&str, usize, usize); 11] = [
        ("plant state", lp.x.len(), s.x.len()),
        ("plant guards", guards, s.guard_modes.len()),
        ("latched input", lp.latched.len(), s.latched.len()),
        ("sensor sample", lp.sensor.sample.len(), s.sample.len()),
        ("actuator", lp.actuator.held.len(), s.held.len()),
        ("controller input", lp.controller.input.len(), s.input.len()),
        ("controller state", lp.controller.state.len(), s.state.len()),
        (
            "controller memory",
            lp.controller.memory.len(),
            s.memory.len(),
        ),
        (
            "controller output",
            lp.controller.output.len(),
            s.output.len(),
        ),
        (
            "controller step start",
            lp.controller.step_start.len(),
            s.step_start.len(),
        ),
        (
            "controller step input",
            lp.controller.step_input.len(),
            s.step_input.len(),
        ),
    ];
    for (what, expected, found) in parts {
        if expected != found {
            return Err(ShapeMismatch {
                what: format!("loop {i} ({}) {what} length", lp.name),
                expected,
                found,
            });
        }
    }
    Ok(())
}

impl System {
    /// The complete mutable state now.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            k: self.k(),
            loops: self.loops().iter().map(capture).collect(),
        }
    }

    /// Like [`snapshot`](Self::snapshot), reusing `into`'s buffers when it
    /// already has this system's shape (no allocation in a rollback loop).
    pub fn snapshot_into(&self, into: &mut Snapshot) {
        let same_shape = into.loops.len() == self.loops().len()
            && self
                .loops()
                .iter()
                .zip(&into.loops)
                .enumerate()
                .all(|(i, (l, s))| check(i, l, s).is_ok());
        if !same_shape {
            *into = self.snapshot();
            return;
        }
        into.k = self.k();
        for (lp, s) in self.loops().iter().zip(&mut into.loops) {
            s.x.copy_from_slice(&lp.x);
            s.latched.copy_from_slice(&lp.latched);
            s.resets = lp.resets;
            if let Some(g) = &lp.guards {
                s.guard_modes.copy_from_slice(&g.modes);
                s.last_event = g.last;
            }
            s.rng.clone_from(&lp.sensor.rng);
            s.sample.copy_from_slice(&lp.sensor.sample);
            s.held.copy_from_slice(&lp.actuator.held);
            s.input.copy_from_slice(&lp.controller.input);
            s.state.copy_from_slice(&lp.controller.state);
            s.memory.copy_from_slice(&lp.controller.memory);
            s.output.copy_from_slice(&lp.controller.output);
            s.last_time = lp.controller.last_time;
            s.step_start.copy_from_slice(&lp.controller.step_start);
            s.step_input.copy_from_slice(&lp.controller.step_input);
        }
    }

    /// Puts the system back exactly as it was when `snapshot` was taken.
    ///
    /// # Errors
    /// [`ShapeMismatch`] (with expected/found) when the snapshot comes from a
    /// system of another shape; nothing is changed then.
    pub fn restore(&mut self, snapshot: &Snapshot) -> Result<(), ShapeMismatch> {
        let loops = self.loops();
        if loops.len() != snapshot.loops.len() {
            return Err(ShapeMismatch {
                what: "loop count".into(),
                expected: loops.len(),
                found: snapshot.loops.len(),
            });
        }
        for (i, (lp, s)) in loops.iter().zip(&snapshot.loops).enumerate() {
            check(i, lp, s)?;
        }
        for (lp, s) in self.loops_mut().iter_mut().zip(&snapshot.loops) {
            lp.x.copy_from_slice(&s.x);
            lp.latched.copy_from_slice(&s.latched);
            lp.resets = s.resets;
            if let Some(g) = &mut lp.guards {
                g.modes.copy_from_slice(&s.guard_modes);
                g.last = s.last_event;
            }
            lp.sensor.rng.clone_from(&s.rng);
            lp.sensor.sample.copy_from_slice(&s.sample);
            lp.actuator.held.copy_from_slice(&s.held);
            for j in 0..s.held.len() {
                lp.actuator.refresh(j);
            }
            lp.controller.input.copy_from_slice(&s.input);
            lp.controller.state.copy_from_slice(&s.state);
            lp.controller.memory.copy_from_slice(&s.memory);
            lp.controller.output.copy_from_slice(&s.output);
            lp.controller.last_time = s.last_time;
            lp.controller.step_start.copy_from_slice(&s.step_start);
            lp.controller.step_input.copy_from_slice(&s.step_input);
        }
        self.set_k(snapshot.k);
        Ok(())
    }
}
