//! Events inside a step: a plant's guard functions, located to within
//! [`LOCATION_TOLERANCE`] by root finding on re-integration, the plant's reset
//! applied at the located instant, the rest of the step integrated after it,
//! and accumulating (Zeno) events brought to an end.
//!
//! # Semantics
//! A plant with [`Plant::guard_count`] `> 0` gives guard values
//! `g_i(t, x, u)` ([`Plant::guards`]). Guard `i` *fires* when its value falls
//! to zero or below while it is *armed*:
//! - a guard is armed whenever its value is positive, and at the start of a
//!   run (so a state that starts on or below the guard fires at once);
//! - the solver integrates the whole (rest of the) step, and when an armed
//!   guard is `<= 0` at its end, finds the crossing with Brent's method on
//!   `g_i(x(t0 + s))`, where `x(t0 + s)` is one solver step of length `s`
//!   from the start `t0` of the (rest of the) step: the same method, so the
//!   located state is as accurate as a step. The crossing is bracketed to
//!   [`LOCATION_TOLERANCE`] and the event takes the bracket's end where the
//!   guard is already `<= 0`;
//! - the earliest crossing of all guards is taken (ties: lowest index); the
//!   plant's reset map ([`Plant::reset`]) changes the state there, and the
//!   solver integrates from that instant to the end of the step, looking for
//!   the next event in the same way, so several events in one step happen in
//!   order;
//! - after it fires, a guard is disarmed until its value is positive again.
//!   If it is not positive at the end of the rest of the step, the solver
//!   probes the rest of the step at halving distances from the reset, down
//!   to [`ZENO_GAP`]; a positive value re-arms it there (the next crossing is
//!   then located after it).
//!
//! A guard that crosses zero and back within one (rest of a) step, without
//! being `<= 0` at its end, is not seen: the located events are those the
//! step resolves.
//!
//! # Zeno
//! When the guard is nowhere positive from its reset down to [`ZENO_GAP`]
//! after it, or more than [`MAX_EVENTS_PER_STEP`] events happen in one step,
//! the events accumulate: a bouncing ball's impacts, whose flights shrink
//! geometrically towards an accumulation time. The solver then asks the plant
//! to [`settle`](Plant::settle) at that instant (the ball comes to rest on the
//! floor); the guard stays disarmed until its value is positive again. A plant
//! that cannot settle stops the run with [`ZenoError`] instead of hanging.
//!
//! Plants without guards never come here: their step is the plain solver
//! step.

use crate::plant::Plant;

/// What event location needs of a model: its right-hand side, guards, reset
/// and settle. Every [`Plant`] is one; graph components with guards are one
/// through an adapter, so both share this one implementation.
pub(crate) trait Hybrid {
    fn derivative(&self, t: f64, x: &[f64], u: &[f64], dx: &mut [f64]);
    fn guards(&self, t: f64, x: &[f64], u: &[f64], g: &mut [f64]);
    fn reset(&self, t: f64, x: &mut [f64], u: &[f64], guard: usize);
    fn settle(&self, t: f64, x: &mut [f64], u: &[f64], guard: usize) -> bool;
}

impl<P: Plant + ?Sized> Hybrid for P {
    #[inline]
    fn derivative(&self, t: f64, x: &[f64], u: &[f64], dx: &mut [f64]) {
        Plant::derivative(self, t, x, u, dx)
    }
    fn guards(&self, t: f64, x: &[f64], u: &[f64], g: &mut [f64]) {
        Plant::guards(self, t, x, u, g)
    }
    fn reset(&self, t: f64, x: &mut [f64], u: &[f64], guard: usize) {
        Plant::reset(self, t, x, u, guard)
    }
    fn settle(&self, t: f64, x: &mut [f64], u: &[f64], guard: usize) -> bool {
        Plant::settle(self, t, x, u, guard)
    }
}
use crate::solver::{SolverKind, Workspace};

/// Width, in seconds, of the bracket an event time is located to (plus a
/// few ulps of the event's offset in its step, 1e-17 s for a 10 ms step).
pub const LOCATION_TOLERANCE: f64 = 1e-14;

/// Events of one guard closer together than this (seconds) accumulate: the
/// plant is asked to settle.
pub const ZENO_GAP: f64 = 1e-11;

/// More events than this in one step accumulate too (a guard that keeps
/// firing without ever falling under [`ZENO_GAP`]), so a step always ends.
pub const MAX_EVENTS_PER_STEP: u32 = 100_000;

/// Bound on Brent iterations; each at least halves the bracket every few
/// steps, so 200 is far more than a `[0, h]` bracket needs to reach the
/// tolerance, and keeps a NaN guard from looping.
const MAX_ITERATIONS: u32 = 200;

/// A guard value that arms the guard (NaN does not).
#[inline]
fn positive(g: f64) -> bool {
    g > 0.0
}

/// A guard value at which an armed guard fires (NaN does not).
#[inline]
fn fired(g: f64) -> bool {
    g <= 0.0
}

/// What happened at an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// The guard fired and the plant's reset map was applied.
    Reset,
    /// The guard's events accumulated (Zeno) and the plant settled.
    Settle,
}

