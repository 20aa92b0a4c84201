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
        match (decode(&data[..cut], DEFAULT_MAX_PAYLOAD), &whole) {
            (Ok(Decoded::Incomplete { needed }), _) => assert!(needed > cut, "needs {needed} with {cut} bytes"),
            // A frame in a prefix is the same frame in the whole buffer.
            (Ok(Decoded::Frame { consumed, .. }), Ok(Decoded::Frame { consumed: all, .. })) => {
                assert!(consumed <= cut && consumed == *all, "prefix of {cut} bytes")
            }
            // An error in a prefix is an error of the same kind for the whole buffer
            // (a bad magic names only the bytes it saw).
            (Err(e), Err(all)) => {
                assert_eq!(std::mem::discriminant(&e), std::mem::discriminant(all), "prefix of {cut} bytes")
            }
            (prefix, all) => panic!("a prefix of {cut} bytes decodes as {prefix:?}, the whole as {all:?}"),
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
