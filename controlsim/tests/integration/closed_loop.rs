//! The closed-loop oracle: its documented call order, and its pure delays.

use controlsim::{ClosedLoop, Delays, Response, SimTime, System};

use crate::common::{bits, build, serve_boundary, RICH};

/// With zero delays the oracle is exactly the documented per-boundary call
/// sequence (what the bridge reproduces over a zero-delay network): the
/// bits at every boundary agree for 2000 steps of a system with every kind
/// of loop, including noise and event-triggered controllers.
#[test]
fn zero_delay_oracle_is_the_documented_call_sequence() {
    let mut oracle = ClosedLoop::new(build(RICH, 11), Delays::default(), Response::Direct);
    let mut seen_oracle = Vec::new();
    oracle
        .run_to(2000, &mut |s: &System| seen_oracle.push(bits(s)))
        .unwrap();

    let mut manual = build(RICH, 11);
    let mut seen_manual = Vec::new();
    for _ in 0..2000 {
        for i in 0..manual.loops().len() {
            serve_boundary(&mut manual, i);
        }
        let k = manual.k();
        manual
            .advance_to(k + 1, &mut |s: &System| seen_manual.push(bits(s)))
            .unwrap();
    }
    assert_eq!(seen_oracle.len(), 2000);
    assert_eq!(seen_oracle, seen_manual);
    assert_eq!(bits(oracle.system()), bits(&manual));
}

/// A plant whose output is the time (`x1' = x2, x2' = 0`, `x(0) = [0, 1]`)
/// under `u = -y` (P controller, kp = 1, r = 0), sensor every 10 ms, uplink
/// 3 ms, downlink 2 ms, step 1 ms. Known answer for the actuator at boundary
/// k (ms):
/// - event-triggered: the newest sample s (multiple of 10) with
///   `s + 5 <= k`, so `u = -s / 1000`;
/// - time-triggered every 10 ms: the newest tick c with `c + 2 <= k` used the
///   newest sample that had arrived by then, `s = c - 10`.
#[test]
fn pure_delays_apply_at_ceil_of_send_plus_delay() {
    let system = |trigger: &str| {
        build(
            &format!(
                r#"
step = "1ms"
[[loops]]
name = "clock"
[loops.plant]
kind = "state_space"
a = [[0.0, 1.0], [0.0, 0.0]]
b = [[0.0], [0.0]]
c = [[1.0, 0.0]]
x0 = [0.0, 1.0]
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "pid"
kp = 1.0
trigger = "{trigger}"
"#
            ),
            0,
        )
    };
    let delays = Delays {
        uplink: SimTime::from_millis(3),
        downlink: SimTime::from_millis(2),
    };
    for (trigger, newest_sample) in [
        (
            "event",
            (|k: i64| (k - 5).div_euclid(10) * 10) as fn(i64) -> i64,
        ),
        ("time", |k: i64| ((k - 2).div_euclid(10) * 10) - 10),
    ] {
        let mut cl = ClosedLoop::new(system(trigger), delays, Response::Direct);
        let mut seen = Vec::new();
        cl.run_to(100, &mut |s: &System| {
            seen.push((s.k() as i64, s.loops()[0].held_control()[0]))
        })
        .unwrap();
        for (k, u) in seen {
            let s = newest_sample(k);
            let expected = if s < 0 { 0.0 } else { -(s as f64) / 1000.0 };
            assert!(
                (u - expected).abs() < 1e-12,
                "{trigger}, k = {k}: u = {u}, expected {expected}"
            );
        }
    }
}

