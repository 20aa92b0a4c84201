//! The control side as a graph (issue 11): today's loops as a special case
//! (bit for bit), a central controller, algebraic loops, multi-rate, a
//! user's hybrid kind with a guard, snapshot and restore of every kind, and
//! every bad graph named by its key.

use controlsim::graph::adapters::{
    ActuatorComponent, ControllerComponent, ControllerShape, PlantComponent, ReferenceComponent,
    SensorComponent,
};
use controlsim::graph::{
    loops, Component, Ctx, Declaration, Graph, GraphBuilder, GraphError, Inputs, NewtonSettings,
    Outputs, PortSpec, SavedState, StateMismatch, StateReader, Timing,
};
use controlsim::KeyPath;
use controlsim::{
    ActuatorConfig, ClosedLoop, ControllerConfig, Delays, PlantConfig, PlantModel, Response,
    SensorConfig, SimTime, SolverKind, StepSize, SystemConfig,
};

use crate::common::{add_siso_loop, build, RICH};
use crate::config::MORE;

fn parse(text: &str) -> SystemConfig {
    toml::from_str(text).unwrap_or_else(|e| panic!("{e}"))
}

fn ms(v: u64) -> SimTime {
    SimTime::from_millis(v)
}

fn step(h: SimTime) -> StepSize {
    StepSize::new(h).unwrap()
}

/// Per boundary, the bits of every loop's plant state, last sample and
/// applied control, from the closed loop.
fn closed_loop_trace(text: &str, seed: u64, n: u64) -> Vec<Vec<u64>> {
    let mut cl = ClosedLoop::new(build(text, seed), Delays::default(), Response::Direct);
    let mut out = Vec::new();
    cl.run_to(n, &mut |s: &controlsim::System| {
        let mut v = Vec::new();
        for lp in s.loops() {
            for part in [lp.state(), lp.last_sample(), lp.applied_control()] {
                v.extend(part.iter().map(|x| x.to_bits()));
            }
        }
        out.push(v);
    })
    .unwrap();
    out
}

/// The same from the loops' graph: plant states (a discrete plant's own),
/// sensor outputs, actuator outputs.
fn graph_trace(g: &mut Graph, config: &SystemConfig, n: u64) -> Vec<Vec<u64>> {
    let idx: Vec<[usize; 3]> = config
        .loops
        .iter()
        .map(|l| {
            ["plant", "sensor", "actuator"]
                .map(|p| g.component_index(&format!("{}_{p}", l.name)).unwrap())
        })
        .collect();
    let mut out = Vec::new();
    g.run_to(n, &mut |g: &Graph| {
        let mut v = Vec::new();
        for &[p, s, a] in &idx {
            v.extend(g.states(p).iter().map(|x| x.to_bits()));
            v.extend(g.discrete_states(p).iter().map(|x| x.to_bits()));
            v.extend(g.output(s, 0).iter().map(|x| x.to_bits()));
            v.extend(g.output(a, 0).iter().map(|x| x.to_bits()));
        }
        out.push(v);
    })
    .unwrap();
    out
}

/// Today's five-phase order falls out of the graph's order: every loop of
/// every kind (PID, observer, continuous TF, event-triggered CACC with a
/// radar, discrete plants, a bouncing ball, noise, quantisation), expanded
/// into plant, sensor, controller and actuator components, gives the
/// zero-delay ClosedLoop's bits at every boundary. Discrete plants keep their
/// state inside the component, so their outputs are compared through the
/// sensor.
#[test]
fn loops_expanded_into_a_graph_are_the_closed_loop_bit_for_bit() {
    for (text, seed) in [(RICH, 42), (MORE, 3)] {
        let config = parse(text);
        let expected = closed_loop_trace(text, seed, 1500);
        let mut g = loops::expand(&config, seed).unwrap();
        let order = g.order();
        assert_eq!(
            &order[..4],
            [
                vec![format!("{}_plant", config.loops[0].name).as_str()],
                vec![format!("{}_sensor", config.loops[0].name).as_str()],
                vec![format!("{}_controller", config.loops[0].name).as_str()],
                vec![format!("{}_actuator", config.loops[0].name).as_str()],
            ],
        );
        let got = graph_trace(&mut g, &config, 1500);
        assert_eq!(got.len(), expected.len());
        for (k, (a, b)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(a, b, "boundary {k}");
        }
        assert_ne!(got[100], got[1400], "the runs move");
    }
}

