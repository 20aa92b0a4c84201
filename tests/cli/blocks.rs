//! Block diagrams through the real binary: a malformed diagram exits 2
//! naming the key and the line (unknown block kind, bad expression, bad
//! port, bad parameter); the examples' results are checked in
//! bridge/tests/blocks.rs.

use crate::support::{assert_exit, run, run_scenario, stderr};

fn check(body: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("diagram.toml");
    let text = format!(
        "duration = \"1s\"\nstep = \"10ms\"\n[[components]]\nname = \"a\"\nblock = {{ kind = \"constant\", value = 1.0 }}\n{body}"
    );
    std::fs::write(&path, text).unwrap();
    let o = run(&["check", path.to_str().unwrap()]);
    (o.status.code().unwrap_or(-1), stderr(&o))
}

#[test]
fn malformed_diagrams_exit_2_naming_key_and_line() {
    let cases = [
        (
            "[[components]]\nname = \"b\"\nblock = { kind = \"gainz\" }\n",
            "components[1].block.kind",
            ":8:",
        ),
        (
            "[[components]]\nname = \"b\"\nblock = { kind = \"expr\", expr = \"u * / 2\" }\n[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n",
            "components[1].block.expr",
            ":8:",
        ),
        (
            "[[components]]\nname = \"b\"\nblock = { kind = \"expr\", expr = \"u / 0\" }\n[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n",
            "components[1].block.expr",
            ":8:",
        ),
        (
            "[[components]]\nname = \"b\"\nblock = { kind = \"gain\", k = 2.0 }\n[[connections]]\nfrom = \"a.y\"\nto = \"b.v\"\n",
            "connections[0].to",
            ":11:",
        ),
        (
            "[[components]]\nname = \"b\"\n[components.block]\nkind = \"saturation\"\nlower = 1.0\nupper = 0.0\n[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n",
            "components[1].block.upper",
            ":11:",
        ),
    ];
    for (body, key, line) in cases {
        let (code, err) = check(body);
        assert_eq!(code, 2, "{body}\n{err}");
        assert!(err.contains(&format!("`{key}`")), "{key}: {err}");
        assert!(err.contains(line), "{key} at line {line}: {err}");
    }
}

#[test]
fn a_diagram_runs_and_names_its_columns_by_block() {
    let out = tempfile::tempdir().unwrap();
    let example = crate::support::root().join("examples/abs_slip_blocks.toml");
    let o = run_scenario(&example, out.path(), &[]);
    assert_exit(&o, 0);
    let (header, rows) = crate::support::read_csv(&out.path().join("timeseries.csv"));
    assert_eq!(header[0], "time");
    assert!(header.iter().any(|h| h == "mu.y"), "{header:?}");
    assert!(header.iter().any(|h| h == "branch.action[1]"), "{header:?}");
    assert_eq!(rows.len(), 1001);
}
