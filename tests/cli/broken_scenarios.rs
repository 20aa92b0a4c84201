//! A corpus of broken scenario files (`tests/cli/broken/`), each with a
//! header naming the key its error must name, the line it must point at and
//! a fragment of the message that says what was expected:
//!
//! ```text
//! # expect-key: loops[0].sensor.period
//! # expect-line: 46
//! # expect-message: is not an integer multiple of the step 1ms
//! ```
//!
//! Every one exits 2 from `check` and from `run`, names the key, points at
//! the line, says what was expected, writes no results and does not panic.

use std::path::PathBuf;

use crate::support::{assert_exit, root, run, stderr};

struct Case {
    path: PathBuf,
    key: String,
    line: Option<usize>,
    message: String,
}

fn corpus() -> Vec<Case> {
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
            let key = header("expect-key");
            let line = header("expect-line").parse().ok();
            let message = header("expect-message");
            Case {
                path,
                key,
                line,
                message,
            }
        })
        .collect();
    cases.sort_by(|a, b| a.path.cmp(&b.path));
    cases
}

#[test]
fn the_corpus_is_large_enough() {
    assert!(
        corpus().len() >= 15,
        "only {} broken scenarios",
        corpus().len()
    );
}

#[test]
fn every_broken_scenario_exits_2_naming_the_key_the_line_and_what_was_expected() {
    let out = tempfile::tempdir().unwrap();
    for case in corpus() {
        let file = case.path.display().to_string();
        let results = out.path().join(case.path.file_stem().unwrap());
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
            if let Some(line) = case.line {
                let name = case
                    .path
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                let located = err.contains(&format!("{name}:{line}:"))
                    || err.contains(&format!("at line {line},"));
                assert!(
                    located,
                    "{file}: the error does not point at line {line}:\n{err}"
                );
                // The offending line is shown.
                let text = std::fs::read_to_string(&case.path).unwrap();
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

#[test]
fn set_errors_name_the_override_and_exit_2() {
    let example = crate::support::servo_example().display().to_string();
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
    assert_exit(&o, 2);
    assert!(
        stderr(&o).contains("/no/such/scenario.toml"),
        "{}",
        stderr(&o)
    );
}
