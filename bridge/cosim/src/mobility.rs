//! Plant-driven node mobility (docs/design.md §6.3): which plant states move a loop's
//! node, and the node's position and velocity at a sync.
//!
//! A vehicle brings its own position and speed. Any other plant moves its
//! node only when the scenario names the states (`mobility.position`, and
//! optionally `mobility.velocity`), e.g. a cart's `x` and `v` or a bouncing
//! ball's `h` and `v` with a vertical heading.

mod drift;

use controlsim::{ActuatorConfig, Loop, PerChannel, PlantModel, System};
use protocol::NodeKinematics;

use crate::config::{KeyPath, Mobility, Resolved, ScenarioError};
use drift::{DriftBound, Model};

/// Where a node's position and speed come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// The plant's own kinematics (vehicles).
    Plant,
    /// Plant states by index; without a velocity state the node rests
    /// between syncs.
    States {
        position: usize,
        velocity: Option<usize>,
    },
}

/// A node moved along a straight path: `origin + position * heading`,
/// and what bounds its drift from the network's extrapolation. Shared by
/// the loops' plants ([`NodeMotion`]) and graph components
/// ([`crate::graph_mobility`]), whatever supplies the position and speed.
#[derive(Clone, Debug, PartialEq)]
pub struct NodePath {
    pub node: u32,
    origin: [f64; 3],
    heading: [f64; 3],
    /// What bounds the node's drift from the network's straight line, when
    /// anything does (the plant's model with a saturated input, or bounds
    /// the scenario declares).
    drift: Option<DriftBound>,
}

impl NodePath {
    /// A path with only the declared bounds of `mobility` (no model);
    /// `extrapolated` when the network is given a speed. `None` for the
    /// drift when nothing bounds it.
    pub fn declared(node: u32, mobility: &Mobility, extrapolated: bool) -> Self {
        NodePath {
            node,
            origin: mobility.origin,
            heading: mobility.heading,
            drift: DriftBound::new(
                None,
                mobility.max_speed,
                mobility.max_acceleration,
                extrapolated,
            ),
        }
    }

    /// A path whose drift the model of the library `plant` bounds as well
    /// as the declared bounds of `mobility`, when the node is moved by the
    /// plant's position state (0) and velocity state (1, if `extrapolated`)
    /// and its one input is saturated to `limits` (a loop's actuator, or a
    /// graph's actuator component driving the plant): the bound a loop
    /// derives. Without `limits`, or for another plant, as
    /// [`NodePath::declared`].
    pub fn of_library_plant(
        node: u32,
        mobility: &Mobility,
        extrapolated: bool,
        plant: &PlantModel,
        limits: Option<(f64, f64)>,
    ) -> Self {
        let model = limits
            .filter(|(lo, hi)| lo.is_finite() && hi.is_finite() && lo <= hi)
            .and_then(|limits| library_model(plant, limits));
        NodePath {
            node,
            origin: mobility.origin,
            heading: mobility.heading,
            drift: DriftBound::new(
                model,
                mobility.max_speed,
                mobility.max_acceleration,
                extrapolated,
            ),
        }
    }

    /// Whether something bounds the drift (a tolerance can be kept).
    pub fn is_bounded(&self) -> bool {
        self.drift.is_some()
    }

    /// The node at `position` along the heading, moving at `speed`.
    pub fn kinematics(&self, position: f64, speed: f64) -> NodeKinematics {
        NodeKinematics {
            node: self.node,
            position: std::array::from_fn(|d| self.origin[d] + position * self.heading[d]),
            velocity: self.heading.map(|h| speed * h),
        }
    }

    /// The farthest (metres) the node can get within `seconds` from the
    /// straight line the network extrapolates from a sync now, at plant
    /// state `x` (what a model bound reads) and `speed`; `None` when
    /// nothing bounds it.
    pub fn max_drift(&self, x: &[f64], speed: f64, seconds: f64) -> Option<f64> {
        let bound = self.drift.as_ref()?;
        let scale = self.heading.iter().map(|h| h * h).sum::<f64>().sqrt();
        Some(scale * bound.max_drift(x, speed, seconds))
    }
}

