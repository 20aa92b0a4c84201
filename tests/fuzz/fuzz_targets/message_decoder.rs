//! The message (payload) decoder of every kind on arbitrary payloads: the
//! first byte picks the kind, the rest is the payload. A payload that decodes
//! re-encodes to the same bytes (the codec is a bijection on valid payloads).
#![no_main]

use libfuzzer_sys::fuzz_target;
use protocol::{decode_payload, encode, FrameHeader, MessageKind, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, payload)) = data.split_first() else { return };
    let kind = MessageKind::ALL[selector as usize % MessageKind::ALL.len()];
    let header = FrameHeader { kind, length: payload.len() as u32 };
    if let Ok(message) = decode_payload(header, payload) {
        assert_eq!(message.kind(), kind);
        let frame = encode(&message).expect("a decoded message encodes");
        assert_eq!(&frame[HEADER_LEN..], payload, "re-encoding a {kind} payload changed it");
    }
});
