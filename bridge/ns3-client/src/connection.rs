//! Blocking, framed message I/O over the connection to the server (TCP or
//! a Unix-domain socket, [`super::socket`]).
//!
//! The lock-step protocol has exactly one request in flight, so plain
//! blocking sockets are both the simplest and the fastest choice: an async
//! runtime would add a wake-up to every round trip and buy nothing. Reads and
//! writes use a short socket timeout so that a long wait can still notice a
//! deadline, a Ctrl-C or a dead child between slices: a frozen server whose
//! socket buffers are full blocks a write as surely as it starves a read.
//! Data that is already there, or buffer space that is free, is used at once.

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use super::socket::Socket;
use protocol::{
    decode, encode_into, Decoded, EncodeError, FrameError, Message, DEFAULT_MAX_PAYLOAD,
};

/// How often a blocked read or write wakes up to check its deadline and
/// abort hook.
const POLL_INTERVAL: Duration = Duration::from_millis(50);
const READ_CHUNK: usize = 64 * 1024;

pub(crate) enum RecvError<A> {
    /// Nothing complete arrived before the deadline.
    Timeout {
        waited: Duration,
    },
    /// The peer closed the connection; `pending` bytes of a frame had arrived.
    Closed {
        pending: usize,
    },
    Frame(FrameError),
    Io(io::Error),
    /// The abort hook asked to stop waiting.
    Aborted(A),
}

pub(crate) struct FramedStream {
    stream: Socket,
    inbox: Vec<u8>,
    filled: usize,
    outbox: Vec<u8>,
    /// How long a wait for a message polls before it blocks
    /// (`[network.server] spin_wait`); zero blocks at once.
    spin: Duration,
}

impl FramedStream {
    pub(crate) fn new(mut stream: Socket, spin: Duration) -> io::Result<Self> {
        stream.prepare(POLL_INTERVAL)?;
        Ok(FramedStream {
            stream,
            inbox: vec![0; READ_CHUNK],
            filled: 0,
            outbox: Vec::new(),
            spin,
        })
    }

    /// Writes one whole message by `deadline`. `abort` is consulted whenever
    /// the socket has accepted nothing for a poll interval. After an error
    /// the stream may hold part of a frame: the connection is done for.
    pub(crate) fn send<A>(
        &mut self,
        message: &Message,
        deadline: Instant,
        mut abort: impl FnMut() -> Option<A>,
    ) -> Result<(), SendError<A>> {
        self.outbox.clear();
        encode_into(message, &mut self.outbox, DEFAULT_MAX_PAYLOAD).map_err(SendError::Encode)?;
        let started = Instant::now();
        let mut written = 0;
        while written < self.outbox.len() {
            match self.stream.write(&self.outbox[written..]) {
                Ok(0) => return Err(SendError::Io(io::ErrorKind::WriteZero.into())),
                Ok(n) => written += n,
                Err(e) => keep_waiting(e, started, deadline, &mut abort)?,
            }
        }
        Ok(())
    }

