//! How far a moving node can drift from the network's picture of it.
//!
//! At a sync the network gets a node's position `p0` and velocity `v0` and
//! moves it in a straight line at that velocity until the next sync. The
//! plant's true position `p(t)` leaves that line as the plant accelerates:
//! `e(t) = p(t) - p0 - v0 t = ∫0^t (v(s) - v0) ds`. ns-3 cannot go back in
//! time, so the master must know *before* it lets the network run a window
//! that the plant cannot leave the line by more than the tolerance in it,
//! whatever the controllers do meanwhile. [`DriftBound`] gives that
//! guarantee from what bounds the plant's acceleration: its model and its
//! actuator's saturation limits.

/// A bound on `|e(t)|` for a plant, from its model and input limits.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum DriftBound {
    /// A vehicle (`p' = v`, `v' = a - c v|v|`, `a' = (u - a) / tau`) whose
    /// input `u` is saturated to `[u_min, u_max]`.
    Vehicle {
        engine_lag: f64,
        drag: f64,
        u_min: f64,
        u_max: f64,
    },
}

impl DriftBound {
    /// The largest `|e(t)|` (metres along the path) within `t` seconds of a
    /// sync at plant state `x = [p, v, a]`.
    ///
    /// The engine acceleration `a` relaxes towards `u`, so it stays in the
    /// hull `[a_lo, a_hi]` of its present value and the input limits, and
    /// `|a| <= A`, `|a(s) - a0| <= D s / tau` with `D = a_hi - a_lo`. Drag only
    /// slows the vehicle, so `|v(s)| <= |v0| + A s` and the drag deceleration
    /// is at most `G = c (|v0| + A t)^2`. Integrating twice gives two bounds,
    /// and the smaller holds:
    /// `(A + G) t^2 / 2` (any acceleration) and
    /// `|a0| t^2 / 2 + D t^3 / (6 tau) + G t^2 / 2` (the lag keeps a cruising
    /// vehicle near its present acceleration).
    pub(crate) fn max_drift(&self, x: &[f64], t: f64) -> f64 {
        match *self {
            DriftBound::Vehicle {
                engine_lag,
                drag,
                u_min,
                u_max,
            } => {
                let (v0, a0) = (x[1], x[2]);
                let (a_lo, a_hi) = (a0.min(u_min), a0.max(u_max));
                let a_max = a_lo.abs().max(a_hi.abs());
                let spread = a_hi - a_lo;
                let speed = v0.abs() + a_max * t;
                let drag_decel = drag * speed * speed;
                let any = 0.5 * (a_max + drag_decel) * t * t;
                let lagged = 0.5 * a0.abs() * t * t
                    + spread * t * t * t / (6.0 * engine_lag)
                    + 0.5 * drag_decel * t * t;
                any.min(lagged)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAR: DriftBound = DriftBound::Vehicle {
        engine_lag: 0.1,
        drag: 0.0,
        u_min: -5.0,
        u_max: 3.0,
    };

    /// The known answer of the vehicle's doc comment: from rest with
    /// `a0 = 0` and a step to `u = U`, `e(t) = U (t^2/2 - tau t + tau^2 (1 -
    /// e^(-t/tau)))`, which the bound must cover for the worst input.
    #[test]
    fn the_bound_covers_the_worst_step_input() {
        for t in [0.01, 0.02, 0.05, 0.1, 0.3, 1.0] {
            let tau: f64 = 0.1;
            let worst = 5.0 * (t * t / 2.0 - tau * t + tau * tau * (1.0 - (-t / tau).exp()));
            let bound = CAR.max_drift(&[0.0, 20.0, 0.0], t);
            assert!(bound >= worst, "t = {t}: bound {bound} < {worst}");
            // Not wildly loose either where the lag matters.
            if t <= 0.05 {
                assert!(bound <= 2.0 * worst, "t = {t}: bound {bound} vs {worst}");
            }
        }
    }

    #[test]
    fn a_cruising_car_may_run_longer_than_an_accelerating_one() {
        let cruising = CAR.max_drift(&[0.0, 20.0, 0.0], 0.08);
        let accelerating = CAR.max_drift(&[0.0, 20.0, 3.0], 0.08);
        assert!(
            cruising < 0.01 && accelerating > 0.01,
            "{cruising} {accelerating}"
        );
        // Without the lag term the bound is the plain (A t^2 / 2).
        assert_eq!(CAR.max_drift(&[0.0, 20.0, 0.0], 10.0), 0.5 * 5.0 * 100.0);
    }

    #[test]
    fn drag_adds_its_deceleration() {
        let dragged = DriftBound::Vehicle {
            engine_lag: 0.1,
            drag: 0.001,
            u_min: -5.0,
            u_max: 3.0,
        };
        let t = 0.1;
        let plain = CAR.max_drift(&[0.0, 30.0, 0.0], t);
        let with_drag = dragged.max_drift(&[0.0, 30.0, 0.0], t);
        let g = 0.001 * (30.0f64 + 5.0 * t).powi(2);
        assert!((with_drag - plain - 0.5 * g * t * t).abs() < 1e-12);
    }
}
