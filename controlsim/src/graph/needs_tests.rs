//! The engine calls `advance` and `fault` as a kind's [`Needs`] says:
//! counted per call, against the boundaries the component is due at.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use netloop_time::SimTime;

use super::component::{Component, Ctx, Declaration, Inputs, Needs, Outputs, PortSpec, Timing};
use super::GraphBuilder;
use crate::solver::SolverKind;

const STEP: SimTime = SimTime::from_millis(10);

/// Records the boundaries of its `output` (`1000 + k`) and `advance`
/// (`2000 + k`) calls and counts its `fault` calls (in a shared cell:
/// `fault` takes `&self`).
#[derive(Debug)]
struct Counter {
    needs: Needs,
    timing: Timing,
    outputs: usize,
    calls: Vec<f64>,
    faults: Arc<AtomicU64>,
}

impl Counter {
    fn new(needs: Needs, timing: Timing, outputs: usize) -> Self {
        Counter {
            needs,
            timing,
            outputs,
            calls: Vec::new(),
            faults: Arc::default(),
        }
    }
}

impl Component for Counter {
    fn declare(&self) -> Declaration {
        Declaration {
            inputs: Vec::new(),
            outputs: (0..self.outputs)
                .map(|i| PortSpec::new(format!("y{i}"), 1))
                .collect(),
            states: Vec::new(),
            guards: 0,
            timing: self.timing,
        }
    }

    fn output(&mut self, cx: &mut Ctx, _: &[f64], _: &Inputs, _: &mut Outputs) {
        self.calls.push(1000.0 + cx.k as f64);
    }

    fn advance(&mut self, cx: &mut Ctx, _: &Inputs) {
        self.calls.push(2000.0 + cx.k as f64);
    }

    fn fault(&self) -> Option<String> {
        self.faults.fetch_add(1, Ordering::Relaxed);
        None
    }

    fn needs(&self) -> Needs {
        self.needs
    }

    fn discrete_states(&self) -> &[f64] {
        &self.calls
    }
}

/// The calls over `steps` steps, and the number of `fault` calls.
fn run(needs: Needs, timing: Timing, outputs: usize, steps: u64) -> (Vec<f64>, u64) {
    let counter = Counter::new(needs, timing, outputs);
    let faults = counter.faults.clone();
    let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
    b.component("c", counter);
    let mut g = b.build().unwrap();
    g.run_to(steps, &mut |_: &super::Graph| {}).unwrap();
    (
        g.discrete_states(0).to_vec(),
        faults.load(Ordering::Relaxed),
    )
}

fn calls(needs: Needs, timing: Timing, outputs: usize, steps: u64) -> Vec<f64> {
    run(needs, timing, outputs, steps).0
}

const EVERY: Timing = Timing::EveryStep;
const EVERY_2: Timing = Timing::Periodic {
    period: SimTime::from_millis(20),
    offset: SimTime::from_millis(10),
};

#[test]
fn advance_is_called_as_the_kind_needs() {
    // The default: output and advance at every step.
    assert_eq!(
        calls(Needs::ALL, EVERY, 1, 3),
        [1000.0, 2000.0, 1001.0, 2001.0, 1002.0, 2002.0]
    );
    assert_eq!(
        calls(Needs::OUTPUT_ONLY, EVERY, 1, 3),
        [1000.0, 1001.0, 1002.0]
    );
    // Due at 1, 3, 5: advanced over those steps only.
    assert_eq!(
        calls(Needs::ADVANCE_WHEN_DUE, EVERY_2, 1, 6),
        [1001.0, 2001.0, 1003.0, 2003.0, 1005.0, 2005.0]
    );
    // At every step without an output port to tell due boundaries by.
    assert_eq!(
        calls(Needs::ADVANCE_WHEN_DUE, EVERY_2, 0, 4),
        [2000.0, 1001.0, 2001.0, 2002.0, 1003.0, 2003.0]
    );
    assert_eq!(
        calls(Needs::ADVANCE, EVERY_2, 1, 3),
        [2000.0, 1001.0, 2001.0, 2002.0]
    );
}

/// `fault` is asked after every step of a kind that can fault, never of
/// one that cannot.
#[test]
fn fault_is_asked_only_of_kinds_that_can_fault() {
    assert_eq!(run(Needs::ALL, EVERY, 1, 5).1, 5);
    assert_eq!(run(Needs::OUTPUT_ONLY, EVERY, 1, 5).1, 0);
    assert_eq!(run(Needs::ADVANCE_WHEN_DUE, EVERY_2, 1, 5).1, 0);
}