const SERVO_SF: &str = r#"
kind = "dc_servo"
outputs = ["theta", "omega"]
"#;

/// Two DC servos, one central state-feedback controller reading both
/// (measurement[0..2] from the first, [2..4] from the second) with a
/// block-diagonal gain, driving both actuators: bit for bit the two
/// independent loops of today's ClosedLoop.
#[test]
fn central_block_diagonal_controller_equals_two_independent_loops() {
    // One servo loop: its initial state, state-feedback gains and final reference.
    let servo = |name: &str, x0: &str, k: &str, n: &str, target: &str| {
        format!(
            r#"[[loops]]
name = "{name}"
[loops.plant]
kind = "dc_servo"
outputs = ["theta", "omega"]
x0 = {x0}
[loops.sensor]
period = "10ms"
[loops.actuator]
min = -6.0
max = 6.0
[loops.controller]
kind = "state_feedback"
k = {k}
n = {n}
[loops.reference]
kind = "step"
at = "100ms"
final = {target}
"#
        )
    };
    let loops = format!(
        "\nstep = \"1ms\"\n{}{}",
        servo("a", "[0.3, 0.0]", "[[12.0, 1.5]]", "[[12.0]]", "1.0"),
        servo("b", "[-0.2, 0.5]", "[[8.0, 0.9]]", "[[8.0]]", "-0.5")
    );
    let n = 2000;
    let expected = closed_loop_trace(&loops, 0, n);

    let h = step(ms(1));
    let mut b = GraphBuilder::new(ms(1), SolverKind::Rk4);
    let plant = |x0: &str| {
        let cfg: PlantConfig = toml::from_str(&format!("{SERVO_SF}x0 = {x0}")).unwrap();
        PlantModel::from_config(&KeyPath::key("p"), &cfg).unwrap()
    };
    let sensor: SensorConfig = toml::from_str("period = \"10ms\"").unwrap();
    let act: ActuatorConfig = toml::from_str("min = -6.0\nmax = 6.0").unwrap();
    let names = ["theta".to_string(), "omega".to_string()];
    let ctrl: ControllerConfig = toml::from_str(
        "kind = \"state_feedback\"\nk = [[12.0, 1.5, 0.0, 0.0], [0.0, 0.0, 8.0, 0.9]]\nn = [[12.0, 0.0], [0.0, 8.0]]",
    )
    .unwrap();
    let refs: Vec<controlsim::SignalConfig> = [
        "kind = \"step\"\nat = \"100ms\"\nfinal = 1.0",
        "kind = \"step\"\nat = \"100ms\"\nfinal = -0.5",
    ]
    .iter()
    .map(|t| toml::from_str(t).unwrap())
    .collect();
    b.component(
        "a",
        PlantComponent::new(&KeyPath::key("a"), plant("[0.3, 0.0]"), h).unwrap(),
    );
    b.component(
        "sa",
        SensorComponent::new(&KeyPath::key("sa"), &sensor, h, &names, 0, 0).unwrap(),
    );
    b.component(
        "b",
        PlantComponent::new(&KeyPath::key("b"), plant("[-0.2, 0.5]"), h).unwrap(),
    );
    b.component(
        "sb",
        SensorComponent::new(&KeyPath::key("sb"), &sensor, h, &names, 0, 1).unwrap(),
    );
    b.component(
        "central",
        ControllerComponent::new(
            &KeyPath::key("central"),
            &ctrl,
            ControllerShape {
                measurements: 4,
                outputs: 2,
                reference: &refs,
                model: None,
                limits: None,
                default_period: Some(ms(10)),
            },
            h,
        )
        .unwrap(),
    );
    b.component(
        "act_a",
        ActuatorComponent::new(&KeyPath::key("act_a"), &act, 1).unwrap(),
    );
    b.component(
        "act_b",
        ActuatorComponent::new(&KeyPath::key("act_b"), &act, 1).unwrap(),
    );
    b.connect("a.y", "sa.y")
        .connect("b.y", "sb.y")
        .connect("sa.y", "central.measurement[0..2]")
        .connect("sb.y", "central.measurement[2..4]")
        .connect("central.u[0]", "act_a.u")
        .connect("central.u[1]", "act_b.u")
        .connect("act_a.u", "a.u")
        .connect("act_b.u", "b.u");
    let mut g = b.build().unwrap();
    let (a, sa, bb, sb, aa, ab) = (0, 1, 2, 3, 5, 6);
    let mut got = Vec::new();
    g.run_to(n, &mut |g: &Graph| {
        let mut v = Vec::new();
        for (p, s, act) in [(a, sa, aa), (bb, sb, ab)] {
            for part in [g.states(p), g.output(s, 0), g.output(act, 0)] {
                v.extend(part.iter().map(|x| x.to_bits()));
            }
        }
        got.push(v);
    })
    .unwrap();
    assert_eq!(got, expected);
    assert_ne!(got[50], got[1900]);
}

