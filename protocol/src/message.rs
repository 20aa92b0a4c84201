//! Every message of the bridge ↔ ns-3 conversation (docs/design.md §7).
//!
//! Payloads are bincode with little-endian, fixed-width integers, so the C++
//! codec (`ns3-scenarios/src/wire.cc`) stays a page long. The layout rules the
//! C++ side mirrors, field by field in declaration order:
//!
//! | Rust type          | bytes on the wire                                   |
//! |--------------------|-----------------------------------------------------|
//! | `u8/u16/u32/u64`   | 1/2/4/8 bytes, little-endian                        |
//! | `bool`             | 1 byte, 0 or 1 (anything else is malformed)         |
//! | `f64`              | 8 bytes, IEEE-754 binary64, little-endian           |
//! | `SimTime`          | `u64` nanoseconds                                   |
//! | `String`           | `u64` byte length, then UTF-8 bytes                 |
//! | `Vec<T>`           | `u64` element count, then the elements              |
//! | `[f64; 3]`         | three `f64`, no length                              |
//! | fieldless `enum`   | `u32` variant index, in declaration order           |
//!
//! `protocol/golden/frames.txt` pins one frame of every kind; the Rust and the
//! C++ tests both decode and re-encode it byte for byte.

use serde::{Deserialize, Serialize};

use crate::SimTime;

/// The version this build speaks. Both ends refuse frames of another version.
pub const PROTOCOL_VERSION: u16 = 1;

/// The frame header's kind field. Values are part of the wire format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum MessageKind {
    Hello = 1,
    Configure = 2,
    Configured = 3,
    Step = 4,
    StepDone = 5,
    Finish = 6,
    Summary = 7,
    Error = 8,
    Rules = 9,
    RulesInstalled = 10,
}

impl MessageKind {
    pub const ALL: [MessageKind; 10] = [
        MessageKind::Hello,
        MessageKind::Configure,
        MessageKind::Configured,
        MessageKind::Step,
        MessageKind::StepDone,
        MessageKind::Finish,
        MessageKind::Summary,
        MessageKind::Error,
        MessageKind::Rules,
        MessageKind::RulesInstalled,
    ];

    pub fn from_u16(value: u16) -> Option<MessageKind> {
        Self::ALL.into_iter().find(|k| *k as u16 == value)
    }
}

impl std::fmt::Display for MessageKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self, f)
    }
}

/// First message in each direction. The bridge speaks first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// The sender's [`PROTOCOL_VERSION`]; also in every frame header, repeated
    /// here so a mismatch can be reported with both numbers.
    pub protocol_version: u16,
    /// Free text naming the sender, e.g. `"netloop-ns3-server 0.1.0 (ns-3.37)"`.
    pub software: String,
}

/// Transport a flow uses inside ns-3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Transport {
    Udp,
    Tcp,
}

/// One directed packet stream between two ns-3 nodes, e.g. a loop's uplink.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowSpec {
    /// Identifier used in every send, delivery and drop; the index of the flow
    /// in [`Configure::flows`].
    pub flow: u32,
    /// UDP/TCP port at the destination; also written into `PacketPortTag`.
    pub port: u16,
    /// Sending node (index into the topology's node list).
    pub src: u32,
    /// Receiving node.
    pub dst: u32,
    pub transport: Transport,
    /// Whether a delivery on this flow reaches a control node, so that an
    /// event-driven step stops there (docs/design.md §4.3).
    pub stop_on_delivery: bool,
}

/// Loop and flow structure, sent once after the handshake.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Configure {
    pub flows: Vec<FlowSpec>,
}

/// The server's answer to [`Configure`]: the network is built and at t = 0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Configured {
    pub node_count: u32,
    /// One line describing the network, for logs and `summary.json`.
    pub description: String,
}

/// One packet for ns-3 to send.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SendRequest {
    pub flow: u32,
    /// Per-flow packet number (`PacketNumTag`).
    pub number: u64,
    /// State index and count (`StateNumTag`); `0` and `1` for single-packet.
    pub state_index: u16,
    pub state_count: u16,
    /// Absolute send time; not earlier than the time the server has reached.
    pub time: SimTime,
    /// Application payload bytes (padding stands in for the values).
    pub size: u32,
}

/// Position and velocity of a node, applied to its constant-velocity mobility
/// model at the start of a step. Metres and metres per second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeKinematics {
    pub node: u32,
    pub position: [f64; 3],
    pub velocity: [f64; 3],
}

/// Advance the network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Run until this absolute time ...
    pub until: SimTime,
    /// ... or, when set, until the first delivery on a `stop_on_delivery` flow
    /// at or before `until` (event-driven sync).
    pub stop_at_delivery: bool,
    pub sends: Vec<SendRequest>,
    pub kinematics: Vec<NodeKinematics>,
}

