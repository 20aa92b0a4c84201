//! The loops' node mobility settled against the built system: which plant
//! states move each loop's node (netloop-cosim's [`NodeMotion`]), or the key
//! of a `mobility` table the plant cannot serve. A graph's is
//! [`crate::graph_mobility`].

use controlsim::{Loop, PlantModel, System};
use netloop_cosim::mobility::{NodeMotion, Source};

use crate::config::{KeyPath, Mobility, Resolved, ScenarioError};

/// The nodes that the plants of `resolved` move, settled against the built
/// `system` (state names, whether a plant has a position of its own).
///
/// # Errors
/// A state name the plant does not have, or a `mobility` table with an
/// origin or heading on a plant that has no position and names none.
pub fn node_motions(
    resolved: &Resolved,
    system: &System,
) -> Result<Vec<NodeMotion>, ScenarioError> {
    let mut motions = Vec::new();
    for (i, (network, plant)) in resolved.loops.iter().zip(system.loops()).enumerate() {
        let Some(mobility) = &network.mobility else {
            continue;
        };
        let Some(source) = source(i, mobility, plant)? else {
            continue;
        };
        let motion = NodeMotion::new(
            i,
            network.plant_node,
            mobility,
            source,
            plant.plant(),
            &resolved.system.loops[i].actuator,
        );
        if !motion.is_bounded() && !resolved.scenario.sync.position_tolerance.is_zero() {
            return Err(unbounded(i, plant.plant(), source.extrapolated(), mobility));
        }
        motions.push(motion);
    }
    Ok(motions)
}

/// Why a tolerance cannot be kept for loop `i`, and what would bound it.
fn unbounded(
    i: usize,
    plant: &PlantModel,
    extrapolated: bool,
    mobility: &Mobility,
) -> ScenarioError {
    let kind = match plant {
        PlantModel::Vehicle(_) => Some("vehicle"),
        PlantModel::DcServo(_) => Some("dc_servo"),
        PlantModel::MassSpringDamper(_) => Some("mass_spring_damper"),
        PlantModel::BouncingBall(_) => Some("bouncing_ball"),
        _ => None,
    };
    let declare = if extrapolated {
        format!("declare loops[{i}].mobility.max_speed or max_acceleration")
    } else if mobility.max_acceleration.is_some() {
        format!(
            "loops[{i}].mobility.max_acceleration needs a `velocity` state (the node rests \
             between syncs, so its drift grows with its speed): declare max_speed"
        )
    } else {
        format!("declare loops[{i}].mobility.max_speed")
    };
    let model = match kind {
        Some("mass_spring_damper") => format!(
            "a mass_spring_damper is bounded only with actuator `min` and `max`, no \
             external_force, position `x` and velocity `v`; or {declare}"
        ),
        Some(kind) => format!(
            "a {kind} is bounded only with loops[{i}].actuator `min` and `max` (one \
             channel) and its own position and velocity states; or {declare}"
        ),
        None => format!("netloop derives no bound for this plant: {declare}"),
    };
    ScenarioError::new(
        "sync.position_tolerance",
        format!(
            "nothing bounds how far loops[{i}]'s moving node can drift from the network's \
             straight line between syncs: {model}"
        ),
    )
}

