//! What `netloop plot` makes of its input: the number of runs behind each
//! point of a sweep figure, and a corrupt or empty file as an error (exit
//! code 2, naming the file and line) instead of a blank figure.

use std::path::Path;

use crate::support::{
    assert_exit, assert_exit_saying, run, run_scenario, run_sweep, servo_example, stderr,
    write_sweep,
};

fn servo_run(out: &Path) {
    let o = run_scenario(
        &servo_example(),
        &out,
        &["--network", "builtin", "--set", "duration=200ms", "-q"],
    );
    assert_exit(&o, 0);
}

/// The texts of an SVG's `<text>` elements.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

#[test]
fn each_point_of_a_sweep_figure_shows_its_number_of_runs() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(
        dir.path(),
        "n.toml",
        r#"
network = "builtin"
replications = 3
[set]
duration = "200ms"
[[grid]]
key = "network.builtin.delay.value"
values = ["2ms", "10ms", "20ms"]
"#,
    );
    let out = dir.path().join("sweep");
    let o = run_sweep(&sweep, &out, &["-q"]);
    assert_exit(&o, 0);
    let o = run(&["plot", out.to_str().unwrap(), "--metric", "delay.mean_s"]);
    assert_exit(&o, 0);
    let svg = std::fs::read_to_string(out.join("plots/servo.uplink.delay.mean_s.svg")).unwrap();
    let texts = svg_texts(&svg);
    assert_eq!(
        texts.iter().filter(|t| *t == "n=3").count(),
        3,
        "one n per point: {texts:?}"
    );
    // Both axes carry their unit: the sweep file's ms, the metric's seconds.
    assert!(
        texts
            .iter()
            .any(|t| t == "network.builtin.delay.value [ms]"),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t == "servo.uplink.delay.mean_s [s]"),
        "{texts:?}"
    );
    // The x axis is numeric in ms: 2 and 20 are far apart, not neighbours.
    assert!(texts.iter().any(|t| t == "20.0"), "{texts:?}");
}

#[test]
fn a_corrupt_or_empty_time_series_is_an_error_not_a_blank_figure() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    servo_run(&out);
    let ts = out.join("timeseries.csv");
    let text = std::fs::read_to_string(&ts).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let header = lines[0].to_string();

    // A cell that is not a number on line 4.
    let broken = lines[3].replacen(',', ",x", 1);
    lines[3] = &broken;
    std::fs::write(&ts, lines.join("\n") + "\n").unwrap();
    let o = run(&["plot", out.to_str().unwrap()]);
    assert_exit_saying(&o, 2, "timeseries.csv line 4");
    assert!(!out.join("plots/trajectories.png").exists());

    // A row with a field missing.
    std::fs::write(&ts, format!("{header}\n0,1\n")).unwrap();
    let o = run(&["plot", out.to_str().unwrap()]);
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("line 2"), "{}", stderr(&o));

    // The header only.
    std::fs::write(&ts, format!("{header}\n")).unwrap();
    let o = run(&["plot", out.to_str().unwrap()]);
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("no rows"), "{}", stderr(&o));
}

/// Runs the servo example for 300 ms with lossy links into `out`, in `format`.
fn lossy_run(out: &Path, format: &str) {
    let o = run_scenario(
        &servo_example(),
        &out,
        &[
            "--network",
            "builtin",
            "--set",
            "duration=300ms",
            "--set",
            "network.builtin.loss={ kind = \"bernoulli\", p = 0.2 }",
            "--format",
            format,
            "-q",
        ],
    );
    assert_exit(&o, 0);
}

#[test]
fn a_parquet_run_gives_the_same_figures_as_a_csv_one() {
    let dir = tempfile::tempdir().unwrap();
    // The same directory name: the figures' titles name it.
    let (csv, parquet) = (dir.path().join("a/run"), dir.path().join("b/run"));
    lossy_run(&csv, "csv");
    lossy_run(&parquet, "parquet");
    assert!(!parquet.join("timeseries.csv").exists());
    assert!(parquet.join("timeseries.parquet").exists());
    for d in [&csv, &parquet] {
        let o = run(&["plot", d.to_str().unwrap(), "-q"]);
        assert_exit(&o, 0);
    }
    for name in ["trajectories", "control", "delay", "delay_cdf", "fates"] {
        let read = |d: &Path| std::fs::read(d.join(format!("plots/{name}.svg"))).unwrap();
        assert!(
            read(&csv) == read(&parquet),
            "{name}: the Parquet run draws differently"
        );
    }
}

#[test]
fn a_corrupt_parquet_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    lossy_run(&out, "parquet");
    let ts = out.join("timeseries.parquet");
    let bytes = std::fs::read(&ts).unwrap();
    std::fs::write(&ts, &bytes[..bytes.len() / 2]).unwrap();
    let o = run(&["plot", out.to_str().unwrap()]);
    assert_exit_saying(&o, 2, "timeseries.parquet");
    assert_exit_saying(&o, 2, "corrupt");
    assert!(!out.join("plots/trajectories.png").exists());
}

#[test]
fn an_empty_or_corrupt_sweep_summary_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(
        dir.path(),
        "s.toml",
        "network = \"builtin\"\n[set]\nduration = \"100ms\"\n[[grid]]\nkey = \"loops[0].controller.kp\"\nvalues = [10.0, 20.0]\n",
    );
    let out = dir.path().join("sweep");
    assert_exit(&run_sweep(&sweep, &out, &["-q"]), 0);
    let summary = out.join("sweep_summary.csv");
    let text = std::fs::read_to_string(&summary).unwrap();
    let header = text.lines().next().unwrap().to_string();

    let corrupt = text.replacen(",servo.theta.iae,1,", ",servo.theta.iae,one,", 1);
    assert_ne!(corrupt, text);
    std::fs::write(&summary, corrupt).unwrap();
    let o = run(&["plot", out.to_str().unwrap()]);
    assert_exit_saying(&o, 2, "line 2");
    assert_exit_saying(&o, 2, "`one`");

    std::fs::write(&summary, format!("{header}\n")).unwrap();
    let o = run(&["plot", out.to_str().unwrap()]);
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("no rows"), "{}", stderr(&o));
}
