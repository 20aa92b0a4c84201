//! Known-answer tests of the blocks: each block in a small graph, its
//! output against its definition (step responses, switching points,
//! interpolation and extrapolation, rate limits, sample instants).

use netloop_time::SimTime;

use super::{build, BlockConfig, BlockContext};
use crate::graph::{Graph, GraphBuilder};
use crate::key_path::KeyPath;
use crate::solver::SolverKind;
use crate::time::StepSize;

/// A graph of `blocks` (name, TOML of the block table) joined by
/// `connections`, on a step of `step_ms`.
pub(super) fn graph(step_ms: u64, blocks: &[(&str, &str)], connections: &[(&str, &str)]) -> Graph {
    let step = SimTime::from_millis(step_ms);
    let mut b = GraphBuilder::new(step, SolverKind::Rk4);
    for (i, (name, text)) in blocks.iter().enumerate() {
        let c: BlockConfig = toml::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let cx = BlockContext {
            step: StepSize::new(step).unwrap(),
            seed: 1,
            stream: i as u64,
        };
        let key = KeyPath::key("components").at(i);
        b.component_keyed(
            key.clone(),
            name,
            build(&key.child("block"), &c, cx).unwrap(),
        );
    }
    for (from, to) in connections {
        b.connect(from, to);
    }
    b.build().unwrap()
}

/// `component.port` (all elements) at boundaries `0..=steps`.
pub(super) fn trace(g: &mut Graph, probe: &str, steps: u64) -> Vec<Vec<f64>> {
    let (c, p) = probe.split_once('.').unwrap();
    let mut out = Vec::new();
    g.run_to(steps, &mut |g: &Graph| {
        out.push(g.value(c, p).unwrap().to_vec())
    })
    .unwrap();
    g.evaluate().unwrap();
    out.push(g.value(c, p).unwrap().to_vec());
    out
}

pub(super) fn scalar(t: Vec<Vec<f64>>) -> Vec<f64> {
    t.into_iter().map(|v| v[0]).collect()
}

pub(super) fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn relay_switches_at_its_points_and_holds_in_between() {
    // u rises as t to 1 s, then falls as 2 - t; on at 0.55, off at 0.25.
    let mut g = graph(
        100,
        &[
            (
                "u",
                r#"kind = "expr"
                     expr = "if time < 1 then time else 2 - time"
                     inputs = 0"#,
            ),
            (
                "r",
                r#"kind = "relay"
                     on_point = 0.55
                     off_point = 0.25
                     on_value = 5.0
                     off_value = -5.0"#,
            ),
        ],
        &[("u.y", "r.u")],
    );
    let y = scalar(trace(&mut g, "r.y", 20));
    for (k, &v) in y.iter().enumerate() {
        let on = (6..18).contains(&k);
        assert_eq!(v, if on { 5.0 } else { -5.0 }, "k = {k}");
    }
}

#[test]
fn static_nonlinearities_follow_their_definitions() {
    let u = r#"kind = "constant"
               value = [-2.0, -0.5, 0.2, 0.74, 3.0]"#;
    let cases: &[(&str, [f64; 5])] = &[
        (
            r#"kind = "saturation"
            lower = -1.0
            upper = 0.5
            width = 5"#,
            [-1.0, -0.5, 0.2, 0.5, 0.5],
        ),
        (
            r#"kind = "dead_zone"
            start = -1.0
            end = 0.5
            width = 5"#,
            [-1.0, 0.0, 0.0, 0.24, 2.5],
        ),
        (
            r#"kind = "quantizer"
            interval = 0.5
            width = 5"#,
            [-2.0, -0.5, 0.0, 0.5, 3.0],
        ),
        (
            r#"kind = "friction"
            coulomb = 1.0
            viscous = 2.0
            width = 5"#,
            [-5.0, -2.0, 1.4, 2.48, 7.0],
        ),
    ];
    for (block, want) in cases {
        let mut g = graph(10, &[("u", u), ("b", block)], &[("u.y", "b.u")]);
        let y = trace(&mut g, "b.y", 1).pop().unwrap();
        for (a, b) in y.iter().zip(want) {
            assert!(close(*a, *b, 1e-12), "{block}: {y:?} vs {want:?}");
        }
    }
}

