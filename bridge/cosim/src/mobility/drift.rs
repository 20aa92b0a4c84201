//! How far a moving node can drift from the network's picture of it.
//!
//! At a sync the network gets a node's position `p0` and velocity `v0` and
//! moves it in a straight line at that velocity until the next sync. The
//! plant's true position `p(t)` leaves that line as the plant accelerates:
//! `e(t) = p(t) - p0 - v0 t = ∫0^t (v(s) - v0) ds`. ns-3 cannot go back in
//! time, so the master must know *before* it lets the network run a window
//! that the plant cannot leave the line by more than the tolerance in it,
//! whatever the controllers do meanwhile. [`DriftBound`] gives that
//! guarantee from what bounds the plant's speed and acceleration: its model
//! and its actuator's saturation limits ([`Model`]), or bounds the scenario
//! declares (`mobility.max_speed`, `mobility.max_acceleration`).
//!
//! Every model bound gives, for a window of `t` seconds from the state at
//! the sync, an [`Envelope`]: the largest speed `W` and, where the velocity
//! cannot jump, the largest acceleration `A` in the window. Then
//! `|e(t)| <= min((W + |v0|) t, A t^2 / 2)` when the network extrapolates
//! with the velocity `v0`, and `|e(t)| <= min(W t, |v(0)| t + A t^2 / 2)`
//! when the node rests between syncs (no `velocity` state).

/// The sups of `|v|` and `|v'|` over a window, where known.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Envelope {
    pub(crate) speed: Option<f64>,
    /// `None` also when the velocity may jump (an impact).
    pub(crate) acceleration: Option<f64>,
}

/// What the model and the actuator limits say about a plant's motion; the
/// position is state 0 and the velocity state 1 (`p' = v`) in every kind.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Model {
    /// A vehicle (`p' = v`, `v' = a - c v|v|`, `a' = (u - a) / tau`) whose
    /// input `u` is saturated to `[u_min, u_max]`.
    Vehicle {
        engine_lag: f64,
        drag: f64,
        u_min: f64,
        u_max: f64,
    },
    /// A DC servo, `omega' = gain u - damping omega - coulomb tanh(omega / ws)`
    /// with `|u| <= u_abs` (`gain = Kt / (R J)`, `damping = (b + Kt Ke / R) / J`,
    /// `coulomb = Tc / J >= 0`).
    DcServo {
        gain: f64,
        damping: f64,
        coulomb: f64,
        u_abs: f64,
    },
    /// A mass-spring-damper without external force, `m v' = u - c v - k x`,
    /// `|u| <= u_abs`.
    MassSpringDamper {
        mass: f64,
        damping: f64,
        stiffness: f64,
        u_abs: f64,
    },
    /// A bouncing ball whose flight acceleration `-g + F/m` stays in
    /// `[a_lo, a_hi]`; an impact flips the velocity (and never speeds it up).
    BouncingBall { a_lo: f64, a_hi: f64 },
}

impl Model {
    /// The speed and acceleration envelope within `t` seconds of state `x`.
    pub(crate) fn envelope(&self, x: &[f64], t: f64) -> Envelope {
        match *self {
            Model::Vehicle {
                drag, u_min, u_max, ..
            } => {
                let (v0, a0) = (x[1].abs(), x[2]);
                let a_max = a0.min(u_min).abs().max(a0.max(u_max).abs());
                // Drag only slows the vehicle down.
                let speed = v0 + a_max * t;
                Envelope {
                    speed: Some(speed),
                    acceleration: Some(a_max + drag * speed * speed),
                }
            }
            Model::DcServo {
                gain,
                damping,
                coulomb,
                u_abs,
            } => {
                let w0 = x[1].abs();
                let push = gain.abs() * u_abs;
                // d|w|/dt <= |damping| |w| + push + coulomb (Grönwall) ...
                let mut speed = (w0 + (push + coulomb) * t) * (damping.abs() * t).exp();
                if damping > 0.0 {
                    // ... and with damping, which Coulomb friction only helps,
                    // d|w|/dt <= push - damping |w|: |w| stays below the larger
                    // of its start and its terminal speed.
                    speed = speed.min(w0.max(push / damping));
                }
                Envelope {
                    speed: Some(speed),
                    acceleration: Some(damping.abs() * speed + push + coulomb),
                }
            }
            Model::MassSpringDamper {
                mass,
                damping,
                stiffness,
                u_abs,
            } => {
                // E = m v²/2 + k x²/2 grows at most as fast as the input's
                // power, dE/dt = v (u - c v) <= u_abs |v| <= u_abs sqrt(2E/m),
                // so sqrt(E) grows at most by u_abs / sqrt(2m) per second.
                let energy = 0.5 * mass * x[1] * x[1] + 0.5 * stiffness * x[0] * x[0];
                let root = energy.sqrt() + u_abs * t / (2.0 * mass).sqrt();
                let speed = root * (2.0 / mass).sqrt();
                // k |x| <= k sqrt(2E/k) = sqrt(2k E).
                let spring = root * (2.0 * stiffness).sqrt();
                Envelope {
                    speed: Some(speed),
                    acceleration: Some((u_abs + damping * speed + spring) / mass),
                }
            }
            Model::BouncingBall { a_lo, a_hi } => {
                let (h0, v0) = (x[0], x[1].abs());
                let a_max = a_lo.abs().max(a_hi.abs());
                // Impacts only slow the ball (restitution <= 1).
                let speed = v0 + a_max * t;
                // The floor cannot be reached if even the fastest fall stays above it.
                let impact = h0 - v0 * t - 0.5 * a_max * t * t <= 0.0;
                Envelope {
                    speed: Some(speed),
                    acceleration: (!impact).then_some(a_max),
                }
            }
        }
    }

