//! Library plants against analytic answers.

use controlsim::{PlantModel, Silent};

use crate::common::build;

fn open_loop(plant: &str, step: &str, actuator: f64) -> controlsim::System {
    build(
        &format!(
            r#"
step = "{step}"
[[loops]]
name = "p"
[loops.plant]
{plant}
[loops.sensor]
period = "{step}"
[loops.actuator]
initial = {actuator:?}
[loops.controller]
kind = "open_loop"
"#
        ),
        0,
    )
}

/// Forced damped oscillator `m x'' + c x' + k x = F0 sin(w t)` with m = 1,
/// c = 0.4, k = 4 (wn = 2, zeta = 0.1), F0 = 1.5, w = pi (0.5 Hz),
/// x(0) = 0.5, v(0) = -0.3.
///
/// Steady state: `X sin(w t - phi)`, `X = F0 / sqrt((k - m w^2)^2 + (c w)^2)`,
/// `phi = atan2(c w, k - m w^2)`. Transient:
/// `e^(-zeta wn t) (A cos(wd t) + B sin(wd t))`, `wd = wn sqrt(1 - zeta^2)`,
/// `A = x0 + X sin(phi)`, `B = (v0 - X w cos(phi) + zeta wn A) / wd`.
#[test]
fn forced_damped_oscillator_matches_transient_plus_steady_state() {
    let mut sys = open_loop(
        r#"kind = "mass_spring_damper"
mass = 1.0
damping = 0.4
stiffness = 4.0
x0 = [0.5, -0.3]
external_force = { kind = "sine", amplitude = 1.5, frequency = 0.5 }"#,
        "1ms",
        0.0,
    );
    let (m, c, k, f0, w) = (1.0f64, 0.4f64, 4.0f64, 1.5f64, std::f64::consts::PI);
    let (x0, v0) = (0.5, -0.3);
    let big_x = f0 / ((k - m * w * w).powi(2) + (c * w).powi(2)).sqrt();
    let phi = (c * w).atan2(k - m * w * w);
    let wn = (k / m).sqrt();
    let zeta = c / (2.0 * (k * m).sqrt());
    let wd = wn * (1.0 - zeta * zeta).sqrt();
    let a = x0 + big_x * phi.sin();
    let b = (v0 - big_x * w * phi.cos() + zeta * wn * a) / wd;
    let exact = |t: f64| {
        (-zeta * wn * t).exp() * (a * (wd * t).cos() + b * (wd * t).sin())
            + big_x * (w * t - phi).sin()
    };
    let mut worst: f64 = 0.0;
    for step in (0..=15_000).step_by(25) {
        sys.advance_to(step, &mut Silent).unwrap();
        let t = step as f64 * 1e-3;
        worst = worst.max((sys.loops()[0].state()[0] - exact(t)).abs());
    }
    assert!(worst <= 1e-9, "max error {worst:e}");
}

/// Ball dropped from rest at h0 = 10 m, g = 9.81, e = 0.8, h = 1 ms.
/// First impact at `t1 = sqrt(2 h0 / g)` with speed `v1 = sqrt(2 g h0)`;
/// rebound apex `e^2 h0`; second impact `2 e v1 / g` after the first.
/// Impacts are detected at step boundaries, so the detected times lie within
/// one step after the exact ones, and the apex within what one step of
/// flight changes (`e v1 h`).
#[test]
fn bouncing_ball_impact_time_and_rebound_height() {
    let step = 1e-3;
    let (h0, g, e) = (10.0f64, 9.81f64, 0.8f64);
    let mut sys = open_loop(
        "kind = \"bouncing_ball\"\ngravity = 9.81\nrestitution = 0.8\nx0 = [10.0, 0.0]",
        "1ms",
        0.0,
    );
    let t1 = (2.0 * h0 / g).sqrt();
    let v1 = (2.0 * g * h0).sqrt();
    let mut detected = Vec::new();
    let mut apex: f64 = 0.0;
    while detected.len() < 2 {
        let k = sys.k();
        sys.advance_to(k + 1, &mut Silent).unwrap();
        let lp = &sys.loops()[0];
        if lp.resets() as usize > detected.len() {
            detected.push(sys.k() as f64 * step);
        }
        if detected.len() == 1 {
            apex = apex.max(lp.state()[0]);
        }
        assert!(sys.k() < 10_000, "no second impact");
    }
    assert!(
        detected[0] >= t1 && detected[0] < t1 + step,
        "first impact {} vs {t1}",
        detected[0]
    );
    assert!(
        (apex - e * e * h0).abs() <= e * v1 * step,
        "apex {apex} vs {}",
        e * e * h0
    );
    let flight = 2.0 * e * v1 / g;
    let gap = detected[1] - detected[0];
    assert!(
        gap >= flight - step && gap < flight + step,
        "second flight {gap} vs {flight}"
    );
}

fn pendulum_energy(sys: &controlsim::System) -> f64 {
    match sys.loops()[0].plant() {
        PlantModel::InvertedPendulum(p) => p.energy(sys.loops()[0].state()),
        other => panic!("not a pendulum: {other:?}"),
    }
}