/// A packet handed to the receiving application.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    pub flow: u32,
    pub number: u64,
    pub state_index: u16,
    pub state_count: u16,
    /// From `SendTimeTag`.
    pub sent: SimTime,
    pub received: SimTime,
    pub size: u32,
}

/// Where ns-3 saw a packet die.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DropReason {
    /// A device or traffic-control queue was full.
    Queue,
    /// Reception failed at the PHY: an error model, interference, too weak.
    Phy,
    /// The MAC gave up, e.g. retry limit reached.
    Mac,
    /// IP found no route.
    Routing,
    Other,
}

/// A packet lost inside ns-3.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DropEvent {
    pub flow: u32,
    pub number: u64,
    pub state_index: u16,
    pub state_count: u16,
    pub sent: SimTime,
    /// When and at which node ns-3 dropped it.
    pub time: SimTime,
    pub node: u32,
    pub reason: DropReason,
}

/// The server's answer to [`Step`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepDone {
    /// Time reached: `until`, or earlier when a control delivery stopped the run.
    pub reached: SimTime,
    /// In the order ns-3 executed them (time order).
    pub deliveries: Vec<Delivery>,
    pub drops: Vec<DropEvent>,
}

/// End of the run; the server answers with [`Summary`] and exits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finish {}

/// Per-flow packet counters kept by the server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowCounters {
    pub flow: u32,
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub reached: SimTime,
    pub flows: Vec<FlowCounters>,
}

/// Machine-readable class of an [`Error`] message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ErrorCode {
    /// The frame could not be decoded (magic, length, payload).
    BadFrame,
    /// The peer speaks another protocol version.
    UnsupportedVersion,
    /// A well-formed message that is not allowed at this point.
    UnexpectedMessage,
    /// The configuration does not fit the network (unknown node, duplicate port).
    InvalidConfig,
    /// A step that cannot be carried out (time going backwards, send in the past).
    InvalidStep,
    /// Anything else inside the server.
    Internal,
}

/// Either side reports a fatal problem; the connection closes afterwards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
}

/// "On the first delivery of a packet of `trigger_flow`, send a packet of
/// `answer_flow` `delay` later": an event-triggered controller's answers,
/// announced so that the network can run ahead of the control side, which
/// fills in the values when it replays the period (docs/cosimulation.md,
/// "Event-triggered answers as rules").
///
/// The rule repeats the receiver's policies, because they decide whether
/// there is an answer: a delivery whose delay (`received - sent`) exceeds
/// `max_delay`, or, with `drop_stale`, whose number is not above the last
/// accepted one of its state index, is not answered. Deliveries at one
/// instant are taken in (flow, number, state index) order; answers are
/// numbered 0, 1, ... per rule in that order, and each is `state_count`
/// packets (state indices 0..state_count) of `size` bytes. At its instant an
/// answer is sent after the network's own events and before the sends the
/// bridge announced for that instant. Deliveries after `last_trigger` are
/// not answered (the end of the run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnswerRule {
    pub trigger_flow: u32,
    pub answer_flow: u32,
    pub delay: SimTime,
    pub size: u32,
    pub state_count: u16,
    /// [`SimTime::MAX`]: no limit.
    pub max_delay: SimTime,
    pub drop_stale: bool,
    pub last_trigger: SimTime,
}

/// Installs answer rules; sent at most once, after [`Configured`] and
/// before the first [`Step`]. Answered by [`RulesInstalled`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rules {
    pub rules: Vec<AnswerRule>,
}

/// The server's answer to [`Rules`]: how many rules it installed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RulesInstalled {
    pub count: u32,
}

/// Any message, tagged with its kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    Hello(Hello),
    Configure(Configure),
    Configured(Configured),
    Step(Step),
    StepDone(StepDone),
    Finish(Finish),
    Summary(Summary),
    Error(Error),
    Rules(Rules),
    RulesInstalled(RulesInstalled),
}

impl Message {
    pub fn kind(&self) -> MessageKind {
        match self {
            Message::Hello(_) => MessageKind::Hello,
            Message::Configure(_) => MessageKind::Configure,
            Message::Configured(_) => MessageKind::Configured,
            Message::Step(_) => MessageKind::Step,
            Message::StepDone(_) => MessageKind::StepDone,
            Message::Finish(_) => MessageKind::Finish,
            Message::Summary(_) => MessageKind::Summary,
            Message::Error(_) => MessageKind::Error,
            Message::Rules(_) => MessageKind::Rules,
            Message::RulesInstalled(_) => MessageKind::RulesInstalled,
        }
    }
}

macro_rules! impl_from {
    ($($name:ident),*) => {$(
        impl From<$name> for Message {
            fn from(m: $name) -> Message { Message::$name(m) }
        }
    )*};
}
impl_from!(
    Hello,
    Configure,
    Configured,
    Step,
    StepDone,
    Finish,
    Summary,
    Error,
    Rules,
    RulesInstalled
);
