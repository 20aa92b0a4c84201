//! netloop's wire protocol between the co-simulation master (the Rust
//! `bridge`) and the ns-3 stepping server (`ns3-scenarios/`).
//!
//! This crate is sans-IO: it turns messages into bytes and bytes into
//! messages, and never touches a socket or a clock, so both the bridge and
//! the tests can drive it from plain buffers.
//!
//! # Lifecycle of a connection
//! 1. The bridge sends [`Hello`]; the server answers with its own [`Hello`].
//!    Either side answers a frame of another version with an [`Error`] of
//!    code [`ErrorCode::UnsupportedVersion`] and closes.
//! 2. The bridge sends [`Configure`] (flows: ports, nodes, transport); the
//!    server builds its applications and answers [`Configured`].
//! 3. Repeatedly: [`Step`] (run until a time, optionally stopping at the
//!    first control delivery; packets to send; node kinematics) answered by
//!    [`StepDone`] (time reached, deliveries, drops).
//! 4. [`Finish`] answered by [`Summary`]; then both close.
//!
//! At any point a fatal problem is reported with [`Error`] and the
//! connection closes. Every request gets exactly one answer, in order; the
//! bridge may send a second [`Step`] before the first is answered (it does so
//! when it knows every packet ahead of time), and the server simply reads it
//! after answering the first.
//!
//! The bridge's half of this conversation is [`client::Session`], a state
//! machine without I/O that mirrors the server's (`ns3-scenarios/src/session.h`).
//!
//! # Practical considerations
//! - Frames are at most [`DEFAULT_MAX_PAYLOAD`] bytes of payload unless both
//!   sides are told otherwise; a larger length is rejected from the header
//!   alone, before any allocation.
//! - [`decode`] returns [`Decoded::Incomplete`] for a valid prefix. A peer
//!   that closes mid-frame is the I/O layer's error to report, with how many
//!   bytes it had.

pub mod client;
mod frame;
mod message;

pub use frame::*;
pub use message::*;
pub use netloop_time::{duration, ParseTimeError, SimTime};
