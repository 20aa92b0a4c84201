//! A controller component answering by rollback (`response = "rollback"`,
//! docs/design.md §4.4) with two flows into it, checked by hand.
//!
//! The controller is two integrators, `x' = e = r - y` with `r = 0`,
//! `u = x`: each state moves by `h e` over a step with the input held
//! (RK4 of a constant derivative, to round-off). Its two measurements come
//! from two inlets, as the central controller of two plants reads two
//! uplinks. An answer by rollback at event time `t` is `x(t) + h e_new`,
//! where `x(t)` is the state at `t` with the input held over the step that
//! contains `t`, and `e_new` the inputs as they stand when the packet is
//! answered: a sample of the other flow that has not arrived yet counts with
//! its last value, so a late sample changes the answer.

use netloop_time::SimTime;

use super::adapters::{ControllerComponent, ControllerShape};
use super::{Graph, GraphBuilder, Inlet};
use crate::controller::ControllerConfig;
use crate::key_path::KeyPath;
use crate::solver::SolverKind;
use crate::time::StepSize;

const STEP: SimTime = SimTime::from_millis(10);
const H: f64 = 0.01;

fn integrators(rollback: bool) -> Graph {
    let config: ControllerConfig = toml::from_str(
        "kind = \"state_space\"\na = [[0.0, 0.0], [0.0, 0.0]]\nb = [[1.0, 0.0], [0.0, 1.0]]\n\
         c = [[1.0, 0.0], [0.0, 1.0]]\ntrigger = \"event\"",
    )
    .unwrap();
    let shape = ControllerShape {
        measurements: 2,
        outputs: 2,
        reference: &[],
        model: None,
        limits: None,
        default_period: Some(STEP),
    };
    let mut c = ControllerComponent::new(
        &KeyPath::key("c"),
        &config,
        shape,
        StepSize::new(STEP).unwrap(),
    )
    .unwrap();
    if rollback {
        c = c
            .answer_by_rollback(&KeyPath::key("components").at(0).and("response"))
            .unwrap();
    }
    let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
    b.component("central", c);
    b.component("up_a", Inlet::new(1));
    b.component("up_b", Inlet::new(1));
    b.connect("up_a.y", "central.measurement[0..1]");
    b.connect("up_b.y", "central.measurement[1..2]");
    b.build().unwrap()
}

/// The packets of one step: (inlet name, arrival in ms, value), answered in
/// this order before the boundary that ends the step; the answers' `u`.
fn receive(g: &mut Graph, packets: &[(&str, u64, f64)]) -> Vec<Vec<f64>> {
    let central = g.component_index("central").unwrap();
    let mut answers = Vec::new();
    for &(inlet, ms, y) in packets {
        let i = g.component_index(inlet).unwrap();
        g.set_output(i, 0, 0, &[y]);
        g.respond(central, SimTime::from_millis(ms));
        answers.push(g.output(central, 0).to_vec());
    }
    g.integrate_step().unwrap();
    answers
}

fn close(found: &[f64], want: &[f64], what: &str) {
    for (f, w) in found.iter().zip(want) {
        assert!((f - w).abs() < 1e-15, "{what}: {found:?}, want {want:?}");
    }
}

/// Step 0 carries nothing; in step 1 `a = 2` arrives at 7 ms and `b = 4`
/// at 9 ms (late: after `a`'s answer); in step 2 `a = 1` at 13 ms.
#[test]
fn answers_by_rollback_look_one_step_ahead_from_the_event_time() {
    let mut g = integrators(true);
    g.integrate_step().unwrap();
    let step1 = receive(&mut g, &[("up_a", 7, 2.0), ("up_b", 9, 4.0)]);
    // x(7 ms) = x(9 ms) = 0 (nothing held over step 0); a's answer sees
    // b's last value (0): u = (0 - h 2, 0).
    close(&step1[0], &[-2.0 * H, 0.0], "a at 7 ms");
    // b's answer sees both: u = (-h 2, -h 4).
    close(&step1[1], &[-2.0 * H, -4.0 * H], "b at 9 ms");
    // Both act from boundary 1 (10 ms) on, held over step [10, 20] ms:
    // x(10 ms) = 0, x(13 ms) = -3 ms (2, 4); the answer adds h (-1, -4).
    let step2 = receive(&mut g, &[("up_a", 13, 1.0)]);
    close(
        &step2[0],
        &[-0.003 * 2.0 - H, -0.003 * 4.0 - 4.0 * H],
        "a at 13 ms",
    );
    // Nothing of the rollback stayed: at 30 ms the state is the held
    // inputs integrated, (2, 4) over step 1 and (1, 4) over step 2.
    close(&state(&g), &[-2.0 * H - H, -4.0 * H - 4.0 * H], "x(30 ms)");
}

/// The controller's law state, read through a snapshot-free path: the
/// answer of a direct evaluation at the boundary with zero input is `x`.
fn state(g: &Graph) -> Vec<f64> {
    let mut copy = integrators(false);
    copy.restore(&g.snapshot()).unwrap();
    let central = copy.component_index("central").unwrap();
    for inlet in ["up_a", "up_b"] {
        let i = copy.component_index(inlet).unwrap();
        copy.set_output(i, 0, 0, &[0.0]);
    }
    copy.respond(central, copy.time());
    copy.output(central, 0).to_vec()
}

/// The same packets with `b` on time (before `a`): `a`'s answer now
/// carries `b`'s new sample, which the late `b` above could not change
/// after the answer was sent.
#[test]
fn a_late_sample_changes_the_answer_to_the_other_flow() {
    let mut late = integrators(true);
    late.integrate_step().unwrap();
    let late = receive(&mut late, &[("up_a", 7, 2.0), ("up_b", 9, 4.0)]);
    let mut early = integrators(true);
    early.integrate_step().unwrap();
    let early = receive(&mut early, &[("up_b", 6, 4.0), ("up_a", 7, 2.0)]);
    close(&late[0], &[-2.0 * H, 0.0], "a's answer, b late");
    close(&early[1], &[-2.0 * H, -4.0 * H], "a's answer, b on time");
    assert_ne!(late[0], early[1]);
}

/// Rollback only changes what is answered: the same packets answered
/// directly leave the graph in the same state, bit for bit, and each
/// direct answer is the rollback one less `h e`, `e = -y` the inputs as
/// they stand at the answer.
#[test]
fn answering_by_rollback_leaves_the_state_as_a_direct_answer_does() {
    let packets: [&[(&str, u64, f64)]; 3] = [
        &[],
        &[("up_a", 7, 2.0), ("up_b", 9, 4.0)],
        &[("up_b", 11, -3.0), ("up_a", 13, 1.0)],
    ];
    let (mut r, mut d) = (integrators(true), integrators(false));
    let mut y = [0.0; 2];
    for step in packets {
        let (ar, ad) = (receive(&mut r, step), receive(&mut d, step));
        for ((ur, ud), &(inlet, ms, v)) in ar.iter().zip(&ad).zip(step) {
            y[usize::from(inlet == "up_b")] = v;
            close(
                ur,
                &[ud[0] - H * y[0], ud[1] - H * y[1]],
                &format!("{ms} ms"),
            );
        }
        assert_eq!(state(&r), state(&d));
    }
}
