//! Library plants against analytic answers.

use controlsim::{PlantModel, Silent};

use crate::common::{build, exact_linear};

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

/// Power balance of the cart-pendulum with a force and both frictions. The
/// generalised forces of the Lagrange equations (module docs of
/// `inverted_pendulum`) are `F - b v` on the cart and `-d omega` at the
/// pivot, so the mechanical energy `E` of `energy()` obeys exactly
/// `dE/dt = F v - b v^2 - d omega^2`.
///
/// F = 0.5 N held, b = 0.3 N s/m, d = 0.005 N m s/rad, released 0.5 rad
/// from upright, 3 s with RK4 at h = 1 ms. `E(t) - E(0)` is compared with the
/// work integral of the right-hand side along the simulated trajectory
/// (composite Simpson on the step grid, error about `h^4 T max|P''''| / 180`,
/// below 1e-9 J here). Each work term is at least 0.1 J, so a sign error in
/// any of them breaks the balance by twice that.
#[test]
fn pendulum_power_balance_with_force_and_friction() {
    let (f, b, d) = (0.5f64, 0.3f64, 0.005f64);
    let mut sys = open_loop(
        "kind = \"inverted_pendulum\"\ncart_friction = 0.3\npivot_damping = 0.005\nx0 = [0.0, 0.0, 0.5, 0.0]",
        "1ms",
        f,
    );
    let steps = 3000u64;
    // E and the three powers at every boundary 0..=steps.
    let mut energy = Vec::new();
    let mut powers: Vec<[f64; 3]> = Vec::new();
    let mut sample = |s: &controlsim::System| {
        let x = s.loops()[0].state();
        let (v, w) = (x[1], x[3]);
        energy.push(pendulum_energy(s));
        powers.push([f * v, -b * v * v, -d * w * w]);
    };
    sys.advance_to(steps, &mut sample).unwrap();
    sample(&sys);
    // Composite Simpson, accumulated over each pair of steps, so the balance
    // is checked at every even boundary and not just at the end.
    let h = 1e-3;
    let mut work = [0.0f64; 3];
    let mut worst: f64 = 0.0;
    for m in (2..=steps as usize).step_by(2) {
        for (i, w) in work.iter_mut().enumerate() {
            *w += h / 3.0 * (powers[m - 2][i] + 4.0 * powers[m - 1][i] + powers[m][i]);
        }
        let de = energy[m] - energy[0];
        worst = worst.max((de - work.iter().sum::<f64>()).abs());
    }
    for (name, w) in ["force", "cart friction", "pivot damping"].iter().zip(work) {
        assert!(w.abs() > 0.1, "{name} work {w} J is too small to test");
    }
    assert!(worst <= 1e-8, "power balance off by {worst:e} J");
}

/// Near upright the cart-pendulum is the textbook linear model. Linearising
/// the equations of motion (module docs) at `theta = omega = v = 0`, with
/// `M0 = [[M + m, m l], [m l, I + m l^2]]` and `det = (M + m)(I + m l^2) - m^2 l^2`:
///
/// ```text
/// x''     = ( (I + m l^2)(F - b v) - m l (m g l theta - d omega)) / det
/// theta'' = (-m l (F - b v) + (M + m)(m g l theta - d omega)) / det
/// ```
///
/// that is `A = [[0, 1, 0, 0], [0, -(I+ml^2) b, -m^2 g l^2, m l d] / det,
/// [0, 0, 0, 1], [0, m l b, (M+m) m g l, -(M+m) d] / det]` and
/// `B = [0, I + m l^2, 0, -m l] / det`. A small force F = 0.01 N from rest,
/// b = 0.1, d = 0.002, for 0.6 s (theta stays below 0.02 rad): the
/// nonlinear terms are of relative size theta^2, so the response matches the
/// exact linear solution (matrix exponential) to 1e-3 of its size, while a
/// sign error in the force, the friction or the damping changes it by far more.
#[test]
fn pendulum_small_angles_match_the_linearised_model() {
    let (cm, pm, l, i, g, b, d, f) = (
        0.5f64, 0.2f64, 0.3f64, 0.006f64, 9.81f64, 0.1f64, 0.002f64, 0.01f64,
    );
    let mut sys = open_loop(
        "kind = \"inverted_pendulum\"\ncart_friction = 0.1\npivot_damping = 0.002",
        "1ms",
        f,
    );
    let (ml, m11, m22) = (pm * l, cm + pm, i + pm * l * l);
    let det = m11 * m22 - ml * ml;
    let a = vec![
        vec![0.0, 1.0, 0.0, 0.0],
        vec![0.0, -m22 * b / det, -ml * ml * g / det, ml * d / det],
        vec![0.0, 0.0, 0.0, 1.0],
        vec![0.0, ml * b / det, m11 * ml * g / det, -m11 * d / det],
    ];
    let bu = [0.0, m22 * f / det, 0.0, -ml * f / det];
    let mut worst: f64 = 0.0;
    let mut size: f64 = 0.0;
    for k in (50..=600).step_by(50) {
        sys.advance_to(k, &mut Silent).unwrap();
        let exact = exact_linear(&a, &bu, &[0.0; 4], k as f64 * 1e-3);
        worst = worst.max(crate::common::max_err(sys.loops()[0].state(), &exact));
        size = size.max(exact.iter().fold(0.0, |m: f64, v| m.max(v.abs())));
    }
    let theta = sys.loops()[0].state()[2];
    assert!(theta.abs() > 1e-3 && theta.abs() < 0.02, "theta {theta}");
    assert!(
        worst <= 1e-3 * size,
        "max error {worst:e} against size {size:e}"
    );
}

