//! A standalone closed loop: every loop's controller wired straight to its
//! sensor and actuator, optionally through a pure delay on the uplink
//! (sensor -> controller) and the downlink (controller -> actuator). No
//! network: this is the reference against which networked runs are compared,
//! and the oracle the bridge must reproduce bit for bit over a zero-delay
//! network.
//!
//! # What happens at boundary `k` (time `t = k h`)
//! For each loop `i` in index order (loops do not interact within a boundary,
//! so the order between loops does not change any bit):
//!
//! 1. **Uplink arrivals.** Every measurement message whose arrival step is
//!    `k`, oldest first: `set_controller_inputs(i, msg)`; if the controller is
//!    event-triggered, **respond** (below).
//! 2. **Sampling.** If `sensor_due(i)`: `msg = sample(i)` followed by
//!    `extra_input(i, j)` for each extra input `j` (CACC: the predecessor's
//!    acceleration, carried with the measurement). Its arrival step is
//!    `ceil((t + d_up) / h)`; if that is `k` (zero delay), it is delivered now
//!    exactly as in 1 (input, then respond if event-triggered); otherwise it is
//!    queued.
//! 3. **Controller tick.** If `controller_due(i)` (time-triggered, at its
//!    period and phase): **respond** with the latest input.
//! 4. **Downlink arrivals.** Every control message whose arrival step is `k`,
//!    oldest first: `set_actuators(i, u)`.
//!
//! **Respond** = `u = compute_control(i)` (or `rollback_response(i)` for a
//! continuous controller when [`Response::Rollback`] is chosen), sent with
//! arrival step `ceil((t + d_down) / h)`; with zero delay it arrives at `k` and
//! is applied in step 4 of this same boundary.
//!
//! Then the system advances one step (`advance_to(k + 1, observer)`, so the
//! observer sees boundary `k` after all of the above).
//!
//! With zero delays the calls at a boundary are therefore exactly:
//! `sample(i)`, [`extra_input(i, j)`...], `set_controller_inputs(i, ..)`,
//! [`compute_control(i)` if event-triggered], [`compute_control(i)` if a
//! time-triggered tick], `set_actuators(i, u)` for each computed `u` in order;
//! then integrate.
//!
//! # Snapshots
//! With delays, messages are in flight between boundaries: they are state
//! as much as the plant's. [`ClosedLoop::snapshot`] holds the system's
//! [`Snapshot`] and every queued message, so restoring and re-running a
//! delayed loop gives the same bits.

use std::collections::VecDeque;

use netloop_time::SimTime;

use crate::controller::Trigger;
use crate::error::{ApiError, ShapeMismatch, StepError};
use crate::snapshot::Snapshot;
use crate::system::{Observer, System};

/// Pure delays, the same for every loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delays {
    /// Sensor to controller.
    pub uplink: SimTime,
    /// Controller to actuator.
    pub downlink: SimTime,
}

/// How a continuous (solver-integrated) controller answers (docs/design.md §4.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Response {
    /// `compute_control`: `C x_c + D e` at the boundary.
    #[default]
    Direct,
    /// `rollback_response`: the output one solver step ahead.
    Rollback,
}

