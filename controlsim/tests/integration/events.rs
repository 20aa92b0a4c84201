//! Events located inside a step (guards, resets, Zeno), on the bouncing ball
//! against its closed form.

use controlsim::KeyPath;
use controlsim::{
    ControllerConfig, EventKind, LoopSpec, Plant, PlantConfig, PlantModel, SensorConfig, Signature,
    Silent, SimTime, SolverKind, StepError, System,
};

use crate::common::build;

const G: f64 = 9.81;

/// A ball alone in an open loop: `x0 = [h0, v0]`, restitution `e`, `step`.
fn ball(h0: f64, v0: f64, e: f64, step: &str) -> System {
    build(
        &format!(
            r#"
step = "{step}"
[[loops]]
name = "ball"
[loops.plant]
kind = "bouncing_ball"
gravity = {G:?}
restitution = {e:?}
x0 = [{h0:?}, {v0:?}]
[loops.sensor]
period = "{step}"
[loops.controller]
kind = "open_loop"
"#
        ),
        0,
    )
}

/// The closed form of a ball thrown up at `v0` from `h0` onto the floor:
/// it first lands at `t1 = (v0 + v1) / g` with speed `v1 = sqrt(v0^2 + 2 g
/// h0)`, leaves impact `n` at `r_n = e^n v1`, and flies `2 r_n / g` to the
/// next one; the impacts accumulate at `t1 + 2 e v1 / (g (1 - e))`.
struct Bounces {
    /// `times[n - 1]` is impact `n`.
    times: Vec<f64>,
    v1: f64,
    e: f64,
    accumulation: f64,
}

impl Bounces {
    fn new(h0: f64, v0: f64, e: f64) -> Self {
        let v1 = (v0 * v0 + 2.0 * G * h0).sqrt();
        let t1 = (v0 + v1) / G;
        let accumulation = t1 + 2.0 * e * v1 / (G * (1.0 - e));
        let mut times = vec![t1];
        let mut r = e * v1;
        // Beyond flights of 1e-15 s every further impact is within 1e-14 s
        // of the accumulation time.
        while 2.0 * r / G > 1e-15 {
            times.push(times[times.len() - 1] + 2.0 * r / G);
            r *= e;
        }
        Bounces {
            times,
            v1,
            e,
            accumulation,
        }
    }

    /// Number of impacts at or before `t`.
    fn count(&self, t: f64) -> usize {
        self.times.partition_point(|&ti| ti <= t)
    }

    /// Rebound speed after impact `n >= 1`.
    fn rebound(&self, n: usize) -> f64 {
        self.e.powi(n as i32) * self.v1
    }
}

