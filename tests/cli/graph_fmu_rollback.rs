//! `response = "rollback"` for a graph controller component that is an FMU
//! (issue 11 item 6; docs/cosimulation.md, "What a solver-integrated
//! controller sends"): the PI controller FMU that can save its state
//! (tests/fmu/pi_state_fmi2.c, built by tests/fmu/build.sh) answering by
//! rollback in a graph gives the bits of the same FMU answering by rollback
//! in the `[[loops]]` form, whose rollback has its own known-answer test
//! (tests/cli/fmu.rs), and its answers are the hand-computed ones.

use std::path::{Path, PathBuf};

use crate::fmu::{column, fmus};
use crate::graph_flows::scheme_cases;
use crate::support::{assert_exit, netloop, packets, read_csv, series};

/// The header shared by both forms: 1 s at 1 ms, master-slave every
/// 10 ms, a 2.752 ms channel (arrivals inside a step).
const HEADER: &str = r#"duration = "1s"
step = "1ms"
seed = 1
[sync]
scheme = "master_slave"
period = "10ms"
[network]
backend = "builtin"
[network.builtin]
delay = { kind = "constant", value = "2752us" }
"#;

/// The plant `x' = -x + u, y = x` on node 0, its sensor every 10 ms, the
/// event-triggered PI FMU (`kp = 3`, `ki = 2`) on node 1 following a unit
/// step at 100 ms and answering by rollback.
const LOOPS: &str = r#"
[[loops]]
name = "pi"
plant_node = 0
controller_node = 1
response = "rollback"
[loops.plant]
kind = "state_space"
a = [[-1.0]]
b = [[1.0]]
c = [[1.0]]
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "fmu"
path = "models/PiState.fmu"
trigger = "event"
parameters = { kp = 3.0, ki = 2.0 }
[loops.reference]
kind = "step"
at = "100ms"
final = 1.0
"#;

/// [`LOOPS`] as a graph: plant, sensor and actuator on node 0, the FMU
/// controller component on node 1, an uplink and a downlink flow.
const GRAPH: &str = r#"
[[components]]
name = "plant"
node = 0
[components.plant]
kind = "state_space"
a = [[-1.0]]
b = [[1.0]]
c = [[1.0]]

[[components]]
name = "sensor"
node = 0
[components.sensor]
period = "10ms"

[[components]]
name = "pi"
node = 1
response = "rollback"
[components.controller]
kind = "fmu"
path = "models/PiState.fmu"
trigger = "event"
parameters = { kp = 3.0, ki = 2.0 }
[components.reference]
kind = "step"
at = "100ms"
final = 1.0

[[components]]
name = "actuator"
node = 0
[components.actuator]

[[connections]]
from = "plant.y"
to = "sensor.y"

[[connections]]
from = "sensor.y"
to = "pi.measurement"
name = "uplink"

[[connections]]
from = "pi.u"
to = "actuator.u"
name = "downlink"

[[connections]]
from = "actuator.u"
to = "plant.u"
"#;

/// A folder with `models/PiState.fmu`, `loops.toml` and `graph.toml`.
fn folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("models")).unwrap();
    std::fs::copy(
        fmus().join("PiState.fmu"),
        dir.path().join("models/PiState.fmu"),
    )
    .unwrap();
    std::fs::write(dir.path().join("loops.toml"), format!("{HEADER}{LOOPS}")).unwrap();
    std::fs::write(dir.path().join("graph.toml"), format!("{HEADER}{GRAPH}")).unwrap();
    dir
}

/// `netloop run dir/file --out dir/out` with `--set` overrides; must
/// succeed.
fn run_in(dir: &Path, file: &str, out: &str, sets: &[&str]) -> PathBuf {
    let out = dir.join(out);
    let mut c = netloop();
    c.env("NETLOOP_FMU_CACHE", dir.join("fmu-cache"))
        .args(["-q", "run"])
        .arg(dir.join(file))
        .arg("--out")
        .arg(&out);
    for s in sets {
        c.args(["--set", s]);
    }
    assert_exit(&c.output().unwrap(), 0);
    out
}

