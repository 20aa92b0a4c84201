//! Client for the ns-3 stepping server (`ns3-scenarios/`, binary `netloop-server`).
//!
//! # Lifecycle
//! 1. [`Ns3Client::start`] makes a connected pair of TCP sockets on 127.0.0.1,
//!    or of Unix-domain sockets, or a shared-memory channel
//!    ([`Ns3Options::transport`], `handover.rs`, `shm.rs`),
//!    spawns the server with the network's command-line arguments and its end of the pair (`--connectionFd=N`), so that the
//!    server never listens and no other process can reach it; waits for the
//!    server's first stdout line (it is ready), and exchanges [`Hello`]s
//!    (`TCP_NODELAY`); a
//!    different protocol version is an error naming both versions, whether
//!    the server says so in its Hello or its frames carry another version.
//! 2. [`Ns3Client::configure`] sends the flows and returns what the server built.
//! 3. [`Ns3Client::step`] as often as needed: run until a time (or the first
//!    control delivery), injecting sends and node kinematics.
//! 4. [`Ns3Client::finish`] collects the server's [`Summary`] and reaps it.
//!
//! What is sent when, and what each answer means, is [`protocol::client::Session`]'s
//! business; this crate is the blocking I/O around it: sockets, deadlines,
//! the process and the Ctrl-C flag.
//!
//! # Practical considerations
//! - Every wait has a deadline: [`Ns3Options::connect_timeout`] for start-up,
//!   [`Ns3Options::step_timeout`] for each request written and for each
//!   answer. A server that dies, goes silent or stops reading yields an error
//!   naming the simulated time reached, with the tail of its stderr.
//! - Dropping the client kills and reaps the server (see `process.rs` for
//!   the layers that also cover `kill -9` and Ctrl-C).
//! - An optional cancel flag (set by a Ctrl-C handler) ends any wait within
//!   50 ms with [`Ns3Error::Interrupted`], from the wait for the server's
//!   port on.

mod connection;
mod handover;
pub mod network_schema;
mod process;
pub mod shm;
mod socket;
mod transport;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use protocol::client::{Event, Session, SessionError};
use protocol::{
    AnswerRule, Configured, EncodeError, ErrorCode, FlowSpec, FrameError, Message, MessageKind,
    SimTime, Step, StepDone, Summary,
};

use connection::{FramedStream, RecvError, SendError};
pub use process::{describe_status as describe_exit, server_problem};
use process::{describe_status, ServerProcess};
pub use transport::Transport;

/// The software string this side sends in its [`Hello`].
pub const CLIENT_SOFTWARE: &str = concat!("netloop ", env!("CARGO_PKG_VERSION"));

/// Environment variable naming the server binary, overriding the default.
pub const SERVER_ENV: &str = "NETLOOP_NS3_SERVER";

/// How to start and talk to the server.
#[derive(Clone, Debug)]
pub struct Ns3Options {
    pub server: PathBuf,
    /// ns-3 `CommandLine` arguments describing the network (`--delay=2ms` ...).
    pub args: Vec<String>,
    /// From spawn to a completed handshake.
    pub connect_timeout: Duration,
    /// For each answer to a request. Generous: a big Wi-Fi step can take long.
    pub step_timeout: Duration,
    /// When set to true (e.g. by a Ctrl-C handler), waits end with `Interrupted`.
    pub cancel: Option<Arc<AtomicBool>>,
    /// The kind of connection handed to the server (`Auto`: Unix).
    pub transport: Transport,
    /// How long each side polls for the other's answer before blocking
    /// (`[network.server] spin_wait`; the server gets `--spinWait`); zero
    /// blocks at once and passes no flag.
    pub spin_wait: Duration,
}

impl Ns3Options {
    pub fn new(server: PathBuf, args: Vec<String>) -> Self {
        Ns3Options {
            server,
            args,
            connect_timeout: Duration::from_secs(30),
            step_timeout: Duration::from_secs(300),
            cancel: None,
            transport: Transport::default(),
            spin_wait: Duration::ZERO,
        }
    }
}

/// Where the server binary is: `$NETLOOP_NS3_SERVER`, else the build tree of
/// this checkout, else `netloop-server` on `PATH`.
pub fn default_server_path() -> PathBuf {
    if let Some(path) = std::env::var_os(SERVER_ENV) {
        return PathBuf::from(path);
    }
    let built =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ns3-scenarios/build/netloop-server");
    if built.exists() {
        return built.canonicalize().unwrap_or(built);
    }
    PathBuf::from("netloop-server")
}

