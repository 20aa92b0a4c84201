//! Today's `[[loops]]` as a graph: the expansion that shows the five-phase
//! order of [`closed_loop`](crate::closed_loop) is a special case of the
//! graph's order (the scenario runner still runs loops through
//! [`ClosedLoop`](crate::ClosedLoop) and the bridge; this is the mapping they
//! move to, see the end of this page).
//!
//! Loop `name` (index `i`) becomes five components at most:
//!
//! | component | from | connections |
//! |-----------|------|-------------|
//! | `name_plant` | `loops[i].plant` | `name_actuator.u -> name_plant.u` |
//! | `name_sensor` | `loops[i].sensor` (stream `i`) | `name_plant.y -> name_sensor.y`, or for a radar `name_plant.motion -> .own` and `pred_plant.motion -> .ahead` |
//! | `name_controller` | `loops[i].controller`, `reference` | `name_sensor.y -> name_controller.measurement` |
//! | `name_extra` | CACC only: the predecessor's acceleration sampled with the measurement (a noiseless sensor at the sensor's period and phase) | `pred_plant.motion[2] -> name_extra.y -> name_controller.extra` |
//! | `name_actuator` | `loops[i].actuator` | `name_controller.u -> name_actuator.u` |
//!
//! The plant's `u` is not direct feedthrough, so each loop is ordered plant,
//! sensor, (extra,) controller, actuator: sample, deliver, compute on the
//! event or the tick, set the actuator; then integrate. That is exactly the
//! zero-delay [`ClosedLoop`](crate::ClosedLoop), bit for bit (tested for
//! every plant and controller kind).
//!
//! # What the loop observers read
//! [`expand_loops`] also returns which components each loop became (a
//! [`LoopMap`]), so the graph is a [`LoopView`](crate::view::LoopView)
//! ([`GraphLoops`](super::loop_view::GraphLoops)) as a
//! [`System`](crate::System) is: the [`Recorder`](crate::Recorder) of
//! `timeseries.csv` and the bridge's control metrics, stop conditions and
//! platoon metrics read either, and give the same bytes and figures from the
//! graph as from the zero-delay `ClosedLoop` (tested for every kind here and
//! for every `[[loops]]` example in the bridge).
//!
//! # Networked loops
//! [`expand_networked`] puts the links the bridge's flow table carries
//! (uplink, downlink, CACC feed-forward) on the network: each becomes an
//! [`Inlet`] that drives the receiver in the connection's place, listed in
//! flow-table order ([`LoopLink`]) for the bridge's graph session, which
//! runs a loop scenario through it (`bridge/src/loop_graph.rs`; its
//! outputs are the bytes the loops' own session gave before it was
//! deleted, tested there). `response = "rollback"`
//! makes the controller with
//! [`ControllerComponent::answer_by_rollback`]. A loop name that is not a
//! component name (a space, a dot) gets component names of its allowed
//! characters that no other loop has: they are internal to the run.
//!
//! A packet delivered at its send instant (a zero-delay builtin channel)
//! acts at its send boundary in a loop (phase U2, then the ticks): the
//! graph session then evaluates the boundary in parts around such
//! deliveries ([`Endpoint::evaluate_part`](super::Endpoint::evaluate_part)).

use super::adapters::{
    ActuatorComponent, ControllerComponent, ControllerShape, PlantComponent, SensorComponent,
};
use super::build::GraphBuilder;
use super::engine::Graph;
use super::inlet::Inlet;
use super::loop_view::{ExpandedLoops, LoopComponents, LoopMap};
use std::ops::Range;

use crate::blocks::routing::{Mux, MuxConfig};
use crate::config::{LoopRef, SystemConfig};
use crate::error::ConfigError;
use crate::key_path::KeyPath;
use crate::plant::PlantModel;
use crate::sensor::{SensorConfig, SensorSource};
use crate::time::StepSize;

/// The graph of a loops-only system (see the module docs).
///
/// # Errors
/// [`ConfigError`] keyed as for [`System::from_config`](crate::System::from_config).
pub fn expand(config: &SystemConfig, seed: u64) -> Result<Graph, ConfigError> {
    expand_loops(config, seed).map(|e| e.graph)
}

