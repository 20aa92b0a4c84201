//! Snapshot and restore are bit-exact, and refuse the wrong shape.

use controlsim::{Silent, System};
use proptest::prelude::*;

use crate::common::{bits, build, run_direct, serve_boundary, RICH};

/// Runs `n` boundaries, collecting the bits of every state at each.
fn trace(sys: &mut System, n: u64) -> Vec<Vec<u64>> {
    (0..n)
        .map(|_| {
            run_direct(sys, 1);
            bits(sys)
        })
        .collect()
}

/// 1000 steps, snapshot, 500 steps, restore, the same 500 steps again:
/// identical bits at every boundary (states, controller internals, inputs,
/// samples including noise), and the same final snapshot.
#[test]
fn restore_then_rerun_is_bit_identical() {
    let mut sys = build(RICH, 42);
    run_direct(&mut sys, 1000);
    let snap = sys.snapshot();
    let first = trace(&mut sys, 500);
    let end_first = sys.snapshot();
    sys.restore(&snap).unwrap();
    assert_eq!(sys.k(), 1000);
    assert!(sys.snapshot() == snap, "restore gives back the snapshot");
    let second = trace(&mut sys, 500);
    assert_eq!(first, second);
    assert!(sys.snapshot() == end_first);
    // The comparison is not vacuous: the 500 steps changed things.
    assert_ne!(first[0], first[499]);
    assert!(sys.loops()[3].resets() > 0, "the ball bounced");
}

/// A freshly built system restored from a snapshot of another run continues
/// exactly like that run (nexosim's rebuild-restore-compare).
#[test]
fn restore_into_a_rebuilt_system() {
    let mut a = build(RICH, 7);
    run_direct(&mut a, 300);
    let snap = a.snapshot();
    let mut b = build(RICH, 7);
    b.restore(&snap).unwrap();
    assert_eq!(trace(&mut a, 200), trace(&mut b, 200));
}

/// Restoring a snapshot of another shape is an error with expected/found,
/// and leaves the system as it was.
#[test]
fn wrong_shape_is_an_error_not_a_panic() {
    let mut rich = build(RICH, 1);
    let other = build(
        r#"
step = "1ms"
[[loops]]
name = "one"
[loops.plant]
kind = "state_space"
a = [[-1.0]]
b = [[1.0]]
c = [[1.0]]
[loops.sensor]
period = "1ms"
[loops.controller]
kind = "open_loop"
"#,
        1,
    );
    let before = rich.snapshot();
    let err = rich.restore(&other.snapshot()).unwrap_err();
    assert_eq!(
        (err.what.as_str(), err.expected, err.found),
        ("loop count", 7, 1)
    );
    assert!(rich.snapshot() == before);

    // Same loop count, different state size.
    let two = |n: usize| {
        let a = format!(
            "[{}]",
            vec![format!("[{}]", vec!["-1.0"; n].join(", ")); n].join(", ")
        );
        let b = format!("[{}]", vec!["[1.0]"; n].join(", "));
        let c = format!("[[{}]]", vec!["1.0"; n].join(", "));
        build(
            &format!(
                "step = \"1ms\"\n[[loops]]\nname = \"x\"\n[loops.plant]\nkind = \"state_space\"\na = {a}\nb = {b}\nc = {c}\n[loops.sensor]\nperiod = \"1ms\"\n[loops.controller]\nkind = \"open_loop\""
            ),
            0,
        )
    };
    let mut small = two(2);
    let err = small.restore(&two(3).snapshot()).unwrap_err();
    assert_eq!((err.expected, err.found), (2, 3));
    assert!(err.to_string().contains("plant state"), "{err}");
}

/// One random action at a boundary.
#[derive(Clone, Debug)]
enum Op {
    Actuator { lp: usize, value: f64 },
    Input { lp: usize, value: f64 },
    Sample { lp: usize },
    Compute { lp: usize },
    Rollback,
    Zero { lp: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..7usize, -10.0..10.0f64).prop_map(|(lp, value)| Op::Actuator { lp, value }),
        (0..7usize, -5.0..5.0f64).prop_map(|(lp, value)| Op::Input { lp, value }),
        (0..7usize).prop_map(|lp| Op::Sample { lp }),
        (0..7usize).prop_map(|lp| Op::Compute { lp }),
        Just(Op::Rollback),
        (0..7usize).prop_map(|lp| Op::Zero { lp }),
    ]
}

/// Applies the ops scheduled at each boundary (on top of the normal closed
/// loop), advancing one step at a time; returns the trace.
fn play(sys: &mut System, ops: &[(u64, Op)], steps: u64) -> Vec<Vec<u64>> {
    let start = sys.k();
    let mut out = Vec::new();
    for _ in 0..steps {
        let offset = sys.k() - start;
        for i in 0..sys.loops().len() {
            serve_boundary(sys, i);
        }
        for (_, o) in ops.iter().filter(|(at, _)| *at == offset) {
            match *o {
                Op::Actuator { lp, value } => sys.set_actuator(lp, 0, value).unwrap(),
                Op::Input { lp, value } => sys.set_controller_input(lp, 0, value).unwrap(),
                Op::Sample { lp } => {
                    sys.sample(lp).unwrap();
                }
                Op::Compute { lp } => {
                    sys.compute_control(lp).unwrap();
                }
                Op::Rollback => {
                    sys.rollback_response(2).unwrap();
                }
                Op::Zero { lp } => sys.zero_actuator(lp).unwrap(),
            }
        }
        let k = sys.k();
        sys.advance_to(k + 1, &mut Silent).unwrap();
        out.push(bits(sys));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// At a random boundary, with random inputs injected afterwards: run,
    /// restore, replay the same inputs, and get the same bits.
    #[test]
    fn snapshot_restore_round_trip(
        seed in any::<u64>(),
        at in 0u64..400,
        ops in proptest::collection::vec((0u64..150, op()), 0..40),
    ) {
        let mut sys = build(RICH, seed);
        run_direct(&mut sys, at);
        let snap = sys.snapshot();
        let first = play(&mut sys, &ops, 150);
        sys.restore(&snap).unwrap();
        prop_assert!(sys.snapshot() == snap);
        let second = play(&mut sys, &ops, 150);
        prop_assert_eq!(first, second);
    }
}
