//! The [`Endpoint`] without a network: the driver's calls written out by
//! hand, and the samples it asks to send checked against known boundaries,
//! numbers, values and send instants.

use netloop_time::SimTime;

use super::component::{Component, Ctx, Declaration, Inputs, Needs, Outputs, PortSpec, Timing};
use super::endpoint::{Announcement, Endpoint, FlowEnd, LossPolicy, SendAt, SendRule, Transmit};
use super::{GraphBuilder, Inlet};
use crate::solver::SolverKind;

const STEP: SimTime = SimTime::from_millis(1);

/// A component whose output is a fixed law of the boundary, the instant it
/// is evaluated at and its inputs (each of size 1).
#[derive(Debug)]
struct Law {
    timing: Timing,
    inputs: usize,
    width: usize,
    law: fn(&Ctx, &[f64]) -> Vec<f64>,
}

impl Component for Law {
    fn needs(&self) -> Needs {
        Needs::OUTPUT_ONLY
    }

    fn declare(&self) -> Declaration {
        Declaration {
            inputs: (0..self.inputs)
                .map(|i| PortSpec::new(format!("u{i}"), 1))
                .collect(),
            outputs: vec![PortSpec::new("y", self.width)],
            states: Vec::new(),
            guards: 0,
            timing: self.timing,
        }
    }

    fn output(&mut self, cx: &mut Ctx, _x: &[f64], u: &Inputs, y: &mut Outputs) {
        y.port(0).copy_from_slice(&(self.law)(cx, u.all()));
    }
}

/// Every third boundary from 1: 1, 4, 7, ...
const THIRDS: Timing = Timing::Periodic {
    period: SimTime::from_millis(3),
    offset: SimTime::from_millis(1),
};

/// `src` (y = k at 1, 4, 7, ...) feeds `double` (on input, y = 2 u); an
/// inlet `rx_q` feeds `echo` (on input, y = [10 u, the instant in ms]).
/// Flows (index: source -> inlet, rule):
/// 0 `src -> rx_a`, update (scheduled as `src`: period 3, phase 1);
/// 1 `src -> rx_p`, periodic every 2 steps from 1;
/// 2 `double -> rx_h`, update (no schedule: `double` answers no flow);
/// 3 `q`: `src -> rx_q`, periodic every 5 steps (the flow `echo` answers);
/// 4 `echo -> rx_e`, update (answers every packet of 3);
/// 5 `src -> rx_ack`, on arrival of 3 (`src` answers nothing: once per
///   boundary, after the last packet);
/// 6 `echo -> rx_echo_ack`, on arrival of 3 (`echo` answers it);
/// 7 `src -> rx_m`, periodic every step, two elements, `multi_packet`,
///   zero on loss; 8 the same, whole samples, zero on loss; 9 the same,
///   hold.
fn endpoint() -> Endpoint {
    let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
    b.component(
        "src",
        Law {
            timing: THIRDS,
            inputs: 0,
            width: 1,
            law: |cx, _| vec![cx.k as f64],
        },
    );
    b.component(
        "double",
        Law {
            timing: Timing::OnInput,
            inputs: 1,
            width: 1,
            law: |_, u| vec![2.0 * u[0]],
        },
    );
    b.component(
        "echo",
        Law {
            timing: Timing::OnInput,
            inputs: 1,
            width: 2,
            law: |cx, u| vec![10.0 * u[0], cx.at.as_secs_f64() * 1e3],
        },
    );
    b.component(
        "pair",
        Law {
            timing: Timing::EveryStep,
            inputs: 0,
            width: 2,
            law: |cx, _| vec![cx.k as f64, -(cx.k as f64)],
        },
    );
    for (name, width) in [
        ("rx_a", 1),
        ("rx_p", 1),
        ("rx_h", 1),
        ("rx_q", 1),
        ("rx_e", 2),
        ("rx_ack", 1),
        ("rx_echo_ack", 2),
        ("rx_m", 2),
        ("rx_z", 2),
        ("rx_hold", 2),
    ] {
        b.component(name, Inlet::new(width));
    }
    b.connect("src.y", "double.u0");
    b.connect("rx_q.y", "echo.u0");
    let graph = b.build().unwrap();
    let at = |name: &str| graph.component_index(name).unwrap();
    let (src, double, echo, pair) = (at("src"), at("double"), at("echo"), at("pair"));
    let flow = |source: usize, width: usize, inlet: &str, rule, on_loss, multi| {
        FlowEnd::new(
            &graph,
            (source, 0, 0..width),
            at(inlet),
            rule,
            on_loss,
            multi,
        )
    };
    use LossPolicy::{Hold, Zero};
    let every = |period, phase| SendRule::Periodic { period, phase };
    let flows = vec![
        flow(src, 1, "rx_a", SendRule::Update, Hold, false),
        flow(src, 1, "rx_p", every(2, 1), Hold, false),
        flow(double, 1, "rx_h", SendRule::Update, Hold, false),
        flow(src, 1, "rx_q", every(5, 0), Hold, false),
        flow(echo, 2, "rx_e", SendRule::Update, Hold, false),
        flow(src, 1, "rx_ack", SendRule::Arrival(3), Hold, false),
        flow(echo, 2, "rx_echo_ack", SendRule::Arrival(3), Hold, false),
        flow(pair, 2, "rx_m", every(1, 0), Zero, true),
        flow(pair, 2, "rx_z", every(1, 0), Zero, false),
        flow(pair, 2, "rx_hold", every(1, 0), Hold, false),
    ];
    Endpoint::new(graph, flows)
}

