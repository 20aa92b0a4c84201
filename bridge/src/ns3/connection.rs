//! Blocking, framed message I/O over the TCP connection to the server.
//!
//! The lock-step protocol has exactly one request in flight, so plain
//! blocking sockets are both the simplest and the fastest choice: an async
//! runtime would add a wake-up to every round trip and buy nothing. Reads use
//! a short socket timeout so that a long wait can still notice a deadline, a
//! Ctrl-C or a dead child between slices; data that is already there is
//! returned at once.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use protocol::{decode, encode_into, Decoded, EncodeError, FrameError, Message, DEFAULT_MAX_PAYLOAD};

/// How often a blocked read wakes up to check its deadline and abort hook.
const POLL_INTERVAL: Duration = Duration::from_millis(50);
const READ_CHUNK: usize = 64 * 1024;

pub(crate) enum RecvError<A> {
    /// Nothing complete arrived before the deadline.
    Timeout { waited: Duration },
    /// The peer closed the connection; `pending` bytes of a frame had arrived.
    Closed { pending: usize },
    Frame(FrameError),
    Io(io::Error),
    /// The abort hook asked to stop waiting.
    Aborted(A),
}

pub(crate) struct FramedStream {
    stream: TcpStream,
    inbox: Vec<u8>,
    filled: usize,
    outbox: Vec<u8>,
}

impl FramedStream {
    pub(crate) fn new(stream: TcpStream) -> io::Result<Self> {
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(POLL_INTERVAL))?;
        Ok(FramedStream { stream, inbox: vec![0; READ_CHUNK], filled: 0, outbox: Vec::new() })
    }

    pub(crate) fn send(&mut self, message: &Message) -> Result<(), SendError> {
        self.outbox.clear();
        encode_into(message, &mut self.outbox, DEFAULT_MAX_PAYLOAD).map_err(SendError::Encode)?;
        self.stream.write_all(&self.outbox).map_err(SendError::Io)
    }

    /// Waits for one whole message until `deadline`. `abort` is consulted
    /// whenever the socket has been quiet for a poll interval.
    pub(crate) fn recv<A>(
        &mut self,
        deadline: Instant,
        mut abort: impl FnMut() -> Option<A>,
    ) -> Result<Message, RecvError<A>> {
        let started = Instant::now();
        loop {
            match decode(&self.inbox[..self.filled], DEFAULT_MAX_PAYLOAD).map_err(RecvError::Frame)? {
                Decoded::Frame { message, consumed } => {
                    self.inbox.copy_within(consumed..self.filled, 0);
                    self.filled -= consumed;
                    return Ok(message);
                }
                Decoded::Incomplete { needed } => {
                    if needed > self.inbox.len() {
                        self.inbox.resize(needed.max(self.filled + READ_CHUNK), 0);
                    }
                }
            }
            if self.filled == self.inbox.len() {
                self.inbox.resize(self.inbox.len() + READ_CHUNK, 0);
            }
            match self.stream.read(&mut self.inbox[self.filled..]) {
                Ok(0) => return Err(RecvError::Closed { pending: self.filled }),
                Ok(n) => self.filled += n,
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                    if let Some(reason) = abort() {
                        return Err(RecvError::Aborted(reason));
                    }
                    if Instant::now() >= deadline {
                        return Err(RecvError::Timeout { waited: started.elapsed() });
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {
                    return Err(RecvError::Closed { pending: self.filled })
                }
                Err(e) => return Err(RecvError::Io(e)),
            }
        }
    }
}

pub(crate) enum SendError {
    Encode(EncodeError),
    Io(io::Error),
}
