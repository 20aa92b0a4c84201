//! `builtin`: an in-process statistical channel with the stepping semantics
//! of the ns-3 server.
//!
//! Each packet, when its send time comes, draws a delay from the delay model
//! and then a loss decision from the loss model, both from a random stream of
//! its own flow (ChaCha8 seeded from the scenario's seed and run number, one
//! stream per flow), so adding a flow never changes another flow's draws. A
//! lost packet is reported as a [`DropReason::Phy`] drop at the receiver at
//! the time it would have arrived, as ns-3's receive error model does.
//! Packets are independent: there is no queue, so packets of one flow may
//! overtake each other when the delay is random (which `drop_stale` needs).
//!
//! A delay whose arrival time would not fit in [`SimTime`] (a rare draw from
//! the tail of `normal` or `exponential`, say) never arrives: the packet is
//! still in flight when the run ends, as it would be for any arrival after
//! the end. Deterministic, and no overflow. The scenario check
//! ([`BuiltinNetwork::delay_reach`]) keeps the delay parameters themselves
//! well inside the time range.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use protocol::{
    Configured, Delivery, DropEvent, DropReason, FlowCounters, FlowSpec, SendRequest, SimTime,
    Step, StepDone, Summary,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp, Normal};
use serde::{Deserialize, Serialize};

use super::{Network, NetworkError};

/// How long a packet takes from send to delivery.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum DelayModel {
    /// Always `value`.
    Constant {
        #[serde(with = "protocol::duration")]
        value: SimTime,
    },
    /// Uniform on `[min, max]`.
    Uniform {
        #[serde(with = "protocol::duration")]
        min: SimTime,
        #[serde(with = "protocol::duration")]
        max: SimTime,
    },
    /// Normal with `mean` and `std`, truncated at zero by redrawing.
    Normal {
        #[serde(with = "protocol::duration")]
        mean: SimTime,
        #[serde(with = "protocol::duration")]
        std: SimTime,
    },
    /// `offset` plus an exponential with the given `mean`.
    Exponential {
        #[serde(with = "protocol::duration")]
        mean: SimTime,
        #[serde(with = "protocol::duration", default)]
        offset: SimTime,
    },
    /// Drawn uniformly from measured samples in `file`: one value per line,
    /// either a duration with a unit ("3.2ms") or a number in `unit`
    /// (default 1ms); blank lines and lines starting with `#` are skipped. A
    /// relative path is relative to the scenario file.
    Empirical {
        file: PathBuf,
        #[serde(with = "protocol::duration", default = "one_millisecond")]
        unit: SimTime,
    },
}

fn one_millisecond() -> SimTime {
    SimTime::from_millis(1)
}

/// Whether a packet is lost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossModel {
    /// No loss. A struct variant, not a unit one: serde lets a unit variant
    /// of a tagged enum ignore other keys, and `{ kind = "none", p = 0.1 }`
    /// must be an error like any unknown key.
    None {},
    /// Each packet lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// Two-state Markov chain per flow, starting in the good state, stepping
    /// once per packet: good → bad with `p_good_to_bad`, bad → good with
    /// `p_bad_to_good`; a packet is lost with `loss_good` or `loss_bad`
    /// depending on the state it finds.
    GilbertElliott {
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        #[serde(default)]
        loss_good: f64,
        #[serde(default = "one")]
        loss_bad: f64,
    },
}

impl Default for LossModel {
    fn default() -> Self {
        LossModel::None {}
    }
}

fn one() -> f64 {
    1.0
}

/// The builtin channel's settings, as written in a scenario's `[network]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuiltinConfig {
    pub delay: DelayModel,
    #[serde(default)]
    pub loss: LossModel,
}

/// Invalid settings or an invalid step.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuiltinError {
    #[error("network.delay: {0}")]
    Delay(String),
    #[error("network.loss: {0}")]
    Loss(String),
    #[error("step to {until} is before the time already reached, {reached}")]
    UntilInPast { until: SimTime, reached: SimTime },
    #[error("send of packet {number} on flow {flow} at {time} is before the time already reached, {reached}")]
    SendInPast {
        flow: u32,
        number: u64,
        time: SimTime,
        reached: SimTime,
    },
    #[error("send on flow {flow}, which was never configured (at {reached})")]
    UnknownFlow { flow: u32, reached: SimTime },
    #[error("configure(): {message}")]
    Config { message: String, reached: SimTime },
}

impl BuiltinError {
    pub fn reached(&self) -> SimTime {
        match self {
            BuiltinError::UntilInPast { reached, .. }
            | BuiltinError::SendInPast { reached, .. }
            | BuiltinError::UnknownFlow { reached, .. }
            | BuiltinError::Config { reached, .. } => *reached,
            _ => SimTime::ZERO,
        }
    }
}

/// A delay model with its samples loaded and its parameters checked.
#[derive(Clone, Debug)]
enum DelaySampler {
    Constant(SimTime),
    Uniform { min: u64, max: u64 },
    Normal(Normal<f64>),
    Exponential { offset: SimTime, dist: Exp<f64> },
    Empirical(Vec<SimTime>),
}