/// Evaluates the current boundary and takes what it sends, answers
/// included (those queued by `accept` before).
fn serve(e: &mut Endpoint) -> Vec<Transmit> {
    e.evaluate().unwrap();
    std::iter::from_fn(|| e.poll_transmit()).collect()
}

/// Serves boundaries up to `k` (excluded) with nothing received.
fn run_to(e: &mut Endpoint, k: u64) -> Vec<Transmit> {
    let mut sent = Vec::new();
    while e.graph().k() < k {
        sent.extend(serve(e));
        e.integrate_step().unwrap();
    }
    sent
}

fn of(sent: &[Transmit], flow: usize) -> Vec<(u64, Vec<f64>, SendAt)> {
    sent.iter()
        .filter(|t| t.flow == flow)
        .map(|t| (t.number, t.values.clone(), t.at))
        .collect()
}

fn scheduled(boundary: u64) -> SendAt {
    SendAt::Scheduled { boundary }
}

fn ms(t: f64) -> SimTime {
    SimTime((t * 1e6) as u64)
}

/// Scheduled flows number their packets by their index in the schedule:
/// an update flow on `src` (1, 4, 7: numbers 0, 1, 2), a periodic flow
/// every 2 steps from 1 (1, 3, 5, 7, 9), with the values the source holds;
/// an update flow on an on-input component without a schedule counts its
/// packets (`double` is new where `src` is) and sends unscheduled.
#[test]
fn scheduled_flows_are_numbered_by_their_boundary_and_others_by_count() {
    let mut e = endpoint();
    let sent = run_to(&mut e, 10);
    assert_eq!(
        of(&sent, 0),
        [
            (0, vec![1.0], scheduled(1)),
            (1, vec![4.0], scheduled(4)),
            (2, vec![7.0], scheduled(7))
        ]
    );
    // `src` holds 1 at 1 and 3, 4 at 5, 7 at 7 and 9.
    let periodic: Vec<_> = [
        (0, 1, 1.0),
        (1, 3, 1.0),
        (2, 5, 4.0),
        (3, 7, 7.0),
        (4, 9, 7.0),
    ]
    .into_iter()
    .map(|(n, k, y)| (n, vec![y], scheduled(k)))
    .collect();
    assert_eq!(of(&sent, 1), periodic);
    assert_eq!(
        of(&sent, 2),
        [
            (0, vec![2.0], SendAt::Unscheduled),
            (1, vec![8.0], SendAt::Unscheduled),
            (2, vec![14.0], SendAt::Unscheduled)
        ]
    );
    // Nothing arrived: no answers, no arrival flows.
    for f in [4, 5, 6] {
        assert!(of(&sent, f).is_empty(), "flow {f}");
    }
    assert_eq!(e.flows()[0].schedule(), Some((3, 1)));
    assert_eq!(e.flows()[2].schedule(), None);
    assert!(!e.all_scheduled());
    assert_eq!(e.next_send_boundary(4), 5);
}