/// A user's kind: `y = gain * u + offset`, direct feedthrough, one trait.
#[derive(Debug)]
struct Affine {
    gain: f64,
    offset: f64,
    /// How often it was evaluated (state, to check restores in the solve).
    calls: u64,
}

impl Component for Affine {
    fn declare(&self) -> Declaration {
        Declaration {
            inputs: vec![PortSpec::new("u", 1)],
            outputs: vec![PortSpec::new("y", 1)],
            states: vec![],
            guards: 0,
            timing: Timing::EveryStep,
        }
    }

    fn output(&mut self, _cx: &mut Ctx, _x: &[f64], u: &Inputs, y: &mut Outputs) {
        self.calls += 1;
        y.port(0)[0] = self.gain * u.port(0)[0].tanh() + self.offset;
    }

    fn save(&self, into: &mut SavedState) {
        into.words.push(self.calls);
    }

    fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
        self.calls = from.word()?;
        Ok(())
    }
}

impl Affine {
    fn new(gain: f64, offset: f64) -> Self {
        Affine {
            gain,
            offset,
            calls: 0,
        }
    }
}

/// Adds the algebraic loop a = 0.5 tanh(b) + 1, b = -0.8 tanh(a) + 0.25:
/// components `first` (a) and `second` (b), each driving the other.
fn add_affine_pair(b: &mut GraphBuilder) {
    b.component("first", Affine::new(0.5, 1.0));
    b.component("second", Affine::new(-0.8, 0.25));
    b.connect("first.y", "second.u")
        .connect("second.y", "first.u");
}

fn affine_loop(solve: bool) -> Result<Graph, controlsim::ConfigError> {
    let mut b = GraphBuilder::new(ms(1), SolverKind::Rk4);
    add_affine_pair(&mut b);
    if solve {
        b.solve_algebraic_loops(NewtonSettings::default());
    }
    b.build()
}

