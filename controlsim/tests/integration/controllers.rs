//! Controller laws against hand-computed answers.

use controlsim::{ApiError, Silent, SimTime, System};

use crate::common::{bits, build, max_err, run_direct, serve_boundary, RICH};

fn with_controller(controller: &str, plant: &str, reference: &str) -> System {
    build(
        &format!(
            r#"
step = "1ms"
[[loops]]
name = "c"
[loops.plant]
{plant}
[loops.sensor]
period = "1ms"
[loops.controller]
{controller}
{reference}
"#
        ),
        0,
    )
}

const INTEGRATOR: &str = "kind = \"state_space\"\na = [[0.0]]\nb = [[1.0]]\nc = [[1.0]]";

/// Event-triggered PID at irregular instants 0, 7, 10, 25 ms with
/// measurements 0, 0.2, 0.5, 0.9 and r = 1 (kp = 2, ki = 3, kd = 0.5,
/// Tf = 0.1, derivative on error, no anti-windup): with `dt` the actual
/// elapsed time, `I += ki dt e_prev`, `D = (Tf D + kd (e - e_prev)) / (Tf + dt)`,
/// `u = kp e + I + D`; the first call integrates nothing and has `D = 0`.
#[test]
fn pid_uses_actual_elapsed_time_and_defined_first_call() {
    let mut sys = with_controller(
        "kind = \"pid\"\nkp = 2.0\nki = 3.0\nkd = 0.5\nfilter_time_constant = 0.1\nderivative_on = \"error\"\nanti_windup = \"none\"\ntrigger = \"event\"",
        INTEGRATOR,
        "[loops.reference]\nkind = \"constant\"\nvalue = 1.0",
    );
    let (kp, ki, kd, tf) = (2.0, 3.0, 0.5, 0.1);
    let (mut i, mut d, mut e_prev, mut t_prev): (f64, f64, f64, Option<f64>) =
        (0.0, 0.0, 0.0, None);
    for (k, y) in [(0u64, 0.0), (7, 0.2), (10, 0.5), (25, 0.9)] {
        sys.advance_to(k, &mut Silent).unwrap();
        sys.set_controller_input(0, 0, y).unwrap();
        let u = sys.compute_control(0).unwrap()[0];
        let t = k as f64 * 1e-3;
        let e = 1.0 - y;
        if let Some(tp) = t_prev {
            let dt = t - tp;
            i += ki * dt * e_prev;
            d = (tf * d + kd * (e - e_prev)) / (tf + dt);
        }
        let expected = kp * e + i + d;
        assert!((u - expected).abs() < 1e-12, "k = {k}: {u} vs {expected}");
        assert!(max_err(sys.loops()[0].controller_state(), &[i, d]) < 1e-12);
        (e_prev, t_prev) = (e, Some(t));
    }
}

/// Saturated PID (kp = 1, ki = 10, u_max = 1, r = 5, y = 0): with clamping
/// the integrator does not move while the output is saturated and the error
/// pushes further; without anti-windup it grows by ki * dt * e per 10 ms.
#[test]
fn pid_clamping_freezes_the_integrator_while_saturated() {
    let integral_after_three = |aw: &str| {
        let mut sys = with_controller(
            &format!("kind = \"pid\"\nkp = 1.0\nki = 10.0\nu_max = 1.0\nanti_windup = \"{aw}\"\ntrigger = \"event\""),
            INTEGRATOR,
            "[loops.reference]\nkind = \"constant\"\nvalue = 5.0",
        );
        for k in [0u64, 10, 20] {
            sys.advance_to(k, &mut Silent).unwrap();
            assert_eq!(sys.compute_control(0).unwrap()[0], 1.0);
        }
        sys.loops()[0].controller_state()[0]
    };
    assert_eq!(integral_after_three("clamping"), 0.0);
    assert!((integral_after_three("none") - 2.0 * 10.0 * 0.01 * 5.0).abs() < 1e-12);
}