impl DelaySampler {
    fn new(
        model: &DelayModel,
        base_dir: &Path,
        read_file: ReadFile<'_>,
    ) -> Result<Self, BuiltinError> {
        let bad = |m: String| BuiltinError::Delay(m);
        Ok(match model {
            DelayModel::Constant { value } => DelaySampler::Constant(*value),
            DelayModel::Uniform { min, max } => {
                if min > max {
                    return Err(bad(format!("uniform: min {min} is greater than max {max}")));
                }
                DelaySampler::Uniform {
                    min: min.0,
                    max: max.0,
                }
            }
            DelayModel::Normal { mean, std } => DelaySampler::Normal(
                Normal::new(mean.as_secs_f64(), std.as_secs_f64())
                    .map_err(|e| bad(format!("normal: {e}")))?,
            ),
            DelayModel::Exponential { mean, offset } => {
                if mean.0 == 0 {
                    return Err(bad("exponential: mean must be greater than zero".into()));
                }
                DelaySampler::Exponential {
                    offset: *offset,
                    dist: Exp::new(1.0 / mean.as_secs_f64())
                        .map_err(|e| bad(format!("exponential: {e}")))?,
                }
            }
            DelayModel::Empirical { file, unit } => {
                DelaySampler::Empirical(load_samples(&base_dir.join(file), *unit, read_file)?)
            }
        })
    }

    fn sample(&self, rng: &mut ChaCha8Rng) -> SimTime {
        match self {
            DelaySampler::Constant(d) => *d,
            DelaySampler::Uniform { min, max } => SimTime(rng.random_range(*min..=*max)),
            DelaySampler::Normal(dist) => {
                // Redraw negative values; a mean below zero is impossible (durations
                // are unsigned), so at least half the mass is kept and this ends.
                loop {
                    let x = dist.sample(rng);
                    if x >= 0.0 {
                        return seconds_to_time(x);
                    }
                }
            }
            // Saturates: a draw past the time range never arrives (see transmit).
            DelaySampler::Exponential { offset, dist } => {
                SimTime(offset.0.saturating_add(seconds_to_time(dist.sample(rng)).0))
            }
            DelaySampler::Empirical(samples) => samples[rng.random_range(0..samples.len())],
        }
    }
}

/// Nearest nanosecond; `u64::MAX` for anything at or past it (Rust's float
/// to integer conversion saturates).
fn seconds_to_time(seconds: f64) -> SimTime {
    SimTime((seconds * 1e9).round() as u64)
}

/// The parameter of a delay model that reaches furthest in time, and how
/// far: the largest delay of a bounded model (`constant`, `uniform`,
/// `empirical`), the mean delay plus one standard deviation of `normal`,
/// and `offset + mean` of `exponential`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelayReach {
    /// The key inside `delay`: `value`, `max`, `mean` or `file`.
    pub key: &'static str,
    /// Nanoseconds; may exceed `u64` (a sum of two durations).
    pub nanos: u128,
    /// What was summed, for messages: "max", "mean + std", ...
    pub what: &'static str,
}

impl DelayReach {
    fn of(model: &DelayModel, sampler: &DelaySampler) -> DelayReach {
        let reach = |key, nanos, what| DelayReach { key, nanos, what };
        match (model, sampler) {
            (DelayModel::Constant { value }, _) => reach("value", value.0 as u128, "value"),
            (DelayModel::Uniform { max, .. }, _) => reach("max", max.0 as u128, "max"),
            (DelayModel::Normal { mean, std }, _) => {
                reach("mean", mean.0 as u128 + std.0 as u128, "mean + std")
            }
            (DelayModel::Exponential { mean, offset }, _) => {
                reach("mean", mean.0 as u128 + offset.0 as u128, "offset + mean")
            }
            (DelayModel::Empirical { .. }, DelaySampler::Empirical(samples)) => reach(
                "file",
                samples.iter().max().map_or(0, |s| s.0 as u128),
                "largest sample",
            ),
            (DelayModel::Empirical { .. }, _) => {
                unreachable!("an empirical model has an empirical sampler")
            }
        }
    }
}

/// The most samples an `empirical` delay file holds. A draw is one index,
/// but every run keeps the table, and a sweep reads it once per run.
pub const MAX_DELAY_SAMPLES: usize = 1_000_000;

/// How the builtin network reads the files a scenario names (an empirical
/// delay file): the application passes its reader, with its size cap and
/// its error text, so this crate does no file I/O of its own.
pub type ReadFile<'a> = &'a dyn Fn(&Path) -> Result<String, String>;

fn load_samples(
    path: &Path,
    unit: SimTime,
    read_file: ReadFile<'_>,
) -> Result<Vec<SimTime>, BuiltinError> {
    let text = read_file(path).map_err(|e| {
        BuiltinError::Delay(format!("empirical: cannot read {}: {e}", path.display()))
    })?;
    parse_empirical_samples(path, &text, unit)
}