/// What `announcements(k0, k1)` gives is what serving `[k0, k1)` sends on
/// the scheduled flows: the same flows, numbers, widths and boundaries,
/// announced flow by flow; split windows give the same packets.
#[test]
fn announcements_match_what_evaluation_sends() {
    let mut e = endpoint();
    run_to(&mut e, 3);
    let announced: Vec<Announcement> = e.announcements(3, 17).collect();
    let mut split: Vec<Announcement> = e.announcements(3, 8).collect();
    split.extend(e.announcements(8, 17));
    split.sort_by_key(|a| (a.flow, a.boundary));
    assert_eq!(announced, split);
    assert!(announced
        .windows(2)
        .all(|w| (w[0].flow, w[0].boundary) < (w[1].flow, w[1].boundary)));
    let sent = run_to(&mut e, 17);
    let mut from_sends: Vec<Announcement> = sent
        .iter()
        .filter(|t| e.flows()[t.flow].schedule().is_some())
        .map(|t| {
            let SendAt::Scheduled { boundary } = t.at else {
                panic!("a scheduled flow sent {:?}", t.at);
            };
            Announcement {
                flow: t.flow,
                number: t.number,
                width: t.values.len(),
                boundary,
            }
        })
        .collect();
    from_sends.sort_by_key(|a| (a.flow, a.boundary));
    assert_eq!(announced, from_sends);
    // Flow 3 (every 5 from 0) at 5, 10, 15; flow 0 at 4, 7, 10, 13, 16.
    let boundaries = |flow| -> Vec<(u64, u64)> {
        announced
            .iter()
            .filter(|a| a.flow == flow)
            .map(|a| (a.number, a.boundary))
            .collect()
    };
    assert_eq!(boundaries(3), [(1, 5), (2, 10), (3, 15)]);
    assert_eq!(boundaries(0), [(1, 4), (2, 7), (3, 10), (4, 13), (5, 16)]);
    assert_eq!(announced.iter().filter(|a| a.flow == 7).count(), 14);
    assert!(announced
        .iter()
        .filter(|a| a.flow == 7)
        .all(|a| a.width == 2));
}

/// A packet of flow 3 answered by `echo` at the instant the driver names:
/// each packet gets its answer at once (flows 4 and 6, numbered by
/// count, sent as answers to its arrival, with `echo`'s output at that
/// instant), and evaluating the boundary sends neither again. The arrival
/// flow from `src`, which answers nothing, sends once per boundary, after
/// the last packet, with `src`'s value after the evaluation.
#[test]
fn answers_go_per_packet_and_arrival_flows_once_per_boundary() {
    let mut e = endpoint();
    run_to(&mut e, 4);
    e.accept(3, 0, &[0.5], ms(3.2), ms(3.2));
    e.accept(3, 0, &[0.75], ms(3.7), ms(3.7));
    let answers: Vec<_> = std::iter::from_fn(|| e.poll_transmit()).collect();
    let answer = |n, u: f64, t: f64| {
        (
            n,
            vec![10.0 * u, ms(t).as_secs_f64() * 1e3],
            SendAt::Answer { arrival: ms(t) },
        )
    };
    assert_eq!(
        answers
            .iter()
            .map(|t| (t.flow, t.number))
            .collect::<Vec<_>>(),
        [(4, 0), (6, 0), (4, 1), (6, 1)],
        "answers in the order they are computed"
    );
    assert_eq!(of(&answers, 4), [answer(0, 0.5, 3.2), answer(1, 0.75, 3.7)]);
    assert_eq!(of(&answers, 6), of(&answers, 4));
    let sent = serve(&mut e);
    assert!(of(&sent, 4).is_empty() && of(&sent, 6).is_empty());
    assert_eq!(
        of(&sent, 5),
        [(0, vec![4.0], SendAt::Answer { arrival: ms(3.7) })]
    );
    e.integrate_step().unwrap();
    // Nothing at 5, 6; one packet at 7, evaluated at the boundary.
    let quiet = run_to(&mut e, 7);
    assert!([4, 5, 6].iter().all(|&f| of(&quiet, f).is_empty()));
    e.accept(3, 0, &[1.0], ms(6.5), SimTime::from_millis(7));
    let sent = serve(&mut e);
    assert_eq!(
        of(&sent, 4),
        [(2, vec![10.0, 7.0], SendAt::Answer { arrival: ms(6.5) })]
    );
    assert_eq!(
        of(&sent, 5),
        [(1, vec![7.0], SendAt::Answer { arrival: ms(6.5) })]
    );
    assert_eq!(e.graph().value("rx_q", "y").unwrap(), &[1.0]);
}

