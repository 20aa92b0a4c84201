//! Building a [`Graph`]: components and connections in, every rule checked,
//! keyed errors out.
//!
//! Keys follow the scenario file: the `i`-th component added is
//! `components[i]`, the `j`-th connection `connections[j]` (their `from` and
//! `to`), unless the caller gives its own key prefix. Checked: unique,
//! well-formed component names; every connection's ends exist (component,
//! port, element range) and have the same number of elements; every input
//! element is driven exactly once; periodic timing on the step grid; port
//! declarations consistent; and, unless algebraic loops are to be solved,
//! no cycle of direct-feedthrough connections.

use netloop_time::SimTime;

use super::component::{Component, Declaration, Timing};
use super::engine::{Gather, Graph, Node, Schedule};
use super::newton::{LoopBlock, NewtonSettings};
use super::order::{evaluation_order, Block};
use super::port::PortAddress;
use crate::error::ConfigError;
use crate::event::Guards;
use crate::key_path::KeyPath;
use crate::solver::{SolverKind, Workspace};
use crate::time::{Periodic, StepSize};

struct Pending {
    key: KeyPath,
    name: String,
    component: Box<dyn Component>,
}

struct PendingConnection {
    key: KeyPath,
    from: String,
    to: String,
}

/// Collects components and connections; [`build`](Self::build) checks them.
pub struct GraphBuilder {
    step: SimTime,
    solver: SolverKind,
    components: Vec<Pending>,
    connections: Vec<PendingConnection>,
    newton: Option<NewtonSettings>,
}

impl std::fmt::Debug for GraphBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphBuilder")
            .field("components", &self.components.len())
            .field("connections", &self.connections.len())
            .finish()
    }
}

impl GraphBuilder {
    /// A graph on the step grid `step`, continuous states integrated by
    /// `solver`.
    pub fn new(step: SimTime, solver: SolverKind) -> Self {
        GraphBuilder {
            step,
            solver,
            components: Vec::new(),
            connections: Vec::new(),
            newton: None,
        }
    }

    /// Adds a component called `name` (key `components[i]`).
    pub fn component(&mut self, name: &str, component: impl Component + 'static) -> &mut Self {
        let key = KeyPath::key("components").at(self.components.len());
        self.component_keyed(key, name, Box::new(component))
    }

    /// Adds a component with its own key prefix (for error messages).
    pub fn component_keyed(
        &mut self,
        key: impl Into<KeyPath>,
        name: &str,
        component: Box<dyn Component>,
    ) -> &mut Self {
        self.components.push(Pending {
            key: key.into(),
            name: name.to_string(),
            component,
        });
        self
    }

    /// Connects output `from` to input `to` (key `connections[j]`).
    pub fn connect(&mut self, from: &str, to: &str) -> &mut Self {
        let key = KeyPath::key("connections").at(self.connections.len());
        self.connect_keyed(key, from, to)
    }

    /// Connects with its own key prefix (`<key>.from`, `<key>.to`).
    pub fn connect_keyed(&mut self, key: impl Into<KeyPath>, from: &str, to: &str) -> &mut Self {
        self.connections.push(PendingConnection {
            key: key.into(),
            from: from.to_string(),
            to: to.to_string(),
        });
        self
    }

    /// Solves algebraic loops by Newton iteration instead of rejecting them.
    pub fn solve_algebraic_loops(&mut self, settings: NewtonSettings) -> &mut Self {
        self.newton = Some(settings);
        self
    }

