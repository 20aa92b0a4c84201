//! Graph components that move their node over the real ns-3 server
//! (issue 11): a moving cart written as a graph gives the `[[loops]]` form's
//! numbers over 802.11p under master-slave (with and without a position
//! tolerance, declared or derived from the cart's model), event-driven and
//! time-stepping sync, and the positions it hands ns-3 show in the
//! packets' propagation delay.

use std::path::{Path, PathBuf};

use crate::support::{packets_in_file_order, run_scenario, series, server_set, summary};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cli/graph_mobility")
}

fn syncs(dir: &Path) -> u64 {
    summary(dir)["sync"]["syncs"].as_u64().unwrap()
}

#[test]
fn a_moving_cart_as_a_graph_equals_the_same_loop_over_wave() {
    let out = tempfile::tempdir().unwrap();
    let mut exact_syncs = None;
    for (scheme, tolerance) in [
        ("master_slave", "0m"),
        ("master_slave", "1cm"),
        ("event_driven", "0m"),
        ("time_stepping", "0m"),
    ] {
        let sets = vec![
            format!("sync.scheme=\"{scheme}\""),
            format!("sync.position_tolerance=\"{tolerance}\""),
            server_set(),
        ];
        let case = out.path().join(format!("{scheme}-{tolerance}"));
        let (l, g) = (case.join("loops"), case.join("graph"));
        run_scenario(&fixtures().join("cart_loops.toml"), &l, &sets);
        run_scenario(&fixtures().join("cart_graph.toml"), &g, &sets);
        for (a, b) in [
            ("cart.x.x", "cart.x.x"),
            ("cart.x.v", "cart.x.v"),
            ("cart.u.force", "force.u"),
        ] {
            assert_eq!(series(&l, a), series(&g, b), "{scheme} {tolerance}: {a}");
        }
        let x: Vec<f64> = series(&g, "cart.x.x")
            .iter()
            .map(|v| v.parse().unwrap())
            .collect();
        assert!(
            x.last().unwrap() > &0.5,
            "{scheme} {tolerance}: the cart moves"
        );
        let up = packets_in_file_order(&l, "cart:uplink");
        assert!(up.len() >= 190, "{scheme}: {} uplink rows", up.len());
        assert_eq!(
            up,
            packets_in_file_order(&g, "uplink"),
            "{scheme} {tolerance}: uplink"
        );
        assert_eq!(
            packets_in_file_order(&l, "cart:downlink"),
            packets_in_file_order(&g, "downlink"),
            "{scheme} {tolerance}: downlink"
        );
        if scheme != "event_driven" {
            // Event-driven graphs stop at every boundary a flow may send
            // at (the same packets, more steps).
            assert_eq!(syncs(&l), syncs(&g), "{scheme} {tolerance}: syncs");
        }
        if scheme == "master_slave" {
            match exact_syncs {
                None => exact_syncs = Some(syncs(&g)),
                // The tolerance lets the network run several periods a sync.
                Some(exact) => assert!(syncs(&g) < exact / 2, "{} vs {exact}", syncs(&g)),
            }
        }
    }
}

/// A position tolerance with no declared bound: the cart's model, with the
/// ±2 N of the actuator (component) that drives it, bounds its drift in
/// both forms, so the graph runs the loop's windows: the same syncs, far
/// fewer than syncing every period, and the same numbers and packets.
/// Before, the graph form was refused at check (exit 2, nothing bounds
/// it).
#[test]
fn a_moving_cart_as_a_graph_keeps_a_tolerance_from_its_model_as_the_loop_does() {
    let out = tempfile::tempdir().unwrap();
    let forms = [
        (
            "cart_loops.toml",
            [
                "loops[0].mobility={ position = \"x\", velocity = \"v\", origin = [5.0, 0.0, 0.0] }",
                "loops[0].actuator={ min = -2.0, max = 2.0 }",
            ],
        ),
        (
            "cart_graph.toml",
            [
                "components[0].mobility={ position = \"cart.y[0]\", velocity = \"cart.y[1]\", origin = [5.0, 0.0, 0.0] }",
                "components[3].actuator={ min = -2.0, max = 2.0 }",
            ],
        ),
    ];
    let mut runs = Vec::new();
    for tolerance in ["0m", "1cm"] {
        let mut pair = Vec::new();
        for (file, keys) in &forms {
            let mut sets: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
            sets.push(format!("sync.position_tolerance=\"{tolerance}\""));
            sets.push(server_set());
            let dir = out.path().join(format!("{file}-{tolerance}"));
            run_scenario(&fixtures().join(file), &dir, &sets);
            pair.push(dir);
        }
        runs.push(pair);
    }
    let (exact, tolerant) = (&runs[0], &runs[1]);
    for (a, b) in [
        ("cart.x.x", "cart.x.x"),
        ("cart.x.v", "cart.x.v"),
        ("cart.u.force", "force.u"),
    ] {
        assert_eq!(series(&tolerant[0], a), series(&tolerant[1], b), "{a}");
    }
    for (l, g) in [("cart:uplink", "uplink"), ("cart:downlink", "downlink")] {
        let rows = packets_in_file_order(&tolerant[0], l);
        assert!(rows.len() >= 190, "{l}: {} rows", rows.len());
        assert_eq!(rows, packets_in_file_order(&tolerant[1], g), "{l}");
    }
    assert_eq!(syncs(&tolerant[0]), syncs(&tolerant[1]), "syncs");
    assert_eq!(syncs(&exact[0]), syncs(&exact[1]), "exact syncs");
    assert!(
        syncs(&tolerant[1]) < syncs(&exact[1]) / 2,
        "{} syncs with a tolerance, {} without",
        syncs(&tolerant[1]),
        syncs(&exact[1])
    );
}