/// How one loop's plant moves its node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeMotion {
    /// Index of the loop whose plant moves the node.
    pub loop_index: usize,
    pub node: u32,
    path: NodePath,
    source: Source,
}

impl NodeMotion {
    /// The node's position and velocity for the plant's current state.
    pub fn kinematics(&self, plant: &Loop) -> NodeKinematics {
        let (position, speed) = self.along_path(plant);
        self.path.kinematics(position, speed)
    }

    /// The position along the heading and the speed the network is given.
    fn along_path(&self, plant: &Loop) -> (f64, f64) {
        match self.source {
            Source::Plant => plant
                .kinematics()
                .map_or((0.0, 0.0), |k| (k.position, k.velocity)),
            Source::States { position, velocity } => {
                let x = plant.state();
                (x[position], velocity.map_or(0.0, |v| x[v]))
            }
        }
    }

    /// The farthest (metres) the node can get from the straight line the
    /// network extrapolates from a sync now, within `seconds`; `None` when
    /// nothing bounds the plant's acceleration (then it must sync every
    /// period). See [`drift`] for the bound.
    pub fn max_drift(&self, plant: &Loop, seconds: f64) -> Option<f64> {
        let (_, speed) = self.along_path(plant);
        self.path.max_drift(plant.state(), speed, seconds)
    }
}

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
        let model = model_bound(source, plant.plant(), &resolved.system.loops[i].actuator);
        let extrapolated = match source {
            Source::Plant => true,
            Source::States { velocity, .. } => velocity.is_some(),
        };
        let drift = DriftBound::new(
            model,
            mobility.max_speed,
            mobility.max_acceleration,
            extrapolated,
        );
        if drift.is_none() && !resolved.scenario.sync.position_tolerance.is_zero() {
            return Err(unbounded(i, plant.plant(), extrapolated, mobility));
        }
        motions.push(NodeMotion {
            loop_index: i,
            node: network.plant_node,
            path: NodePath {
                node: network.plant_node,
                origin: mobility.origin,
                heading: mobility.heading,
                drift,
            },
            source,
        });
    }
    Ok(motions)
}

/// What the model of a library plant bounds, given its actuator: the
/// position must be the plant's position state (0) and the velocity, if any,
/// its velocity state (1), for which `p' = v`.
fn model_bound(source: Source, plant: &PlantModel, actuator: &ActuatorConfig) -> Option<Model> {
    let states_fit = match source {
        Source::Plant => matches!(plant, PlantModel::Vehicle(_)),
        Source::States { position, velocity } => {
            position == 0 && matches!(velocity, None | Some(1))
        }
    };
    if !states_fit {
        return None;
    }
    library_model(plant, input_limits(actuator)?)
}

