//! A network kind, read from the server's schema (`netloop-server
//! --describe`, [`crate::network_schema`]): every `[network.ns3]` key is
//! checked against the kind's declared arguments (known, of its type,
//! within its limits) and turned into the server's arguments from them. No
//! kind has Rust of its own: adding one to the server (ns3-scenarios/
//! README.md, "Adding a network kind") needs nothing here.
//!
//! # Canonical form
//! A checked table serialises as the kind's canonical form, which the config
//! hash covers: `kind`, the node count if written, then every declared
//! argument in declaration order, with its default made explicit (an
//! argument unset by default only when written; one in a nested table such
//! as `bsm.rate` only when that table is written). Values are in the
//! scenario's spelling (`"802.11a"`, `"1Mbps"`, `"2ms"`, reals as reals),
//! so that this is the form the bridge's former typed kinds serialised to
//! and every config hash (and so every sweep's resume) stays as it was
//! (tests/cli/config_hashes.rs).

use std::sync::Arc;

use protocol::SimTime;
use serde::ser::SerializeMap;
use serde::Serialize;

use super::ns3::{positions_argument, DataRate, ServerArgument};
use super::{bad, KeyPath, ScenarioError};
use crate::keyed::{Expected, Refusal};
use crate::network_schema::{ArgumentSchema, ArgumentType, KindSchema};

/// `[network.ns3]` of a kind: its keys as written, and what the schema made
/// of them.
#[derive(Clone, Debug, PartialEq)]
pub struct DescribedConfig {
    pub kind: String,
    /// Every key but `kind`, as written (after overrides).
    pub keys: toml::Table,
    /// The kind's schema; `None` when the scenario does not run on ns-3
    /// (`backend = "builtin"`) and the kind is not one of this checkout's
    /// server, so that nothing asked a server.
    pub schema: Option<Arc<KindSchema>>,
    /// The node count the scenario sets, if it does.
    counted: Option<u32>,
    /// Every argument of the canonical form, in the schema's order.
    values: Vec<CanonicalValue>,
}

/// One argument of the canonical form.
#[derive(Clone, Debug, PartialEq)]
struct CanonicalValue {
    /// Index into the schema's arguments.
    at: usize,
    /// In the scenario's spelling, for the config hash.
    scenario: serde_json::Value,
    /// As the command line writes it.
    text: String,
}

/// The scenario key of a schema key (`bsm.rate`, dotted through the
/// kind's nested tables): `network.ns3.bsm.rate`.
fn key(k: &str) -> KeyPath {
    k.split('.')
        .fold(KeyPath::from("network.ns3"), |path, part| path.and(part))
}

/// `table`'s keys, dotted through nested tables, with their values.
fn flatten(prefix: &str, table: &toml::Table, out: &mut Vec<(String, toml::Value)>) {
    for (k, v) in table {
        let dotted = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) => flatten(&dotted, t, out),
            other => out.push((dotted, other.clone())),
        }
    }
}

/// The nested table an argument's key is in (`bsm` of `bsm.rate`).
fn table_of(key: &str) -> Option<&str> {
    key.split_once('.').map(|(table, _)| table)
}

impl DescribedConfig {
    /// Keeps the table unchecked (the builtin backend runs a kind this
    /// checkout's server does not have: no server is asked).
    pub fn unchecked(kind: String, keys: toml::Table) -> DescribedConfig {
        DescribedConfig {
            kind,
            keys,
            schema: None,
            counted: None,
            values: Vec::new(),
        }
    }

