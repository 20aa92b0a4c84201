//! The docs stay true: every key the scenario format accepts is documented
//! in its own table of docs/scenario.md (and every sweep-file key in
//! docs/sweeps.md), the files the tutorial names exist and work, the
//! example files check, and the test files their comments name exist.
//!
//! The keys come from the loader `netloop check` uses, not from a list kept
//! by hand. Every table rejects unknown keys, and the loader's error for one
//! lists all the keys the table has ([`Expected::Keys`]); an unknown `kind`
//! lists the kinds ([`Expected::Variants`]). Probing a table with a key that
//! cannot exist, then each of its keys with a table, a `kind` that cannot
//! exist and an array of tables, walks the whole format: nested tables,
//! arrays of tables, and every kind of a `kind = "..."` table.

use std::collections::BTreeSet;
use std::path::Path;

use bridge::keyed::{Expected, Segment};
use bridge::scenario_file::LoadError;
use toml::{Table, Value};

use crate::support::{assert_exit, column, read_csv, root, run, run_sweep, stdout};

/// A key no table has.
const PROBE: &str = "zz_not_a_key";

/// One table of a file format as its loader sees it.
#[derive(Debug)]
struct FormatTable {
    /// Dotted path without array indices, `loops.plant`; `""` is the top level.
    path: String,
    /// The `kind` of a tagged table.
    kind: Option<String>,
    keys: Vec<String>,
}

/// What the loader said of a document: the key it refused (without array
/// indices) and what it expected there; `None` when the document loads.
#[derive(Debug)]
struct Verdict {
    key: Vec<String>,
    expected: Option<Expected>,
}

/// A loader's verdict on a document's text.
type Loader = fn(&str) -> Option<Verdict>;

fn verdict(result: Result<(), LoadError>) -> Option<Verdict> {
    match result {
        Ok(()) => None,
        Err(LoadError::Invalid(e)) => Some(Verdict {
            key: e
                .key
                .0
                .iter()
                .filter_map(|s| match s {
                    Segment::Key(k) => Some(k.clone()),
                    Segment::Index(_) => None,
                })
                .collect(),
            expected: e.expected,
        }),
        Err(other) => panic!("the walk's document is not a scenario: {other}"),
    }
}

/// A step into a TOML document: a key, or the first entry of an array.
#[derive(Clone)]
enum Seg {
    Key(String),
    First,
}

/// The backquoted spans of `text`.
fn quoted(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn table_of<const N: usize>(entries: [(&str, Value); N]) -> Table {
    entries
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// `doc` with `content` at `path`, creating the tables and arrays on the way.
fn put(doc: &Value, path: &[Seg], content: Value) -> Value {
    let mut doc = doc.clone();
    let mut at = &mut doc;
    for (i, seg) in path.iter().enumerate() {
        let fresh = match path.get(i + 1) {
            Some(Seg::First) => Value::Array(vec![Value::Table(Table::new())]),
            _ => Value::Table(Table::new()),
        };
        at = match seg {
            Seg::Key(k) => at.as_table_mut().unwrap().entry(k.clone()).or_insert(fresh),
            Seg::First => &mut at.as_array_mut().unwrap()[0],
        };
    }
    *at = content;
    doc
}

/// The value at `path` of `doc`, if there is one.
fn get<'a>(doc: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    path.iter().try_fold(doc, |at, seg| match seg {
        Seg::Key(k) => at.as_table()?.get(k),
        Seg::First => at.as_array()?.first(),
    })
}

fn keys_of(path: &[Seg]) -> Vec<String> {
    path.iter()
        .filter_map(|s| match s {
            Seg::Key(k) => Some(k.clone()),
            Seg::First => None,
        })
        .collect()
}

/// Walks a file format through the verdicts of its loader.
struct Walker {
    load: Loader,
    /// Tables the walk lists but does not enter: documented elsewhere.
    skip: fn(&[String], Option<&str>) -> bool,
    tables: Vec<FormatTable>,
}

impl Walker {
    /// Every table of the format; `base` is a valid document of it.
    fn walk(load: Loader, base: &str) -> Vec<FormatTable> {
        Self::walk_but(load, base, |_, _| false)
    }

    /// [`Walker::walk`], not entering the tables `skip` names (by their
    /// keys and kind).
    fn walk_but(
        load: Loader,
        base: &str,
        skip: fn(&[String], Option<&str>) -> bool,
    ) -> Vec<FormatTable> {
        let doc: Value = toml::from_str(base).unwrap();
        let mut walker = Walker {
            load,
            skip,
            tables: Vec::new(),
        };
        if let Some(v) = walker.verdict(&doc) {
            panic!("the base document does not load: {v:?}");
        }
        walker.table(&doc, &[], None, doc.as_table().unwrap().clone());
        walker.tables
    }

    fn verdict(&self, doc: &Value) -> Option<Verdict> {
        (self.load)(&toml::to_string(doc).unwrap())
    }

    /// The names the loader listed as `what` when it refused `key`.
    fn listed(
        verdict: &Option<Verdict>,
        key: &[String],
        what: fn(&Expected) -> Option<&Vec<String>>,
    ) -> Option<Vec<String>> {
        let v = verdict.as_ref()?;
        (v.key == key).then_some(())?;
        what(v.expected.as_ref()?).cloned()
    }

