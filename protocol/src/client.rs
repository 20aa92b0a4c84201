//! The bridge's side of the conversation as a state machine without I/O,
//! the mirror of the server's `Session` (`ns3-scenarios/src/session.h`).
//!
//! # Lifecycle
//! 1. [`Session::hello`] gives the [`Hello`] to send; the server's answer,
//!    fed to [`Session::receive`], completes the handshake
//!    ([`Event::Handshaken`]), or is a [`SessionError::VersionMismatch`].
//!    A frame that did not decode goes to [`Session::frame_error`]: during
//!    the handshake a frame of another version is a version mismatch too.
//! 2. [`Session::configure`] gives the [`Configure`]; its answer is
//!    [`Event::Configured`].
//!    Optionally, before the first step, [`Session::rules`] gives the
//!    [`Rules`] (event-triggered answers the server sends by itself); its
//!    answer is [`Event::RulesInstalled`].
//! 3. [`Session::step`] as often as needed, also before earlier steps are
//!    answered (pipelining); every [`StepDone`] answers the oldest step
//!    still open and moves [`Session::reached`] on.
//! 4. [`Session::finish`] gives the [`Finish`]; its answer is
//!    [`Event::Summary`] and the session is [`State::Finished`].
//!
//! An [`Error`] from the server, a reply of the wrong kind, a message when
//! no answer is due, or a frame that does not decode ends the session in
//! [`State::Failed`] with a [`SessionError`]; so does a request made out of
//! turn by the caller ([`SessionError::OutOfTurn`]), before anything is sent.
//!
//! # Practical considerations
//! - The caller owns the socket, the deadlines and the process: it sends
//!   the messages this gives it, in order, and feeds back every decoded
//!   message or frame error. Nothing here blocks or reads a clock.
//! - Finishing while steps are still unanswered makes the next reply the
//!   one that must be the [`Summary`]: the server answers in order, so a
//!   [`StepDone`] arriving there is [`SessionError::Unexpected`]. The bridge
//!   finishes like this only after a run has already failed.
//! - Errors carry no time; [`Session::reached`] is the time the network had
//!   reached before the failing message (a failure never moves it).

use crate::{AnswerRule, ErrorCode, Finish, Rules};
use crate::{
    Configure, Configured, FlowSpec, FrameError, Hello, Message, MessageKind, SimTime, Step,
    StepDone, Summary, PROTOCOL_VERSION,
};

/// Where the conversation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Nothing sent yet.
    Start,
    /// Hello sent, the server's Hello due.
    AwaitHello,
    /// Handshake done: Configure next.
    Handshaken,
    /// Configure sent, Configured due.
    AwaitConfigured,
    /// Configured: Step or Finish; `open` steps are unanswered.
    Stepping { open: usize },
    /// Rules sent (before any step), RulesInstalled due.
    AwaitRulesInstalled,
    /// Finish sent, Summary due.
    AwaitSummary,
    /// Summary received; success.
    Finished,
    /// An error ended the conversation.
    Failed,
}

/// What a received message meant.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The server's Hello, of our version; `software` is its self-description.
    Handshaken {
        software: String,
    },
    Configured(Configured),
    /// The server installed this many answer rules.
    RulesInstalled {
        count: u32,
    },
    StepDone(StepDone),
    Summary(Summary),
}

/// Why the conversation failed. All are fatal.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SessionError {
    #[error("protocol version mismatch: the ns-3 server speaks version {server}, netloop speaks version {client}")]
    VersionMismatch { server: u16, client: u16 },
    /// The server sent an [`Error`](crate::Error).
    #[error("the server reported {code:?}: {message}")]
    Remote { code: ErrorCode, message: String },
    /// A reply of another kind than the one due.
    #[error("the server sent {got} where {expected} was expected")]
    Unexpected {
        got: MessageKind,
        expected: MessageKind,
    },
    /// A message while no answer was due (before Hello, after the last
    /// answer, or more StepDones than Steps).
    #[error("the server sent {got} while no answer was due")]
    Unsolicited { got: MessageKind },
    /// A frame that did not decode.
    #[error("malformed frame from the server: {0}")]
    Frame(FrameError),
    /// The caller asked for a request the protocol does not allow now.
    #[error("cannot send {request} now: the session is {state:?}")]
    OutOfTurn { request: MessageKind, state: State },
}

