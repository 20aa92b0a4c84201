//! The fixed-step advance, one authority for [`System`](crate::System) and
//! the component [`Graph`](crate::graph::Graph): which target boundaries are
//! reachable, the start time and length of step `k`, one step of a plant's
//! continuous states with its input held, and a discrete plant's
//! sample-and-update. Both engines call these, so a plant gives the same bits
//! in a `[[loops]]` run and in a graph (tested bit for bit in
//! `tests/integration/graph.rs`).

use crate::event::{Guards, ZenoError};
use crate::plant::{with_plant, Plant, PlantModel};
use crate::solver::{FixedRhs, SolverKind, Workspace};
use crate::time::StepSize;

/// Why a run cannot go to the boundary asked for (nothing is done then).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BadTarget {
    /// The target lies before the current boundary.
    Backwards,
    /// The target's time does not fit in [`SimTime`](crate::SimTime).
    TimeOverflow,
}

/// Checks that boundary `k1` can be reached from boundary `k`.
#[inline]
pub(crate) fn check_target(step: StepSize, k: u64, k1: u64) -> Result<(), BadTarget> {
    if k1 < k {
        Err(BadTarget::Backwards)
    } else if step.time_of(k1).is_none() {
        Err(BadTarget::TimeOverflow)
    } else {
        Ok(())
    }
}

/// Start time and length of step `k`, in seconds: the start from integer
/// nanoseconds (`k h` exactly, then rounded once), so that every engine
/// hands a plant the same `t`.
#[inline]
pub(crate) fn interval(step: StepSize, k: u64) -> (f64, f64) {
    ((k * step.as_nanos()) as f64 * 1e-9, step.as_secs_f64())
}

/// One step of a continuous plant's states `x` from `t` over `h` with the
/// input `u` held and no guards: states of up to four take the
/// size-specialised solver path (the same bits as the general one,
/// unrolled). Nothing can fail and nothing is counted, so nothing is
/// returned (a reset count of 0 added per step cost a `System` step 1 % of
/// its instructions).
#[inline]
pub(crate) fn integrate_plant(
    plant: &PlantModel,
    solver: SolverKind,
    ws: &mut Workspace,
    t: f64,
    h: f64,
    x: &mut [f64],
    u: &[f64],
) {
    macro_rules! fixed {
        ($n:literal) => {
            if let Some(x) = x.first_chunk_mut::<$n>() {
                with_plant!(plant, p => integrate_fixed(p, solver, t, h, x, u));
            }
        };
    }
    match x.len() {
        0 => {}
        1 => fixed!(1),
        2 => fixed!(2),
        3 => fixed!(3),
        4 => fixed!(4),
        _ => {
            with_plant!(plant, p => solver.step(ws, t, h, x, |t, x, dx| p.derivative(t, x, u, dx)))
        }
    }
}

/// `n` steps of a continuous plant from step `k` with the input `u` held
/// (a graph's stretch of quiet boundaries): the bits of `n` calls of
/// [`integrate_plant`] with each step's [`interval`], the plant's, the
/// size's and the solver's dispatch made once for the stretch rather than
/// once per step. Stops after the first step that leaves a state
/// non-finite: `Err(j)`, `j` the steps done (the states are those after
/// step `j`).
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn integrate_plant_stretch(
    plant: &PlantModel,
    solver: SolverKind,
    ws: &mut Workspace,
    step: StepSize,
    k: u64,
    n: u64,
    x: &mut [f64],
    u: &[f64],
) -> Result<(), u64> {
    macro_rules! fixed {
        ($n:literal) => {
            if let Some(x) = x.first_chunk_mut::<$n>() {
                return with_plant!(plant, p => stretch_fixed(p, solver, step, k, n, x, u));
            }
        };
    }
    match x.len() {
        0 => return Ok(()),
        1 => fixed!(1),
        2 => fixed!(2),
        3 => fixed!(3),
        4 => fixed!(4),
        _ => {}
    }
    for j in 0..n {
        let (t, h) = interval(step, k + j);
        integrate_plant(plant, solver, ws, t, h, x, u);
        if !all_finite(x) {
            return Err(j + 1);
        }
    }
    Ok(())
}

