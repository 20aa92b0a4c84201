//! The figures that state a study's findings: the fraction of runs a stop
//! condition ended, confidence intervals that stay inside a metric's
//! possible values, data rates on a numeric (optionally log) axis, a
//! platoon's spacing errors; and a layout that fits: titles shortened to
//! the width, legends beside the data.

use std::path::Path;

use crate::figures::check_figure;
use crate::support::{
    assert_exit, assert_exit_saying, root, run, run_scenario, run_sweep, servo_example, write_sweep,
};

#[test]
fn a_stop_condition_gives_an_instability_fraction_figure() {
    let dir = tempfile::tempdir().unwrap();
    // Without a proportional gain the servo creeps, with one it passes
    // 0.5 rad within 0.2 s: never stopped, always stopped.
    let sweep = write_sweep(
        dir.path(),
        "unstable.toml",
        r#"
network = "builtin"
replications = 3
[set]
duration = "500ms"
stop_when = "servo.y.theta > 0.5"
[[grid]]
key = "loops[0].controller.kp"
values = [0.0, 20.0]
"#,
    );
    let out = dir.path().join("sweep");
    let o = run_sweep(&sweep, &out, &["-q"]);
    assert_exit(&o, 0);
    let summary = std::fs::read_to_string(out.join("sweep_summary.csv")).unwrap();
    assert!(summary.contains(",0.0,unstable_fraction,3,0,"), "{summary}");
    assert!(
        summary.contains(",20.0,unstable_fraction,3,1,"),
        "{summary}"
    );

    // Drawn by default, next to the metrics.
    let o = run(&["plot", out.to_str().unwrap(), "-q"]);
    assert_exit(&o, 0);
    let f = check_figure(&out.join("plots/unstable_fraction"));
    assert!(
        f.has_text("Fraction of runs ended by `unstable` (95% Wilson interval)  |  sweep"),
        "{:?}",
        f.texts
    );
    assert!(f.has_text("fraction of runs unstable"), "{:?}", f.texts);
    assert_eq!(f.count_text("n=3"), 2, "{:?}", f.texts);
    assert_eq!(f.bands(), 1);
}

/// A sweep directory as `netloop sweep` leaves it, written by hand so that
/// the t interval of the first point crosses zero: three runs with IAE 0,
/// 0 and 3 (mean 1, std √3, t interval 1 ± 4.30).
fn handmade_sweep(dir: &Path, rates: [&str; 3], with_runs: bool) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("sweep.json"), "{}").unwrap();
    let key = "network.ns3.data_rate";
    let mut summary = format!(
        "point,{key},metric,n,mean,std,ci95_low,ci95_high,ci95_half_width,non_finite,not_settled\n"
    );
    let mut runs =
        format!("run_dir,point,{key},replication,run,seed,status,error,servo.theta.iae,wall_s\n");
    let values = [[0.0, 0.0, 3.0], [1.9, 2.0, 2.1], [2.9, 3.0, 3.1]];
    let rows = [
        (1.0, -3.3027, 5.3027),
        (2.0, 1.7516, 2.2484),
        (3.0, 2.7516, 3.2484),
    ];
    for (point, (rate, ((mean, lo, hi), runs_of))) in
        rates.iter().zip(rows.iter().zip(values)).enumerate()
    {
        summary += &format!(
            "{point},{rate},servo.theta.iae,3,{mean},0,{lo},{hi},{},0,\n",
            hi - mean
        );
        for (r, v) in runs_of.iter().enumerate() {
            runs += &format!(
                "runs/{point}{r},{point},{rate},{r},{},1,complete,,{v},0.1\n",
                r + 1
            );
        }
    }
    std::fs::write(dir.join("sweep_summary.csv"), summary).unwrap();
    if with_runs {
        std::fs::write(dir.join("sweep.csv"), runs).unwrap();
    }
}

#[test]
fn an_interval_that_would_cross_zero_is_bootstrapped_or_clamped() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    handmade_sweep(&out, ["100kbps", "1Mbps", "10Mbps"], true);
    let o = run(&["plot", out.to_str().unwrap(), "-q"]);
    assert_exit(&o, 0);
    let f = check_figure(&out.join("plots/servo.theta.iae"));
    let title = |f: &crate::figures::Figure| {
        f.texts
            .iter()
            .find(|t| t.starts_with("servo.theta.iae (mean"))
            .cloned()
            .unwrap_or_default()
    };
    assert!(
        title(&f).contains("bootstrap at 1 points where the t interval left the possible values"),
        "{:?}",
        f.texts
    );
    // Mixed rate units: a numeric axis in the largest unit that keeps every value ≥ 1.
    assert!(f.has_text("network.ns3.data_rate [kbps]"), "{:?}", f.texts);

    // Without the runs' values: cut at zero.
    std::fs::remove_file(out.join("sweep.csv")).unwrap();
    let o = run(&["plot", out.to_str().unwrap(), "-q"]);
    assert_exit(&o, 0);
    let f = check_figure(&out.join("plots/servo.theta.iae"));
    assert!(title(&f).contains("clamped at 1 points"), "{:?}", f.texts);
}