/// The samples of an empirical delay file's text (`path` names it in
/// messages): one delay a line, a number of `unit`s or a time with its unit;
/// `#` comments and blank lines are skipped. Apart from reading, so the
/// parser can be fuzzed (tests/fuzz).
///
/// # Errors
/// The first bad line, by number, or a file without samples.
pub fn parse_empirical_samples(
    path: &Path,
    text: &str,
    unit: SimTime,
) -> Result<Vec<SimTime>, BuiltinError> {
    let mut samples = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if samples.len() == MAX_DELAY_SAMPLES {
            return Err(BuiltinError::Delay(format!(
                "empirical: {}:{}: more than {} samples, the most an empirical delay file may hold (docs/robustness.md, limits)",
                path.display(),
                index + 1,
                MAX_DELAY_SAMPLES
            )));
        }
        // A long line is quoted by its start only.
        let shown = crate::echo::shorten_line(line);
        let parsed = match line.parse::<f64>() {
            Ok(x) if x >= 0.0 && x.is_finite() => Ok(seconds_to_time(x * unit.as_secs_f64())),
            Ok(_) => Err(format!("{shown:?} is negative or not finite")),
            Err(_) => line
                .parse::<SimTime>()
                .map_err(|e| e.to_string().replace(line, &shown)),
        };
        samples.push(parsed.map_err(|e| {
            BuiltinError::Delay(format!("empirical: {}:{}: {e}", path.display(), index + 1))
        })?);
    }
    if samples.is_empty() {
        return Err(BuiltinError::Delay(format!(
            "empirical: {} holds no samples",
            path.display()
        )));
    }
    Ok(samples)
}

fn check_probability(name: &str, p: f64) -> Result<(), BuiltinError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(BuiltinError::Loss(format!(
            "{name} = {p} is not a probability in [0, 1]"
        )))
    }
}

impl LossModel {
    fn validate(&self) -> Result<(), BuiltinError> {
        match self {
            LossModel::None {} => Ok(()),
            LossModel::Bernoulli { p } => check_probability("p", *p),
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => {
                check_probability("p_good_to_bad", *p_good_to_bad)?;
                check_probability("p_bad_to_good", *p_bad_to_good)?;
                check_probability("loss_good", *loss_good)?;
                check_probability("loss_bad", *loss_bad)
            }
        }
    }
}

/// Per-flow random stream and loss-chain state.
struct FlowState {
    spec: FlowSpec,
    rng: ChaCha8Rng,
    in_bad_state: bool,
    counters: FlowCounters,
}

/// A packet on its way: delivered or dropped at `time`.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct InFlight {
    time: SimTime,
    /// Order of sending, so that equal times resolve as ns-3 would (FIFO).
    sequence: u64,
    lost: bool,
    flow: u32,
    number: u64,
    state_index: u16,
    state_count: u16,
    sent: SimTime,
    size: u32,
}

pub struct BuiltinNetwork {
    description: String,
    delay: DelaySampler,
    /// See [`BuiltinNetwork::delay_reach`].
    reach: DelayReach,
    loss: LossModel,
    seed: u64,
    flows: Vec<FlowState>,
    /// Sends not yet at their time, ordered by (time, order of arrival).
    scheduled: BinaryHeap<Reverse<(SimTime, u64, SendKey)>>,
    in_flight: BinaryHeap<Reverse<InFlight>>,
    sequence: u64,
    reached: SimTime,
    /// Answers of steps begun and not yet collected, oldest first.
    pending: std::collections::VecDeque<StepDone>,
}

/// What the channel is and how far it has run (its queues are not shown).
impl std::fmt::Debug for BuiltinNetwork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinNetwork")
            .field("description", &self.description)
            .field("reached", &self.reached)
            .finish_non_exhaustive()
    }
}

/// A send waiting for its time; ordered only by the heap key before it.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct SendKey {
    flow: u32,
    number: u64,
    state_index: u16,
    state_count: u16,
    size: u32,
}

impl BuiltinNetwork {
    /// A channel seeded from the scenario's `seed` and replication `run`.
    /// `base_dir` resolves relative sample files, which `read_file` reads.
    ///
    /// # Errors
    /// Invalid parameters or an unreadable sample file, naming the key.
    pub fn new(
        config: &BuiltinConfig,
        seed: u64,
        run: u64,
        base_dir: &Path,
        read_file: ReadFile<'_>,
    ) -> Result<Self, BuiltinError> {
        config.loss.validate()?;
        let delay = DelaySampler::new(&config.delay, base_dir, read_file)?;
        Ok(BuiltinNetwork {
            description: format!(
                "builtin channel: {}, {}",
                config.delay.describe(),
                config.loss.describe()
            ),
            reach: DelayReach::of(&config.delay, &delay),
            delay,
            loss: config.loss.clone(),
            // Replications differ by run number, as in ns-3 (RngSeedManager::SetRun).
            seed: seed ^ run.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            flows: Vec::new(),
            scheduled: BinaryHeap::new(),
            in_flight: BinaryHeap::new(),
            sequence: 0,
            reached: SimTime::ZERO,
            pending: std::collections::VecDeque::new(),
        })
    }

    /// How far the delay model's parameters reach, for the scenario check:
    /// a run's `duration` plus this must stay in the time range.
    pub fn delay_reach(&self) -> &DelayReach {
        &self.reach
    }