/// A located event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event {
    /// When it happened, seconds.
    pub time: f64,
    /// Which guard.
    pub guard: usize,
    pub kind: EventKind,
}

/// Events accumulated and the plant could not settle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ZenoError {
    pub guard: usize,
    /// Seconds.
    pub time: f64,
}

/// Where a guard stands between two located events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GuardMode {
    /// Fires when its value is `<= 0`.
    Armed,
    /// Just fired; re-armed once positive, else Zeno.
    Fired,
    /// Settled after Zeno; re-armed once positive, never fires before.
    Settled,
}

/// A loop's event state (modes and the last event: in a snapshot) and its
/// scratch buffers, sized when the system is built so stepping does not
/// allocate.
#[derive(Clone, Debug)]
pub(crate) struct Guards {
    pub(crate) modes: Vec<GuardMode>,
    pub(crate) last: Option<Event>,
    /// State at the start of the current (rest of the) step.
    x_start: Vec<f64>,
    /// State at the end of the step from `x_start`.
    x_end: Vec<f64>,
    /// State at a probe inside the step.
    x_probe: Vec<f64>,
    g_start: Vec<f64>,
    g_end: Vec<f64>,
    g_probe: Vec<f64>,
}

impl Guards {
    /// Event state for `guards` guards of a plant with `n` states, all armed.
    pub(crate) fn new(guards: usize, n: usize) -> Self {
        Guards {
            modes: vec![GuardMode::Armed; guards],
            last: None,
            x_start: vec![0.0; n],
            x_end: vec![0.0; n],
            x_probe: vec![0.0; n],
            g_start: vec![0.0; guards],
            g_end: vec![0.0; guards],
            g_probe: vec![0.0; guards],
        }
    }

