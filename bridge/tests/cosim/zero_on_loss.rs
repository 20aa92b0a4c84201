//! `on_loss = "zero"` after a loss in the network. A lost control packet
//! zeroes the actuator at the boundary where it would have taken effect had
//! it arrived when it was lost, but never before the first boundary after it
//! was sent, and the actuator holds zero until the next accepted packet.
//! A loss at the receiver (the builtin channel's, or ns-3's PHY drops) acts
//! where the packet would have arrived; a sender's queue drop, which ns-3
//! reports at the send instant, acts one boundary after the send, as a packet
//! over a link that takes time could at the earliest.

use std::collections::BTreeMap;

use bridge::flows::FlowTable;
use controlsim::error::ObserverError;
use controlsim::view::{LoopObserver, LoopView};
use protocol::{DropEvent, DropReason, SimTime, Step, StepDone};

use crate::support::*;

const H_NS: u64 = 1_000_000;
const T_STEPS: u64 = 10;
const SCHEMES: [&str; 3] = ["time_stepping", "master_slave", "event_driven"];
const EVENT: &str = "trigger = \"event\"";
const TIME: &str = "trigger = \"time\"\nperiod = \"10ms\"";
/// The reference steps at 50 ms; from 100 ms on every control value is off zero.
const NON_ZERO_FROM: usize = 100;

fn text(scheme: &str, controller: &str, builtin: &str) -> String {
    let header = format!("duration = \"3s\"\nstep = \"1ms\"\nseed = 9\n[sync]\nscheme = \"{scheme}\"\nperiod = \"10ms\"\n");
    scenario(
        &header,
        builtin,
        &servo_loop(
            "servo",
            0,
            1,
            controller,
            "downlink = { on_loss = \"zero\" }",
        ),
    )
}

/// The boundary where a loss acts: where the packet would have taken effect
/// had it arrived at `lost_at`, and after the boundary of its send.
fn loss_step(scheme: &str, lost_at: u64, sent: u64) -> u64 {
    let would_have = match scheme {
        "time_stepping" => (lost_at / (T_STEPS * H_NS) + 1) * T_STEPS,
        _ => lost_at.div_ceil(H_NS),
    };
    would_have.max(sent / H_NS + 1)
}

/// The downlink's packet events among `rows`, in the order they act:
/// `(boundary, time, number, lost)`, an accepted packet at the boundary it
/// was applied at, a loss at its [`loss_step`]; at one boundary, by time,
/// then number.
fn downlink_events<'a>(
    scheme: &str,
    rows: impl Iterator<Item = &'a BTreeMap<String, String>>,
) -> Vec<(u64, u64, u64, bool)> {
    let mut events: Vec<(u64, u64, u64, bool)> = rows
        .filter(|r| r["direction"] == "downlink")
        .filter_map(|r| match r["fate"].as_str() {
            "accepted" => Some((
                num(r, "applied_step")?,
                num(r, "arrival_ns")?,
                num(r, "number")?,
                false,
            )),
            fate if fate.starts_with("lost_") => {
                let (lost_at, sent) = (num(r, "lost_at_ns")?, num(r, "sent_ns")?);
                Some((
                    loss_step(scheme, lost_at, sent),
                    lost_at,
                    num(r, "number")?,
                    true,
                ))
            }
            _ => None,
        })
        .collect();
    events.sort();
    events
}

/// Checks the applied control at every boundary against the downlink's
/// packets: it is zero whenever the last packet event at or before the
/// boundary is a loss (or before any packet, the actuator's initial zero),
/// and, once the reference has stepped, non-zero otherwise (before that a
/// controller that has heard no measurement yet rightly sends a zero).
/// Events at one boundary act in canonical order: time, then number.
/// Returns how many losses were checked.
fn check_zeroing(
    scheme: &str,
    controller: &str,
    rows: &[BTreeMap<String, String>],
    applied: &[f64],
) -> usize {
    let events = downlink_events(scheme, rows.iter());
    let losses = events
        .iter()
        .filter(|e| e.3 && (e.0 as usize) < applied.len())
        .count();
    let mut events = events.into_iter().peekable();
    let mut zero = true;
    for (k, &u) in applied.iter().enumerate() {
        while let Some(e) = events.next_if(|e| e.0 <= k as u64) {
            zero = e.3;
        }
        if zero || k >= NON_ZERO_FROM {
            assert_eq!(
                u == 0.0,
                zero,
                "{scheme}, {controller}: applied control {u} at step {k}"
            );
        }
    }
    losses
}

/// Bernoulli losses of the builtin channel are reported at the receiver,
/// when the packet would have arrived.
#[test]
fn a_lost_packet_zeroes_the_actuator_where_it_would_have_acted() {
    let channel = "{ kind = \"uniform\", min = \"1ms\", max = \"6ms\" }\nloss = { kind = \"bernoulli\", p = 0.2 }";
    for scheme in SCHEMES {
        for controller in [EVENT, TIME] {
            let (dir, _) = run_in_tempdir(&text(scheme, controller, channel));
            let run = dir.path().join("run");
            let rows = packet_rows(&run);
            let losses = check_zeroing(scheme, controller, &rows, &column(&run, "servo.u.voltage"));
            assert!(losses > 20, "{scheme}, {controller}: only {losses} losses");
        }
    }
}

/// Has every third control packet dropped by the sender's queue and
/// reported at its send instant, as ns-3 reports queue drops.
struct SenderQueueDrops {
    downlink: u32,
    dropped: Vec<DropEvent>,
}

