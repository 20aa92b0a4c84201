//! Property tests: every message survives encode → decode unchanged, whether
//! the bytes arrive at once or one at a time, and no byte string panics the
//! decoder. Shrunk failures are kept below as named `regression_*` tests.

use proptest::prelude::*;
use protocol::*;

fn sim_time() -> impl Strategy<Value = SimTime> {
    any::<u64>().prop_map(SimTime)
}

fn text() -> impl Strategy<Value = String> {
    ".{0,40}"
}

fn flow_spec() -> impl Strategy<Value = FlowSpec> {
    (
        any::<u32>(),
        any::<u16>(),
        any::<u32>(),
        any::<u32>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(flow, port, src, dst, tcp, stop_on_delivery)| FlowSpec {
            flow,
            port,
            src,
            dst,
            transport: if tcp { Transport::Tcp } else { Transport::Udp },
            stop_on_delivery,
        })
}

fn send() -> impl Strategy<Value = SendRequest> {
    (
        any::<u32>(),
        any::<u64>(),
        any::<u16>(),
        any::<u16>(),
        sim_time(),
        any::<u32>(),
    )
        .prop_map(
            |(flow, number, state_index, state_count, time, size)| SendRequest {
                flow,
                number,
                state_index,
                state_count,
                time,
                size,
            },
        )
}

/// Finite floats only: NaN != NaN would make equality meaningless, and the
/// wire carries positions and velocities, never NaN.
fn vec3() -> impl Strategy<Value = [f64; 3]> {
    [-1e9f64..1e9, -1e9f64..1e9, -1e9f64..1e9]
}

fn kinematics() -> impl Strategy<Value = NodeKinematics> {
    (any::<u32>(), vec3(), vec3()).prop_map(|(node, position, velocity)| NodeKinematics {
        node,
        position,
        velocity,
    })
}

fn delivery() -> impl Strategy<Value = Delivery> {
    (
        any::<u32>(),
        any::<u64>(),
        any::<u16>(),
        any::<u16>(),
        sim_time(),
        sim_time(),
        any::<u32>(),
    )
        .prop_map(
            |(flow, number, state_index, state_count, sent, received, size)| Delivery {
                flow,
                number,
                state_index,
                state_count,
                sent,
                received,
                size,
            },
        )
}

fn drop_reason() -> impl Strategy<Value = DropReason> {
    prop_oneof![
        Just(DropReason::Queue),
        Just(DropReason::Phy),
        Just(DropReason::Mac),
        Just(DropReason::Routing),
        Just(DropReason::Other),
    ]
}

fn drop_event() -> impl Strategy<Value = DropEvent> {
    (
        any::<u32>(),
        any::<u64>(),
        any::<u16>(),
        any::<u16>(),
        sim_time(),
        sim_time(),
        any::<u32>(),
        drop_reason(),
    )
        .prop_map(
            |(flow, number, state_index, state_count, sent, time, node, reason)| DropEvent {
                flow,
                number,
                state_index,
                state_count,
                sent,
                time,
                node,
                reason,
            },
        )
}

fn error_code() -> impl Strategy<Value = ErrorCode> {
    prop_oneof![
        Just(ErrorCode::BadFrame),
        Just(ErrorCode::UnsupportedVersion),
        Just(ErrorCode::UnexpectedMessage),
        Just(ErrorCode::InvalidConfig),
        Just(ErrorCode::InvalidStep),
        Just(ErrorCode::Internal),
    ]
}

fn message() -> impl Strategy<Value = Message> {
    let n = 0..8usize;
    prop_oneof![
        (any::<u16>(), text()).prop_map(|(protocol_version, software)| Hello {
            protocol_version,
            software
        }
        .into()),
        prop::collection::vec(flow_spec(), n.clone()).prop_map(|flows| Configure { flows }.into()),
        (any::<u32>(), text()).prop_map(|(node_count, description)| Configured {
            node_count,
            description
        }
        .into()),
        (
            sim_time(),
            any::<bool>(),
            prop::collection::vec(send(), n.clone()),
            prop::collection::vec(kinematics(), n.clone())
        )
            .prop_map(|(until, stop_at_delivery, sends, kinematics)| Step {
                until,
                stop_at_delivery,
                sends,
                kinematics
            }
            .into()),
        (
            sim_time(),
            prop::collection::vec(delivery(), n.clone()),
            prop::collection::vec(drop_event(), n.clone())
        )
            .prop_map(|(reached, deliveries, drops)| StepDone {
                reached,
                deliveries,
                drops
            }
            .into()),
        Just(Finish {}.into()),
        (
            sim_time(),
            prop::collection::vec(
                (any::<u32>(), any::<u64>(), any::<u64>(), any::<u64>()).prop_map(
                    |(flow, sent, delivered, dropped)| FlowCounters {
                        flow,
                        sent,
                        delivered,
                        dropped
                    }
                ),
                n
            )
        )
            .prop_map(|(reached, flows)| Summary { reached, flows }.into()),
        (error_code(), text()).prop_map(|(code, message)| Error { code, message }.into()),
    ]
}