/// `u = sat(-K y + N r)`: K = [[1, 2]], N = [[3]], y = [0.5, -1], r = 2 gives
/// 7.5, saturated to 5.
#[test]
fn state_feedback_law_and_limits() {
    let plant = "kind = \"state_space\"\na = [[0.0, 0.0], [0.0, 0.0]]\nb = [[1.0], [0.0]]\nc = [[1.0, 0.0], [0.0, 1.0]]";
    let refr = "[loops.reference]\nkind = \"constant\"\nvalue = 2.0";
    let mut free = with_controller(
        "kind = \"state_feedback\"\nk = [[1.0, 2.0]]\nn = [[3.0]]",
        plant,
        refr,
    );
    free.set_controller_inputs(0, &[0.5, -1.0]).unwrap();
    assert_eq!(free.compute_control(0).unwrap(), &[7.5]);
    let mut limited = with_controller(
        "kind = \"state_feedback\"\nk = [[1.0, 2.0]]\nn = [[3.0]]\nu_max = 5.0",
        plant,
        refr,
    );
    limited.set_controller_inputs(0, &[0.5, -1.0]).unwrap();
    assert_eq!(limited.compute_control(0).unwrap(), &[5.0]);
}

/// Luenberger current estimator on the plant `A = [[0, 1], [-2, -3]]`,
/// `B = [0; 1]`, `C = [1, 0]`, period 10 ms, L = [0.5; 5], K = [1, 0.5],
/// estimate starting at 0 while the plant starts at [0.5, -0.25].
/// Known answer: the estimation error obeys `e[n] = (I - L C) Phi e[n-1]`
/// with `Phi = expm(A 10 ms)`, starting from `e[0] = (I - L C) x(0)`;
/// the simulated error follows that recursion to 1e-9 (the plant itself is
/// integrated by RK4, the prediction is exact).
#[test]
fn observer_error_follows_the_designed_dynamics() {
    let mut sys = build(
        r#"
step = "1ms"
[[loops]]
name = "obs"
[loops.plant]
kind = "state_space"
a = [[0.0, 1.0], [-2.0, -3.0]]
b = [[0.0], [1.0]]
c = [[1.0, 0.0]]
x0 = [0.5, -0.25]
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "observer"
l = [[0.5], [5.0]]
k = [[1.0, 0.5]]
"#,
        0,
    );
    let a = nalgebra::Matrix2::new(0.0, 1.0, -2.0, -3.0);
    let phi = (a * 0.01).exp();
    let i_lc = nalgebra::Matrix2::new(1.0 - 0.5, 0.0, -5.0, 1.0);
    let mut predicted = i_lc * nalgebra::Vector2::new(0.5, -0.25);
    for n in 0..60 {
        serve_boundary(&mut sys, 0);
        let lp = &sys.loops()[0];
        let err = nalgebra::Vector2::new(
            lp.state()[0] - lp.controller_state()[0],
            lp.state()[1] - lp.controller_state()[1],
        );
        assert!(
            (err - predicted).amax() < 1e-9,
            "n = {n}: {err:?} vs {predicted:?}"
        );
        predicted = i_lc * phi * predicted;
        let k = sys.k();
        sys.advance_to(k + 10, &mut Silent).unwrap();
    }
    assert!(
        predicted.amax() < 1e-3 * 0.5,
        "the designed observer converges"
    );
}

const DISCRETE_PLANT: &str = r#"
kind = "discrete_state_space"
period = "10ms"
a = [[1.0, 0.1], [0.0, 0.9]]
b = [[0.005], [0.1]]
c = [[1.0, 0.0]]
x0 = [1.0, 0.5]"#;

/// `A`, `B`, `L` of [`DISCRETE_PLANT`] and the observer below.
fn discrete_model() -> (nalgebra::Matrix2<f64>, nalgebra::Matrix2<f64>) {
    let a = nalgebra::Matrix2::new(1.0, 0.1, 0.0, 0.9);
    let i_lc = nalgebra::Matrix2::new(1.0 - 0.6, 0.0, -1.0, 1.0);
    (a, i_lc)
}