#[test]
fn lookup_tables_interpolate_and_extrapolate_as_documented() {
    let u = r#"kind = "constant"
               value = [-1.0, 0.5, 2.5]"#;
    for (extrapolation, want) in [("linear", [-10.0, 5.0, 55.0]), ("clip", [0.0, 5.0, 40.0])] {
        let t = format!(
            "kind = \"lookup_1d\"\nbreakpoints = [0.0, 1.0, 2.0]\ntable = [0.0, 10.0, 40.0]\nextrapolation = \"{extrapolation}\"\nwidth = 3"
        );
        let mut g = graph(10, &[("u", u), ("t", &t)], &[("u.y", "t.u")]);
        assert_eq!(
            trace(&mut g, "t.y", 1).pop().unwrap(),
            want,
            "{extrapolation}"
        );
    }
    let a = r#"kind = "constant"
               value = [0.5, 2.0, 0.25]"#;
    let b = r#"kind = "constant"
               value = [0.5, 0.0, 1.0]"#;
    for (extrapolation, want) in [("linear", [1.5, 4.0, 1.5]), ("clip", [1.5, 2.0, 1.5])] {
        let t = format!(
            "kind = \"lookup_2d\"\nrows = [0.0, 1.0]\ncolumns = [0.0, 1.0]\ntable = [[0.0, 1.0], [2.0, 3.0]]\nextrapolation = \"{extrapolation}\"\nwidth = 3"
        );
        let mut g = graph(
            10,
            &[("a", a), ("b", b), ("t", &t)],
            &[("a.y", "t.u0"), ("b.y", "t.u1")],
        );
        assert_eq!(
            trace(&mut g, "t.y", 1).pop().unwrap(),
            want,
            "{extrapolation}"
        );
    }
}

#[test]
fn rate_limiter_rises_and_falls_at_its_rates() {
    // A step from 0 to 1 at 0.5 s and back to 0 at 2 s: +1/s, -2/s, h = 0.1 s.
    let mut g = graph(
        100,
        &[
            (
                "u",
                r#"kind = "expr"
                     expr = "if time >= 0.5 and time < 2 then 1 else 0"
                     inputs = 0"#,
            ),
            (
                "r",
                r#"kind = "rate_limiter"
                     rising = 1.0
                     falling = -2.0"#,
            ),
        ],
        &[("u.y", "r.u")],
    );
    let y = scalar(trace(&mut g, "r.y", 30));
    for (k, &v) in y.iter().enumerate() {
        let t = k as f64 * 0.1;
        let want = if t < 2.0 - 1e-9 {
            (t - 0.4).clamp(0.0, 1.0)
        } else {
            (1.0 - 2.0 * (t - 1.9)).clamp(0.0, 1.0)
        };
        assert!(close(v, want, 1e-9), "k = {k}: {v} vs {want}");
    }
}

#[test]
fn integrator_ramps_stops_at_its_limit_and_resets_on_an_edge() {
    // y' = 2 from 1, upper limit 3; a reset pulse at 1.5 s sets it back to 1.
    let mut g = graph(
        100,
        &[
            (
                "two",
                r#"kind = "constant"
                       value = 2.0"#,
            ),
            (
                "pulse",
                r#"kind = "expr"
                         expr = "if time >= 1.45 and time < 1.75 then 1 else 0"
                         inputs = 0"#,
            ),
            (
                "i",
                r#"kind = "integrator"
                     initial = 1.0
                     upper = 3.0
                     reset = "rising""#,
            ),
        ],
        &[("two.y", "i.u"), ("pulse.y", "i.reset")],
    );
    let y = scalar(trace(&mut g, "i.y", 25));
    for (k, &v) in y.iter().enumerate() {
        // The reset edge is at boundary 15; it shows from 16 on.
        let want = if k <= 15 {
            (1.0 + 0.2 * k as f64).min(3.0)
        } else {
            1.0 + 0.2 * (k - 16) as f64
        };
        assert!(close(v, want, 1e-12), "k = {k}: {v} vs {want}");
    }
}

