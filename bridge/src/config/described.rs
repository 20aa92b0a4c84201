//! A network kind the bridge has no type for: checked key by key against the
//! server's schema (`netloop-server --describe`, [`crate::network_schema`])
//! and turned into the server's arguments from it. Adding a kind to the
//! server (ns3-scenarios/README.md, "Adding a network kind") needs nothing
//! here.

use std::sync::Arc;

use protocol::SimTime;
use serde::Serialize;

use super::ns3::{positions_argument, DataRate, ServerArgument};
use super::{bad, ScenarioError};
use crate::network_schema::{ArgumentType, KindSchema};

/// `[network.ns3]` of a described kind: its keys as written, and what the
/// schema made of them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DescribedConfig {
    pub kind: String,
    /// Every key but `kind`, as written (after overrides).
    #[serde(flatten)]
    pub keys: toml::Table,
    /// The kind's schema; `None` when the scenario does not run on ns-3
    /// (`backend = "builtin"`), so that nothing asked the server.
    #[serde(skip)]
    pub schema: Option<Arc<KindSchema>>,
    /// The node count the scenario sets, if it does.
    #[serde(skip)]
    counted: Option<u32>,
    /// The arguments the set keys become, in the schema's order.
    #[serde(skip)]
    arguments: Vec<ServerArgument>,
}

fn key(k: &str) -> String {
    format!("network.ns3.{k}")
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

impl DescribedConfig {
    /// Keeps the table unchecked (the builtin backend runs: no server is asked).
    pub fn unchecked(kind: String, keys: toml::Table) -> DescribedConfig {
        DescribedConfig {
            kind,
            keys,
            schema: None,
            counted: None,
            arguments: Vec::new(),
        }
    }

    /// Checks every key of the table against the kind's schema: known, of
    /// its type, within its limits.
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
        let mut values: Vec<(usize, String, String)> = Vec::new();
        for (k, value) in &flat {
            if *k == rule.key {
                let n = value
                    .as_integer()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        bad(
                            key(k),
                            format!("invalid type: {value}, expected a node count"),
                        )
                    })?;
                if n < rule.min || n > rule.max {
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
                let list = known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(bad(
                    key(k),
                    format!("unknown field `{k}`, expected one of {list}"),
                ));
            };
            let argument = &schema.arguments[at];
            let text = argument_text(argument.kind, &argument.choices, value)
                .map_err(|message| bad(key(k), message))?;
            argument
                .check(&text)
                .map_err(|message| bad(key(k), message))?;
            values.push((at, argument.name.clone(), text));
        }
        values.sort_by_key(|(at, ..)| *at);
        let arguments = values
            .into_iter()
            .filter(|(_, name, _)| *name != rule.argument)
            .map(|(at, name, text)| {
                ServerArgument::new(&name, text, key(&schema.arguments[at].key))
            })
            .collect();
        Ok(DescribedConfig {
            kind: schema.name.clone(),
            keys,
            schema: Some(schema),
            counted,
            arguments,
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

    /// `--network`, the node count, then every key the scenario sets.
    pub(crate) fn server_arguments(&self, node_count: u32) -> Vec<ServerArgument> {
        let mut a = vec![ServerArgument::new("network", &self.kind, key("kind"))];
        if let Some(s) = &self.schema {
            let rule = &s.node_count;
            a.push(ServerArgument::new(
                &rule.argument,
                node_count - rule.extra.min(node_count),
                key(&rule.key),
            ));
        }
        a.extend(self.arguments.iter().cloned());
        a
    }
}

/// A scenario value as the command line writes it, by the argument's type.
fn argument_text(
    kind: ArgumentType,
    choices: &[crate::network_schema::Choice],
    value: &toml::Value,
) -> Result<String, String> {
    use toml::Value as V;
    let expected = |what: &str| format!("invalid type: {value}, expected {what}");
    Ok(match (kind, value) {
        (ArgumentType::Integer, V::Integer(n)) if *n >= 0 => n.to_string(),
        (ArgumentType::Integer, _) => return Err(expected("a non-negative integer")),
        (ArgumentType::Real, V::Float(x)) => x.to_string(),
        (ArgumentType::Real, V::Integer(n)) => (*n as f64).to_string(),
        (ArgumentType::Real, _) => return Err(expected("a number")),
        (ArgumentType::Boolean, V::Boolean(b)) => b.to_string(),
        (ArgumentType::Boolean, _) => return Err(expected("true or false")),
        (ArgumentType::Choice, V::String(s)) => match choices.iter().find(|c| c.value == *s) {
            Some(c) => c.argument.clone(),
            None => {
                let list = choices
                    .iter()
                    .map(|c| format!("\"{}\"", c.value))
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(format!("\"{s}\" is not one of {list}"));
            }
        },
        (ArgumentType::DataRate, V::String(s)) => s.parse::<DataRate>()?.to_string(),
        (ArgumentType::Duration, V::String(s)) => {
            s.parse::<SimTime>().map_err(|e| e.to_string())?.to_string()
        }
        (ArgumentType::Duration, V::Integer(0)) => SimTime::ZERO.to_string(),
        (ArgumentType::Text, V::String(s)) => s.clone(),
        (
            ArgumentType::Choice
            | ArgumentType::DataRate
            | ArgumentType::Duration
            | ArgumentType::Text,
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