/// Everything that can go wrong with the server. All are fatal for the run.
#[derive(Debug, thiserror::Error)]
pub enum Ns3Error {
    #[error("cannot start the ns-3 server {binary}: {source} (build it with scripts/setup.sh or set {SERVER_ENV})", binary = .binary.display())]
    Spawn {
        binary: PathBuf,
        source: std::io::Error,
    },
    #[error("the ns-3 server {binary} did not print its port within {timeout:?}{stderr}", binary = .binary.display())]
    NoPort {
        binary: PathBuf,
        timeout: Duration,
        stderr: String,
    },
    #[error("the ns-3 server {binary} exited at start-up ({status}){stderr}", binary = .binary.display())]
    ExitedAtStart {
        binary: PathBuf,
        status: String,
        stderr: String,
    },
    /// The server exited with code 2 at start-up: it rejected an argument,
    /// which `message` names (bad input, not a failed run).
    #[error("the ns-3 server {binary} rejected its arguments: {message}", binary = .binary.display())]
    BadArgument {
        binary: PathBuf,
        message: String,
        /// The argument the server named in its structured problem line
        /// (`netloop-problem: {...}`), without dashes; `None` when it printed
        /// none (a program that exits 2 without one).
        argument: Option<String>,
    },
    #[error("the ns-3 server {binary} printed {line:?} where its port number was expected", binary = .binary.display())]
    BadPortLine { binary: PathBuf, line: String },
    #[error(
        "cannot make the local connection (TCP or Unix-domain pair) to the ns-3 server: {source}"
    )]
    Connect { source: std::io::Error },
    #[error("protocol version mismatch: the ns-3 server speaks version {server}, netloop speaks version {client}")]
    VersionMismatch { server: u16, client: u16 },
    #[error("the ns-3 server died ({status}) at simulated time {reached}{stderr}")]
    ServerDied {
        reached: SimTime,
        status: String,
        stderr: String,
    },
    #[error("the ns-3 server did not answer or take our data for {waited:?} at simulated time {reached} (timeout; is it stopped or stuck?)")]
    Timeout { reached: SimTime, waited: Duration },
    #[error("the ns-3 server closed the connection at simulated time {reached}{detail}{stderr}")]
    Closed {
        reached: SimTime,
        detail: String,
        stderr: String,
    },
    #[error("the ns-3 server reported {code:?} at simulated time {reached}: {message}")]
    Remote {
        reached: SimTime,
        code: ErrorCode,
        message: String,
    },
    #[error("malformed frame from the ns-3 server at simulated time {reached}: {source}")]
    Frame {
        reached: SimTime,
        source: FrameError,
    },
    #[error(
        "the ns-3 server sent {got} where {expected} was expected, at simulated time {reached}"
    )]
    Unexpected {
        reached: SimTime,
        got: MessageKind,
        expected: MessageKind,
    },
    #[error("interrupted at simulated time {reached}")]
    Interrupted { reached: SimTime },
    #[error("cannot encode a message for the ns-3 server: {0}")]
    Encode(#[from] EncodeError),
    #[error("i/o error with the ns-3 server at simulated time {reached}: {source}")]
    Io {
        reached: SimTime,
        source: std::io::Error,
    },
    /// A protocol failure the variants above do not name: an answer when
    /// none was due, or a request out of turn (a bridge bug).
    #[error("protocol error with the ns-3 server at simulated time {reached}: {source}")]
    Protocol {
        reached: SimTime,
        source: SessionError,
    },
}

impl Ns3Error {
    /// The simulated time the network had reached, where the error has one.
    pub fn reached(&self) -> Option<SimTime> {
        match self {
            Ns3Error::ServerDied { reached, .. }
            | Ns3Error::Timeout { reached, .. }
            | Ns3Error::Closed { reached, .. }
            | Ns3Error::Remote { reached, .. }
            | Ns3Error::Frame { reached, .. }
            | Ns3Error::Unexpected { reached, .. }
            | Ns3Error::Interrupted { reached }
            | Ns3Error::Io { reached, .. }
            | Ns3Error::Protocol { reached, .. } => Some(*reached),
            _ => None,
        }
    }
}

/// Why a wait was abandoned before the deadline.
enum Abort {
    Interrupted,
    Died(std::process::ExitStatus),
}

/// Ends a wait early on a Ctrl-C or the server's death.
fn abort_hook<'a>(
    cancel: &'a Option<Arc<AtomicBool>>,
    process: &'a mut ServerProcess,
) -> impl FnMut() -> Option<Abort> + 'a {
    move || {
        if cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Some(Abort::Interrupted);
        }
        process.try_status().map(Abort::Died)
    }
}