/// Vehicle with quadratic drag, `v' = a - c_d v |v|`, `a' = (u - a) / tau`.
/// Started with the engine already at `a = U` (so `a` stays `U`), from rest:
/// `v' = U - c_d v^2`, whose solution is `v = V tanh(t / T)`,
/// `p = (1 / c_d) ln cosh(t / T)` with terminal speed `V = sqrt(U / c_d)` and
/// `T = 1 / sqrt(U c_d)`; the kinematics' acceleration is `U sech^2(t / T)`.
/// U = 2, c_d = 0.02: V = 10 m/s, T = 5 s. From rest with the engine lag the
/// vehicle also ends at V (and at -V for U = -2, drag opposing motion).
#[test]
fn vehicle_drag_tanh_transient_and_terminal_speed() {
    let (u, cd) = (2.0f64, 0.02f64);
    let (vt, tc) = ((u / cd).sqrt(), 1.0 / (u * cd).sqrt());
    let mut sys = open_loop(
        "kind = \"vehicle\"\nengine_lag = 0.1\ndrag = 0.02\nx0 = [0.0, 0.0, 2.0]",
        "1ms",
        u,
    );
    let mut worst: f64 = 0.0;
    for k in (0..=20_000).step_by(250) {
        sys.advance_to(k, &mut Silent).unwrap();
        let t = k as f64 * 1e-3;
        let exact = [(t / tc).cosh().ln() / cd, vt * (t / tc).tanh(), u];
        worst = worst.max(crate::common::max_err(sys.loops()[0].state(), &exact));
        let acc = sys.loops()[0].kinematics().unwrap().acceleration;
        worst = worst.max((acc - u / (t / tc).cosh().powi(2)).abs());
    }
    assert!(worst <= 1e-9, "max error {worst:e}");

    for (command, terminal) in [(2.0, vt), (-2.0, -vt)] {
        let mut sys = open_loop(
            "kind = \"vehicle\"\nengine_lag = 0.1\ndrag = 0.02",
            "1ms",
            command,
        );
        // Near V the speed error decays with time constant 1 / (2 c_d V) = 2.5 s.
        sys.advance_to(200_000, &mut Silent).unwrap();
        let x = sys.loops()[0].state();
        assert!(
            (x[1] - terminal).abs() <= 1e-9,
            "speed {} vs {terminal}",
            x[1]
        );
        assert!((x[2] - command).abs() <= 1e-12, "engine {}", x[2]);
    }
}

/// DC servo with smoothed Coulomb friction at a constant voltage settles at
/// the speed that solves the model's steady-state equation
/// `Kt (V - Ke w) / R = b w + Tc tanh(w / ws)` (left side decreasing, right
/// side increasing in w, so one root, found by bisection). Tc = 0.02 N m,
/// ws = 0.2 rad/s (so tanh is about 0.9, not 1, at the root), V = +5 and -5:
/// w is about +/-0.31 rad/s against +/-0.50 without Coulomb friction. The
/// slowest time constant is `J / (b + Kt Ke / R) = 0.1 s`; after 5 s the
/// transient is below 1e-20.
#[test]
fn dc_servo_coulomb_friction_steady_speed() {
    let (b, kt, ke, r, tc, ws) = (0.1f64, 0.01f64, 0.01f64, 1.0f64, 0.02f64, 0.2f64);
    for volts in [5.0f64, -5.0] {
        let net = |w: f64| kt * (volts - ke * w) / r - b * w - tc * (w / ws).tanh();
        let (mut lo, mut hi) = (-100.0f64, 100.0f64);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if net(mid) > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let w_ss = 0.5 * (lo + hi);
        let mut sys = open_loop(
            "kind = \"dc_servo\"\ncoulomb_friction = 0.02\ncoulomb_smoothing = 0.2\noutputs = [\"theta\", \"omega\"]",
            "1ms",
            volts,
        );
        sys.advance_to(5000, &mut Silent).unwrap();
        let w = sys.loops()[0].state()[1];
        assert!((w - w_ss).abs() <= 1e-9, "V = {volts}: speed {w} vs {w_ss}");
    }
}