/// A discrete Luenberger observer on a discrete plant (its own model):
/// `A = [[1, 0.1], [0, 0.9]]`, `B = [0.005; 0.1]`, `C = [1, 0]`, period
/// 10 ms, L = [0.6; 1], K = [5, 2], estimate from 0, plant from [1, 0.5].
/// With the controller every `q` plant periods the error obeys exactly
/// `e[n] = (I - L C) A^q e[n-1]` from `e[0] = (I - L C) x(0)` (eigenvalues
/// 0.6, 0.6 for q = 1; modulus 0.57 for q = 2), to rounding: nothing is
/// integrated.
#[test]
fn discrete_observer_error_follows_the_designed_dynamics() {
    let (a, i_lc) = discrete_model();
    for q in [1u32, 2] {
        let mut sys = build(
            &format!(
                "step = \"1ms\"\n[[loops]]\nname = \"obs\"\n[loops.plant]\n{DISCRETE_PLANT}\n[loops.sensor]\nperiod = \"10ms\"\n[loops.controller]\nkind = \"observer\"\nl = [[0.6], [1.0]]\nk = [[5.0, 2.0]]\nperiod = \"{}ms\"",
                10 * q
            ),
            0,
        );
        let step = a.pow(q);
        let mut predicted = i_lc * nalgebra::Vector2::new(1.0, 0.5);
        for n in 0..40 {
            run_direct(&mut sys, 1);
            let lp = &sys.loops()[0];
            let err = nalgebra::Vector2::new(
                lp.state()[0] - lp.controller_state()[0],
                lp.state()[1] - lp.controller_state()[1],
            );
            assert!(
                (err - predicted).amax() < 1e-12,
                "q = {q}, n = {n}: {err:?} vs {predicted:?}"
            );
            predicted = i_lc * step * predicted;
            run_direct(&mut sys, u64::from(10 * q) - 1);
        }
        assert!(predicted.amax() < 1e-6, "the designed observer converges");
        assert!(
            sys.loops()[0].state()[0].abs() < 0.1,
            "and the feedback on the estimate stabilises the plant"
        );
    }
}

/// The discrete observer predicts over the plant updates that happened,
/// `q = floor(t[n] / Tp) - floor(t[n-1] / Tp)`, whatever the times. With
/// K = 0 the input is always 0, so at irregular computations at 3, 14, 17,
/// 38 and 61 ms (q = 1, 0, 2, 3) the error still obeys
/// `e[n] = (I - L C) A^q e[n-1]`.
#[test]
fn discrete_observer_counts_plant_updates_between_irregular_computations() {
    let (a, i_lc) = discrete_model();
    let mut sys = build(
        &format!(
            "step = \"1ms\"\n[[loops]]\nname = \"obs\"\n[loops.plant]\n{DISCRETE_PLANT}\n[loops.sensor]\nperiod = \"1ms\"\n[loops.controller]\nkind = \"observer\"\ntrigger = \"event\"\nl = [[0.6], [1.0]]\nk = [[0.0, 0.0]]"
        ),
        0,
    );
    let mut predicted = i_lc * nalgebra::Vector2::new(1.0, 0.5);
    let mut prev: Option<u64> = None;
    for k in [3u64, 14, 17, 38, 61] {
        sys.advance_to(k, &mut Silent).unwrap();
        if let Some(p) = prev {
            let q = (k / 10 - p / 10) as u32;
            predicted = i_lc * a.pow(q) * predicted;
        }
        let y = sys.sample(0).unwrap().to_vec();
        sys.set_controller_inputs(0, &y).unwrap();
        sys.compute_control(0).unwrap();
        let lp = &sys.loops()[0];
        let err = nalgebra::Vector2::new(
            lp.state()[0] - lp.controller_state()[0],
            lp.state()[1] - lp.controller_state()[1],
        );
        assert!(
            (err - predicted).amax() < 1e-12,
            "k = {k}: {err:?} vs {predicted:?}"
        );
        prev = Some(k);
    }
}

