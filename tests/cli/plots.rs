//! `netloop plot` on a run and on a sweep: PNG and SVG files of the
//! documented size (1200 x 800).

use std::path::Path;

use crate::support::{assert_exit, run, servo_example, stdout, write_sweep};

/// Width and height from a PNG's IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert!(bytes.len() > 1000, "{} is almost empty", path.display());
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        path.display()
    );
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

fn check_pair(stem: &Path) {
    let png = stem.with_file_name(format!(
        "{}.png",
        stem.file_name().unwrap().to_string_lossy()
    ));
    let svg = stem.with_file_name(format!(
        "{}.svg",
        stem.file_name().unwrap().to_string_lossy()
    ));
    assert_eq!(png_size(&png), (1200, 800), "{}", png.display());
    let text = std::fs::read_to_string(&svg).unwrap_or_else(|e| panic!("{}: {e}", svg.display()));
    assert!(
        text.contains("<svg") && text.contains("width=\"1200\"") && text.contains("height=\"800\""),
        "{}",
        svg.display()
    );
    assert!(
        text.contains("<text") && text.contains("<polyline"),
        "{} has no text or lines",
        svg.display()
    );
}

#[test]
fn plotting_a_run_draws_five_figures_in_both_formats() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = run(&[
        "run",
        servo_example().to_str().unwrap(),
        "--network",
        "builtin",
        "--set",
        "duration=1s",
        "--set",
        "network.builtin.loss={ kind = \"bernoulli\", p = 0.2 }",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_exit(&o, 0);
    let o = run(&["plot", out.to_str().unwrap()]);
    assert_exit(&o, 0);
    assert_eq!(stdout(&o).lines().count(), 10, "{}", stdout(&o));
    for name in ["trajectories", "control", "delay", "delay_cdf", "fates"] {
        check_pair(&out.join("plots").join(name));
    }
}

#[test]
fn plotting_a_sweep_draws_each_metric_against_the_first_parameter() {
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
values = ["1ms", "5ms"]
[[grid]]
key = "loops[0].controller.kp"
values = [10.0, 20.0]
"#,
    );
    let out = dir.path().join("sweep");
    assert_exit(
        &run(&[
            "sweep",
            sweep.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]),
        0,
    );
    let o = run(&["plot", out.to_str().unwrap()]);
    assert_exit(&o, 0);
    for metric in [
        "servo.theta.iae",
        "servo.theta.itae",
        "servo.uplink.delay.mean_s",
        "delivery_ratio",
    ] {
        check_pair(&out.join("plots").join(metric));
    }
    // One line per value of the second parameter, named in the legend.
    let svg = std::fs::read_to_string(out.join("plots/servo.theta.iae.svg")).unwrap();
    assert!(
        svg.contains("loops[0].controller.kp = 10.0")
            && svg.contains("loops[0].controller.kp = 20.0")
    );
    assert!(
        svg.contains("network.builtin.delay.value [ms]"),
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
    assert_eq!(stdout(&o).lines().count(), 6, "{}", stdout(&o));
    let o = run(&["plot", out.to_str().unwrap(), "--x", "no.such.key"]);
    assert_exit(&o, 2);
}

#[test]
fn plotting_something_else_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    assert_exit(&run(&["plot", dir.path().to_str().unwrap()]), 2);
}
