//! Plant-driven node mobility (docs/design.md §6.3): which plant states move a loop's
//! node, and the node's position and velocity at a sync.
//!
//! A vehicle brings its own position and speed. Any other plant moves its
//! node only when the scenario names the states (`mobility.position`, and
//! optionally `mobility.velocity`), e.g. a cart's `x` and `v` or a bouncing
//! ball's `h` and `v` with a vertical heading. The application settles a
//! loop's [`Source`] against the built plant (naming the key of a state the
//! plant lacks) and makes the [`NodeMotion`] here.

mod drift;
mod graph;

pub use graph::{Element, GraphNodeMotion};

use controlsim::{ActuatorConfig, LoopView, PerChannel, PlantModel};
use protocol::NodeKinematics;

use crate::resolved::Mobility;
use drift::{DriftBound, Model};

/// Where a node's position and speed come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
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
/// (bridge's `graph_mobility`), whatever supplies the position and speed.
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

impl Source {
    /// Whether the network is given a speed to extrapolate the node with
    /// (otherwise the node rests between syncs).
    pub fn extrapolated(self) -> bool {
        match self {
            Source::Plant => true,
            Source::States { velocity, .. } => velocity.is_some(),
        }
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
    /// Loop `loop_index`'s plant moving `node` from `source` along the path
    /// of `mobility`, its drift bounded by the plant's model (its input
    /// saturated by `actuator`) and the declared bounds, where they can.
    pub fn new(
        loop_index: usize,
        node: u32,
        mobility: &Mobility,
        source: Source,
        plant: &PlantModel,
        actuator: &ActuatorConfig,
    ) -> Self {
        let model = model_bound(source, plant, actuator);
        let drift = DriftBound::new(
            model,
            mobility.max_speed,
            mobility.max_acceleration,
            source.extrapolated(),
        );
        NodeMotion {
            loop_index,
            node,
            path: NodePath {
                node,
                origin: mobility.origin,
                heading: mobility.heading,
                drift,
            },
            source,
        }
    }

    /// Whether something bounds the node's drift (a tolerance can be kept).
    pub fn is_bounded(&self) -> bool {
        self.path.is_bounded()
    }

    /// The node's position and velocity for the plant's current state, in
    /// `loops` (a system, or the graph its loops expand into).
    pub fn kinematics<V: LoopView + ?Sized>(&self, loops: &V) -> NodeKinematics {
        let (position, speed) = self.along_path(loops);
        self.path.kinematics(position, speed)
    }

    /// The position along the heading and the speed the network is given.
    fn along_path<V: LoopView + ?Sized>(&self, loops: &V) -> (f64, f64) {
        let i = self.loop_index;
        match self.source {
            Source::Plant => loops
                .kinematics(i)
                .map_or((0.0, 0.0), |k| (k.position, k.velocity)),
            Source::States { position, velocity } => {
                let x = loops.plant_state(i);
                (x[position], velocity.map_or(0.0, |v| x[v]))
            }
        }
    }

    /// The farthest (metres) the node can get from the straight line the
    /// network extrapolates from a sync now, within `seconds`; `None` when
    /// nothing bounds the plant's acceleration (then it must sync every
    /// period). See [`drift`] for the bound.
    pub fn max_drift<V: LoopView + ?Sized>(&self, loops: &V, seconds: f64) -> Option<f64> {
        let (_, speed) = self.along_path(loops);
        self.path
            .max_drift(loops.plant_state(self.loop_index), speed, seconds)
    }
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