    /// Checks everything and builds the graph at boundary 0.
    ///
    /// # Errors
    /// [`ConfigError`] naming the key of the first problem (module docs).
    pub fn build(self) -> Result<Graph, ConfigError> {
        let step = StepSize::new(self.step).map_err(|source| ConfigError::Time {
            key: "step".into(),
            source,
        })?;
        let decls: Vec<Declaration> = self
            .components
            .iter()
            .map(|p| p.component.declare())
            .collect();
        check_names(&self.components, &decls)?;

        // Output layout: one block of values per component, ports in order.
        let mut nodes = Vec::with_capacity(self.components.len());
        let mut value_base = 0;
        let mut port_base = 0;
        let mut port_names = Vec::new();
        for (p, d) in self.components.iter().zip(&decls) {
            let schedule = schedule(&p.key, step, d.timing)?;
            let offsets = |ports: &[super::PortSpec]| {
                let mut v = vec![0];
                for port in ports {
                    v.push(v.last().copied().unwrap_or(0) + port.size);
                }
                v
            };
            let out_offsets = offsets(&d.outputs);
            let in_offsets = offsets(&d.inputs);
            let n_out = *out_offsets.last().unwrap_or(&0);
            let n_in = *in_offsets.last().unwrap_or(&0);
            for port in &d.outputs {
                port_names.push(format!("{}.{}", p.name, port.name));
            }
            nodes.push((
                schedule,
                in_offsets,
                out_offsets,
                value_base,
                port_base,
                n_in,
            ));
            value_base += n_out;
            port_base += d.outputs.len();
        }

        // Connections: resolve, check sizes and single drivers.
        let find = |addr: &PortAddress, outputs: bool| -> Option<(usize, usize)> {
            let c = self
                .components
                .iter()
                .position(|p| p.name == addr.component)?;
            let ports = if outputs {
                &decls[c].outputs
            } else {
                &decls[c].inputs
            };
            let port = ports.iter().position(|q| q.name == addr.port)?;
            Some((c, port))
        };
        let mut driver: Vec<Vec<Option<usize>>> = nodes.iter().map(|n| vec![None; n.5]).collect();
        let mut gathers: Vec<Vec<Gather>> = vec![Vec::new(); nodes.len()];
        let mut edges = Vec::new();
        // Per ordering edge, the connection it came from (for loop errors).
        let mut edge_keys = Vec::new();
        for (j, c) in self.connections.iter().enumerate() {
            let from = resolve(
                &c.key,
                "from",
                &c.from,
                &self.components,
                &decls,
                true,
                &find,
            )?;
            let to = resolve(&c.key, "to", &c.to, &self.components, &decls, false, &find)?;
            if from.2.len() != to.2.len() {
                return Err(ConfigError::invalid(
                    c.key.child("to"),
                    format!(
                        "`{}` has {} element{} but `{}` has {}",
                        c.from,
                        from.2.len(),
                        plural(from.2.len()),
                        c.to,
                        to.2.len()
                    ),
                ));
            }
            let (tc, tp, ref trange) = to;
            let (fc, fp, ref frange) = from;
            let dst0 = nodes[tc].1[tp] + trange.start;
            for e in 0..trange.len() {
                if let Some(prev) = driver[tc][dst0 + e] {
                    return Err(ConfigError::invalid(
                        c.key.child("to"),
                        format!(
                            "`{}.{}[{}]` is already driven by {}.from (\"{}\"); an input takes exactly one connection",
                            self.components[tc].name,
                            decls[tc].inputs[tp].name,
                            trange.start + e,
                            self.connections[prev].key,
                            self.connections[prev].from
                        ),
                    ));
                }
                driver[tc][dst0 + e] = Some(j);
            }
            gathers[tc].push(Gather {
                src: nodes[fc].3 + nodes[fc].2[fp] + frange.start,
                dst: dst0,
                len: trange.len(),
                src_port: nodes[fc].4 + fp,
                trigger: decls[tc].inputs[tp].trigger,
            });
            let input = &decls[tc].inputs[tp];
            if input.direct || (input.trigger && decls[tc].timing == Timing::OnInput) {
                edges.push((fc, tc));
                edge_keys.push(j);
            }
        }
        for (c, d) in driver.iter().enumerate() {
            if let Some(e) = d.iter().position(Option::is_none) {
                let (p, i) = port_of(&nodes[c].1, e);
                let port = &decls[c].inputs[p];
                return Err(ConfigError::invalid(
                    self.components[c].key.clone(),
                    format!(
                        "input `{}.{}{}` is not driven: connect an output to it",
                        self.components[c].name,
                        port.name,
                        if port.size == 1 {
                            String::new()
                        } else {
                            format!("[{i}]")
                        }
                    ),
                ));
            }
        }

        let order = evaluation_order(nodes.len(), &edges);
        let mut blocks = Vec::with_capacity(order.len());
        for block in order {
            match block {
                Block::One(i) => blocks.push(super::engine::Stage::One(i)),
                Block::Loop(members) => {
                    let names: Vec<&str> = members
                        .iter()
                        .map(|&m| self.components[m].name.as_str())
                        .collect();
                    let Some(settings) = self.newton else {
                        let key = edges
                            .iter()
                            .zip(&edge_keys)
                            .filter(|((a, b), _)| members.contains(a) && members.contains(b))
                            .map(|(_, &j)| j)
                            .min()
                            .map_or_else(
                                || KeyPath::key("connections"),
                                |j| self.connections[j].key.clone(),
                            );
                        return Err(ConfigError::invalid(
                            key,
                            format!(
                                "algebraic loop: {} feed{} through to each other's inputs at the same instant \
                                 ({} -> {}); break it with a component whose input is not direct feedthrough \
                                 (a plant, a delay) or ask to solve it (`[algebraic_loops] solve = true`)",
                                names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
                                if names.len() == 1 { "s" } else { "" },
                                names.join(" -> "),
                                names[0]
                            ),
                        ));
                    };
                    blocks.push(super::engine::Stage::Loop(LoopBlock::new(
                        settings,
                        members,
                        &names,
                        &gathers,
                        &nodes.iter().map(|n| n.3).collect::<Vec<_>>(),
                        &nodes
                            .iter()
                            .map(|n| *n.2.last().unwrap_or(&0))
                            .collect::<Vec<_>>(),
                    )));
                }
            }
        }

        let mut values = vec![0.0; value_base];
        let mut built = Vec::with_capacity(nodes.len());
        let mut max_dim = 0;
        for ((p, d), ((schedule, in_offsets, out_offsets, base, port_base, n_in), gathers)) in self
            .components
            .into_iter()
            .zip(decls)
            .zip(nodes.into_iter().zip(gathers))
        {
            let mut x = vec![0.0; d.states.len()];
            p.component.initial_state(&mut x);
            crate::matrix::check_finite_all(&p.key.child("x0"), &x)?;
            max_dim = max_dim.max(x.len());
            let n_out = *out_offsets.last().unwrap_or(&0);
            p.component.initial_outputs(&mut super::Outputs {
                data: &mut values[base..base + n_out],
                offsets: &out_offsets,
            });
            let guards = (d.guards > 0).then(|| Guards::new(d.guards, x.len()));
            built.push(Node {
                name: p.name,
                key: p.key,
                component: p.component,
                schedule,
                inputs: vec![0.0; n_in],
                in_offsets,
                out_offsets,
                out_base: base,
                port_base,
                gathers,
                x,
                guards,
                resets: 0,
                decl: d,
                next_due: 0,
            });
        }
        Ok(Graph::new(
            step,
            self.solver,
            built,
            blocks,
            values,
            port_base,
            port_names,
            Workspace::new(max_dim),
        ))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Input element `e` of a component as (port, index in the port).
fn port_of(offsets: &[usize], e: usize) -> (usize, usize) {
    let p = offsets.windows(2).position(|w| e < w[1]).unwrap_or(0);
    (p, e - offsets[p])
}

fn check_names(components: &[Pending], decls: &[Declaration]) -> Result<(), ConfigError> {
    for (i, p) in components.iter().enumerate() {
        let ok = !p.name.is_empty()
            && p.name
                .chars()
                // `/` joins a subsystem's name and its components' names.
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '/');
        if !ok {
            return Err(ConfigError::invalid(
                p.key.child("name"),
                format!(
                    "\"{}\": a component name is letters, digits, `_` and `-`",
                    p.name
                ),
            ));
        }
        if let Some(j) = components[..i].iter().position(|q| q.name == p.name) {
            return Err(ConfigError::invalid(
                p.key.child("name"),
                format!(
                    "\"{}\" is already the name of {}",
                    p.name, components[j].key
                ),
            ));
        }
        let d = &decls[i];
        for (what, ports) in [("input", &d.inputs), ("output", &d.outputs)] {
            for (a, port) in ports.iter().enumerate() {
                if ports[..a].iter().any(|q| q.name == port.name) {
                    return Err(ConfigError::invalid(
                        p.key.clone(),
                        format!("two {what} ports are called `{}`", port.name),
                    ));
                }
                if !port.elements.is_empty() && port.elements.len() != port.size {
                    return Err(ConfigError::invalid(
                        p.key.clone(),
                        format!(
                            "{what} port `{}` has {} elements but {} element names",
                            port.name,
                            port.size,
                            port.elements.len()
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Turns the declared timing into a schedule on the step grid.
fn schedule(key: &KeyPath, step: StepSize, timing: Timing) -> Result<Schedule, ConfigError> {
    Ok(match timing {
        Timing::EveryStep => Schedule::EveryStep,
        Timing::OnInput => Schedule::OnInput,
        Timing::Periodic { period, offset } => {
            let p = step
                .period_steps(period)
                .map_err(|source| ConfigError::Time {
                    key: key.child("period"),
                    source,
                })?;
            let o = step.steps_in(offset).map_err(|source| ConfigError::Time {
                key: key.child("phase"),
                source,
            })?;
            if o >= p.get() {
                return Err(ConfigError::invalid(
                    key.child("phase"),
                    format!("{offset} must be less than the period {period}"),
                ));
            }
            Schedule::Periodic(Periodic {
                period: p,
                phase: o,
            })
        }
    })
}

type Resolved = (usize, usize, std::ops::Range<usize>);

/// One end of a connection: (component, port, element range).
fn resolve(
    key: &KeyPath,
    end: &str,
    text: &str,
    components: &[Pending],
    decls: &[Declaration],
    outputs: bool,
    find: &dyn Fn(&PortAddress, bool) -> Option<(usize, usize)>,
) -> Result<Resolved, ConfigError> {
    let key = key.child(end);
    let addr = PortAddress::parse(text).map_err(|m| ConfigError::invalid(key.clone(), m))?;
    let Some(c) = components.iter().position(|p| p.name == addr.component) else {
        return Err(ConfigError::UnknownName {
            key,
            name: addr.component.clone(),
            known: components.iter().map(|p| p.name.clone()).collect(),
        });
    };
    let ports = if outputs {
        &decls[c].outputs
    } else {
        &decls[c].inputs
    };
    let Some((_, port)) = find(&addr, outputs) else {
        let other = if outputs {
            &decls[c].inputs
        } else {
            &decls[c].outputs
        };
        let hint = if other.iter().any(|q| q.name == addr.port) {
            format!(
                " (`{}` is an {} port: a connection goes from an output to an input)",
                addr.port,
                if outputs { "input" } else { "output" }
            )
        } else {
            String::new()
        };
        return Err(ConfigError::invalid(
            key,
            format!(
                "`{}` has no {} port `{}`{hint}; its {} ports: {}",
                addr.component,
                if outputs { "output" } else { "input" },
                addr.port,
                if outputs { "output" } else { "input" },
                ports
                    .iter()
                    .map(|q| q.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    };
    let size = ports[port].size;
    let range = addr.range(size).ok_or_else(|| {
        ConfigError::invalid(
            key.clone(),
            format!(
                "`{}.{}` has {size} element{}; {text} reaches past its end",
                addr.component,
                addr.port,
                plural(size)
            ),
        )
    })?;
    Ok((c, port, range))
}
