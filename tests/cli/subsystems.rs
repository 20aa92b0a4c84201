//! Subsystem files, the `from_csv` source and the `equations` block through
//! the real binary: bad input exits 2 naming the file, line and key where
//! it is written (the included file's, for a problem inside a subsystem).

use std::path::Path;

use crate::support::{assert_exit, run, stderr};

const HEAD: &str = "duration = \"1s\"\nstep = \"10ms\"\n";

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn check(dir: &Path) -> (i32, String) {
    let o = run(&["check", dir.join("main.toml").to_str().unwrap()]);
    (o.status.code().unwrap_or(-1), stderr(&o))
}

/// A one-gain subsystem `gain2.toml`: input `u`, output `y`.
const GAIN2: &str =
    "[[inputs]]\nname = \"u\"\nto = \"k.u\"\n[[outputs]]\nname = \"y\"\nfrom = \"k.y\"\n\
[[components]]\nname = \"k\"\nblock = { kind = \"gain\", k = 2.0 }\n";

fn main_using(sub: &str, port_in: &str, port_out: &str) -> String {
    format!(
        "{HEAD}[[components]]\nname = \"a\"\nblock = {{ kind = \"constant\", value = 1.5 }}\n\
[[components]]\nname = \"s\"\nsubsystem = \"{sub}\"\n\
[[connections]]\nfrom = \"a.y\"\nto = \"s.{port_in}\"\n\
[[components]]\nname = \"z\"\nblock = {{ kind = \"gain\", k = 1.0 }}\n\
[[connections]]\nfrom = \"s.{port_out}\"\nto = \"z.u\"\n"
    )
}

#[test]
fn a_subsystem_runs_as_one_component_with_its_ports() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "gain2.toml", GAIN2);
    write(dir.path(), "main.toml", &main_using("gain2.toml", "u", "y"));
    let out = dir.path().join("out");
    let o = run(&[
        "run",
        dir.path().join("main.toml").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_exit(&o, 0);
    let (header, rows) = crate::support::read_csv(&out.join("timeseries.csv"));
    let col = header.iter().position(|h| h == "z.y").unwrap();
    assert!(header.iter().any(|h| h == "s/k.y"), "{header:?}");
    assert_eq!(rows[5][col].parse::<f64>().unwrap(), 3.0);
}

#[test]
fn an_include_cycle_is_refused_naming_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let ring = |other: &str| {
        format!(
            "[[inputs]]\nname = \"u\"\nto = \"inner.u\"\n[[outputs]]\nname = \"y\"\nfrom = \"inner.y\"\n\
[[components]]\nname = \"inner\"\nsubsystem = \"{other}\"\n"
        )
    };
    write(dir.path(), "a.toml", &ring("b.toml"));
    write(dir.path(), "b.toml", &ring("a.toml"));
    write(dir.path(), "main.toml", &main_using("a.toml", "u", "y"));
    let (code, err) = check(dir.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("includes itself"), "{err}");
    assert!(
        err.contains("a.toml -> ") && err.contains("b.toml -> "),
        "{err}"
    );
    // Located in b.toml, the file that closes the ring, at its key.
    assert!(err.contains("b.toml:9:"), "{err}");
    assert!(err.contains("`components[0].subsystem`"), "{err}");
}

#[test]
fn errors_inside_a_subsystem_name_its_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "main.toml", &main_using("bad.toml", "u", "y"));
    // (what is wrong, the subsystem's text, the file and line named if
    // any, the key named)
    let cases = [
        (
            "a bad parameter, found when the graph is built",
            GAIN2.replace("k = 2.0", "k = 2.0 }\n[[components]]\nname = \"sat\"\nblock = { kind = \"saturation\", lower = 1.0, upper = 0.0"),
            Some("bad.toml:12:"),
            "`components[1].block.upper`",
        ),
        (
            "an unknown block kind, found when the file is read",
            GAIN2.replace("\"gain\"", "\"gainz\""),
            Some("bad.toml:9:"),
            "`components[0].block.kind`",
        ),
        (
            "a port of the subsystem that names no inner component",
            GAIN2.replace("to = \"k.u\"", "to = \"q.u\""),
            Some("bad.toml:3:"),
            "`inputs[0].to`",
        ),
        (
            "a node inside a subsystem",
            format!("{GAIN2}node = \"x\"\n"),
            None,
            "`components[0].node`",
        ),
    ];
    for (what, text, place, key) in cases {
        write(dir.path(), "bad.toml", &text);
        let (code, err) = check(dir.path());
        assert_eq!(code, 2, "{what}: {err}");
        assert!(
            place.map_or(true, |p| err.contains(p)) && err.contains(key),
            "{what}: {err}"
        );
    }
}