/// A cycle of direct feedthrough is reported naming its members and the
/// connection; asked to solve it, Newton finds the fixed point of
/// a = 0.5 tanh(b) + 1, b = -0.8 tanh(a) + 0.25 to the stated tolerance.
#[test]
fn algebraic_loop_is_named_or_solved_to_the_fixed_point() {
    let err = affine_loop(false).unwrap_err();
    assert_eq!(err.key().to_string(), "connections[0]");
    let text = err.to_string();
    assert!(
        text.contains("algebraic loop") && text.contains("`first`") && text.contains("`second`"),
        "{text}"
    );

    let mut g = affine_loop(true).unwrap();
    assert_eq!(g.order(), [vec!["first", "second"]]);
    g.run_to(3, &mut |_: &Graph| {}).unwrap();
    g.evaluate().unwrap();
    let a = g.value("first", "y").unwrap()[0];
    let b = g.value("second", "y").unwrap()[0];
    // The analytic fixed point, by bisection on a - (0.5 tanh(-0.8 tanh(a) + 0.25) + 1).
    let f = |a: f64| a - (0.5 * (-0.8 * a.tanh() + 0.25_f64).tanh() + 1.0);
    let (mut lo, mut hi) = (0.0_f64, 2.0_f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let a_star = 0.5 * (lo + hi);
    let b_star = -0.8 * a_star.tanh() + 0.25;
    let tol = NewtonSettings::default().tolerance;
    assert!((a - a_star).abs() <= 10.0 * tol, "{a} vs {a_star}");
    assert!((b - b_star).abs() <= 10.0 * tol, "{b} vs {b_star}");
    // The residual itself is within the tolerance.
    assert!((0.5 * b.tanh() + 1.0 - a).abs() <= tol);
}

/// A loop with no solution stops the run naming the loop and the time.
#[test]
fn algebraic_loop_without_solution_is_a_run_error() {
    let mut b = GraphBuilder::new(ms(1), SolverKind::Rk4);
    // y = u + 1 around a one-component loop: z = z + 1 has no solution.
    b.component("self_feed", Affine::new(0.0, 0.0));
    #[derive(Debug)]
    struct Shift;
    impl Component for Shift {
        fn declare(&self) -> Declaration {
            Declaration {
                inputs: vec![PortSpec::new("u", 1)],
                outputs: vec![PortSpec::new("y", 1)],
                states: vec![],
                guards: 0,
                timing: Timing::EveryStep,
            }
        }
        fn output(&mut self, cx: &mut Ctx, _x: &[f64], u: &Inputs, y: &mut Outputs) {
            // Solvable until 2 ms, then z = z + 1.
            y.port(0)[0] = if cx.k < 2 {
                0.5 * u.port(0)[0]
            } else {
                u.port(0)[0] + 1.0
            };
        }
    }
    b.component("shift", Shift);
    b.connect("shift.y", "shift.u")
        .connect("shift.y", "self_feed.u");
    b.solve_algebraic_loops(NewtonSettings::default());
    let mut g = b.build().unwrap();
    let err = g.run_to(10, &mut |_: &Graph| {}).unwrap_err();
    let GraphError::AlgebraicLoop { members, time, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!((members.as_str(), *time), ("shift -> shift", ms(2)));
    assert_eq!(g.k(), 2);
}

/// Multi-rate: an integrator `x' = u` (x0 = 1) integrated every 1 ms, a
/// sensor at 2 ms, a state-feedback controller `u = -20 y` at 10 ms and an
/// observer at 2 ms (a discrete filter `z[n+1] = 0.5 z[n] + 0.5 y(2n ms)`),
/// against the hand-computed answer: u is constant over each 10 ms, so
/// `x(10 j + m) = x(10 j) (1 - 0.02 m)` (m in ms) and `x(10 (j+1)) =
/// 0.8 x(10 j)`; the filter's output at boundary k is `z[floor(k / 2)]`.
#[test]
fn multi_rate_graph_matches_the_hand_computed_answer() {
    let h = step(ms(1));
    let integrator: PlantConfig =
        toml::from_str("kind = \"state_space\"\na = [[0.0]]\nb = [[1.0]]\nc = [[1.0]]\nx0 = [1.0]")
            .unwrap();
    let observer: PlantConfig = toml::from_str(
        "kind = \"discrete_state_space\"\nperiod = \"2ms\"\na = [[0.5]]\nb = [[0.5]]\nc = [[1.0]]",
    )
    .unwrap();
    let sensor: SensorConfig = toml::from_str("period = \"2ms\"").unwrap();
    let ctrl: ControllerConfig =
        toml::from_str("kind = \"state_feedback\"\nk = [[20.0]]\nperiod = \"10ms\"").unwrap();
    let mut b = GraphBuilder::new(ms(1), SolverKind::Euler);
    let plant = PlantModel::from_config(&KeyPath::key("p"), &integrator).unwrap();
    add_siso_loop(&mut b, h, plant, &sensor, ("pid", &ctrl));
    b.component(
        "observer",
        PlantComponent::new(
            &KeyPath::key("o"),
            PlantModel::from_config(&KeyPath::key("o"), &observer).unwrap(),
            h,
        )
        .unwrap(),
    );
    b.connect("sensor.y", "observer.u");
    let mut g = b.build().unwrap();
    let mut rows = Vec::new();
    g.run_to(200, &mut |g: &Graph| {
        rows.push([
            g.value("plant", "y").unwrap()[0],
            g.value("sensor", "y").unwrap()[0],
            g.value("pid", "u").unwrap()[0],
            g.value("observer", "y").unwrap()[0],
        ]);
    })
    .unwrap();
    let x = |k: u64| 0.8_f64.powi((k / 10) as i32) * (1.0 - 0.02 * (k % 10) as f64);
    let mut z = vec![0.0];
    for n in 0..100 {
        let zn: f64 = z[n];
        z.push(0.5 * zn + 0.5 * x(2 * n as u64));
    }
    for (k, row) in rows.iter().enumerate() {
        let k = k as u64;
        let expected = [
            x(k),
            x(k - k % 2),
            -20.0 * x(k - k % 10),
            z[(k / 2) as usize],
        ];
        for (got, want) in row.iter().zip(expected) {
            assert!(
                (got - want).abs() <= 1e-13 * want.abs().max(1.0),
                "boundary {k}: {row:?} vs {expected:?}"
            );
        }
    }
}

/// Runs `n` boundaries, every output value's bits at each.
fn value_trace(g: &mut Graph, n: u64) -> Vec<Vec<u64>> {
    let k1 = g.k() + n;
    let mut out = Vec::new();
    g.run_to(k1, &mut |g: &Graph| {
        let mut v: Vec<u64> = g.values().iter().map(|x| x.to_bits()).collect();
        for i in 0..g.component_names().count() {
            v.extend(g.states(i).iter().map(|x| x.to_bits()));
            v.extend(g.discrete_states(i).iter().map(|x| x.to_bits()));
        }
        out.push(v);
    })
    .unwrap();
    out
}

/// Snapshot and restore of every kind (every plant, sensor with noise and
/// radar, actuator, every controller, a reference, a user's component in a
/// solved algebraic loop): restore, re-run, same bits; into a rebuilt
/// graph too.
#[test]
fn snapshot_restore_round_trip_of_every_kind() {
    let with_extras = |text: &str, seed| loops::expand(&parse(text), seed).unwrap();
    for (text, seed) in [(RICH, 9), (MORE, 4)] {
        let mut g = with_extras(text, seed);
        g.run_to(700, &mut |_: &Graph| {}).unwrap();
        let snap = g.snapshot();
        let first = value_trace(&mut g, 400);
        let end = g.snapshot();
        g.restore(&snap).unwrap();
        assert!(g.snapshot() == snap);
        assert_eq!(value_trace(&mut g, 400), first);
        assert!(g.snapshot() == end);
        assert_ne!(first[0], first[399]);
        let mut rebuilt = with_extras(text, seed);
        rebuilt.restore(&snap).unwrap();
        assert_eq!(value_trace(&mut rebuilt, 400), first);
    }

    // A reference and a solved loop of components with internal state.
    let build_extra = || {
        let mut b = GraphBuilder::new(ms(1), SolverKind::Rk4);
        let sig: controlsim::SignalConfig =
            toml::from_str("kind = \"sine\"\namplitude = 2.0\nfrequency = 3.0").unwrap();
        b.component(
            "r",
            ReferenceComponent::new(&KeyPath::key("r"), &[sig]).unwrap(),
        );
        add_affine_pair(&mut b);
        b.component("adder", Affine::new(1.0, 0.0));
        b.connect("r.r", "adder.u");
        b.solve_algebraic_loops(NewtonSettings::default());
        b.build().unwrap()
    };
    let mut g = build_extra();
    g.run_to(10, &mut |_: &Graph| {}).unwrap();
    let snap = g.snapshot();
    let first = value_trace(&mut g, 50);
    g.restore(&snap).unwrap();
    assert_eq!(value_trace(&mut g, 50), first);
    assert_ne!(first[0], first[40], "the reference moves");

    // Another shape: an error naming the part, nothing changed.
    let mut other = loops::expand(&parse(MORE), 4).unwrap();
    let before = other.snapshot();
    let err = other.restore(&snap).unwrap_err();
    assert_eq!(err.what, "component count");
    assert!(other.snapshot() == before);
}

/// A component whose internal state counts its evaluations: the algebraic
/// loop's trial evaluations are undone, so each is evaluated once per
/// boundary, as a PID must be.
#[test]
fn algebraic_loop_trials_do_not_leave_side_effects() {
    let mut g = affine_loop(true).unwrap();
    g.run_to(5, &mut |_: &Graph| {}).unwrap();
    // `calls` is the only word of each Affine's internal state: 5
    // boundaries, 5 evaluations, however many Newton trials there were.
    let text = format!("{:?}", g.snapshot());
    assert_eq!(text.matches("words: [5]").count(), 2, "{text}");
}

/// A component with a period off the step grid.
#[derive(Debug)]
struct Ticker(SimTime, SimTime);

impl Component for Ticker {
    fn declare(&self) -> Declaration {
        Declaration {
            inputs: vec![PortSpec::new("u", 2)],
            outputs: vec![PortSpec::new("y", 2)],
            states: vec![],
            guards: 0,
            timing: Timing::Periodic {
                period: self.0,
                offset: self.1,
            },
        }
    }

    fn output(&mut self, _cx: &mut Ctx, _x: &[f64], u: &Inputs, y: &mut Outputs) {
        y.port(0).copy_from_slice(u.port(0));
    }
}

/// Every bad graph is a keyed error: undriven input, input driven twice,
/// size mismatch, unknown port, unknown component, element past the end,
/// duplicate name, period off the step grid, phase not below the period.
#[test]
fn bad_graphs_are_keyed_errors() {
    let two = ms(2);
    // The Ticker `t` (period, phase), the connections, and whether a second
    // component named `t` follows them.
    type Case<'a> = (
        SimTime,
        SimTime,
        &'a [(&'a str, &'a str)],
        bool,
        &'a str,
        &'a str,
    );
    let cases: Vec<Case> = vec![
        (
            two,
            ms(0),
            &[],
            false,
            "components[0]",
            "input `t.u[0]` is not driven",
        ),
        (
            two,
            ms(0),
            &[("t.y", "t.u"), ("t.y[0]", "t.u[1]")],
            false,
            "connections[1].to",
            "already driven by connections[0].from",
        ),
        (
            two,
            ms(0),
            &[("t.y[0]", "t.u")],
            false,
            "connections[0].to",
            "has 1 element but `t.u` has 2",
        ),
        (
            two,
            ms(0),
            &[("t.out", "t.u")],
            false,
            "connections[0].from",
            "`t` has no output port `out`",
        ),
        (
            two,
            ms(0),
            &[("t.u", "t.u")],
            false,
            "connections[0].from",
            "`u` is an input port",
        ),
        (
            two,
            ms(0),
            &[("t.y", "nobody.u")],
            false,
            "connections[0].to",
            "unknown name \"nobody\"",
        ),
        (
            two,
            ms(0),
            &[("t.y[2]", "t.u[0]")],
            false,
            "connections[0].from",
            "reaches past its end",
        ),
        (
            two,
            ms(0),
            &[("t.y", "t.u")],
            true,
            "components[1].name",
            "already the name of components[0]",
        ),
        (
            SimTime::from_micros(1500),
            ms(0),
            &[("t.y", "t.u")],
            false,
            "components[0].period",
            "multiple",
        ),
        (
            two,
            two,
            &[("t.y", "t.u")],
            false,
            "components[0].phase",
            "less than the period",
        ),
        (
            two,
            ms(0),
            &[("t.y", "t.u[0..]")],
            false,
            "connections[0].to",
            "not an element index",
        ),
    ];
    for (period, phase, connections, twice, key, words) in cases {
        let mut b = GraphBuilder::new(ms(1), SolverKind::Rk4);
        b.component("t", Ticker(period, phase));
        for (from, to) in connections {
            b.connect(from, to);
        }
        if twice {
            b.component("t", Ticker(two, ms(0)));
        }
        let err = b.build().unwrap_err();
        assert_eq!(err.key().to_string(), key, "{err}");
        assert!(err.to_string().contains(words), "{err}");
    }
}

/// A user's hybrid kind: a ball `h' = v, v' = a` with its acceleration `a`
/// an input, one guard (the floor, `h`), restitution `e`, and a settle that
/// puts it at rest on the floor when the impacts accumulate.
#[derive(Debug)]
struct Ball {
    e: f64,
}

impl Component for Ball {
    fn declare(&self) -> Declaration {
        Declaration {
            inputs: vec![PortSpec::new("a", 1).delayed()],
            outputs: vec![PortSpec::new("h", 1)],
            states: vec!["h".into(), "v".into()],
            guards: 1,
            timing: Timing::EveryStep,
        }
    }

    fn initial_state(&self, x: &mut [f64]) {
        x.copy_from_slice(&[1.0, 0.0]);
    }

    fn output(&mut self, _cx: &mut Ctx, x: &[f64], _u: &Inputs, y: &mut Outputs) {
        y.port(0)[0] = x[0];
    }

    fn derivative(&self, _t: f64, x: &[f64], u: &Inputs, dx: &mut [f64]) {
        let a = u.port(0)[0];
        dx[0] = x[1];
        // At rest on the floor, the floor carries it.
        dx[1] = if x[0] == 0.0 && x[1] == 0.0 && a < 0.0 {
            0.0
        } else {
            a
        };
    }

    fn guards(&self, _t: f64, x: &[f64], _u: &Inputs, g: &mut [f64]) {
        g[0] = x[0];
    }

    fn reset(&self, _t: f64, x: &mut [f64], _u: &Inputs, _guard: usize) {
        x[1] = -self.e * x[1];
    }

    fn settle(&self, _t: f64, x: &mut [f64], _u: &Inputs, _guard: usize) -> bool {
        x.fill(0.0);
        true
    }
}

/// Guards of a user's kind are located inside the step as a plant's are
/// (issue 11 item 5: every component that declares one): the ball above,
/// its acceleration from a reference component, dropped from 1 m with e =
/// 0.5 and a 1 s step, lands at `t1 = sqrt(2/g)` and again at `2 t1`, so at
/// 1 s it flies up from the second impact at `e^2 sqrt(2 g)`: the closed
/// form to 1e-12. In the second step the impacts accumulate at `3 t1` and
/// it settles on the floor. Without the guard it would be 3.9 m below it.
#[test]
fn a_users_component_with_a_guard_has_its_events_located_inside_the_step() {
    const G: f64 = 9.81;
    let mut b = GraphBuilder::new(SimTime::from_secs(1), SolverKind::Rk4);
    let gravity: controlsim::SignalConfig =
        toml::from_str(&format!("kind = \"constant\"\nvalue = {}", -G)).unwrap();
    b.component(
        "gravity",
        ReferenceComponent::new(&KeyPath::key("gravity"), &[gravity]).unwrap(),
    );
    b.component("ball", Ball { e: 0.5 });
    b.connect("gravity.r", "ball.a");
    let mut g = b.build().unwrap();
    g.run_to(1, &mut |_: &Graph| {}).unwrap();
    let (t1, v1) = ((2.0 / G).sqrt(), (2.0 * G).sqrt());
    let (since, r) = (1.0 - 2.0 * t1, 0.25 * v1);
    let expected = [r * since - 0.5 * G * since * since, r - G * since];
    let x = g.states(1);
    for (got, want) in x.iter().zip(expected) {
        assert!((got - want).abs() <= 1e-12, "{x:?} vs {expected:?}");
    }
    g.run_to(2, &mut |_: &Graph| {}).unwrap();
    assert_eq!(g.states(1), [0.0, 0.0]);
    g.evaluate().unwrap();
    assert_eq!(g.value("ball", "h").unwrap(), [0.0]);
}