    /// Waits for one whole message until `deadline`. `abort` is consulted
    /// whenever the socket has been quiet for a poll interval.
    pub(crate) fn recv<A>(
        &mut self,
        deadline: Instant,
        mut abort: impl FnMut() -> Option<A>,
    ) -> Result<Message, RecvError<A>> {
        let started = Instant::now();
        // Spin once per message, before the first blocking read: the rest of
        // a frame that has begun to arrive follows at once.
        let mut spin = self.spin;
        loop {
            match decode(&self.inbox[..self.filled], DEFAULT_MAX_PAYLOAD)
                .map_err(RecvError::Frame)?
            {
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
            let read = if spin.is_zero() {
                self.stream.read(&mut self.inbox[self.filled..])
            } else {
                let budget = std::mem::take(&mut spin);
                match self
                    .stream
                    .spin_read(&mut self.inbox[self.filled..], budget)
                {
                    Ok(Some(n)) => Ok(n),
                    Ok(None) => self.stream.read(&mut self.inbox[self.filled..]),
                    Err(e) => Err(e),
                }
            };
            match read {
                Ok(0) => {
                    return Err(RecvError::Closed {
                        pending: self.filled,
                    })
                }
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {
                    return Err(RecvError::Closed {
                        pending: self.filled,
                    })
                }
                Err(e) => keep_waiting(e, started, deadline, &mut abort)?,
            }
        }
    }
}

pub(crate) enum SendError<A> {
    Encode(EncodeError),
    Io(io::Error),
    /// The peer took no more bytes before the deadline.
    Timeout {
        waited: Duration,
    },
    /// The abort hook asked to stop waiting.
    Aborted(A),
}

/// Why a blocked read or write gave up: what [`SendError`] and
/// [`RecvError`] have in common.
enum Stop<A> {
    Timeout { waited: Duration },
    Aborted(A),
    Io(io::Error),
}

/// The one rule for a read or write (started at `started`) that failed with
/// `error`: a poll interval that moved nothing (WouldBlock, TimedOut) asks
/// the abort hook, then the deadline; EINTR just tries again; any other
/// error ends the wait. `Ok(())` means try again.
fn keep_waiting<A>(
    error: io::Error,
    started: Instant,
    deadline: Instant,
    abort: &mut impl FnMut() -> Option<A>,
) -> Result<(), Stop<A>> {
    match error.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            if let Some(reason) = abort() {
                return Err(Stop::Aborted(reason));
            }
            if Instant::now() >= deadline {
                return Err(Stop::Timeout {
                    waited: started.elapsed(),
                });
            }
            Ok(())
        }
        io::ErrorKind::Interrupted => Ok(()),
        _ => Err(Stop::Io(error)),
    }
}

impl<A> From<Stop<A>> for SendError<A> {
    fn from(stop: Stop<A>) -> Self {
        match stop {
            Stop::Timeout { waited } => SendError::Timeout { waited },
            Stop::Aborted(reason) => SendError::Aborted(reason),
            Stop::Io(e) => SendError::Io(e),
        }
    }
}

impl<A> From<Stop<A>> for RecvError<A> {
    fn from(stop: Stop<A>) -> Self {
        match stop {
            Stop::Timeout { waited } => RecvError::Timeout { waited },
            Stop::Aborted(reason) => RecvError::Aborted(reason),
            Stop::Io(e) => RecvError::Io(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(kind: io::ErrorKind) -> io::Error {
        io::Error::from(kind)
    }

    #[test]
    fn a_quiet_interval_asks_the_abort_hook_before_the_deadline() {
        let started = Instant::now();
        let past = started;
        let future = started + Duration::from_secs(3600);
        for quiet in [io::ErrorKind::WouldBlock, io::ErrorKind::TimedOut] {
            let aborted = keep_waiting(kind(quiet), started, past, &mut || Some("stop"));
            assert!(matches!(aborted, Err(Stop::Aborted("stop"))));
            let late = keep_waiting::<()>(kind(quiet), started, past, &mut || None);
            assert!(matches!(late, Err(Stop::Timeout { .. })));
            let again = keep_waiting::<()>(kind(quiet), started, future, &mut || None);
            assert!(again.is_ok());
        }
    }

    #[test]
    fn eintr_retries_without_asking_and_other_errors_end_the_wait() {
        let started = Instant::now();
        let mut asked = 0;
        let mut hook = || {
            asked += 1;
            Some(())
        };
        assert!(keep_waiting(
            kind(io::ErrorKind::Interrupted),
            started,
            started,
            &mut hook
        )
        .is_ok());
        let broken = keep_waiting(kind(io::ErrorKind::BrokenPipe), started, started, &mut hook);
        assert!(matches!(broken, Err(Stop::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe));
        assert_eq!(asked, 0);
    }
}
