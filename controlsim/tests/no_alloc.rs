//! `advance_to` must not allocate: a counting global allocator (its own test
//! binary, since the allocator is process-wide) counts the allocations made
//! by this thread while the engine integrates, with the silent observer and
//! with a recorder writing to a sink.

use std::alloc::{GlobalAlloc, Layout, System as Sys};
use std::cell::Cell;

use controlsim::{Recorder, Silent, System, SystemConfig};

#[path = "support/linear4.rs"]
mod linear4;

struct Counting;

thread_local! {
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        COUNT.with(|c| c.set(c.get() + 1));
        unsafe { Sys.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { Sys.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        COUNT.with(|c| c.set(c.get() + 1));
        unsafe { Sys.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> u64 {
    let before = COUNT.with(Cell::get);
    f();
    COUNT.with(Cell::get) - before
}

/// The loops after the linear plant's: one of each other kind of work.
const OTHER_LOOPS: &str = r#"
[[loops]]
name = "pi"
[loops.plant]
kind = "mass_spring_damper"
external_force = { kind = "square", period = "100ms" }
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "transfer_function"
num = [1.0, 2.0]
den = [1.0, 0.0]
[loops.reference]
kind = "sine"
amplitude = 1.0
frequency = 1.0
[[loops]]
name = "ball"
[loops.plant]
kind = "bouncing_ball"
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "open_loop"
[[loops]]
name = "disc"
[loops.plant]
kind = "discrete_transfer_function"
num = [0.1]
den = [1.0, -0.9]
period = "5ms"
[loops.sensor]
period = "5ms"
[loops.actuator]
initial = 1.0
[loops.controller]
kind = "open_loop"
[[loops]]
name = "eq"
[loops.plant]
kind = "equations"
equations = """
parameter g = 9.81;
input force;
state h(start = 10);
state v(start = 15);
der(h) = v;
der(v) = -g + sat(force, -1, 1) + 0 * relay;
hysteresis relay(v, -1, 1, 0, 1);
output h;
output e = if h > 5 then 0.5 * v^2 + g * h else deadzone(v, 0.1);
when h < 0 then h = 0, v = -0.8 * pre(v);
"""
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "open_loop"
"#;

/// Every kind of per-step work: the linear plant (from rest, u = 1), a
/// transfer function, a bouncing ball, a discrete plant, equations.
fn scenario() -> SystemConfig {
    let text = format!(
        "step = \"1ms\"\n{}{OTHER_LOOPS}",
        linear4::open_loop("lin", false, "10ms", linear4::HOLD_ONE)
    );
    toml::from_str(&text).unwrap()
}

fn system() -> System {
    let cfg = scenario();
    System::from_config(&cfg, 0).unwrap()
}

#[test]
fn advance_to_does_not_allocate() {
    let mut sys = system();
    sys.advance_to(1, &mut Silent).unwrap();
    let n = allocations_during(|| sys.advance_to(20_000, &mut Silent).unwrap());
    assert_eq!(n, 0, "allocations in 20000 steps");
    assert!(sys.loops()[2].resets() > 0, "the ball bounced meanwhile");
    assert!(
        sys.loops()[4].resets() > 2,
        "the equation ball bounced and its relay switched"
    );
}

#[test]
fn recording_every_step_does_not_allocate_per_row() {
    let mut sys = system();
    let mut rec = Recorder::new(&sys, std::io::sink(), std::num::NonZeroU64::MIN).unwrap();
    sys.advance_to(100, &mut rec).unwrap();
    let n = allocations_during(|| sys.advance_to(10_000, &mut rec).unwrap());
    assert_eq!(n, 0, "allocations while recording 9900 rows");
    assert_eq!(rec.rows(), 10_000);
}

/// The graph's step does not allocate either: the loops above as a graph
/// (every component evaluated, gathered and integrated), and an algebraic
/// loop solved by Newton at every boundary (its scratch and the members'
/// saved states are reused).
#[test]
fn graph_steps_do_not_allocate() {
    use controlsim::graph::{
        loops, Component, Ctx, Declaration, Graph, GraphBuilder, Inputs, NewtonSettings, Outputs,
        PortSpec, SavedState, StateMismatch, StateReader, Timing,
    };
    let cfg = scenario();
    let mut g = loops::expand(&cfg, 0).unwrap();
    g.run_to(1, &mut |_: &Graph| {}).unwrap();
    let n = allocations_during(|| g.run_to(20_000, &mut |_: &Graph| {}).unwrap());
    assert_eq!(n, 0, "allocations in 20000 graph steps");

    #[derive(Debug)]
    struct Gain(f64, u64);
    impl Component for Gain {
        fn declare(&self) -> Declaration {
            Declaration {
                inputs: vec![PortSpec::new("u", 1)],
                outputs: vec![PortSpec::new("y", 1)],
                states: vec![],
                guards: 0,
                timing: Timing::EveryStep,
            }
        }
        fn output(&mut self, _: &mut Ctx, _: &[f64], u: &Inputs, y: &mut Outputs) {
            self.1 += 1;
            y.port(0)[0] = self.0 * u.port(0)[0].sin() + 1.0;
        }
        fn save(&self, into: &mut SavedState) {
            into.words.push(self.1);
        }
        fn load(&mut self, from: &mut StateReader) -> Result<(), StateMismatch> {
            self.1 = from.word()?;
            Ok(())
        }
    }
    let mut b = GraphBuilder::new(controlsim::SimTime::from_millis(1), Default::default());
    b.component("a", Gain(0.5, 0)).component("b", Gain(-0.7, 0));
    b.connect("a.y", "b.u").connect("b.y", "a.u");
    b.solve_algebraic_loops(NewtonSettings::default());
    let mut g = b.build().unwrap();
    g.run_to(1, &mut |_: &Graph| {}).unwrap();
    let n = allocations_during(|| g.run_to(1000, &mut |_: &Graph| {}).unwrap());
    assert_eq!(n, 0, "allocations in 1000 Newton solves");
}
