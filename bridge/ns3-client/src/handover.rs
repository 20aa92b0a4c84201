//! The connection the bridge hands to the server it starts.
//!
//! A server that listens on a port can be reached by any local process that
//! finds the port first, or in the middle of a run. So the bridge never lets
//! its server listen: it makes the connected pair of TCP sockets itself
//! (listen on 127.0.0.1:0, connect, accept, close the listener) and hands one
//! end to the child as an inherited descriptor (`--connectionFd=N`). The
//! listener is open only for the moment between its bind and the accept, and
//! an intruder's connection accepted in that moment is recognised (its peer
//! address is not our connecting socket's) and closed. The wire format and
//! the transport (TCP, `TCP_NODELAY`) stay what they were.
//!
//! A Unix-domain pair (`transport = "unix"`) is made by `socketpair(2)`: it
//! has no name or port at all, so nothing else can ever reach it. Nor can a
//! shared-memory channel (`transport = "shm"`, `shm.rs`): an anonymous
//! `memfd`, handed over the same way (`--shmFd=N`).

use std::io;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use super::shm::ShmChannel;
use super::socket::Socket;
use crate::Transport;

/// A connected pair on 127.0.0.1: the bridge's end and the end for the server.
struct TcpPair {
    bridge: TcpStream,
    server: TcpStream,
}

/// A connected pair of any transport.
pub(crate) struct ConnectedPair {
    pub(crate) bridge: Socket,
    /// The server's end; `None` for shared memory, whose one descriptor
    /// (the bridge's `memfd`) serves both ends.
    pub(crate) server: Option<Socket>,
}

impl ConnectedPair {
    /// The descriptor the server inherits, and the flag that names it.
    pub(crate) fn handed_over(&self) -> (BorrowedFd<'_>, &'static str) {
        match (&self.server, &self.bridge) {
            (Some(Socket::Tcp(s)), _) => (s.as_fd(), "connectionFd"),
            (Some(Socket::Unix(s)), _) => (s.as_fd(), "connectionFd"),
            (_, Socket::Shm(channel)) => (channel.memfd().as_fd(), "shmFd"),
            _ => unreachable!("every pair but shared memory has a server socket"),
        }
    }
}

/// Makes a connected pair of `transport` (`Auto` resolved) within `timeout`.
pub(crate) fn connected_pair(transport: Transport, timeout: Duration) -> io::Result<ConnectedPair> {
    match transport.resolved() {
        Transport::Unix => {
            // Both ends are close-on-exec (std's socketpair sets SOCK_CLOEXEC).
            let (bridge, server) = UnixStream::pair()?;
            Ok(ConnectedPair {
                bridge: Socket::Unix(bridge),
                server: Some(Socket::Unix(server)),
            })
        }
        Transport::Shm => Ok(ConnectedPair {
            bridge: Socket::Shm(ShmChannel::create()?),
            server: None,
        }),
        Transport::Tcp | Transport::Auto => {
            let pair = pair_through(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?, timeout)?;
            Ok(ConnectedPair {
                bridge: Socket::Tcp(pair.bridge),
                server: Some(Socket::Tcp(pair.server)),
            })
        }
    }
}

/// Connects to `listener` and accepts our own connection, closing any other
/// that is already queued; the listener is closed on return.
fn pair_through(listener: TcpListener, timeout: Duration) -> io::Result<TcpPair> {
    let deadline = Instant::now() + timeout;
    let address = listener.local_addr()?;
    let bridge = TcpStream::connect_timeout(&address, timeout)?;
    let ours = bridge.local_addr()?;
    listener.set_nonblocking(true)?;
    loop {
        match listener.accept() {
            // The 4-tuple is unique: no other socket can have our address.
            Ok((server, peer)) if peer == ours => {
                server.set_nonblocking(false)?;
                return Ok(TcpPair { bridge, server });
            }
            Ok((intruder, peer)) => {
                tracing::warn!("refused a connection from {peer} to the ns-3 server's port {}: not this netloop", address.port());
                drop(intruder);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "our own connection was not accepted in time",
                    ));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    #[test]
    fn the_pair_is_connected_end_to_end_and_nothing_listens_afterwards() {
        let pair = pair_through(
            TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap(),
            Duration::from_secs(5),
        )
        .unwrap();
        let port = pair.server.local_addr().unwrap().port();
        assert_eq!(
            pair.bridge.peer_addr().unwrap(),
            pair.server.local_addr().unwrap()
        );
        assert_eq!(
            pair.server.peer_addr().unwrap(),
            pair.bridge.local_addr().unwrap()
        );
        (&pair.bridge).write_all(b"ping").unwrap();
        let mut got = [0u8; 4];
        (&pair.server).read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ping");
        let refused = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap_err();
        assert_eq!(
            refused.kind(),
            io::ErrorKind::ConnectionRefused,
            "the listener must be closed"
        );
    }

    #[test]
    fn a_unix_pair_is_connected_end_to_end() {
        for transport in [Transport::Unix, Transport::Auto] {
            let mut pair = connected_pair(transport, Duration::from_secs(5)).unwrap();
            assert!(matches!(
                (&pair.bridge, &pair.server),
                (Socket::Unix(_), Some(Socket::Unix(_)))
            ));
            pair.bridge.write_all(b"ping").unwrap();
            let mut got = [0u8; 4];
            pair.server.as_mut().unwrap().read_exact(&mut got).unwrap();
            assert_eq!(&got, b"ping");
        }
        let pair = connected_pair(Transport::Tcp, Duration::from_secs(5)).unwrap();
        assert!(matches!(pair.bridge, Socket::Tcp(_)));
    }

    /// A process that finds the port and connects before the bridge does is
    /// accepted first, and then closed: it never gets the server's end.
    #[test]
    fn an_intruder_queued_before_us_is_closed_and_we_get_our_own_connection() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let address = listener.local_addr().unwrap();
        let mut intruders: Vec<TcpStream> = (0..3)
            .map(|_| TcpStream::connect(address).unwrap())
            .collect();
        let pair = pair_through(listener, Duration::from_secs(5)).unwrap();
        assert_eq!(
            pair.server.peer_addr().unwrap(),
            pair.bridge.local_addr().unwrap()
        );
        for intruder in &mut intruders {
            intruder
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let mut byte = [0u8; 1];
            // Closed by us: end of stream (or a reset), never data.
            assert!(matches!(intruder.read(&mut byte), Ok(0) | Err(_)));
        }
        (&pair.bridge).write_all(b"x").unwrap();
        let mut got = [0u8; 1];
        (&pair.server).read_exact(&mut got).unwrap();
        assert_eq!(&got, b"x");
    }
}
