//! The scenario schema: every kind parses and builds, round-trips through
//! serde, and every mistake is an error that names its key.

use controlsim::{ConfigError, System, SystemConfig};

use crate::common::RICH;

/// One loop of every plant and controller kind not already in `RICH`.
pub const MORE: &str = r#"
step = "1ms"
solver = "heun"

[[loops]]
name = "pendulum"
[loops.plant]
kind = "inverted_pendulum"
cart_mass = 0.5
pendulum_mass = 0.2
length = 0.3
inertia = 0.006
cart_friction = 0.1
x0 = [0.0, 0.0, 0.05, 0.0]
outputs = ["x", "v", "theta", "omega"]
[loops.sensor]
period = "5ms"
[loops.actuator]
min = -20.0
max = 20.0
[loops.controller]
kind = "state_feedback"
k = [[-1.0, -1.6, 18.7, 3.5]]

[[loops]]
name = "msd"
[loops.plant]
kind = "mass_spring_damper"
mass = 1.0
damping = 0.5
stiffness = 2.0
external_force = { kind = "sine", amplitude = 0.1, frequency = 1.5 }
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "state_space"
a = [[0.0]]
b = [[1.0]]
c = [[4.0]]
d = [[8.0]]
[loops.reference]
kind = "ramp"
slope = 0.1
start = "1s"

[[loops]]
name = "dtf"
[loops.plant]
kind = "discrete_transfer_function"
num = [0.1]
den = [1.0, -0.9]
period = "20ms"
[loops.sensor]
period = "20ms"
[loops.controller]
kind = "pid"
kp = 1.0
ki = 2.0
period = "20ms"
phase = "0s"
[loops.reference]
kind = "step"
final = 1.0
"#;

fn parse(text: &str) -> SystemConfig {
    toml::from_str(text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_kind_parses_builds_and_round_trips() {
    for text in [RICH, MORE] {
        let cfg = parse(text);
        let sys = System::from_config(&cfg, 0).unwrap();
        assert_eq!(sys.loops().len(), cfg.loops.len());
        let again: SystemConfig = toml::from_str(&toml::to_string(&cfg).unwrap()).unwrap();
        assert_eq!(
            again, cfg,
            "serialising the config and reading it back changes nothing"
        );
    }
}

fn build_err(text: &str) -> ConfigError {
    System::from_config(&parse(text), 0).unwrap_err()
}

/// A one-loop scenario with `extra` appended to the loop table text.
fn one_loop(step: &str, plant: &str, sensor: &str, controller: &str, extra: &str) -> String {
    format!(
        "step = \"{step}\"\n[[loops]]\nname = \"a\"\n{extra}\n[loops.plant]\n{plant}\n[loops.sensor]\n{sensor}\n[loops.controller]\n{controller}\n"
    )
}

const SERVO: &str = "kind = \"dc_servo\"";
const PID: &str = "kind = \"pid\"\nkp = 1.0";

#[test]
fn errors_name_the_offending_key() {
    let cases: Vec<(String, &str)> = vec![
        (one_loop("0s", SERVO, "period = \"1ms\"", PID, ""), "step"),
        (one_loop("1ms", SERVO, "period = \"1500us\"", PID, ""), "loops[0].sensor.period"),
        (one_loop("1ms", SERVO, "period = \"10ms\"\nphase = \"10ms\"", PID, ""), "loops[0].sensor.phase"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", "kind = \"pid\"\nkp = 1.0\nperiod = \"2500us\"", ""), "loops[0].controller.period"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", "kind = \"pid\"\nkp = 1.0\ntrigger = \"event\"\nperiod = \"10ms\"", ""), "loops[0].controller.period"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", "kind = \"state_feedback\"\nk = [[1.0, 2.0]]", ""), "loops[0].controller.k"),
        (one_loop("1ms", "kind = \"dc_servo\"\noutputs = [\"theta\", \"omega\"]", "period = \"10ms\"", "kind = \"state_feedback\"\nk = [[1.0]]", ""), "loops[0].controller.k"),
        (one_loop("1ms", "kind = \"dc_servo\"\ninertia = -1.0", "period = \"10ms\"", PID, ""), "loops[0].plant.inertia"),
        (one_loop("1ms", "kind = \"dc_servo\"\noutputs = [\"speed\"]", "period = \"10ms\"", PID, ""), "loops[0].plant.outputs"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", "kind = \"observer\"\nl = [[1.0], [1.0]]\nk = [[1.0, 1.0]]", ""), "loops[0].controller.a"),
        (one_loop("1ms", SERVO, "period = \"10ms\"\nsource = \"radar\"", PID, ""), "loops[0].sensor.source"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", "kind = \"pid\"\nkp = 1.0\nu_min = 2.0\nu_max = 1.0", ""), "loops[0].controller.u_min"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", "kind = \"pid\"\nkp = 1.0\ntracking_time = 1.0", ""), "loops[0].controller.tracking_time"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", "kind = \"pid\"\nkp = 1.0\nki = 1.0\nanti_windup = \"back_calculation\"\ntracking_time = 0.005", ""), "loops[0].controller.tracking_time"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", "kind = \"pid\"\nkp = 1.0\nki = 1.0\nanti_windup = \"back_calculation\"\ntracking_time = 0.01\nperiod = \"30ms\"", ""), "loops[0].controller.tracking_time"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", "kind = \"pid\"\nkp = 1.0\nki = 1000.0\nanti_windup = \"back_calculation\"\ntrigger = \"event\"", ""), "loops[0].controller.tracking_time"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", "kind = \"pid\"\nkp = 1.0\nu_min = 2.0", "[loops.actuator]\nmax = 1.0"), "loops[0].controller.u_min"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", PID, "[[loops.reference]]\nkind = \"constant\"\nvalue = 1.0\n[[loops.reference]]\nkind = \"constant\"\nvalue = 2.0"), "loops[0].reference"),
        (one_loop("1ms", "kind = \"discrete_state_space\"\na = [[1.0]]\nb = [[1.0]]\nc = [[1.0]]\nperiod = \"1500us\"", "period = \"10ms\"", PID, ""), "loops[0].plant.period"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", PID, "predecessor = 0"), "loops[0].predecessor"),
        (one_loop("1ms", "kind = \"transfer_function\"\nnum = [1.0]\nden = [1.0, 2.0, 1.0]\nx0 = [1.0]", "period = \"10ms\"", PID, ""), "loops[0].plant.x0"),
        (one_loop("1ms", "kind = \"discrete_transfer_function\"\nnum = [1.0]\nden = [1.0, 0.5]\nperiod = \"10ms\"\nx0 = [1.0, 0.0]", "period = \"10ms\"", PID, ""), "loops[0].plant.x0"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", "kind = \"transfer_function\"\nnum = [1.0, 1.0]\nden = [1.0, 0.0]\nx0 = [0.0, 0.0]", ""), "loops[0].controller.x0"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", PID, "predecessor = \"nobody\""), "loops[0].predecessor"),
        (one_loop("1ms", SERVO, "period = \"10ms\"\nnoise_std = [0.1, 0.2]", PID, ""), "loops[0].sensor.noise_std"),
        (one_loop("1ms", SERVO, "period = \"10ms\"", "kind = \"cacc\"", ""), "loops[0].controller"),
    ];
    for (text, key) in cases {
        let err = build_err(&text);
        assert_eq!(
            err.key().to_string(),
            key,
            "{err}\n--- scenario ---\n{text}"
        );
        assert!(
            err.to_string().contains(key),
            "the message names the key: {err}"
        );
    }
}

