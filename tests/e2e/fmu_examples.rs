//! The FMU examples (examples/fmu/) over the real ns-3 server, each against
//! the result its file's comment states, and master-slave replay over ns-3
//! with an FMU plant against the same plant written as an equation model.
//!
//! The FMUs are built once per test run by examples/fmu/build.sh (from the
//! sources in tests/fmu/: a C compiler and a Python with fmpy and pythonfmu,
//! which scripts/setup.sh installs into .venv), into the target directory,
//! never into the source tree.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::{assert_success, server_binary};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The examples' FMUs, built once per test run by examples/fmu/build.sh.
fn models() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("example-fmus");
        test_support::fmu::build("examples/fmu/build.sh", &dir);
        dir
    })
}

/// `text` as `name.toml` in `dir`, beside a copy of the built FMUs in
/// `models/` (the examples' relative path), pointed at this worktree's
/// ns-3 server; run with `args`; the output directory.
fn run_in(dir: &Path, name: &str, text: &str, args: &[&str]) -> PathBuf {
    let models_dir = dir.join("models");
    if !models_dir.exists() {
        std::fs::create_dir(&models_dir).unwrap();
        for fmu in ["Linear4.fmu", "BouncingBall.fmu", "PiController.fmu"] {
            std::fs::copy(models().join(fmu), models_dir.join(fmu)).unwrap();
        }
    }
    let text = format!(
        "{text}\n[network.server]\nbinary = \"{}\"\n",
        server_binary().display()
    );
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, text).unwrap();
    let out = dir.join(format!("out-{name}"));
    let result = Command::new(env!("CARGO_BIN_EXE_netloop"))
        .args(["-q", "run"])
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .args(args)
        .env("NETLOOP_FMU_CACHE", dir.join("fmu-cache"))
        .env("NETLOOP_PYTHON", test_support::fmu::python())
        .output()
        .unwrap();
    assert_success(&result, name);
    out
}

fn example(file: &str) -> String {
    std::fs::read_to_string(root().join("examples/fmu").join(file)).unwrap()
}

/// `timeseries.csv` as a header and rows of numbers.
fn timeseries(out: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let mut lines = text.lines();
    let header = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    (header, rows)
}

fn column(header: &[String], rows: &[Vec<f64>], name: &str) -> Vec<f64> {
    let i = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    rows.iter().map(|r| r[i]).collect()
}

fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&bytes(&out.join("summary.json"))).unwrap()
}

/// The run was complete and every sample and answer crossed the network.
fn assert_complete_and_delivered(out: &Path, samples: u64) {
    let s = summary(out);
    assert_eq!(s["complete"], true);
    let accepted = s["totals"]["accepted"].as_u64().unwrap();
    assert!(accepted >= 2 * samples - 2, "{accepted} accepted: {s}");
}

/// examples/fmu/linear4_cosim_p2p.toml: the Co-Simulation FMU plant peaks
/// at 1.042 and stays within 0.02 of 1 from 6 s on; ns-3 equals the builtin
/// channel bit for bit (one packet per direction per period).
#[test]
fn cosim_fmu_plant_example_over_ns3() {
    let dir = tempfile::tempdir().unwrap();
    let text = example("linear4_cosim_p2p.toml");
    let ns3 = run_in(dir.path(), "linear4", &text, &[]);
    let builtin = run_in(dir.path(), "linear4", &text, &["--network", "builtin"]);
    assert_complete_and_delivered(&ns3, 1000);
    let (h, rows) = timeseries(&ns3);
    let time = column(&h, &rows, "time");
    let p1 = column(&h, &rows, "masses.y.p1");
    assert_eq!(time.len(), 10_001);
    let peak = p1.iter().cloned().fold(f64::MIN, f64::max);
    assert!((peak - 1.042).abs() < 5e-4, "peak {peak}");
    for (t, p) in time.iter().zip(&p1).filter(|(t, _)| **t >= 6.0) {
        assert!((p - 1.0).abs() < 0.02, "p1({t}) = {p}");
    }
    assert_eq!(
        bytes(&ns3.join("timeseries.csv")),
        bytes(&builtin.join("timeseries.csv"))
    );
    assert_eq!(
        bytes(&ns3.join("packets.csv")),
        bytes(&builtin.join("packets.csv"))
    );
}

