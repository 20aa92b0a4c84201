//! Golden byte vectors shared with the C++ codec tests (`ns3-scenarios/tests/`).
//!
//! `golden/frames.txt` holds one valid frame per message kind; the cases are
//! built here field by field (and, independently, in the C++ test), encoded,
//! and compared byte for byte with the file. `golden/bad_frames.txt` holds
//! malformed frames with the error each decoder must report.
//!
//! After a deliberate wire change, regenerate with
//! `NETLOOP_BLESS=1 cargo test -p protocol --test golden` and bump
//! `PROTOCOL_VERSION`.

use protocol::*;
use test_support::golden::{bad_frames, frames, golden_dir};

/// The valid cases. The C++ test `wire_golden_test.cc` builds the same values.
fn golden_cases() -> Vec<(&'static str, Message)> {
    vec![
        (
            "hello",
            Hello {
                protocol_version: 1,
                software: "netloop 0.1.0".into(),
            }
            .into(),
        ),
        (
            "configure",
            Configure {
                flows: vec![
                    FlowSpec {
                        flow: 0,
                        port: 9000,
                        src: 0,
                        dst: 1,
                        transport: Transport::Udp,
                        stop_on_delivery: true,
                    },
                    FlowSpec {
                        flow: 1,
                        port: 9001,
                        src: 1,
                        dst: 0,
                        transport: Transport::Tcp,
                        stop_on_delivery: false,
                    },
                ],
            }
            .into(),
        ),
        (
            "configured",
            Configured {
                node_count: 2,
                description: "p2p chain, 2 nodes, µ-test".into(),
            }
            .into(),
        ),
        (
            "step",
            Step {
                until: SimTime(10_000_000),
                stop_at_delivery: true,
                sends: vec![
                    SendRequest {
                        flow: 0,
                        number: 7,
                        state_index: 0,
                        state_count: 1,
                        time: SimTime(1_000_000),
                        size: 64,
                    },
                    SendRequest {
                        flow: 1,
                        number: u64::MAX,
                        state_index: 3,
                        state_count: 4,
                        time: SimTime(9_999_999),
                        size: 1500,
                    },
                ],
                kinematics: vec![NodeKinematics {
                    node: 1,
                    position: [1.5, -2.25, 0.0],
                    velocity: [30.0, 0.0, -0.125],
                }],
            }
            .into(),
        ),
        (
            "step_done",
            StepDone {
                reached: SimTime(4_700_000),
                deliveries: vec![Delivery {
                    flow: 0,
                    number: 7,
                    state_index: 0,
                    state_count: 1,
                    sent: SimTime(1_000_000),
                    received: SimTime(4_700_000),
                    size: 64,
                }],
                drops: vec![DropEvent {
                    flow: 1,
                    number: 8,
                    state_index: 2,
                    state_count: 4,
                    sent: SimTime(2_000_000),
                    time: SimTime(2_500_123),
                    node: 0,
                    reason: DropReason::Phy,
                }],
            }
            .into(),
        ),
        ("finish", Finish {}.into()),
        (
            "summary",
            Summary {
                reached: SimTime(60_000_000_000),
                flows: vec![FlowCounters {
                    flow: 0,
                    sent: 6000,
                    delivered: 5990,
                    dropped: 10,
                }],
            }
            .into(),
        ),
        (
            "error",
            Error {
                code: ErrorCode::InvalidStep,
                message: "send at 1ms is before 2ms".into(),
            }
            .into(),
        ),
        (
            "rules",
            Rules {
                rules: vec![
                    AnswerRule {
                        trigger_flow: 0,
                        answer_flow: 1,
                        delay: SimTime(250_000),
                        size: 32,
                        state_count: 1,
                        max_delay: SimTime::MAX,
                        drop_stale: false,
                        last_trigger: SimTime(1_999_000_000),
                    },
                    AnswerRule {
                        trigger_flow: 2,
                        answer_flow: 3,
                        delay: SimTime(0),
                        size: 1500,
                        state_count: 4,
                        max_delay: SimTime(20_000_000),
                        drop_stale: true,
                        last_trigger: SimTime(u64::MAX - 1),
                    },
                ],
            }
            .into(),
        ),
        ("rules_installed", RulesInstalled { count: 2 }.into()),
    ]
}

fn bless() -> bool {
    std::env::var_os("NETLOOP_BLESS").is_some()
}

#[test]
fn every_kind_has_a_golden_case() {
    let cases = golden_cases();
    for kind in MessageKind::ALL {
        assert!(
            cases.iter().any(|(_, m)| m.kind() == kind),
            "no golden case for {kind}"
        );
    }
}