    /// Records the table at `path` of `doc` that holds `fixed` (its `kind`;
    /// the whole base document at the top) and descends into its keys.
    fn table(&mut self, doc: &Value, path: &[Seg], kind: Option<String>, fixed: Table) {
        let name = keys_of(path).join(".");
        let probe = || Value::Table(table_of([(PROBE, Value::Integer(0))]));
        fn keys_listed(e: &Expected) -> Option<&Vec<String>> {
            match e {
                Expected::Keys(k) => Some(k),
                _ => None,
            }
        }
        fn kinds_listed(e: &Expected) -> Option<&Vec<String>> {
            match e {
                Expected::Variants(k) => Some(k),
                _ => None,
            }
        }
        let at = |inner: &[&str]| {
            let mut keys = keys_of(path);
            keys.extend(inner.iter().map(ToString::to_string));
            keys
        };
        // The loader's verdict on this table with `key = content` added.
        let with = |key: &str, content: Value| {
            let mut t = fixed.clone();
            t.insert(key.to_string(), content);
            self.verdict(&put(doc, path, Value::Table(t)))
        };
        let verdict = with(PROBE, Value::Integer(0));
        let keys = Self::listed(&verdict, &at(&[PROBE]), keys_listed)
            .unwrap_or_else(|| panic!("`{name}` does not reject an unknown key: {verdict:?}"));
        let mut children = Vec::new();
        for key in &keys {
            let mut inner = path.to_vec();
            inner.push(Seg::Key(key.clone()));
            if Self::listed(
                &with(key, probe()),
                &at(&[key.as_str(), PROBE]),
                keys_listed,
            )
            .is_some()
            {
                children.push((inner, None));
                continue;
            }
            // A `kind = "..."` table: an unknown kind lists the kinds, and
            // a listed one is taken (a one-entry enum table `{ kind = ... }`
            // refuses every `kind`).
            let tagged =
                |kind: &str| Value::Table(table_of([("kind", Value::String(kind.into()))]));
            let kind_key = at(&[key.as_str(), "kind"]);
            if let Some(kinds) = Self::listed(&with(key, tagged(PROBE)), &kind_key, kinds_listed) {
                let taken =
                    |kind: &String| with(key, tagged(kind)).is_none_or(|v| v.key != kind_key);
                if kinds.iter().any(taken) {
                    children.extend(kinds.into_iter().map(|k| (inner.clone(), Some(k))));
                    continue;
                }
            }
            let array = with(key, Value::Array(vec![probe()]));
            if Self::listed(&array, &at(&[key.as_str(), PROBE]), keys_listed).is_some() {
                inner.push(Seg::First);
                children.push((inner, None));
            }
        }
        let here = put(doc, path, Value::Table(fixed));
        for (inner, kind) in children {
            if (self.skip)(&keys_of(&inner), kind.as_deref()) {
                self.tables.push(FormatTable {
                    path: keys_of(&inner).join("."),
                    kind,
                    keys: Vec::new(),
                });
                continue;
            }
            // A tagged table holds its kind; another keeps what the base
            // document has there (`[network]`'s `backend`), since the
            // loader checks a table as a whole before its sub-tables.
            let fixed = match &kind {
                Some(k) => table_of([("kind", Value::String(k.clone()))]),
                None => get(&here, &inner)
                    .and_then(Value::as_table)
                    .cloned()
                    .unwrap_or_default(),
            };
            self.table(&here, &inner, kind, fixed);
        }
        self.tables.push(FormatTable {
            path: name,
            kind,
            keys,
        });
    }
}

/// A block of a markdown page.
enum Block {
    Heading(String),
    Paragraph(String),
    /// Rows of cells, the header first, without the `|---|` line.
    Table(Vec<Vec<String>>),
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut code = false;
    for line in markdown.lines().map(str::trim) {
        if line.starts_with("```") {
            code = !code;
        } else if code {
        } else if line.is_empty() {
            out.push(Block::Paragraph(String::new()));
        } else if let Some(heading) = line.strip_prefix('#') {
            out.push(Block::Heading(
                heading.trim_start_matches('#').trim().to_string(),
            ));
        } else if line.starts_with('|') {
            // `\|` is a `|` inside a cell (`"chain"` \| `"star"`).
            let cells: Vec<String> = line
                .replace("\\|", "\u{1}")
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().replace('\u{1}', "|"))
                .collect();
            match out.last_mut() {
                _ if cells[0].starts_with("---") => {}
                Some(Block::Table(rows)) => rows.push(cells),
                _ => out.push(Block::Table(vec![cells])),
            }
        } else if let Some(Block::Paragraph(text)) = out.last_mut() {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(line);
        } else {
            out.push(Block::Paragraph(line.to_string()));
        }
    }
    out.retain(|b| !matches!(b, Block::Paragraph(p) if p.is_empty()));
    out
}

