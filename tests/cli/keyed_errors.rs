//! Errors located from what serde and the loader know, not from their
//! messages: the kinds a `[network.ns3]` table may have are listed on the
//! builtin backend too, and a wrong value inside a `kind = "..."` table is
//! reported at its own key.

use crate::support::{assert_exit, root, run, servo_example, stderr};

fn check(sets: &[&str]) -> String {
    let example = servo_example().display().to_string();
    let mut args = vec!["check", example.as_str()];
    for set in sets {
        args.extend(["--set", set]);
    }
    let o = run(&args);
    assert_exit(&o, 2);
    stderr(&o)
}

/// A kind no server describes is refused on the builtin backend too (it
/// used to be kept unchecked there), naming the key and the kinds.
#[test]
fn an_unknown_network_kind_is_refused_on_the_builtin_backend() {
    let err = check(&["network.backend=builtin", "network.ns3.kind=tokenring"]);
    assert!(
        err.contains("`network.ns3.kind`: unknown network kind `tokenring`"),
        "{err}"
    );
    let schema = bridge::network_schema::standard();
    for kind in schema
        .kinds
        .iter()
        .map(|k| k.name.as_str())
        .chain(["custom"])
    {
        assert!(err.contains(&format!("`{kind}`")), "{kind}: {err}");
    }
    // A program the scenario names is not run to check it: its kinds are its own.
    let example = servo_example().display().to_string();
    let o = run(&[
        "check",
        &example,
        "--set",
        "network.backend=builtin",
        "--set",
        "network.ns3.kind=tokenring",
        "--set",
        "network.server.binary=my-own-server",
    ]);
    assert_exit(&o, 0);
}

/// A name the user wrote with a dot stays one key from controlsim's check
/// to the report: the path is built from the name, not printed and read
/// back, so it is quoted as TOML quotes it and located at its own line.
#[test]
fn a_dotted_parameter_name_is_one_key_at_its_own_line() {
    let dir = tempfile::tempdir().unwrap();
    let example = root().join("examples/bouncing_ball_equations.toml");
    let model = root().join("examples/bouncing_ball.eq");
    let text = std::fs::read_to_string(&example)
        .unwrap()
        .replace(
            "source = \"bouncing_ball.eq\"",
            &format!("source = {:?}", model.display().to_string()),
        )
        .replace("\ne = 0.8\n", "\n\"e.x\" = 0.8\n");
    assert!(
        text.contains("\"e.x\" = 0.8"),
        "the example changed: {text}"
    );
    let line = 1 + text.lines().position(|l| l.starts_with("\"e.x\"")).unwrap();
    let scenario = dir.path().join("dotted.toml");
    std::fs::write(&scenario, &text).unwrap();
    let o = run(&["check", &scenario.display().to_string()]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("`loops[0].plant.parameters.\"e.x\"`: unknown name \"e.x\""),
        "{err}"
    );
    assert!(
        err.contains(&format!("{}:{line}:", scenario.display())),
        "line {line}: {err}"
    );
}
