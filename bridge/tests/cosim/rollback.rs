//! Controller-response rollback (docs/design.md §4.4): the response of a
//! solver-integrated controller is its output one step ahead, computed and
//! rolled back, leaving the plant exactly as it was.

use controlsim::System;

use crate::support::*;

/// A loop whose plant is a second-order lag, with the given controller and
/// reference.
fn lag_loop(controller: &str, response: &str, reference: &str) -> String {
    format!(
        r#"
[[loops]]
name = "lag"
response = "{response}"
[loops.plant]
kind = "transfer_function"
num = [4.0]
den = [1.0, 1.2, 4.0]
[loops.sensor]
period = "5ms"
[loops.controller]
{controller}
trigger = "event"
[loops.reference]
{reference}
"#
    )
}

fn header(seed: u64) -> String {
    format!("duration = \"2s\"\nstep = \"1ms\"\nseed = {seed}\n[sync]\nscheme = \"event_driven\"\n")
}

const DELAY: &str = r#"{ kind = "uniform", min = "1ms", max = "6ms" }"#;
const STEP_AT_20MS: &str = "kind = \"step\"\nat = \"20ms\"\nfinal = 1.0";
const PI: &str = "kind = \"transfer_function\"\nnum = [1.5, 3.0]\nden = [1.0, 0.0]";
/// A state-space controller whose output is a pure gain on the error: no
/// dynamics reach the output (C = 0, D = 2.5).
const PURE_GAIN: &str =
    "kind = \"state_space\"\na = [[-1.0]]\nb = [[1.0]]\nc = [[0.0]]\nd = [[2.5]]";
const P: &str = "kind = \"pid\"\nkp = 2.5";
/// Seeds of the sensor noise and the channel; each gives other arrival times.
const SEEDS: std::ops::RangeInclusive<u64> = 1..=8;

/// The plant output of a run.
fn plant_output(seed: u64, controller: &str, response: &str, reference: &str) -> Vec<f64> {
    let (dir, _) = run_in_tempdir(&scenario(
        &header(seed),
        DELAY,
        &lag_loop(controller, response, reference),
    ));
    column(&dir.path().join("run"), "lag.y.y")
}

/// A rollback response is the output one step ahead: with C = 0 it is
/// `D (r(t + h) - y)`, the held measurement y against the reference one step
/// later, while a direct P law gives `Kp (r(t) - y)`. With a reference that is
/// constant from t = 0, r(t + h) = r(t) at every boundary, so the two laws
/// give the same bits by construction, whatever the arrival times.
#[test]
fn rollback_of_a_pure_gain_equals_the_direct_proportional_law() {
    for seed in SEEDS {
        let constant = "kind = \"constant\"\nvalue = 1.0";
        let rollback = plant_output(seed, PURE_GAIN, "rollback", constant);
        assert_eq!(
            rollback,
            plant_output(seed, P, "direct", constant),
            "seed {seed}: rollback and direct laws disagree"
        );
        assert!(
            rollback.iter().any(|&y| y > 0.5),
            "seed {seed}: the loop moved"
        );
    }
}

/// With a step reference the rollback response sees the step one solver step
/// early (it reads r at t + h): exactly a direct P law whose reference steps
/// at 19 ms, since r_20ms(t + 1 ms) = r_19ms(t) at every boundary. Against the
/// same 20 ms step the two differ as soon as a response falls at 19 ms.
#[test]
fn rollback_of_a_pure_gain_reads_the_reference_one_step_ahead() {
    let mut differed = 0;
    for seed in SEEDS {
        let rollback = plant_output(seed, PURE_GAIN, "rollback", STEP_AT_20MS);
        let early = plant_output(
            seed,
            P,
            "direct",
            "kind = \"step\"\nat = \"19ms\"\nfinal = 1.0",
        );
        assert_eq!(
            rollback, early,
            "seed {seed}: rollback is not the direct law one step ahead"
        );
        if rollback != plant_output(seed, P, "direct", STEP_AT_20MS) {
            differed += 1;
        }
    }
    assert!(
        differed > 0,
        "no seed put a response at 19 ms: the comparison tests nothing"
    );
}

/// Rollback answers differ from direct ones when the controller has
/// dynamics in its output: the comparison above can fail.
#[test]
fn rollback_of_a_pi_differs_from_its_direct_output() {
    assert_ne!(
        plant_output(1, PI, "rollback", STEP_AT_20MS),
        plant_output(1, PI, "direct", STEP_AT_20MS)
    );
}

/// The plant and every other state are bit-identical after a rollback
/// response: a twin system that never computes a response stays in step.
#[test]
fn a_rollback_response_leaves_the_plant_untouched() {
    let text = scenario(&header(1), DELAY, &lag_loop(PI, "rollback", STEP_AT_20MS));
    let resolved = resolve(&text);
    let mut probed = System::from_config(&resolved.system, 1).unwrap();
    let mut twin = System::from_config(&resolved.system, 1).unwrap();
    for (i, k) in (1..400u64).step_by(7).enumerate() {
        let u = (i as f64 * 0.37).sin() * 3.0;
        for s in [&mut probed, &mut twin] {
            s.set_actuators(0, &[u]).unwrap();
            s.set_controller_inputs(0, &[u * 0.1]).unwrap();
            s.advance_silent(k).unwrap();
        }
        let before = (probed.snapshot(), probed.loops()[0].state().to_vec());
        let response = probed.rollback_response(0).unwrap().to_vec();
        assert!(response[0].is_finite());
        assert_eq!(
            probed.loops()[0].state(),
            &before.1[..],
            "plant state changed at step {k}"
        );
        assert_eq!(probed.loops()[0].state(), twin.loops()[0].state());
        assert_eq!(
            probed.loops()[0].controller_state(),
            twin.loops()[0].controller_state()
        );
    }
}