/// A key table of a markdown page: `| key | ... |` with the keys of a row in
/// its first cell, or `| `kind` | keys | ... |` with one kind per row. A bold
/// `**`kind = "x"`**` paragraph without a table of its own counts as an
/// empty table of that kind.
#[derive(Debug)]
struct DocTable {
    /// What it documents: the dotted paths in its heading (`[network.ns3]`)
    /// or bare names there (`mobility`, `uplink`); `parent.name` for a title
    /// line `name = { ... }` under a heading `[parent]`; `""` for the top.
    names: Vec<String>,
    /// The kinds its heading or its title line names (`kind = "pid"`);
    /// none for a table that every kind shares.
    kinds: Vec<String>,
    /// Per row: its kind (in a kind table) and its keys.
    rows: Vec<(Option<String>, Vec<String>)>,
}

/// The `x` of every `kind = "x"` in a text.
fn kinds_in(text: &str) -> Vec<String> {
    quoted(text)
        .iter()
        .filter_map(|q| Some(q.strip_prefix("kind = \"")?.strip_suffix('"')?.to_string()))
        .collect()
}

/// The keys of a cell: `u_min`, `u_max` -> both; `[loops.reference]` -> `reference`.
fn cell_keys(cell: &str) -> Vec<String> {
    quoted(cell)
        .iter()
        .map(|q| {
            q.trim_matches(|c| c == '[' || c == ']' || c == '"')
                .rsplit('.')
                .next()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// The key tables of a markdown page; `top` is the heading of the top-level keys.
fn doc_tables(markdown: &str, top: &str) -> Vec<DocTable> {
    let mut tables = Vec::new();
    let (mut heading, mut before) = (String::new(), String::new());
    for block in blocks(markdown) {
        let paths: Vec<String> = quoted(&heading)
            .iter()
            .filter(|q| !q.contains(' '))
            .map(|q| q.trim_matches(|c| c == '[' || c == ']').to_string())
            .collect();
        let rows = match block {
            Block::Heading(h) => {
                (heading, before) = (h, String::new());
                continue;
            }
            Block::Paragraph(p) => {
                if p.starts_with("**") && !kinds_in(&p).is_empty() {
                    tables.push(DocTable {
                        names: paths,
                        kinds: kinds_in(&p),
                        rows: Vec::new(),
                    });
                }
                before = p;
                continue;
            }
            Block::Table(rows) => rows,
        };
        let kind_table = rows[0][0] == "`kind`";
        if rows[0][0] != "key" && !kind_table {
            continue;
        }
        // The paragraph just above titles the table when it ends in ':' or starts in bold.
        let title = if before.ends_with(':') || before.starts_with("**") {
            before.as_str()
        } else {
            ""
        };
        let inline: Vec<String> = quoted(title)
            .iter()
            .filter_map(|q| Some(q.split_once(" = {")?.0.to_string()))
            .collect();
        // A table titled `name = { ... }` lives inside its heading's table, whatever that one's kind.
        let mut kinds = if inline.is_empty() {
            kinds_in(&heading)
        } else {
            Vec::new()
        };
        kinds.extend(kinds_in(title));
        let names = if heading == top {
            vec![String::new()]
        } else if inline.is_empty() {
            paths
        } else {
            let parent = paths.first().cloned().unwrap_or_default();
            inline
                .iter()
                .map(|name| format!("{parent}.{name}"))
                .collect()
        };
        let rows = rows[1..]
            .iter()
            .flat_map(|cells| match kind_table {
                true => cell_keys(&cells[0])
                    .into_iter()
                    .map(|k| (Some(k), cell_keys(&cells[1])))
                    .collect(),
                false => vec![(None, cell_keys(&cells[0]))],
            })
            .collect();
        tables.push(DocTable { names, kinds, rows });
    }
    tables
}

/// Every key of `format` that its own table of `markdown` does not list, and
/// every kind that no table names. A format table is documented by the doc
/// tables named by its path (else by its last segment): the ones of its kind
/// and the ones every kind shares. `same_as` maps a table to the one that
/// documents it for it (a disturbance signal is a reference signal).
fn undocumented(
    format: &[FormatTable],
    markdown: &str,
    top: &str,
    same_as: &[(&str, &str)],
) -> Vec<String> {
    let docs = doc_tables(markdown, top);
    let mut problems = Vec::new();
    for t in format {
        let path = same_as
            .iter()
            .find(|(from, _)| *from == t.path)
            .map_or(t.path.as_str(), |(_, to)| to);
        let last = path.rsplit('.').next().unwrap();
        let named = |name: &str| {
            docs.iter()
                .filter(|d| d.names.iter().any(|n| n == name))
                .collect::<Vec<_>>()
        };
        let candidates = match named(path) {
            exact if !exact.is_empty() => exact,
            _ => named(last),
        };
        let what = match &t.kind {
            Some(kind) => format!("`{}` (kind = \"{kind}\")", t.path),
            None => format!("`{}`", t.path),
        };
        if candidates.is_empty() {
            problems.push(format!("{what}: no table documents it"));
            continue;
        }
        let of_kind = |kind: &Option<String>, d: &DocTable| match kind {
            Some(k) => d.kinds.contains(k),
            None => false,
        };
        if t.kind.is_some()
            && !candidates
                .iter()
                .any(|d| of_kind(&t.kind, d) || d.rows.iter().any(|(k, _)| *k == t.kind))
        {
            problems.push(format!("{what}: no table or title line names this kind"));
        }
        let documented: BTreeSet<&String> = candidates
            .iter()
            .flat_map(|d| {
                let shared = d.kinds.is_empty();
                let mine = of_kind(&t.kind, d);
                d.rows
                    .iter()
                    .filter(move |(k, _)| match k {
                        Some(_) => *k == t.kind,
                        None => shared || mine,
                    })
                    .flat_map(|(_, keys)| keys)
            })
            .collect();
        for key in t.keys.iter().filter(|k| !documented.contains(k)) {
            problems.push(format!("{what}: key `{key}` is not in its table"));
        }
    }
    problems
}

/// `netloop check`'s loader, on a scenario of either kind.
fn load_scenario(text: &str) -> Option<Verdict> {
    verdict(bridge::loaded_scenario::load_text(Path::new("walk.toml"), text, &[]).map(drop))
}

/// The sweep file's loader.
fn load_sweep(text: &str) -> Option<Verdict> {
    verdict(
        bridge::scenario_file::deserialize_file::<bridge::sweep::SweepFile>(
            Path::new("walk-sweep.toml"),
            text,
        )
        .map(drop),
    )
}

/// The kinds of `[network.ns3]` but `custom` and the shared network tables
/// are the server's schema's: the walk lists them (the loader names them
/// all), and `the_network_tables_are_generated_from_the_servers_schema`
/// checks their tables.
fn described_by_the_schema(keys: &[String], kind: Option<&str>) -> bool {
    let schema = bridge::network_schema::standard();
    match (keys, kind) {
        ([network, ns3], Some(kind)) if network == "network" && ns3 == "ns3" => {
            kind != "custom" && schema.kind(kind).is_some()
        }
        ([network, table], None) if network == "network" => schema.table(table).is_some(),
        _ => false,
    }
}

/// The smallest scenario that loads; the walk replaces its tables one by one.
const SCENARIO_BASE: &str = r#"
duration = "1s"
step = "1ms"
[sync]
scheme = "master_slave"
period = "1ms"
[network]
backend = "builtin"
[network.builtin]
delay = { kind = "constant", value = "1ms" }
[[loops]]
name = "servo"
plant = { kind = "dc_servo" }
sensor = { period = "10ms" }
controller = { kind = "pid", kp = 1.0 }
"#;

/// A mass-spring-damper's disturbance force is a reference signal.
const SCENARIO_SAME_AS: &[(&str, &str)] = &[("loops.plant.external_force", "loops.reference")];

/// The smallest graph scenario that loads: a plant and its controller.
const GRAPH_BASE: &str = r#"
duration = "1s"
step = "1ms"
[[components]]
name = "servo"
plant = { kind = "dc_servo" }
[[components]]
name = "pid"
controller = { kind = "pid", kp = 1.0, period = "10ms" }
[[connections]]
from = "servo.y"
to = "pid.measurement"
[[connections]]
from = "pid.u"
to = "servo.u"
"#;

/// A component's kind tables are a loop's, documented once.
const GRAPH_SAME_AS: &[(&str, &str)] = &[
    ("components.plant", "loops.plant"),
    ("components.plant.external_force", "loops.reference"),
    ("components.sensor", "loops.sensor"),
    ("components.actuator", "loops.actuator"),
    ("components.controller", "loops.controller"),
    ("components.reference", "loops.reference"),
];

/// Graph scenarios (`[[components]]`) are documented key by key too.
#[test]
fn every_graph_scenario_key_is_documented() {
    let tables = Walker::walk_but(load_scenario, GRAPH_BASE, described_by_the_schema);
    assert!(tables
        .iter()
        .any(|t| t.path == "components.controller" && t.kind.as_deref() == Some("pid")));
    let problems = undocumented(
        &tables,
        &scenario_doc(),
        "Graph scenario top level",
        GRAPH_SAME_AS,
    );
    assert!(
        problems.is_empty(),
        "docs/scenario.md:\n{}",
        problems.join("\n")
    );
}

fn scenario_doc() -> String {
    std::fs::read_to_string(root().join("docs/scenario.md")).unwrap()
}

#[test]
fn the_walk_finds_every_kind_of_table() {
    let tables = Walker::walk_but(load_scenario, SCENARIO_BASE, described_by_the_schema);
    let found = |path: &str, kind: Option<&str>, key: &str| {
        tables
            .iter()
            .any(|t| t.path == path && t.kind.as_deref() == kind && t.keys.iter().any(|k| k == key))
    };
    assert!(found("", None, "duration"), "the top level");
    assert!(found("output", None, "format"), "an optional table");
    assert!(found("network.ns3", Some("custom"), "nodes"), "a kind");
    // The other network kinds and the shared network tables are the
    // server's schema's: listed by the loader (also on the builtin
    // backend), their tables checked below.
    for (path, kind) in [("network.ns3", Some("lte")), ("network.ns3", Some("p2p"))] {
        assert!(
            tables
                .iter()
                .any(|t| t.path == path && t.kind.as_deref() == kind),
            "{path} {kind:?}"
        );
    }
    assert!(found("loops", None, "plant_node"), "an array of tables");
    assert!(
        found("loops.uplink", None, "max_delay"),
        "a table in an array of tables"
    );
    assert!(
        found("loops.reference", Some("piecewise_linear"), "points"),
        "a table or an array of tables"
    );
    assert!(
        found("loops.plant.external_force", Some("sine"), "frequency"),
        "a kind in a kind"
    );
    assert!(
        found("network.builtin.loss", Some("gilbert_elliott"), "loss_bad"),
        "an inline kind"
    );
}

#[test]
fn every_scenario_key_is_documented_in_its_own_table() {
    let tables = Walker::walk_but(load_scenario, SCENARIO_BASE, described_by_the_schema);
    let problems = undocumented(&tables, &scenario_doc(), "Top level", SCENARIO_SAME_AS);
    assert!(
        problems.is_empty(),
        "docs/scenario.md:\n{}",
        problems.join("\n")
    );
}

/// The check above notices a deleted row, and a key that is documented only
/// in another table (`nodes` is in the Wi-Fi table, not the WAVE one).
#[test]
fn the_docs_check_notices_a_missing_or_misplaced_row() {
    let tables = Walker::walk_but(load_scenario, SCENARIO_BASE, described_by_the_schema);
    let doc = scenario_doc();
    let before = undocumented(&tables, &doc, "Top level", SCENARIO_SAME_AS);
    let without = |heading: &str, row: &str| {
        let at = doc.find(heading).unwrap_or_else(|| panic!("no {heading}"));
        let start = at
            + doc[at..]
                .find(row)
                .unwrap_or_else(|| panic!("no {row} under {heading}"));
        let end = start + doc[start..].find('\n').unwrap() + 1;
        format!("{}{}", &doc[..start], &doc[end..])
    };
    for (heading, row, problem) in [
        (
            "**`kind = \"cacc\"`**",
            "| `time_gap` |",
            "`loops.controller` (kind = \"cacc\"): key `time_gap`",
        ),
        (
            "### `[loops.controller]`",
            "| `trigger` |",
            "`loops.controller` (kind = \"open_loop\"): key `trigger`",
        ),
        (
            "Delay models",
            "| `\"empirical\"` |",
            "`network.builtin.delay` (kind = \"empirical\"): no table",
        ),
    ] {
        let problems = undocumented(
            &tables,
            &without(heading, row),
            "Top level",
            SCENARIO_SAME_AS,
        );
        let new: Vec<&String> = problems.iter().filter(|p| !before.contains(p)).collect();
        assert!(
            new.iter().any(|p| p.starts_with(problem)),
            "deleting {row} under {heading}: {new:#?}"
        );
    }
}

/// The header of `packets.csv` is the column table of "What a run writes", in order.
#[test]
fn every_packets_csv_column_is_documented() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let (example, out_dir) = (
        crate::support::servo_example().display().to_string(),
        out.display().to_string(),
    );
    let o = run(&[
        "-q",
        "run",
        &example,
        "--network",
        "builtin",
        "--set",
        "duration=100ms",
        "--out",
        &out_dir,
    ]);
    assert_exit(&o, 0);
    let (header, _) = read_csv(&out.join("packets.csv"));
    let documented: Vec<String> = blocks(&scenario_doc())
        .into_iter()
        .find_map(|b| match b {
            Block::Table(rows) if rows[0][0] == "column" => Some(rows),
            _ => None,
        })
        .expect("a `| column | ... |` table in docs/scenario.md")[1..]
        .iter()
        .flat_map(|row| quoted(&row[0]))
        .collect();
    assert_eq!(documented, header, "docs/scenario.md's packets.csv columns");
}

#[test]
fn every_sweep_file_key_is_documented() {
    // The top level only: `grid` and `zip` entries are documented inline.
    let tables = Walker::walk(load_sweep, "scenario = \"base.toml\"\n");
    let top: Vec<FormatTable> = tables.into_iter().filter(|t| t.path.is_empty()).collect();
    let doc = std::fs::read_to_string(root().join("docs/sweeps.md")).unwrap();
    let problems = undocumented(&top, &doc, "The sweep file", &[]);
    assert!(
        problems.is_empty(),
        "docs/sweeps.md:\n{}",
        problems.join("\n")
    );
}

fn examples() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_example_scenario_checks_and_every_sweep_plans() {
    for path in examples() {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.to_str().unwrap();
        let o = if text.contains("\nscenario = ") || text.starts_with("scenario = ") {
            run(&[
                "sweep",
                file,
                "--dry-run",
                "--out",
                "/nonexistent/never-written",
            ])
        } else {
            run(&["check", file])
        };
        assert_exit(&o, 0);
        assert!(!stdout(&o).is_empty());
    }
}

#[test]
fn the_tutorial_names_only_existing_examples_and_its_sweep_runs() {
    let tutorial = std::fs::read_to_string(root().join("docs/tutorial.md")).unwrap();
    let mut named = BTreeSet::new();
    for (i, _) in tutorial.match_indices("examples/") {
        let rest = &tutorial[i..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || "/_.-".contains(c)))
            .unwrap_or(rest.len());
        named.insert(rest[..end].trim_end_matches('.').to_string());
    }
    assert!(named.len() >= 3, "{named:?}");
    for n in &named {
        assert!(
            root().join(n).exists(),
            "the tutorial names {n}, which does not exist"
        );
    }
    // The tutorial's sweep, as it says: 24 runs, all complete.
    let dir = tempfile::tempdir().unwrap();
    let sweep = root().join("examples/sweep_delay_gain.toml");
    let o = run_sweep(&sweep, dir.path(), &["--plot", "-q"]);
    assert_exit(&o, 0);
    let (header, rows) = read_csv(&dir.path().join("sweep.csv"));
    assert_eq!(rows.len(), 24);
    assert!(rows
        .iter()
        .all(|r| r[column(&header, "status")] == "complete"));
    assert!(dir.path().join("plots/servo.theta.iae.png").exists());
}

/// The comments of a TOML text, with their line numbers: what follows a `#`
/// that is not inside a string (basic, literal or multi-line).
fn toml_comments(text: &str) -> Vec<(usize, &str)> {
    let mut comments = Vec::new();
    // The delimiter of the multi-line string a line starts inside, if any.
    let mut open: Option<&str> = None;
    for (n, line) in text.lines().enumerate() {
        let mut rest = line;
        loop {
            if let Some(end) = open {
                match rest.find(end) {
                    Some(i) => {
                        rest = &rest[i + 3..];
                        open = None;
                    }
                    None => break,
                }
            }
            let Some(i) = rest.find(['#', '"', '\'']) else {
                break;
            };
            let tail = &rest[i..];
            if tail.starts_with('#') {
                comments.push((n + 1, &tail[1..]));
                break;
            }
            if let Some(d) = ["\"\"\"", "'''"].into_iter().find(|d| tail.starts_with(d)) {
                open = Some(d);
                rest = &tail[3..];
                continue;
            }
            // A one-line string: to its closing quote (`\"` escapes in "...").
            let quote = tail.as_bytes()[0];
            let mut j = 1;
            while j < tail.len() && tail.as_bytes()[j] != quote {
                j += if quote == b'"' && tail.as_bytes()[j] == b'\\' {
                    2
                } else {
                    1
                };
            }
            rest = tail.get(j + 1..).unwrap_or("");
        }
    }
    comments
}

/// The repository paths into a test directory that `comment` names:
/// `tests/...`, `bridge/tests/...`, `controlsim/tests/...` (any
/// `<dir>/tests/...`), without the punctuation of the sentence around them.
fn test_paths_named(comment: &str) -> Vec<String> {
    comment
        .split(|c: char| !(c.is_ascii_alphanumeric() || "/_.-".contains(c)))
        .map(|word| word.trim_end_matches(['.', '-']))
        .filter(|word| {
            word.starts_with("tests/")
                || word
                    .split_once("/tests/")
                    .is_some_and(|(dir, _)| !dir.is_empty() && !dir.starts_with('.'))
        })
        .map(str::to_string)
        .collect()
}

/// Every `.toml` file under `dir`, recursively, sorted.
fn toml_files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(toml_files_under(&path));
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
    out
}