/// The ball of issue 10: g 9.81, e 0.8, thrown up at 15 m/s from 10 m,
/// h = 10 ms, run to 25 s. Impacts at t1 = 3.6211 s, then flights of
/// 3.347 s x 0.8^(n-1); they accumulate at 20.358 s, so 18 of them come
/// before 20 s.
///
/// At every boundary before the accumulation time, the number of impacts so
/// far is the closed form's (to within 1e-9 s of the boundary), and the
/// state dates the last impact: in flight since impact `n` the ball moves
/// at `v = r_n - g (t - t_n)`, so `t - (r_n - v) / g` must be the analytic
/// `t_n` to 1e-9 s (a reset at the boundary after the impact is up to a
/// step late). The ball never goes through the floor, its height is the
/// closed form's, and after the accumulation time it rests exactly on the
/// floor, with no further impacts, to the end.
#[test]
fn bouncing_ball_impacts_are_located_to_the_analytic_times() {
    let (h0, v0, e) = (10.0, 15.0, 0.8);
    let exact = Bounces::new(h0, v0, e);
    assert!((exact.accumulation - 20.358).abs() < 1e-3);
    let mut sys = ball(h0, v0, e, "10ms");
    let mut checked_times = 0;
    let mut settled_count = None;
    for k in 1..=2500u64 {
        sys.advance_to(k, &mut Silent).unwrap();
        let t = k as f64 * 0.01;
        let lp = &sys.loops()[0];
        let (h, v) = (lp.state()[0], lp.state()[1]);
        let n = lp.resets() as usize;
        assert!(h.is_finite() && v.is_finite(), "t = {t}: {h}, {v}");
        assert!(h >= 0.0, "t = {t}: below the floor, h = {h:e}");
        if k == 2000 {
            assert_eq!(n, 18, "impacts before 20 s");
        }
        if t < exact.accumulation - 1e-9 {
            let (lo, hi) = (exact.count(t - 1e-9), exact.count(t + 1e-9));
            assert!(
                (lo..=hi).contains(&n),
                "t = {t}: {n} impacts, expected {lo}..={hi}"
            );
            if n == 0 {
                continue;
            }
            let tn = exact.times[n - 1];
            let rn = exact.rebound(n);
            let located = t - (rn - v) / G;
            assert!(
                (located - tn).abs() <= 1e-9,
                "impact {n}: at {located} vs {tn} (off by {:e})",
                located - tn
            );
            let since = t - tn;
            let h_exact = rn * since - 0.5 * G * since * since;
            assert!((h - h_exact).abs() <= 1e-8, "t = {t}: h {h} vs {h_exact}");
            checked_times += 1;
        } else if t > exact.accumulation + 1e-9 {
            assert_eq!(
                (h, v),
                (0.0, 0.0),
                "t = {t}: at rest after the accumulation"
            );
            assert!(
                n >= exact.count(exact.accumulation - 1e-9),
                "{n} impacts: all those more than 1e-9 s before the accumulation happened"
            );
            assert_eq!(
                *settled_count.get_or_insert(n),
                n,
                "t = {t}: no impact at rest"
            );
        }
    }
    assert!(checked_times > 1500, "{checked_times}");
    assert!(settled_count.is_some());
}

/// The same through the event record: the last event at every boundary is
/// the last analytic impact to 1e-9 s, and the accumulation ends with a
/// settle within 1e-9 s of the accumulation time (after every impact more
/// than 1e-9 s before it).
#[test]
fn last_event_is_the_analytic_impact_then_a_settle_at_the_accumulation() {
    let (h0, v0, e) = (10.0, 15.0, 0.8);
    let exact = Bounces::new(h0, v0, e);
    let mut sys = ball(h0, v0, e, "10ms");
    for k in 1..=2100u64 {
        sys.advance_to(k, &mut Silent).unwrap();
        let lp = &sys.loops()[0];
        let n = lp.resets() as usize;
        match lp.last_event() {
            None => assert_eq!(n, 0),
            Some(ev) if ev.kind == EventKind::Reset => {
                assert_eq!(ev.guard, 0);
                let tn = exact.times[n - 1];
                assert!(
                    (ev.time - tn).abs() <= 1e-9,
                    "impact {n}: {} vs {tn}",
                    ev.time
                );
            }
            Some(ev) => {
                assert!(
                    (ev.time - exact.accumulation).abs() <= 1e-9,
                    "settled at {} vs {}",
                    ev.time,
                    exact.accumulation
                );
                assert!(n >= exact.count(exact.accumulation - 1e-9));
                assert!(k as f64 * 0.01 > exact.accumulation);
            }
        }
    }
    let ev = sys.loops()[0].last_event().unwrap();
    assert_eq!(ev.kind, EventKind::Settle);
}