    /// Draws the fate of one packet at its send time.
    fn transmit(&mut self, time: SimTime, key: SendKey) {
        let flow = &mut self.flows[key.flow as usize];
        let delay = self.delay.sample(&mut flow.rng);
        let lost = match self.loss {
            LossModel::None {} => false,
            LossModel::Bernoulli { p } => flow.rng.random::<f64>() < p,
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => {
                let p = if flow.in_bad_state {
                    loss_bad
                } else {
                    loss_good
                };
                let lost = flow.rng.random::<f64>() < p;
                let flip = if flow.in_bad_state {
                    p_bad_to_good
                } else {
                    p_good_to_bad
                };
                if flow.rng.random::<f64>() < flip {
                    flow.in_bad_state = !flow.in_bad_state;
                }
                lost
            }
        };
        flow.counters.sent += 1;
        self.sequence += 1;
        // An arrival past the end of simulated time never happens.
        let Some(arrival) = time.checked_add(delay) else {
            return;
        };
        self.in_flight.push(Reverse(InFlight {
            time: arrival,
            sequence: self.sequence,
            lost,
            flow: key.flow,
            number: key.number,
            state_index: key.state_index,
            state_count: key.state_count,
            sent: time,
            size: key.size,
        }));
    }

    /// Runs events in time order up to `until`, or up to the first control
    /// delivery and everything else at that instant.
    fn run(&mut self, until: SimTime, stop_at_delivery: bool) -> StepDone {
        let mut done = StepDone {
            reached: until,
            deliveries: Vec::new(),
            drops: Vec::new(),
        };
        let mut stop_at: Option<SimTime> = None;
        loop {
            let horizon = stop_at.unwrap_or(until);
            let next_send = self
                .scheduled
                .peek()
                .map(|Reverse((t, ..))| *t)
                .filter(|t| *t <= horizon);
            let next_arrival = self
                .in_flight
                .peek()
                .map(|Reverse(p)| p.time)
                .filter(|t| *t <= horizon);
            match (next_send, next_arrival) {
                // Sends before arrivals at the same instant, as ns-3 runs the
                // send events scheduled at step start before later receptions.
                (Some(ts), arrival) if arrival.is_none_or(|ta| ts <= ta) => {
                    let Reverse((time, _, key)) = self.scheduled.pop().expect("peeked");
                    self.transmit(time, key);
                }
                (_, Some(_)) => {
                    let Reverse(p) = self.in_flight.pop().expect("peeked");
                    let flow = &mut self.flows[p.flow as usize];
                    if p.lost {
                        flow.counters.dropped += 1;
                        done.drops.push(DropEvent {
                            flow: p.flow,
                            number: p.number,
                            state_index: p.state_index,
                            state_count: p.state_count,
                            sent: p.sent,
                            time: p.time,
                            node: flow.spec.dst,
                            reason: DropReason::Phy,
                        });
                    } else {
                        flow.counters.delivered += 1;
                        if stop_at_delivery && flow.spec.stop_on_delivery && stop_at.is_none() {
                            stop_at = Some(p.time);
                            done.reached = p.time;
                        }
                        done.deliveries.push(Delivery {
                            flow: p.flow,
                            number: p.number,
                            state_index: p.state_index,
                            state_count: p.state_count,
                            sent: p.sent,
                            received: p.time,
                            size: p.size,
                        });
                    }
                }
                _ => break,
            }
        }
        self.reached = done.reached;
        done
    }
}

impl Network for BuiltinNetwork {
    fn configure(&mut self, flows: &[FlowSpec]) -> Result<Configured, NetworkError> {
        let reached = self.reached;
        let mut states = Vec::with_capacity(flows.len());
        for (index, spec) in flows.iter().enumerate() {
            if spec.flow as usize != index {
                let message = format!(
                    "flow ids must be 0..n in order; flow #{index} has id {}",
                    spec.flow
                );
                return Err(BuiltinError::Config { message, reached }.into());
            }
            if let Some(other) = flows[..index]
                .iter()
                .find(|f| f.dst == spec.dst && f.port == spec.port)
            {
                let message = format!(
                    "flows {} and {} both use port {} on node {}",
                    other.flow, spec.flow, spec.port, spec.dst
                );
                return Err(BuiltinError::Config { message, reached }.into());
            }
            let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
            rng.set_stream(spec.flow as u64);
            states.push(FlowState {
                spec: spec.clone(),
                rng,
                in_bad_state: false,
                counters: FlowCounters {
                    flow: spec.flow,
                    sent: 0,
                    delivered: 0,
                    dropped: 0,
                },
            });
        }
        self.flows = states;
        let node_count = flows
            .iter()
            .map(|f| f.src.max(f.dst) + 1)
            .max()
            .unwrap_or(0);
        Ok(Configured {
            node_count,
            description: self.description.clone(),
        })
    }

    fn begin_step(&mut self, step: Step) -> Result<(), NetworkError> {
        let reached = self.reached;
        if step.until < reached {
            return Err(BuiltinError::UntilInPast {
                until: step.until,
                reached,
            }
            .into());
        }
        for SendRequest {
            flow,
            number,
            state_index,
            state_count,
            time,
            size,
        } in step.sends
        {
            if time < reached {
                return Err(BuiltinError::SendInPast {
                    flow,
                    number,
                    time,
                    reached,
                }
                .into());
            }
            if flow as usize >= self.flows.len() {
                return Err(BuiltinError::UnknownFlow { flow, reached }.into());
            }
            self.sequence += 1;
            self.scheduled.push(Reverse((
                time,
                self.sequence,
                SendKey {
                    flow,
                    number,
                    state_index,
                    state_count,
                    size,
                },
            )));
        }
        // Kinematics do not affect a statistical channel.
        let done = self.run(step.until, step.stop_at_delivery);
        self.pending.push_back(done);
        Ok(())
    }