/// With rollback responses the continuous controller sends its output one
/// step ahead, so its loop differs from the direct run while the loops
/// without a continuous controller are unaffected.
#[test]
fn rollback_response_changes_only_continuous_loops() {
    let run = |response| {
        let mut cl = ClosedLoop::new(build(RICH, 5), Delays::default(), response);
        cl.run_to(500, &mut controlsim::Silent).unwrap();
        cl.into_system()
    };
    let (direct, rollback) = (run(Response::Direct), run(Response::Rollback));
    for (a, b) in direct.loops().iter().zip(rollback.loops()) {
        if a.is_continuous_controller() {
            assert_ne!(a.state(), b.state(), "{}", a.name());
        } else {
            assert_eq!(a.state(), b.state(), "{}", a.name());
        }
    }
}

/// Snapshot and restore of a delayed closed loop include the messages in
/// flight. Uplink 23 ms and downlink 17 ms, longer than the 5-20 ms sensor
/// periods of the rich system, so every loop has messages queued at any
/// boundary. Run 1000 steps, snapshot, 500 more, restore, the same 500
/// again: identical bits at every boundary, and a rebuilt loop restored from
/// the snapshot continues the same way. A snapshot of another system is a
/// shape error.
#[test]
fn delayed_loop_snapshot_restore_is_bit_exact() {
    let delays = Delays {
        uplink: SimTime::from_millis(23),
        downlink: SimTime::from_millis(17),
    };
    let trace = |cl: &mut ClosedLoop, steps: u64| {
        let mut seen = Vec::new();
        let k1 = cl.system().k() + steps;
        cl.run_to(k1, &mut |s: &System| seen.push(bits(s))).unwrap();
        seen.push(bits(cl.system()));
        seen
    };
    let mut cl = ClosedLoop::new(build(RICH, 9), delays, Response::Rollback);
    cl.run_to(1000, &mut controlsim::Silent).unwrap();
    let snap = cl.snapshot();
    let first = trace(&mut cl, 500);
    let end_first = cl.snapshot();
    cl.restore(&snap).unwrap();
    assert!(cl.snapshot() == snap, "restore gives back the snapshot");
    let second = trace(&mut cl, 500);
    let diverged = |a: &[Vec<u64>], b: &[Vec<u64>]| a.iter().zip(b).position(|(x, y)| x != y);
    assert_eq!(
        diverged(&first, &second),
        None,
        "re-run differs from boundary 1000 + that"
    );
    assert_eq!(first.len(), second.len());
    assert!(cl.snapshot() == end_first);
    assert_ne!(first[0], first[500], "the 500 steps changed things");

    let mut rebuilt = ClosedLoop::new(build(RICH, 9), delays, Response::Rollback);
    rebuilt.restore(&snap).unwrap();
    assert_eq!(
        diverged(&trace(&mut rebuilt, 500), &first),
        None,
        "rebuilt loop differs"
    );

    let mut other = ClosedLoop::new(
        build(
            "step = \"1ms\"\n[[loops]]\nname = \"one\"\n[loops.plant]\nkind = \"dc_servo\"\n[loops.sensor]\nperiod = \"1ms\"\n[loops.controller]\nkind = \"pid\"\nkp = 1.0",
            0,
        ),
        delays,
        Response::Direct,
    );
    let before = other.snapshot();
    let err = other.restore(&snap).unwrap_err();
    assert_eq!(err.what, "loop count");
    assert!(
        other.snapshot() == before,
        "a failed restore changes nothing"
    );

    // Same loop count, two measured channels instead of one: the queued
    // measurements do not fit.
    let mut two = ClosedLoop::new(
        build(
            "step = \"1ms\"\n[[loops]]\nname = \"one\"\n[loops.plant]\nkind = \"dc_servo\"\noutputs = [\"theta\", \"omega\"]\n[loops.sensor]\nperiod = \"1ms\"\n[loops.controller]\nkind = \"state_feedback\"\nk = [[1.0, 0.1]]",
            0,
        ),
        delays,
        Response::Direct,
    );
    other.run_to(100, &mut controlsim::Silent).unwrap();
    let err = two.restore(&other.snapshot()).unwrap_err();
    assert_eq!(
        (err.what.as_str(), err.expected, err.found),
        ("loop 0 (one) uplink message length", 2, 1)
    );
}