/// [`integrate_plant_stretch`] for `N` states: the states in a local array
/// for the whole stretch, one solver dispatch.
#[inline]
fn stretch_fixed<P: Plant + ?Sized, const N: usize>(
    p: &P,
    solver: SolverKind,
    step: StepSize,
    k: u64,
    n: u64,
    x: &mut [f64; N],
    u: &[f64],
) -> Result<(), u64> {
    let mut local = *x;
    macro_rules! steps {
        ($solver:expr) => {
            for j in 0..n {
                let (t, h) = interval(step, k + j);
                integrate_fixed(p, $solver, t, h, &mut local, u);
                if !all_finite(&local) {
                    *x = local;
                    return Err(j + 1);
                }
            }
        };
    }
    match solver {
        SolverKind::Euler => steps!(SolverKind::Euler),
        SolverKind::Heun => steps!(SolverKind::Heun),
        SolverKind::Rk4 => steps!(SolverKind::Rk4),
    }
    *x = local;
    Ok(())
}

/// Whether every element of `x` is finite: `v - v` is 0 for a finite `v`
/// and NaN otherwise, so the sum is 0 exactly when all are (one test, no
/// branch per element).
#[allow(clippy::eq_op)]
#[inline]
pub(crate) fn all_finite(x: &[f64]) -> bool {
    x.iter().fold(0.0, |sum, &v| sum + (v - v)) == 0.0
}

/// One step of a continuous plant with guards: events are located inside
/// the step ([`event`](crate::event)); returns the number of resets.
///
/// # Errors
/// [`ZenoError`] when events accumulate and the plant cannot settle.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn integrate_plant_with_guards(
    plant: &PlantModel,
    guards: &mut Guards,
    solver: SolverKind,
    ws: &mut Workspace,
    t: f64,
    h: f64,
    x: &mut [f64],
    u: &[f64],
) -> Result<u64, ZenoError> {
    with_plant!(plant, p => guards.step(p, solver, ws, t, h, x, u))
}

/// One step of a continuous plant with `N` states, monomorphised per plant
/// type and size so the right-hand side is inlined into the stages.
#[inline]
fn integrate_fixed<P: Plant + ?Sized, const N: usize>(
    p: &P,
    solver: SolverKind,
    t: f64,
    h: f64,
    x: &mut [f64; N],
    u: &[f64],
) {
    struct Rhs<'a, P: ?Sized> {
        p: &'a P,
        u: &'a [f64],
    }
    impl<P: Plant + ?Sized, const N: usize> FixedRhs<N> for Rhs<'_, P> {
        #[inline(always)]
        fn eval(&mut self, t: f64, x: &[f64; N], dx: &mut [f64; N]) {
            self.p.derivative(t, x, self.u, dx);
        }
    }
    solver.step_fixed(t, h, x, Rhs { p, u });
}

/// A discrete plant of period `m` steps over step `k`: the input `u` is
/// latched at boundaries `n m`, and the state updated from it at the end of
/// the period, so the new state holds from boundary `(n + 1) m` on.
/// `next` is scratch of the state's size (swapped with `x`).
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn advance_discrete(
    plant: &PlantModel,
    m: u64,
    k: u64,
    step: StepSize,
    x: &mut Vec<f64>,
    latched: &mut [f64],
    next: &mut Vec<f64>,
    u: &[f64],
) {
    if k % m == 0 {
        latched.copy_from_slice(u);
    }
    if (k + 1) % m == 0 {
        let t0 = ((k + 1 - m) * step.as_nanos()) as f64 * 1e-9;
        with_plant!(plant, p => p.update(t0, x, latched, next));
        std::mem::swap(x, next);
    }
}