    fn end_step(&mut self) -> Result<StepDone, NetworkError> {
        Ok(self
            .pending
            .pop_front()
            .expect("end_step() without begin_step()"))
    }

    fn finish(&mut self) -> Result<Summary, NetworkError> {
        Ok(Summary {
            reached: self.reached,
            flows: self.flows.iter().map(|f| f.counters.clone()).collect(),
        })
    }

    fn reached(&self) -> SimTime {
        self.reached
    }

    fn uses_kinematics(&self) -> bool {
        false
    }

    fn may_deliver_instantly(&self) -> bool {
        match &self.delay {
            DelaySampler::Constant(d) => d.0 == 0,
            DelaySampler::Uniform { min, .. } => *min == 0,
            // Truncated at zero, or rounded to a nanosecond: zero can happen.
            DelaySampler::Normal(_) => true,
            DelaySampler::Exponential { offset, .. } => offset.0 == 0,
            DelaySampler::Empirical(samples) => samples.contains(&SimTime::ZERO),
        }
    }

    fn software(&self) -> String {
        format!("netloop builtin channel {}", env!("CARGO_PKG_VERSION"))
    }
}

impl DelayModel {
    fn describe(&self) -> String {
        match self {
            DelayModel::Constant { value } => format!("constant delay {value}"),
            DelayModel::Uniform { min, max } => format!("uniform delay [{min}, {max}]"),
            DelayModel::Normal { mean, std } => {
                format!("normal delay (mean {mean}, std {std}, truncated at 0)")
            }
            DelayModel::Exponential { mean, offset } => {
                format!("exponential delay (mean {mean}, offset {offset})")
            }
            DelayModel::Empirical { file, .. } => {
                format!("empirical delay from {}", file.display())
            }
        }
    }
}

