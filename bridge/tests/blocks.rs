//! The block library's seed examples, run as the CLI runs them
//! (`graph_scenario::load`), against independent answers.

mod cruise_hand_loop;

use std::path::Path;

use bridge::graph_scenario;
use controlsim::graph::Graph;

fn example(name: &str) -> graph_scenario::LoadedGraph {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name);
    graph_scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn value(g: &Graph, component: &str, port: &str) -> f64 {
    g.value(component, port).unwrap()[0]
}

/// The cruise-control diagram is bit for bit the hand-written loop of the
/// same arithmetic, over all 100 000 steps, and settles where the
/// integral action puts it: v = 20 m/s and F = b v = 400 N.
#[test]
fn cruise_control_diagram_is_the_hand_written_loop_bit_for_bit() {
    let mut loaded = example("cruise_control_blocks.toml");
    let end = loaded.end_step;
    assert_eq!(end, 100_000);
    let mut hand = Vec::with_capacity(end as usize);
    cruise_hand_loop::run(end, |_, v, f| hand.push((v, f)));
    let mut k = 0usize;
    let mut peak = (0.0, 0.0);
    loaded
        .graph
        .run_to(end, &mut |g: &Graph| {
            let (v, f) = (value(g, "vehicle", "y"), value(g, "force", "y"));
            assert_eq!(
                (v.to_bits(), f.to_bits()),
                (hand[k].0.to_bits(), hand[k].1.to_bits()),
                "boundary {k}: diagram ({v}, {f}), hand ({}, {})",
                hand[k].0,
                hand[k].1
            );
            if v > peak.1 {
                peak = (k as f64 * 0.01, v);
            }
            k += 1;
        })
        .unwrap();
    assert_eq!(k, 100_000);
    let (v, f) = hand[99_999];
    assert!((v - 20.0).abs() < 0.05, "v(1000 s) = {v}");
    assert!((f - 400.0).abs() < 2.0, "F(1000 s) = {f}");
    // The lightly damped overshoot of the comment.
    assert!(
        (peak.1 - 25.4).abs() < 0.1 && (peak.0 - 184.0).abs() < 2.0,
        "{peak:?}"
    );
}

/// Run unobserved (the bench's way: between the PID's samples a boundary
/// is only integrated, `controlsim::graph::demand`), the diagram stops in
/// the state the fully observed run reaches, bit for bit, and its last
/// boundary is the hand loop's, for stretches ending at even and odd
/// boundaries.
#[test]
fn cruise_control_diagram_unobserved_ends_where_the_hand_written_loop_does() {
    let mut observed = example("cruise_control_blocks.toml");
    let mut unobserved = example("cruise_control_blocks.toml");
    let mut hand = Vec::new();
    cruise_hand_loop::run(20_000, |_, v, f| hand.push((v, f)));
    for k1 in [1u64, 2, 7, 10, 11, 1_000, 1_001, 12_345, 20_000] {
        observed.graph.run_to(k1, &mut |_: &Graph| {}).unwrap();
        unobserved
            .graph
            .run_to(k1, &mut controlsim::graph::Unobserved)
            .unwrap();
        assert!(
            observed.graph.snapshot() == unobserved.graph.snapshot(),
            "k1 = {k1}"
        );
        let g = &unobserved.graph;
        let (v, f) = hand[k1 as usize - 1];
        assert_eq!(
            (
                value(g, "vehicle", "y").to_bits(),
                value(g, "force", "y").to_bits()
            ),
            (v.to_bits(), f.to_bits()),
            "k1 = {k1}"
        );
    }
}

/// Every row of the ABS curve is the two-segment mu(s) at that row's slip,
/// and the slip climbs by 0.001 a step from 0 to 1.
#[test]
fn abs_slip_curve_is_the_two_segment_law() {
    let mut loaded = example("abs_slip_blocks.toml");
    let (mu_h, mu_g, s0) = (0.8, 0.6, 0.2);
    let law = |s: f64| {
        if s <= s0 {
            mu_h / s0 * s
        } else {
            mu_h - (mu_h - mu_g) / (1.0 - s0) * (s - s0)
        }
    };
    let mut rows = Vec::new();
    let end = loaded.end_step;
    loaded
        .graph
        .run_to(end, &mut |g: &Graph| {
            rows.push((value(g, "slip", "y"), value(g, "mu", "y")));
        })
        .unwrap();
    loaded.graph.evaluate().unwrap();
    rows.push((
        value(&loaded.graph, "slip", "y"),
        value(&loaded.graph, "mu", "y"),
    ));
    assert_eq!(rows.len(), 1001);
    for (k, &(s, mu)) in rows.iter().enumerate() {
        assert!((s - 0.001 * k as f64).abs() < 1e-12, "slip at {k}: {s}");
        assert!(
            (mu - law(s)).abs() < 1e-12,
            "mu({s}) = {mu}, law {}",
            law(s)
        );
    }
    assert_eq!(rows[0].1, 0.0);
    assert!((rows[100].1 - 0.4).abs() < 1e-12);
    assert!((rows[600].1 - 0.7).abs() < 1e-12);
    assert!((rows[1000].1 - 0.6).abs() < 1e-12);
    // The peak is at the corner.
    let peak = rows.iter().map(|r| r.1).fold(0.0, f64::max);
    assert!((peak - 0.8).abs() < 1e-12, "{peak}");
}