/// The model bound of a library plant (vehicle, dc_servo,
/// mass_spring_damper without external force, bouncing_ball) whose one
/// input is saturated to `[u_min, u_max]`, for a node moved by its position
/// state (0) and, if any, its velocity state (1); `None` for other plants.
fn library_model(plant: &PlantModel, (u_min, u_max): (f64, f64)) -> Option<Model> {
    let u_abs = u_min.abs().max(u_max.abs());
    match plant {
        PlantModel::Vehicle(vehicle) => {
            let p = vehicle.params();
            Some(Model::Vehicle {
                engine_lag: p.engine_lag,
                drag: p.drag,
                u_min,
                u_max,
            })
        }
        PlantModel::DcServo(servo) => {
            let p = servo.params();
            Some(Model::DcServo {
                gain: p.torque_constant / (p.resistance * p.inertia),
                damping: (p.viscous_friction
                    + p.torque_constant * p.back_emf_constant / p.resistance)
                    / p.inertia,
                coulomb: p.coulomb_friction / p.inertia,
                u_abs,
            })
        }
        PlantModel::MassSpringDamper(msd) => {
            let p = msd.params();
            // An external force signal may grow without bound (a ramp).
            p.external_force
                .is_none()
                .then_some(Model::MassSpringDamper {
                    mass: p.mass,
                    damping: p.damping,
                    stiffness: p.stiffness,
                    u_abs,
                })
        }
        PlantModel::BouncingBall(ball) => {
            let p = ball.params();
            Some(Model::BouncingBall {
                a_lo: -p.gravity + u_min / p.mass,
                a_hi: -p.gravity + u_max / p.mass,
            })
        }
        _ => None,
    }
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

/// The saturation limits of a one-input actuator, when both are set.
fn input_limits(actuator: &ActuatorConfig) -> Option<(f64, f64)> {
    let single = |limit: &Option<PerChannel>| match limit.as_ref()? {
        PerChannel::All(x) => Some(*x),
        PerChannel::Each(v) if v.len() == 1 => Some(v[0]),
        PerChannel::Each(_) => None,
    };
    let (lo, hi) = (single(&actuator.min)?, single(&actuator.max)?);
    (lo.is_finite() && hi.is_finite() && lo <= hi).then_some((lo, hi))
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
        let resolved = Scenario::from_toml(&text)
            .unwrap_or_else(|e| panic!("{e}"))
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
        let k = m[0].kinematics(&system.loops()[0]);
        assert_eq!(
            (k.node, k.position, k.velocity),
            (0, [1.0, 2.5, 3.0], [0.0, 2.0, 0.0])
        );
        // Without a velocity state the node rests between syncs.
        let (m, system) = motions(SERVO, r#"mobility = { position = "omega" }"#).unwrap();
        let k = m[0].kinematics(&system.loops()[0]);
        assert_eq!((k.position, k.velocity), ([2.0, 0.0, 0.0], [0.0; 3]));
    }

    #[test]
    fn a_vehicle_brings_its_own_position_and_speed() {
        let (m, system) = motions("kind = \"vehicle\"\nx0 = [7.0, 3.0, 0.0]", "").unwrap();
        let k = m[0].kinematics(&system.loops()[0]);
        assert_eq!((k.position, k.velocity), ([7.0, 0.0, 0.0], [3.0, 0.0, 0.0]));
        let (m, _) = motions("kind = \"vehicle\"", "mobility = { enabled = false }").unwrap();
        assert!(m.is_empty());
    }

    #[test]
    fn a_saturated_input_bounds_the_drift_of_a_library_plant() {
        let car = "kind = \"vehicle\"\nx0 = [0.0, 20.0, 0.0]";
        let limited = format!("{car}\n[loops.actuator]\nmin = -5.0\nmax = 3.0");
        let (m, system) = motions(&limited, "").unwrap();
        let bound = m[0].max_drift(&system.loops()[0], 0.08).unwrap();
        // A cruising car (a = 0): 8 m/s^2 of input range through a 0.1 s lag.
        assert!(
            (bound - 8.0 * 0.08f64.powi(3) / 0.6).abs() < 1e-12,
            "{bound}"
        );
        let (m, system) = motions(car, "").unwrap();
        assert_eq!(m[0].max_drift(&system.loops()[0], 0.08), None);
        let (m, system) = motions(SERVO, r#"mobility = { position = "theta" }"#).unwrap();
        assert_eq!(m[0].max_drift(&system.loops()[0], 0.08), None);
        // A servo turning at 2 rad/s whose voltage is limited: resting
        // between syncs, the node drifts with the servo's speed.
        let servo = format!("{SERVO}\n[loops.actuator]\nmin = -1.0\nmax = 1.0");
        let (m, system) = motions(&servo, r#"mobility = { position = "theta" }"#).unwrap();
        let bound = m[0].max_drift(&system.loops()[0], 0.01).unwrap();
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
        assert!(m[0].max_drift(&system.loops()[0], 0.01).unwrap() < bound / 10.0);
        // The model's bound needs the position state to be the position.
        let (m, system) = motions(&servo, r#"mobility = { position = "omega" }"#).unwrap();
        assert_eq!(m[0].max_drift(&system.loops()[0], 0.01), None);
        // A declared bound serves any plant.
        let (m, system) = motions(
            SERVO,
            r#"mobility = { position = "omega", max_speed = 3.0 }"#,
        )
        .unwrap();
        assert_eq!(m[0].max_drift(&system.loops()[0], 0.5), Some(1.5));
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