    /// Checks every key of the table against the kind's schema: known, of
    /// its type, within its limits; then makes the canonical form.
    ///
    /// # Errors
    /// The first bad key, named `network.ns3.<key>`.
    pub fn new(
        schema: Arc<KindSchema>,
        keys: toml::Table,
    ) -> Result<DescribedConfig, ScenarioError> {
        let mut flat = Vec::new();
        flatten("", &keys, &mut flat);
        let rule = &schema.node_count;
        let mut counted = None;
        let mut written: Vec<Option<CanonicalValue>> = vec![None; schema.arguments.len()];
        for (k, value) in &flat {
            if *k == rule.key {
                let n = value
                    .as_integer()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        ScenarioError::expecting(
                            key(k),
                            format!("invalid type: {value}"),
                            "a node count",
                        )
                    })?;
                if n > rule.max {
                    return Err(bad(
                        key(k),
                        format!("{n} is too many: at most {} ({})", rule.max, rule.doc),
                    ));
                }
                if n < rule.min {
                    return Err(bad(
                        key(k),
                        format!("{n} is not in [{}, {}] ({})", rule.min, rule.max, rule.doc),
                    ));
                }
                counted = Some(n);
                continue;
            }
            let Some(at) = schema.arguments.iter().position(|a| a.key == *k) else {
                let mut known: Vec<&str> = std::iter::once(rule.key.as_str())
                    .chain(schema.arguments.iter().map(|a| a.key.as_str()))
                    .collect();
                known.dedup();
                let known = known.into_iter().map(str::to_string).collect();
                return Err(ScenarioError {
                    expected: Some(Expected::Keys(known)),
                    ..bad(key(k), format!("unknown field `{k}`"))
                });
            };
            let argument = &schema.arguments[at];
            let (scenario, text) = canonical(argument, value).map_err(|r| r.at(key(k)))?;
            argument
                .check(&text)
                .map_err(|message| bad(key(k), message))?;
            written[at] = Some(CanonicalValue { at, scenario, text });
        }
        // The nested tables the scenario writes, even empty ones.
        let tables: Vec<&str> = keys
            .iter()
            .filter(|(_, v)| v.is_table())
            .map(|(k, _)| k.as_str())
            .collect();
        let mut values = Vec::new();
        for (at, (argument, given)) in schema.arguments.iter().zip(written).enumerate() {
            if argument.name == rule.argument {
                continue;
            }
            if let Some(given) = given {
                values.push(given);
                continue;
            }
            let default = match table_of(&argument.key) {
                Some(table) if !tables.contains(&table) => None,
                Some(_) => argument
                    .table_default
                    .as_ref()
                    .or(argument.default.as_ref()),
                None => argument.default.as_ref(),
            };
            if let Some(text) = default {
                let scenario = scenario_of_default(argument, text).map_err(|message| {
                    bad(
                        key(&argument.key),
                        format!("the server's default {text:?} is not valid: {message}"),
                    )
                })?;
                values.push(CanonicalValue {
                    at,
                    scenario,
                    text: text.clone(),
                });
            }
        }
        Ok(DescribedConfig {
            kind: schema.name.clone(),
            keys,
            schema: Some(schema),
            counted,
            values,
        })
    }

    /// Whether node positions matter; assumed when there is no schema.
    pub fn uses_positions(&self) -> bool {
        self.schema.as_ref().map_or(true, |s| s.uses_positions)
    }

    /// The number of addressable nodes, given the highest node a loop uses.
    pub(crate) fn node_count(&self, highest: u32) -> u32 {
        let extra = self.schema.as_ref().map_or(0, |s| s.node_count.extra);
        match self.counted {
            Some(n) => n.saturating_add(extra),
            None => highest + 1,
        }
    }

    /// The nodes besides the counted ones (LTE: the remote host), which are
    /// not placed on the radio map.
    pub(crate) fn extra_nodes(&self) -> u32 {
        self.schema.as_ref().map_or(0, |s| s.node_count.extra)
    }

    /// A count the kind requires must be given.
    pub(crate) fn validate_node_count(&self) -> Result<(), ScenarioError> {
        match &self.schema {
            Some(s) if s.node_count.required && self.counted.is_none() => Err(bad(
                key(&s.node_count.key),
                format!(
                    "missing field `{}`: {} ({} is required)",
                    s.node_count.key, s.node_count.doc, s.name
                ),
            )),
            _ => Ok(()),
        }
    }

    /// `--network`, the node count, then every argument of the canonical
    /// form (defaults included, so that the server is told exactly what the
    /// config hash covers).
    pub(crate) fn server_arguments(&self, node_count: u32) -> Vec<ServerArgument> {
        let mut a = vec![ServerArgument::new("network", &self.kind, key("kind"))];
        if let Some(s) = &self.schema {
            let rule = &s.node_count;
            a.push(ServerArgument::new(
                &rule.argument,
                node_count - rule.extra.min(node_count),
                key(&rule.key),
            ));
            a.extend(self.values.iter().map(|v| {
                let argument = &s.arguments[v.at];
                ServerArgument::new(&argument.name, &v.text, key(&argument.key))
            }));
        }
        a
    }
}

