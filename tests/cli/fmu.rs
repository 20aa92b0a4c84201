//! FMU plants and controllers (docs/scenario.md, "FMU plants and
//! controllers"), with FMUs built during the test run by tools no one here
//! wrote: C FMUs compiled by tests/fmu/build.sh against the FMI headers
//! FMPy ships, and a pythonfmu export. The cross-check is FMPy simulating
//! the same FMU standalone.
//!
//! Needs a C compiler and a Python with `fmpy` and `pythonfmu`
//! (`scripts/setup.sh` installs them into `.venv`; `$NETLOOP_PYTHON`
//! chooses another).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::support::{assert_exit, assert_success, netloop, read_csv, root, stderr, summary};

/// `duration` at 1 ms steps, time-stepping every 10 ms: the header of the
/// FMU tests' scenarios (for [`test_support::fixtures::scenario`]). The
/// plant tests run 2 s over a 3 ms channel, the controller tests 1 s over
/// one without delay.
fn every_10ms(duration: &str) -> String {
    format!(
        r#"duration = "{duration}"
step = "1ms"
[sync]
scheme = "time_stepping"
period = "10ms""#
    )
}
const DELAY_3MS: &str = r#"{ kind = "constant", value = "3ms" }"#;
const ZERO_DELAY: &str = r#"{ kind = "constant", value = "0s" }"#;
/// A unit step at 500 ms, as the `[loops.reference]` keys.
const STEP_AT_500MS: &str = "kind = \"step\"\nat = \"500ms\"\nfinal = 1.0";

/// The FMU `fmu` as the plant of loop `name` in open loop for 2 s, with
/// the plant keys `plant` and the reference keys `reference`.
fn fmu_plant_scenario(name: &str, fmu: &str, plant: &str, reference: &str) -> String {
    test_support::fixtures::scenario(
        &every_10ms("2s"),
        DELAY_3MS,
        &format!(
            r#"[[loops]]
name = "{name}"
plant_node = 0
controller_node = 1
[loops.plant]
kind = "fmu"
path = "models/{fmu}"
{plant}
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "open_loop"
[loops.reference]
{reference}
"#
        ),
    )
}

/// The FMU `fmu` as the controller of loop "pi" for 1 s on the plant
/// x' = -x + b u, y = x, following [`STEP_AT_500MS`], with the loop keys
/// `loop_keys` and the controller keys `controller`.
fn fmu_controller_scenario(fmu: &str, b: f64, loop_keys: &str, controller: &str) -> String {
    test_support::fixtures::scenario(
        &every_10ms("1s"),
        ZERO_DELAY,
        &format!(
            r#"[[loops]]
name = "pi"
plant_node = 0
controller_node = 1
{loop_keys}
[loops.plant]
kind = "state_space"
a = [[-1.0]]
b = [[{b:?}]]
c = [[1.0]]
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "fmu"
path = "models/{fmu}"
{controller}
[loops.reference]
{STEP_AT_500MS}
"#
        ),
    )
}

/// The test FMUs, built once per test run.
pub(crate) fn fmus() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-fmus");
        test_support::fmu::build("tests/fmu/build.sh", &dir);
        dir
    })
}

/// A scenario directory holding `fmu` (copied from the built ones, so the
/// scenario's relative path is exercised) and `scenario.toml`.
pub(crate) fn scenario(fmu_files: &[&str], text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("models")).unwrap();
    for f in fmu_files {
        std::fs::copy(fmus().join(f), dir.path().join("models").join(f)).unwrap();
    }
    std::fs::write(dir.path().join("scenario.toml"), text).unwrap();
    dir
}

fn netloop_in(dir: &Path) -> Command {
    let mut c = netloop();
    c.env("NETLOOP_FMU_CACHE", dir.join("fmu-cache"));
    c
}