impl LossModel {
    fn describe(&self) -> String {
        match self {
            LossModel::None {} => "no loss".into(),
            LossModel::Bernoulli { p } => format!("Bernoulli loss p={p}"),
            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => format!(
                "Gilbert-Elliott loss (g->b {p_good_to_bad}, b->g {p_bad_to_good}, loss {loss_good}/{loss_bad})"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::Transport;

    /// The tests' file reader: the file whole, unlike the application's.
    fn read_file(path: &Path) -> Result<String, String> {
        std::fs::read_to_string(path).map_err(|e| e.to_string())
    }

    fn flow(flow: u32, src: u32, dst: u32, stop: bool) -> FlowSpec {
        FlowSpec {
            flow,
            port: 9000 + flow as u16,
            src,
            dst,
            transport: Transport::Udp,
            stop_on_delivery: stop,
        }
    }

    fn send(flow: u32, number: u64, time: SimTime) -> SendRequest {
        SendRequest {
            flow,
            number,
            state_index: 0,
            state_count: 1,
            time,
            size: 64,
        }
    }

    fn network(
        delay: DelayModel,
        loss: LossModel,
        seed: u64,
        run: u64,
        flows: &[FlowSpec],
    ) -> BuiltinNetwork {
        let mut net = BuiltinNetwork::new(
            &BuiltinConfig { delay, loss },
            seed,
            run,
            Path::new("."),
            &read_file,
        )
        .unwrap();
        net.configure(flows).unwrap();
        net
    }

    fn step(
        net: &mut BuiltinNetwork,
        until: SimTime,
        stop: bool,
        sends: Vec<SendRequest>,
    ) -> StepDone {
        net.step(Step {
            until,
            stop_at_delivery: stop,
            sends,
            kinematics: vec![],
        })
        .unwrap()
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// Sends `n` packets on flow 0, one per ms, and returns (lost?, delay) per packet.
    fn fates(net: &mut BuiltinNetwork, n: u64) -> Vec<(bool, Option<SimTime>)> {
        let sends = (0..n).map(|i| send(0, i, ms(i))).collect();
        let done = step(net, ms(n + 100_000), false, sends);
        let mut out = vec![(false, None); n as usize];
        for d in done.deliveries {
            out[d.number as usize].1 = Some(d.received - d.sent);
        }
        for d in done.drops {
            out[d.number as usize].0 = true;
        }
        out
    }

    #[test]
    fn constant_delay_is_exact() {
        let d = SimTime(3_700_123);
        let mut net = network(
            DelayModel::Constant { value: d },
            LossModel::None {},
            1,
            1,
            &[flow(0, 0, 1, false)],
        );
        let done = step(
            &mut net,
            ms(100),
            false,
            (0..50).map(|i| send(0, i, ms(i))).collect(),
        );
        assert_eq!(done.reached, ms(100));
        assert_eq!(done.deliveries.len(), 50);
        for (i, p) in done.deliveries.iter().enumerate() {
            assert_eq!(
                (p.number, p.sent, p.received),
                (i as u64, ms(i as u64), ms(i as u64) + d)
            );
        }
    }

    #[test]
    fn events_after_until_wait_for_the_next_step() {
        let mut net = network(
            DelayModel::Constant { value: ms(5) },
            LossModel::None {},
            1,
            1,
            &[flow(0, 0, 1, false)],
        );
        let first = step(&mut net, ms(4), false, vec![send(0, 0, ms(0))]);
        assert!(first.deliveries.is_empty());
        assert_eq!(first.reached, ms(4));
        // Exactly at `until` is included.
        let second = step(&mut net, ms(5), false, vec![]);
        assert_eq!(second.deliveries.len(), 1);
        assert_eq!(second.deliveries[0].received, ms(5));
    }

    #[test]
    fn stop_at_delivery_stops_at_the_first_control_delivery_with_everything_at_that_instant() {
        // Flow 0 (control) and flow 1 (not control) both arrive at 3ms; flow 0
        // again at 4ms. The step must end at 3ms with both 3ms deliveries.
        let flows = [flow(0, 0, 1, true), flow(1, 0, 2, false)];
        let mut net = network(
            DelayModel::Constant { value: ms(2) },
            LossModel::None {},
            1,
            1,
            &flows,
        );
        let sends = vec![
            send(1, 0, ms(1)),
            send(0, 0, ms(1)),
            send(0, 1, ms(2)),
            send(1, 1, ms(0)),
        ];
        let done = step(&mut net, ms(10), true, sends);
        assert_eq!(done.reached, ms(3));
        let got: Vec<(u32, u64, SimTime)> = done
            .deliveries
            .iter()
            .map(|d| (d.flow, d.number, d.received))
            .collect();
        assert_eq!(got, [(1, 1, ms(2)), (1, 0, ms(3)), (0, 0, ms(3))]);
        let rest = step(&mut net, ms(10), true, vec![]);
        assert_eq!(rest.reached, ms(4));
        assert_eq!(rest.deliveries.len(), 1);
        // Non-control deliveries never stop a step.
        let mut net = network(
            DelayModel::Constant { value: ms(2) },
            LossModel::None {},
            1,
            1,
            &flows,
        );
        let done = step(&mut net, ms(10), true, vec![send(1, 0, ms(1))]);
        assert_eq!((done.reached, done.deliveries.len()), (ms(10), 1));
    }

    #[test]
    fn invalid_steps_are_errors_naming_the_times() {
        let mut net = network(
            DelayModel::Constant { value: ms(1) },
            LossModel::None {},
            1,
            1,
            &[flow(0, 0, 1, false)],
        );
        step(&mut net, ms(10), false, vec![]);
        let past = net.step(Step {
            until: ms(5),
            stop_at_delivery: false,
            sends: vec![],
            kinematics: vec![],
        });
        let text = past.unwrap_err().to_string();
        assert!(text.contains("5ms") && text.contains("10ms"), "{text}");
        let late_send = net.step(Step {
            until: ms(20),
            stop_at_delivery: false,
            sends: vec![send(0, 3, ms(9))],
            kinematics: vec![],
        });
        assert!(late_send.unwrap_err().to_string().contains("9ms"));
        let unknown = net.step(Step {
            until: ms(20),
            stop_at_delivery: false,
            sends: vec![send(7, 0, ms(15))],
            kinematics: vec![],
        });
        assert!(matches!(
            unknown,
            Err(NetworkError::Builtin(BuiltinError::UnknownFlow {
                flow: 7,
                ..
            }))
        ));
    }

    #[test]
    fn same_seed_and_run_repeat_and_another_run_differs() {
        let delay = DelayModel::Uniform {
            min: ms(1),
            max: ms(20),
        };
        let loss = LossModel::Bernoulli { p: 0.2 };
        let flows = [flow(0, 0, 1, false)];
        let a = fates(&mut network(delay.clone(), loss.clone(), 7, 1, &flows), 500);
        let b = fates(&mut network(delay.clone(), loss.clone(), 7, 1, &flows), 500);
        let c = fates(&mut network(delay.clone(), loss.clone(), 7, 2, &flows), 500);
        let d = fates(&mut network(delay, loss, 8, 1, &flows), 500);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn a_new_flow_does_not_change_the_draws_of_another() {
        let delay = DelayModel::Exponential {
            mean: ms(5),
            offset: ms(1),
        };
        let alone = fates(
            &mut network(
                delay.clone(),
                LossModel::Bernoulli { p: 0.3 },
                3,
                1,
                &[flow(0, 0, 1, false)],
            ),
            200,
        );
        let mut both = network(
            delay,
            LossModel::Bernoulli { p: 0.3 },
            3,
            1,
            &[flow(0, 0, 1, false), flow(1, 1, 0, false)],
        );
        let mut sends: Vec<SendRequest> = (0..200).map(|i| send(1, i, ms(i))).collect();
        sends.extend((0..200).map(|i| send(0, i, ms(i))));
        let done = step(&mut both, ms(1_000_000), false, sends);
        let mut with_other = vec![(false, None); 200];
        for d in done.deliveries.iter().filter(|d| d.flow == 0) {
            with_other[d.number as usize].1 = Some(d.received - d.sent);
        }
        for d in done.drops.iter().filter(|d| d.flow == 0) {
            with_other[d.number as usize].0 = true;
        }
        assert_eq!(alone, with_other);
    }

    /// Bernoulli: the loss count of n packets is Binomial(n, p); 3σ bound.
    #[test]
    fn bernoulli_loss_fraction_is_p() {
        let n = 20_000;
        let p = 0.2;
        let lost = fates(
            &mut network(
                DelayModel::Constant { value: ms(1) },
                LossModel::Bernoulli { p },
                11,
                1,
                &[flow(0, 0, 1, false)],
            ),
            n,
        )
        .iter()
        .filter(|(lost, _)| *lost)
        .count() as f64;
        let sigma = (n as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (lost - n as f64 * p).abs() < 3.0 * sigma,
            "lost {lost} of {n}"
        );
    }

    /// Gilbert-Elliott with loss_good = 0, loss_bad = 1: the stationary loss
    /// rate is p_gb / (p_gb + p_bg) and loss bursts are geometric with mean
    /// 1 / p_bg.
    #[test]
    fn gilbert_elliott_matches_its_stationary_rate_and_burst_length() {
        let (p_gb, p_bg) = (0.05, 0.25);
        let loss = LossModel::GilbertElliott {
            p_good_to_bad: p_gb,
            p_bad_to_good: p_bg,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let out = fates(
            &mut network(
                DelayModel::Constant { value: ms(1) },
                loss,
                5,
                1,
                &[flow(0, 0, 1, false)],
            ),
            100_000,
        );
        let losses = out.iter().filter(|(l, _)| *l).count() as f64;
        let rate = losses / out.len() as f64;
        let expected = p_gb / (p_gb + p_bg);
        assert!(
            (rate - expected).abs() < 0.01,
            "loss rate {rate}, expected {expected}"
        );
        let bursts = out.windows(2).filter(|w| w[1].0 && !w[0].0).count() as f64;
        let mean_burst = losses / bursts;
        assert!(
            (mean_burst - 1.0 / p_bg).abs() < 0.15,
            "mean burst {mean_burst}, expected {}",
            1.0 / p_bg
        );
    }

    fn delay_stats(model: DelayModel, n: u64) -> (f64, f64, f64, f64) {
        let out = fates(
            &mut network(model, LossModel::None {}, 9, 1, &[flow(0, 0, 1, false)]),
            n,
        );
        let d: Vec<f64> = out.iter().map(|(_, d)| d.unwrap().as_secs_f64()).collect();
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (d.len() - 1) as f64;
        let min = d.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = d.iter().cloned().fold(0.0, f64::max);
        (mean, var.sqrt(), min, max)
    }

    #[test]
    fn uniform_exponential_and_normal_delays_have_their_moments() {
        let n = 20_000;
        // Uniform [2ms, 8ms]: mean 5ms, std 6ms/sqrt(12).
        let (mean, std, min, max) = delay_stats(
            DelayModel::Uniform {
                min: ms(2),
                max: ms(8),
            },
            n,
        );
        assert!(
            (mean - 5e-3).abs() < 3.0 * 1.7321e-3 / (n as f64).sqrt(),
            "uniform mean {mean}"
        );
        assert!(
            (std - 6e-3 / 12f64.sqrt()).abs() < 5e-5,
            "uniform std {std}"
        );
        assert!(min >= 2e-3 && max <= 8e-3);
        // Exponential mean 4ms + offset 1ms: mean 5ms, std 4ms, min ≥ 1ms.
        let (mean, std, min, _) = delay_stats(
            DelayModel::Exponential {
                mean: ms(4),
                offset: ms(1),
            },
            n,
        );
        assert!(
            (mean - 5e-3).abs() < 3.0 * 4e-3 / (n as f64).sqrt(),
            "exponential mean {mean}"
        );
        assert!((std - 4e-3).abs() < 2e-4, "exponential std {std}");
        assert!(min >= 1e-3);
        // Normal mean 10ms std 1ms: truncation at 0 is 10σ away, so untouched.
        let (mean, std, min, _) = delay_stats(
            DelayModel::Normal {
                mean: ms(10),
                std: ms(1),
            },
            n,
        );
        assert!(
            (mean - 10e-3).abs() < 3.0 * 1e-3 / (n as f64).sqrt(),
            "normal mean {mean}"
        );
        assert!((std - 1e-3).abs() < 5e-5, "normal std {std}");
        assert!(min > 0.0);
        // Heavily truncated normal never goes negative.
        let (_, _, min, _) = delay_stats(
            DelayModel::Normal {
                mean: ms(1),
                std: ms(5),
            },
            2_000,
        );
        assert!(min >= 0.0);
    }

    /// Exponential with mean 2^63 ns: a draw passes 2^64 ns (and the old
    /// `time + delay` panicked) with probability e^-2 each. Such packets
    /// never arrive; every other one arrives at exactly sent + its delay,
    /// and the same seed gives the same fates.
    #[test]
    fn a_delay_past_the_time_range_never_arrives_and_does_not_panic() {
        let model = DelayModel::Exponential {
            mean: SimTime(1 << 63),
            offset: SimTime::ZERO,
        };
        let n = 200;
        let run_once = || {
            let mut net = network(
                model.clone(),
                LossModel::None {},
                4,
                1,
                &[flow(0, 0, 1, false)],
            );
            let done = step(
                &mut net,
                SimTime::MAX,
                false,
                (0..n).map(|i| send(0, i, ms(i))).collect(),
            );
            (done, net.finish().unwrap())
        };
        let (done, summary) = run_once();
        assert_eq!(summary.flows[0].sent, n);
        let never = n - done.deliveries.len() as u64;
        assert!(
            never > 0 && never < n / 2,
            "{never} of {n} never arrived; expected about {}",
            n as f64 * (-2f64).exp()
        );
        assert!(done.deliveries.iter().all(|d| d.received >= d.sent));
        assert!(done.drops.is_empty());
        assert_eq!(done.deliveries, run_once().0.deliveries);
        // The parameters themselves are what the scenario check bounds.
        let net = network(model, LossModel::None {}, 4, 1, &[]);
        assert_eq!(
            net.delay_reach(),
            &DelayReach {
                key: "mean",
                nanos: 1 << 63,
                what: "offset + mean"
            }
        );
    }

    #[test]
    fn empirical_delays_come_from_the_file_and_bad_lines_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("d.txt"), "# measured\n2.5\n\n4ms\n7.25\n").unwrap();
        let model = DelayModel::Empirical {
            file: "d.txt".into(),
            unit: ms(1),
        };
        let mut net = BuiltinNetwork::new(
            &BuiltinConfig {
                delay: model,
                loss: LossModel::None {},
            },
            1,
            1,
            dir.path(),
            &read_file,
        )
        .unwrap();
        net.configure(&[flow(0, 0, 1, false)]).unwrap();
        let seen: std::collections::BTreeSet<u64> = fates(&mut net, 300)
            .iter()
            .map(|(_, d)| d.unwrap().0)
            .collect();
        assert_eq!(
            seen.into_iter().collect::<Vec<_>>(),
            [2_500_000, 4_000_000, 7_250_000]
        );

        std::fs::write(dir.path().join("bad.txt"), "1\n2\nfast\n").unwrap();
        let model = DelayModel::Empirical {
            file: "bad.txt".into(),
            unit: ms(1),
        };
        let err = BuiltinNetwork::new(
            &BuiltinConfig {
                delay: model,
                loss: LossModel::None {},
            },
            1,
            1,
            dir.path(),
            &read_file,
        )
        .err()
        .unwrap()
        .to_string();
        assert!(err.contains("bad.txt:3"), "{err}");
    }

    /// The core does no file I/O: an empirical delay file is read through
    /// the reader the application passes, by its path under `base_dir`,
    /// and the reader's error is the message's cause.
    #[test]
    fn empirical_delay_files_are_read_only_through_the_given_reader() {
        let asked = std::cell::RefCell::new(Vec::new());
        let from_memory = |path: &Path| {
            asked.borrow_mut().push(path.to_path_buf());
            match path.file_name().and_then(|n| n.to_str()) {
                Some("d.txt") => Ok("3ms\n".to_string()),
                _ => Err("too big".to_string()),
            }
        };
        let config = |file: &str| BuiltinConfig {
            delay: DelayModel::Empirical {
                file: file.into(),
                unit: ms(1),
            },
            loss: LossModel::None {},
        };
        let base = Path::new("/nowhere");
        let mut net = BuiltinNetwork::new(&config("d.txt"), 1, 1, base, &from_memory).unwrap();
        net.configure(&[flow(0, 0, 1, false)]).unwrap();
        assert!(fates(&mut net, 10).iter().all(|(_, d)| d.unwrap() == ms(3)));
        let err = BuiltinNetwork::new(&config("e.txt"), 1, 1, base, &from_memory)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("cannot read /nowhere/e.txt: too big"), "{err}");
        assert_eq!(*asked.borrow(), [base.join("d.txt"), base.join("e.txt")]);
    }

    #[test]
    fn config_reads_from_toml_and_rejects_unknown_keys() {
        let config: BuiltinConfig = toml::from_str(
            "delay = { kind = \"normal\", mean = \"10ms\", std = \"2ms\" }\n\
             loss = { kind = \"gilbert_elliott\", p_good_to_bad = 0.01, p_bad_to_good = 0.3 }\n",
        )
        .unwrap();
        assert_eq!(
            config.delay,
            DelayModel::Normal {
                mean: ms(10),
                std: ms(2)
            }
        );
        assert!(
            matches!(config.loss, LossModel::GilbertElliott { loss_bad, .. } if loss_bad == 1.0)
        );
        let err = toml::from_str::<BuiltinConfig>(
            "delay = { kind = \"constant\", value = \"1ms\", jitter = \"1ms\" }",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("jitter"), "{err}");
        let err = toml::from_str::<BuiltinConfig>("delay = { kind = \"constant\", value = 5 }")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unit"), "{err}");
        let bad_p = BuiltinNetwork::new(
            &BuiltinConfig {
                delay: DelayModel::Constant { value: ms(1) },
                loss: LossModel::Bernoulli { p: 1.5 },
            },
            1,
            1,
            Path::new("."),
            &read_file,
        );
        assert!(bad_p.err().unwrap().to_string().contains("network.loss"));
    }

    /// `kind = "none"` has no keys: a stray `p` (meant for bernoulli) is an
    /// error, and the table reads and writes as just its kind.
    #[test]
    fn no_loss_rejects_keys_of_its_own() {
        let err = toml::from_str::<LossModel>("kind = \"none\"\np = 0.1\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `p`"), "{err}");
        let none: LossModel = toml::from_str("kind = \"none\"\n").unwrap();
        assert_eq!(none, LossModel::default());
        assert_eq!(toml::to_string(&none).unwrap(), "kind = \"none\"\n");
    }
}