/// The client's half of one connection (see the module docs).
#[derive(Clone, Debug)]
pub struct Session {
    state: State,
    reached: SimTime,
    server_software: String,
    /// A step or rules were sent: rules may no longer be.
    rules_closed: bool,
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

impl Session {
    pub fn new() -> Self {
        Session {
            state: State::Start,
            reached: SimTime::ZERO,
            server_software: String::new(),
            rules_closed: false,
        }
    }

    pub fn state(&self) -> State {
        self.state
    }

    /// Simulated time the network has reached: the last answered step's.
    pub fn reached(&self) -> SimTime {
        self.reached
    }

    /// The server's self-description from its Hello; empty before it.
    pub fn server_software(&self) -> &str {
        &self.server_software
    }

    /// The kind of the next answer due, if one is.
    pub fn expected(&self) -> Option<MessageKind> {
        match self.state {
            State::AwaitHello => Some(MessageKind::Hello),
            State::AwaitConfigured => Some(MessageKind::Configured),
            State::AwaitRulesInstalled => Some(MessageKind::RulesInstalled),
            State::Stepping { open } if open > 0 => Some(MessageKind::StepDone),
            State::AwaitSummary => Some(MessageKind::Summary),
            _ => None,
        }
    }

    /// The opening [`Hello`], naming this side as `software`.
    ///
    /// # Errors
    /// [`SessionError::OutOfTurn`] unless nothing has been sent yet.
    pub fn hello(&mut self, software: impl Into<String>) -> Result<Message, SessionError> {
        self.turn(MessageKind::Hello, self.state == State::Start)?;
        self.state = State::AwaitHello;
        Ok(Hello {
            protocol_version: PROTOCOL_VERSION,
            software: software.into(),
        }
        .into())
    }

    /// The [`Configure`] installing `flows`.
    ///
    /// # Errors
    /// [`SessionError::OutOfTurn`] unless the handshake is done and nothing
    /// was configured yet.
    pub fn configure(&mut self, flows: Vec<FlowSpec>) -> Result<Message, SessionError> {
        self.turn(MessageKind::Configure, self.state == State::Handshaken)?;
        self.state = State::AwaitConfigured;
        Ok(Configure { flows }.into())
    }

    /// A [`Step`]; earlier steps may still be unanswered.
    ///
    /// # Errors
    /// [`SessionError::OutOfTurn`] unless configured and not finishing.
    pub fn step(&mut self, step: Step) -> Result<Message, SessionError> {
        let State::Stepping { open } = self.state else {
            return Err(self.out_of_turn(MessageKind::Step));
        };
        self.state = State::Stepping { open: open + 1 };
        self.rules_closed = true;
        Ok(step.into())
    }

    /// The [`Rules`] installing `rules`; the next answer due is
    /// [`Event::RulesInstalled`].
    ///
    /// # Errors
    /// [`SessionError::OutOfTurn`] unless configured, with no step and no
    /// rules sent yet.
    pub fn rules(&mut self, rules: Vec<AnswerRule>) -> Result<Message, SessionError> {
        let allowed = self.state == State::Stepping { open: 0 } && !self.rules_closed;
        self.turn(MessageKind::Rules, allowed)?;
        self.state = State::AwaitRulesInstalled;
        self.rules_closed = true;
        Ok(Rules { rules }.into())
    }

    /// The [`Finish`]; the next answer due is the [`Summary`].
    ///
    /// # Errors
    /// [`SessionError::OutOfTurn`] unless configured and not finishing.
    pub fn finish(&mut self) -> Result<Message, SessionError> {
        let stepping = matches!(self.state, State::Stepping { .. });
        self.turn(MessageKind::Finish, stepping)?;
        self.state = State::AwaitSummary;
        Ok(Finish {}.into())
    }

    /// Handles one decoded message from the server.
    ///
    /// # Errors
    /// Any [`SessionError`] but `OutOfTurn` and `Frame`; the session is then
    /// [`State::Failed`].
    pub fn receive(&mut self, message: Message) -> Result<Event, SessionError> {
        let result = self.handle(message);
        if result.is_err() {
            self.state = State::Failed;
        }
        result
    }

