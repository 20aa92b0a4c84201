//! docs/scenario.md's network tables, generated from the server's schema
//! ([`crate::network_schema`]): one table per network kind (`[network.ns3]`)
//! and per shared table (`[network.radio]`, ...), each between two marker
//! lines in the markdown:
//!
//! ```text
//! <!-- network-docs: kind p2p -->
//! | key | type / unit | default | meaning |
//! ...
//! <!-- /network-docs -->
//! ```
//!
//! `scripts/gen-network-docs.sh` rewrites what is between the markers
//! ([`update`]); tests/cli/docs.rs fails when the docs are not what the
//! committed schema generates. The prose around the markers is written by
//! hand.

use crate::network_schema::{ArgumentSchema, ArgumentType, KindSchema, NetworkSchema, TableSchema};

/// The line that opens a generated block; `what` is `kind <name>` or `table <name>`.
pub fn begin_marker(what: &str) -> String {
    format!("<!-- network-docs: {what} -->")
}

/// The line that closes every generated block.
pub const END_MARKER: &str = "<!-- /network-docs -->";

/// Every generated block of the schema: (`kind <name>` | `table <name>`, markdown).
pub fn blocks(schema: &NetworkSchema) -> Vec<(String, String)> {
    let kinds = schema
        .kinds
        .iter()
        .map(|k| (format!("kind {}", k.name), kind_table(k)));
    let tables = schema
        .tables
        .iter()
        .map(|t| (format!("table {}", t.name), shared_table(t, schema)));
    kinds.chain(tables).collect()
}

/// `markdown` with every generated block replaced by what `schema`
/// generates.
///
/// # Errors
/// A block the schema generates has no markers (a new kind: add its
/// section), or markers name a kind or table the schema does not have.
pub fn update(markdown: &str, schema: &NetworkSchema) -> Result<String, String> {
    let blocks = blocks(schema);
    let mut out = String::new();
    let mut rest = markdown;
    let mut seen = Vec::new();
    while let Some(at) = rest.find("<!-- network-docs: ") {
        let line_end = rest[at..].find('\n').map_or(rest.len(), |i| at + i + 1);
        let marker = rest[at..line_end].trim_end();
        let what = marker
            .strip_prefix("<!-- network-docs: ")
            .and_then(|m| m.strip_suffix(" -->"))
            .ok_or_else(|| format!("malformed marker {marker:?}"))?;
        let Some((_, body)) = blocks.iter().find(|(w, _)| w == what) else {
            return Err(format!(
                "docs name `{what}`, which the schema does not have: remove its section"
            ));
        };
        let end = rest[line_end..]
            .find(END_MARKER)
            .map(|i| line_end + i)
            .ok_or_else(|| format!("{marker} has no {END_MARKER}"))?;
        out.push_str(&rest[..line_end]);
        out.push_str(body);
        seen.push(what.to_string());
        rest = &rest[end..];
    }
    out.push_str(rest);
    if let Some((what, _)) = blocks.iter().find(|(w, _)| !seen.contains(w)) {
        return Err(format!(
            "`{what}` has no table in the docs: add a section with the lines {} and {END_MARKER}",
            begin_marker(what)
        ));
    }
    Ok(out)
}

const HEADER: &str = "| key | type / unit | default | meaning |\n|---|---|---|---|\n";

fn kind_table(kind: &KindSchema) -> String {
    let mut out = String::from(HEADER);
    let rule = &kind.node_count;
    let default = if rule.required {
        "required".to_string()
    } else {
        "highest node a loop uses + 1".to_string()
    };
    out.push_str(&format!(
        "| `{}` | integer, {} to {} | {default} | {} |\n",
        rule.key,
        number(rule.min as f64),
        number(rule.max as f64),
        sentence(&rule.doc)
    ));
    for a in kind.arguments.iter().filter(|a| a.name != rule.argument) {
        out.push_str(&row(&a.key, a, std::slice::from_ref(a)));
    }
    let tables: Vec<String> = kind
        .tables
        .iter()
        .map(|t| {
            if t.arguments.is_empty() && t.choices.is_empty() {
                format!("`[network.{}]`", t.name)
            } else {
                format!("`[network.{}]` (in part)", t.name)
            }
        })
        .collect();
    out.push_str(&format!(
        "\nShared tables it takes: {}.\n",
        if tables.is_empty() {
            "none".to_string()
        } else {
            tables.join(", ")
        }
    ));
    out
}