/// Without friction or force the full nonlinear cart-pendulum conserves
/// `E = 1/2 (M+m) v^2 + m l v w cos(theta) + 1/2 (I + m l^2) w^2 + m g l cos(theta)`.
/// Released 0.5 rad from upright it falls through the bottom and back; RK4
/// with h = 1 ms keeps E within 1e-8 J over 3 s.
#[test]
fn pendulum_conserves_energy_without_friction() {
    let mut sys = open_loop(
        "kind = \"inverted_pendulum\"\ncart_friction = 0.0\nx0 = [0.0, 0.0, 0.5, 0.0]",
        "1ms",
        0.0,
    );
    let e0 = pendulum_energy(&sys);
    let mut worst: f64 = 0.0;
    let mut min_cos: f64 = 1.0;
    for k in (0..=3000).step_by(10) {
        sys.advance_to(k, &mut Silent).unwrap();
        worst = worst.max((pendulum_energy(&sys) - e0).abs());
        min_cos = min_cos.min(sys.loops()[0].state()[2].cos());
    }
    assert!(
        min_cos < -0.9,
        "the pendulum should swing through the bottom"
    );
    assert!(worst <= 1e-8, "energy drift {worst:e}");
}

/// Small oscillations about the hanging position with a free cart:
/// `w^2 = m g l (M + m) / ((M + m)(I + m l^2) - m^2 l^2)`. The period
/// measured from zero crossings of `theta - pi` matches to 1e-4 (amplitude
/// 0.01 rad, where the nonlinear correction is about 6e-6).
#[test]
fn pendulum_small_oscillation_frequency() {
    let mut sys = open_loop(
        "kind = \"inverted_pendulum\"\ncart_friction = 0.0\nx0 = [0.0, 0.0, 3.131592653589793, 0.0]",
        "1ms",
        0.0,
    );
    let (cm, pm, l, i, g) = (0.5f64, 0.2f64, 0.3f64, 0.006f64, 9.81f64);
    let w = (pm * g * l * (cm + pm) / ((cm + pm) * (i + pm * l * l) - pm * pm * l * l)).sqrt();
    let mut crossings = Vec::new();
    let mut prev = sys.loops()[0].state()[2] - std::f64::consts::PI;
    for k in 1..=8000u64 {
        sys.advance_to(k, &mut Silent).unwrap();
        let phi = sys.loops()[0].state()[2] - std::f64::consts::PI;
        if prev < 0.0 && phi >= 0.0 {
            let frac = -prev / (phi - prev);
            crossings.push((k as f64 - 1.0 + frac) * 1e-3);
        }
        prev = phi;
    }
    assert!(crossings.len() >= 4, "{crossings:?}");
    let period = (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64;
    let expected = 2.0 * std::f64::consts::PI / w;
    assert!(
        ((period - expected) / expected).abs() < 1e-4,
        "period {period} vs {expected}"
    );
}

/// Vehicle with engine lag tau = 0.1 s, no drag, from rest at p = 0, step
/// command u = 2: `a = U (1 - e^(-t/tau))`, `v = U (t - tau (1 - e^(-t/tau)))`,
/// `p = U (t^2/2 - tau t + tau^2 (1 - e^(-t/tau)))`.
#[test]
fn vehicle_engine_lag_step_response() {
    let mut sys = open_loop("kind = \"vehicle\"\nengine_lag = 0.1", "1ms", 2.0);
    let (u, tau) = (2.0f64, 0.1f64);
    let mut worst: f64 = 0.0;
    for k in (0..=3000).step_by(20) {
        sys.advance_to(k, &mut Silent).unwrap();
        let t = k as f64 * 1e-3;
        let ex = 1.0 - (-t / tau).exp();
        let exact = [
            u * (t * t / 2.0 - tau * t + tau * tau * ex),
            u * (t - tau * ex),
            u * ex,
        ];
        worst = worst.max(crate::common::max_err(sys.loops()[0].state(), &exact));
    }
    assert!(worst <= 1e-9, "max error {worst:e}");
    let kin = sys.loops()[0].kinematics().unwrap();
    assert_eq!(kin.velocity, sys.loops()[0].state()[1]);
}

/// DC servo without Coulomb friction, from rest, V = 5: with
/// `beta = b + Kt Ke / R` and `tau = J / beta`, `w_ss = Kt V / (R beta)`:
/// `omega = w_ss (1 - e^(-t/tau))`, `theta = w_ss (t - tau (1 - e^(-t/tau)))`.
#[test]
fn dc_servo_linear_step_response() {
    let mut sys = open_loop(
        "kind = \"dc_servo\"\noutputs = [\"theta\", \"omega\"]",
        "1ms",
        5.0,
    );
    let (j, b, kt, ke, r, v) = (0.01f64, 0.1f64, 0.01f64, 0.01f64, 1.0f64, 5.0f64);
    let beta = b + kt * ke / r;
    let tau = j / beta;
    let w_ss = kt * v / (r * beta);
    let mut worst: f64 = 0.0;
    let mut y = [0.0; 2];
    for k in (0..=2000).step_by(10) {
        sys.advance_to(k, &mut Silent).unwrap();
        let t = k as f64 * 1e-3;
        let ex = 1.0 - (-t / tau).exp();
        sys.outputs_into(0, &mut y).unwrap();
        worst = worst.max(crate::common::max_err(
            &y,
            &[w_ss * (t - tau * ex), w_ss * ex],
        ));
    }
    assert!(worst <= 1e-9, "max error {worst:e}");
}