/// CACC law: gap 20, relative speed 1, speed 20, acceleration 0.5,
/// predecessor acceleration 0.3 with defaults (h = 0.7, r = 2, kp = 0.2,
/// kd = 0.7): e = 20 - 16 = 4, e' = 1 - 0.35 = 0.65,
/// u = 0.3 + 0.8 + 0.455 = 1.555.
#[test]
fn cacc_law_known_value() {
    let mut sys = build(RICH, 0);
    let follow = sys.loop_index("follow").unwrap();
    assert_eq!(sys.loops()[follow].controller_input_dim(), 5);
    assert_eq!(sys.loops()[follow].measurement_dim(), 4);
    sys.set_controller_inputs(follow, &[20.0, 1.0, 20.0, 0.5, 0.3])
        .unwrap();
    let u = sys.compute_control(follow).unwrap()[0];
    assert!((u - 1.555).abs() < 1e-12, "{u}");
}

/// A two-vehicle platoon: the leader's PID tracks 20 m/s then ramps to
/// 24 m/s; the CACC follower (radar + feed-forward) settles at the constant
/// time-gap spacing `standstill + time_gap * v`: 2 + 0.7 * 24 = 18.8 m.
#[test]
fn platoon_follower_settles_at_the_time_gap_spacing() {
    let text = RICH.replace("noise_std = [0.05, 0.01, 0.01, 0.0]", "");
    let mut sys = build(&text, 0);
    run_direct(&mut sys, 40_000);
    let (lead, follow) = (
        sys.loop_index("lead").unwrap(),
        sys.loop_index("follow").unwrap(),
    );
    let l = sys.loops()[lead].kinematics().unwrap();
    let f = sys.loops()[follow].kinematics().unwrap();
    assert!((l.velocity - 24.0).abs() < 1e-3, "leader at {}", l.velocity);
    assert!(
        (f.velocity - 24.0).abs() < 1e-3,
        "follower at {}",
        f.velocity
    );
    let gap = l.position - l.length - f.position;
    assert!((gap - 18.8).abs() < 0.01, "gap {gap}");
    let radar = sys.sample(follow).unwrap();
    assert!((radar[0] - gap).abs() < 1e-12, "radar measures the gap");
}

/// Continuous PI `(kp s + ki) / s` with a constant error e = 1 (reference 1,
/// measurement 0): `x_c = t`, `u = kp e + ki x_c` = 1.5 + 3 t, integrated
/// exactly by RK4. The rollback response is the same one step later.
#[test]
fn continuous_pi_direct_and_rollback_outputs() {
    let mut sys = with_controller(
        "kind = \"transfer_function\"\nnum = [1.5, 3.0]\nden = [1.0, 0.0]",
        INTEGRATOR,
        "[loops.reference]\nkind = \"constant\"\nvalue = 1.0",
    );
    sys.advance_to(500, &mut Silent).unwrap();
    let direct = sys.compute_control(0).unwrap()[0];
    assert!((direct - (1.5 + 3.0 * 0.5)).abs() < 1e-12, "{direct}");
    let rollback = sys.rollback_response(0).unwrap()[0];
    assert!((rollback - (1.5 + 3.0 * 0.501)).abs() < 1e-12, "{rollback}");
    assert_eq!(sys.k(), 500);
    assert!((sys.loops()[0].controller_state()[0] - 0.5).abs() < 1e-12);
}