impl Tap for SenderQueueDrops {
    fn begin_step(&mut self, _reached: SimTime, step: &mut Step) {
        let (dropped, sent): (Vec<_>, Vec<_>) = std::mem::take(&mut step.sends)
            .into_iter()
            .partition(|s| s.flow == self.downlink && s.number % 3 == 0);
        self.dropped.extend(dropped.into_iter().map(|s| DropEvent {
            flow: s.flow,
            number: s.number,
            state_index: s.state_index,
            state_count: s.state_count,
            sent: s.time,
            time: s.time,
            node: 1,
            reason: DropReason::Queue,
        }));
        step.sends = sent;
    }

    fn end_step(&mut self, done: &mut StepDone) {
        let (now, later) = std::mem::take(&mut self.dropped)
            .into_iter()
            .partition(|d| d.time <= done.reached);
        self.dropped = later;
        done.drops.extend(now);
    }
}

/// The applied control at every boundary.
struct Applied(Vec<f64>);

impl LoopObserver for Applied {
    fn observe_loops<V: LoopView + ?Sized>(&mut self, view: &V) -> Result<(), ObserverError> {
        self.0.push(view.applied_control(0)[0]);
        Ok(())
    }
}

/// Dropped by the sender's queue at its send instant, a control packet
/// zeroes the actuator at the first boundary after the send, in every scheme;
/// for a time-triggered controller, which sends on a boundary, that is one
/// boundary later (going by the loss time alone would zero the actuator at
/// the send boundary itself, before the packet could have arrived).
#[test]
fn a_queue_drop_at_the_send_instant_zeroes_the_actuator_one_step_later() {
    for scheme in SCHEMES {
        for controller in [TIME, EVENT] {
            let resolved = resolve(&text(
                scheme,
                controller,
                "{ kind = \"constant\", value = \"3.7ms\" }",
            ));
            let downlink = FlowTable::new(&resolved.loops).downlink(0).unwrap();
            let network = Tapped {
                inner: builtin_channel(&resolved),
                tap: SenderQueueDrops {
                    downlink,
                    dropped: Vec::new(),
                },
            };
            // No plant here moves a node.
            let mut applied = Applied(Vec::new());
            let run = run_session(&resolved, network, &mut applied);
            run.outcome.unwrap();
            run.finished.unwrap();
            let rows = csv_rows(&run.packets.unwrap()[..]);
            assert!(
                rows.iter().all(|r| r["fate"] != "lost_phy"),
                "only queue drops"
            );
            let losses = check_zeroing(scheme, controller, &rows, &applied.0);
            assert!(
                losses > 50,
                "{scheme}, {controller}: only {losses} queue drops"
            );
        }
    }
}

/// Two decoupled lags driven open loop (`u = r`, 1.0 and 2.0) over a
/// `multi_packet` downlink: each channel's value travels in its own packet.
fn two_channel_text(scheme: &str) -> String {
    let header = format!("duration = \"2s\"\nstep = \"1ms\"\nseed = 4\n[sync]\nscheme = \"{scheme}\"\nperiod = \"10ms\"\n");
    let loops = r#"
[[loops]]
name = "pair"
downlink = { multi_packet = true, on_loss = "zero" }
[loops.plant]
kind = "state_space"
a = [[-1.0, 0.0], [0.0, -1.0]]
b = [[1.0, 0.0], [0.0, 1.0]]
c = [[1.0, 0.0], [0.0, 1.0]]
[loops.sensor]
period = "5ms"
[loops.controller]
kind = "open_loop"
[[loops.reference]]
kind = "constant"
value = 1.0
[[loops.reference]]
kind = "constant"
value = 2.0
"#;
    let channel = "{ kind = \"uniform\", min = \"1ms\", max = \"6ms\" }\nloss = { kind = \"bernoulli\", p = 0.2 }";
    scenario(&header, channel, loops)
}

/// With `multi_packet`, a lost packet zeroes only the channel it carried:
/// at every boundary, channel `j` is zero exactly when the last event of
/// state index `j` at or before it is a loss (or before its first packet),
/// and otherwise holds its own value, whatever happened to the other
/// channel's packet of the same sample.
#[test]
fn with_multi_packet_a_loss_zeroes_only_its_own_channel() {
    for scheme in SCHEMES {
        let (dir, _) = run_in_tempdir(&two_channel_text(scheme));
        let run = dir.path().join("run");
        let rows = packet_rows(&run);
        let applied = [column(&run, "pair.u.u0"), column(&run, "pair.u.u1")];
        let mut only_one_zero = 0;
        let mut zero_at = [vec![], vec![]];
        for (j, value) in [1.0, 2.0].into_iter().enumerate() {
            let events = downlink_events(
                scheme,
                rows.iter()
                    .filter(|r| num(r, "state_index") == Some(j as u64)),
            );
            let mut events = events.into_iter().peekable();
            let mut zero = true;
            for (k, &u) in applied[j].iter().enumerate() {
                while let Some(e) = events.next_if(|e| e.0 <= k as u64) {
                    zero = e.3;
                }
                assert_eq!(
                    u,
                    if zero { 0.0 } else { value },
                    "{scheme}: channel {j} at step {k}"
                );
                zero_at[j].push(zero);
            }
        }
        for (a, b) in zero_at[0].iter().zip(&zero_at[1]) {
            if a != b {
                only_one_zero += 1;
            }
        }
        assert!(
            only_one_zero > 100,
            "{scheme}: {only_one_zero} boundaries with one channel zeroed and the other not"
        );
    }
}