/// Several impacts in one step, in order: dropped from 1 m with e = 0.5 and
/// a 1 s step, the ball lands at `t1 = sqrt(2/g)` = 0.4515 s with `v1 =
/// sqrt(2 g)`, again after `2 e v1 / g` = t1 (at 0.9031 s), and is in the
/// air with `e^2 v1` at the end of the first step. The state at 1 s is the
/// closed form's.
#[test]
fn several_events_in_one_step_happen_in_order() {
    let e = 0.5;
    let mut sys = ball(1.0, 0.0, e, "1s");
    let t1 = (2.0 / G).sqrt();
    let v1 = (2.0 * G).sqrt();
    sys.advance_to(1, &mut Silent).unwrap();
    let lp = &sys.loops()[0];
    assert_eq!(lp.resets(), 2);
    let ev = lp.last_event().unwrap();
    assert!(
        (ev.time - 2.0 * t1).abs() <= 1e-12,
        "{} vs {}",
        ev.time,
        2.0 * t1
    );
    let (since, r) = (1.0 - 2.0 * t1, e * e * v1);
    let (h, v) = (r * since - 0.5 * G * since * since, r - G * since);
    assert!(
        (lp.state()[0] - h).abs() <= 1e-12,
        "{} vs {h}",
        lp.state()[0]
    );
    assert!(
        (lp.state()[1] - v).abs() <= 1e-12,
        "{} vs {v}",
        lp.state()[1]
    );
    // The second step holds the rest of the impacts (at 1.1289 s, 1.2418 s,
    // ...) and their accumulation at t1 + 2 e v1 / (g (1 - e)) = 3 t1.
    sys.advance_to(2, &mut Silent).unwrap();
    let lp = &sys.loops()[0];
    let ev = lp.last_event().unwrap();
    assert_eq!(ev.kind, EventKind::Settle);
    assert!(
        (ev.time - 3.0 * t1).abs() <= 1e-9,
        "{} vs {}",
        ev.time,
        3.0 * t1
    );
    assert_eq!(lp.state(), &[0.0, 0.0]);
    // Flights 2 e^n v1 / g = 2 t1 e^n down to about ZENO_GAP.
    let expected = 1 + ((controlsim::event::ZENO_GAP / (2.0 * t1)).ln() / e.ln()) as u64;
    assert!(
        lp.resets().abs_diff(expected) <= 2,
        "{} vs {expected}",
        lp.resets()
    );
}

/// Without events to locate, the ball's step is the plain RK4 step: a
/// flight that stays in the air matches the parabola to rounding, and the
/// apex after an impact is the closed form's `e^2 h0` (the reset keeps the
/// energy) sampled on the step grid (`g h^2 / 8` below at worst).
#[test]
fn rebound_apex_is_exact() {
    let (h0, e, step) = (10.0, 0.8, 1e-3);
    let mut sys = ball(h0, 0.0, e, "1ms");
    let mut apex: f64 = 0.0;
    while sys.loops()[0].resets() < 2 {
        let k = sys.k();
        sys.advance_to(k + 1, &mut Silent).unwrap();
        if sys.loops()[0].resets() == 1 {
            apex = apex.max(sys.loops()[0].state()[0]);
        }
        assert!(sys.k() < 10_000, "no second impact");
    }
    let grid_loss = G * step * step / 8.0;
    assert!(
        apex <= e * e * h0 + 1e-10 && apex >= e * e * h0 - grid_loss - 1e-10,
        "apex {apex} vs {}",
        e * e * h0
    );
}

/// A ball resting on the floor stays there under its weight and is lifted
/// off by an upward net force (here 2 g for a 1 kg ball: `h = g t^2 / 2`).
#[test]
fn a_resting_ball_stays_until_lifted() {
    let mut sys = ball(0.3, 0.0, 0.5, "10ms");
    sys.advance_to(300, &mut Silent).unwrap();
    assert_eq!(sys.loops()[0].state(), &[0.0, 0.0]);
    let n = sys.loops()[0].resets();
    sys.advance_to(400, &mut Silent).unwrap();
    assert_eq!(sys.loops()[0].state(), &[0.0, 0.0]);
    assert_eq!(sys.loops()[0].resets(), n);
    sys.set_actuator(0, 0, 2.0 * G).unwrap();
    sys.advance_to(450, &mut Silent).unwrap();
    let h = sys.loops()[0].state()[0];
    assert!((h - 0.5 * G * 0.25).abs() < 1e-12, "{h}");
}

