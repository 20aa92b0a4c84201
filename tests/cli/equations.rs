//! The equation-language examples run through `netloop run` and give the
//! results their comments state; a model file's errors point into it.

use crate::support::{assert_exit, column, read_csv, root, run, run_scenario, stderr, summary};

fn run_example(name: &str) -> (tempfile::TempDir, Vec<String>, Vec<Vec<String>>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let example = root().join("examples").join(name);
    let o = run_scenario(&example, &out, &[]);
    assert_exit(&o, 0);
    let (header, rows) = read_csv(&out.join("timeseries.csv"));
    (dir, header, rows)
}

fn values(header: &[String], rows: &[Vec<String>], name: &str) -> Vec<f64> {
    let c = column(header, name);
    rows.iter().map(|r| r[c].parse().unwrap()).collect()
}

/// examples/bouncing_ball_equations.toml: 18 impacts before 20 s, and the
/// highest sample of each of the first flights is the analytic apex to
/// within what 10 ms sampling can miss (g/2 (5 ms)^2 = 1.3e-4 m).
#[test]
fn bouncing_ball_example_gives_its_stated_impacts_and_apexes() {
    let (dir, header, rows) = run_example("bouncing_ball_equations.toml");
    let s = summary(&dir.path().join("out"));
    let text = s.to_string();
    assert!(text.contains("\"resets\":18"), "{text}");
    let (g, e, h0, v0) = (9.81f64, 0.8f64, 10.0f64, 15.0f64);
    let v1 = (v0 * v0 + 2.0 * g * h0).sqrt();
    let mut impacts = vec![(v0 + v1) / g];
    for n in 1..4 {
        impacts.push(impacts[n - 1] + 2.0 * e.powi(n as i32) * v1 / g);
    }
    for (t, want) in [(3.6211, 0), (6.9684, 1), (9.6463, 2), (11.7885, 3)] {
        assert!(
            (impacts[want] - t).abs() < 1e-4,
            "impact {want}: {}",
            impacts[want]
        );
    }
    let t = values(&header, &rows, "time");
    let h = values(&header, &rows, "ball.x.h");
    let mut apexes = vec![h0 + v0 * v0 / (2.0 * g)];
    for n in 1..4 {
        apexes.push((e.powi(n) * v1).powi(2) / (2.0 * g));
    }
    assert!((apexes[0] - 21.4679).abs() < 1e-4 && (apexes[1] - 13.7394).abs() < 1e-4);
    for n in 0..4 {
        let from = if n == 0 { 0.0 } else { impacts[n - 1] };
        let highest = t
            .iter()
            .zip(&h)
            .filter(|(&ti, _)| ti > from && ti < impacts[n])
            .map(|(_, &hi)| hi)
            .fold(f64::NEG_INFINITY, f64::max);
        assert!(
            highest <= apexes[n] + 1e-9 && apexes[n] - highest < 1.3e-4,
            "flight {n}: highest sample {highest} vs apex {}",
            apexes[n]
        );
    }
    assert!(h.iter().all(|&v| v >= 0.0));
}

/// examples/van_der_pol_equations.toml: the state at 10 s is RK4 at h/64
/// (computed here) to 1e-7, and the limit cycle's amplitude is 2.0086.
#[test]
fn van_der_pol_example_matches_the_fine_step_reference() {
    let (_dir, header, rows) = run_example("van_der_pol_equations.toml");
    let f = |x: [f64; 2]| [x[1], (1.0 - x[0] * x[0]) * x[1] - x[0]];
    let h = 0.01 / 64.0;
    let mut x = [2.0f64, 0.0];
    for _ in 0..64_000 {
        let k1 = f(x);
        let k2 = f([x[0] + 0.5 * h * k1[0], x[1] + 0.5 * h * k1[1]]);
        let k3 = f([x[0] + 0.5 * h * k2[0], x[1] + 0.5 * h * k2[1]]);
        let k4 = f([x[0] + h * k3[0], x[1] + h * k3[1]]);
        for i in 0..2 {
            x[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    assert!(
        (x[0] - -2.0083408).abs() < 1e-7 && (x[1] - 0.0329071).abs() < 1e-7,
        "{x:?}"
    );
    let xs = values(&header, &rows, "vdp.x.x");
    let ys = values(&header, &rows, "vdp.x.y");
    let t = values(&header, &rows, "time");
    assert_eq!(*t.last().unwrap(), 10.0);
    let (x_end, y_end) = (*xs.last().unwrap(), *ys.last().unwrap());
    assert!((x_end - x[0]).abs() < 1e-7, "{x_end} vs {}", x[0]);
    assert!((y_end - x[1]).abs() < 1e-7, "{y_end} vs {}", x[1]);
    let amplitude = t
        .iter()
        .zip(&xs)
        .filter(|(&ti, _)| ti > 6.7)
        .map(|(_, &v)| v.abs())
        .fold(0.0, f64::max);
    assert!((amplitude - 2.0086).abs() < 1e-3, "{amplitude}");
}

/// A model file's syntax error names the key, the scenario line and the
/// model's own file, line and column with a caret under the fault.
#[test]
fn a_model_file_error_points_into_the_model_file() {
    let path = root().join("tests/cli/broken/equations_syntax_error.toml");
    let o = run(&["check", path.to_str().unwrap()]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("`loops[0].plant.source`"), "{err}");
    assert!(err.contains("equations_syntax_error.eq:4:14"), "{err}");
    assert!(err.contains("4 | der(v) = -g *;"), "{err}");
    assert!(err.contains("equations_syntax_error.toml:25:1"), "{err}");
    let caret = err
        .lines()
        .skip_while(|l| !l.contains("4 | der(v)"))
        .nth(1)
        .unwrap();
    assert_eq!(
        caret.find('^'),
        err.lines()
            .find(|l| l.contains("4 | der(v)"))
            .unwrap()
            .find(';')
    );
}

/// Inline text is reported at its own lines in the scenario file.
#[test]
fn an_inline_model_error_points_at_its_line_in_the_scenario() {
    let path = root().join("tests/cli/broken/equations_undefined_variable.toml");
    let o = run(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        "/nonexistent/never-written",
    ]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("equations_undefined_variable.toml:30:11"),
        "{err}"
    );
    assert!(err.contains("30 | der(v) = -gravity;"), "{err}");
}