/// A connected, handshaken ns-3 server.
pub struct Ns3Client {
    stream: FramedStream,
    // Declared after `stream`: the socket closes before the child is reaped.
    process: ServerProcess,
    session: Session,
    step_timeout: Duration,
    cancel: Option<Arc<AtomicBool>>,
}

impl Ns3Client {
    /// Spawns the server, connects and shakes hands.
    ///
    /// # Errors
    /// Start-up failures ([`Ns3Error::Spawn`], [`Ns3Error::NoPort`], ...),
    /// [`Ns3Error::VersionMismatch`], or a timeout.
    pub fn start(options: &Ns3Options) -> Result<Self, Ns3Error> {
        let deadline = Instant::now() + options.connect_timeout;
        let pair = handover::connected_pair(options.transport, options.connect_timeout)
            .map_err(|source| Ns3Error::Connect { source })?;
        let mut args = options.args.clone();
        if !options.spin_wait.is_zero() {
            args.push(format!("--spinWait={}ns", options.spin_wait.as_nanos()));
        }
        let process = ServerProcess::spawn(
            &options.server,
            &args,
            options.connect_timeout,
            pair.handed_over(),
            options.cancel.as_deref(),
        )?;
        // The server has its own copy now; ours must not keep the connection open.
        drop(pair.server);
        tracing::debug!(target: "ns3", "server ready on its connection (port {})", process.port());
        let stream = FramedStream::new(pair.bridge, options.spin_wait)
            .map_err(|source| Ns3Error::Connect { source })?;
        let mut client = Ns3Client {
            stream,
            process,
            session: Session::new(),
            step_timeout: options.step_timeout,
            cancel: options.cancel.clone(),
        };
        let hello = client
            .session
            .hello(CLIENT_SOFTWARE)
            .map_err(|e| client.failed(e))?;
        client.send(&hello, deadline)?;
        // A server of another version frames its answer (a Hello or an Error)
        // with its own version: the session reports either as a mismatch.
        match client.recv_until(deadline)? {
            Event::Handshaken { .. } => Ok(client),
            other => unreachable!("the session answered a Hello with {other:?}"),
        }
    }

    /// Installs the flows.
    ///
    /// # Errors
    /// [`Ns3Error::Remote`] when the server rejects them (unknown node, ...).
    pub fn configure(&mut self, flows: Vec<FlowSpec>) -> Result<Configured, Ns3Error> {
        match self.request(|session| session.configure(flows))? {
            Event::Configured(c) => Ok(c),
            other => unreachable!("the session answered a Configure with {other:?}"),
        }
    }

    /// Installs event-triggered answer rules (once, before the first step);
    /// returns how many the server installed.
    ///
    /// # Errors
    /// [`Ns3Error::Remote`] when the server rejects them.
    pub fn install_rules(&mut self, rules: Vec<AnswerRule>) -> Result<u32, Ns3Error> {
        match self.request(|session| session.rules(rules))? {
            Event::RulesInstalled { count } => Ok(count),
            other => unreachable!("the session answered Rules with {other:?}"),
        }
    }

    /// Runs the network until `step.until` (or the first control delivery).
    ///
    /// # Errors
    /// Any [`Ns3Error`]; all name the simulated time reached before the step.
    pub fn step(&mut self, step: Step) -> Result<StepDone, Ns3Error> {
        self.begin_step(step)?;
        self.end_step()
    }

    /// Sends a step without waiting for its answer, so the caller can work
    /// while ns-3 runs (time-stepping overlaps the two simulators this way).
    /// Exactly one [`Ns3Client::end_step`] must follow.
    ///
    /// # Errors
    /// As [`Ns3Client::step`].
    pub fn begin_step(&mut self, step: Step) -> Result<(), Ns3Error> {
        self.check_cancel()?;
        let message = self.session.step(step).map_err(|e| self.failed(e))?;
        self.send(&message, Instant::now() + self.step_timeout)
    }

