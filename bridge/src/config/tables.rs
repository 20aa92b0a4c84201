//! The shared tables of `[network]`: `[network.radio]`, `[network.placement]`,
//! `[network.background]` and `[network.traces]`, read from the server's
//! schema (`netloop-server --describe`, [`crate::network_schema`]) as the
//! kinds of `[network.ns3]` are ([`super::DescribedConfig`]): every key is
//! checked against the table's declared arguments (known, of its type,
//! within its limits) and turned into the server's arguments from them.
//! Which tables a kind takes, and how much of each (LTE: propagation keys
//! only), is the kind's schema's too ([`crate::network_schema::TableUse`]),
//! checked in [`super::ns3`].
//!
//! # Canonical form
//! A table serialises as its canonical form, which the config hash covers:
//! its keys in declaration order, an array key (`nakagami_m`, declared as
//! `nakagami_m[0]`, `nakagami_m[1]`, ...) as one array where its first
//! element is. A table the schema marks `canonical_defaults` (background,
//! traces) has every default made explicit; the others (radio, placement)
//! keep the keys written. That is the form the bridge's former typed tables
//! serialised to, so every config hash stays as it was
//! (tests/cli/config_hashes.rs).

use std::path::Path;
use std::sync::Arc;

use serde::ser::SerializeMap;
use serde::Serialize;

use super::described::{canonical, scenario_of_default};
use super::ns3::ServerArgument;
use super::{bad, KeyPath, ScenarioError};
use crate::keyed::Expected;
use crate::network_schema::{ArgumentType, TableSchema};

/// One `[network.<name>]` table: its keys as written, and what the schema
/// made of them.
#[derive(Clone, Debug, PartialEq)]
pub struct TableConfig {
    pub schema: Arc<TableSchema>,
    /// As written (after overrides).
    pub keys: toml::Table,
    /// Every key of the canonical form, in the schema's order.
    values: Vec<TableValue>,
}

/// One key of the canonical form.
#[derive(Clone, Debug, PartialEq)]
struct TableValue {
    /// Under the table, e.g. `nakagami_m`.
    key: String,
    /// Whether the scenario wrote it (else it is a default).
    written: bool,
    /// In the scenario's spelling, for the config hash.
    scenario: serde_json::Value,
    /// Each argument it becomes (one per element of an array key): index
    /// into the schema's arguments and the value as the command line
    /// writes it.
    arguments: Vec<(usize, String)>,
}

/// A scenario key of a table and the arguments declared for it: one, or
/// one per element of an array key (`nakagami_m[0]`, ...), in order.
struct Entry<'a> {
    key: &'a str,
    arguments: Vec<usize>,
    array: bool,
}

/// The keys of a table's arguments, in declaration order.
fn entries(schema: &TableSchema) -> Vec<Entry<'_>> {
    let mut out: Vec<Entry> = Vec::new();
    for (at, a) in schema.arguments.iter().enumerate() {
        let (key, array) = match a.key.split_once('[') {
            Some((key, _)) => (key, true),
            None => (a.key.as_str(), false),
        };
        match out.iter_mut().find(|e| e.key == key) {
            Some(e) => e.arguments.push(at),
            None => out.push(Entry {
                key,
                arguments: vec![at],
                array,
            }),
        }
    }
    out
}

impl TableConfig {
    /// Checks the table `value` against its schema: every key known, of its
    /// type, within its limits, the required ones written; then makes the
    /// canonical form.
    ///
    /// # Errors
    /// The first bad key, named `network.<table>.<key>`.
    pub fn new(
        schema: Arc<TableSchema>,
        value: &toml::Value,
    ) -> Result<TableConfig, ScenarioError> {
        let table_key = KeyPath::from("network").and(&schema.name);
        let key = |k: &str| table_key.child(k);
        let Some(keys) = value.as_table() else {
            return Err(ScenarioError::expecting(
                table_key,
                format!("invalid type: {value}"),
                "a table",
            ));
        };
        let entries = entries(&schema);
        for k in keys.keys() {
            if !entries.iter().any(|e| e.key == k) {
                let known = entries.iter().map(|e| e.key.to_string()).collect();
                return Err(ScenarioError {
                    expected: Some(Expected::Keys(known)),
                    ..bad(key(k), format!("unknown field `{k}`"))
                });
            }
        }
        let mut values = Vec::new();
        for entry in &entries {
            let first = &schema.arguments[entry.arguments[0]];
            if let Some(written) = keys.get(entry.key) {
                values.push(read(&schema, entry, written, &key(entry.key))?);
                continue;
            }
            if first.required {
                return Err(bad(&table_key, format!("missing field `{}`", entry.key)));
            }
            if !schema.canonical_defaults {
                continue;
            }
            let mut scenario = Vec::new();
            let mut arguments = Vec::new();
            for &at in &entry.arguments {
                let argument = &schema.arguments[at];
                let Some(text) = &argument.default else {
                    break;
                };
                let (value, text) = if argument.kind == ArgumentType::TraceFile {
                    let on = !text.is_empty();
                    (serde_json::Value::from(on), on.to_string())
                } else {
                    let value = scenario_of_default(argument, text).map_err(|message| {
                        bad(
                            key(entry.key),
                            format!("the server's default {text:?} is not valid: {message}"),
                        )
                    })?;
                    (value, text.clone())
                };
                scenario.push(value);
                arguments.push((at, text));
            }
            if arguments.len() != entry.arguments.len() {
                continue;
            }
            values.push(TableValue {
                key: entry.key.to_string(),
                written: false,
                scenario: if entry.array {
                    serde_json::Value::from(scenario)
                } else {
                    scenario.remove(0)
                },
                arguments,
            });
        }
        Ok(TableConfig {
            schema,
            keys: keys.clone(),
            values,
        })
    }