/// [`expand`], with which components each loop became, for the loop
/// observers' view of the graph ([`GraphLoops`](super::loop_view::GraphLoops)).
///
/// # Errors
/// As [`expand`].
pub fn expand_loops(config: &SystemConfig, seed: u64) -> Result<ExpandedLoops, ConfigError> {
    expand_networked(config, seed, &[]).map(|(e, _)| e)
}

/// Which links of a loop the network carries, and how its controller
/// answers: the bridge's flow table and `response` decide.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopLinks {
    /// Sensor to controller (with the predecessor's values, when they have
    /// no link of their own).
    pub uplink: bool,
    /// Controller to actuator.
    pub downlink: bool,
    /// The predecessor's acceleration to the controller, on its own link.
    pub feedforward: bool,
    /// The controller answers by rollback
    /// ([`ControllerComponent::answer_by_rollback`]).
    pub rollback: bool,
}

/// Which of a loop's links a [`LoopLink`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkKind {
    Uplink,
    Downlink,
    Feedforward,
}

/// A loop link the network carries: the output elements it sends, the
/// [`Inlet`] that receives them in the connection's place, and the
/// component whose timing is the link's (the sensor for samples, the
/// controller for control values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopLink {
    pub loop_index: usize,
    pub kind: LinkKind,
    pub source: usize,
    pub port: usize,
    pub elements: Range<usize>,
    pub inlet: usize,
    pub timed_by: usize,
}

/// The component names of each loop: its name where that is a component
/// name, otherwise (a space, a dot) a name made of its allowed characters
/// that no other loop has. Component names are internal to a loop run.
fn prefixes(names: &[&str]) -> Vec<String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let valid = |n: &str| !n.is_empty() && n.chars().all(allowed);
    let mut taken: Vec<String> = names
        .iter()
        .filter(|n| valid(n))
        .map(|n| n.to_string())
        .collect();
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if valid(n) {
                return n.to_string();
            }
            let base: String = n
                .chars()
                .map(|c| if allowed(c) { c } else { '_' })
                .collect();
            let mut made = format!("{base}-{i}");
            while taken.contains(&made) {
                made.push('_');
            }
            taken.push(made.clone());
            made
        })
        .collect()
}

/// [`expand_loops`] with the links in `links` (per loop; missing ones are
/// local) carried by the network: each becomes an [`Inlet`] named
/// `name_uplink`, `name_downlink` or `name_feedforward` that drives the
/// receiver in the connection's place, returned in flow-table order (per
/// loop: uplink, downlink, feed-forward). An uplink that also carries the
/// predecessor's values sends a `mux` of the sample and those values, and
/// its inlet's elements are split between `measurement` and `extra` again.
///
/// # Errors
/// As [`expand`]; `loops[i].response` when the controller cannot answer by
/// rollback.
pub fn expand_networked(
    config: &SystemConfig,
    seed: u64,
    links: &[LoopLinks],
) -> Result<(ExpandedLoops, Vec<LoopLink>), ConfigError> {
    // The checks of a System (names, predecessors, vehicles) come first,
    // with the same keys.
    crate::System::from_config(config, seed)?;
    expand_built(config, seed, links)
}

