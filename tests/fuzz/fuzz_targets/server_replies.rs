//! The master's handling of a server's replies: a whole co-simulation (the
//! DC servo example, shortened) whose network answers each step with the
//! next frame of the fuzzed byte stream, decoded as the bridge's client
//! decodes it (`bridge/src/ns3/connection.rs`) and mapped to the client's
//! errors as `Ns3Client` maps them (an Error frame is `Remote`, another kind
//! `Unexpected`, a bad frame `Frame`, the end of the stream `Closed`). The
//! session must end with a result or an error, never a panic or a hang, and
//! still account for every packet (`Session::finish`).
//!
//! Input: byte 0 picks the sync scheme, byte 1 how the stream is cut into
//! reads; the rest is what the "server" sends.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use bridge::config::Resolved;
use bridge::mobility::node_motions;
use bridge::network::{Network, NetworkError};
use bridge::ns3::Ns3Error;
use bridge::scenario_file::{load_text, Override};
use bridge::session::Session;
use controlsim::{Silent, System};
use libfuzzer_sys::fuzz_target;
use protocol::{decode, Configured, Decoded, FlowSpec, Message, MessageKind, SimTime, Step, StepDone, Summary, DEFAULT_MAX_PAYLOAD};

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
/// of `chunk` bytes the way the bridge reads its socket.
struct ScriptedServer {
    stream: Vec<u8>,
    read: usize,
    chunk: usize,
    inbox: Vec<u8>,
    reached: SimTime,
    pending_steps: usize,
}

impl ScriptedServer {
    fn recv(&mut self) -> Result<Message, Ns3Error> {
        let reached = self.reached;
        loop {
            match decode(&self.inbox, DEFAULT_MAX_PAYLOAD) {
                Ok(Decoded::Frame { message, consumed }) => {
                    self.inbox.drain(..consumed);
                    return match message {
                        Message::Error(e) => Err(Ns3Error::Remote { reached, code: e.code, message: e.message }),
                        m => Ok(m),
                    };
                }
                Ok(Decoded::Incomplete { .. }) => {}
                Err(source) => return Err(Ns3Error::Frame { reached, source }),
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
}

impl Network for ScriptedServer {
    fn configure(&mut self, flows: &[FlowSpec]) -> Result<Configured, NetworkError> {
        Ok(Configured { node_count: 2, description: format!("scripted server, {} flows", flows.len()) })
    }

    fn begin_step(&mut self, _step: Step) -> Result<(), NetworkError> {
        self.pending_steps += 1;
        Ok(())
    }

    fn end_step(&mut self) -> Result<StepDone, NetworkError> {
        assert!(self.pending_steps > 0, "end_step without begin_step");
        self.pending_steps -= 1;
        match self.recv()? {
            Message::StepDone(done) => {
                self.reached = done.reached;
                Ok(done)
            }
            other => Err(Ns3Error::Unexpected { reached: self.reached, got: other.kind(), expected: MessageKind::StepDone }.into()),
        }
    }

    fn finish(&mut self) -> Result<Summary, NetworkError> {
        match self.recv()? {
            Message::Summary(s) => Ok(s),
            other => Err(Ns3Error::Unexpected { reached: self.reached, got: other.kind(), expected: MessageKind::Summary }.into()),
        }
    }

    fn reached(&self) -> SimTime {
        self.reached
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
    let server = ScriptedServer { stream: stream.to_vec(), read: 0, chunk: 1 + *chunk as usize * 16, inbox: Vec::new(), reached: SimTime::ZERO, pending_steps: 0 };
    let mut session = Session::new(resolved, system, motions, Box::new(server), std::io::sink(), None);
    let outcome = session.run(&mut Silent);
    let alive = outcome.is_ok();
    let _ = session.finish(alive);
});
