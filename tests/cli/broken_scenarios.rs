//! Broken scenarios: every one exits 2 from `check` and from `run`, names
//! the key, says what was expected, writes no results and does not panic.
//!
//! Most are made from one base file and an override or two, listed in
//! `tests/cli/broken_overrides.toml`. A few whole files in
//! `tests/cli/broken/` (syntax errors, values of the wrong type, errors whose
//! line the base file cannot show) also pin the line the error must point
//! at, with a header:
//!
//! ```text
//! # expect-key: loops[0].sensor.period
//! # expect-line: 46
//! # expect-message: is not an integer multiple of the step 1ms
//! ```

use std::path::{Path, PathBuf};

use crate::support::{assert_exit, assert_exit_saying, root, run, servo_example, stderr};

struct Case {
    path: PathBuf,
    key: String,
    /// The line the error must point at; `None` for generated cases, whose
    /// error must point at a line that shows the offending text.
    line: Option<usize>,
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
                line: Some(header("expect-line").parse().unwrap()),
                message: header("expect-message"),
                path,
            }
        })
        .collect();
    cases.sort_by(|a, b| a.path.cmp(&b.path));
    cases
}

/// The cases of `broken_overrides.toml`, each written into `dir` as the
/// servo example with its overrides applied.
fn generated(dir: &Path) -> Vec<Case> {
    let table: toml::Table =
        std::fs::read_to_string(root().join("tests/cli/broken_overrides.toml"))
            .unwrap()
            .parse()
            .unwrap();
    let base = std::fs::read_to_string(servo_example()).unwrap();
    table["case"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let text = |name: &str| case[name].as_str().unwrap().to_string();
            let mut doc: toml_edit::DocumentMut = base.parse().unwrap();
            if let Some(set) = case.get("set") {
                for (path, value) in set.as_table().unwrap() {
                    let (parent, last) = walk(doc.as_item_mut(), path);
                    let value: toml_edit::Value = value.to_string().parse().unwrap();
                    parent[last] = toml_edit::value(value);
                }
            }
            if let Some(remove) = case.get("remove") {
                for path in remove.as_array().unwrap() {
                    let (parent, last) = walk(doc.as_item_mut(), path.as_str().unwrap());
                    parent.as_table_like_mut().unwrap().remove(last);
                }
            }
            let path = dir.join(format!("{}.toml", text("name")));
            std::fs::write(&path, doc.to_string()).unwrap();
            Case {
                path,
                key: text("key"),
                line: None,
                message: text("message"),
            }
        })
        .collect()
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
            if let Some(line) = case.line {
                assert!(
                    pointed_at.contains(&line),
                    "{file}: the error does not point at line {line}:\n{err}"
                );
            }
            for line in pointed_at {
                // The offending line is shown.
                let shown = text.lines().nth(line - 1).unwrap().trim();
                assert!(
                    err.contains(shown),
                    "{file}: line {line} ({shown}) is not shown:\n{err}"
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
