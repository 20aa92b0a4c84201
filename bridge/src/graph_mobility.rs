//! Graph components that move their node (issue 11): a component's
//! `mobility` table names the output elements that are the node's position
//! (and speed) along a straight path, with the keys and meaning of a loop's
//! `mobility` table ([`crate::mobility`], whose [`NodePath`] this reuses).
//!
//! ```toml
//! [[components]]
//! name = "car"
//! node = 1
//! mobility = { position = "car.x[0]", velocity = "car.x[1]", max_speed = 40.0 }
//! ```
//!
//! Any component with outputs can drive its node (a plant, an equation or
//! block component, an FMU): the elements are read after the boundary's
//! evaluation, so the network sees the same positions a loop's plant state
//! gives it. A node has at most one driver. `[sync] position_tolerance`
//! needs a bound on the drift from the network's straight line: declared
//! `max_speed` / `max_acceleration`, or the bound a loop derives from its
//! plant's model ([`crate::mobility`]) when the elements are a library
//! plant component's own position and velocity states and an actuator
//! component with `min` and `max` drives its input.

use controlsim::graph::{Graph, PortAddress};
use controlsim::{PerChannel, PlantModel};

use crate::config::{bad, resolve_mobility, KeyPath, ScenarioError};
use crate::graph_scenario::{GraphScenario, NodeName};
use crate::mobility::NodePath;
pub use netloop_cosim::mobility::{Element, GraphNodeMotion};

/// The nodes the components of `s` move, checked against the built graph.
///
/// # Errors
/// The key of the first bad `mobility` table: a scenario without a
/// `[network]`, a reference that is not one output element of a component
/// on the same node, a second driver of a node, or a
/// `position_tolerance` that nothing bounds (neither the model, as for a
/// loop's plant, nor declared bounds).
pub fn node_motions(
    s: &GraphScenario,
    graph: &Graph,
) -> Result<Vec<GraphNodeMotion>, ScenarioError> {
    let mut motions: Vec<GraphNodeMotion> = Vec::new();
    let mut drivers: Vec<(u32, KeyPath)> = Vec::new();
    for (i, c) in s.components.iter().enumerate() {
        let Some(config) = &c.mobility else {
            continue;
        };
        let key = KeyPath::key("components").at(i).and("mobility");
        let Some(mobility) = resolve_mobility(config, &key)? else {
            continue;
        };
        let Some(sync) = s.network.as_ref().and(s.sync.as_ref()) else {
            return Err(bad(
                key,
                "moves a node of the network: the scenario needs a [network] and a [sync] table",
            ));
        };
        let Some(NodeName::Index(node)) = c.node else {
            return Err(bad(
                KeyPath::key("components").at(i).and("node"),
                "a component with `mobility` must sit on a network node (an index)",
            ));
        };
        if let Some((_, other)) = drivers.iter().find(|(n, _)| *n == node) {
            return Err(bad(
                key,
                format!("node {node} is moved by {other} already: a node has one driver"),
            ));
        }
        let element = |field: &str, text: &str| {
            element_on_node(s, graph, node, text).map_err(|m| bad(key.child(field), m))
        };
        let Some(position) = &mobility.position else {
            return Err(bad(
                key.child("position"),
                "name the output element that is the node's position along `heading`, \
                 e.g. \"car.x[0]\"",
            ));
        };
        let position = element("position", position)?;
        let velocity = mobility
            .velocity
            .as_deref()
            .map(|v| element("velocity", v))
            .transpose()?;
        let extrapolated = velocity.is_some();
        let plant = library_plant(s, graph, position, velocity);
        let path = match &plant {
            Some(p) => {
                NodePath::of_library_plant(node, &mobility, extrapolated, &p.model, p.limits)
            }
            None => NodePath::declared(node, &mobility, extrapolated),
        };
        if !path.is_bounded() && !sync.position_tolerance.is_zero() {
            let declare = if velocity.is_none() && mobility.max_acceleration.is_some() {
                format!(
                    "{key}.max_acceleration needs a `velocity` (the node rests between syncs, \
                     so its drift grows with its speed): declare max_speed"
                )
            } else if velocity.is_some() {
                format!("declare {key}.max_speed or max_acceleration")
            } else {
                format!("declare {key}.max_speed")
            };
            return Err(bad(
                "sync.position_tolerance",
                format!(
                    "nothing bounds how far the node components[{i}] moves can drift from the \
                     network's straight line between syncs: netloop derives a bound for a \
                     vehicle, dc_servo, mass_spring_damper (without external_force) or \
                     bouncing_ball component moved by its own position and velocity states, \
                     whose input `u` an actuator component with `min` and `max` drives; or \
                     {declare}"
                ),
            ));
        }
        drivers.push((node, key));
        motions.push(GraphNodeMotion::new(
            graph
                .component_index(&c.name)
                .expect("every component is in the graph"),
            path,
            (position, velocity),
            plant.map(|p| p.component),
        ));
    }
    Ok(motions)
}