    /// A Ctrl-C is noticed before each request, not only while waiting: a
    /// fast server may never keep us waiting long enough to look.
    fn check_cancel(&self) -> Result<(), Ns3Error> {
        if self
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            return Err(Ns3Error::Interrupted {
                reached: self.reached(),
            });
        }
        Ok(())
    }

    /// Waits for the answer to the step sent by [`Ns3Client::begin_step`].
    ///
    /// # Errors
    /// As [`Ns3Client::step`].
    pub fn end_step(&mut self) -> Result<StepDone, Ns3Error> {
        match self.recv_until(Instant::now() + self.step_timeout)? {
            Event::StepDone(done) => Ok(done),
            other => unreachable!("the session answered a Step with {other:?}"),
        }
    }

    /// Ends the run: the server answers with its summary and exits.
    ///
    /// # Errors
    /// As [`Ns3Client::step`].
    pub fn finish(mut self) -> Result<Summary, Ns3Error> {
        let summary = match self.request(Session::finish)? {
            Event::Summary(s) => s,
            other => unreachable!("the session answered a Finish with {other:?}"),
        };
        self.process.wait_exit(Duration::from_secs(5));
        Ok(summary)
    }

    /// Simulated time the network has reached.
    pub fn reached(&self) -> SimTime {
        self.session.reached()
    }

    /// The server's self-description from its Hello, e.g. its ns-3 version.
    pub fn server_software(&self) -> &str {
        self.session.server_software()
    }

    /// The server's process id, for tests that kill or freeze it.
    pub fn server_pid(&self) -> u32 {
        self.process.pid()
    }

    /// Sends the request `make` gets from the session and waits for its answer.
    fn request(
        &mut self,
        make: impl FnOnce(&mut Session) -> Result<Message, SessionError>,
    ) -> Result<Event, Ns3Error> {
        self.check_cancel()?;
        let message = make(&mut self.session).map_err(|e| self.failed(e))?;
        let deadline = Instant::now() + self.step_timeout;
        self.send(&message, deadline)?;
        self.recv_until(deadline)
    }

    /// Writes a message by `deadline`: a server that stops reading (frozen,
    /// with its socket buffers full) cannot block the bridge past it.
    fn send(&mut self, message: &Message, deadline: Instant) -> Result<(), Ns3Error> {
        let result = self.stream.send(
            message,
            deadline,
            abort_hook(&self.cancel, &mut self.process),
        );
        match result {
            Ok(()) => Ok(()),
            Err(SendError::Encode(e)) => Err(e.into()),
            // A write to a dead server fails with EPIPE or a reset; say what died.
            Err(SendError::Io(source)) => {
                Err(self.died_or(|reached| Ns3Error::Io { reached, source }))
            }
            Err(SendError::Timeout { waited }) => Err(Ns3Error::Timeout {
                reached: self.reached(),
                waited,
            }),
            Err(SendError::Aborted(abort)) => Err(self.aborted(abort)),
        }
    }

    /// Waits for the next message and hands it to the session.
    fn recv_until(&mut self, deadline: Instant) -> Result<Event, Ns3Error> {
        let result = self
            .stream
            .recv(deadline, abort_hook(&self.cancel, &mut self.process));
        let reached = self.reached();
        match result {
            Ok(message) => self.session.receive(message).map_err(|e| self.failed(e)),
            Err(RecvError::Timeout { waited }) => Err(Ns3Error::Timeout { reached, waited }),
            Err(RecvError::Aborted(abort)) => Err(self.aborted(abort)),
            Err(RecvError::Closed { pending }) => Err(self.died_or(|reached| Ns3Error::Closed {
                reached,
                detail: if pending > 0 {
                    format!(" in the middle of a frame ({pending} bytes received)")
                } else {
                    String::new()
                },
                stderr: String::new(),
            })),
            Err(RecvError::Frame(source)) => {
                let error = self.session.frame_error(source);
                Err(self.failed(error))
            }
            Err(RecvError::Io(source)) => Err(Ns3Error::Io { reached, source }),
        }
    }

    fn aborted(&self, abort: Abort) -> Ns3Error {
        let reached = self.reached();
        match abort {
            Abort::Interrupted => Ns3Error::Interrupted { reached },
            Abort::Died(status) => Ns3Error::ServerDied {
                reached,
                status: describe_status(Some(status)),
                stderr: self.process.stderr_tail(),
            },
        }
    }

    /// A closed socket usually means the process died: prefer saying so.
    fn died_or(&mut self, otherwise: impl FnOnce(SimTime) -> Ns3Error) -> Ns3Error {
        let reached = self.reached();
        match self.process.wait_exit(Duration::from_millis(500)) {
            Some(status) => Ns3Error::ServerDied {
                reached,
                status: describe_status(Some(status)),
                stderr: self.process.stderr_tail(),
            },
            None => match otherwise(reached) {
                Ns3Error::Closed {
                    reached, detail, ..
                } => Ns3Error::Closed {
                    reached,
                    detail,
                    stderr: self.process.stderr_tail(),
                },
                e => e,
            },
        }
    }

    /// The session's verdict as this module's error, at the time reached.
    fn failed(&self, error: SessionError) -> Ns3Error {
        session_error(error, self.reached())
    }
}