fn source(i: usize, mobility: &Mobility, plant: &Loop) -> Result<Option<Source>, ScenarioError> {
    let states = &plant.signature().states;
    let state = |field: &str, name: &str| {
        states.iter().position(|s| s == name).ok_or_else(|| {
            ScenarioError::new(
                KeyPath::key("loops").at(i).and("mobility").and(field),
                format!(
                    "the plant has no state `{name}`; its states are {}",
                    states.join(", ")
                ),
            )
        })
    };
    if let Some(name) = &mobility.position {
        let position = state("position", name)?;
        let velocity = mobility
            .velocity
            .as_deref()
            .map(|v| state("velocity", v))
            .transpose()?;
        return Ok(Some(Source::States { position, velocity }));
    }
    if plant.kinematics().is_some() {
        return Ok(Some(Source::Plant));
    }
    if mobility.placed {
        return Err(ScenarioError::new(
            KeyPath::key("loops").at(i).and("mobility"),
            format!(
                "this plant has no position of its own: name the state that moves the node with \
                 `position` (and `velocity`); its states are {}",
                states.join(", ")
            ),
        ));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;

    /// One loop of `plant` over the builtin channel, with `mobility` keys
    /// and `sync_extra` lines in `[sync]`.
    fn motions_with(
        plant: &str,
        mobility: &str,
        sync_extra: &str,
    ) -> Result<(Vec<NodeMotion>, System), ScenarioError> {
        let text = format!(
            r#"
duration = "1s"
step = "1ms"
[sync]
scheme = "master_slave"
period = "10ms"
{sync_extra}
[network]
backend = "builtin"
[network.builtin]
delay = {{ kind = "constant", value = "1ms" }}
[[loops]]
name = "l"
plant_node = 0
controller_node = 1
{mobility}
[loops.plant]
{plant}
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "open_loop"
"#
        );
        // A bad value is refused where the file is read, or when resolving.
        let resolved = Scenario::from_toml(&text)
            .map_err(|e| match e {
                crate::scenario_file::LoadError::Invalid(e) => *e,
                other => panic!("{other}"),
            })?
            .resolve()?;
        let system = System::from_config(&resolved.system, 1).unwrap();
        Ok((node_motions(&resolved, &system)?, system))
    }

    /// One loop of `plant` over the builtin channel, with `mobility` keys.
    fn motions(plant: &str, mobility: &str) -> Result<(Vec<NodeMotion>, System), ScenarioError> {
        motions_with(plant, mobility, "")
    }

    const SERVO: &str = "kind = \"dc_servo\"\nx0 = [0.5, 2.0]";

    #[test]
    fn named_states_move_the_node_along_the_heading_from_the_origin() {
        let (m, system) =
            motions(SERVO, r#"mobility = { position = "theta", velocity = "omega", origin = [1.0, 2.0, 3.0], heading = [0.0, 2.0, 0.0] }"#)
                .unwrap();
        let k = m[0].kinematics(&system);
        assert_eq!(
            (k.node, k.position, k.velocity),
            (0, [1.0, 2.5, 3.0], [0.0, 2.0, 0.0])
        );
        // Without a velocity state the node rests between syncs.
        let (m, system) = motions(SERVO, r#"mobility = { position = "omega" }"#).unwrap();
        let k = m[0].kinematics(&system);
        assert_eq!((k.position, k.velocity), ([2.0, 0.0, 0.0], [0.0; 3]));
    }

    #[test]
    fn a_vehicle_brings_its_own_position_and_speed() {
        let (m, system) = motions("kind = \"vehicle\"\nx0 = [7.0, 3.0, 0.0]", "").unwrap();
        let k = m[0].kinematics(&system);
        assert_eq!((k.position, k.velocity), ([7.0, 0.0, 0.0], [3.0, 0.0, 0.0]));
        let (m, _) = motions("kind = \"vehicle\"", "mobility = { enabled = false }").unwrap();
        assert!(m.is_empty());
    }

    #[test]
    fn a_saturated_input_bounds_the_drift_of_a_library_plant() {
        let car = "kind = \"vehicle\"\nx0 = [0.0, 20.0, 0.0]";
        let limited = format!("{car}\n[loops.actuator]\nmin = -5.0\nmax = 3.0");
        let (m, system) = motions(&limited, "").unwrap();
        let bound = m[0].max_drift(&system, 0.08).unwrap();
        // A cruising car (a = 0): 8 m/s^2 of input range through a 0.1 s lag.
        assert!(
            (bound - 8.0 * 0.08f64.powi(3) / 0.6).abs() < 1e-12,
            "{bound}"
        );
        let (m, system) = motions(car, "").unwrap();
        assert_eq!(m[0].max_drift(&system, 0.08), None);
        let (m, system) = motions(SERVO, r#"mobility = { position = "theta" }"#).unwrap();
        assert_eq!(m[0].max_drift(&system, 0.08), None);
        // A servo turning at 2 rad/s whose voltage is limited: resting
        // between syncs, the node drifts with the servo's speed.
        let servo = format!("{SERVO}\n[loops.actuator]\nmin = -1.0\nmax = 1.0");
        let (m, system) = motions(&servo, r#"mobility = { position = "theta" }"#).unwrap();
        let bound = m[0].max_drift(&system, 0.01).unwrap();
        assert!(
            bound >= 2.0 * 0.01 * 0.9 && bound <= 2.0 * 0.01 * 1.1,
            "{bound}"
        );
        // The velocity state extrapolates it: far less drift.
        let (m, system) = motions(
            &servo,
            r#"mobility = { position = "theta", velocity = "omega" }"#,
        )
        .unwrap();
        assert!(m[0].max_drift(&system, 0.01).unwrap() < bound / 10.0);
        // The model's bound needs the position state to be the position.
        let (m, system) = motions(&servo, r#"mobility = { position = "omega" }"#).unwrap();
        assert_eq!(m[0].max_drift(&system, 0.01), None);
        // A declared bound serves any plant.
        let (m, system) = motions(
            SERVO,
            r#"mobility = { position = "omega", max_speed = 3.0 }"#,
        )
        .unwrap();
        assert_eq!(m[0].max_drift(&system, 0.5), Some(1.5));
    }

    /// `motions` with a tolerance in `[sync]`.
    fn tolerant(plant: &str, mobility: &str) -> Result<Vec<NodeMotion>, ScenarioError> {
        Ok(motions_with(plant, mobility, "position_tolerance = \"1cm\"")?.0)
    }

    #[test]
    fn a_tolerance_without_a_bound_is_refused_naming_the_key_and_the_remedy() {
        let e = tolerant("kind = \"vehicle\"", "").unwrap_err();
        assert_eq!(e.key.to_string(), "sync.position_tolerance");
        assert!(
            e.message.contains("loops[0]")
                && e.message.contains("actuator `min` and `max`")
                && e.message.contains("max_speed"),
            "{}",
            e.message
        );
        let e = tolerant(
            SERVO,
            r#"mobility = { position = "theta", max_acceleration = 1.0 }"#,
        )
        .unwrap_err();
        assert!(
            e.message
                .contains("max_acceleration needs a `velocity` state"),
            "{}",
            e.message
        );
        let forced = "kind = \"mass_spring_damper\"\nexternal_force = { kind = \"constant\", value = 1.0 }\n[loops.actuator]\nmin = -1.0\nmax = 1.0";
        let e = tolerant(forced, r#"mobility = { position = "x", velocity = "v" }"#).unwrap_err();
        assert!(e.message.contains("no external_force"), "{}", e.message);
        // Bounded by the model, or declared: accepted.
        let limited = "kind = \"vehicle\"\n[loops.actuator]\nmin = -5.0\nmax = 3.0";
        assert!(tolerant(limited, "").is_ok());
        assert!(tolerant(
            SERVO,
            r#"mobility = { position = "theta", max_speed = 1.0 }"#
        )
        .is_ok());
        // A plant that moves no node needs no bound.
        assert!(tolerant(SERVO, "").is_ok());
    }

    #[test]
    fn declared_bounds_are_finite_and_not_negative() {
        for (key, value) in [("max_speed", "-1.0"), ("max_acceleration", "nan")] {
            let e = motions(
                SERVO,
                &format!("mobility = {{ position = \"theta\", {key} = {value} }}"),
            )
            .unwrap_err();
            assert_eq!(e.key.to_string(), format!("loops[0].mobility.{key}"));
        }
    }

    #[test]
    fn a_plant_without_a_position_stays_put_unless_told_otherwise() {
        assert!(motions(SERVO, "").unwrap().0.is_empty());
        let e = motions(SERVO, "mobility = { origin = [5.0, 0.0, 0.0] }").unwrap_err();
        assert_eq!(e.key.to_string(), "loops[0].mobility");
        assert!(e.message.contains("theta, omega"), "{}", e.message);
    }

    #[test]
    fn unknown_state_names_are_errors_naming_the_key_and_the_states() {
        let e = motions(SERVO, r#"mobility = { position = "x" }"#).unwrap_err();
        assert_eq!(e.key.to_string(), "loops[0].mobility.position");
        assert!(
            e.message.contains("no state `x`") && e.message.contains("theta, omega"),
            "{}",
            e.message
        );
        let e = motions(
            SERVO,
            r#"mobility = { position = "theta", velocity = "v" }"#,
        )
        .unwrap_err();
        assert_eq!(e.key.to_string(), "loops[0].mobility.velocity");
        let e = motions(SERVO, r#"mobility = { velocity = "omega" }"#).unwrap_err();
        assert_eq!(e.key.to_string(), "loops[0].mobility.velocity");
    }
}
