//! Errors located from what serde and the loader know, not from their
//! messages: the kinds a `[network.ns3]` table may have are listed on the
//! builtin backend too, and a wrong value inside a `kind = "..."` table is
//! reported at its own key.

use crate::support::{assert_exit, run, servo_example, stderr};

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
