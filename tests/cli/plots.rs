//! `netloop plot` on a run, a grid sweep and a zip sweep: PNG, SVG and PDF
//! of the documented size (1200 x 800 px, 900 x 600 pt), not blank, with
//! the expected series, legends and units.

use crate::figures::check_figure;
use crate::support::{
    assert_exit, run, run_scenario, run_sweep, servo_example, stdout, write_sweep,
};

#[test]
fn plotting_a_run_draws_five_figures_in_three_formats() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = run_scenario(
        &servo_example(),
        &out,
        &[
            "--network",
            "builtin",
            "--set",
            "duration=1s",
            "--set",
            "network.builtin.loss={ kind = \"bernoulli\", p = 0.2 }",
        ],
    );
    assert_exit(&o, 0);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let flow = |i: usize, key: &str| summary["flows"][i][key].as_u64().unwrap();
    let o = run(&["plot", out.to_str().unwrap()]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o).lines().count(), 15, "{}", stdout(&o));
    for name in ["trajectories", "control", "delay", "delay_cdf", "fates"] {
        check_figure(&out.join("plots").join(name));
    }
    let plots = out.join("plots");

    // The plant's units on the value axes, the legend beside the data.
    let t = check_figure(&plots.join("trajectories"));
    assert!(t.has_text("y, r [rad]"), "{:?}", t.texts);
    assert!(t.has_text("time [s]") && t.has_text("theta") && t.has_text("reference r0"));
    let c = check_figure(&plots.join("control"));
    assert!(c.has_text("u [V]"), "{:?}", c.texts);

    // Lost packets on the delay scatter, counted in the legend as in summary.json.
    let d = check_figure(&plots.join("delay"));
    let lost = |i: usize| flow(i, "sent") - flow(i, "delivered");
    assert!(lost(0) > 0 && lost(1) > 0);
    for (i, name) in [(0, "servo uplink"), (1, "servo downlink")] {
        assert!(
            d.has_text(&format!("{name} ({} lost)", lost(i))),
            "{:?}",
            d.texts
        );
        assert!(
            d.has_text(&format!("{name} ({} delivered)", flow(i, "delivered"))),
            "{:?}",
            d.texts
        );
    }
    assert!(d.has_text("lost"));

    // Every fate bar says its count.
    let f = check_figure(&plots.join("fates"));
    for i in 0..2 {
        for fate in ["accepted", "lost_phy"] {
            assert!(
                f.has_text(&flow(i, fate).to_string()),
                "{fate} of flow {i}: {:?}",
                f.texts
            );
        }
    }
}

#[test]
fn plotting_a_grid_sweep_draws_one_band_per_line_and_n_per_point() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(
        dir.path(),
        "plot.toml",
        r#"
network = "builtin"
replications = 2
[set]
duration = "300ms"
"loops[0].sensor.noise_std" = 0.01
[[grid]]
key = "network.builtin.delay.value"
values = ["1ms", "5ms", "10ms"]
[[grid]]
key = "loops[0].controller.kp"
values = [10.0, 20.0]
"#,
    );
    let out = dir.path().join("sweep");
    assert_exit(&run_sweep(&sweep, &out, &[]), 0);
    let o = run(&["plot", out.to_str().unwrap()]);
    assert_exit(&o, 0);
    for metric in [
        "servo.theta.iae",
        "servo.theta.itae",
        "servo.uplink.delay.mean_s",
        "delivery_ratio",
    ] {
        check_figure(&out.join("plots").join(metric));
    }
    // One line per value of the second parameter, named in the legend,
    // each with its confidence band; n = 2 at each of the 6 points.
    let iae = check_figure(&out.join("plots/servo.theta.iae"));
    assert!(
        iae.has_text("loops[0].controller.kp = 10.0")
            && iae.has_text("loops[0].controller.kp = 20.0"),
        "{:?}",
        iae.texts
    );
    assert_eq!(iae.bands(), 2);
    assert_eq!(iae.count_text("n=2"), 6, "{:?}", iae.texts);
    assert!(
        iae.has_text("network.builtin.delay.value [ms]"),
        "durations are plotted in the unit the sweep file wrote"
    );

    // Another x axis, one metric.
    let o = run(&[
        "plot",
        out.to_str().unwrap(),
        "--x",
        "loops[0].controller.kp",
        "--metric",
        "itae",
    ]);
    assert_exit(&o, 0);
    // Every ITAE: the output theta's and the states theta's and omega's.
    assert_eq!(stdout(&o).lines().count(), 9, "{}", stdout(&o));
    let o = run(&["plot", out.to_str().unwrap(), "--x", "no.such.key"]);
    assert_exit(&o, 2);
}

#[test]
fn a_zip_group_is_one_axis_not_one_line_per_row() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(
        dir.path(),
        "zip.toml",
        r#"
network = "builtin"
replications = 2
[set]
duration = "300ms"
"loops[0].sensor.noise_std" = 0.01
[[zip]]
keys = ["network.builtin.delay.value", "loops[0].controller.kp"]
values = [["1ms", 20.0], ["5ms", 15.0], ["10ms", 10.0]]
"#,
    );
    let out = dir.path().join("sweep");
    assert_exit(&run_sweep(&sweep, &out, &["-q"]), 0);
    let o = run(&["plot", out.to_str().unwrap(), "--metric", "servo.theta.iae"]);
    assert_exit(&o, 0);
    let iae = check_figure(&out.join("plots/servo.theta.iae"));
    // One line through the three points, with one band and no legend.
    assert_eq!(iae.bands(), 1, "{:?}", iae.texts);
    assert_eq!(iae.count_text("n=2"), 3);
    assert!(
        !iae.texts.iter().any(|t| t.contains(" = ")),
        "no line per zip row: {:?}",
        iae.texts
    );
    assert!(
        iae.has_text("network.builtin.delay.value [ms], zipped with loops[0].controller.kp"),
        "{:?}",
        iae.texts
    );
    for kp in ["kp=20.0", "kp=15.0", "kp=10.0"] {
        assert!(iae.has_text(kp), "{kp}: {:?}", iae.texts);
    }
}

#[test]
fn plotting_something_else_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    assert_exit(&run(&["plot", dir.path().to_str().unwrap()]), 2);
}