/// The same PI evaluated at an event time inside the last step, 0.4 ms
/// before boundary 500, where a measurement y = 0.25 arrived: its state is
/// the state at that instant, integrated with the error held over the step
/// (e = 1, the measurement acts on the dynamics from the boundary), so
/// `x_c = 0.4996`, `u = 1.5 (1 - 0.25) + 3 x_c`; the rollback response
/// advances that state one step with the new error 0.75. Outside the last
/// step an event time is an error.
#[test]
fn continuous_pi_evaluated_at_an_event_time_inside_the_step() {
    let mut sys = with_controller(
        "kind = \"transfer_function\"\nnum = [1.5, 3.0]\nden = [1.0, 0.0]",
        INTEGRATOR,
        "[loops.reference]\nkind = \"constant\"\nvalue = 1.0",
    );
    sys.advance_to(500, &mut Silent).unwrap();
    sys.set_controller_input(0, 0, 0.25).unwrap();
    let t = SimTime(499_600_000);
    let direct = sys.compute_control_at(0, t).unwrap()[0];
    assert!(
        (direct - (1.5 * 0.75 + 3.0 * 0.4996)).abs() < 1e-12,
        "{direct}"
    );
    let rollback = sys.rollback_response_at(0, t).unwrap()[0];
    assert!(
        (rollback - (1.5 * 0.75 + 3.0 * (0.4996 + 0.001 * 0.75))).abs() < 1e-12,
        "{rollback}"
    );
    // Nothing moved: the state is still the boundary's.
    assert!((sys.loops()[0].controller_state()[0] - 0.5).abs() < 1e-12);
    // A snapshot keeps what an event time inside the step needs.
    let snap = sys.snapshot();
    sys.advance_to(503, &mut Silent).unwrap();
    sys.restore(&snap).unwrap();
    assert_eq!(
        sys.compute_control_at(0, t).unwrap()[0].to_bits(),
        direct.to_bits()
    );
    for outside in [SimTime(499_000_000), SimTime(500_000_001)] {
        assert!(
            matches!(
                sys.compute_control_at(0, outside),
                Err(ApiError::EventTime { .. })
            ),
            "{outside} is outside the last step"
        );
    }
}

/// The same PI started from `x0 = [0.2]`: `x_c = 0.2 + t`,
/// `u = 1.5 + 3 (0.2 + t)`.
#[test]
fn continuous_transfer_function_controller_starts_from_x0() {
    let mut sys = with_controller(
        "kind = \"transfer_function\"\nnum = [1.5, 3.0]\nden = [1.0, 0.0]\nx0 = [0.2]",
        INTEGRATOR,
        "[loops.reference]\nkind = \"constant\"\nvalue = 1.0",
    );
    assert!((sys.compute_control(0).unwrap()[0] - 2.1).abs() < 1e-12);
    sys.advance_to(500, &mut Silent).unwrap();
    let u = sys.compute_control(0).unwrap()[0];
    assert!((u - (1.5 + 3.0 * 0.7)).abs() < 1e-12, "{u}");
}

/// docs/design.md §4.4 literally (snapshot; advance one step; read the controller
/// output; restore) gives the same bits as `rollback_response`, and
/// `rollback_response` leaves every state bit-identical.
#[test]
fn rollback_response_equals_snapshot_advance_restore() {
    let mut sys = build(RICH, 3);
    let pi = sys.loop_index("pi").unwrap();
    for _ in 0..5 {
        run_direct(&mut sys, 137);
        sys.set_controller_input(pi, 0, 0.25).unwrap();

        let snap = sys.snapshot();
        let k = sys.k();
        sys.advance_to(k + 1, &mut Silent).unwrap();
        let literal = sys.compute_control(pi).unwrap().to_vec();
        sys.restore(&snap).unwrap();

        let before = bits(&sys);
        let ours = sys.rollback_response(pi).unwrap().to_vec();
        assert_eq!(literal[0].to_bits(), ours[0].to_bits());
        let after = bits(&sys);
        // Only the loop's computed control may differ.
        let changed: Vec<usize> = (0..before.len())
            .filter(|&i| before[i] != after[i])
            .collect();
        assert!(changed.len() <= 1, "rollback changed {changed:?}");
    }
    assert_eq!(
        sys.rollback_response(0).unwrap_err(),
        ApiError::NotContinuous {
            loop_name: "servo".into()
        }
    );
}