    /// Integrates `x` over the step `[t, t + h]` with `u` held, locating,
    /// resetting and settling events on the way (module docs). Returns the
    /// number of resets.
    ///
    /// # Errors
    /// [`ZenoError`] when events accumulate and the plant does not settle.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn step<P: Hybrid + ?Sized>(
        &mut self,
        p: &P,
        solver: SolverKind,
        ws: &mut Workspace,
        t: f64,
        h: f64,
        x: &mut [f64],
        u: &[f64],
    ) -> Result<u64, ZenoError> {
        let mut resets = 0;
        let mut events = 0u32;
        // Offset of the start of the rest of the step.
        let mut s0 = 0.0;
        self.x_start.copy_from_slice(x);
        loop {
            let rest = h - s0;
            let t0 = t + s0;
            self.x_end.copy_from_slice(&self.x_start);
            if rest > 0.0 {
                solver.step(ws, t0, rest, &mut self.x_end, |t, x, dx| {
                    p.derivative(t, x, u, dx)
                });
            }
            p.guards(t0, &self.x_start, u, &mut self.g_start);
            p.guards(t + h, &self.x_end, u, &mut self.g_end);
            // The earliest event in the rest of the step: (offset, guard, zeno).
            let mut first: Option<(f64, usize, bool)> = None;
            for i in 0..self.modes.len() {
                if positive(self.g_start[i]) {
                    self.modes[i] = GuardMode::Armed;
                }
                let candidate = match self.modes[i] {
                    GuardMode::Settled => None,
                    GuardMode::Armed if !positive(self.g_start[i]) => Some((s0, false)),
                    _ if !fired(self.g_end[i]) => None,
                    GuardMode::Armed => {
                        Some((self.locate(p, solver, ws, t, s0, h, u, i, s0), false))
                    }
                    GuardMode::Fired => match self.probe_positive(p, solver, ws, t, s0, h, u, i) {
                        Some(lo) => Some((self.locate(p, solver, ws, t, s0, h, u, i, lo), false)),
                        None if rest >= ZENO_GAP => Some((s0, true)),
                        // Too little of the step left to tell: decided in
                        // the next step.
                        None => None,
                    },
                };
                if let Some((s, zeno)) = candidate {
                    if first.is_none_or(|(f, _, _)| s < f) {
                        first = Some((s, i, zeno));
                    }
                }
            }
            let Some((s, i, mut zeno)) = first else {
                x.copy_from_slice(&self.x_end);
                return Ok(resets);
            };
            // The state at the event, from the start of the rest of the step.
            self.state_at(p, solver, ws, t, s0, s, u);
            events += 1;
            zeno |= events > MAX_EVENTS_PER_STEP;
            let te = t + s;
            let kind = if zeno {
                if !p.settle(te, &mut self.x_probe, u, i) {
                    return Err(ZenoError { guard: i, time: te });
                }
                self.modes[i] = GuardMode::Settled;
                EventKind::Settle
            } else {
                p.reset(te, &mut self.x_probe, u, i);
                self.modes[i] = GuardMode::Fired;
                resets += 1;
                EventKind::Reset
            };
            self.last = Some(Event {
                time: te,
                guard: i,
                kind,
            });
            std::mem::swap(&mut self.x_start, &mut self.x_probe);
            s0 = s;
        }
    }

    /// `x_probe` = the state at offset `s` of the step, one solver step of
    /// `s - s0` from `x_start` (itself at offset `s0`).
    #[allow(clippy::too_many_arguments)]
    fn state_at<P: Hybrid + ?Sized>(
        &mut self,
        p: &P,
        solver: SolverKind,
        ws: &mut Workspace,
        t: f64,
        s0: f64,
        s: f64,
        u: &[f64],
    ) {
        self.x_probe.copy_from_slice(&self.x_start);
        if s > s0 {
            solver.step(ws, t + s0, s - s0, &mut self.x_probe, |t, x, dx| {
                p.derivative(t, x, u, dx)
            });
        }
    }

    /// Guard `i` at offset `s` of the step.
    #[allow(clippy::too_many_arguments)]
    fn guard_at<P: Hybrid + ?Sized>(
        &mut self,
        p: &P,
        solver: SolverKind,
        ws: &mut Workspace,
        t: f64,
        s0: f64,
        s: f64,
        u: &[f64],
        i: usize,
    ) -> f64 {
        self.state_at(p, solver, ws, t, s0, s, u);
        p.guards(t + s, &self.x_probe, u, &mut self.g_probe);
        self.g_probe[i]
    }

    /// After guard `i` fired at `s0` and is `<= 0` at the end of the step: an
    /// offset where it is positive again, probing at `s0 + rest / 2^j` down
    /// to [`ZENO_GAP`] after `s0`. A flight that leaves the guard and comes
    /// back (positive on `(s0, s0 + r)`) is found whenever `r >= 2 ZENO_GAP`.
    #[allow(clippy::too_many_arguments)]
    fn probe_positive<P: Hybrid + ?Sized>(
        &mut self,
        p: &P,
        solver: SolverKind,
        ws: &mut Workspace,
        t: f64,
        s0: f64,
        h: f64,
        u: &[f64],
        i: usize,
    ) -> Option<f64> {
        let mut d = 0.5 * (h - s0);
        while d >= ZENO_GAP {
            if positive(self.guard_at(p, solver, ws, t, s0, s0 + d, u, i)) {
                return Some(s0 + d);
            }
            d *= 0.5;
        }
        None
    }

    /// Brent's method (zeroin) for guard `i` on `[lo, h]`, positive at `lo`
    /// and `<= 0` at `h`: the end of the final bracket, at most
    /// [`LOCATION_TOLERANCE`] wide, where the guard is `<= 0`.
    #[allow(clippy::too_many_arguments)]
    fn locate<P: Hybrid + ?Sized>(
        &mut self,
        p: &P,
        solver: SolverKind,
        ws: &mut Workspace,
        t: f64,
        s0: f64,
        h: f64,
        u: &[f64],
        i: usize,
        lo: f64,
    ) -> f64 {
        let mut f = |s: f64, this: &mut Self| this.guard_at(p, solver, ws, t, s0, s, u, i);
        let (mut a, mut b) = (lo, h);
        let (mut fa, mut fb) = (f(a, self), self.g_end[i]);
        if !positive(fa) {
            // The probe said positive; a guard that is not a function of the
            // state alone may disagree. Fire where it is already <= 0.
            return a;
        }
        let (mut c, mut fc) = (a, fa);
        let (mut d, mut e) = (b - a, b - a);
        for _ in 0..MAX_ITERATIONS {
            if positive(fb) == positive(fc) {
                c = a;
                fc = fa;
                d = b - a;
                e = d;
            }
            if fc.abs() < fb.abs() {
                a = b;
                b = c;
                c = a;
                fa = fb;
                fb = fc;
                fc = fa;
            }
            let tol = 2.0 * f64::EPSILON * b.abs() + 0.5 * LOCATION_TOLERANCE;
            let m = 0.5 * (c - b);
            if m.abs() <= tol || fb == 0.0 {
                break;
            }
            if e.abs() >= tol && fa.abs() > fb.abs() {
                // Interpolate: secant or inverse quadratic.
                let sr = fb / fa;
                let (mut pp, mut q);
                if a == c {
                    pp = 2.0 * m * sr;
                    q = 1.0 - sr;
                } else {
                    let qa = fa / fc;
                    let r = fb / fc;
                    pp = sr * (2.0 * m * qa * (qa - r) - (b - a) * (r - 1.0));
                    q = (qa - 1.0) * (r - 1.0) * (sr - 1.0);
                }
                if pp > 0.0 {
                    q = -q;
                } else {
                    pp = -pp;
                }
                if 2.0 * pp < (3.0 * m * q - (tol * q).abs()).min((e * q).abs()) {
                    e = d;
                    d = pp / q;
                } else {
                    d = m;
                    e = m;
                }
            } else {
                d = m;
                e = m;
            }
            a = b;
            fa = fb;
            b += if d.abs() > tol { d } else { tol.copysign(m) };
            fb = f(b, self);
        }
        // The root lies between b and c; take the one already past it.
        if fired(fb) || !fired(fc) {
            b
        } else {
            c
        }
    }
}
