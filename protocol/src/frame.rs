//! Framing: a fixed 12-byte header, then a bincode payload.
//!
//! ```text
//! offset  size  field
//! 0       4     magic  "NTLP"
//! 4       2     protocol version, u16 little-endian
//! 6       2     message kind, u16 little-endian (see MessageKind)
//! 8       4     payload length in bytes, u32 little-endian
//! 12      n     payload
//! ```
//!
//! [`decode`] works on whatever bytes have arrived so far. It tells "need more
//! bytes" ([`Decoded::Incomplete`], an expected runtime condition) apart from
//! a malformed frame ([`FrameError`], fatal for the connection), and it checks
//! each header field as soon as its bytes are there, so a garbage stream is
//! rejected after its first bytes rather than waited on.

use bincode::config::{Configuration, Fixint, Limit, LittleEndian};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::message::*;

pub const MAGIC: [u8; 4] = *b"NTLP";
pub const HEADER_LEN: usize = 12;
/// Largest payload either side accepts: 16 MiB, enough for a step carrying
/// ~400k packet events. A peer may be configured with a lower limit, not a
/// higher one: the same number bounds bincode's allocations below.
pub const DEFAULT_MAX_PAYLOAD: u32 = 16 * 1024 * 1024;

/// Little-endian, fixed-width integers: the layout documented in
/// [`crate::message`]. The limit matters: without it a corrupt string length
/// makes bincode try to allocate that many bytes before noticing the payload
/// is shorter (found by `garbage_payloads_never_panic`).
const CONFIG: Configuration<LittleEndian, Fixint, Limit<{ DEFAULT_MAX_PAYLOAD as usize }>> =
    bincode::config::standard()
        .with_little_endian()
        .with_fixed_int_encoding()
        .with_limit();

/// A frame that cannot be decoded. Every variant is fatal for the connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error(
        "bad magic {found:02x?}: the peer is not speaking the netloop protocol (expected \"NTLP\")"
    )]
    BadMagic { found: Vec<u8> },
    #[error("unsupported protocol version {found}; this side speaks version {supported}")]
    UnsupportedVersion { found: u16, supported: u16 },
    #[error("unknown message kind {kind}")]
    UnknownKind { kind: u16 },
    #[error("{kind} frame of {length} bytes exceeds the limit of {max} bytes")]
    Oversized {
        kind: MessageKind,
        length: u32,
        max: u32,
    },
    #[error("{kind} payload of {length} bytes ends before the message is complete")]
    TruncatedPayload { kind: MessageKind, length: u32 },
    #[error("{kind} payload does not decode: {reason}")]
    MalformedPayload { kind: MessageKind, reason: String },
    #[error("{kind} payload of {length} bytes has {extra} trailing bytes after the message")]
    TrailingBytes {
        kind: MessageKind,
        length: u32,
        extra: usize,
    },
}

impl FrameError {
    /// The variant's name, as the golden table of malformed frames
    /// (`golden/bad_frames.txt`) and the C++ decoder's tests spell it.
    pub fn class(&self) -> &'static str {
        match self {
            FrameError::BadMagic { .. } => "BadMagic",
            FrameError::UnsupportedVersion { .. } => "UnsupportedVersion",
            FrameError::UnknownKind { .. } => "UnknownKind",
            FrameError::Oversized { .. } => "Oversized",
            FrameError::TruncatedPayload { .. } => "TruncatedPayload",
            FrameError::MalformedPayload { .. } => "MalformedPayload",
            FrameError::TrailingBytes { .. } => "TrailingBytes",
        }
    }
}

/// A message that cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("{kind} message of {length} bytes exceeds the frame limit of {max} bytes")]
    Oversized {
        kind: MessageKind,
        length: usize,
        max: u32,
    },
    #[error("{kind} message does not encode: {reason}")]
    Serialize { kind: MessageKind, reason: String },
}

/// Result of [`decode`] on a buffer that may hold a partial frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// A whole frame: the message and how many bytes of the buffer it used.
    Frame { message: Message, consumed: usize },
    /// The buffer holds a valid prefix; at least `needed` bytes in total are
    /// required before the frame can be decoded.
    Incomplete { needed: usize },
}

/// The parsed, validated header of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    pub kind: MessageKind,
    pub length: u32,
}

/// Appends one frame holding `message` to `out`.
///
/// # Errors
/// [`EncodeError::Oversized`] when the payload is larger than `max_payload`;
/// `out` is then left as it was.
pub fn encode_into(
    message: &Message,
    out: &mut Vec<u8>,
    max_payload: u32,
) -> Result<(), EncodeError> {
    let start = out.len();
    let kind = message.kind();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&PROTOCOL_VERSION.to_le_bytes());
    out.extend_from_slice(&(kind as u16).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    let written = match message {
        Message::Hello(m) => write_payload(m, out),
        Message::Configure(m) => write_payload(m, out),
        Message::Configured(m) => write_payload(m, out),
        Message::Step(m) => write_payload(m, out),
        Message::StepDone(m) => write_payload(m, out),
        Message::Finish(m) => write_payload(m, out),
        Message::Summary(m) => write_payload(m, out),
        Message::Error(m) => write_payload(m, out),
        Message::Rules(m) => write_payload(m, out),
        Message::RulesInstalled(m) => write_payload(m, out),
    };
    if let Err(e) = written {
        out.truncate(start);
        return Err(EncodeError::Serialize {
            kind,
            reason: e.to_string(),
        });
    }
    let length = out.len() - start - HEADER_LEN;
    if length > max_payload as usize {
        out.truncate(start);
        return Err(EncodeError::Oversized {
            kind,
            length,
            max: max_payload,
        });
    }
    out[start + 8..start + 12].copy_from_slice(&(length as u32).to_le_bytes());
    Ok(())
}

