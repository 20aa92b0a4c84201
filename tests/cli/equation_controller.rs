//! `kind = "equations"` controllers through the binary: a `source` file
//! read relative to the scenario, and its errors located in that file.

use test_support::fixtures;

use crate::support::{assert_exit, assert_exit_saying, run, stderr};

/// One second at 10 ms steps, time-stepping every 10 ms.
const HEADER: &str = r#"duration = "1s"
step = "10ms"

[sync]
scheme = "time_stepping"
period = "10ms""#;

/// A DC servo (default parameters) whose controller is an equation model
/// with the keys `controller`, over a builtin channel of constant `delay`;
/// `tables` follow the loop's own.
fn servo(delay: &str, controller: &str, tables: &str) -> String {
    fixtures::scenario(
        HEADER,
        &format!(r#"{{ kind = "constant", value = "{delay}" }}"#),
        &format!(
            r#"
[[loops]]
name = "servo"
plant_node = 0
controller_node = 1

[loops.plant]
kind = "dc_servo"

[loops.sensor]
period = "10ms"

[loops.controller]
kind = "equations"
{controller}
{tables}"#
        ),
    )
}

/// The controller's `source` is read relative to the scenario file (from
/// another working directory), and a problem in it is reported at the
/// model file's line and column, under the key `source`.
#[test]
fn a_controller_source_file_is_read_beside_the_scenario_and_located() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("law")).unwrap();
    let scenario = dir.path().join("servo.toml");
    std::fs::write(
        &scenario,
        servo(
            "0s",
            "source = \"law/pi.eq\"\nparameters = { kp = 2.0 }",
            "",
        ),
    )
    .unwrap();
    let law = dir.path().join("law/pi.eq");
    std::fs::write(
        &law,
        "parameter kp = 1;\ninput y;\ninput r;\noutput u = kp * (r - y);\n",
    )
    .unwrap();
    let o = run(&["check", scenario.to_str().unwrap()]);
    assert_exit(&o, 0);

    std::fs::write(
        &law,
        "parameter kp = 1;\ninput y;\ninput r;\noutput u = kp * (r - z);\n",
    )
    .unwrap();
    let o = run(&["check", scenario.to_str().unwrap()]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("`loops[0].controller.source`"), "{err}");
    assert!(err.contains("pi.eq:4:"), "{err}");
    assert!(err.contains("undefined variable `z`"), "{err}");

    std::fs::remove_file(&law).unwrap();
    let o = run(&["check", scenario.to_str().unwrap()]);
    assert_exit_saying(&o, 2, "`loops[0].controller.source`");
}

/// An inline controller model's syntax error is reported at its own line
/// and column in the scenario file, with a caret.
#[test]
fn an_inline_controller_model_error_points_at_its_line_in_the_scenario() {
    let path =
        crate::support::root().join("tests/cli/broken/equation_controller_syntax_error.toml");
    let o = run(&["check", path.to_str().unwrap()]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("equation_controller_syntax_error.toml:34:"),
        "{err}"
    );
    assert!(err.contains("34 | output u = 3 * (r - y;"), "{err}");
    assert!(err.contains('^'), "{err}");
}

/// An event-triggered equation controller answers with `response =
/// "rollback"` like a `state_space` one: the scenario is accepted and runs,
/// and its time series differs from the direct answer's (the rollback
/// response is the output one solver step later).
#[test]
fn an_equation_controller_can_answer_by_rollback() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("servo.toml");
    let text = servo(
        "3ms",
        "trigger = \"event\"\nequations = \"input y; input r; state xi; der(xi) = 5 * (r - y); output u = 2 * (r - y) + xi;\"",
        "[loops.reference]\nkind = \"constant\"\nvalue = 1.0\n",
    );
    std::fs::write(&scenario, text).unwrap();
    let series = |response: &str| {
        let out = dir.path().join(response);
        let o = run(&[
            "-q",
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--set",
            &format!("loops[0].response=\"{response}\""),
        ]);
        assert_exit(&o, 0);
        std::fs::read_to_string(out.join("timeseries.csv")).unwrap()
    };
    let (direct, rollback) = (series("direct"), series("rollback"));
    assert_eq!(direct.lines().count(), rollback.lines().count());
    assert_ne!(direct, rollback);
}