#[test]
fn transfer_function_and_state_space_give_the_analytic_step_response() {
    // 1 / (s + 1) and 1 / (s^2 + 2 s + 1) to a unit step, rk4, h = 10 ms.
    let mut g = graph(
        10,
        &[
            (
                "one",
                r#"kind = "constant"
                       value = 1.0"#,
            ),
            (
                "first",
                r#"kind = "transfer_function"
                         num = [1.0]
                         den = [1.0, 1.0]"#,
            ),
            (
                "second",
                r#"kind = "zero_pole_gain"
                          poles = [-1.0, -1.0]"#,
            ),
            (
                "ss",
                r#"kind = "state_space"
                      a = [[-1.0]]
                      b = [[1.0]]
                      c = [[1.0]]"#,
            ),
        ],
        &[
            ("one.y", "first.u"),
            ("one.y", "second.u"),
            ("one.y", "ss.u"),
        ],
    );
    let mut rows = Vec::new();
    g.run_to(200, &mut |g: &Graph| {
        rows.push([
            g.value("first", "y").unwrap()[0],
            g.value("second", "y").unwrap()[0],
            g.value("ss", "y").unwrap()[0],
        ])
    })
    .unwrap();
    for (k, r) in rows.iter().enumerate() {
        let t = k as f64 * 0.01;
        assert!(close(r[0], 1.0 - (-t).exp(), 1e-9), "k = {k}: {r:?}");
        assert!(
            close(r[1], 1.0 - (1.0 + t) * (-t).exp(), 1e-9),
            "k = {k}: {r:?}"
        );
        assert_eq!(
            r[0].to_bits(),
            r[2].to_bits(),
            "the same model, the same bits"
        );
    }
}