    /// Handles a frame that could not be decoded; the session fails. During
    /// the handshake a frame of another version means the server speaks
    /// another version (its Hello or its Error carries it), which is what it
    /// reports.
    pub fn frame_error(&mut self, error: FrameError) -> SessionError {
        let handshake = self.state == State::AwaitHello;
        self.state = State::Failed;
        match error {
            FrameError::UnsupportedVersion { found, supported } if handshake => {
                SessionError::VersionMismatch {
                    server: found,
                    client: supported,
                }
            }
            error => SessionError::Frame(error),
        }
    }

    fn handle(&mut self, message: Message) -> Result<Event, SessionError> {
        let got = message.kind();
        if let Message::Error(error) = message {
            return Err(SessionError::Remote {
                code: error.code,
                message: error.message,
            });
        }
        let Some(expected) = self.expected() else {
            return Err(SessionError::Unsolicited { got });
        };
        let unexpected = SessionError::Unexpected { got, expected };
        match (self.state, message) {
            (State::AwaitHello, Message::Hello(hello)) => {
                if hello.protocol_version != PROTOCOL_VERSION {
                    return Err(SessionError::VersionMismatch {
                        server: hello.protocol_version,
                        client: PROTOCOL_VERSION,
                    });
                }
                self.state = State::Handshaken;
                self.server_software.clone_from(&hello.software);
                Ok(Event::Handshaken {
                    software: hello.software,
                })
            }
            (State::AwaitConfigured, Message::Configured(configured)) => {
                self.state = State::Stepping { open: 0 };
                Ok(Event::Configured(configured))
            }
            (State::AwaitRulesInstalled, Message::RulesInstalled(installed)) => {
                self.state = State::Stepping { open: 0 };
                Ok(Event::RulesInstalled {
                    count: installed.count,
                })
            }
            (State::Stepping { open }, Message::StepDone(done)) => {
                self.state = State::Stepping { open: open - 1 };
                self.reached = done.reached;
                Ok(Event::StepDone(done))
            }
            (State::AwaitSummary, Message::Summary(summary)) => {
                self.state = State::Finished;
                Ok(Event::Summary(summary))
            }
            _ => Err(unexpected),
        }
    }

    fn turn(&self, request: MessageKind, allowed: bool) -> Result<(), SessionError> {
        if allowed {
            Ok(())
        } else {
            Err(self.out_of_turn(request))
        }
    }

