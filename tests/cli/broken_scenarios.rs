//! Broken scenarios: every one exits 2 from `check` and from `run`, names
//! the key, points at its line, says what was expected, writes no results
//! and does not panic.
//!
//! Each case is a valid example with one thing wrong, listed in
//! `tests/cli/broken_overrides.toml` as its base file, the overrides and the
//! expected key and message; the line the error must point at is the line of
//! that key (or of its nearest ancestor written in the file) in the generated
//! text. The whole files in `tests/cli/broken/` are the cases an override
//! cannot write or whose written text is the point, each pinning its line
//! with a header:
//!
//! ```text
//! # expect-key: durration
//! # expect-line: 5
//! # expect-message: expected: one of `duration`, `step`
//! ```
//!
//! - `syntax_error`: text that is not TOML;
//! - `unknown_top_level_key`: a misspelt key at the top, before any table;
//! - `duration_without_unit`: `duration = 3` as written, not a generated value;
//! - `equations_syntax_error` (with its `.eq`), `equations_undefined_variable`
//!   and `equation_controller_syntax_error`: errors located at a line and
//!   column inside a model, which `equations.rs` and `equation_controller.rs`
//!   also pin.

use std::path::{Path, PathBuf};

use crate::support::{assert_exit, assert_exit_saying, root, run, servo_example, stderr};

struct Case {
    path: PathBuf,
    key: String,
    /// The line the error must point at.
    line: usize,
    message: String,
}

/// The whole files of `tests/cli/broken/`.
fn whole_files() -> Vec<Case> {
    let dir = root().join("tests/cli/broken");
    let mut cases: Vec<Case> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let header = |name: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(&format!("# {name}: ")))
                    .unwrap_or_else(|| panic!("{} has no `# {name}:` line", path.display()))
                    .trim()
                    .to_string()
            };
            Case {
                key: header("expect-key"),
                line: header("expect-line").parse().unwrap(),
                message: header("expect-message"),
                path,
            }
        })
        .collect();
    cases.sort_by(|a, b| a.path.cmp(&b.path));
    cases
}

/// The cases of `broken_overrides.toml`, each written into `dir` as its base
/// (the servo example unless it names another) with its overrides applied,
/// beside the files it gives.
fn generated(dir: &Path) -> Vec<Case> {
    let table: toml::Table =
        std::fs::read_to_string(root().join("tests/cli/broken_overrides.toml"))
            .unwrap()
            .parse()
            .unwrap();
    table["case"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let text = |name: &str| case[name].as_str().unwrap().to_string();
            let base = match case.get("base") {
                Some(base) => root().join(base.as_str().unwrap()),
                None => servo_example(),
            };
            let mut doc: toml_edit::DocumentMut =
                std::fs::read_to_string(base).unwrap().parse().unwrap();
            if let Some(set) = case.get("set") {
                for (path, value) in set.as_table().unwrap() {
                    let (parent, last) = walk(doc.as_item_mut(), path);
                    parent[last] = toml_edit::value(edit_value(value));
                }
            }
            if let Some(remove) = case.get("remove") {
                for path in remove.as_array().unwrap() {
                    let (parent, last) = walk(doc.as_item_mut(), path.as_str().unwrap());
                    let removed = parent.as_table_like_mut().unwrap().remove(last);
                    assert!(removed.is_some(), "{}: no `{path}` to remove", text("name"));
                }
            }
            if let Some(files) = case.get("files") {
                for (name, contents) in files.as_table().unwrap() {
                    let file = dir.join(name);
                    assert!(!file.exists(), "two cases give {name}");
                    std::fs::write(file, contents.as_str().unwrap()).unwrap();
                }
            }
            let path = dir.join(format!("{}.toml", text("name")));
            let written = doc.to_string();
            std::fs::write(&path, &written).unwrap();
            let key = text("key");
            Case {
                path,
                line: line_of(&written, &key),
                key,
                message: text("message"),
            }
        })
        .collect()
}

/// An override's value as `toml_edit` writes it, with text of several lines
/// (a model) as a multi-line literal so that the model keeps its own lines.
fn edit_value(value: &toml::Value) -> toml_edit::Value {
    match value.as_str() {
        Some(s) if s.contains('\n') => {
            assert!(!s.contains("'''"), "{s}");
            format!("'''\n{s}'''").parse().unwrap()
        }
        _ => value.to_string().parse().unwrap(),
    }
}

/// The table holding the last segment of a key path such as
/// `loops[0].controller.kp` (tables are made when missing), and that segment.
fn walk<'a, 'p>(
    mut item: &'a mut toml_edit::Item,
    path: &'p str,
) -> (&'a mut toml_edit::Item, &'p str) {
    let (parents, last) = path.rsplit_once('.').unwrap_or(("", path));
    for segment in parents.split('.').filter(|s| !s.is_empty()) {
        item = match segment.split_once('[') {
            Some((name, index)) => {
                let index: usize = index.trim_end_matches(']').parse().unwrap();
                &mut item[name][index]
            }
            None => &mut item[segment],
        };
    }
    (item, last)
}