    /// The table's name, e.g. `radio`.
    pub fn name(&self) -> &str {
        &self.schema.name
    }

    /// Whether a trace (or any `trace_file` argument) is turned on.
    pub fn any_file(&self) -> bool {
        self.values.iter().any(|v| {
            v.arguments.iter().any(|(at, text)| {
                self.schema.arguments[*at].kind == ArgumentType::TraceFile && text == "true"
            })
        })
    }

    /// The keys the scenario wrote, each with the arguments it becomes
    /// (schema index, command-line text), in the schema's order.
    pub(crate) fn written(&self) -> impl Iterator<Item = (&str, &[(usize, String)])> {
        self.values
            .iter()
            .filter(|v| v.written)
            .map(|v| (v.key.as_str(), v.arguments.as_slice()))
    }

    /// The server's arguments: every key of the canonical form, each with
    /// its scenario key (an array's elements with their index). A `path`
    /// is relative to `base_dir`; a `trace_file` turned on is its file in
    /// `trace_dir`, one turned off is no argument.
    pub(crate) fn server_arguments(
        &self,
        base_dir: &Path,
        trace_dir: &Path,
    ) -> Vec<ServerArgument> {
        let mut out = Vec::new();
        for v in &self.values {
            for (at, text) in &v.arguments {
                let argument = &self.schema.arguments[*at];
                let value = match argument.kind {
                    ArgumentType::Path => base_dir.join(text).display().to_string(),
                    ArgumentType::TraceFile if text == "true" => trace_dir
                        .join(argument.file.as_deref().unwrap_or(&argument.name))
                        .display()
                        .to_string(),
                    ArgumentType::TraceFile => continue,
                    _ => text.clone(),
                };
                out.push(ServerArgument::new(
                    &argument.name,
                    value,
                    argument
                        .key
                        .split('.')
                        .fold(KeyPath::key("network").and(&self.schema.name), KeyPath::and),
                ));
            }
        }
        out
    }
}

/// A written key: its value, or each element of an array key's.
fn read(
    schema: &TableSchema,
    entry: &Entry,
    written: &toml::Value,
    key: &KeyPath,
) -> Result<TableValue, ScenarioError> {
    let one = |at: usize, value: &toml::Value, key: &KeyPath| {
        let argument = &schema.arguments[at];
        if argument.kind == ArgumentType::TraceFile {
            return match value {
                toml::Value::Boolean(b) => Ok((serde_json::Value::from(*b), b.to_string())),
                other => Err(ScenarioError::expecting(
                    key.clone(),
                    format!("invalid type: {other}"),
                    "true or false",
                )),
            };
        }
        let (scenario, text) = canonical(argument, value).map_err(|r| r.at(key.clone()))?;
        argument.check(&text).map_err(|m| bad(key, m))?;
        Ok((scenario, text))
    };
    if !entry.array {
        let at = entry.arguments[0];
        let (scenario, text) = one(at, written, key)?;
        return Ok(TableValue {
            key: entry.key.to_string(),
            written: true,
            scenario,
            arguments: vec![(at, text)],
        });
    }
    let n = entry.arguments.len();
    let items = match written {
        toml::Value::Array(items) if items.len() == n => items,
        toml::Value::Array(items) => {
            return Err(ScenarioError::expecting(
                key.clone(),
                format!("invalid length {}", items.len()),
                format!("an array of length {n}"),
            ))
        }
        other => {
            return Err(ScenarioError::expecting(
                key.clone(),
                format!("invalid type: {other}"),
                format!("an array of length {n}"),
            ))
        }
    };
    let mut scenario = Vec::new();
    let mut arguments = Vec::new();
    for (i, (&at, item)) in entry.arguments.iter().zip(items).enumerate() {
        let (s, text) = one(at, item, &key.clone().at(i))?;
        scenario.push(s);
        arguments.push((at, text));
    }
    Ok(TableValue {
        key: entry.key.to_string(),
        written: true,
        scenario: serde_json::Value::from(scenario),
        arguments,
    })
}

/// The canonical form (see the module docs).
impl Serialize for TableConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.values.len()))?;
        for v in &self.values {
            map.serialize_entry(&v.key, &v.scenario)?;
        }
        map.end()
    }
}