/// Losses: a `multi_packet` flow zeroes the lost element only, a whole
/// sample flow its whole inlet under `zero`, and `hold` keeps the last
/// value; a `multi_packet` packet writes the element its state index names.
#[test]
fn a_loss_zeroes_or_holds_and_multi_packet_works_per_element() {
    let mut e = endpoint();
    run_to(&mut e, 2);
    for f in [7, 8, 9] {
        e.accept(f, 0, &[3.0, 4.0], ms(1.5), ms(1.5));
    }
    e.accept(7, 1, &[5.0], ms(1.6), ms(1.6));
    serve(&mut e);
    let inlet = |e: &Endpoint, name| e.graph().value(name, "y").unwrap().to_vec();
    assert_eq!(inlet(&e, "rx_m"), [3.0, 5.0]);
    e.integrate_step().unwrap();
    e.lose(7, 1);
    e.lose(8, 0);
    e.lose(9, 0);
    serve(&mut e);
    assert_eq!(inlet(&e, "rx_m"), [3.0, 0.0]);
    assert_eq!(inlet(&e, "rx_z"), [0.0, 0.0]);
    assert_eq!(inlet(&e, "rx_hold"), [3.0, 4.0]);
    // The inlet written by a loss counts as a new value at its boundary.
    assert!(e.graph().is_fresh(e.flows()[8].inlet, 0));
    assert!(!e.graph().is_fresh(e.flows()[9].inlet, 0));
}

/// With every flow on a schedule, the next boundary where one sends is
/// the earliest of their next instants.
#[test]
fn the_next_send_boundary_is_the_earliest_scheduled_instant() {
    let mut b = GraphBuilder::new(STEP, SolverKind::Rk4);
    b.component(
        "src",
        Law {
            timing: THIRDS,
            inputs: 0,
            width: 1,
            law: |cx, _| vec![cx.k as f64],
        },
    );
    b.component("rx", Inlet::new(1));
    b.component("rx2", Inlet::new(1));
    let g = b.build().unwrap();
    let flows = vec![
        FlowEnd::new(
            &g,
            (0, 0, 0..1),
            1,
            SendRule::Update,
            LossPolicy::Hold,
            false,
        ),
        FlowEnd::new(
            &g,
            (0, 0, 0..1),
            2,
            SendRule::Periodic {
                period: 5,
                phase: 2,
            },
            LossPolicy::Hold,
            false,
        ),
    ];
    let e = Endpoint::new(g, flows);
    assert!(e.all_scheduled());
    assert_eq!(e.next_send_boundary(0), 1);
    assert_eq!(e.next_send_boundary(1), 2);
    assert_eq!(e.next_send_boundary(2), 4);
    assert_eq!(e.next_send_boundary(6), 7);
    assert_eq!(e.next_send_boundary(10), 12);
}