/// examples/fmu/ball_me_p2p.toml: the Model Exchange FMU ball bounces once
/// at 0.733 s (the impact located inside the step: h = 0 there to round-off,
/// and the speed leaves at 0.8 times the impact speed), then is held at
/// 1 m to 0.01 from 3.5 s on.
#[test]
fn model_exchange_fmu_plant_example_over_ns3() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), "ball", &example("ball_me_p2p.toml"), &[]);
    assert_complete_and_delivered(&out, 500);
    let (h, rows) = timeseries(&out);
    let time = column(&h, &rows, "time");
    let height = column(&h, &rows, "ball.x.h");
    let v = column(&h, &rows, "ball.x.v");
    // An impact turns the velocity from falling to rising between two
    // rows, with a jump no smooth flight makes in 1 ms.
    let impacts: Vec<usize> = (1..v.len())
        .filter(|&i| v[i - 1] < -0.5 && v[i] > 0.5)
        .collect();
    assert_eq!(impacts.len(), 1, "impacts at rows {impacts:?}");
    let i = impacts[0];
    assert!(
        (time[i] - 0.734).abs() < 1e-9,
        "first row after the impact: {}",
        time[i]
    );
    assert!(
        height.iter().all(|&x| x >= -1e-12),
        "the ball went below the floor"
    );
    for (t, x) in time.iter().zip(&height).filter(|(t, _)| **t >= 3.5) {
        assert!((x - 1.0).abs() < 0.01, "h({t}) = {x}");
    }
}

/// examples/fmu/python_pi_p2p.toml: the pythonfmu PI controller,
/// event-triggered on the remote node, tracks 1 - exp(-3 (t - 0.1)) (its
/// zero cancels the plant's pole) within 0.02 at every step and reaches 1
/// to 1e-3 by 3 s; ns-3 equals the builtin channel bit for bit.
#[test]
fn python_controller_example_over_ns3() {
    let dir = tempfile::tempdir().unwrap();
    let text = example("python_pi_p2p.toml");
    let ns3 = run_in(dir.path(), "python_pi", &text, &[]);
    let builtin = run_in(dir.path(), "python_pi", &text, &["--network", "builtin"]);
    assert_complete_and_delivered(&ns3, 250);
    let (h, rows) = timeseries(&ns3);
    let time = column(&h, &rows, "time");
    let y = column(&h, &rows, "lag.y.y0");
    assert_eq!(time.len(), 5001);
    for (t, y) in time.iter().zip(&y) {
        let ideal = if *t < 0.1 {
            0.0
        } else {
            1.0 - (-3.0 * (t - 0.1)).exp()
        };
        assert!((y - ideal).abs() < 0.02, "y({t}) = {y}, ideal {ideal}");
        if *t >= 3.0 {
            assert!((y - 1.0).abs() < 1e-3, "y({t}) = {y}");
        }
    }
    assert_eq!(
        bytes(&ns3.join("timeseries.csv")),
        bytes(&builtin.join("timeseries.csv"))
    );
}

/// The ball of examples/fmu/ball_me_p2p.toml written in the equation
/// language, with the FMU's arithmetic: `der(v) = f - g` and the impact
/// `v = -e v` at `h = 0` (the FMU's event indicator is `h`).
const BALL_EQUATIONS: &str = "\
parameter g = 9.81;
parameter e = 0.8;
input f;
state h(start = 2);
state v(start = 0);
der(h) = v;
der(v) = f - g;
output h;
when h < 0 then h = 0, v = -e * pre(v);
";

/// Master-slave replay over ns-3 with a Model Exchange FMU plant gives the
/// trajectory of the same plant as an equation model bit for bit: netloop's
/// RK4 integrates both at the same steps, split at the same arrivals; both
/// compute the same IEEE operations (`v`, `f - g`, `-e v`), and the impact
/// is located by the same root finder on the same guard (`h`). Packets are
/// byte-identical too. Also over an 80 kbps link, where each frame takes
/// 9.4 ms to send and arrives 11.4 ms after it left, in the next period.
#[test]
fn master_slave_replay_with_fmu_plant_equals_equation_plant() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ball.eq"), BALL_EQUATIONS).unwrap();
    let fmu_text = example("ball_me_p2p.toml");
    let start = fmu_text.find("[loops.plant]").unwrap();
    let end = fmu_text.find("[loops.sensor]").unwrap();
    let eq_text = format!(
        "{}[loops.plant]\nkind = \"equations\"\nsource = \"ball.eq\"\n\n{}",
        &fmu_text[..start],
        &fmu_text[end..]
    );
    for rate in ["1Mbps", "80kbps"] {
        let set = format!("network.ns3.data_rate=\"{rate}\"");
        let args = ["--set", set.as_str()];
        let fmu = run_in(dir.path(), &format!("fmu-{}", rate.len()), &fmu_text, &args);
        let eq = run_in(dir.path(), &format!("eq-{}", rate.len()), &eq_text, &args);
        assert_eq!(summary(&fmu)["complete"], true);
        let fmu_series = bytes(&fmu.join("timeseries.csv"));
        assert_eq!(
            String::from_utf8_lossy(&fmu_series),
            String::from_utf8_lossy(&bytes(&eq.join("timeseries.csv"))),
            "{rate}"
        );
        assert_eq!(
            bytes(&fmu.join("packets.csv")),
            bytes(&eq.join("packets.csv")),
            "{rate}"
        );
        let (h, rows) = timeseries(&fmu);
        let v = column(&h, &rows, "ball.x.v");
        assert!(
            v.windows(2).any(|w| w[0] < -0.5 && w[1] > 0.5),
            "{rate}: no impact in the compared run"
        );
    }
}
