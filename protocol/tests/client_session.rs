//! `client::Session` fed the server's side as bytes: the golden frames
//! (`golden/frames.txt`, `golden/bad_frames.txt`) concatenated into scripted
//! streams, decoded a few bytes at a time as a socket would deliver them.

use std::collections::HashMap;

use protocol::client::{Event, Session, SessionError, State};
use protocol::{
    decode, ErrorCode, FrameError, MessageKind, SimTime, Step, DEFAULT_MAX_PAYLOAD,
    PROTOCOL_VERSION,
};
use test_support::golden;

/// The server's bytes, concatenated from golden cases.
fn stream(cases: &[&str]) -> Vec<u8> {
    let frames: HashMap<String, Vec<u8>> = golden::frames()
        .into_iter()
        .map(|f| (f.case, f.bytes))
        .collect();
    let bad: HashMap<String, Vec<u8>> = golden::bad_frames()
        .into_iter()
        .map(|f| (f.case, f.bytes))
        .collect();
    cases
        .iter()
        .flat_map(|c| frames.get(*c).or_else(|| bad.get(*c)).unwrap().clone())
        .collect()
}

/// What the I/O loop does, in 5-byte reads: decode, feed the session, stop
/// at the first error. Returns the events and the error, if any.
fn feed(session: &mut Session, bytes: &[u8]) -> (Vec<Event>, Option<SessionError>) {
    let mut events = Vec::new();
    let mut inbox = Vec::new();
    for chunk in bytes.chunks(5) {
        inbox.extend_from_slice(chunk);
        loop {
            match decode(&inbox, DEFAULT_MAX_PAYLOAD) {
                Ok(protocol::Decoded::Frame { message, consumed }) => {
                    inbox.drain(..consumed);
                    match session.receive(message) {
                        Ok(event) => events.push(event),
                        Err(e) => return (events, Some(e)),
                    }
                }
                Ok(protocol::Decoded::Incomplete { .. }) => break,
                Err(e) => return (events, Some(session.frame_error(e))),
            }
        }
    }
    (events, None)
}

fn step(until: SimTime) -> Step {
    Step {
        until,
        stop_at_delivery: false,
        sends: Vec::new(),
        kinematics: Vec::new(),
    }
}

fn kinds(events: &[Event]) -> Vec<&'static str> {
    events
        .iter()
        .map(|e| match e {
            Event::Handshaken { .. } => "handshaken",
            Event::Configured(_) => "configured",
            Event::RulesInstalled { .. } => "rules_installed",
            Event::StepDone(_) => "step_done",
            Event::Summary(_) => "summary",
        })
        .collect()
}

#[test]
fn a_whole_golden_conversation_gives_every_event() {
    let mut s = Session::new();
    s.hello("netloop test").unwrap();
    let (events, error) = feed(&mut s, &stream(&["hello"]));
    assert_eq!((kinds(&events), error), (vec!["handshaken"], None));
    assert_eq!(s.server_software(), "netloop 0.1.0");
    s.configure(Vec::new()).unwrap();
    let (events, error) = feed(&mut s, &stream(&["configured"]));
    assert_eq!((kinds(&events), error), (vec!["configured"], None));
    // Two steps in flight, answered in order.
    s.step(step(SimTime::from_millis(5))).unwrap();
    s.step(step(SimTime::from_millis(10))).unwrap();
    let (events, error) = feed(&mut s, &stream(&["step_done", "step_done"]));
    assert_eq!(
        (kinds(&events), error),
        (vec!["step_done", "step_done"], None)
    );
    assert_eq!(s.reached(), SimTime(4_700_000)); // the golden StepDone's time
    s.finish().unwrap();
    let (events, error) = feed(&mut s, &stream(&["summary"]));
    assert_eq!((kinds(&events), error), (vec!["summary"], None));
    assert_eq!(s.state(), State::Finished);
}

#[test]
fn a_server_that_skips_configured_is_caught_at_the_first_wrong_frame() {
    let mut s = Session::new();
    s.hello("netloop test").unwrap();
    feed(&mut s, &stream(&["hello"]));
    s.configure(Vec::new()).unwrap();
    let (events, error) = feed(&mut s, &stream(&["step_done", "summary"]));
    assert!(events.is_empty());
    assert_eq!(
        error,
        Some(SessionError::Unexpected {
            got: MessageKind::StepDone,
            expected: MessageKind::Configured
        })
    );
    assert_eq!(s.state(), State::Failed);
}

#[test]
fn the_golden_error_frame_ends_the_session_with_its_code_and_text() {
    let mut s = Session::new();
    s.hello("netloop test").unwrap();
    feed(&mut s, &stream(&["hello"]));
    s.configure(Vec::new()).unwrap();
    feed(&mut s, &stream(&["configured"]));
    s.step(step(SimTime::from_millis(5))).unwrap();
    let (events, error) = feed(&mut s, &stream(&["error", "step_done"]));
    assert!(events.is_empty());
    let Some(SessionError::Remote { code, message }) = error else {
        panic!("{error:?}")
    };
    assert_eq!(code, ErrorCode::InvalidStep);
    assert_eq!(message, "send at 1ms is before 2ms");
    assert_eq!(s.reached(), SimTime::ZERO);
}

#[test]
fn bad_frames_fail_the_session_and_another_version_is_a_mismatch_in_the_handshake() {
    let mut s = Session::new();
    s.hello("netloop test").unwrap();
    let (_, error) = feed(&mut s, &stream(&["wrong_version"]));
    assert_eq!(
        error,
        Some(SessionError::VersionMismatch {
            server: 0x63,
            client: PROTOCOL_VERSION
        })
    );

    let mut s = Session::new();
    s.hello("netloop test").unwrap();
    feed(&mut s, &stream(&["hello"]));
    s.configure(Vec::new()).unwrap();
    let (events, error) = feed(&mut s, &stream(&["configured", "wrong_version"]));
    assert_eq!(kinds(&events), ["configured"]);
    assert!(matches!(
        error,
        Some(SessionError::Frame(FrameError::UnsupportedVersion {
            found: 0x63,
            ..
        }))
    ));

    for (case, class) in [
        ("wrong_magic", "BadMagic"),
        ("unknown_kind", "UnknownKind"),
        ("trailing_bytes", "TrailingBytes"),
    ] {
        let mut s = Session::new();
        s.hello("netloop test").unwrap();
        let (events, error) = feed(&mut s, &stream(&[case]));
        assert!(events.is_empty(), "{case}");
        let Some(SessionError::Frame(e)) = error else {
            panic!("{case}: {error:?}")
        };
        assert!(format!("{e:?}").starts_with(class), "{case}: {e:?}");
        assert_eq!(s.state(), State::Failed, "{case}");
    }
}