/// A snapshot holds the guard state: restored from before the ball settles
/// (after a run that went past it), it bounces and settles again exactly as
/// the first time, event record included.
#[test]
fn snapshot_restores_guard_state() {
    let mut sys = ball(0.4, 0.0, 0.8, "1ms");
    sys.advance_to(2000, &mut Silent).unwrap();
    let snap = sys.snapshot();
    type Trace = Vec<(u64, u64, u64, Option<(u64, usize)>)>;
    let trace = |sys: &mut System| -> Trace {
        (0..1000)
            .map(|_| {
                let k = sys.k();
                sys.advance_to(k + 1, &mut Silent).unwrap();
                let lp = &sys.loops()[0];
                (
                    lp.state()[0].to_bits(),
                    lp.state()[1].to_bits(),
                    lp.resets(),
                    lp.last_event().map(|e| (e.time.to_bits(), e.guard)),
                )
            })
            .collect()
    };
    let first = trace(&mut sys);
    assert_eq!(sys.loops()[0].last_event().unwrap().kind, EventKind::Settle);
    let end = sys.snapshot();
    sys.restore(&snap).unwrap();
    assert!(sys.snapshot() == snap);
    assert_eq!(trace(&mut sys), first);
    assert!(sys.snapshot() == end);
}

/// A user's plant with a guard whose events accumulate and no `settle`: the
/// run stops with a Zeno error naming the loop, instead of hanging.
#[test]
fn zeno_without_settle_is_an_error() {
    #[derive(Debug)]
    struct Ball;
    impl Plant for Ball {
        fn signature(&self) -> Signature {
            Signature {
                states: vec!["h".into(), "v".into()],
                inputs: vec!["f".into()],
                outputs: vec!["h".into()],
            }
        }
        fn initial_state(&self, x0: &mut [f64]) {
            x0.copy_from_slice(&[1.0, 0.0]);
        }
        fn derivative(&self, _t: f64, x: &[f64], _u: &[f64], dx: &mut [f64]) {
            dx[0] = x[1];
            dx[1] = -G;
        }
        fn output(&self, _t: f64, x: &[f64], _u: &[f64], y: &mut [f64]) {
            y[0] = x[0];
        }
        fn guard_count(&self) -> usize {
            1
        }
        fn guards(&self, _t: f64, x: &[f64], _u: &[f64], g: &mut [f64]) {
            g[0] = x[0];
        }
        fn reset(&self, _t: f64, x: &mut [f64], _u: &[f64], _guard: usize) {
            x[0] = 0.0;
            x[1] *= -0.5;
        }
    }
    let spec = LoopSpec {
        name: "user".into(),
        predecessor: None,
        plant: PlantModel::Custom(Box::new(Ball)),
        sensor: toml::from_str::<SensorConfig>("period = \"10ms\"").unwrap(),
        actuator: Default::default(),
        controller: toml::from_str::<ControllerConfig>("kind = \"open_loop\"").unwrap(),
        reference: Default::default(),
    };
    let mut sys =
        System::from_specs(SimTime::from_millis(10), SolverKind::Rk4, vec![spec], 0).unwrap();
    // Lands at sqrt(2/g) = 0.45 s; flights 2 v / g halve: accumulation at 3 t1.
    let t_acc = 3.0 * (2.0 / G).sqrt();
    let err = sys.advance_silent(200).unwrap_err();
    match err {
        StepError::Zeno {
            ref loop_name,
            guard,
            time,
            ..
        } => {
            assert_eq!(loop_name, "user");
            assert_eq!(guard, 0);
            assert!((time - t_acc).abs() < 1e-9, "{time} vs {t_acc}");
        }
        other => panic!("expected Zeno, got {other}"),
    }
    assert!(err.to_string().contains("Zeno"), "{err}");
}

/// Plants without guards are untouched by event handling: a built-in
/// scenario plant reports none.
#[test]
fn plants_without_guards_have_no_events() {
    let cfg: PlantConfig = toml::from_str("kind = \"mass_spring_damper\"").unwrap();
    let plant = PlantModel::from_config(&KeyPath::key("p"), &cfg).unwrap();
    assert_eq!(plant.as_plant().guard_count(), 0);
    let cfg: PlantConfig = toml::from_str("kind = \"bouncing_ball\"").unwrap();
    let plant = PlantModel::from_config(&KeyPath::key("p"), &cfg).unwrap();
    assert_eq!(plant.as_plant().guard_count(), 1);
}