#[test]
fn discrete_blocks_sample_at_their_own_period_and_phase() {
    // A unit delay of the clock at 0.3 s from 0.1 s (h = 0.1 s), and
    // 1 / (z - 0.5) of a unit step every step: 2 (1 - 0.5^n).
    let mut g = graph(
        100,
        &[
            ("clock", r#"kind = "clock""#),
            (
                "d",
                r#"kind = "unit_delay"
                     period = "300ms"
                     phase = "100ms""#,
            ),
            (
                "one",
                r#"kind = "constant"
                       value = 1.0"#,
            ),
            (
                "tf",
                r#"kind = "discrete_transfer_function"
                      num = [1.0]
                      den = [1.0, -0.5]"#,
            ),
            (
                "late",
                r#"kind = "transport_delay"
                        delay = "300ms""#,
            ),
        ],
        &[("clock.y", "d.u"), ("one.y", "tf.u"), ("clock.y", "late.u")],
    );
    let mut rows = Vec::new();
    g.run_to(12, &mut |g: &Graph| {
        rows.push([
            g.value("d", "y").unwrap()[0],
            g.value("tf", "y").unwrap()[0],
            g.value("late", "y").unwrap()[0],
        ])
    })
    .unwrap();
    let delayed = [0.0, 0.0, 0.0, 0.0, 0.1, 0.1, 0.1, 0.4, 0.4, 0.4, 0.7, 0.7];
    for (k, r) in rows.iter().enumerate() {
        assert!(close(r[0], delayed[k], 1e-12), "delay at {k}: {r:?}");
        assert!(
            close(r[1], 2.0 * (1.0 - 0.5f64.powi(k as i32)), 1e-12),
            "tf at {k}: {r:?}"
        );
        let late = if k < 3 { 0.0 } else { (k - 3) as f64 * 0.1 };
        assert!(close(r[2], late, 1e-12), "transport delay at {k}: {r:?}");
    }
}

#[test]
fn math_and_routing_blocks() {
    let mut g = graph(
        10,
        &[
            (
                "u",
                r#"kind = "constant"
                     value = [2.0, 0.5, -3.0]"#,
            ),
            (
                "parts",
                r#"kind = "demux"
                         widths = [1, 1, 1]"#,
            ),
            (
                "e",
                r#"kind = "expr"
                     expr = "k * u[0] * sin(u[1])"
                     inputs = 2
                     parameters = { k = 3.0 }"#,
            ),
            (
                "m",
                r#"kind = "mux"
                     widths = [1, 1]"#,
            ),
            (
                "s",
                r#"kind = "sum"
                     signs = "+-+""#,
            ),
            (
                "p",
                r#"kind = "product"
                     ops = "*/""#,
            ),
            (
                "sel",
                r#"kind = "selector"
                       indices = [2, 0, 0]
                       width = 3"#,
            ),
            (
                "sw",
                r#"kind = "switch"
                      threshold = 0.0"#,
            ),
            (
                "g",
                r#"kind = "gain"
                     k = [[1.0, 2.0, 3.0], [0.0, -1.0, 0.0]]"#,
            ),
            (
                "f",
                r#"kind = "function"
                     function = "abs""#,
            ),
        ],
        &[
            ("u.y", "parts.u"),
            ("parts.y0", "m.u0"),
            ("parts.y1", "m.u1"),
            ("m.y", "e.u"),
            ("parts.y0", "s.u0"),
            ("parts.y1", "s.u1"),
            ("parts.y2", "s.u2"),
            ("parts.y0", "p.u0"),
            ("parts.y1", "p.u1"),
            ("u.y", "sel.u"),
            ("parts.y0", "sw.u0"),
            ("parts.y2", "sw.control"),
            ("parts.y1", "sw.u1"),
            ("u.y", "g.u"),
            ("parts.y2", "f.u"),
        ],
    );
    g.evaluate().unwrap();
    let v = |c: &str| g.value(c, "y").unwrap().to_vec();
    assert_eq!(v("e"), [3.0 * 2.0 * 0.5f64.sin()]);
    assert_eq!(v("s"), [2.0 - 0.5 - 3.0]);
    assert_eq!(v("p"), [4.0]);
    assert_eq!(v("sel"), [-3.0, 2.0, 2.0]);
    assert_eq!(v("sw"), [0.5], "control -3 < 0 passes u1");
    assert_eq!(v("g"), [2.0 + 1.0 - 9.0, -0.5]);
    assert_eq!(v("f"), [3.0]);
}

#[test]
fn an_algebraic_loop_of_blocks_is_reported_naming_its_members() {
    let blocks = [
        ("a", "kind = \"sum\"\nsigns = \"+-\""),
        ("k", "kind = \"gain\"\nk = 0.5"),
        ("one", "kind = \"constant\"\nvalue = 1.0"),
    ];
    let step = SimTime::from_millis(10);
    let mut b = GraphBuilder::new(step, SolverKind::Rk4);
    for (i, (name, text)) in blocks.iter().enumerate() {
        let c: BlockConfig = toml::from_str(text).unwrap();
        let cx = BlockContext {
            step: StepSize::new(step).unwrap(),
            seed: 1,
            stream: i as u64,
        };
        b.component_keyed(
            KeyPath::key("components").at(i),
            name,
            build(&KeyPath::key("k"), &c, cx).unwrap(),
        );
    }
    b.connect("one.y", "a.u0")
        .connect("k.y", "a.u1")
        .connect("a.y", "k.u");
    let e = b.build().unwrap_err().to_string();
    assert!(
        e.contains("algebraic loop") && e.contains('a') && e.contains('k'),
        "{e}"
    );
}

#[test]
fn bad_parameters_name_their_key() {
    let cases = [
        ("kind = \"saturation\"\nlower = 1.0\nupper = 0.0", "b.upper"),
        (
            "kind = \"lookup_1d\"\nbreakpoints = [0.0, 0.0]\ntable = [1.0, 2.0]",
            "b.breakpoints[1]",
        ),
        ("kind = \"expr\"\nexpr = \"u / 0\"", "b.expr"),
        ("kind = \"expr\"\nexpr = \"q + 1\"", "b.expr"),
        ("kind = \"sum\"\nsigns = \"+*\"", "b.signs"),
        (
            "kind = \"transfer_function\"\nnum = [1.0, 0.0]\nden = [1.0]",
            "b.num",
        ),
        ("kind = \"unit_delay\"\nperiod = \"15ms\"", "b.period"),
    ];
    for (text, key) in cases {
        let c: BlockConfig = toml::from_str(text).unwrap();
        let cx = BlockContext {
            step: StepSize::new(SimTime::from_millis(10)).unwrap(),
            seed: 1,
            stream: 0,
        };
        let e = build(&KeyPath::key("b"), &c, cx).unwrap_err();
        assert_eq!(e.key().to_string(), key, "{text}: {e}");
    }
}

#[test]
fn snapshot_and_restore_replay_stateful_blocks_bit_for_bit() {
    let mut g = graph(
        10,
        &[
            ("noise", "kind = \"random\"\ndistribution = \"normal\""),
            ("r", "kind = \"relay\"\non_point = 0.5\noff_point = -0.5"),
            ("i", "kind = \"integrator\""),
            ("d", "kind = \"unit_delay\"\nperiod = \"30ms\""),
        ],
        &[("noise.y", "r.u"), ("r.y", "i.u"), ("i.y", "d.u")],
    );
    g.run_to(50, &mut |_: &Graph| {}).unwrap();
    let snap = g.snapshot();
    let first = trace(&mut g, "d.y", 120);
    g.restore(&snap).unwrap();
    let again = trace(&mut g, "d.y", 120);
    assert_eq!(first, again);
}

#[test]
fn equations_block_has_a_port_per_input_and_output_and_finds_feedthrough() {
    let law =
        "kind = \"equations\"\nequations = \"input e; input w; output u = 2 * e; output z = w;\"";
    let g = graph(
        10,
        &[("k", "kind = \"clock\""), ("law", law)],
        &[("k.y", "law.e"), ("k.y", "law.w")],
    );
    let d = g.declaration(g.component_index("law").unwrap());
    let names: Vec<&str> = d.inputs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["e", "w"]);
    assert!(d.inputs.iter().all(|p| p.direct && p.size == 1));
    // Outputs from states only: no feedthrough, so it can close a loop.
    let filter = "kind = \"equations\"\nequations = \"input e; state x(start = 1); der(x) = e; output y = x;\"";
    let mut g = graph(
        10,
        &[("f", filter), ("neg", "kind = \"gain\"\nk = -2.0")],
        &[("f.y", "neg.u"), ("neg.y", "f.e")],
    );
    assert!(!g.declaration(g.component_index("f").unwrap()).inputs[0].direct);
    // x' = -2 x(k), the fed-back input held over each step (as for every
    // component): x(k+1) = (1 - 2 h) x(k), so 0.98^100 at 1 s.
    let y = scalar(trace(&mut g, "f.y", 100));
    assert!(close(y[100], 0.98f64.powi(100), 1e-12), "{}", y[100]);
}

#[test]
fn a_sampled_equations_block_holds_its_outputs_and_integrates_the_sampled_input() {
    // Sampled every 50 ms: u = z + e with z' = e, e = t.
    let law = "kind = \"equations\"\nperiod = \"50ms\"\nequations = \"input e; state z; der(z) = e; output u = z + e;\"";
    let mut g = graph(
        10,
        &[("k", "kind = \"clock\""), ("law", law)],
        &[("k.y", "law.e")],
    );
    let u = scalar(trace(&mut g, "law.u", 10));
    // Held between samples.
    assert!(u[0..5].iter().all(|&x| x == 0.0), "{u:?}");
    // At 50 ms: z integrated e held at e(0) = 0; u = 0 + 0.05.
    assert!(close(u[5], 0.05, 1e-15), "{}", u[5]);
    assert!(u[5..10].iter().all(|&x| x == u[5]), "{u:?}");
    // At 100 ms: z = 0.05 s * 0.05 (the sample of 50 ms, held); u = z + 0.1.
    assert!(close(u[10], 0.0025 + 0.1, 1e-12), "{}", u[10]);
}
