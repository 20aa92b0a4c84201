//! The frame decoder on arbitrary bytes, as the bridge meets them: the
//! stream is decoded frame by frame, and each prefix of the first frame is
//! decoded too (a partial frame must be `Incomplete` or an error, never a
//! panic, and never a different answer than the whole frame gives later).
//! A decoded frame re-encodes to exactly the bytes it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use protocol::{decode, encode, Decoded, DEFAULT_MAX_PAYLOAD};

fuzz_target!(|data: &[u8]| {
    // Every prefix of the first frame (bounded: the header and a few cuts).
    let whole = decode(data, DEFAULT_MAX_PAYLOAD);
    for cut in (0..data.len().min(16)).chain([data.len() / 2]) {
        match decode(&data[..cut], DEFAULT_MAX_PAYLOAD) {
            Ok(Decoded::Incomplete { needed }) => assert!(needed > cut, "needs {needed} with {cut} bytes"),
            Ok(Decoded::Frame { consumed, .. }) => {
                assert!(consumed <= cut);
                assert_eq!(whole.as_ref().ok(), decode(&data[..cut], DEFAULT_MAX_PAYLOAD).as_ref().ok());
            }
            // An error in a prefix is the same error for the whole buffer.
            Err(e) => assert_eq!(whole.as_ref().err(), Some(&e), "prefix of {cut} bytes"),
        }
    }
    // The stream, frame by frame, like the bridge's reader.
    let mut rest = data;
    while let Ok(Decoded::Frame { message, consumed }) = decode(rest, DEFAULT_MAX_PAYLOAD) {
        assert!(consumed >= protocol::HEADER_LEN && consumed <= rest.len());
        let again = encode(&message).expect("a decoded message encodes");
        assert_eq!(again, rest[..consumed], "re-encoding {:?} changed its bytes", message.kind());
        rest = &rest[consumed..];
    }
});
