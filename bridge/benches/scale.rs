//! `scripts/bench.sh scale`: wall time per simulated second of a WAVE
//! (802.11p OCB) CACC platoon with 2, 4, 8 and 16 vehicles, co-simulated,
//! against ns-3 alone carrying the same traffic (`netloop-server
//! --standalone`): the feed-forward flows vehicle to vehicle every 20 ms and
//! 10 Hz BSMs from every vehicle.
//!
//! In the co-simulation the vehicles' positions drive their nodes, so the
//! bridge syncs every 20 ms period. For the same radio work on both sides the
//! platoon cruises at 20 m/s from its equilibrium spacing (2 m + 0.7 s * 20
//! m/s gap plus a 4 m car: 20 m front to front), so the vehicles move but
//! their relative positions, and so every link's loss, stay those of ns-3
//! alone's static line. The variants alternate in rounds; ratios are medians
//! of per-round ratios. The last line is
//! `scale_overhead_16=<co-simulation / ns-3 alone at 16 vehicles>`.

mod versus_ns3;

use std::fmt::Write as _;

use bridge::config::Scenario;

use versus_ns3::{median, standalone, timed_run};

const SIZES: [usize; 4] = [2, 4, 8, 16];
const SECONDS: u64 = 10;
const ROUNDS: usize = 5;
/// Front to front at equilibrium: 4 m car + 2 m standstill + 0.7 s * 20 m/s.
const SPACING_M: f64 = 20.0;

fn platoon(n: usize) -> String {
    let mut s = format!(
        r#"duration = "{SECONDS}s"
step = "1ms"
[sync]
scheme = "master_slave"
period = "20ms"
[network]
backend = "ns3"
[network.ns3]
kind = "wave"
bsm = {{ nodes = "all", rate = 10.0, size = 200 }}
[network.radio]
tx_power = 20.0
"#
    );
    for i in 0..n {
        let x = (n - 1 - i) as f64 * SPACING_M;
        write!(
            s,
            "[[loops]]\nname = \"v{i}\"\nplant_node = {i}\ncontroller_node = {i}\n"
        )
        .unwrap();
        if i > 0 {
            write!(
                s,
                "predecessor = \"v{}\"\nfeedforward = {{ size = 100 }}\n",
                i - 1
            )
            .unwrap();
        }
        write!(
            s,
            "[loops.plant]\nkind = \"vehicle\"\nx0 = [{x}, 20.0, 0.0]\noutputs = [\"v\"]\n\
             [loops.actuator]\nmin = -5.0\nmax = 3.0\n[loops.sensor]\nperiod = \"20ms\"\n"
        )
        .unwrap();
        if i == 0 {
            s += "[loops.controller]\nkind = \"pid\"\nkp = 1.0\nki = 0.2\n\
                  [loops.reference]\nkind = \"constant\"\nvalue = 20.0\n";
        } else {
            s += "source = \"radar\"\n[loops.controller]\nkind = \"cacc\"\ntime_gap = 0.7\ntrigger = \"time\"\nperiod = \"20ms\"\n";
        }
    }
    s
}

fn cosim(n: usize, out: &std::path::Path) -> f64 {
    let resolved = Scenario::from_toml(&platoon(n)).unwrap().resolve().unwrap();
    let (wall, report) = timed_run(&resolved, out);
    assert_eq!(
        report.summary.sync.syncs,
        SECONDS * 50,
        "a sync every 20 ms period"
    );
    assert!(
        report.summary.delivery_ratio.unwrap() > 0.95,
        "the platoon talks: {:?}",
        report.summary.delivery_ratio
    );
    wall
}

fn ns3_alone(n: usize) -> f64 {
    let positions: Vec<String> = (0..n)
        .map(|i| format!("{},0,0", (n - 1 - i) as f64 * SPACING_M))
        .collect();
    let flows: Vec<String> = (1..n)
        .map(|i| format!("{}>{}:{}:100:20ms", i - 1, i, 9002 + 3 * i))
        .collect();
    standalone([
        "--network=wave".to_string(),
        format!("--nodes={n}"),
        "--txPower=20".into(),
        "--bsmNodes=all".into(),
        "--bsmRate=10".into(),
        "--bsmSize=200".into(),
        format!("--positions={}", positions.join(";")),
        "--standalone".into(),
        format!("--standaloneFlows={}", flows.join(";")),
        format!("--stopTime={SECONDS}s"),
    ])
    .0
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    ns3_alone(2); // warm the page cache
    let mut alone = vec![Vec::new(); SIZES.len()];
    let mut co = vec![Vec::new(); SIZES.len()];
    let mut ratios = vec![Vec::new(); SIZES.len()];
    for _ in 0..ROUNDS {
        for (i, &n) in SIZES.iter().enumerate() {
            let a = ns3_alone(n);
            let c = cosim(n, &dir.path().join(n.to_string()));
            alone[i].push(a / SECONDS as f64);
            co[i].push(c / SECONDS as f64);
            ratios[i].push(c / a);
        }
    }
    println!("# WAVE platoon, {SECONDS} s simulated, {ROUNDS} interleaved rounds; wall seconds per simulated second (medians)");
    println!(
        "{:>8} {:>12} {:>12} {:>8}",
        "vehicles", "ns3_alone", "cosim", "ratio"
    );
    let mut last = 0.0;
    for (i, &n) in SIZES.iter().enumerate() {
        last = median(&mut ratios[i]);
        println!(
            "{n:>8} {:>12.4} {:>12.4} {last:>8.3}",
            median(&mut alone[i]),
            median(&mut co[i])
        );
    }
    println!("scale_overhead_16={last:.3}");
}