#[test]
fn duplicate_names_and_non_vehicle_predecessors_are_rejected() {
    let two = |second_plant: &str| {
        format!(
            r#"
step = "1ms"
[[loops]]
name = "x"
[loops.plant]
kind = "dc_servo"
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "pid"
kp = 1.0
[[loops]]
name = "{}"
predecessor = "x"
[loops.plant]
{second_plant}
[loops.sensor]
period = "10ms"
source = "radar"
[loops.controller]
kind = "cacc"
"#,
            if second_plant.contains("dup") {
                "x"
            } else {
                "y"
            }
        )
    };
    assert_eq!(
        build_err(&two("kind = \"vehicle\" # dup"))
            .key()
            .to_string(),
        "loops[1].name"
    );
    let err = build_err(&two("kind = \"vehicle\""));
    assert_eq!(err.key().to_string(), "loops[1].predecessor");
    assert!(err.to_string().contains("vehicle"), "{err}");
}

/// Type-level mistakes are caught by deserialisation, with the key in the
/// message: a missing required key, an unknown key, a duration without unit.
#[test]
fn serde_errors_name_the_key() {
    let missing = toml::from_str::<SystemConfig>(&one_loop(
        "1ms",
        SERVO,
        "period = \"10ms\"",
        "kind = \"pid\"",
        "",
    ))
    .unwrap_err()
    .to_string();
    assert!(missing.contains("kp"), "{missing}");
    let unknown = toml::from_str::<SystemConfig>(&one_loop(
        "1ms",
        "kind = \"dc_servo\"\ninertai = 0.1",
        "period = \"10ms\"",
        PID,
        "",
    ))
    .unwrap_err()
    .to_string();
    assert!(unknown.contains("inertai"), "{unknown}");
    let unitless = toml::from_str::<SystemConfig>(&one_loop("1ms", SERVO, "period = 10", PID, ""))
        .unwrap_err()
        .to_string();
    assert!(unitless.contains("no unit"), "{unitless}");
}

/// Back-calculation's tracking update is stable for period / Tt < 2: a
/// tracking time just above half the period builds (the rejected cases are
/// in `errors_name_the_offending_key`), and the message says why.
#[test]
fn back_calculation_tracking_time_bound_is_half_the_period() {
    let pid = |tt: f64| {
        one_loop(
            "1ms",
            SERVO,
            "period = \"10ms\"",
            &format!("kind = \"pid\"\nkp = 1.0\nki = 1.0\nanti_windup = \"back_calculation\"\ntracking_time = {tt:?}"),
            "",
        )
    };
    assert!(System::from_config(&parse(&pid(0.0051)), 0).is_ok());
    let err = build_err(&pid(0.0049)).to_string();
    assert!(err.contains("half the controller period"), "{err}");
}

/// A transfer function's `x0` length is the degree of `den`, which the
/// message says (the state count is not written anywhere in the file).
#[test]
fn transfer_function_x0_length_error_explains_the_length() {
    let err = build_err(&one_loop(
        "1ms",
        "kind = \"transfer_function\"\nnum = [1.0]\nden = [1.0, 2.0, 1.0]\nx0 = [1.0]",
        "period = \"10ms\"",
        PID,
        "",
    ))
    .to_string();
    assert!(
        err.contains("must have 2 entries")
            && err.contains("degree of `den`")
            && err.contains("found 1"),
        "{err}"
    );
}