#[test]
fn a_port_the_subsystem_lacks_is_named_at_the_connection() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "gain2.toml", GAIN2);
    write(
        dir.path(),
        "main.toml",
        &main_using("gain2.toml", "u", "out"),
    );
    let (code, err) = check(dir.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("main.toml:16:"), "{err}");
    assert!(err.contains("`connections[1].from`"), "{err}");
    assert!(
        err.contains("no output `out`") && err.contains("`y`"),
        "{err}"
    );
    // A missing file.
    write(
        dir.path(),
        "main.toml",
        &main_using("nowhere.toml", "u", "y"),
    );
    let (code, err) = check(dir.path());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`components[1].subsystem`") && err.contains("nowhere.toml"),
        "{err}"
    );
}

fn csv_scenario(dir: &Path, csv: &str, interpolation: &str) -> (i32, String) {
    write(dir, "profile.csv", csv);
    write(
        dir,
        "main.toml",
        &format!(
            "{HEAD}[[components]]\nname = \"p\"\n[components.block]\nkind = \"from_csv\"\nfile = \"profile.csv\"\ninterpolation = \"{interpolation}\"\n"
        ),
    );
    check(dir)
}

#[test]
fn bad_csv_files_exit_2_naming_the_key_and_the_csv_line() {
    let dir = tempfile::tempdir().unwrap();
    for (csv, problem) in [
        (
            "time,v\n0,1\n0.5,x\n",
            "profile.csv:3: field 2 `x` is not a finite number",
        ),
        ("time,v\n0,1\n0.5,2,3\n", "profile.csv:3: has 3 fields"),
        ("0,1\n1,2\n1,3\n", "profile.csv:3: time 1 is not after"),
        (
            "0,1\n1,inf\n",
            "profile.csv:2: field 2 `inf` is not a finite number",
        ),
        ("time,v\n", "profile.csv:1: has no samples"),
        (
            "0\n1\n",
            "needs a time column and at least one value column",
        ),
    ] {
        let (code, err) = csv_scenario(dir.path(), csv, "linear");
        assert_eq!(code, 2, "{csv:?}: {err}");
        assert!(err.contains("`components[0].block.file`"), "{csv:?}: {err}");
        assert!(err.contains(problem), "{csv:?}: {err}");
        assert!(err.contains("main.toml:7:"), "{csv:?}: {err}");
    }
    std::fs::remove_file(dir.path().join("profile.csv")).unwrap();
    let (code, err) = check(dir.path());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`components[0].block.file`") && err.contains("cannot read"),
        "{err}"
    );
    let (code, err) = csv_scenario(dir.path(), "0,1\n", "cubic");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`components[0].block.interpolation`"), "{err}");
}

/// The CSV source against its definition: linear interpolation between
/// samples, a staircase with `hold`, the end values held outside.
#[test]
fn a_csv_source_interpolates_holds_and_holds_its_ends() {
    let dir = tempfile::tempdir().unwrap();
    let csv = "time,speed,grade\n0.1,0,1\n0.5,4,-1\n0.7,4,3\n";
    for (interpolation, expected) in [
        // t = 0, 0.1, 0.3, 0.5, 0.6, 0.7, 0.9 (s)
        (
            "linear",
            [
                (0.0, 1.0),
                (0.0, 1.0),
                (2.0, 0.0),
                (4.0, -1.0),
                (4.0, 1.0),
                (4.0, 3.0),
                (4.0, 3.0),
            ],
        ),
        (
            "hold",
            [
                (0.0, 1.0),
                (0.0, 1.0),
                (0.0, 1.0),
                (4.0, -1.0),
                (4.0, -1.0),
                (4.0, 3.0),
                (4.0, 3.0),
            ],
        ),
    ] {
        let (code, err) = csv_scenario(dir.path(), csv, interpolation);
        assert_eq!(code, 0, "{err}");
        let out = dir.path().join(interpolation);
        let o = run(&[
            "run",
            dir.path().join("main.toml").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_exit(&o, 0);
        let (header, rows) = crate::support::read_csv(&out.join("timeseries.csv"));
        let col = header.iter().position(|h| h == "p.y[0]").unwrap();
        for (&k, &(a, b)) in [0usize, 10, 30, 50, 60, 70, 90].iter().zip(&expected) {
            let y0: f64 = rows[k][col].parse().unwrap();
            let y1: f64 = rows[k][col + 1].parse().unwrap();
            assert!(
                (y0 - a).abs() < 1e-12 && (y1 - b).abs() < 1e-12,
                "{interpolation} at row {k}: ({y0}, {y1}), expected ({a}, {b})"
            );
        }
    }
}

#[test]
fn a_bad_equations_block_names_its_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "law.eq", "input e;\noutput u = 2 * e + q;\n");
    write(
        dir.path(),
        "main.toml",
        &format!(
            "{HEAD}[[components]]\nname = \"a\"\nblock = {{ kind = \"constant\", value = 1.0 }}\n\
[[components]]\nname = \"law\"\nblock = {{ kind = \"equations\", source = \"law.eq\" }}\n\
[[connections]]\nfrom = \"a.y\"\nto = \"law.e\"\n"
        ),
    );
    let (code, err) = check(dir.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`components[1].block.source`"), "{err}");
    assert!(err.contains("law.eq:2:"), "{err}");
    assert!(err.contains("undefined variable `q`"), "{err}");
}