/// A library plant component that moves a node by its own states.
struct LibraryPlant {
    /// Its index in the graph.
    component: usize,
    model: PlantModel,
    /// The saturation of its one input, when an actuator component with
    /// `min` and `max` drives it.
    limits: Option<(f64, f64)>,
}

/// The plant component whose own position state (0) `position` is, and
/// whose velocity state (1) `velocity` is (if any), as a loop's model
/// bound needs them ([`NodePath::of_library_plant`]): an element of its `y`
/// (the state it selects) or, for a vehicle, of its `motion` (position,
/// velocity). `None` for any other element or component.
fn library_plant(
    s: &GraphScenario,
    graph: &Graph,
    position: Element,
    velocity: Option<Element>,
) -> Option<LibraryPlant> {
    let c = position.0;
    if velocity.is_some_and(|v| v.0 != c) {
        return None;
    }
    let scenario = s
        .components
        .iter()
        .find(|x| graph.component_index(&x.name) == Some(c))?;
    let model = PlantModel::from_config(&KeyPath::key("plant"), scenario.plant.as_ref()?).ok()?;
    let declaration = graph.declaration(c);
    let state = |(_, p, e): Element| {
        let port = &declaration.outputs[p];
        match port.name.as_str() {
            "y" => declaration
                .states
                .iter()
                .position(|name| Some(name) == port.elements.get(e)),
            // position, velocity, acceleration, length: x[0], x[1], ...
            "motion" if matches!(model, PlantModel::Vehicle(_)) && e < 2 => Some(e),
            _ => None,
        }
    };
    let fits = state(position) == Some(0) && velocity.map_or(true, |v| state(v) == Some(1));
    if !fits {
        return None;
    }
    Some(LibraryPlant {
        component: c,
        limits: input_limits(s, graph, &scenario.name),
        model,
    })
}

/// The saturation `(min, max)` of what drives the one-element input `u` of
/// plant component `plant`, when that is an output element of an actuator
/// component with finite `min` and `max` for that channel.
fn input_limits(s: &GraphScenario, graph: &Graph, plant: &str) -> Option<(f64, f64)> {
    let driver = s.connections.iter().find_map(|conn| {
        let to = PortAddress::parse(&conn.to).ok()?;
        (to.component == plant && to.port == "u").then(|| PortAddress::parse(&conn.from).ok())?
    })?;
    let actuator = s
        .components
        .iter()
        .find(|x| x.name == driver.component)?
        .actuator
        .as_ref()?;
    if driver.port != "u" {
        return None;
    }
    let c = graph.component_index(&driver.component)?;
    let p = graph.output_index(c, "u")?;
    let channels = driver.range(graph.output(c, p).len())?;
    if channels.len() != 1 {
        return None;
    }
    let channel = |limit: &Option<PerChannel>| match limit.as_ref()? {
        PerChannel::All(x) => Some(*x),
        PerChannel::Each(v) => v.get(channels.start).copied(),
    };
    let (lo, hi) = (channel(&actuator.min)?, channel(&actuator.max)?);
    (lo.is_finite() && hi.is_finite() && lo <= hi).then_some((lo, hi))
}

/// `text` as one output element of a component on `node`.
fn element_on_node(
    s: &GraphScenario,
    graph: &Graph,
    node: u32,
    text: &str,
) -> Result<Element, String> {
    let address = PortAddress::parse(text)?;
    let scenario = s
        .components
        .iter()
        .find(|c| c.name == address.component)
        .ok_or_else(|| format!("\"{text}\": there is no component `{}`", address.component))?;
    if scenario.node != Some(NodeName::Index(node)) {
        return Err(format!(
            "\"{text}\": `{}` is on node {}, not on node {node} that it would move",
            address.component,
            scenario.node()
        ));
    }
    let c = graph
        .component_index(&address.component)
        .ok_or_else(|| format!("\"{text}\": there is no component `{}`", address.component))?;
    let p = graph.output_index(c, &address.port).ok_or_else(|| {
        format!(
            "\"{text}\": `{}` has no output port `{}`",
            address.component, address.port
        )
    })?;
    let size = graph.output(c, p).len();
    match address.range(size) {
        Some(r) if r.len() == 1 => Ok((c, p, r.start)),
        Some(_) => Err(format!(
            "\"{text}\": name one element, e.g. \"{}.{}[0]\" (the port has {size})",
            address.component, address.port
        )),
        None => Err(format!(
            "\"{text}\": the port has {size} element(s), from 0 to {}",
            size.saturating_sub(1)
        )),
    }
}
