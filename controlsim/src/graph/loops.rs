//! Today's `[[loops]]` as a graph: the expansion that shows the five-phase
//! order of [`closed_loop`](crate::closed_loop) is a special case of the
//! graph's order (the scenario runner still runs loops through
//! [`ClosedLoop`](crate::ClosedLoop) and the bridge; this is the mapping they
//! will move to, see the end of this page).
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
//! # What is left to run loops through the graph
//! The bridge's loop runner (`run.rs` and its `Session`) still drives a
//! [`System`](crate::System). Switching it over needs:
//! - the loop flows (uplink, downlink, CACC feed-forward) carried as graph
//!   flows, through the graph session's endpoint, with their numbering,
//!   tags and `packets.csv` rows unchanged;
//! - `response = "rollback"`: the loop's controller made with
//!   [`ControllerComponent::answer_by_rollback`] (the expansion does not
//!   apply the bridge-level key);
//! - loop names that are not component names (a name with a space or a
//!   dot is a valid loop name; the expansion refuses it) renamed or quoted;
//! - what reads the `System` outside the observers: the summary's per-loop
//!   figures and flow table (loop names, resets: both on the view already),
//!   and the nodes' mobility from the plants' motion;
//! - `observes(k)` of the run's observer: it reads every boundary, so the
//!   graph's demand-driven skipping stays off for loop runs.

use super::adapters::{
    ActuatorComponent, ControllerComponent, ControllerShape, PlantComponent, SensorComponent,
};
use super::build::GraphBuilder;
use super::engine::Graph;
use super::loop_view::{ExpandedLoops, LoopComponents, LoopMap};
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
    // The checks of a System (names, predecessors, vehicles) come first,
    // with the same keys.
    crate::System::from_config(config, seed)?;
    let step = StepSize::new(config.step).map_err(|source| ConfigError::Time {
        key: "step".into(),
        source,
    })?;
    let mut b = GraphBuilder::new(config.step, config.solver);
    let names: Vec<&str> = config.loops.iter().map(|l| l.name.as_str()).collect();
    for (i, l) in config.loops.iter().enumerate() {
        let key = KeyPath::key("loops").at(i);
        let n = &l.name;
        let model = PlantModel::from_config(&key.child("plant"), &l.plant)?;
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
        let controller = ControllerComponent::new(
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
        let predecessor = l.predecessor.as_ref().map(|p| match p {
            LoopRef::Index(j) => names[*j],
            LoopRef::Name(s) => s.as_str(),
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
        b.connect_keyed(
            c("controller"),
            &format!("{n}_sensor.y"),
            &format!("{n}_controller.measurement"),
        );
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
            b.connect_keyed(
                c("predecessor"),
                &format!("{n}_extra.y"),
                &format!("{n}_controller.extra"),
            );
        }
        b.connect_keyed(
            c("actuator"),
            &format!("{n}_controller.u"),
            &format!("{n}_actuator.u"),
        );
        b.connect_keyed(
            c("plant"),
            &format!("{n}_actuator.u"),
            &format!("{n}_plant.u"),
        );
    }
    let graph = b.build()?;
    let index = |name: String| {
        graph
            .component_index(&name)
            .expect("expand_loops declared it")
    };
    let loops = config
        .loops
        .iter()
        .map(|l| {
            let n = &l.name;
            LoopComponents {
                name: n.clone(),
                plant: index(format!("{n}_plant")),
                sensor: index(format!("{n}_sensor")),
                controller: index(format!("{n}_controller")),
                extra: graph.component_index(&format!("{n}_extra")),
                actuator: index(format!("{n}_actuator")),
                predecessor: l.predecessor.as_ref().map(|p| match p {
                    LoopRef::Index(j) => *j,
                    LoopRef::Name(s) => names
                        .iter()
                        .position(|m| m == s)
                        .expect("System::from_config checked the name"),
                }),
            }
        })
        .collect();
    Ok(ExpandedLoops {
        graph,
        map: LoopMap { loops },
    })
}
