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
//! gives it. A node has at most one driver. The drift from the network's
//! straight line is bounded only by declared `max_speed` /
//! `max_acceleration` (a graph component's inputs are not known to be
//! saturated), which `[sync] position_tolerance` needs.

use controlsim::graph::{Graph, PortAddress};
use protocol::NodeKinematics;

use crate::config::{resolve_mobility, SchemeKind, ScenarioError};
use crate::graph_scenario::{GraphScenario, NodeName};
use crate::mobility::NodePath;

/// One output element of the graph: component, port, element.
type Element = (usize, usize, usize);

/// How one graph component's outputs move its node.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphNodeMotion {
    /// Index (in the graph) of the component whose table this is.
    pub component: usize,
    path: NodePath,
    position: Element,
    velocity: Option<Element>,
}

impl GraphNodeMotion {
    pub fn node(&self) -> u32 {
        self.path.node
    }

    /// Position along the path and speed, from the last evaluation.
    fn along_path(&self, graph: &Graph) -> (f64, f64) {
        let read = |(c, p, e): Element| graph.output(c, p)[e];
        (read(self.position), self.velocity.map_or(0.0, read))
    }

    /// The node's position and velocity for the outputs of the boundary
    /// evaluated last.
    pub fn kinematics(&self, graph: &Graph) -> NodeKinematics {
        let (position, speed) = self.along_path(graph);
        self.path.kinematics(position, speed)
    }

    /// The farthest (metres) the node can get from the network's straight
    /// line within `seconds` of a sync now (see
    /// [`crate::mobility::NodeMotion::max_drift`]); `None` when nothing
    /// bounds it.
    pub fn max_drift(&self, graph: &Graph, seconds: f64) -> Option<f64> {
        let (_, speed) = self.along_path(graph);
        self.path.max_drift(&[], speed, seconds)
    }
}

fn bad(key: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        key: key.into(),
        message: message.into(),
    }
}

/// The nodes the components of `s` move, checked against the built graph.
///
/// # Errors
/// The key of the first bad `mobility` table: a scenario without a
/// `[network]`, a reference that is not one output element of a component
/// on the same node, a second driver of a node, time-stepping sync, or a
/// `position_tolerance` that nothing bounds.
pub fn node_motions(s: &GraphScenario, graph: &Graph) -> Result<Vec<GraphNodeMotion>, ScenarioError> {
    let mut motions: Vec<GraphNodeMotion> = Vec::new();
    let mut drivers: Vec<(u32, String)> = Vec::new();
    for (i, c) in s.components.iter().enumerate() {
        let Some(config) = &c.mobility else {
            continue;
        };
        let key = format!("components[{i}].mobility");
        let Some(mobility) = resolve_mobility(config, &key)? else {
            continue;
        };
        let Some(sync) = s.network.as_ref().and(s.sync.as_ref()) else {
            return Err(bad(
                key,
                "moves a node of the network: the scenario needs a [network] and a [sync] table",
            ));
        };
        if sync.scheme == SchemeKind::TimeStepping {
            return Err(bad(
                key,
                "graph components move nodes under master_slave and event_driven sync \
                 (time_stepping hands the network a period before the graph evaluates it)",
            ));
        }
        let Some(NodeName::Index(node)) = c.node else {
            return Err(bad(
                format!("components[{i}].node"),
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
            element_on_node(s, graph, node, text).map_err(|m| bad(format!("{key}.{field}"), m))
        };
        let Some(position) = &mobility.position else {
            return Err(bad(
                format!("{key}.position"),
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
        let path = NodePath::declared(node, &mobility, velocity.is_some());
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
                     network's straight line between syncs: {declare}"
                ),
            ));
        }
        drivers.push((node, key));
        motions.push(GraphNodeMotion {
            component: graph
                .component_index(&c.name)
                .expect("every component is in the graph"),
            path,
            position,
            velocity,
        });
    }
    Ok(motions)
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// A cart on node 0 (outputs `x`, `v`) read by a controller on node 1,
    /// with `mobility` on the cart, under `scheme`.
    fn load(mobility: &str, scheme: &str) -> Result<crate::graph_scenario::LoadedGraph, String> {
        let text = format!(
            r#"
duration = "100ms"
step = "1ms"
[sync]
scheme = "{scheme}"
period = "10ms"
[network]
backend = "builtin"
[network.builtin]
delay = {{ kind = "constant", value = "1ms" }}
[[components]]
name = "cart"
node = 0
mobility = {mobility}
[components.plant]
kind = "mass_spring_damper"
x0 = [2.0, 3.0]
outputs = ["x", "v"]
[[components]]
name = "pid"
node = 1
[components.controller]
kind = "pid"
kp = 1.0
period = "10ms"
[[connections]]
from = "cart.y[0]"
to = "pid.measurement"
[[connections]]
from = "pid.u"
to = "cart.u"
"#
        );
        crate::graph_scenario::load_text(Path::new("cart.toml"), &text, &[])
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_named_outputs_place_the_node_along_the_heading() {
        let mut loaded = load(
            r#"{ position = "cart.y[0]", velocity = "cart.y[1]", origin = [1.0, 0.0, 0.0], heading = [0.0, 2.0, 0.0] }"#,
            "master_slave",
        )
        .unwrap();
        loaded.graph.evaluate().unwrap();
        let side = loaded.network.unwrap();
        assert_eq!(side.motions.len(), 1);
        let k = side.motions[0].kinematics(&loaded.graph);
        assert_eq!(
            (k.node, k.position, k.velocity),
            (0, [1.0, 2.0, 0.0], [0.0, 3.0, 0.0])
        );
        // Declared bounds only; a speed bound with the velocity extrapolated.
        assert_eq!(side.motions[0].max_drift(&loaded.graph, 0.5), None);
        let mut loaded = load(
            r#"{ position = "cart.y[0]", velocity = "cart.y[1]", max_speed = 1.0 }"#,
            "master_slave",
        )
        .unwrap();
        loaded.graph.evaluate().unwrap();
        let m = &loaded.network.as_ref().unwrap().motions[0];
        assert_eq!(m.max_drift(&loaded.graph, 0.5), Some((1.0 + 3.0) * 0.5));
    }

    #[test]
    fn bad_references_and_schemes_name_the_key() {
        for (mobility, scheme, key, message) in [
            (r#"{ position = "cart.y" }"#, "master_slave", "components[0].mobility.position", "name one element"),
            (r#"{ position = "cart.y[2]" }"#, "master_slave", "components[0].mobility.position", "2 element(s)"),
            (r#"{ position = "pid.u[0]" }"#, "master_slave", "components[0].mobility.position", "is on node 1"),
            (r#"{ position = "car.y[0]" }"#, "master_slave", "components[0].mobility.position", "no component `car`"),
            (r#"{ position = "cart.y[0]", velocity = "cart.v[0]" }"#, "master_slave", "components[0].mobility.velocity", "no output port `v`"),
            (r#"{ origin = [1.0, 0.0, 0.0] }"#, "master_slave", "components[0].mobility.position", "name the output element"),
            (r#"{ position = "cart.y[0]" }"#, "time_stepping", "components[0].mobility", "time_stepping"),
        ] {
            let e = load(mobility, scheme).unwrap_err();
            assert!(e.contains(key) && e.contains(message), "{mobility}: {e}");
        }
        // `enabled = false` moves nothing.
        let loaded = load(r#"{ position = "cart.y[0]", enabled = false }"#, "master_slave").unwrap();
        assert!(loaded.network.unwrap().motions.is_empty());
    }
}
