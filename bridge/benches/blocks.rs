//! `scripts/bench.sh blocks`: examples/cruise_control_blocks.toml (13
//! blocks, 1000 s at h = 10 ms) run by the graph engine, against the
//! hand-written Rust loop of the same arithmetic
//! (tests/cruise_hand_loop), which it matches bit for bit (tests/blocks.rs).
//! Prints the best of several runs of each and `blocks_ratio` = diagram /
//! hand (the goal: <= 1.5).
//!
//! The diagram runs as a benchmark's graph does (`Graph::run_to` with
//! `Unobserved`, as the `graph` bench): read at the end, so between the
//! PID's samples a boundary is only integrated; it must end on the hand
//! loop's last speed, bit for bit (asserted). `blocks_observed_ns_per_step`
//! is the same run with an observer reading every boundary (every boundary
//! evaluated in full), for comparison.

#[path = "../tests/cruise_hand_loop/mod.rs"]
mod cruise_hand_loop;

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use controlsim::graph::{Graph, Unobserved};

fn best_of(runs: usize, mut f: impl FnMut() -> f64) -> f64 {
    (0..runs).map(|_| f()).fold(f64::INFINITY, f64::min)
}

/// One variant alone, once, for 10 000 steps, for instruction counts:
/// `BLOCKS_BENCH_ONLY=diagram valgrind --tool=callgrind
/// target/release/deps/blocks-<hash>` (or `hand`; see BENCHMARKS.md).
fn run_only(which: &str, path: &Path) {
    let steps = 10_000u64;
    match which {
        "diagram" => {
            let mut loaded = bridge::graph_scenario::load(path, &[]).unwrap();
            loaded.graph.run_to(steps, &mut Unobserved).unwrap();
            black_box(loaded.graph.value("vehicle", "y"));
        }
        "observed" => {
            let mut loaded = bridge::graph_scenario::load(path, &[]).unwrap();
            loaded.graph.run_to(steps, &mut |_: &Graph| {}).unwrap();
            black_box(loaded.graph.value("vehicle", "y"));
        }
        "hand" => {
            let mut last = 0.0;
            cruise_hand_loop::run(steps, |_, v, _| last = v);
            black_box(last);
        }
        other => panic!("BLOCKS_BENCH_ONLY={other}: diagram, observed or hand"),
    }
}

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cruise_control_blocks.toml");
    if let Ok(which) = std::env::var("BLOCKS_BENCH_ONLY") {
        run_only(&which, &path);
        return;
    }
    let steps = 100_000u64;
    let mut hand_last = 0.0f64;
    cruise_hand_loop::run(steps, |_, v, _| hand_last = v);
    let diagram = best_of(7, || {
        let mut loaded = bridge::graph_scenario::load(&path, &[]).unwrap();
        let start = Instant::now();
        loaded.graph.run_to(steps, &mut Unobserved).unwrap();
        let s = start.elapsed().as_secs_f64();
        let v = black_box(loaded.graph.value("vehicle", "y")).unwrap()[0];
        assert_eq!(
            v.to_bits(),
            hand_last.to_bits(),
            "diagram {v}, hand {hand_last}"
        );
        s
    });
    let observed = best_of(7, || {
        let mut loaded = bridge::graph_scenario::load(&path, &[]).unwrap();
        let start = Instant::now();
        loaded.graph.run_to(steps, &mut |_: &Graph| {}).unwrap();
        let s = start.elapsed().as_secs_f64();
        black_box(loaded.graph.value("vehicle", "y"));
        s
    });
    let hand = best_of(7, || {
        let start = Instant::now();
        let mut last = 0.0;
        cruise_hand_loop::run(steps, |_, v, _| last = v);
        let s = start.elapsed().as_secs_f64();
        black_box(last);
        s
    });
    let per = |s: f64| s * 1e9 / steps as f64;
    println!("blocks_diagram_ns_per_step={:.1}", per(diagram));
    println!("blocks_observed_ns_per_step={:.1}", per(observed));
    println!("blocks_hand_ns_per_step={:.1}", per(hand));
    println!("blocks_ratio={:.3}", diagram / hand);
}