fn shared_table(table: &TableSchema, schema: &NetworkSchema) -> String {
    let mut out = String::from(HEADER);
    let mut done: Vec<&str> = Vec::new();
    for a in &table.arguments {
        let key = a.key.split_once('[').map_or(a.key.as_str(), |(k, _)| k);
        if done.contains(&key) {
            continue;
        }
        done.push(key);
        let elements: Vec<ArgumentSchema> = table
            .arguments
            .iter()
            .filter(|b| b.key == key || b.key.starts_with(&format!("{key}[")))
            .cloned()
            .collect();
        out.push_str(&row(key, a, &elements));
    }
    let mut takers = Vec::new();
    for k in &schema.kinds {
        match k.table_use(&table.name) {
            None => {}
            Some(u) if u.arguments.is_empty() && u.choices.is_empty() => {
                takers.push(format!("`{}`", k.name))
            }
            Some(u) => {
                let keys: Vec<String> = table
                    .arguments
                    .iter()
                    .filter(|a| u.takes(&a.name))
                    .map(|a| {
                        a.key
                            .split_once('[')
                            .map_or(a.key.clone(), |(k, _)| k.to_string())
                    })
                    .fold(Vec::new(), |mut v, k| {
                        if !v.contains(&k) {
                            v.push(k);
                        }
                        v
                    });
                let mut text = format!(
                    "`{}` ({}",
                    k.name,
                    keys.iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                for (name, values) in &u.choices {
                    if let Some(a) = table.arguments.iter().find(|a| a.name == *name) {
                        let spelled: Vec<String> = values
                            .iter()
                            .map(|v| {
                                let s = a
                                    .choices
                                    .iter()
                                    .find(|c| c.argument == *v)
                                    .map_or(v.as_str(), |c| c.value.as_str());
                                format!("`\"{s}\"`")
                            })
                            .collect();
                        text.push_str(&format!("; `{}` {}", a.key, spelled.join(", ")));
                    }
                }
                text.push(')');
                takers.push(text);
            }
        }
    }
    out.push_str(&format!(
        "\nKinds that take it: {}.\n",
        if takers.is_empty() {
            "none".to_string()
        } else {
            takers.join("; ")
        }
    ));
    out
}

/// One row: `key` of `elements` (one argument, or each element of an array key).
fn row(key: &str, a: &ArgumentSchema, elements: &[ArgumentSchema]) -> String {
    let array = elements.len() > 1;
    let kind = type_cell(a);
    let kind = if array {
        format!("array of {}: {kind}", elements.len())
    } else {
        kind
    };
    let default = if array {
        let defaults: Option<Vec<String>> = elements
            .iter()
            .map(|e| e.default.as_deref().map(|d| scenario_default(e, d)))
            .collect();
        match defaults {
            Some(d) => format!("`[{}]`", d.join(", ")),
            None => "none".to_string(),
        }
    } else {
        default_cell(a)
    };
    let docs: Vec<String> = elements.iter().map(|e| sentence(&e.doc)).collect();
    let mut meaning = if array {
        docs.iter()
            .enumerate()
            .map(|(i, d)| format!("[{i}]: {d}"))
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        sentence(&a.doc)
    };
    if let (ArgumentType::TraceFile, Some(file)) = (a.kind, &a.file) {
        meaning.push_str(&format!(" In `ns3/{file}`."));
    }
    format!("| `{key}` | {kind} | {default} | {meaning} |\n")
}

fn type_cell(a: &ArgumentSchema) -> String {
    let unit = if a.unit.is_empty() {
        String::new()
    } else {
        a.unit.clone()
    };
    let mut limits = Vec::new();
    if !a.allowed.is_empty() {
        let list: Vec<String> = a.allowed.iter().map(|x| number(*x)).collect();
        limits.push(format!("one of {}", list.join(", ")));
    }
    match (a.min, a.max) {
        (Some(min), Some(max)) => limits.push(format!("{} to {}", number(min), number(max))),
        (Some(min), None) => limits.push(format!("≥ {}", number(min))),
        (None, Some(max)) => limits.push(format!("≤ {}", number(max))),
        (None, None) => {}
    }
    if let Some(above) = a.above {
        limits.push(format!("> {}", number(above)));
    }
    let base = match a.kind {
        ArgumentType::Integer => "integer".to_string(),
        ArgumentType::Real => "number".to_string(),
        ArgumentType::Boolean | ArgumentType::TraceFile => "bool".to_string(),
        ArgumentType::Text => "string".to_string(),
        ArgumentType::Choice => a
            .choices
            .iter()
            .map(|c| format!("`\"{}\"`", c.value))
            .collect::<Vec<_>>()
            .join(" \\| "),
        ArgumentType::DataRate => "data rate".to_string(),
        ArgumentType::Duration => "duration".to_string(),
        ArgumentType::Positions => "list of `[x, y, z]`".to_string(),
        ArgumentType::NodeList => "`\"all\"` \\| `\"none\"` \\| list of node indices".to_string(),
        ArgumentType::Path => "path".to_string(),
    };
    let mut cell = base;
    if !unit.is_empty() {
        cell.push_str(&format!(", {unit}"));
    }
    if !limits.is_empty() {
        cell.push_str(&format!(", {}", limits.join(", ")));
    }
    cell
}

/// A default as the scenario writes it.
fn scenario_default(a: &ArgumentSchema, text: &str) -> String {
    match a.kind {
        ArgumentType::Choice => format!(
            "\"{}\"",
            a.choices
                .iter()
                .find(|c| c.argument == text)
                .map_or(text, |c| c.value.as_str())
        ),
        ArgumentType::TraceFile => (!text.is_empty()).to_string(),
        ArgumentType::Integer | ArgumentType::Real | ArgumentType::Boolean => text.to_string(),
        _ => format!("\"{text}\""),
    }
}

fn default_cell(a: &ArgumentSchema) -> String {
    if a.required {
        return "required".to_string();
    }
    let mut cell = match (&a.default, &a.unset) {
        (Some(d), _) => format!("`{}`", scenario_default(a, d)),
        (None, Some(unset)) => unset.clone(),
        (None, None) => "none".to_string(),
    };
    if let Some(t) = &a.table_default {
        cell.push_str(&format!(
            "; `{}` when its table is written",
            scenario_default(a, t)
        ));
    }
    cell
}

/// A number as the docs write it: thousands split by a thin space (65 534).
fn number(x: f64) -> String {
    let text = x.to_string();
    let (int, frac) = text
        .split_once('.')
        .map_or((text.as_str(), ""), |(i, f)| (i, f));
    let (sign, digits) = int.strip_prefix('-').map_or(("", int), |d| ("-", d));
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 && digits.len() > 4 {
            grouped.push(' ');
        }
        grouped.push(c);
    }
    if frac.is_empty() {
        format!("{sign}{grouped}")
    } else {
        format!("{sign}{grouped}.{frac}")
    }
}

/// Help text as the server writes it, with a full stop; `|` escaped.
fn sentence(doc: &str) -> String {
    let mut out = doc.trim().replace('|', "\\|");
    if !out.is_empty() && !out.ends_with('.') {
        out.push('.');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_group_thousands_from_five_digits() {
        assert_eq!(number(65534.0), "65 534");
        assert_eq!(number(1000.0), "1000");
        assert_eq!(number(-100.0), "-100");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(16.0206), "16.0206");
    }

    #[test]
    fn update_replaces_blocks_and_names_a_missing_one() {
        let schema = crate::network_schema::standard();
        let mut doc = String::from("# Title\n");
        for (what, _) in blocks(&schema) {
            doc.push_str(&format!("\n{}\nstale\n{END_MARKER}\n", begin_marker(&what)));
        }
        let updated = update(&doc, &schema).unwrap();
        assert!(!updated.contains("stale"));
        assert_eq!(update(&updated, &schema).unwrap(), updated);
        let without_lte = updated.replace(&begin_marker("kind lte"), "<!-- gone -->");
        let err = update(&without_lte, &schema).unwrap_err();
        assert!(err.contains("`kind lte` has no table"), "{err}");
    }
}