/// Why a closed-loop run stopped.
#[derive(Debug, thiserror::Error)]
pub enum ClosedLoopError {
    #[error(transparent)]
    Step(#[from] StepError),
    #[error(transparent)]
    Api(#[from] ApiError),
}

/// Messages in flight, oldest first: (arrival step, values).
type Queue = VecDeque<(u64, Vec<f64>)>;

/// The complete mutable state of a [`ClosedLoop`]: the system's snapshot and
/// the messages in flight on each loop's uplink and downlink.
#[derive(Clone, Debug)]
pub struct ClosedLoopSnapshot {
    system: Snapshot,
    uplink: Vec<Queue>,
    downlink: Vec<Queue>,
}

impl ClosedLoopSnapshot {
    /// The system's part.
    pub fn system(&self) -> &Snapshot {
        &self.system
    }
}

/// Bitwise, like [`Snapshot`]'s.
impl PartialEq for ClosedLoopSnapshot {
    fn eq(&self, other: &Self) -> bool {
        fn same(a: &[Queue], b: &[Queue]) -> bool {
            a.len() == b.len()
                && a.iter().zip(b).all(|(qa, qb)| {
                    qa.len() == qb.len()
                        && qa.iter().zip(qb).all(|((ka, va), (kb, vb))| {
                            ka == kb
                                && va.len() == vb.len()
                                && va.iter().zip(vb).all(|(x, y)| x.to_bits() == y.to_bits())
                        })
                })
        }
        self.system == other.system
            && same(&self.uplink, &other.uplink)
            && same(&self.downlink, &other.downlink)
    }
}

/// A [`System`] with its controllers wired directly.
#[derive(Debug)]
pub struct ClosedLoop {
    system: System,
    delays: Delays,
    response: Response,
    uplink: Vec<Queue>,
    downlink: Vec<Queue>,
}

impl ClosedLoop {
    pub fn new(system: System, delays: Delays, response: Response) -> Self {
        let n = system.loops().len();
        ClosedLoop {
            system,
            delays,
            response,
            uplink: vec![Queue::new(); n],
            downlink: vec![Queue::new(); n],
        }
    }

    pub fn system(&self) -> &System {
        &self.system
    }

    pub fn into_system(self) -> System {
        self.system
    }

    /// The system's state and every message in flight.
    pub fn snapshot(&self) -> ClosedLoopSnapshot {
        ClosedLoopSnapshot {
            system: self.system.snapshot(),
            uplink: self.uplink.clone(),
            downlink: self.downlink.clone(),
        }
    }

    /// Puts the system and the messages in flight back exactly as they were
    /// when `snapshot` was taken.
    ///
    /// # Errors
    /// [`ShapeMismatch`] when the snapshot comes from a system of another
    /// shape (including a queued message of the wrong length); nothing is
    /// changed then.
    pub fn restore(&mut self, snapshot: &ClosedLoopSnapshot) -> Result<(), ShapeMismatch> {
        let loops = self.system.loops();
        for (i, lp) in loops.iter().enumerate() {
            let sizes = [
                ("uplink", &snapshot.uplink, lp.controller_input_dim()),
                ("downlink", &snapshot.downlink, lp.held_control().len()),
            ];
            for (what, queues, expected) in sizes {
                let Some(queue) = queues.get(i) else { continue };
                if let Some((_, msg)) = queue.iter().find(|(_, m)| m.len() != expected) {
                    return Err(ShapeMismatch {
                        what: format!("loop {i} ({}) {what} message length", lp.name()),
                        expected,
                        found: msg.len(),
                    });
                }
            }
        }
        // Checks the loop count (queues have one per loop) before writing.
        self.system.restore(&snapshot.system)?;
        self.uplink.clone_from(&snapshot.uplink);
        self.downlink.clone_from(&snapshot.downlink);
        Ok(())
    }

    /// Runs from the current boundary to `k1` (see the module docs).
    ///
    /// # Errors
    /// A [`StepError`] from the system or the observer.
    pub fn run_to<O: Observer + ?Sized>(
        &mut self,
        k1: u64,
        observer: &mut O,
    ) -> Result<(), ClosedLoopError> {
        if k1 < self.system.k() {
            return Err(StepError::Backwards {
                from: self.system.k(),
                to: k1,
            }
            .into());
        }
        while self.system.k() < k1 {
            for i in 0..self.uplink.len() {
                self.serve(i)?;
            }
            let next = self.system.k() + 1;
            self.system.advance_to(next, observer)?;
        }
        Ok(())
    }

    fn arrival(&self, delay: SimTime) -> u64 {
        let t = self.system.time();
        self.system
            .step_size()
            .step_at_or_after(SimTime(t.as_nanos().saturating_add(delay.as_nanos())))
    }

    fn serve(&mut self, i: usize) -> Result<(), ApiError> {
        let k = self.system.k();
        let event = self.system.get(i)?.controller_trigger() == Trigger::Event;
        // 1. uplink arrivals
        while self.uplink[i].front().is_some_and(|(ka, _)| *ka <= k) {
            let (_, msg) = self.uplink[i].pop_front().unwrap_or_default();
            self.deliver_measurement(i, &msg, event)?;
        }
        // 2. sampling
        if self.system.sensor_due(i)? {
            let mut msg = self.system.sample(i)?.to_vec();
            for j in 0..self.system.get(i)?.extra_inputs().len() {
                msg.push(self.system.extra_input(i, j)?);
            }
            let ka = self.arrival(self.delays.uplink);
            if ka == k {
                self.deliver_measurement(i, &msg, event)?;
            } else {
                self.uplink[i].push_back((ka, msg));
            }
        }
        // 3. time-triggered tick
        if self.system.controller_due(i)? {
            self.respond(i)?;
        }
        // 4. downlink arrivals
        while self.downlink[i].front().is_some_and(|(ka, _)| *ka <= k) {
            let (_, u) = self.downlink[i].pop_front().unwrap_or_default();
            self.system.set_actuators(i, &u)?;
        }
        Ok(())
    }

    fn deliver_measurement(&mut self, i: usize, msg: &[f64], event: bool) -> Result<(), ApiError> {
        self.system.set_controller_inputs(i, msg)?;
        if event {
            self.respond(i)?;
        }
        Ok(())
    }

    fn respond(&mut self, i: usize) -> Result<(), ApiError> {
        let rollback =
            self.response == Response::Rollback && self.system.get(i)?.has_rollback_response();
        let u = if rollback {
            self.system.rollback_response(i)?.to_vec()
        } else {
            self.system.compute_control(i)?.to_vec()
        };
        let ka = self.arrival(self.delays.downlink);
        self.downlink[i].push_back((ka, u));
        Ok(())
    }
}
