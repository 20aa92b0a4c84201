//! Same scenario and seed: byte-identical output files. Another seed, or
//! another replication, changes packets.csv.

use crate::support::*;

fn outputs(seed: u64, run: u64, scheme: &str) -> Vec<Vec<u8>> {
    let header = format!(
        "duration = \"2s\"\nstep = \"1ms\"\nseed = {seed}\nrun = {run}\n[sync]\nscheme = \"{scheme}\"\nperiod = \"10ms\"\n"
    );
    let loops = servo_loop(
        "a",
        0,
        1,
        "trigger = \"event\"",
        "uplink = { drop_stale = true }",
    ) + &servo_loop(
        "b",
        2,
        3,
        "trigger = \"time\"\nperiod = \"5ms\"",
        "downlink = { max_delay = \"8ms\" }",
    );
    let network = r#"{ kind = "exponential", mean = "3ms", offset = "1ms" }
loss = { kind = "gilbert_elliott", p_good_to_bad = 0.05, p_bad_to_good = 0.3 }"#;
    let (dir, _) = run_in_tempdir(&scenario(&header, network, &loops));
    ["timeseries.csv", "packets.csv", "summary.json"]
        .iter()
        .map(|f| read(&dir.path().join("run").join(f)))
        .collect()
}

#[test]
fn same_seed_gives_byte_identical_outputs() {
    for scheme in ["time_stepping", "master_slave", "event_driven"] {
        let first = outputs(11, 1, scheme);
        assert!(
            first == outputs(11, 1, scheme),
            "{scheme}: outputs differ between identical runs"
        );
    }
}

#[test]
fn another_seed_or_run_changes_the_packets() {
    let base = outputs(11, 1, "event_driven");
    assert_ne!(base[1], outputs(12, 1, "event_driven")[1], "seed");
    assert_ne!(base[1], outputs(11, 2, "event_driven")[1], "run");
}
