//! The socket under the framed connection: TCP on loopback, a Unix-domain
//! stream pair, or a shared-memory channel (`[network.server] transport`,
//! `shm.rs`). All carry the same bytes; the Unix pair skips the TCP/IP stack
//! (checksums, segmentation, the loopback device's softirq) on every frame,
//! which is most of a small frame's cost, and shared memory skips the system
//! calls as well.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use super::shm::ShmChannel;

/// One end of the bridge's connection to its server.
#[derive(Debug)]
pub(crate) enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
    Shm(ShmChannel),
}

impl Socket {
    /// Sets `TCP_NODELAY` (TCP only: a Unix socket never delays) and the
    /// timeout of every blocking read and write.
    pub(crate) fn prepare(&mut self, poll: Duration) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => {
                s.set_nodelay(true)?;
                s.set_read_timeout(Some(poll))?;
                s.set_write_timeout(Some(poll))
            }
            Socket::Unix(s) => {
                s.set_read_timeout(Some(poll))?;
                s.set_write_timeout(Some(poll))
            }
            Socket::Shm(s) => {
                s.set_timeout(poll);
                Ok(())
            }
        }
    }
}

impl Socket {
    /// Polls without blocking for up to `budget` until bytes (or the end of
    /// the stream) arrive; `Ok(None)` when the budget ran out first.
    ///
    /// Why: on an idle machine a blocking read sleeps the core, and waking it
    /// for an answer that comes a few microseconds later costs more than the
    /// exchange itself. Each poll is one `recv(MSG_DONTWAIT)`; between polls
    /// the core is told it is spinning (`PAUSE`).
    pub(crate) fn spin_read(
        &mut self,
        buf: &mut [u8],
        budget: Duration,
    ) -> io::Result<Option<usize>> {
        if let Socket::Shm(channel) = self {
            // Polls the ring in memory: no system call until the budget ends.
            if channel.readable() {
                return channel.read(buf, Duration::ZERO).map(Some);
            }
            let end = Instant::now() + budget;
            while !channel.readable() {
                if Instant::now() >= end {
                    return Ok(None);
                }
                for _ in 0..16 {
                    std::hint::spin_loop();
                }
            }
            return channel.read(buf, Duration::ZERO).map(Some);
        }
        let end = Instant::now() + budget;
        loop {
            // SAFETY: `buf` is valid for `buf.len()` writable bytes.
            let n = unsafe {
                libc::recv(
                    self.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_DONTWAIT,
                )
            };
            if n >= 0 {
                return Ok(Some(n as usize));
            }
            let error = io::Error::last_os_error();
            if !matches!(
                error.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ) {
                return Err(error);
            }
            if Instant::now() >= end {
                return Ok(None);
            }
            for _ in 0..16 {
                std::hint::spin_loop();
            }
        }
    }
}

impl AsRawFd for Socket {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Socket::Tcp(s) => s.as_raw_fd(),
            Socket::Unix(s) => s.as_raw_fd(),
            Socket::Shm(s) => s.as_raw_fd(),
        }
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            Socket::Unix(s) => s.read(buf),
            Socket::Shm(s) => s.read(buf, Duration::ZERO),
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(buf),
            Socket::Unix(s) => s.write(buf),
            Socket::Shm(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