    fn out_of_turn(&self, request: MessageKind) -> SessionError {
        SessionError::OutOfTurn {
            request,
            state: self.state,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Delivery, RulesInstalled, Transport};

    fn server_hello() -> Message {
        Hello {
            protocol_version: PROTOCOL_VERSION,
            software: "netloop-ns3-server test".into(),
        }
        .into()
    }

    fn configured() -> Message {
        Configured {
            node_count: 2,
            description: "two nodes".into(),
        }
        .into()
    }

    fn flows() -> Vec<FlowSpec> {
        vec![FlowSpec {
            flow: 0,
            port: 9000,
            src: 0,
            dst: 1,
            transport: Transport::Udp,
            stop_on_delivery: false,
        }]
    }

    fn step(until_ms: u64) -> Step {
        Step {
            until: SimTime::from_millis(until_ms),
            stop_at_delivery: false,
            sends: Vec::new(),
            kinematics: Vec::new(),
        }
    }

    fn step_done(reached_ms: u64) -> Message {
        StepDone {
            reached: SimTime::from_millis(reached_ms),
            deliveries: Vec::new(),
            drops: Vec::new(),
        }
        .into()
    }

    fn summary() -> Message {
        Summary {
            reached: SimTime::from_millis(12),
            flows: Vec::new(),
        }
        .into()
    }

    fn error(code: ErrorCode, message: &str) -> Message {
        crate::Error {
            code,
            message: message.into(),
        }
        .into()
    }

    /// A session that has shaken hands and configured one flow.
    fn configured_session() -> Session {
        let mut s = Session::new();
        s.hello("netloop test").unwrap();
        s.receive(server_hello()).unwrap();
        s.configure(flows()).unwrap();
        s.receive(configured()).unwrap();
        s
    }

    #[test]
    fn a_whole_conversation_gives_the_requests_and_events_in_order() {
        let mut s = Session::new();
        assert_eq!(s.state(), State::Start);
        assert_eq!(s.expected(), None);
        assert_eq!(
            s.hello("netloop 0.1.0").unwrap(),
            Message::Hello(Hello {
                protocol_version: PROTOCOL_VERSION,
                software: "netloop 0.1.0".into()
            })
        );
        assert_eq!(s.expected(), Some(MessageKind::Hello));
        assert_eq!(
            s.receive(server_hello()).unwrap(),
            Event::Handshaken {
                software: "netloop-ns3-server test".into()
            }
        );
        assert_eq!(s.server_software(), "netloop-ns3-server test");
        assert_eq!(
            s.configure(flows()).unwrap(),
            Message::Configure(Configure { flows: flows() })
        );
        let Event::Configured(c) = s.receive(configured()).unwrap() else {
            panic!("not Configured")
        };
        assert_eq!(c.node_count, 2);
        assert_eq!(s.state(), State::Stepping { open: 0 });
        assert_eq!(s.step(step(10)).unwrap(), Message::Step(step(10)));
        assert_eq!(s.reached(), SimTime::ZERO);
        assert!(
            matches!(s.receive(step_done(10)), Ok(Event::StepDone(d)) if d.reached == SimTime::from_millis(10))
        );
        assert_eq!(s.reached(), SimTime::from_millis(10));
        assert_eq!(s.finish().unwrap(), Message::Finish(Finish {}));
        assert_eq!(s.expected(), Some(MessageKind::Summary));
        assert!(
            matches!(s.receive(summary()), Ok(Event::Summary(x)) if x.reached == SimTime::from_millis(12))
        );
        assert_eq!(s.state(), State::Finished);
        assert_eq!(s.expected(), None);
    }

    #[test]
    fn pipelined_steps_are_answered_oldest_first() {
        let mut s = configured_session();
        s.step(step(10)).unwrap();
        s.step(step(20)).unwrap();
        assert_eq!(s.state(), State::Stepping { open: 2 });
        s.receive(step_done(10)).unwrap();
        assert_eq!(
            (s.state(), s.reached()),
            (State::Stepping { open: 1 }, SimTime::from_millis(10))
        );
        s.receive(step_done(20)).unwrap();
        assert_eq!(
            (s.state(), s.reached()),
            (State::Stepping { open: 0 }, SimTime::from_millis(20))
        );
        // One StepDone more than Steps sent.
        assert_eq!(
            s.receive(step_done(30)),
            Err(SessionError::Unsolicited {
                got: MessageKind::StepDone
            })
        );
        assert_eq!(s.state(), State::Failed);
        assert_eq!(s.reached(), SimTime::from_millis(20));
    }

    #[test]
    fn a_reply_of_the_wrong_kind_is_unexpected_naming_both_kinds() {
        // (what is due, what arrives) at every stage.
        type Setup = fn(&mut Session);
        let stages: [(Setup, MessageKind, Message); 4] = [
            (
                |s| {
                    s.hello("x").unwrap();
                },
                MessageKind::Hello,
                configured(),
            ),
            (
                |s| {
                    s.hello("x").unwrap();
                    s.receive(server_hello()).unwrap();
                    s.configure(flows()).unwrap();
                },
                MessageKind::Configured,
                step_done(1),
            ),
            (
                |s| {
                    *s = configured_session();
                    s.step(step(1)).unwrap();
                },
                MessageKind::StepDone,
                summary(),
            ),
            (
                |s| {
                    *s = configured_session();
                    s.finish().unwrap();
                },
                MessageKind::Summary,
                server_hello(),
            ),
        ];
        for (setup, expected, reply) in stages {
            let mut s = Session::new();
            setup(&mut s);
            let got = reply.kind();
            assert_eq!(
                s.receive(reply),
                Err(SessionError::Unexpected { got, expected })
            );
            assert_eq!(s.state(), State::Failed);
            // Nothing more is due or allowed.
            assert_eq!(s.expected(), None);
            assert!(matches!(
                s.step(step(2)),
                Err(SessionError::OutOfTurn {
                    state: State::Failed,
                    ..
                })
            ));
        }
    }

    #[test]
    fn finishing_with_a_step_unanswered_expects_the_summary_next() {
        // The server answers in order, so the StepDone comes where the
        // Summary is due: the bridge reports it rather than skipping it.
        let mut s = configured_session();
        s.step(step(10)).unwrap();
        s.finish().unwrap();
        assert_eq!(
            s.receive(step_done(10)),
            Err(SessionError::Unexpected {
                got: MessageKind::StepDone,
                expected: MessageKind::Summary
            })
        );
        assert_eq!(s.reached(), SimTime::ZERO);
    }

    #[test]
    fn an_error_from_the_server_fails_the_session_at_any_stage() {
        let mut s = configured_session();
        s.step(step(10)).unwrap();
        s.receive(step_done(10)).unwrap();
        s.step(step(20)).unwrap();
        assert_eq!(
            s.receive(error(ErrorCode::InvalidStep, "send at 1ms is before 2ms")),
            Err(SessionError::Remote {
                code: ErrorCode::InvalidStep,
                message: "send at 1ms is before 2ms".into()
            })
        );
        assert_eq!(s.state(), State::Failed);
        assert_eq!(s.reached(), SimTime::from_millis(10));

        // Also in the handshake, and when nothing is due.
        let mut s = Session::new();
        s.hello("x").unwrap();
        assert!(matches!(
            s.receive(error(ErrorCode::UnsupportedVersion, "v2 only")),
            Err(SessionError::Remote {
                code: ErrorCode::UnsupportedVersion,
                ..
            })
        ));
        let mut s = configured_session();
        assert!(matches!(
            s.receive(error(ErrorCode::Internal, "out of memory")),
            Err(SessionError::Remote {
                code: ErrorCode::Internal,
                ..
            })
        ));
    }

    #[test]
    fn a_hello_of_another_version_is_a_mismatch_naming_both() {
        let mut s = Session::new();
        s.hello("x").unwrap();
        let other = PROTOCOL_VERSION + 1;
        assert_eq!(
            s.receive(
                Hello {
                    protocol_version: other,
                    software: "future".into()
                }
                .into()
            ),
            Err(SessionError::VersionMismatch {
                server: other,
                client: PROTOCOL_VERSION
            })
        );
        assert_eq!(s.state(), State::Failed);
        assert_eq!(s.server_software(), "");
    }

    #[test]
    fn a_frame_of_another_version_is_a_mismatch_only_during_the_handshake() {
        let frame = FrameError::UnsupportedVersion {
            found: 7,
            supported: PROTOCOL_VERSION,
        };
        let mut s = Session::new();
        s.hello("x").unwrap();
        assert_eq!(
            s.frame_error(frame.clone()),
            SessionError::VersionMismatch {
                server: 7,
                client: PROTOCOL_VERSION
            }
        );
        assert_eq!(s.state(), State::Failed);

        // Later the same frame is a broken server, not another release.
        let mut s = configured_session();
        s.step(step(1)).unwrap();
        assert_eq!(s.frame_error(frame.clone()), SessionError::Frame(frame));
        assert_eq!(s.state(), State::Failed);
        let mut s = Session::new();
        s.hello("x").unwrap();
        let bad = FrameError::UnknownKind { kind: 99 };
        assert_eq!(s.frame_error(bad.clone()), SessionError::Frame(bad));
    }

    #[test]
    fn messages_before_the_hello_or_after_the_end_are_unsolicited() {
        let mut s = Session::new();
        assert_eq!(
            s.receive(server_hello()),
            Err(SessionError::Unsolicited {
                got: MessageKind::Hello
            })
        );
        // A second Hello after the handshake.
        let mut s = Session::new();
        s.hello("x").unwrap();
        s.receive(server_hello()).unwrap();
        assert_eq!(
            s.receive(server_hello()),
            Err(SessionError::Unsolicited {
                got: MessageKind::Hello
            })
        );
        // Anything after the Summary.
        let mut s = configured_session();
        s.finish().unwrap();
        s.receive(summary()).unwrap();
        assert_eq!(
            s.receive(step_done(1)),
            Err(SessionError::Unsolicited {
                got: MessageKind::StepDone
            })
        );
        // A request kind echoed back by a confused server.
        let mut s = configured_session();
        s.step(step(1)).unwrap();
        assert_eq!(
            s.receive(Message::Step(step(1))),
            Err(SessionError::Unexpected {
                got: MessageKind::Step,
                expected: MessageKind::StepDone
            })
        );
    }

    #[test]
    fn requests_out_of_turn_are_refused_and_change_nothing() {
        let out_of_turn =
            |r: Result<Message, SessionError>| matches!(r, Err(SessionError::OutOfTurn { .. }));
        let mut s = Session::new();
        assert!(out_of_turn(s.configure(flows())));
        assert!(out_of_turn(s.step(step(1))));
        assert!(out_of_turn(s.finish()));
        assert_eq!(s.state(), State::Start);
        s.hello("x").unwrap();
        // Configure before the server's Hello arrived.
        assert_eq!(
            s.configure(flows()),
            Err(SessionError::OutOfTurn {
                request: MessageKind::Configure,
                state: State::AwaitHello
            })
        );
        assert!(out_of_turn(s.hello("again")));
        s.receive(server_hello()).unwrap();
        // Step before Configure.
        assert!(out_of_turn(s.step(step(1))));
        assert_eq!(s.state(), State::Handshaken);
        s.configure(flows()).unwrap();
        // Step before Configured arrived, a second Configure.
        assert!(out_of_turn(s.step(step(1))));
        assert!(out_of_turn(s.configure(flows())));
        s.receive(configured()).unwrap();
        s.finish().unwrap();
        // Nothing after Finish.
        assert!(out_of_turn(s.step(step(1))));
        assert!(out_of_turn(s.finish()));
        assert_eq!(s.state(), State::AwaitSummary);
    }

    #[test]
    fn a_step_done_with_deliveries_is_handed_over_whole() {
        let mut s = configured_session();
        s.step(step(5)).unwrap();
        let done = StepDone {
            reached: SimTime::from_millis(3),
            deliveries: vec![Delivery {
                flow: 0,
                number: 4,
                sent: SimTime::from_millis(1),
                received: SimTime::from_millis(3),
                state_index: 0,
                state_count: 1,
                size: 100,
            }],
            drops: Vec::new(),
        };
        assert_eq!(s.receive(done.clone().into()), Ok(Event::StepDone(done)));
        assert_eq!(s.reached(), SimTime::from_millis(3));
    }

    fn rule() -> AnswerRule {
        AnswerRule {
            trigger_flow: 0,
            answer_flow: 1,
            delay: SimTime::from_millis(1),
            size: 16,
            state_count: 1,
            max_delay: SimTime::MAX,
            drop_stale: false,
            last_trigger: SimTime::from_secs(1),
        }
    }

    #[test]
    fn rules_go_once_before_the_first_step_and_are_answered() {
        let mut s = configured_session();
        assert_eq!(
            s.rules(vec![rule()]).unwrap(),
            Message::Rules(Rules {
                rules: vec![rule()]
            })
        );
        assert_eq!(s.expected(), Some(MessageKind::RulesInstalled));
        // Nothing else may go while they are unanswered.
        assert!(matches!(
            s.step(step(1)),
            Err(SessionError::OutOfTurn { .. })
        ));
        assert_eq!(
            s.receive(RulesInstalled { count: 1 }.into()),
            Ok(Event::RulesInstalled { count: 1 })
        );
        assert_eq!(s.state(), State::Stepping { open: 0 });
        assert!(matches!(
            s.rules(vec![rule()]),
            Err(SessionError::OutOfTurn {
                request: MessageKind::Rules,
                ..
            })
        ));
        s.step(step(1)).unwrap();
    }

    #[test]
    fn rules_after_a_step_are_out_of_turn_and_a_stray_answer_is_unexpected() {
        let mut s = configured_session();
        s.step(step(1)).unwrap();
        s.receive(step_done(1)).unwrap();
        assert!(matches!(
            s.rules(vec![rule()]),
            Err(SessionError::OutOfTurn { .. })
        ));
        let mut s = configured_session();
        s.step(step(1)).unwrap();
        assert_eq!(
            s.receive(RulesInstalled { count: 0 }.into()),
            Err(SessionError::Unexpected {
                got: MessageKind::RulesInstalled,
                expected: MessageKind::StepDone
            })
        );
    }
}