/// Impact times (first boundary below the floor) and apexes of a run.
fn bounces(step: &str) -> (Vec<f64>, Vec<f64>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/bouncing_ball_blocks.toml");
    let set = bridge::scenario_file::Override::parse_set(&format!("step=\"{step}\"")).unwrap();
    let mut loaded = graph_scenario::load(&path, &[set]).unwrap();
    let end = loaded.end_step;
    let h = loaded.graph.step_size().as_secs_f64();
    let (mut impacts, mut apexes) = (Vec::new(), Vec::new());
    let (mut below, mut top) = (false, 0.0f64);
    let mut k = 0u64;
    loaded
        .graph
        .run_to(end, &mut |g: &Graph| {
            let x = value(g, "position", "y");
            let now = value(g, "below", "y") != 0.0;
            top = top.max(x);
            if now && !below {
                impacts.push(k as f64 * h);
                apexes.push(top);
                top = 0.0;
            }
            below = now;
            k += 1;
        })
        .unwrap();
    (impacts, apexes)
}

/// The ball against the analytic one: impacts late by less than 0.2 s and
/// apexes high by less than 6 % over the first four bounces at h = 10 ms,
/// and both errors first order in h (ten times smaller at 1 ms).
#[test]
fn bouncing_ball_diagram_against_the_analytic_ball() {
    let (g, e, x0, v0): (f64, f64, f64, f64) = (9.81, 0.8, 10.0, 15.0);
    let v1 = (v0 * v0 + 2.0 * g * x0).sqrt();
    let mut t = vec![(v0 + v1) / g];
    let mut apex = vec![x0 + v0 * v0 / (2.0 * g)];
    for n in 1..4 {
        t.push(t[n - 1] + 2.0 * e.powi(n as i32) * v1 / g);
        apex.push((e.powi(n as i32) * v1).powi(2) / (2.0 * g));
    }
    let (t10, a10) = bounces("10ms");
    let (t1, a1) = bounces("1ms");
    assert!(t10.len() >= 4 && t1.len() >= 4, "{t10:?} {t1:?}");
    for n in 0..4 {
        let late10 = t10[n] - t[n];
        let late1 = t1[n] - t[n];
        assert!(
            (0.0..0.2).contains(&late10),
            "impact {n}: {} vs {}",
            t10[n],
            t[n]
        );
        let high10 = a10[n] / apex[n] - 1.0;
        let high1 = a1[n] / apex[n] - 1.0;
        assert!(
            (0.0..0.06).contains(&high10),
            "apex {n}: {} vs {}",
            a10[n],
            apex[n]
        );
        // First order: ten times the step, about ten times the error.
        assert!(
            late1 < late10 / 7.0 + 1e-3,
            "impact {n}: {late1} at 1 ms, {late10} at 10 ms"
        );
        assert!(
            high1 < high10 / 7.0 + 1e-4,
            "apex {n}: {high1} at 1 ms, {high10} at 10 ms"
        );
    }
    assert!((t10[0] - 3.63).abs() < 1e-9);
}

/// The cruise-control loop with its PID as a subsystem (which uses a
/// subsystem of its own: two levels) is the inline diagram bit for bit at
/// every boundary: the expansion makes the same graph.
#[test]
fn a_subsystem_nested_two_levels_is_the_inline_diagram_bit_for_bit() {
    let mut inline = example("cruise_control_blocks.toml");
    let mut nested = example("cruise_control_subsystem.toml");
    let names: Vec<&str> = nested
        .scenario
        .components
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert!(names.contains(&"pid/integral/s_sum"), "{names:?}");
    assert!(names.contains(&"pid/force"), "{names:?}");
    let end = inline.end_step;
    assert_eq!(nested.end_step, end);
    let mut expected = Vec::with_capacity(end as usize);
    inline
        .graph
        .run_to(end, &mut |g: &Graph| {
            expected.push((
                value(g, "vehicle", "y"),
                value(g, "force", "y"),
                value(g, "s_sum", "y"),
            ))
        })
        .unwrap();
    let mut k = 0usize;
    nested
        .graph
        .run_to(end, &mut |g: &Graph| {
            let got = (
                value(g, "vehicle", "y"),
                value(g, "pid/force", "y"),
                value(g, "pid/integral/s_sum", "y"),
            );
            let want = expected[k];
            assert_eq!(
                (got.0.to_bits(), got.1.to_bits(), got.2.to_bits()),
                (want.0.to_bits(), want.1.to_bits(), want.2.to_bits()),
                "boundary {k}: subsystem {got:?}, inline {want:?}"
            );
            k += 1;
        })
        .unwrap();
    assert_eq!(k, end as usize);
    assert!((expected[end as usize - 1].0 - 20.0).abs() < 0.05);
}