    /// The vehicle's own, tighter bound when the network extrapolates with
    /// its speed (see [`DriftBound::max_drift`]); `None` for other kinds.
    fn lagged_drift(&self, x: &[f64], t: f64) -> Option<f64> {
        let Model::Vehicle {
            engine_lag,
            drag,
            u_min,
            u_max,
        } = *self
        else {
            return None;
        };
        let (v0, a0) = (x[1], x[2]);
        let (a_lo, a_hi) = (a0.min(u_min), a0.max(u_max));
        let a_max = a_lo.abs().max(a_hi.abs());
        let spread = a_hi - a_lo;
        let speed = v0.abs() + a_max * t;
        let drag_decel = drag * speed * speed;
        Some(
            0.5 * a0.abs() * t * t
                + spread * t * t * t / (6.0 * engine_lag)
                + 0.5 * drag_decel * t * t,
        )
    }
}

/// A bound on `|e(t)|` for one moving node: the model's, the declared
/// bounds, or both (then the smaller holds).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DriftBound {
    pub(crate) model: Option<Model>,
    pub(crate) max_speed: Option<f64>,
    pub(crate) max_acceleration: Option<f64>,
    /// Whether the network extrapolates with a velocity (a `velocity` state
    /// or the plant's own); otherwise the node rests between syncs.
    pub(crate) extrapolated: bool,
}

impl DriftBound {
    /// The bound, or `None` when nothing bounds the drift.
    pub(crate) fn new(
        model: Option<Model>,
        max_speed: Option<f64>,
        max_acceleration: Option<f64>,
        extrapolated: bool,
    ) -> Option<Self> {
        let bounded =
            model.is_some() || max_speed.is_some() || (extrapolated && max_acceleration.is_some());
        bounded.then_some(DriftBound {
            model,
            max_speed,
            max_acceleration,
            extrapolated,
        })
    }