#[test]
fn golden_frames_match_byte_for_byte() {
    let cases = golden_cases();
    if bless() {
        let mut text = String::from(
            "# netloop wire protocol v1: one valid frame per message kind.\n\
             # <case> <frame as hex>. Built in protocol/tests/golden.rs and in\n\
             # ns3-scenarios/tests/wire_golden_test.cc; both must produce these bytes.\n",
        );
        for (name, msg) in &cases {
            text += &format!("{name} {}\n", hex::encode(encode(msg).unwrap()));
        }
        std::fs::write(golden_dir().join("frames.txt"), text).unwrap();
    }
    let table = frames();
    assert_eq!(
        table.len(),
        cases.len(),
        "frames.txt and golden_cases() disagree on the case list"
    );
    for ((name, msg), frame) in cases.iter().zip(&table) {
        assert_eq!(name, &frame.case);
        let bytes = &frame.bytes;
        assert_eq!(
            hex::encode(encode(msg).unwrap()),
            hex::encode(bytes),
            "encoding of {name} changed"
        );
        match decode(bytes, DEFAULT_MAX_PAYLOAD).unwrap() {
            Decoded::Frame { message, consumed } => {
                assert_eq!(consumed, bytes.len(), "{name}");
                assert_eq!(&message, msg, "{name}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}

/// Malformed frames and the error class each decoder must report. The
/// server-robustness test sends these same bytes to a live ns-3 server.
fn bad_cases() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let hello = encode(&golden_cases()[0].1).unwrap();
    let step = encode(&golden_cases()[3].1).unwrap();
    let with_header = |version: u16, kind: u16, length: u32, payload: &[u8]| {
        let mut f = b"NTLP".to_vec();
        f.extend_from_slice(&version.to_le_bytes());
        f.extend_from_slice(&kind.to_le_bytes());
        f.extend_from_slice(&length.to_le_bytes());
        f.extend_from_slice(payload);
        f
    };
    let hello_payload = &hello[HEADER_LEN..];
    let step_payload = &step[HEADER_LEN..];
    // A bool field holding 2: offset of `stop_at_delivery` is 8 (after `until`).
    let mut bad_bool = step_payload.to_vec();
    bad_bool[8] = 2;
    // Configure with one flow whose `transport` variant index is 9.
    let mut bad_enum = Vec::new();
    bad_enum.extend_from_slice(&1u64.to_le_bytes()); // one flow
    bad_enum.extend_from_slice(&0u32.to_le_bytes()); // flow
    bad_enum.extend_from_slice(&9000u16.to_le_bytes()); // port
    bad_enum.extend_from_slice(&0u32.to_le_bytes()); // src
    bad_enum.extend_from_slice(&1u32.to_le_bytes()); // dst
    bad_enum.extend_from_slice(&9u32.to_le_bytes()); // transport: no such variant
    bad_enum.push(0); // stop_on_delivery
    let mut trailing = hello_payload.to_vec();
    trailing.extend_from_slice(&[0xAA, 0xBB]);
    let mut truncated = hello_payload.to_vec();
    truncated.truncate(truncated.len() - 3);
    vec![
        (
            "wrong_magic",
            "BadMagic",
            [b"HTTP".as_slice(), &hello[4..]].concat(),
        ),
        (
            "wrong_version",
            "UnsupportedVersion",
            with_header(99, 1, hello_payload.len() as u32, hello_payload),
        ),
        ("unknown_kind", "UnknownKind", with_header(1, 42, 0, &[])),
        (
            "oversized_length",
            "Oversized",
            with_header(1, 4, DEFAULT_MAX_PAYLOAD + 1, &[]),
        ),
        (
            "truncated_payload",
            "TruncatedPayload",
            with_header(1, 1, truncated.len() as u32, &truncated),
        ),
        (
            "trailing_bytes",
            "TrailingBytes",
            with_header(1, 1, trailing.len() as u32, &trailing),
        ),
        (
            "bool_out_of_range",
            "MalformedPayload",
            with_header(1, 4, bad_bool.len() as u32, &bad_bool),
        ),
        (
            "enum_out_of_range",
            "MalformedPayload",
            with_header(1, 2, bad_enum.len() as u32, &bad_enum),
        ),
    ]
}

#[test]
fn bad_frames_give_the_right_error_variant() {
    let cases = bad_cases();
    if bless() {
        let mut text = String::from(
            "# netloop wire protocol v1: malformed frames. <case> <error class> <frame as hex>.\n\
             # Each decoder (Rust FrameError, C++ WireError) must report exactly that class.\n",
        );
        for (name, class, bytes) in &cases {
            text += &format!("{name} {class} {}\n", hex::encode(bytes));
        }
        std::fs::write(golden_dir().join("bad_frames.txt"), text).unwrap();
    }
    let table = bad_frames();
    assert_eq!(table.len(), cases.len());
    for frame in &table {
        let err = decode(&frame.bytes, DEFAULT_MAX_PAYLOAD).expect_err(&frame.case);
        assert_eq!(
            FrameError::class(&err),
            frame.class,
            "{}: {err}",
            frame.case
        );
        // The message names what is wrong, for the user.
        assert!(!err.to_string().is_empty());
    }
}

#[test]
fn version_mismatch_names_both_versions() {
    let bytes = &bad_cases()[1].2;
    let err = decode(bytes, DEFAULT_MAX_PAYLOAD).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("99") && text.contains(&PROTOCOL_VERSION.to_string()),
        "{text}"
    );
}
