//! User-written plants through `System::from_specs`, and API misuse.

use controlsim::KeyPath;
use controlsim::{
    ApiError, ControllerConfig, LoopSpec, Plant, PlantConfig, PlantModel, References, SensorConfig,
    Signature, Silent, SimTime, SolverKind, System,
};

/// `x' = -2 x + u, y = x`, written by hand.
#[derive(Debug)]
struct FirstOrder;

impl Plant for FirstOrder {
    fn signature(&self) -> Signature {
        Signature {
            states: vec!["x".into()],
            inputs: vec!["u".into()],
            outputs: vec!["y".into()],
        }
    }
    fn initial_state(&self, x0: &mut [f64]) {
        x0[0] = 1.0;
    }
    fn derivative(&self, _t: f64, x: &[f64], u: &[f64], dx: &mut [f64]) {
        dx[0] = -2.0 * x[0] + 1.0 * u[0];
    }
    fn output(&self, _t: f64, x: &[f64], _u: &[f64], y: &mut [f64]) {
        y[0] = x[0];
    }
}

fn spec(plant: PlantModel) -> LoopSpec {
    LoopSpec {
        name: "p".into(),
        predecessor: None,
        plant,
        sensor: toml::from_str::<SensorConfig>("period = \"10ms\"").unwrap(),
        actuator: Default::default(),
        controller: toml::from_str::<ControllerConfig>("kind = \"pid\"\nkp = 3.0\nki = 10.0")
            .unwrap(),
        reference: References(vec![toml::from_str("kind = \"step\"\nfinal = 2.0").unwrap()]),
    }
}

/// The same dynamics as a built-in state-space plant `a = [[-2]], b = [[1]]`,
/// `x0 = [1]`, under the same closed loop: identical bits (the summation
/// order of the built-in is `a x` then `b u`, as written above).
#[test]
fn custom_plant_runs_like_the_equivalent_builtin() {
    let run = |plant: PlantModel| {
        let mut sys = System::from_specs(
            SimTime::from_millis(1),
            SolverKind::Rk4,
            vec![spec(plant)],
            0,
        )
        .unwrap();
        crate::common::run_direct(&mut sys, 5000);
        sys.loops()[0].state()[0]
    };
    let builtin: PlantConfig = toml::from_str(
        "kind = \"state_space\"\na = [[-2.0]]\nb = [[1.0]]\nc = [[1.0]]\nx0 = [1.0]",
    )
    .unwrap();
    let custom = run(PlantModel::Custom(Box::new(FirstOrder)));
    let reference = run(PlantModel::from_config(&KeyPath::key("plant"), &builtin).unwrap());
    assert_eq!(custom.to_bits(), reference.to_bits());
    assert!(
        (custom - 2.0).abs() < 1e-3,
        "PI drives y to the reference, got {custom}"
    );
}

#[test]
fn bad_indices_are_errors_and_change_nothing() {
    let mut sys = System::from_specs(
        SimTime::from_millis(1),
        SolverKind::Rk4,
        vec![spec(PlantModel::Custom(Box::new(FirstOrder)))],
        0,
    )
    .unwrap();
    assert_eq!(
        sys.set_actuator(1, 0, 1.0),
        Err(ApiError::NoSuchLoop { index: 1, count: 1 })
    );
    assert!(matches!(
        sys.set_actuator(0, 1, 1.0),
        Err(ApiError::NoSuchChannel {
            index: 1,
            len: 1,
            ..
        })
    ));
    assert!(matches!(
        sys.set_controller_input(0, 5, 1.0),
        Err(ApiError::NoSuchChannel { .. })
    ));
    assert!(matches!(
        sys.set_controller_inputs(0, &[1.0, 2.0]),
        Err(ApiError::WrongLength { .. })
    ));
    assert!(matches!(
        sys.extra_input(0, 0),
        Err(ApiError::NoSuchChannel { .. })
    ));
    assert!(matches!(sys.advance_to(5, &mut Silent), Ok(())));
    assert!(matches!(
        sys.advance_to(4, &mut Silent),
        Err(controlsim::StepError::Backwards { from: 5, to: 4 })
    ));
    assert!(matches!(
        sys.advance_to(u64::MAX, &mut Silent),
        Err(controlsim::StepError::TimeOverflow { .. })
    ));
    assert_eq!(sys.k(), 5);
    assert_eq!(sys.loops()[0].held_control(), &[0.0]);
}

/// A diverging plant stops the run with an error naming the loop and state.
#[test]
fn non_finite_state_is_reported() {
    let plant: PlantConfig = toml::from_str(
        "kind = \"state_space\"\na = [[800.0]]\nb = [[1.0]]\nc = [[1.0]]\nx0 = [1.0]",
    )
    .unwrap();
    let mut sys = System::from_specs(
        SimTime::from_millis(1),
        SolverKind::Euler,
        vec![spec(
            PlantModel::from_config(&KeyPath::key("plant"), &plant).unwrap(),
        )],
        0,
    )
    .unwrap();
    let err = sys.advance_to(10_000, &mut Silent).unwrap_err();
    match &err {
        controlsim::StepError::NonFinite {
            loop_name,
            state,
            step,
            ..
        } => {
            assert_eq!((loop_name.as_str(), state.as_str()), ("p", "x0"));
            assert_eq!(*step, sys.k());
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("unstable"), "{err}");
}
