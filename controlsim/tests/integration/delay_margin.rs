//! Delay margin of a DC servo under PD control, through the closed-loop
//! oracle with a pure uplink delay.
//!
//! Model: the default servo `theta(s)/V(s) = (Kt/R) / (s (J s + b + Kt Ke/R))`
//! (about `1 / (s (s + 10))`) with `C(s) = Kp + Kd s` (Kp = 100, Kd = 5, no
//! derivative filter), sampled every 1 ms. Loop gain `L(jw) = C(jw) G(jw)`;
//! crossover `wc` where `|L| = 1` (found by bisection), phase margin
//! `PM = pi + arg L(jwc)`, delay margin `DM = PM / wc` (about 153 ms). A pure
//! delay below DM keeps the loop stable, above it the loop oscillates with
//! growing amplitude. Sampling and rounding the delay to the 1 ms grid add
//! about a millisecond of lag, small against the 15 ms between DM and the
//! delays tested, 0.9 DM and 1.1 DM.
//!
//! Stability is judged by the trend, not by an absolute level: the ratio of
//! the late peak to the early one (ten seconds apart) is about 0.02 at
//! 0.9 DM and about 30 at 1.1 DM. The test asks for below 0.1 and above 10,
//! which a loop that is neither decaying nor growing (ratio near 1) fails on
//! both sides.

use controlsim::{ClosedLoop, Delays, Response, SimTime, System};
use nalgebra::Complex;

use crate::common::build;

const KP: f64 = 100.0;
const KD: f64 = 5.0;

fn loop_gain(w: f64) -> Complex<f64> {
    let (j, b, kt, ke, r) = (0.01, 0.1, 0.01, 0.01, 1.0);
    let s = Complex::new(0.0, w);
    let g = Complex::new(kt / r, 0.0) / (s * (s * j + (b + kt * ke / r)));
    (Complex::new(KP, 0.0) + s * KD) * g
}

fn delay_margin() -> f64 {
    let (mut lo, mut hi) = (0.1, 1000.0);
    for _ in 0..200 {
        let mid = f64::sqrt(lo * hi);
        if loop_gain(mid).norm() > 1.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let wc = 0.5 * (lo + hi);
    let pm = std::f64::consts::PI + loop_gain(wc).arg();
    assert!(pm > 0.0, "the undelayed loop must be stable");
    pm / wc
}

/// Peak |theta| in [2 s, 5 s] and in [12 s, 15 s] with a given uplink delay.
fn peaks(delay: SimTime) -> (f64, f64) {
    let sys = build(
        &format!(
            r#"
step = "1ms"
[[loops]]
name = "servo"
[loops.plant]
kind = "dc_servo"
x0 = [0.1, 0.0]
[loops.sensor]
period = "1ms"
[loops.controller]
kind = "pid"
kp = {KP:?}
kd = {KD:?}
filter_time_constant = 0.0
trigger = "event"
"#
        ),
        0,
    );
    let mut cl = ClosedLoop::new(
        sys,
        Delays {
            uplink: delay,
            downlink: SimTime::ZERO,
        },
        Response::Direct,
    );
    let (mut early, mut late) = (0.0f64, 0.0f64);
    let mut watch = |s: &System| {
        let t = s.time().as_secs_f64();
        let theta = s.loops()[0].state()[0].abs();
        if (2.0..5.0).contains(&t) {
            early = early.max(theta);
        }
        if (12.0..15.0).contains(&t) {
            late = late.max(theta);
        }
    };
    cl.run_to(15_000, &mut watch).unwrap();
    (early, late)
}

#[test]
fn stable_below_the_analytic_delay_margin_unstable_above() {
    let dm = delay_margin();
    assert!(
        (0.1..0.2).contains(&dm),
        "delay margin {dm} s is not the expected ~0.15 s"
    );
    let ms = |s: f64| SimTime::from_millis(s.round() as u64);

    let (early, late) = peaks(ms(0.9 * dm * 1e3));
    assert!(
        early > 1e-3,
        "0.9 DM: peak {early}: the loop should still ring"
    );
    assert!(
        late / early < 0.1,
        "0.9 DM: peak {early} then {late} (ratio {}): not decaying",
        late / early
    );

    let (early, late) = peaks(ms(1.1 * dm * 1e3));
    assert!(early > 1e-3, "1.1 DM: peak {early}: no oscillation");
    assert!(
        late / early > 10.0,
        "1.1 DM: peak {early} then {late} (ratio {}): not growing",
        late / early
    );
}
