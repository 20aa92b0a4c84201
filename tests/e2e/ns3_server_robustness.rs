//! Malformed input never crashes or hangs the server: every bad frame gets an
//! Error reply or a clean close, and the process exits by itself with an
//! exit code (not a signal) well within a timeout. Every case runs over a
//! TCP connection to the port the server listens on, over a Unix-domain
//! socket handed to it (`--connectionFd`, as `transport = "unix"` does) and
//! over a shared-memory channel handed to it (`--shmFd`, as
//! `transport = "shm"` does), each with a server that blocks and one that spins.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use protocol::{
    decode, encode, Decoded, ErrorCode, Hello, Message, DEFAULT_MAX_PAYLOAD, PROTOCOL_VERSION,
};

use bridge::ns3::shm::ShmChannel;

use crate::support::{bad_frames, server_binary, BadFrame};

const TIMEOUT: Duration = Duration::from_secs(10);

/// A child process that is killed and reaped when dropped: a test that
/// fails or panics half-way leaves no server behind.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The three transports, each with a server that blocks for each request and
/// one that spins first (`--spinWait`, `[network.server] spin_wait`).
#[derive(Clone, Copy, Debug)]
enum Over {
    Tcp,
    Unix,
    Shm,
    TcpSpinning,
    UnixSpinning,
    ShmSpinning,
}

const TRANSPORTS: [Over; 6] = [
    Over::Tcp,
    Over::Unix,
    Over::Shm,
    Over::TcpSpinning,
    Over::UnixSpinning,
    Over::ShmSpinning,
];

/// The spin of the spinning servers.
const SPIN: &str = "--spinWait=50us";

/// The test's end of the connection.
enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
    Shm(ShmChannel),
}