/// The 1-based line of `key` (such as `network.radio.nakagami_m[1]`) in
/// `text`, or of its deepest ancestor written there when the key itself is
/// missing: the line an error about the key must point at.
fn line_of(text: &str, key: &str) -> usize {
    let doc = toml_edit::Document::parse(text).unwrap();
    let mut item = doc.as_item();
    let mut span = None;
    for segment in key.split('.') {
        let (name, index) = match segment.split_once('[') {
            Some((name, index)) => (name, Some(index.trim_end_matches(']').parse().unwrap())),
            None => (segment, None),
        };
        let Some((found, next)) = item.as_table_like().and_then(|t| t.get_key_value(name)) else {
            break;
        };
        span = found.span().or(span);
        item = next;
        if let Some(index) = index {
            let element = match item {
                toml_edit::Item::ArrayOfTables(tables) => tables.get(index).and_then(|t| t.span()),
                toml_edit::Item::Value(toml_edit::Value::Array(array)) => {
                    array.get(index).and_then(|v| v.span())
                }
                _ => None,
            };
            let Some(element) = element else { break };
            span = Some(element);
            item = &item[index];
        }
    }
    let start = span
        .unwrap_or_else(|| panic!("no part of `{key}` is written in:\n{text}"))
        .start;
    text[..start].matches('\n').count() + 1
}

#[test]
fn the_corpus_is_large_enough() {
    let dir = tempfile::tempdir().unwrap();
    let count = whole_files().len() + generated(dir.path()).len();
    assert!(count >= 40, "only {count} broken scenarios");
}

#[test]
fn every_broken_scenario_exits_2_naming_the_key_the_line_and_what_was_expected() {
    let out = tempfile::tempdir().unwrap();
    let scenarios = tempfile::tempdir().unwrap();
    for case in whole_files().into_iter().chain(generated(scenarios.path())) {
        let file = case.path.display().to_string();
        let results = out.path().join(case.path.file_stem().unwrap());
        let name = case
            .path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&case.path).unwrap();
        for args in [
            vec!["check", &file],
            vec!["run", &file, "--out", results.to_str().unwrap()],
        ] {
            let o = run(&args);
            let err = stderr(&o);
            assert_exit(&o, 2);
            assert!(!err.contains("panicked"), "{file}: {err}");
            assert!(err.starts_with("error: "), "{file}: {err}");
            assert!(
                err.contains(&case.key),
                "{file}: the error does not name `{}`:\n{err}",
                case.key
            );
            assert!(
                err.contains(&case.message),
                "{file}: the error does not say `{}`:\n{err}",
                case.message
            );
            let pointed_at = pointed_lines(&err, &name);
            assert!(
                pointed_at.contains(&case.line),
                "{file}: the error does not point at line {}:\n{err}",
                case.line
            );
            for line in pointed_at {
                // The offending line is shown, whole or cut short with `…`.
                let written = text.lines().nth(line - 1).unwrap().trim();
                let cut = |l: &str| {
                    l.split_once(&format!("{line} | "))
                        .and_then(|(_, shown)| shown.strip_suffix('…'))
                        .is_some_and(|shown| written.starts_with(shown.trim()))
                };
                assert!(
                    err.contains(written) || err.lines().any(cut),
                    "{file}: line {line} ({written}) is not shown:\n{err}"
                );
            }
            assert!(
                !results.exists(),
                "{file}: a bad scenario must not leave a run directory"
            );
        }
    }
}

/// The lines an error points at, as `name:LINE:` or `at line LINE,`.
fn pointed_lines(err: &str, name: &str) -> Vec<usize> {
    let number = |rest: &str| {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    err.split(&format!("{name}:"))
        .skip(1)
        .chain(err.split("at line ").skip(1))
        .filter_map(number)
        .collect()
}

#[test]
fn set_errors_name_the_override_and_exit_2() {
    let example = servo_example().display().to_string();
    let cases = [
        ("loops[0].controller.kp=fast", "loops[0].controller.kp"),
        ("loops[4].controller.kp=1", "loops"),
        ("duration.x=1", "duration"),
        ("loops[0].sensor.period=2500us", "loops[0].sensor.period"),
        ("no_equals_sign", "key=value"),
        ("network.backend=omnet", "network.backend"),
    ];
    for (set, key) in cases {
        let o = run(&["check", &example, "--set", set]);
        assert_exit(&o, 2);
        let err = stderr(&o);
        assert!(err.contains(key), "--set {set}: {err}");
        assert!(
            err.contains(set) || set == "no_equals_sign",
            "--set {set}: the override is not named: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_missing_file_is_bad_input() {
    let o = run(&["check", "/no/such/scenario.toml"]);
    assert_exit_saying(&o, 2, "/no/such/scenario.toml");
}