#[test]
fn data_rates_can_be_drawn_on_a_log_axis() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    handmade_sweep(&out, ["100kbps", "1Mbps", "10Mbps"], true);
    let o = run(&["plot", out.to_str().unwrap(), "--log-x", "-q"]);
    assert_exit(&o, 0);
    let f = check_figure(&out.join("plots/servo.theta.iae"));
    // Decades apart, evenly spaced: the three points' x in the SVG.
    let doc = roxmltree::Document::parse(&f.svg).unwrap();
    let mut xs: Vec<f64> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some("n=3"))
        .map(|n| n.attribute("x").unwrap().parse().unwrap())
        .collect();
    xs.sort_by(f64::total_cmp);
    assert_eq!(xs.len(), 3);
    assert!(
        ((xs[1] - xs[0]) - (xs[2] - xs[1])).abs() <= 1.0,
        "log spacing: {xs:?}"
    );

    // Words cannot go on a log axis.
    let words = dir.path().join("words");
    handmade_sweep(&words, ["slow", "medium", "fast"], true);
    let o = run(&["plot", words.to_str().unwrap(), "--log-x"]);
    assert_exit_saying(&o, 2, "--log-x needs positive numbers");
}

#[test]
fn a_platoon_run_gets_a_spacing_error_figure() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("platoon");
    let o = run(&[
        "run",
        root()
            .join("examples/platoon_wave_bsm.toml")
            .to_str()
            .unwrap(),
        "--network",
        "builtin",
        "--set",
        "duration=3s",
        "--set",
        "network.builtin.delay={ kind = \"constant\", value = \"5ms\" }",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert_exit(&o, 0);
    let o = run(&["plot", out.to_str().unwrap(), "-q"]);
    assert_exit(&o, 0);
    let f = check_figure(&out.join("plots/spacing"));
    assert!(f.has_text("spacing error [m]"), "{:?}", f.texts);
    for (follower, ahead) in [
        ("follower1", "leader"),
        ("follower2", "follower1"),
        ("follower3", "follower2"),
    ] {
        assert!(
            f.has_text(&format!("{follower} behind {ahead}")),
            "{:?}",
            f.texts
        );
    }
    // The vehicles' outputs are speeds.
    let t = check_figure(&out.join("plots/trajectories"));
    assert!(t.has_text("y, r [m/s]"), "{:?}", t.texts);
}

#[test]
fn titles_fit_and_legends_stand_beside_the_data() {
    let dir = tempfile::tempdir().unwrap();
    // 240 characters: with the rest of the title, more than a line of 1200
    // pixels holds at the smallest title size.
    let name = format!("a_run_directory_with_a_long_name_{}", "x".repeat(207));
    let out = dir.path().join(name);
    let o = run_scenario(
        &servo_example(),
        &out,
        &["--network", "builtin", "--set", "duration=1s", "-q"],
    );
    assert_exit(&o, 0);
    let o = run(&["plot", out.to_str().unwrap(), "-q"]);
    assert_exit(&o, 0);
    let f = check_figure(&out.join("plots/trajectories"));
    let doc = roxmltree::Document::parse(&f.svg).unwrap();
    // The rightmost of the texts that say `text`.
    let text_x = |text: &str| -> f64 {
        doc.descendants()
            .filter(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(text))
            .map(|n| n.attribute("x").unwrap().parse::<f64>().unwrap())
            .reduce(f64::max)
            .unwrap_or_else(|| panic!("no `{text}`: {:?}", f.texts))
    };
    // Shortened in the middle: its beginning and its end are kept.
    let title = f
        .texts
        .iter()
        .find(|t| t.starts_with("Outputs (solid)"))
        .expect("a title");
    assert!(
        title.contains('…') && title.ends_with("constant delay 2752us, no loss"),
        "{title}"
    );
    // The legend's labels start right of the time axis' last tick.
    assert!(text_x("theta") > text_x("1.0"), "{:?}", f.texts);
    assert!(text_x("reference r0") > text_x("1.0"));
}