/// `netloop run` on the scenario directory's scenario.toml, into `dir/out`.
fn run_dir(dir: &Path) -> (Output, PathBuf) {
    let out = dir.join("out");
    let o = netloop_in(dir)
        .arg("run")
        .arg(dir.join("scenario.toml"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    (o, out)
}

/// [`run_dir`] that must succeed; returns the run directory.
pub(crate) fn run_ok(dir: &Path) -> PathBuf {
    let (o, out) = run_dir(dir);
    assert_exit(&o, 0);
    out
}

/// `netloop check` on the scenario directory's scenario.toml.
fn check(dir: &Path) -> Output {
    netloop_in(dir)
        .arg("check")
        .arg(dir.join("scenario.toml"))
        .output()
        .unwrap()
}

/// Runs the FMPy script `script` of tests/fmu with `args`; fails the test
/// with FMPy's stderr if it fails.
fn fmpy(script: &str, args: &[&OsStr]) {
    let o = Command::new(test_support::fmu::python())
        .arg(root().join("tests/fmu").join(script))
        .args(args)
        .output()
        .unwrap();
    assert_success(&o, "FMPy failed");
}

/// A run an FMU stopped at 300 ms (its doStep to 310 ms failed): exit 1, the
/// error `expected` on stderr and in the summary, the run reached 310 ms and
/// the partial time series is kept. `what` labels the failure.
fn assert_stopped_at_300ms(o: &Output, out: &Path, expected: &str, what: &str) {
    assert_exit(o, 1);
    let err = stderr(o);
    assert!(err.contains(expected), "{what}{err}");
    let s = summary(out);
    assert_eq!(s["complete"], false);
    assert!(s["error"].as_str().unwrap().contains(expected), "{s}");
    assert_eq!(s["reached_ns"], 310_000_000);
    assert!(out.join("timeseries.csv.partial").is_file());
}

/// The open-loop chain: the 4-state linear plant FMU driven by a step
/// through the builtin channel.
fn plant_scenario(fmu: &str, extra_plant: &str) -> String {
    fmu_plant_scenario(
        "chain",
        fmu,
        &format!("step = \"10ms\"\nparameters = {{ k1 = 5.0, substeps = 10 }}\n{extra_plant}"),
        STEP_AT_500MS,
    )
}

pub(crate) fn column(header: &[String], rows: &[Vec<String>], name: &str) -> Vec<f64> {
    let i = crate::support::column(header, name);
    rows.iter().map(|r| r[i].parse().unwrap()).collect()
}

/// Runs netloop on the chain and FMPy on the same FMU with the input
/// netloop applied; the outputs at every communication point agree to
/// round-off. The only difference is FMPy's step size, which it computes
/// as `t_(n+1) - t_n` in floating point, against netloop's exact 10 ms.
fn cross_check_with_fmpy(fmu: &str) {
    let dir = scenario(&[fmu], &plant_scenario(fmu, ""));
    let out = run_ok(dir.path());
    let reference = dir.path().join("fmpy.csv");
    fmpy(
        "fmpy_reference.py",
        &[
            fmus().join(fmu).as_ref(),
            out.join("timeseries.csv").as_ref(),
            "u=chain.u.u".as_ref(),
            "0.01".as_ref(),
            "2.0".as_ref(),
            r#"{"k1": 5.0, "substeps": 10}"#.as_ref(),
            reference.as_ref(),
        ],
    );

    let (h, rows) = read_csv(&out.join("timeseries.csv"));
    let time = column(&h, &rows, "time");
    let (rh, rrows) = read_csv(&reference);
    let rtime = column(&rh, &rrows, "time");
    assert_eq!(rtime.len(), 201, "FMPy samples 0, 10ms, ..., 2s");
    let mut moved = false;
    for name in ["p1", "p2"] {
        let ours = column(&h, &rows, &format!("chain.x.{name}"));
        let theirs = column(&rh, &rrows, name);
        for (n, (t, want)) in rtime.iter().zip(&theirs).enumerate() {
            let row = time
                .iter()
                .position(|s| (s - t).abs() < 1e-9)
                .unwrap_or_else(|| panic!("netloop has no row at {t}"));
            let got = ours[row];
            assert!(
                (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                "{fmu} {name} at t = {t} (point {n}): netloop {got} FMPy {want}"
            );
            moved |= want.abs() > 0.1;
        }
    }
    assert!(moved, "the step moved the plant");
}

#[test]
fn fmi2_co_simulation_plant_equals_fmpy() {
    cross_check_with_fmpy("Linear4.fmu");
}

#[test]
fn fmi3_co_simulation_plant_equals_fmpy() {
    cross_check_with_fmpy("Linear4v3.fmu");
}

/// The Python PI controller (pythonfmu) computes at 10 ms with the
/// measurement and reference of its computation time: on a plant whose
/// output stays 0 (`b = 0`), `u(t_n) = kp r(t_n) + ki * 10ms * (number of
/// computations up to t_n with r = 1)`, from the first computation at 0.
#[test]
fn python_controller_answers_at_its_computation_time() {
    let text = &fmu_controller_scenario(
        "PiController.fmu",
        0.0,
        "",
        "parameters = { kp = 3.0, ki = 2 }\nperiod = \"10ms\"",
    );
    let dir = scenario(&["PiController.fmu"], text);
    let out = run_ok(dir.path());
    let (h, rows) = read_csv(&out.join("timeseries.csv"));
    let time = column(&h, &rows, "time");
    let uc = column(&h, &rows, "pi.uc.u0");
    let mut checked = 0;
    // The last row is the end of the run, where nothing computes.
    for (t, u) in time.iter().zip(&uc).filter(|(t, _)| **t < 1.0) {
        let ms = (t * 1000.0).round() as i64;
        // The output computed at the last 10 ms boundary at or before t.
        let n = ms / 10;
        let ones = (n - 50 + 1).max(0) as f64;
        let r = if n >= 50 { 1.0 } else { 0.0 };
        let want = 3.0 * r + 2.0 * 0.01 * ones;
        assert!((u - want).abs() < 1e-12, "u at {t}: {u}, expected {want}");
        checked += 1;
    }
    assert!(checked > 900);
}

/// An FMU call that returns fmi2Error stops the run with an error naming
/// the FMU, the call and the simulated time; the partial results are kept.
#[test]
fn fmu_error_stops_the_run_naming_fmu_call_and_time() {
    for (fmu, call) in [
        ("Linear4.fmu", "fmi2DoStep"),
        ("Linear4v3.fmu", "fmi3DoStep"),
    ] {
        let dir = scenario(
            &[fmu],
            &plant_scenario(fmu, "").replace("substeps = 10 }", "substeps = 10, fail_at = 0.305 }"),
        );
        let (o, out) = run_dir(dir.path());
        let expected = format!("FMU {fmu}: {call} returned Error at t = 300ms");
        assert_stopped_at_300ms(&o, &out, &expected, "");
    }
}

/// `netloop check` on a bad FMU or mapping: exit 2, naming the key and the
/// FMU variable.
#[test]
fn check_rejects_bad_fmus_and_mappings_naming_key_and_variable() {
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "NoLinux.fmu",
            "",
            "loops[0].plant.path",
            &[
                "no Linux x86-64 binary",
                "binaries/linux64/Linear4.so",
                "win64",
            ],
        ),
        (
            "BrokenXml.fmu",
            "",
            "loops[0].plant.path",
            &["broken modelDescription.xml"],
        ),
        (
            "MissingStart.fmu",
            "",
            "loops[0].plant.parameters",
            &["\"k1\"", "no start value", "parameters.k1"],
        ),
        (
            "Linear4.fmu",
            "start = { nope = 1.0 }",
            "loops[0].plant.start.nope",
            &["unknown name \"nope\""],
        ),
        (
            "Linear4v3.fmu",
            "start = { nope = 1.0 }",
            "loops[0].plant.start.nope",
            &["unknown name \"nope\""],
        ),
        (
            "Linear4.fmu",
            "inputs = [\"p1\"]",
            "loops[0].plant.inputs[0]",
            &["\"p1\" is not an input"],
        ),
        (
            "Linear4.fmu",
            "outputs = [\"p3\"]",
            "loops[0].plant.outputs[0]",
            &["unknown name \"p3\"", "expected: `p1` or `p2`"],
        ),
        (
            "Linear4.fmu",
            "step = \"2500us\"",
            "loops[0].plant.step",
            &["multiple of the run's step"],
        ),
    ];
    for (fmu, extra, key, needles) in cases {
        let mut text = plant_scenario(fmu, extra);
        if extra.starts_with("step") {
            text = text.replace("step = \"10ms\"\n", "");
        }
        if *fmu == "MissingStart.fmu" {
            // Giving k1 is the fix: without it, its missing start is an error.
            text = text.replace("k1 = 5.0, ", "");
        }
        let dir = scenario(&[fmu], &text);
        let o = check(dir.path());
        assert_exit(&o, 2);
        let err = stderr(&o);
        assert!(
            err.contains(&format!("`{key}`")),
            "{fmu} {extra}: no key {key} in\n{err}"
        );
        for n in *needles {
            assert!(err.contains(n), "{fmu} {extra}: no {n:?} in\n{err}");
        }
    }
    // Type mismatches, FMI 2.0 Integer and FMI 3.0 Int32.
    for (fmu, ty) in [("Linear4.fmu", "Integer"), ("Linear4v3.fmu", "Int32")] {
        let text = plant_scenario(fmu, "").replace("substeps = 10", "substeps = 2.5");
        let dir = scenario(&[fmu], &text);
        let o = check(dir.path());
        assert_exit(&o, 2);
        let err = stderr(&o);
        assert!(
            err.contains("`loops[0].plant.parameters.substeps`")
                && err.contains(&format!("type mismatch: FMU variable \"substeps\" is {ty}")),
            "{err}"
        );
    }
}

/// The archive is unpacked once, into a directory named by its SHA-256.
#[test]
fn the_fmu_is_unpacked_once_into_a_cache_keyed_by_its_hash() {
    let dir = scenario(&["Linear4.fmu"], &plant_scenario("Linear4.fmu", ""));
    for _ in 0..2 {
        let o = check(dir.path());
        assert_exit(&o, 0);
    }
    let bytes = std::fs::read(dir.path().join("models/Linear4.fmu")).unwrap();
    let out = Command::new("sha256sum")
        .arg(dir.path().join("models/Linear4.fmu"))
        .output()
        .unwrap();
    let hash = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    assert_eq!(hash.len(), 64, "{} bytes", bytes.len());
    let entries: Vec<_> = std::fs::read_dir(dir.path().join("fmu-cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries, vec![hash.clone()]);
    assert!(dir
        .path()
        .join("fmu-cache")
        .join(&hash)
        .join("binaries/linux64/Linear4.so")
        .is_file());
}

/// The bouncing ball (the Model Exchange FMU `fmu`, FMI 2.0 or 3.0):
/// dropped from 1 m, kicked by a time event at `t_kick`, 2 s long.
fn ball_scenario(fmu: &str, extra_plant: &str) -> String {
    fmu_plant_scenario(
        "ball",
        fmu,
        &format!("parameters = {{ e = 0.7, t_kick = 1.2345, kick = 2.0 }}\n{extra_plant}"),
        "kind = \"constant\"\nvalue = 0.0",
    )
}

/// The ball's exact height and velocity at `t`: parabolic flights from
/// h = 1, v = 0 under g = 9.81, each impact `v -> -0.7 v` at the exact root
/// of the flight's parabola, the kick `v += 2` at t = 1.2345 s.
fn exact_ball(t: f64) -> (f64, f64) {
    let (g, e, t_kick, kick): (f64, f64, f64, f64) = (9.81, 0.7, 1.2345, 2.0);
    let (mut t0, mut h0, mut v0, mut kicked): (f64, f64, f64, bool) = (0.0, 1.0, 0.0, false);
    loop {
        let land = t0 + (v0 + (v0 * v0 + 2.0 * g * h0).sqrt()) / g;
        let next = if !kicked && t_kick < land {
            t_kick
        } else {
            land
        };
        if t < next {
            let s = t - t0;
            return (h0 + v0 * s - 0.5 * g * s * s, v0 - g * s);
        }
        let s = next - t0;
        let v = v0 - g * s;
        if next == t_kick && !kicked {
            h0 += v0 * s - 0.5 * g * s * s;
            v0 = v + kick;
            kicked = true;
        } else {
            h0 = 0.0;
            v0 = -e * v;
        }
        t0 = next;
    }
}

/// The ball scenario with the ball FMU `fmu`: its time series.
fn run_ball(fmu: &str) -> (tempfile::TempDir, Vec<String>, Vec<Vec<String>>) {
    let dir = scenario(&[fmu], &ball_scenario(fmu, ""));
    let out = run_ok(dir.path());
    let (h, rows) = read_csv(&out.join("timeseries.csv"));
    (dir, h, rows)
}

/// The ball's recorded height and velocity equal [`exact_ball`]'s to 1e-9
/// at every millisecond of the 2 s.
fn assert_exact_ball(h: &[String], rows: &[Vec<String>]) {
    let time = column(h, rows, "time");
    let height = column(h, rows, "ball.x.h");
    let velocity = column(h, rows, "ball.x.v");
    assert_eq!(time.len(), 2001);
    for ((t, hh), v) in time.iter().zip(&height).zip(&velocity) {
        let (want_h, want_v) = exact_ball(*t);
        assert!(
            (hh - want_h).abs() < 1e-9 && (v - want_v).abs() < 1e-9,
            "t = {t}: h {hh} v {v}, exact {want_h} {want_v}"
        );
    }
}

/// Model Exchange: netloop's solver integrates the FMU's states and locates
/// its state events (impacts) and its time event (the kick) inside the
/// step. The flights are parabolas, which RK4 integrates exactly, so the
/// only error is the event location (1e-14 s): the recorded height and
/// velocity equal the exact ones to 1e-9 at every millisecond, through three
/// impacts and the kick (an event handled at the step's end instead would
/// be off by up to a step, ~1e-3 m/s * 4 m/s).
#[test]
fn model_exchange_ball_events_are_located_inside_the_step() {
    let (_dir, h, rows) = run_ball("BouncingBall.fmu");
    let velocity = column(&h, &rows, "ball.x.v");
    assert_eq!(
        column(&h, &rows, "ball.y.h"),
        column(&h, &rows, "ball.x.h"),
        "output h is state h"
    );
    assert_exact_ball(&h, &rows);
    // Impacts at 0.45 s, 1.08 s and 1.85 s (the kick at 1.2345 s, rising,
    // does not turn the velocity).
    let impacts = velocity
        .windows(2)
        .filter(|w| w[0] < 0.0 && w[1] > 0.0)
        .count();
    assert_eq!(
        impacts, 3,
        "impacts seen as sign changes at 1 ms resolution"
    );
}

/// The same FMU simulated by FMPy (CVode with root finding, relative
/// tolerance 1e-10): the trajectories agree to 1e-7 m and m/s at every
/// millisecond. The tolerance is CVode's: a variable-order BDF/Adams error
/// at rtol 1e-10 accumulated over the flights, plus its event location;
/// netloop's trajectory is exact to 1e-9 (the test above).
#[test]
fn model_exchange_plant_agrees_with_fmpy() {
    model_exchange_ball_agrees_with_fmpy("BouncingBall.fmu");
}

fn model_exchange_ball_agrees_with_fmpy(fmu: &str) {
    let (dir, h, rows) = run_ball(fmu);
    let reference = dir.path().join("fmpy.csv");
    fmpy(
        "fmpy_me_reference.py",
        &[
            fmus().join(fmu).as_ref(),
            "2.0".as_ref(),
            "0.001".as_ref(),
            "1e-10".as_ref(),
            r#"{"e": 0.7, "t_kick": 1.2345, "kick": 2.0}"#.as_ref(),
            reference.as_ref(),
        ],
    );
    let time = column(&h, &rows, "time");
    let (rh, rrows) = read_csv(&reference);
    let rtime = column(&rh, &rrows, "time");
    let mut compared = 0;
    for name in ["h", "v"] {
        let ours = column(&h, &rows, &format!("ball.x.{name}"));
        let theirs = column(&rh, &rrows, name);
        for (t, got) in time.iter().zip(&ours) {
            // FMPy also writes rows at its events; take the grid's.
            let Some(j) = rtime.iter().rposition(|s| (s - t).abs() < 1e-9) else {
                continue;
            };
            let want = theirs[j];
            assert!(
                (got - want).abs() < 1e-7,
                "{name} at t = {t}: netloop {got} FMPy {want}"
            );
            compared += 1;
        }
    }
    assert!(compared > 3900, "compared {compared} points");
}

/// FMI 3.0 Model Exchange (BouncingBall3.fmu, the ball of the FMI 2.0 test
/// in FMI 3.0's API): integrated and its events located like the FMI 2.0
/// ball, so equal to the exact answer to 1e-9 and, since the model's C
/// arithmetic is the same and netloop makes the same calls under their FMI
/// 3.0 names, bit-identical to the FMI 2.0 ball's run.
#[test]
fn fmi3_model_exchange_ball_equals_the_exact_answer_and_the_fmi2_ball() {
    let (_dir, h, rows) = run_ball("BouncingBall3.fmu");
    assert_exact_ball(&h, &rows);
    let (_dir2, h2, rows2) = run_ball("BouncingBall.fmu");
    assert_eq!((h, rows), (h2, rows2));
}

/// The FMI 3.0 ball against FMPy, as the FMI 2.0 one (same tolerance, same
/// reason: CVode's error at rtol 1e-10).
#[test]
fn fmi3_model_exchange_plant_agrees_with_fmpy() {
    model_exchange_ball_agrees_with_fmpy("BouncingBall3.fmu");
}

/// Model Exchange mapping errors exit 2 naming the key: a communication
/// step (Co-Simulation only), a Co-Simulation interface the FMU lacks, a
/// Model Exchange FMU as a controller.
#[test]
fn check_rejects_model_exchange_misuse_naming_the_key() {
    let controller = &fmu_controller_scenario("BouncingBall.fmu", 1.0, "", "");
    let cases = [
        (
            ball_scenario("BouncingBall.fmu", "step = \"10ms\""),
            "`loops[0].plant.step`",
            "a Model Exchange FMU is integrated by the run's solver",
        ),
        (
            ball_scenario("BouncingBall.fmu", "interface = \"co_simulation\""),
            "`loops[0].plant.path`",
            "has no Co-Simulation interface, only Model Exchange",
        ),
        (
            controller.to_string(),
            "`loops[0].controller.path`",
            "a controller needs Co-Simulation",
        ),
    ];
    for (text, key, message) in cases {
        let dir = scenario(&["BouncingBall.fmu"], &text);
        let o = check(dir.path());
        assert_exit(&o, 2);
        let err = stderr(&o);
        assert!(err.contains(key) && err.contains(message), "{err}");
    }
}

/// An event-triggered PI controller FMU on a plant whose output stays 0
/// (`b = 0`), over a zero-delay network: `response` and the FMU's gains
/// vary.
fn pi_state_scenario(fmu: &str, response: &str, ki: f64) -> String {
    fmu_controller_scenario(
        fmu,
        0.0,
        &format!("response = \"{response}\""),
        &format!("trigger = \"event\"\nparameters = {{ kp = 3.0, ki = {ki:?} }}"),
    )
}

/// `response = "rollback"` with an FMU controller that can save its state:
/// the answer at `t` is the FMU's output one step (1 ms) later, after which
/// the FMU is back at its state of `t` (fmi2GetFMUstate / fmi2SetFMUstate).
/// The PI law `u = kp e + integral`, `integral += ki e dt`, with e = r = 1
/// from 500 ms on, gives known answers:
/// - `ki = 0`: the look-ahead changes nothing (the reference does not jump
///   within 1 ms of a computation), so every output is byte-identical to
///   the direct answer's;
/// - `ki = 2`: each rollback answer is the direct one plus exactly
///   `ki * r * 1ms = 0.002`, never more: had the state not been restored,
///   the look-ahead's integral would pile up, 0.002 more per computation.
#[test]
fn fmu_controller_rollback_looks_one_step_ahead_and_restores_its_state() {
    for ki in [0.0, 2.0] {
        let direct = scenario(
            &["PiState.fmu"],
            &pi_state_scenario("PiState.fmu", "direct", ki),
        );
        let rollback = scenario(
            &["PiState.fmu"],
            &pi_state_scenario("PiState.fmu", "rollback", ki),
        );
        let (a, b) = (run_ok(direct.path()), run_ok(rollback.path()));
        let (ha, ra) = read_csv(&a.join("timeseries.csv"));
        let (hb, rb) = read_csv(&b.join("timeseries.csv"));
        if ki == 0.0 {
            assert_eq!(
                std::fs::read(a.join("timeseries.csv")).unwrap(),
                std::fs::read(b.join("timeseries.csv")).unwrap(),
                "ki = 0: rollback equals direct"
            );
            let uc = column(&ha, &ra, "pi.uc.u0");
            assert!(
                uc.iter().any(|u| *u == 3.0),
                "the step reached the controller"
            );
            continue;
        }
        let time = column(&ha, &ra, "time");
        let (ua, ub) = (column(&ha, &ra, "pi.uc.u0"), column(&hb, &rb, "pi.uc.u0"));
        let mut ahead = 0;
        for ((t, u_direct), u_rollback) in time.iter().zip(&ua).zip(&ub) {
            // Before the reference steps, e = 0 and both answers are 0.
            let want = if *u_direct >= 3.0 { 0.002 } else { 0.0 };
            assert!(
                (u_rollback - u_direct - want).abs() < 1e-12,
                "t = {t}: rollback {u_rollback}, direct {u_direct}"
            );
            ahead += usize::from(want > 0.0);
        }
        assert!(ahead > 400, "{ahead} rows after the step");
        // The integral grew at the direct rate: 2 * 10ms per computation.
        let last = ua[time.iter().position(|t| *t >= 0.995).unwrap()];
        assert!(
            last > 3.5 && last < 3.0 + 2.0 * 0.5 + 0.03,
            "u at the end {last}"
        );
    }
}

/// FMUs whose state netloop cannot save and restore are refused with
/// `response = "rollback"`, saying why and which response works.
#[test]
fn check_refuses_rollback_for_fmus_without_state() {
    for (fmu, why) in [
        ("PiController.fmu", "does not declare canGetAndSetFMUstate"),
        ("Linear4v3.fmu", "is FMI 3.0"),
    ] {
        let dir = scenario(&[fmu], &pi_state_scenario(fmu, "rollback", 1.0));
        let o = check(dir.path());
        assert_exit(&o, 2);
        let err = stderr(&o);
        assert!(
            err.contains("`loops[0].response`")
                && err.contains(why)
                && err.contains("use response = \"direct\""),
            "{fmu}: {err}"
        );
    }
    // PiState can: check accepts it.
    let dir = scenario(
        &["PiState.fmu"],
        &pi_state_scenario("PiState.fmu", "rollback", 1.0),
    );
    let o = check(dir.path());
    assert_exit(&o, 0);
}

/// `process = "separate"` runs the FMU in a child process with the same
/// calls and values: the results are byte-identical to in-process, for a
/// plant (FMI 2.0 and 3.0) and for a controller answering by rollback
/// (its state saved and restored through the pipe).
#[test]
fn separate_process_gives_the_same_results_bit_for_bit() {
    let cases = [
        (
            "Linear4.fmu",
            plant_scenario("Linear4.fmu", ""),
            plant_scenario("Linear4.fmu", "process = \"separate\""),
        ),
        (
            "Linear4v3.fmu",
            plant_scenario("Linear4v3.fmu", ""),
            plant_scenario("Linear4v3.fmu", "process = \"separate\"\ntimeout = \"20s\""),
        ),
        (
            "PiState.fmu",
            pi_state_scenario("PiState.fmu", "rollback", 2.0),
            pi_state_scenario("PiState.fmu", "rollback", 2.0).replace(
                "trigger = \"event\"",
                "trigger = \"event\"\nprocess = \"separate\"",
            ),
        ),
    ];
    for (fmu, here, apart) in cases {
        assert_ne!(here, apart);
        let a = scenario(&[fmu], &here);
        let b = scenario(&[fmu], &apart);
        let (oa, outa) = run_dir(a.path());
        let (ob, outb) = run_dir(b.path());
        assert_exit(&oa, 0);
        assert_exit(&ob, 0);
        for file in ["timeseries.csv", "packets.csv"] {
            assert_eq!(
                std::fs::read(outa.join(file)).unwrap(),
                std::fs::read(outb.join(file)).unwrap(),
                "{fmu}: {file} differs between in-process and separate"
            );
        }
    }
}

/// Faults: an FMU whose doStep returns fmi2Fatal (in-process), calls
/// abort() or hangs (both in a separate process, the only place they can be
/// contained) stops the run with exit 1 and an error naming the FMU, the
/// call and the simulated time; the results up to there are kept.
#[test]
fn fmu_fatal_abort_and_hang_become_run_errors() {
    let cases = [
        (1, "", "fmi2DoStep returned Fatal at t = 300ms"),
        (
            2,
            "process = \"separate\"",
            "fmi2DoStep returned nothing: the FMU's process was killed by signal 6 (SIGABRT) at t = 300ms",
        ),
        (
            3,
            "process = \"separate\"\ntimeout = \"1s\"",
            "fmi2DoStep returned nothing within the timeout of 1s: the FMU hangs, and its process \
             was killed at t = 300ms",
        ),
    ];
    for (mode, extra, message) in cases {
        let text = plant_scenario("Linear4.fmu", extra).replace(
            "substeps = 10 }",
            &format!("substeps = 10, fail_at = 0.305, fail_mode = {mode} }}"),
        );
        let dir = scenario(&["Linear4.fmu"], &text);
        let (o, out) = run_dir(dir.path());
        let expected = format!("FMU Linear4.fmu: {message}");
        assert_stopped_at_300ms(&o, &out, &expected, &format!("mode {mode}: "));
    }
}

/// `timeout` without a separate process, and a separate Model Exchange
/// FMU, are refused by check naming the key.
#[test]
fn check_rejects_misplaced_process_keys() {
    let cases = [
        (
            "Linear4.fmu",
            plant_scenario("Linear4.fmu", "timeout = \"1s\""),
            "`loops[0].plant.timeout`",
            "a timeout needs process = \"separate\"",
        ),
        (
            "BouncingBall.fmu",
            ball_scenario("BouncingBall.fmu", "process = \"separate\""),
            "`loops[0].plant.process`",
            "process = \"separate\" runs Co-Simulation FMUs",
        ),
    ];
    for (fmu, text, key, message) in cases {
        let dir = scenario(&[fmu], &text);
        let o = check(dir.path());
        assert_exit(&o, 2);
        let err = stderr(&o);
        assert!(err.contains(key) && err.contains(message), "{err}");
    }
}
