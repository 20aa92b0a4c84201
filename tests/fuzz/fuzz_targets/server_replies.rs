//! The master's handling of a server's replies: a whole co-simulation (the
//! DC servo example, shortened) whose network answers each step with the
//! next frame of the fuzzed byte stream. The replies go through the
//! bridge's own conversation state machine, `protocol::client::Session`,
//! and its verdicts become the client's errors by `bridge::ns3::session_error`,
//! exactly as `Ns3Client` handles them (only the socket is replaced: the
//! stream is cut into reads, and its end is `Closed`). The handshake and
//! the Configure are answered by the script itself, so that every input
//! reaches the steps. The session must end with a result or an error, never
//! a panic or a hang, and still account for every packet (`GraphSession::finish`).
//!
//! Input: byte 0 picks the sync scheme, byte 1 how the stream is cut into
//! reads; the rest is what the "server" sends.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use bridge::config::Resolved;
use bridge::mobility::node_motions;
use bridge::network::{Network, NetworkError};
use bridge::ns3::{session_error, Ns3Error};
use bridge::packets_csv::PacketsCsv;
use bridge::scenario_file::{load_text, Override};
use bridge::loop_graph;
use controlsim::graph::ObserveGraph;
use controlsim::{Silent, System};
use libfuzzer_sys::fuzz_target;
use protocol::client::{self, Event};
use protocol::{decode, Configured, Decoded, FlowSpec, Hello, Message, SimTime, Step, StepDone, Summary, DEFAULT_MAX_PAYLOAD, PROTOCOL_VERSION};

const SCENARIO: &str = include_str!("../../../examples/dc_servo_p2p.toml");
const SCHEMES: [&str; 3] = ["time_stepping", "master_slave", "event_driven"];

fn scenarios() -> &'static Vec<Resolved> {
    static RESOLVED: OnceLock<Vec<Resolved>> = OnceLock::new();
    RESOLVED.get_or_init(|| {
        SCHEMES
            .iter()
            .map(|scheme| {
                let sets = [format!("sync.scheme={scheme}"), "duration=200ms".into()];
                let overrides: Vec<Override> = sets.iter().map(|s| Override::parse_set(s).unwrap()).collect();
                load_text(Path::new("examples/dc_servo_p2p.toml"), SCENARIO, &overrides).unwrap().resolved
            })
            .collect()
    })
}

/// A network whose answers are the frames of a byte stream, read in chunks
/// of `chunk` bytes the way the bridge reads its socket, and judged by the
/// client's session.
struct ScriptedServer {
    stream: Vec<u8>,
    read: usize,
    chunk: usize,
    inbox: Vec<u8>,
    session: client::Session,
}

impl ScriptedServer {
    /// The next reply, as the session reads it.
    fn recv(&mut self) -> Result<Event, Ns3Error> {
        loop {
            let reached = self.session.reached();
            match decode(&self.inbox, DEFAULT_MAX_PAYLOAD) {
                Ok(Decoded::Frame { message, consumed }) => {
                    self.inbox.drain(..consumed);
                    return self.session.receive(message).map_err(|e| session_error(e, reached));
                }
                Ok(Decoded::Incomplete { .. }) => {}
                Err(source) => return Err(session_error(self.session.frame_error(source), reached)),
            }
            if self.read == self.stream.len() {
                let pending = self.inbox.len();
                return Err(Ns3Error::Closed { reached, detail: format!("{pending} bytes pending"), stderr: String::new() });
            }
            let n = self.chunk.min(self.stream.len() - self.read);
            self.inbox.extend_from_slice(&self.stream[self.read..self.read + n]);
            self.read += n;
        }
    }

    /// A request the session must allow now.
    fn request(&mut self, make: impl FnOnce(&mut client::Session) -> Result<Message, client::SessionError>) -> Result<Message, Ns3Error> {
        let reached = self.session.reached();
        make(&mut self.session).map_err(|e| session_error(e, reached))
    }
}

impl Network for ScriptedServer {
    fn configure(&mut self, flows: &[FlowSpec]) -> Result<Configured, NetworkError> {
        // The handshake and the Configure's answer are the script's own.
        self.request(|s| s.hello("fuzz"))?;
        let hello = Hello { protocol_version: PROTOCOL_VERSION, software: "scripted".into() };
        self.session.receive(hello.into()).expect("our own Hello");
        self.request(|s| s.configure(flows.to_vec()))?;
        let configured = Configured { node_count: 2, description: format!("scripted server, {} flows", flows.len()) };
        match self.session.receive(configured.into()).expect("our own Configured") {
            Event::Configured(c) => Ok(c),
            other => panic!("Configured answered with {other:?}"),
        }
    }

    fn begin_step(&mut self, step: Step) -> Result<(), NetworkError> {
        self.request(|s| s.step(step))?;
        Ok(())
    }

    fn end_step(&mut self) -> Result<StepDone, NetworkError> {
        match self.recv()? {
            Event::StepDone(done) => Ok(done),
            other => panic!("the session let {other:?} answer a Step"),
        }
    }

    fn finish(&mut self) -> Result<Summary, NetworkError> {
        self.request(|s| s.finish())?;
        match self.recv()? {
            Event::Summary(s) => Ok(s),
            other => panic!("the session let {other:?} answer Finish"),
        }
    }

    fn reached(&self) -> SimTime {
        self.session.reached()
    }

    fn may_deliver_instantly(&self) -> bool {
        false
    }

    fn uses_kinematics(&self) -> bool {
        false
    }

    fn software(&self) -> String {
        "scripted".into()
    }
}

fuzz_target!(|data: &[u8]| {
    let [scheme, chunk, stream @ ..] = data else { return };
    let resolved = &scenarios()[*scheme as usize % SCHEMES.len()];
    let system = System::from_config(&resolved.system, resolved.scenario.control_seed()).unwrap();
    let motions = node_motions(resolved, &system).unwrap();
    let server = ScriptedServer { stream: stream.to_vec(), read: 0, chunk: 1 + *chunk as usize * 16, inbox: Vec::new(), session: client::Session::new() };
    let (mut session, map) = loop_graph::session(resolved, &system, motions, Box::new(server), PacketsCsv::new(std::io::sink()), None).unwrap();
    let outcome = session.run(&mut ObserveGraph::new(&map, Silent));
    let alive = outcome.is_ok();
    let _ = session.finish(alive);
});