impl Conn {
    fn shutdown(&mut self, how: Shutdown) -> std::io::Result<()> {
        match self {
            Conn::Tcp(s) => s.shutdown(how),
            Conn::Unix(s) => s.shutdown(how),
            Conn::Shm(channel) => {
                assert_eq!(how, Shutdown::Write, "a channel only closes our direction");
                channel.shutdown_write();
                Ok(())
            }
        }
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(buf),
            Conn::Unix(s) => s.read(buf),
            Conn::Shm(channel) => channel.read(buf, Duration::ZERO),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(buf),
            Conn::Unix(s) => s.write(buf),
            Conn::Shm(channel) => channel.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The server driven byte by byte. Dropping it closes the socket, then kills
/// and reaps the server.
struct RawServer {
    stream: Conn,
    child: Reaped,
}

impl RawServer {
    fn start_over(over: Over) -> RawServer {
        match over {
            Over::Tcp => Self::start_with(&[]),
            Over::Unix => Self::start_unix(&[]),
            Over::Shm => Self::start_shm(&[]),
            Over::TcpSpinning => Self::start_with(&[SPIN]),
            Over::UnixSpinning => Self::start_unix(&[SPIN]),
            Over::ShmSpinning => Self::start_shm(&[SPIN]),
        }
    }

    /// A server serving a shared-memory channel, as the bridge starts it.
    fn start_shm(extra: &[&str]) -> RawServer {
        let mut channel = ShmChannel::create().unwrap();
        channel.set_timeout(TIMEOUT);
        let fd = channel.memfd().as_raw_fd();
        let mut command = Self::command_with_fd(extra, "shmFd", fd);
        RawServer {
            stream: Conn::Shm(channel),
            child: Reaped(command.spawn().unwrap()),
        }
    }

    /// The server's command, to be handed descriptor `fd` as `--{flag}=fd`
    /// (its close-on-exec flag cleared in the child, as `process.rs` does).
    fn command_with_fd(extra: &[&str], flag: &str, fd: i32) -> Command {
        let mut command = Command::new(server_binary());
        command
            .args(["--network=p2p", "--nodes=2"])
            .args(extra)
            .arg(format!("--{flag}={fd}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: one async-signal-safe call between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        command
    }

    /// A server serving one end of a Unix socket pair, as the bridge starts it.
    fn start_unix(extra: &[&str]) -> RawServer {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let mut command = Self::command_with_fd(extra, "connectionFd", theirs.as_raw_fd());
        let child = Reaped(command.spawn().unwrap());
        drop(theirs);
        ours.set_read_timeout(Some(TIMEOUT)).unwrap();
        ours.set_write_timeout(Some(TIMEOUT)).unwrap();
        RawServer {
            stream: Conn::Unix(ours),
            child,
        }
    }

    /// A server listening on a port, with `extra` arguments.
    fn start_with(extra: &[&str]) -> RawServer {
        let mut child = Reaped(
            Command::new(server_binary())
                .args(["--network=p2p", "--nodes=2", "--port=0"])
                .args(extra)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        // The port line, read on a thread so that a server that never
        // prints it fails the test instead of hanging it.
        let stdout = child.0.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(TIMEOUT)
            .unwrap_or_else(|e| panic!("no port line within {TIMEOUT:?}: {e}"));
        let port: u16 = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("port line {line:?}"));
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let stream = TcpStream::connect_timeout(&address, TIMEOUT)
            .unwrap_or_else(|e| panic!("connect to {address}: {e}"));
        stream.set_read_timeout(Some(TIMEOUT)).unwrap();
        stream.set_write_timeout(Some(TIMEOUT)).unwrap();
        RawServer {
            stream: Conn::Tcp(stream),
            child,
        }
    }

    fn handshake(&mut self) {
        let hello = Hello {
            protocol_version: PROTOCOL_VERSION,
            software: "robustness test".into(),
        };
        self.stream
            .write_all(&encode(&hello.into()).unwrap())
            .unwrap();
        assert!(matches!(self.reply(), Some(Message::Hello(_))));
    }

    /// The next message, or None on a clean close. Panics on a hang.
    fn reply(&mut self) -> Option<Message> {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            if !buf.is_empty() {
                if let Decoded::Frame { message, .. } =
                    decode(&buf, DEFAULT_MAX_PAYLOAD).expect("server sends valid frames")
                {
                    return Some(message);
                }
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return None,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return None,
                Err(e) => panic!("no reply and no close within {TIMEOUT:?}: {e}"),
            }
        }
    }

    /// The server must exit by itself, with an exit code.
    fn assert_exits_cleanly(mut self, case: &str) {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.0.try_wait().unwrap() {
                assert!(
                    status.code().is_some(),
                    "{case}: server killed by a signal ({status}): a crash"
                );
                return;
            }
            if Instant::now() > deadline {
                panic!("{case}: server still running {TIMEOUT:?} after the bad frame: a hang");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The server's answer to a bad frame: an Error naming the problem, or a close.
fn assert_error_or_close(reply: Option<Message>, case: &str) {
    match reply {
        None => {}
        Some(Message::Error(e)) => assert!(!e.message.is_empty(), "{case}: empty error message"),
        Some(other) => panic!(
            "{case}: server answered a bad frame with {:?}",
            other.kind()
        ),
    }
}

#[test]
fn every_bad_frame_before_and_after_the_handshake() {
    for BadFrame { case, class, bytes } in bad_frames() {
        // The Rust decoder classifies the same bytes the same way.
        let err = decode(&bytes, DEFAULT_MAX_PAYLOAD).expect_err(&case);
        assert_eq!(err.class(), class, "{case}");

        for (over, after_handshake) in TRANSPORTS
            .into_iter()
            .flat_map(|over| [(over, false), (over, true)])
        {
            let label = format!(
                "{case} ({}, {over:?})",
                if after_handshake {
                    "after handshake"
                } else {
                    "first frame"
                }
            );
            let mut server = RawServer::start_over(over);
            if after_handshake {
                server.handshake();
            }
            server.stream.write_all(&bytes).unwrap();
            let reply = server.reply();
            if case == "wrong_version" {
                let Some(Message::Error(e)) = &reply else {
                    panic!("{label}: expected an Error, got {reply:?}")
                };
                assert_eq!(e.code, ErrorCode::UnsupportedVersion, "{label}");
                assert!(
                    e.message.contains("99") && e.message.contains(&PROTOCOL_VERSION.to_string()),
                    "{label}: {}",
                    e.message
                );
            }
            assert_error_or_close(reply, &label);
            server.assert_exits_cleanly(&label);
        }
    }
}

#[test]
fn a_frame_cut_short_by_the_peer_closing() {
    for over in TRANSPORTS {
        a_frame_cut_short_over(over);
    }
}

fn a_frame_cut_short_over(over: Over) {
    let mut server = RawServer::start_over(over);
    server.handshake();
    let frame = encode(
        &Hello {
            protocol_version: PROTOCOL_VERSION,
            software: "x".repeat(200),
        }
        .into(),
    )
    .unwrap();
    server.stream.write_all(&frame[..40]).unwrap();
    server.stream.shutdown(Shutdown::Write).unwrap();
    let reply = server.reply();
    assert_error_or_close(reply, "cut frame");
    server.assert_exits_cleanly("cut frame");
}

#[test]
fn well_formed_messages_at_the_wrong_time() {
    let step = protocol::Step {
        until: protocol::SimTime(1_000),
        stop_at_delivery: false,
        sends: vec![],
        kinematics: vec![],
    };
    let cases: Vec<(&str, bool, Message)> = vec![
        ("Step before Hello", false, step.clone().into()),
        ("Step before Configure", true, step.into()),
        (
            "StepDone from the client",
            true,
            protocol::StepDone {
                reached: protocol::SimTime(0),
                deliveries: vec![],
                drops: vec![],
            }
            .into(),
        ),
        (
            "second Hello",
            true,
            Hello {
                protocol_version: PROTOCOL_VERSION,
                software: "again".into(),
            }
            .into(),
        ),
        (
            "Summary from the client",
            true,
            protocol::Summary {
                reached: protocol::SimTime(0),
                flows: vec![],
            }
            .into(),
        ),
    ];
    for ((case, handshake, message), over) in cases
        .iter()
        .flat_map(|c| TRANSPORTS.map(|over| (c.clone(), over)))
    {
        let case = format!("{case} ({over:?})");
        let case = case.as_str();
        let mut server = RawServer::start_over(over);
        if handshake {
            server.handshake();
        }
        server.stream.write_all(&encode(&message).unwrap()).unwrap();
        let reply = server.reply();
        match &reply {
            Some(Message::Error(e)) => assert_eq!(
                e.code,
                ErrorCode::UnexpectedMessage,
                "{case}: {}",
                e.message
            ),
            None => {}
            Some(other) => panic!("{case}: answered with {:?}", other.kind()),
        }
        server.assert_exits_cleanly(case);
    }
}

#[test]
fn invalid_configuration_and_steps_are_reported_not_fatal_crashes() {
    // A flow to a node that does not exist.
    let mut client =
        bridge::ns3::Ns3Client::start(&crate::support::options(&["--network=p2p", "--nodes=2"]))
            .unwrap();
    let err = client
        .configure(vec![crate::support::udp_flow(0, 0, 7)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("InvalidConfig") && err.contains('7'), "{err}");

    // A step back in time.
    let mut client =
        bridge::ns3::Ns3Client::start(&crate::support::options(&["--network=p2p", "--nodes=2"]))
            .unwrap();
    client
        .configure(vec![crate::support::udp_flow(0, 0, 1)])
        .unwrap();
    crate::support::step(&mut client, protocol::SimTime::from_millis(10), vec![]);
    let err = client
        .step(protocol::Step {
            until: protocol::SimTime::from_millis(5),
            stop_at_delivery: false,
            sends: vec![],
            kinematics: vec![],
        })
        .unwrap_err()
        .to_string();
    assert!(err.contains("InvalidStep"), "{err}");
}