/// The canonical form (see the module docs); as written when unchecked.
impl Serialize for DescribedConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some(schema) = &self.schema else {
            let mut map = s.serialize_map(Some(self.keys.len() + 1))?;
            map.serialize_entry("kind", &self.kind)?;
            for (k, v) in &self.keys {
                map.serialize_entry(k, v)?;
            }
            return map.end();
        };
        // Top-level keys in order; a nested table where its first key is.
        let mut entries: Vec<(&str, Entry)> =
            vec![("kind", Entry::Value(self.kind.clone().into()))];
        if let Some(n) = self.counted {
            entries.push((&schema.node_count.key, Entry::Value(n.into())));
        }
        for v in &self.values {
            let argument_key = schema.arguments[v.at].key.as_str();
            match argument_key.split_once('.') {
                None => entries.push((argument_key, Entry::Value(v.scenario.clone()))),
                Some((table, inner)) => match entries.iter_mut().find(|(k, _)| *k == table) {
                    Some((_, Entry::Table(t))) => t.push((inner, v.scenario.clone())),
                    _ => entries.push((table, Entry::Table(vec![(inner, v.scenario.clone())]))),
                },
            }
        }
        let mut map = s.serialize_map(Some(entries.len()))?;
        for (k, entry) in &entries {
            map.serialize_entry(k, entry)?;
        }
        map.end()
    }
}

