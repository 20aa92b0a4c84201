//! What a loop run's observers read, whatever runs the loops.
//!
//! The observers of a `[[loops]]` run (the [`Recorder`](crate::Recorder) of
//! `timeseries.csv`, and in the bridge the control metrics, the stop
//! conditions, the platoon metrics and the progress bar) read the same few
//! things of each loop at each boundary: its plant's state and outputs, its
//! reference, its controller's state and last output, and what its actuator
//! holds and applies. [`LoopView`] is that reading, and two things provide
//! it:
//!
//! - a [`System`], loop `i` being `system.loops()[i]`;
//! - the graph the loops expand into,
//!   [`GraphLoops`](crate::graph::loop_view::GraphLoops): the
//!   [`Graph`](crate::graph::Graph) with the components
//!   [`loops::expand_loops`](crate::graph::loops::expand_loops) made for each
//!   loop.
//!
//! Observers are generic over the view (monomorphised: no `dyn` on the
//! per-step path) and write into buffers their caller sized once, so a step
//! allocates nothing. A [`LoopObserver`] sees a view at each boundary;
//! [`ObserveSystem`] shows it a [`System`] (as an [`Observer`]) and
//! [`ObserveGraph`](crate::graph::loop_view::ObserveGraph) the expanded
//! graph (as a [`GraphObserver`](crate::graph::GraphObserver)). With zero
//! delays both give the same bits at every boundary (tested for every kind).
//!
//! Loop indices are `0..loop_count()`, in the order of `[[loops]]`; a method
//! given another index panics.

use netloop_time::SimTime;

use crate::error::ObserverError;
use crate::plant::{Kinematics, Signature};
use crate::system::{Observer, System};
use crate::time::StepSize;

/// The loops of a run at one boundary, read-only. See the module docs.
pub trait LoopView {
    /// The boundary.
    fn k(&self) -> u64;
    /// The boundary's time, `k h`.
    fn time(&self) -> SimTime;
    fn step_size(&self) -> StepSize;
    /// Number of loops.
    fn loop_count(&self) -> usize;

    // --- what a loop is (fixed when it is built) ---
    fn loop_name(&self, i: usize) -> &str;
    /// The predecessor loop's index (radar and CACC), if any.
    fn predecessor(&self, i: usize) -> Option<usize>;
    /// The plant's state, input and output names.
    fn signature(&self, i: usize) -> &Signature;
    /// Number of reference channels.
    fn reference_dim(&self, i: usize) -> usize;
    /// Names of the controller's recorded states.
    fn controller_state_names(&self, i: usize) -> &[String];

    // --- where it stands ---
    /// The plant's state (a discrete plant's own).
    fn plant_state(&self, i: usize) -> &[f64];
    /// The controller's recorded internal state.
    fn controller_state(&self, i: usize) -> &[f64];
    /// The controller's last output (zeros before the first).
    fn computed_control(&self, i: usize) -> &[f64];
    /// The value the actuator holds (what the controller sent).
    fn held_control(&self, i: usize) -> &[f64];
    /// The value applied to the plant (held value after saturation).
    fn applied_control(&self, i: usize) -> &[f64];
    /// The reference at the boundary into `out` (`reference_dim(i)` long).
    fn references_into(&self, i: usize, out: &mut [f64]);
    /// The plant's outputs at the boundary, for its state and the applied
    /// control, into `out` (as many as the signature's outputs).
    fn plant_outputs_into(&self, i: usize, out: &mut [f64]);
    /// The plant's body motion, for vehicles.
    fn kinematics(&self, i: usize) -> Option<Kinematics>;
    /// Reset events (impacts) of the plant so far.
    fn resets(&self, i: usize) -> u64;
}

impl LoopView for System {
    #[inline]
    fn k(&self) -> u64 {
        System::k(self)
    }
    #[inline]
    fn time(&self) -> SimTime {
        System::time(self)
    }
    #[inline]
    fn step_size(&self) -> StepSize {
        System::step_size(self)
    }
    #[inline]
    fn loop_count(&self) -> usize {
        self.loops().len()
    }
    #[inline]
    fn loop_name(&self, i: usize) -> &str {
        self.loops()[i].name()
    }
    #[inline]
    fn predecessor(&self, i: usize) -> Option<usize> {
        self.loops()[i].predecessor()
    }
    #[inline]
    fn signature(&self, i: usize) -> &Signature {
        self.loops()[i].signature()
    }
    #[inline]
    fn reference_dim(&self, i: usize) -> usize {
        self.loops()[i].reference_dim()
    }
    #[inline]
    fn controller_state_names(&self, i: usize) -> &[String] {
        self.loops()[i].controller_state_names()
    }
    #[inline]
    fn plant_state(&self, i: usize) -> &[f64] {
        self.loops()[i].state()
    }
    #[inline]
    fn controller_state(&self, i: usize) -> &[f64] {
        self.loops()[i].controller_state()
    }
    #[inline]
    fn computed_control(&self, i: usize) -> &[f64] {
        self.loops()[i].computed_control()
    }
    #[inline]
    fn held_control(&self, i: usize) -> &[f64] {
        self.loops()[i].held_control()
    }
    #[inline]
    fn applied_control(&self, i: usize) -> &[f64] {
        self.loops()[i].applied_control()
    }
    #[inline]
    fn references_into(&self, i: usize, out: &mut [f64]) {
        self.loops()[i].reference_into(System::time(self), out);
    }
    #[inline]
    fn plant_outputs_into(&self, i: usize, out: &mut [f64]) {
        self.loops()[i].outputs_into(System::time(self), out);
    }
    #[inline]
    fn kinematics(&self, i: usize) -> Option<Kinematics> {
        self.loops()[i].kinematics()
    }
    #[inline]
    fn resets(&self, i: usize) -> u64 {
        self.loops()[i].resets()
    }
}

/// Sees the loops at each boundary, through any [`LoopView`].
pub trait LoopObserver {
    /// Called at boundary `view.k()`, before its step is integrated.
    ///
    /// # Errors
    /// Any error stops the run (as an [`Observer`]'s does).
    fn observe_loops<V: LoopView + ?Sized>(&mut self, view: &V) -> Result<(), ObserverError>;
}

impl<O: LoopObserver + ?Sized> LoopObserver for &mut O {
    #[inline]
    fn observe_loops<V: LoopView + ?Sized>(&mut self, view: &V) -> Result<(), ObserverError> {
        (**self).observe_loops(view)
    }
}

/// A [`LoopObserver`] as the [`Observer`] of a [`System`]
/// ([`System::advance_to`], [`ClosedLoop::run_to`](crate::ClosedLoop::run_to)).
#[derive(Debug)]
pub struct ObserveSystem<O>(pub O);

impl<O: LoopObserver> Observer for ObserveSystem<O> {
    #[inline]
    fn observe(&mut self, system: &System) -> Result<(), ObserverError> {
        self.0.observe_loops(system)
    }
}