/// The test files an example's comments name ("Expected (checked by
/// bridge/tests/blocks.rs)") that are not in the repository, as
/// `file:line: path`.
fn missing_test_paths(file: &str, text: &str) -> Vec<String> {
    let mut missing = Vec::new();
    for (line, comment) in toml_comments(text) {
        for path in test_paths_named(comment) {
            if !root().join(&path).exists() {
                missing.push(format!("{file}:{line}: {path}"));
            }
        }
    }
    missing
}

/// An example's comment that says which test checks it must name a test
/// file that exists, so that moving or renaming the test cannot leave the
/// example pointing nowhere (as it did for the block examples).
#[test]
fn every_test_file_an_example_names_exists() {
    let (mut named, mut missing) = (0, Vec::new());
    for path in toml_files_under(&root().join("examples")) {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.strip_prefix(root()).unwrap().display().to_string();
        named += toml_comments(&text)
            .iter()
            .map(|(_, c)| test_paths_named(c).len())
            .sum::<usize>();
        missing.extend(missing_test_paths(&file, &text));
    }
    assert!(
        named >= 15,
        "only {named} test paths found in the examples' comments: does the scan miss some?"
    );
    assert!(
        missing.is_empty(),
        "examples name test files that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The check above reads comments only (whole-line and after a value, not
/// inside a string), finds every form of test path, and reports one that
/// does not exist.
#[test]
fn the_example_test_path_check_notices_a_missing_file() {
    let text = "# Expected (checked by bridge/tests/blocks.rs): fine.\n\
                # and tests/cli/nonexistent_check.rs, wrapped\n\
                # (see controlsim/tests/integration/equations.rs).\n\
                name = \"tests/cli/in_a_string.rs\" # but controlsim/tests/gone.rs\n\
                text = \"\"\"\n# tests/e2e/inside_a_multiline_string.rs\n\"\"\"\n\
                path = 'tests/a#b' # tests/e2e/blocks_over_ns3.rs, tests/fmu/.\n";
    let named: Vec<(usize, String)> = toml_comments(text)
        .into_iter()
        .flat_map(|(line, c)| test_paths_named(c).into_iter().map(move |p| (line, p)))
        .collect();
    let expected = [
        (1, "bridge/tests/blocks.rs"),
        (2, "tests/cli/nonexistent_check.rs"),
        (3, "controlsim/tests/integration/equations.rs"),
        (4, "controlsim/tests/gone.rs"),
        (8, "tests/e2e/blocks_over_ns3.rs"),
        (8, "tests/fmu/"),
    ];
    assert_eq!(named, expected.map(|(l, p)| (l, p.to_string())));
    assert_eq!(
        missing_test_paths("x.toml", text),
        [
            "x.toml:2: tests/cli/nonexistent_check.rs",
            "x.toml:4: controlsim/tests/gone.rs"
        ]
    );
}

/// The design page that code comments and docs cite as `docs/design.md §4.2`.
const DESIGN_PAGE: &str = "docs/design.md";

/// The section numbers of the design page's headings: `## 4. Synchronisation`
/// gives `4`, `### 4.2 Master-slave` gives `4.2`.
fn design_sections(markdown: &str) -> Vec<String> {
    let numbered = |n: &str| {
        !n.is_empty()
            && n.split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
    };
    blocks(markdown)
        .into_iter()
        .filter_map(|b| match b {
            Block::Heading(h) => Some(
                h.split_whitespace()
                    .next()?
                    .trim_end_matches('.')
                    .to_string(),
            ),
            _ => None,
        })
        .filter(|n| numbered(n))
        .collect()
}

/// `s` without its leading blanks and, when a line ends there, without the
/// next line's comment leader (`//!`, `///`, `//`, `*`, `#`): a citation may
/// wrap onto the next comment line.
fn skip_gap(s: &str) -> &str {
    let mut rest = s;
    loop {
        let trimmed = rest.trim_start_matches([' ', '\t']);
        let Some(next) = trimmed.strip_prefix('\n') else {
            return trimmed;
        };
        let next = next.trim_start_matches([' ', '\t']);
        rest = ["//!", "///", "//", "*", "#"]
            .iter()
            .find_map(|l| next.strip_prefix(l))
            .unwrap_or(next);
    }
}

/// The sections cited after each mention of the design page in `text`, with
/// the line of the mention: `design.md §4.2`, `§2–§3`, `§6-§7`, `§3.3, §4.4`,
/// `§4.4's`, also wrapped onto the next comment line. A mention without `§`
/// names the whole page; `§n` is a placeholder, not a citation.
fn design_citations(text: &str) -> Vec<(usize, String)> {
    let mut cited = Vec::new();
    for (at, name) in text.match_indices("design.md") {
        let line = text[..at].matches('\n').count() + 1;
        let mut rest = skip_gap(text[at + name.len()..].trim_start_matches('`'));
        while let Some(after) = rest.strip_prefix('§') {
            let end = after
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(after.len());
            let number = after[..end].trim_end_matches('.');
            if number.is_empty() {
                break;
            }
            cited.push((line, number.to_string()));
            // More sections of the same citation: `, §`, `–§`, `-§`, ` and §`.
            let tail = &after[end..];
            let tail = tail.trim_start_matches([' ', ',', '-', '–']);
            let tail = ["and ", "or "]
                .iter()
                .find_map(|w| tail.strip_prefix(w))
                .unwrap_or(tail);
            rest = tail;
        }
    }
    cited
}

/// The repository's own source and documentation files (Rust, C++, markdown,
/// scripts, TOML, text), without build output, run results or hidden
/// directories.
fn repository_texts() -> Vec<(String, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for path in paths {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.')
                    && !["target", "build", "results", "out", "bench-results"]
                        .contains(&name.as_str())
                {
                    walk(&path, out);
                }
            } else if ["rs", "md", "cc", "h", "sh", "toml", "txt"]
                .iter()
                .any(|e| path.extension().is_some_and(|x| x == *e))
            {
                if let Ok(text) = std::fs::read_to_string(&path) {
                    out.push((
                        path.strip_prefix(root()).unwrap().display().to_string(),
                        text,
                    ));
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), &mut out);
    out
}

/// Code and docs cite the design by section; a citation must name a section
/// that `docs/design.md` has, so that renumbering or deleting a section
/// cannot leave citations pointing nowhere. The old page outside the
/// repository must not be cited at all.
#[test]
fn every_design_citation_names_a_section_of_docs_design_md() {
    let page = std::fs::read_to_string(root().join(DESIGN_PAGE)).unwrap();
    let numbers = design_sections(&page);
    let sections: BTreeSet<&String> = numbers.iter().collect();
    assert_eq!(
        sections.len(),
        numbers.len(),
        "{DESIGN_PAGE} numbers a section twice: {numbers:?}"
    );
    for chapter in 1..=9 {
        assert!(
            sections.contains(&chapter.to_string()),
            "{DESIGN_PAGE} has no section {chapter}"
        );
    }
    // Spelled in pieces so that this file does not match.
    let outside = [["DESIGN", ".md"].concat(), ["DESIGN", " §"].concat()];
    let (mut problems, mut count) = (Vec::new(), 0);
    for (path, text) in repository_texts() {
        for (line, number) in design_citations(&text) {
            count += 1;
            if !sections.contains(&number) {
                problems.push(format!(
                    "{path}:{line}: §{number} is not a section of {DESIGN_PAGE}"
                ));
            }
        }
        for old in &outside {
            for (at, _) in text.match_indices(old.as_str()) {
                let line = text[..at].matches('\n').count() + 1;
                problems.push(format!("{path}:{line}: cites `{old}`, which is not in the repository: cite {DESIGN_PAGE}"));
            }
        }
    }
    assert!(
        count >= 40,
        "only {count} citations of {DESIGN_PAGE} found: does the scan miss files?"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The check above reads every form a citation takes, and a section the page
/// does not have is reported.
#[test]
fn the_design_citation_check_notices_a_missing_section() {
    let page = std::fs::read_to_string(root().join(DESIGN_PAGE)).unwrap();
    let sections = design_sections(&page);
    // Built at run time, so that the repository scan does not read these.
    let bare = DESIGN_PAGE.trim_start_matches("docs/");
    let text = format!(
        "(see {DESIGN_PAGE} §4.2)\n//! exact ({DESIGN_PAGE}\n//! §4.3); the\n\
         {DESIGN_PAGE} §2–§42, §99.1 and §7.\n`{bare}` §6-§6.9's\nas `{DESIGN_PAGE} §n`, or {DESIGN_PAGE}.\n"
    );
    let cited = design_citations(&text);
    let expected = [
        (1, "4.2"),
        (2, "4.3"),
        (4, "2"),
        (4, "42"),
        (4, "99.1"),
        (4, "7"),
        (5, "6"),
        (5, "6.9"),
    ];
    assert_eq!(cited, expected.map(|(l, n)| (l, n.to_string())));
    let missing: Vec<&str> = cited
        .iter()
        .filter(|(_, n)| !sections.contains(n))
        .map(|(_, n)| n.as_str())
        .collect();
    assert_eq!(missing, ["42", "99.1", "6.9"]);
}

/// What `scripts/gen-network-docs.sh` would make of `markdown`, or why it cannot.
fn regenerated(
    markdown: &str,
    schema: &bridge::network_schema::NetworkSchema,
) -> Result<String, String> {
    bridge::network_docs::update(markdown, schema)
}

/// docs/scenario.md's network tables (every kind of `[network.ns3]` and the
/// shared tables) are what the committed schema generates
/// (ns3-scenarios/network-schema.json, which tests/e2e/network_schema.rs
/// keeps equal to `netloop-server --describe`), so no server is needed here.
#[test]
fn the_network_tables_are_generated_from_the_servers_schema() {
    let doc = scenario_doc();
    let schema = bridge::network_schema::standard();
    let generated = regenerated(&doc, &schema)
        .unwrap_or_else(|e| panic!("docs/scenario.md: {e}; then run scripts/gen-network-docs.sh"));
    assert!(
        generated == doc,
        "docs/scenario.md's network tables are not what ns3-scenarios/network-schema.json \
         generates: run scripts/gen-network-docs.sh"
    );
}

/// The check above notices an edited row: a kind's argument deleted, its
/// node count deleted, a default changed, a shared table's key deleted.
#[test]
fn the_network_table_check_notices_an_edited_row() {
    let schema = bridge::network_schema::standard();
    let doc = scenario_doc();
    for (row, edited) in [
        ("| `ues` |", "| `UEs` |"),
        (
            "| `queue_size` | integer, packets, ≥ 1 | `100` |",
            "| `queue_size` | integer, packets, ≥ 1 | `50` |",
        ),
        ("| `bsm.max_jitter` |", "| `bsm.jitter` |"),
        ("| `nakagami_m` |", "| `nakagami` |"),
        ("| `drop_log` |", "| `drops` |"),
    ] {
        assert!(doc.contains(row), "no {row} in docs/scenario.md");
        let changed = doc.replacen(row, edited, 1);
        assert_ne!(
            regenerated(&changed, &schema).unwrap(),
            changed,
            "{row} -> {edited} was not noticed"
        );
    }
}

/// A kind the docs have no table for is named, with the lines to add: the
/// toy kind of the C++ test suite, which no Rust knows.
#[test]
fn the_network_table_check_names_a_new_kind() {
    let toy = bridge::ns3::default_server_path().with_file_name("toy-kind-server");
    let schema = bridge::network_schema::describe(&toy).unwrap();
    assert!(schema.kind("toy").is_some());
    let err = regenerated(&scenario_doc(), &schema).unwrap_err();
    assert_eq!(
        err,
        "`kind toy` has no table in the docs: add a section with the lines \
         <!-- network-docs: kind toy --> and <!-- /network-docs -->"
    );
}