    /// The largest `|e(t)|` (metres along the path) within `t` seconds of a
    /// sync at plant state `x`, where the network was given speed `v0`
    /// (0 when it is not extrapolated).
    ///
    /// For a vehicle with velocity extrapolation there is a tighter bound
    /// too: the engine acceleration `a` relaxes towards `u`, so it stays in
    /// the hull `[a_lo, a_hi]` of its present value and the input limits,
    /// and `|a(s) - a0| <= D s / tau` with `D = a_hi - a_lo`; drag only slows
    /// the vehicle, so its deceleration is at most `G = c (|v0| + A t)^2`.
    /// Integrating twice: `|a0| t^2 / 2 + D t^3 / (6 tau) + G t^2 / 2` (the
    /// lag keeps a cruising vehicle near its present acceleration).
    pub(crate) fn max_drift(&self, x: &[f64], v0: f64, t: f64) -> f64 {
        let envelope = self.model.as_ref().map(|m| m.envelope(x, t));
        let least = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let speed = least(envelope.and_then(|e| e.speed), self.max_speed);
        let mut drift = speed.map(|w| {
            if self.extrapolated {
                (w + v0.abs()) * t
            } else {
                w * t
            }
        });
        if !self.extrapolated {
            // The node rests, the plant starts at its velocity state x[1]
            // (every model's): e <= |x1| t + A t^2 / 2 while v is continuous.
            let from_rest = envelope
                .and_then(|e| e.acceleration)
                .map(|a| x[1].abs() * t + 0.5 * a * t * t);
            drift = least(drift, from_rest);
        } else {
            let acceleration = least(envelope.and_then(|e| e.acceleration), self.max_acceleration);
            drift = least(drift, acceleration.map(|a| 0.5 * a * t * t));
            drift = least(
                drift,
                self.model.as_ref().and_then(|m| m.lagged_drift(x, t)),
            );
        }
        drift.expect("DriftBound::new admits only bounded drifts")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAR_MODEL: Model = Model::Vehicle {
        engine_lag: 0.1,
        drag: 0.0,
        u_min: -5.0,
        u_max: 3.0,
    };

    fn with_velocity(model: Model) -> DriftBound {
        DriftBound::new(Some(model), None, None, true).unwrap()
    }

    /// The drift at `t` of a bound extrapolated with the state's own speed.
    fn drift(bound: &DriftBound, x: &[f64], t: f64) -> f64 {
        bound.max_drift(x, if bound.extrapolated { x[1] } else { 0.0 }, t)
    }

    /// The known answer of the vehicle's doc comment: from rest with
    /// `a0 = 0` and a step to `u = U`, `e(t) = U (t^2/2 - tau t + tau^2 (1 -
    /// e^(-t/tau)))`, which the bound must cover for the worst input.
    #[test]
    fn the_bound_covers_the_worst_step_input() {
        let car = with_velocity(CAR_MODEL);
        for t in [0.01, 0.02, 0.05, 0.1, 0.3, 1.0] {
            let tau: f64 = 0.1;
            let worst = 5.0 * (t * t / 2.0 - tau * t + tau * tau * (1.0 - (-t / tau).exp()));
            let bound = drift(&car, &[0.0, 20.0, 0.0], t);
            assert!(bound >= worst, "t = {t}: bound {bound} < {worst}");
            // Not wildly loose either where the lag matters.
            if t <= 0.05 {
                assert!(bound <= 2.0 * worst, "t = {t}: bound {bound} vs {worst}");
            }
        }
    }

    #[test]
    fn a_cruising_car_may_run_longer_than_an_accelerating_one() {
        let car = with_velocity(CAR_MODEL);
        let cruising = drift(&car, &[0.0, 20.0, 0.0], 0.08);
        let accelerating = drift(&car, &[0.0, 20.0, 3.0], 0.08);
        assert!(
            cruising < 0.01 && accelerating > 0.01,
            "{cruising} {accelerating}"
        );
        // Without the lag term the bound is the plain (A t^2 / 2).
        assert_eq!(drift(&car, &[0.0, 20.0, 0.0], 10.0), 0.5 * 5.0 * 100.0);
    }

    #[test]
    fn drag_adds_its_deceleration() {
        let dragged = with_velocity(Model::Vehicle {
            engine_lag: 0.1,
            drag: 0.001,
            u_min: -5.0,
            u_max: 3.0,
        });
        let t = 0.1;
        let plain = drift(&with_velocity(CAR_MODEL), &[0.0, 30.0, 0.0], t);
        let with_drag = drift(&dragged, &[0.0, 30.0, 0.0], t);
        let g = 0.001 * (30.0f64 + 5.0 * t).powi(2);
        assert!((with_drag - plain - 0.5 * g * t * t).abs() < 1e-12);
    }

    /// A DC servo without Coulomb friction from rest, driven with the full
    /// voltage U: `omega(t) = (g U / a)(1 - e^(-a t))`, `theta(t) = (g U / a)
    /// (t - (1 - e^(-a t)) / a)`; the bound covers it and is not loose.
    #[test]
    fn the_servo_bound_covers_a_full_voltage_step() {
        let (gain, damping, u) = (1.0, 10.01, 12.0);
        let servo = Model::DcServo {
            gain,
            damping,
            coulomb: 0.0,
            u_abs: u,
        };
        for extrapolated in [true, false] {
            let bound = DriftBound::new(Some(servo.clone()), None, None, extrapolated).unwrap();
            for t in [0.001, 0.01, 0.05, 0.2, 1.0] {
                let e = (-damping * t).exp();
                let theta = gain * u / damping * (t - (1.0 - e) / damping);
                let b = drift(&bound, &[0.0, 0.0], t);
                assert!(b >= theta, "t = {t}: {b} < {theta}");
                if t <= 0.01 {
                    assert!(b <= 1.5 * theta, "t = {t}: {b} vs {theta}");
                }
            }
        }
        // Turning at full speed it cannot go faster: resting between syncs,
        // the node drifts at most that speed times the window.
        let rest = DriftBound::new(Some(servo), None, None, false).unwrap();
        let top = gain * u / damping;
        assert!((drift(&rest, &[0.0, top], 0.1) - top * 0.1).abs() < 1e-12);
    }

    /// An undamped mass on a spring from rest, pushed with the full force
    /// U: `x(t) = (U / k)(1 - cos(w t))`, `w = sqrt(k / m)`.
    #[test]
    fn the_mass_spring_damper_bound_covers_a_full_force_step() {
        let (mass, stiffness, u) = (2.0, 8.0, 3.0);
        let cart = DriftBound::new(
            Some(Model::MassSpringDamper {
                mass,
                damping: 0.0,
                stiffness,
                u_abs: u,
            }),
            None,
            None,
            true,
        )
        .unwrap();
        let w = (stiffness / mass).sqrt();
        for t in [0.001, 0.01, 0.1, 0.5, 2.0] {
            let x = u / stiffness * (1.0 - (w * t).cos());
            let b = drift(&cart, &[0.0, 0.0], t);
            assert!(b >= x, "t = {t}: {b} < {x}");
            if t <= 0.01 {
                // x ≈ U t² / (2 m): the bound is the same to first order.
                assert!(b <= 1.1 * x, "t = {t}: {b} vs {x}");
            }
        }
        // Energy: swinging through x = 0 at 1 m/s with k = 8, m = 2 it can
        // never exceed 1 + U t / m m/s; the bound uses that, not the start.
        let e = cart.model.as_ref().unwrap().envelope(&[0.0, 1.0], 0.5);
        assert!((e.speed.unwrap() - (1.0 + 3.0 * 0.5 / 2.0)).abs() < 1e-12);
    }

    /// A dropped ball falls `g t² / 2` below the network's line exactly: the
    /// bound is tight in flight, and once the floor is within reach it
    /// covers the rebound's velocity jump too.
    #[test]
    fn the_ball_bound_is_exact_in_free_fall_and_covers_impacts() {
        let g = 9.81;
        let ball = with_velocity(Model::BouncingBall { a_lo: -g, a_hi: -g });
        let t = 0.1;
        assert!((drift(&ball, &[1.0, 0.0], t) - 0.5 * g * t * t).abs() < 1e-12);
        // 1 cm above the floor falling at 2 m/s: it bounces within the window,
        // leaving at up to the impact speed: e <= (2 |v0| + g t) t.
        let near = drift(&ball, &[0.01, -2.0], t);
        assert!((near - (4.0 + g * t) * t).abs() < 1e-12, "{near}");
        // The true drift of a perfectly elastic bounce: falls 0.2 ms, then
        // rises at ~2 m/s while the network's line keeps falling at 2 m/s.
        let impact = 0.01 / 2.0;
        let truth = 2.0 * 2.0 * (t - impact);
        assert!(near >= truth, "{near} < {truth}");
    }

    #[test]
    fn declared_bounds_bound_what_they_can() {
        // A declared speed: the node resting between syncs drifts at most
        // that speed times the window; extrapolated, plus its own speed.
        let speed = DriftBound::new(None, Some(2.0), None, false).unwrap();
        assert_eq!(speed.max_drift(&[], 0.0, 0.5), 1.0);
        let speed = DriftBound::new(None, Some(2.0), None, true).unwrap();
        assert_eq!(speed.max_drift(&[], -1.0, 0.5), 1.5);
        // A declared acceleration, extrapolated: A t² / 2.
        let accel = DriftBound::new(None, None, Some(4.0), true).unwrap();
        assert_eq!(accel.max_drift(&[], 7.0, 0.5), 0.5);
        // ... but nothing when the node rests between syncs: its drift grows
        // with a speed nobody bounds.
        assert_eq!(DriftBound::new(None, None, Some(4.0), false), None);
        assert_eq!(DriftBound::new(None, None, None, true), None);
        // With a model too, the smaller holds.
        let both = DriftBound::new(Some(CAR_MODEL), None, Some(0.1), true).unwrap();
        assert_eq!(
            both.max_drift(&[0.0, 20.0, 3.0], 20.0, 1.0),
            0.05,
            "declared 0.1 m/s² beats the car's 5"
        );
    }
}