/// A value of the canonical form, or a nested table of them, in order.
enum Entry<'a> {
    Value(serde_json::Value),
    Table(Vec<(&'a str, serde_json::Value)>),
}

impl Serialize for Entry<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Entry::Value(v) => v.serialize(s),
            Entry::Table(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// A written value: in the scenario's canonical spelling and as the command
/// line writes it, by the argument's type.
pub(super) fn canonical(
    argument: &ArgumentSchema,
    value: &toml::Value,
) -> Result<(serde_json::Value, String), Refusal> {
    use serde_json::Value as J;
    use toml::Value as V;
    let text = argument_text(argument.kind, &argument.choices, value)?;
    let scenario = match (argument.kind, value) {
        (ArgumentType::Integer, V::Integer(n)) => {
            let n = u32::try_from(*n).map_err(|_| {
                Refusal::expecting(
                    format!("invalid value: {n}"),
                    format!("at most {}", u32::MAX),
                )
            })?;
            J::from(n)
        }
        (ArgumentType::Real, V::Integer(n)) => J::from(*n as f64),
        (ArgumentType::Real, V::Float(x)) => J::from(*x),
        (ArgumentType::Boolean | ArgumentType::TraceFile, V::Boolean(b)) => J::from(*b),
        (ArgumentType::Positions, V::Array(_)) => positions_json(&text)?,
        (ArgumentType::NodeList, V::Array(_)) => node_list_json(&text)?,
        (ArgumentType::Choice, V::String(s)) => J::from(s.clone()),
        // Rates and durations as they print (`1500kbps`, `2500us`).
        (ArgumentType::DataRate | ArgumentType::Duration, _) => J::from(text.clone()),
        _ => J::from(text.clone()),
    };
    Ok((scenario, text))
}

/// A default (command-line text) in the scenario's canonical spelling.
pub(super) fn scenario_of_default(
    argument: &ArgumentSchema,
    text: &str,
) -> Result<serde_json::Value, String> {
    use serde_json::Value as J;
    Ok(match argument.kind {
        ArgumentType::Integer => J::from(text.parse::<u32>().map_err(|e| e.to_string())?),
        ArgumentType::Real => J::from(text.parse::<f64>().map_err(|e| e.to_string())?),
        ArgumentType::Boolean => J::from(text.parse::<bool>().map_err(|e| e.to_string())?),
        ArgumentType::Choice => match argument.choices.iter().find(|c| c.argument == text) {
            Some(c) => J::from(c.value.clone()),
            None => return Err("not one of its choices".into()),
        },
        ArgumentType::DataRate => J::from(
            text.parse::<DataRate>()
                .map_err(|r| r.to_string())?
                .to_string(),
        ),
        ArgumentType::Duration => J::from(
            text.parse::<SimTime>()
                .map_err(|e| e.to_string())?
                .to_string(),
        ),
        ArgumentType::Positions => positions_json(text)?,
        ArgumentType::NodeList if text == "all" || text == "none" => J::from(text),
        ArgumentType::NodeList => node_list_json(text)?,
        ArgumentType::Text | ArgumentType::Path => J::from(text),
        ArgumentType::TraceFile => J::from(!text.is_empty()),
    })
}

/// `x,y,z;x,y,z` as `[[x, y, z], ...]` of reals.
fn positions_json(text: &str) -> Result<serde_json::Value, String> {
    text.split(';')
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.split(',')
                .map(|x| {
                    x.parse::<f64>()
                        .map(serde_json::Value::from)
                        .map_err(|e| format!("{p}: {e}"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(serde_json::Value::from)
        })
        .collect::<Result<Vec<_>, _>>()
        .map(serde_json::Value::from)
}

/// `0,1,2` as `[0, 1, 2]`.
fn node_list_json(text: &str) -> Result<serde_json::Value, String> {
    text.split(',')
        .filter(|n| !n.is_empty())
        .map(|n| {
            n.parse::<u32>()
                .map(serde_json::Value::from)
                .map_err(|e| format!("{n}: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(serde_json::Value::from)
}

/// A scenario value as the command line writes it, by the argument's type.
fn argument_text(
    kind: ArgumentType,
    choices: &[crate::network_schema::Choice],
    value: &toml::Value,
) -> Result<String, Refusal> {
    use toml::Value as V;
    let expected = |what: &str| Refusal::expecting(format!("invalid type: {value}"), what);
    Ok(match (kind, value) {
        (ArgumentType::Integer, V::Integer(n)) if *n >= 0 => n.to_string(),
        (ArgumentType::Integer, _) => return Err(expected("a non-negative integer")),
        (ArgumentType::Real, V::Float(x)) => x.to_string(),
        (ArgumentType::Real, V::Integer(n)) => (*n as f64).to_string(),
        (ArgumentType::Real, _) => return Err(expected("a number")),
        (ArgumentType::Boolean | ArgumentType::TraceFile, V::Boolean(b)) => b.to_string(),
        (ArgumentType::Boolean | ArgumentType::TraceFile, _) => {
            return Err(expected("true or false"))
        }
        (ArgumentType::Choice, V::String(s)) => match choices.iter().find(|c| c.value == *s) {
            Some(c) => c.argument.clone(),
            None => {
                let values = choices.iter().map(|c| c.value.clone()).collect();
                return Err(Refusal::expecting(
                    format!("unknown variant `{s}`"),
                    Expected::Variants(values),
                ));
            }
        },
        (ArgumentType::DataRate, V::String(s)) => s.parse::<DataRate>()?.to_string(),
        (ArgumentType::Duration, V::String(s)) => {
            s.parse::<SimTime>().map_err(|e| e.to_string())?.to_string()
        }
        (ArgumentType::Duration, V::Integer(0)) => SimTime::ZERO.to_string(),
        (ArgumentType::Text | ArgumentType::Path, V::String(s)) => s.clone(),
        (
            ArgumentType::Choice
            | ArgumentType::DataRate
            | ArgumentType::Duration
            | ArgumentType::Text
            | ArgumentType::Path,
            _,
        ) => return Err(expected("a string")),
        (ArgumentType::Positions, V::Array(items)) => {
            let positions = items
                .iter()
                .map(|p| {
                    let xyz: Vec<f64> = p
                        .as_array()
                        .map(|c| {
                            c.iter()
                                .filter_map(|x| x.as_float().or(x.as_integer().map(|n| n as f64)))
                                .collect()
                        })
                        .unwrap_or_default();
                    <[f64; 3]>::try_from(xyz).map_err(|_| expected("a list of [x, y, z] in metres"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            positions_argument(&positions)
        }
        (ArgumentType::Positions, _) => return Err(expected("a list of [x, y, z] in metres")),
        (ArgumentType::NodeList, V::String(s)) if s == "all" || s == "none" => s.clone(),
        (ArgumentType::NodeList, V::Array(items)) => items
            .iter()
            .map(|n| {
                n.as_integer()
                    .filter(|n| *n >= 0)
                    .map(|n| n.to_string())
                    .ok_or_else(|| expected("\"all\", \"none\" or a list of node indices"))
            })
            .collect::<Result<Vec<_>, _>>()?
            .join(","),
        (ArgumentType::NodeList, _) => {
            return Err(expected("\"all\", \"none\" or a list of node indices"))
        }
    })
}