/// One frame holding `message`, with the default size limit.
///
/// # Errors
/// As [`encode_into`].
pub fn encode(message: &Message) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    encode_into(message, &mut out, DEFAULT_MAX_PAYLOAD)?;
    Ok(out)
}

fn write_payload<T: Serialize>(
    value: &T,
    out: &mut Vec<u8>,
) -> Result<usize, bincode::error::EncodeError> {
    bincode::serde::encode_into_std_write(value, out, CONFIG)
}

/// Validates as much of the header as `buf` holds.
///
/// # Errors
/// Any header field that is already wrong, even before the header is complete.
pub fn decode_header(buf: &[u8], max_payload: u32) -> Result<Option<FrameHeader>, FrameError> {
    let max_payload = max_payload.min(DEFAULT_MAX_PAYLOAD);
    let magic_seen = buf.len().min(4);
    if buf[..magic_seen] != MAGIC[..magic_seen] {
        return Err(FrameError::BadMagic {
            found: buf[..magic_seen].to_vec(),
        });
    }
    if buf.len() < 6 {
        return Ok(None);
    }
    let version = u16::from_le_bytes([buf[4], buf[5]]);
    if version != PROTOCOL_VERSION {
        return Err(FrameError::UnsupportedVersion {
            found: version,
            supported: PROTOCOL_VERSION,
        });
    }
    if buf.len() < 8 {
        return Ok(None);
    }
    let raw_kind = u16::from_le_bytes([buf[6], buf[7]]);
    let kind = MessageKind::from_u16(raw_kind).ok_or(FrameError::UnknownKind { kind: raw_kind })?;
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let length = u32::from_le_bytes([buf[8], buf[9], buf[10], buf[11]]);
    if length > max_payload {
        return Err(FrameError::Oversized {
            kind,
            length,
            max: max_payload,
        });
    }
    Ok(Some(FrameHeader { kind, length }))
}

/// Decodes the frame at the start of `buf`, if it is all there.
///
/// # Errors
/// A [`FrameError`] naming what is wrong; the connection cannot continue.
pub fn decode(buf: &[u8], max_payload: u32) -> Result<Decoded, FrameError> {
    let Some(header) = decode_header(buf, max_payload)? else {
        return Ok(Decoded::Incomplete { needed: HEADER_LEN });
    };
    let total = HEADER_LEN + header.length as usize;
    if buf.len() < total {
        return Ok(Decoded::Incomplete { needed: total });
    }
    let message = decode_payload(header, &buf[HEADER_LEN..total])?;
    Ok(Decoded::Frame {
        message,
        consumed: total,
    })
}

/// Decodes a payload whose header has been validated.
///
/// # Errors
/// [`FrameError::TruncatedPayload`], [`FrameError::MalformedPayload`] or
/// [`FrameError::TrailingBytes`].
pub fn decode_payload(header: FrameHeader, payload: &[u8]) -> Result<Message, FrameError> {
    let kind = header.kind;
    Ok(match kind {
        MessageKind::Hello => Message::Hello(read_payload(kind, payload)?),
        MessageKind::Configure => Message::Configure(read_payload(kind, payload)?),
        MessageKind::Configured => Message::Configured(read_payload(kind, payload)?),
        MessageKind::Step => Message::Step(read_payload(kind, payload)?),
        MessageKind::StepDone => Message::StepDone(read_payload(kind, payload)?),
        MessageKind::Finish => Message::Finish(read_payload(kind, payload)?),
        MessageKind::Summary => Message::Summary(read_payload(kind, payload)?),
        MessageKind::Error => Message::Error(read_payload(kind, payload)?),
        MessageKind::Rules => Message::Rules(read_payload(kind, payload)?),
        MessageKind::RulesInstalled => Message::RulesInstalled(read_payload(kind, payload)?),
    })
}

fn read_payload<T: DeserializeOwned>(kind: MessageKind, payload: &[u8]) -> Result<T, FrameError> {
    let length = payload.len() as u32;
    match bincode::serde::decode_from_slice::<T, _>(payload, CONFIG) {
        Ok((value, used)) if used == payload.len() => Ok(value),
        Ok((_, used)) => Err(FrameError::TrailingBytes {
            kind,
            length,
            extra: payload.len() - used,
        }),
        Err(bincode::error::DecodeError::UnexpectedEnd { .. }) => {
            Err(FrameError::TruncatedPayload { kind, length })
        }
        // A length prefix claiming more bytes than a frame can hold.
        Err(bincode::error::DecodeError::LimitExceeded) => {
            Err(FrameError::TruncatedPayload { kind, length })
        }
        Err(e) => Err(FrameError::MalformedPayload {
            kind,
            reason: e.to_string(),
        }),
    }
}