fn assert_round_trip(msg: &Message) {
    let bytes = encode(msg).unwrap();
    assert_eq!(
        decode(&bytes, DEFAULT_MAX_PAYLOAD).unwrap(),
        Decoded::Frame {
            message: msg.clone(),
            consumed: bytes.len()
        }
    );
}

proptest! {
    #[test]
    fn every_message_round_trips(msg in message()) {
        assert_round_trip(&msg);
    }

    /// A stream that delivers the frame in pieces: every proper prefix is
    /// Incomplete with a `needed` beyond what is there; the whole is the frame.
    #[test]
    fn prefixes_are_incomplete_not_malformed(msg in message()) {
        let bytes = encode(&msg).unwrap();
        for cut in 0..bytes.len() {
            match decode(&bytes[..cut], DEFAULT_MAX_PAYLOAD) {
                Ok(Decoded::Incomplete { needed }) => prop_assert!(needed > cut && needed <= bytes.len()),
                other => prop_assert!(false, "prefix of {} bytes: {:?}", cut, other),
            }
        }
    }

    /// Two frames back to back decode one after the other.
    #[test]
    fn frames_concatenate(a in message(), b in message()) {
        let mut bytes = encode(&a).unwrap();
        let first = bytes.len();
        bytes.extend(encode(&b).unwrap());
        let Decoded::Frame { message, consumed } = decode(&bytes, DEFAULT_MAX_PAYLOAD).unwrap() else { panic!() };
        prop_assert_eq!(message, a);
        prop_assert_eq!(consumed, first);
        let Decoded::Frame { message, .. } = decode(&bytes[first..], DEFAULT_MAX_PAYLOAD).unwrap() else { panic!() };
        prop_assert_eq!(message, b);
    }

    /// Arbitrary bytes after a valid header: an error or a message, never a panic.
    #[test]
    fn garbage_payloads_never_panic(kind in 1u16..=8, payload in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut bytes = b"NTLP".to_vec();
        bytes.extend_from_slice(&PROTOCOL_VERSION.to_le_bytes());
        bytes.extend_from_slice(&kind.to_le_bytes());
        bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&payload);
        let _ = decode(&bytes, DEFAULT_MAX_PAYLOAD);
    }

    #[test]
    fn garbage_streams_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = decode(&bytes, DEFAULT_MAX_PAYLOAD);
    }
}

#[test]
fn oversized_message_is_an_encode_error_and_leaves_the_buffer_alone() {
    let msg: Message = Hello {
        protocol_version: 1,
        software: "x".repeat(100),
    }
    .into();
    let mut out = vec![1, 2, 3];
    let err = encode_into(&msg, &mut out, 50).unwrap_err();
    assert!(
        matches!(
            err,
            EncodeError::Oversized {
                length: 110,
                max: 50,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(out, [1, 2, 3]);
}

#[test]
fn a_lower_receive_limit_rejects_from_the_header_alone() {
    let bytes = encode(
        &Hello {
            protocol_version: 1,
            software: "x".repeat(100),
        }
        .into(),
    )
    .unwrap();
    let err = decode(&bytes[..HEADER_LEN], 64).unwrap_err();
    assert_eq!(
        err,
        FrameError::Oversized {
            kind: MessageKind::Hello,
            length: 110,
            max: 64
        }
    );
}

#[test]
fn regression_empty_collections_round_trip() {
    assert_round_trip(
        &Step {
            until: SimTime(0),
            stop_at_delivery: false,
            sends: vec![],
            kinematics: vec![],
        }
        .into(),
    );
    assert_round_trip(
        &Hello {
            protocol_version: 0,
            software: String::new(),
        }
        .into(),
    );
}

/// Found by `garbage_payloads_never_panic`: a Hello whose string length says
/// 2^62 bytes made bincode abort on allocation before seeing the short payload.
#[test]
fn regression_huge_string_length_is_an_error_not_an_allocation() {
    let mut payload = 1u16.to_le_bytes().to_vec();
    payload.extend_from_slice(&(1u64 << 62).to_le_bytes());
    payload.extend_from_slice(b"abc");
    let mut bytes = b"NTLP".to_vec();
    bytes.extend_from_slice(&PROTOCOL_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(MessageKind::Hello as u16).to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&payload);
    assert!(matches!(
        decode(&bytes, DEFAULT_MAX_PAYLOAD),
        Err(FrameError::TruncatedPayload { .. })
    ));
}