/// The cart at rest (reference 0) sits at its `origin`: 15 m from node 1
/// (at 10 m) from -5 m, 45 m from -35 m. Every packet takes 30 m / c =
/// 100.07 ns longer in the second run, in both directions, or twice that
/// when its frame deferred to the other node's frame (which flies 30 m
/// farther too): the position the graph hands ns-3 is the one the radio
/// sees. (The network's own placement would put node 0 at 0 m.)
#[test]
fn the_positions_a_graph_hands_ns3_set_the_propagation_delay() {
    let out = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixtures().join("cart_graph.toml")).unwrap();
    let at = |origin: &str| {
        let dir = out.path().join(origin);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("cart.toml");
        let moved = text
            .replace(
                "origin = [5.0, 0.0, 0.0]",
                &format!("origin = [{origin}, 0.0, 0.0]"),
            )
            .replace("final = 1.0", "final = 0.0");
        assert_ne!(moved, text);
        std::fs::write(&file, moved).unwrap();
        let run = dir.join("out");
        run_scenario(&file, &run, &[server_set()]);
        run
    };
    let (near, far) = (at("-5.0"), at("-35.0"));
    let x: Vec<String> = series(&near, "cart.x.x");
    assert!(x.iter().all(|v| v.parse::<f64>().unwrap() == 0.0));
    let expected = 30.0 / 299_792_458.0 * 1e9;
    for flow in ["uplink", "downlink"] {
        let delays = |run: &Path| -> std::collections::BTreeMap<String, f64> {
            packets_in_file_order(run, flow)
                .into_iter()
                // number .. delay_ns: packets.csv from its `number` column
                .filter(|r| !r[8].is_empty())
                .map(|r| (r[0].clone(), r[8].parse().unwrap()))
                .collect()
        };
        let (a, b) = (delays(&near), delays(&far));
        let both: Vec<_> = a.keys().filter(|n| b.contains_key(*n)).collect();
        assert!(both.len() >= 150, "{flow}: {} packets in both", both.len());
        let longer: Vec<f64> = both.iter().map(|n| b[*n] - a[*n]).collect();
        for d in &longer {
            let once = (d - expected).abs() <= 1.0;
            let twice = (d - 2.0 * expected).abs() <= 1.0;
            assert!(
                once || twice,
                "{flow}: {d} ns longer, expected {expected:.2} (or twice)"
            );
        }
        assert!(
            longer
                .iter()
                .filter(|d| (*d - expected).abs() <= 1.0)
                .count()
                >= 50,
            "{flow}: {longer:?}"
        );
    }
}

/// The cart and its actuator in a subsystem whose `mobility` names the
/// cart's outputs inside the subsystem file (renamed as its connections
/// are): the same run as the flat graph. Equal packets.csv rows mean equal
/// delays, so ns-3 saw the same positions. Before, the subsystem's
/// reference was not renamed and `check` refused it (exit 2).
#[test]
fn a_subsystem_component_moves_its_node_as_the_flat_graph_does() {
    let out = tempfile::tempdir().unwrap();
    let (flat, sub) = (out.path().join("flat"), out.path().join("sub"));
    run_scenario(&fixtures().join("cart_graph.toml"), &flat, &[server_set()]);
    run_scenario(
        &fixtures().join("cart_graph_subsystem.toml"),
        &sub,
        &[server_set()],
    );
    for (a, b) in [
        ("cart.x.x", "car/cart.x.x"),
        ("cart.x.v", "car/cart.x.v"),
        ("force.u", "car/force.u"),
    ] {
        assert_eq!(series(&flat, a), series(&sub, b), "{a}");
    }
    for flow in ["uplink", "downlink"] {
        let rows = packets_in_file_order(&flat, flow);
        assert!(rows.len() >= 190, "{flow}: {} rows", rows.len());
        assert_eq!(rows, packets_in_file_order(&sub, flow), "{flow}");
    }
    assert_eq!(syncs(&flat), syncs(&sub));
}