/// The client session's verdict as this module's error, at the time the
/// network had `reached`; public so that the `server_replies` fuzz target
/// (tests/fuzz) judges replies exactly as [`Ns3Client`] does.
pub fn session_error(error: SessionError, reached: SimTime) -> Ns3Error {
    match error {
        SessionError::VersionMismatch { server, client } => {
            Ns3Error::VersionMismatch { server, client }
        }
        SessionError::Remote { code, message } => Ns3Error::Remote {
            reached,
            code,
            message,
        },
        SessionError::Unexpected { got, expected } => Ns3Error::Unexpected {
            reached,
            got,
            expected,
        },
        SessionError::Frame(source) => Ns3Error::Frame { reached, source },
        source @ (SessionError::Unsolicited { .. } | SessionError::OutOfTurn { .. }) => {
            Ns3Error::Protocol { reached, source }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{Ipv4Addr, TcpListener};

    use protocol::{decode, encode, Decoded, Hello, DEFAULT_MAX_PAYLOAD, PROTOCOL_VERSION};

    use super::*;

    /// The version a server of another release speaks.
    const OTHER_VERSION: u16 = PROTOCOL_VERSION + 1;

    /// A fake server of another protocol version: a thread on a real socket
    /// that reads the bridge's Hello and answers with `reply` in a frame whose
    /// header carries [`OTHER_VERSION`]. Its "process" is a bash script that
    /// prints a port line and relays the connection it is handed
    /// (`--connectionFd=N`, its last argument) to the thread's port. Returns
    /// the options to start it and the thread, which hands back the message
    /// the bridge sent.
    fn other_version_server(reply: Message) -> (Ns3Options, std::thread::JoinHandle<Message>) {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let thread = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            socket
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut received = Vec::new();
            let hello = loop {
                let mut chunk = [0u8; 4096];
                let n = socket.read(&mut chunk).expect("the bridge sends its Hello");
                assert!(n > 0, "the bridge closed before its Hello was whole");
                received.extend_from_slice(&chunk[..n]);
                if let Decoded::Frame { message, .. } =
                    decode(&received, DEFAULT_MAX_PAYLOAD).unwrap()
                {
                    break message;
                }
            };
            let mut frame = encode(&reply).unwrap();
            // Header: magic (4 bytes), then the version, little-endian.
            frame[4..6].copy_from_slice(&OTHER_VERSION.to_le_bytes());
            socket.write_all(&frame).unwrap();
            hello
        });
        let script = format!(
            "fd=${{1#--connectionFd=}}; exec 4<>/dev/tcp/127.0.0.1/{port}; echo {port}; \
             cat <&$fd >&4 & exec cat <&4 >&$fd"
        );
        let mut options = Ns3Options::new(
            "/bin/bash".into(),
            vec!["-c".into(), script, "fake-server".into()],
        );
        options.connect_timeout = Duration::from_secs(10);
        (options, thread)
    }

    /// Whether the server answers with its own Hello or with an Error, its
    /// frame carries its version; the bridge names both versions rather than
    /// calling the frame malformed.
    #[test]
    fn a_server_of_another_version_is_a_version_mismatch_naming_both() {
        let replies: [Message; 2] = [
            Hello {
                protocol_version: OTHER_VERSION,
                software: "netloop-server from the future".into(),
            }
            .into(),
            protocol::Error {
                code: ErrorCode::UnsupportedVersion,
                message: "unsupported protocol version 1".into(),
            }
            .into(),
        ];
        for reply in replies {
            let kind = reply.kind();
            let (options, server) = other_version_server(reply);
            let started = Instant::now();
            let err = match Ns3Client::start(&options) {
                Ok(_) => panic!(
                    "{kind}: the handshake with a server of version {OTHER_VERSION} succeeded"
                ),
                Err(e) => e,
            };
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{kind}: took {:?}",
                started.elapsed()
            );
            assert!(
                matches!(
                    err,
                    Ns3Error::VersionMismatch {
                        server: OTHER_VERSION,
                        client: PROTOCOL_VERSION
                    }
                ),
                "{kind}: {err:?}"
            );
            let text = err.to_string();
            assert!(
                text.contains(&format!("version {OTHER_VERSION}"))
                    && text.contains(&format!("version {PROTOCOL_VERSION}")),
                "{kind}: {text}"
            );
            let hello = server.join().unwrap();
            assert!(
                matches!(
                    hello,
                    Message::Hello(Hello {
                        protocol_version: PROTOCOL_VERSION,
                        ..
                    })
                ),
                "{hello:?}"
            );
        }
    }
}
