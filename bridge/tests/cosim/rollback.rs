//! Controller-response rollback (DESIGN §4.4): the response of a
//! solver-integrated controller is its output one step ahead, computed and
//! rolled back, leaving the plant exactly as it was.

use controlsim::System;

use crate::support::*;

/// A loop whose plant is a second-order lag, with the given controller.
fn lag_loop(controller: &str, response: &str) -> String {
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
kind = "step"
at = "20ms"
final = 1.0
"#
    )
}

fn header() -> &'static str {
    "duration = \"2s\"\nstep = \"1ms\"\n[sync]\nscheme = \"event_driven\"\n"
}

const DELAY: &str = r#"{ kind = "uniform", min = "1ms", max = "6ms" }"#;

/// A dynamic controller whose output is a pure gain on the error (no
/// dynamics reach the output: C = 0, D = K) answers by rollback exactly as
/// a static proportional controller answers directly.
#[test]
fn rollback_of_a_pure_gain_equals_the_direct_proportional_law() {
    let dynamic = lag_loop("kind = \"state_space\"\na = [[-1.0]]\nb = [[1.0]]\nc = [[0.0]]\nd = [[2.5]]", "rollback");
    let static_p = lag_loop("kind = \"pid\"\nkp = 2.5", "direct");
    let (a, _) = run_in_tempdir(&scenario(header(), DELAY, &dynamic));
    let (b, _) = run_in_tempdir(&scenario(header(), DELAY, &static_p));
    let plant = column(&a.path().join("run"), "lag.y.y");
    assert_eq!(plant, column(&b.path().join("run"), "lag.y.y"), "rollback and direct laws disagree");
    assert!(plant.iter().any(|&y| y > 0.5), "the loop moved");
}

/// Rollback answers differ from direct ones when the controller has
/// dynamics in its output: the comparison above can fail.
#[test]
fn rollback_of_a_pi_differs_from_its_direct_output() {
    let pi = "kind = \"transfer_function\"\nnum = [1.5, 3.0]\nden = [1.0, 0.0]";
    let (a, _) = run_in_tempdir(&scenario(header(), DELAY, &lag_loop(pi, "rollback")));
    let (b, _) = run_in_tempdir(&scenario(header(), DELAY, &lag_loop(pi, "direct")));
    assert_ne!(column(&a.path().join("run"), "lag.y.y"), column(&b.path().join("run"), "lag.y.y"));
}

/// The plant and every other state are bit-identical after a rollback
/// response: a twin system that never computes a response stays in step.
#[test]
fn a_rollback_response_leaves_the_plant_untouched() {
    let text = scenario(header(), DELAY, &lag_loop("kind = \"transfer_function\"\nnum = [1.5, 3.0]\nden = [1.0, 0.0]", "rollback"));
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
        assert_eq!(probed.loops()[0].state(), &before.1[..], "plant state changed at step {k}");
        assert_eq!(probed.loops()[0].state(), twin.loops()[0].state());
        assert_eq!(probed.loops()[0].controller_state(), twin.loops()[0].controller_state());
    }
}