/// The graph form of an FMU controller loop answering by rollback equals
/// the `[[loops]]` form bit for bit under every scheme, with a computation
/// delay and over a random, lossy channel: plant state, the controller's
/// answers, the applied input and every packet row. The graph's answers
/// differ from its direct answers (the key is not ignored).
#[test]
fn an_fmu_controller_answering_by_rollback_in_a_graph_equals_the_loop_form() {
    let dir = folder();
    let cases = scheme_cases();
    for (name, sets) in &cases {
        let l = run_in(dir.path(), "loops.toml", &format!("{name}-loops"), sets);
        let g = run_in(dir.path(), "graph.toml", &format!("{name}-graph"), sets);
        for (a, b) in [
            ("pi.x.x0", "plant.x.x0"),
            ("pi.uc.u0", "pi.u"),
            ("pi.u.u0", "actuator.u"),
        ] {
            assert_eq!(series(&l, a), series(&g, b), "{name}: {a} vs {b}");
        }
        let down = packets(&l, "pi:downlink");
        assert!(down.len() >= 70, "{name}: {} downlink rows", down.len());
        assert_eq!(packets(&l, "pi:uplink"), packets(&g, "uplink"), "{name}");
        assert_eq!(down, packets(&g, "downlink"), "{name}");
        let x = series(&g, "plant.x.x0");
        let last: f64 = x.last().unwrap().parse().unwrap();
        assert!(last > 0.5, "{name}: the loop follows the step ({last})");
    }
    let direct = run_in(
        dir.path(),
        "graph.toml",
        "direct",
        &["components[2].response=\"direct\""],
    );
    let rollback = dir.path().join("master_slave-graph");
    assert_ne!(series(&direct, "pi.u"), series(&rollback, "pi.u"));
}

/// With the plant cut off (`b = 0`, so `y = 0` and `e = r`), the PI law
/// `u = kp e + integral`, `integral += ki e dt` has known answers: each
/// direct answer after the step is `3 + 2 * 0.01 n` (n computations 10 ms
/// apart), and each rollback answer is the direct one plus exactly
/// `ki * r * 1 ms = 0.002`, never more: the FMU is set back to its state at
/// the arrival after looking one step ahead (had it not been, the integral
/// would pile up 0.002 more per answer).
#[test]
fn a_graph_fmu_controller_rolls_back_to_its_state_after_each_answer() {
    let dir = folder();
    let open = "components[0].plant.b=[[0.0]]";
    let rollback = run_in(dir.path(), "graph.toml", "rollback", &[open]);
    let direct = run_in(
        dir.path(),
        "graph.toml",
        "direct",
        &[open, "components[2].response=\"direct\""],
    );
    let (hr, rr) = read_csv(&rollback.join("timeseries.csv"));
    let (hd, rd) = read_csv(&direct.join("timeseries.csv"));
    let time = column(&hd, &rd, "time");
    let (ud, ur) = (column(&hd, &rd, "pi.u"), column(&hr, &rr, "pi.u"));
    let mut ahead = 0;
    for ((t, u_direct), u_rollback) in time.iter().zip(&ud).zip(&ur) {
        let want = if *u_direct >= 3.0 { 0.002 } else { 0.0 };
        assert!(
            (u_rollback - u_direct - want).abs() < 1e-12,
            "t = {t}: rollback {u_rollback}, direct {u_direct}"
        );
        ahead += usize::from(want > 0.0);
    }
    assert!(ahead > 850, "{ahead} rows after the step");
    // The sample of 990 ms arrives at 992.752 ms: the 90th computation
    // with e = 1 (the first at 102.752 ms), 3 + 2 * 0.01 * 90.
    let last = *ud.last().unwrap();
    assert!((last - 4.8).abs() < 1e-12, "direct u at the end {last}");
    assert!((ur.last().unwrap() - 4.802).abs() < 1e-12);
}