/// [`expand_networked`] of a configuration already built into a
/// [`System`](crate::System) (so already checked as one): the system is
/// not built again, and an FMU not instantiated twice.
///
/// # Errors
/// As [`expand_networked`], but for the checks only building a system makes.
pub fn expand_built(
    config: &SystemConfig,
    seed: u64,
    links: &[LoopLinks],
) -> Result<(ExpandedLoops, Vec<LoopLink>), ConfigError> {
    let step = StepSize::new(config.step).map_err(|source| ConfigError::Time {
        key: "step".into(),
        source,
    })?;
    let mut b = GraphBuilder::new(config.step, config.solver);
    let names: Vec<&str> = config.loops.iter().map(|l| l.name.as_str()).collect();
    let prefixes = prefixes(&names);
    // Per networked link: loop, kind, (source, port, width), inlet, timed by.
    let mut carried: Vec<(usize, LinkKind, (String, &str, usize), String, String)> = Vec::new();
    for (i, l) in config.loops.iter().enumerate() {
        let key = KeyPath::key("loops").at(i);
        let n = &prefixes[i];
        let link = links.get(i).copied().unwrap_or_default();
        let model = PlantModel::from_config_at(&key.child("plant"), &l.plant, config.step)?;
        let signature = model.as_plant().signature();
        let m = signature.inputs.len();
        let actuator = ActuatorComponent::new(&key.child("actuator"), &l.actuator, m)?;
        let sensor = SensorComponent::new(
            &key.child("sensor"),
            &l.sensor,
            step,
            &signature.outputs,
            seed,
            i as u64,
        )?;
        let measurements = match l.sensor.source {
            SensorSource::Plant => signature.outputs.len(),
            SensorSource::Radar => 4,
        };
        let mut controller = ControllerComponent::new(
            &key.child("controller"),
            &l.controller,
            ControllerShape {
                measurements,
                outputs: m,
                reference: &l.reference.0,
                model: Some(&model),
                limits: Some(actuator.limits()),
                default_period: Some(l.sensor.period),
            },
            step,
        )?;
        if link.rollback {
            controller = controller.answer_by_rollback(&key.child("response"))?;
        }
        let predecessor = l.predecessor.as_ref().map(|p| match p {
            LoopRef::Index(j) => prefixes[*j].as_str(),
            LoopRef::Name(s) => {
                let j = names
                    .iter()
                    .position(|m| m == s)
                    .expect("System::from_config checked the name");
                prefixes[j].as_str()
            }
        });
        let extras = controller.declare_extras();
        b.component_keyed(
            key.child("plant"),
            &format!("{n}_plant"),
            Box::new(PlantComponent::new(&key.child("plant"), model, step)?),
        );
        b.component_keyed(
            key.child("sensor"),
            &format!("{n}_sensor"),
            Box::new(sensor),
        );
        b.component_keyed(
            key.child("controller"),
            &format!("{n}_controller"),
            Box::new(controller),
        );
        b.component_keyed(
            key.child("actuator"),
            &format!("{n}_actuator"),
            Box::new(actuator),
        );
        let c = |s: &str| key.child(s);
        // A networked link: its inlet, which drives the receiver instead.
        let mut inlet = |b: &mut GraphBuilder,
                         kind: LinkKind,
                         (source, port, width): (String, &'static str, usize),
                         timed_by: String| {
            let name = format!(
                "{n}_{}",
                match kind {
                    LinkKind::Uplink => "uplink",
                    LinkKind::Downlink => "downlink",
                    LinkKind::Feedforward => "feedforward",
                }
            );
            b.component_keyed(c(&name), &name, Box::new(Inlet::new(width)));
            carried.push((i, kind, (source, port, width), name.clone(), timed_by));
            name
        };
        match l.sensor.source {
            SensorSource::Plant => {
                b.connect_keyed(
                    c("sensor"),
                    &format!("{n}_plant.y"),
                    &format!("{n}_sensor.y"),
                );
            }
            SensorSource::Radar => {
                let p = predecessor.unwrap_or_default();
                b.connect_keyed(
                    c("sensor"),
                    &format!("{n}_plant.motion"),
                    &format!("{n}_sensor.own"),
                );
                b.connect_keyed(
                    c("predecessor"),
                    &format!("{p}_plant.motion"),
                    &format!("{n}_sensor.ahead"),
                );
            }
        }
        let with_uplink = link.uplink && extras > 0 && !link.feedforward;
        if extras > 0 {
            let p = predecessor.unwrap_or_default();
            let held = SensorConfig {
                noise_std: None,
                quantization: None,
                source: SensorSource::Plant,
                ..l.sensor.clone()
            };
            let extra = SensorComponent::new(
                &c("sensor"),
                &held,
                step,
                &["acceleration".to_string()],
                seed,
                i as u64,
            )?;
            b.component_keyed(c("predecessor"), &format!("{n}_extra"), Box::new(extra));
            b.connect_keyed(
                c("predecessor"),
                &format!("{p}_plant.motion[2]"),
                &format!("{n}_extra.y"),
            );
        }
        let sensor_name = format!("{n}_sensor");
        if link.uplink {
            let source = if with_uplink {
                // The sample and the predecessor's values in one packet.
                let mux = format!("{n}_uplink_mux");
                let widths = vec![measurements, extras];
                b.component_keyed(
                    c("sensor"),
                    &mux,
                    Box::new(Mux::new(&c("sensor"), &MuxConfig { widths })?),
                );
                b.connect_keyed(c("sensor"), &format!("{n}_sensor.y"), &format!("{mux}.u0"));
                b.connect_keyed(
                    c("predecessor"),
                    &format!("{n}_extra.y"),
                    &format!("{mux}.u1"),
                );
                (mux, "y", measurements + extras)
            } else {
                (sensor_name.clone(), "y", measurements)
            };
            let up = inlet(&mut b, LinkKind::Uplink, source, sensor_name.clone());
            b.connect_keyed(
                c("controller"),
                &format!("{up}.y[0..{measurements}]"),
                &format!("{n}_controller.measurement"),
            );
            if with_uplink {
                b.connect_keyed(
                    c("predecessor"),
                    &format!("{up}.y[{measurements}..{}]", measurements + extras),
                    &format!("{n}_controller.extra"),
                );
            }
        } else {
            b.connect_keyed(
                c("controller"),
                &format!("{n}_sensor.y"),
                &format!("{n}_controller.measurement"),
            );
        }
        if extras > 0 && !with_uplink {
            let from = if link.feedforward {
                let ff = inlet(
                    &mut b,
                    LinkKind::Feedforward,
                    (format!("{n}_extra"), "y", extras),
                    format!("{n}_extra"),
                );
                format!("{ff}.y")
            } else {
                format!("{n}_extra.y")
            };
            b.connect_keyed(c("predecessor"), &from, &format!("{n}_controller.extra"));
        }
        let control = if link.downlink {
            let down = inlet(
                &mut b,
                LinkKind::Downlink,
                (format!("{n}_controller"), "u", m),
                format!("{n}_controller"),
            );
            format!("{down}.y")
        } else {
            format!("{n}_controller.u")
        };
        b.connect_keyed(c("actuator"), &control, &format!("{n}_actuator.u"));
        b.connect_keyed(
            c("plant"),
            &format!("{n}_actuator.u"),
            &format!("{n}_plant.u"),
        );
    }
    let graph = b.build()?;
    let index = |name: &str| {
        graph
            .component_index(name)
            .expect("expand_networked declared it")
    };
    let loops = config
        .loops
        .iter()
        .zip(&prefixes)
        .map(|(l, n)| LoopComponents {
            name: l.name.clone(),
            plant: index(&format!("{n}_plant")),
            sensor: index(&format!("{n}_sensor")),
            controller: index(&format!("{n}_controller")),
            extra: graph.component_index(&format!("{n}_extra")),
            actuator: index(&format!("{n}_actuator")),
            predecessor: l.predecessor.as_ref().map(|p| match p {
                LoopRef::Index(j) => *j,
                LoopRef::Name(s) => names
                    .iter()
                    .position(|m| m == s)
                    .expect("System::from_config checked the name"),
            }),
        })
        .collect();
    // In flow-table order: per loop, uplink, downlink, feed-forward.
    let rank = |k: LinkKind| match k {
        LinkKind::Uplink => 0,
        LinkKind::Downlink => 1,
        LinkKind::Feedforward => 2,
    };
    carried.sort_by_key(|(i, kind, ..)| (*i, rank(*kind)));
    let links = carried
        .into_iter()
        .map(
            |(loop_index, kind, (source, port, width), inlet, timed_by)| {
                let source = index(&source);
                LoopLink {
                    loop_index,
                    kind,
                    source,
                    port: graph
                        .output_index(source, port)
                        .expect("expand_networked connected it"),
                    elements: 0..width,
                    inlet: index(&inlet),
                    timed_by: index(&timed_by),
                }
            },
        )
        .collect();
    Ok((
        ExpandedLoops {
            graph,
            map: LoopMap { loops },
        },
        links,
    ))
}
