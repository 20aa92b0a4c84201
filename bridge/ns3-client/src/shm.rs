//! A shared-memory channel to the server netloop starts (`[network.server]
//! transport = "shm"`): two byte rings in one `memfd` mapping, one per
//! direction, carrying exactly the bytes a socket would (the same frames).
//!
//! Why: once both sides spin rather than sleep (`spin_wait`), what is left
//! of a sync over a socket is system calls — a `send` and a stream of
//! non-blocking `recv` polls per message on each side. Over shared memory a
//! message is a copy and a release store, and the waiting side polls a cache
//! line, so an exchange costs a cache-line transfer between cores. When a
//! side does sleep (no spin, or its spin ran out) it sleeps on a futex in the
//! mapping, and the writer wakes it only when it says it is asleep.
//!
//! The layout is shared with the server (`ns3-scenarios/src/shm-connection.h`)
//! and must change in both places at once (then bump [`SHM_VERSION`]):
//!
//! | offset | size | what |
//! |---|---|---|
//! | 0 | 64 | header: magic `NLSM` (u32), version (u32), ring capacity (u64) |
//! | 64 | 192 | ring 0 control, bridge → server ([`RingControl`]) |
//! | 256 | 192 | ring 1 control, server → bridge |
//! | 512 | capacity | ring 0 bytes |
//! | 512 + capacity | capacity | ring 1 bytes |
//!
//! Counters are native-endian and only grow (byte offsets modulo 2⁶⁴); the
//! capacity is a power of two. A peer that dies cannot say so through the
//! mapping: the bridge notices a dead server through the abort hook that
//! every wait consults (`ns3.rs`), and the server is killed with its bridge
//! (`PR_SET_PDEATHSIG`, `process.rs`).
//!
//! # As an API
//! [`ShmChannel`] is the client end of the shared-memory transport, public
//! so that tests can drive a real server over it byte by byte
//! (`tests/e2e/ns3_server_robustness.rs`): [`ShmChannel::create`] makes a
//! channel, [`ShmChannel::memfd`] is the descriptor to hand to
//! `netloop-server --shmFd=N` (clear its close-on-exec flag in the child),
//! and [`ShmChannel::read`]/[`ShmChannel::write`] move bytes as a socket's
//! `read`/`write` would. A server written in Rust could use the server end:
//! [`ShmChannel::attach`] with [`End::Server`] maps a channel it was handed.

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::SeqCst};
use std::time::{Duration, Instant};

/// `NLSM`, little-endian: the first word of a netloop mapping.
pub const SHM_MAGIC: u32 = u32::from_le_bytes(*b"NLSM");
/// The layout's version; the server refuses any other.
pub const SHM_VERSION: u32 = 1;
/// Bytes per direction. A frame larger than this streams through as the
/// reader drains it, as over a socket; 1 MiB holds every usual step whole.
pub const SHM_RING_CAPACITY: usize = 1 << 20;

const HEADER_BYTES: usize = 64;
const CONTROL_BYTES: usize = 192;
const DATA_OFFSET: usize = 512;

/// One direction's counters and futex words, one cache line per writer so
/// that the two sides do not invalidate each other's line needlessly.
#[repr(C, align(64))]
struct RingControl {
    /// Bytes written so far (the writer's).
    head: AtomicU64,
    /// Futex word the reader sleeps on: bumped when data comes or the ring
    /// closes while the reader says it sleeps.
    data_seq: AtomicU32,
    _line0: [u8; 52],
    /// Bytes read so far (the reader's).
    tail: AtomicU64,
    /// Futex word the writer sleeps on when the ring is full.
    space_seq: AtomicU32,
    _line1: [u8; 52],
    /// Set by the reader before it sleeps.
    reader_waiting: AtomicU32,
    /// Set by the writer before it sleeps.
    writer_waiting: AtomicU32,
    /// Set by the writer: no more bytes will come.
    closed: AtomicU32,
    _line2: [u8; 52],
}

const _: () = assert!(std::mem::size_of::<RingControl>() == CONTROL_BYTES);

#[repr(C)]
struct Header {
    magic: u32,
    version: u32,
    capacity: u64,
}

/// Which end of the channel a mapping is: the bridge writes ring 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The client (the bridge): writes ring 0, reads ring 1.
    Bridge,
    /// The server (`netloop-server` maps it in C++): writes ring 1, reads ring 0.
    Server,
}

/// One end of the channel: reads one ring, writes the other. Dropping it
/// closes its direction (the peer reads what is left, then the end).
pub struct ShmChannel {
    memfd: OwnedFd,
    base: NonNull<u8>,
    len: usize,
    capacity: usize,
    tx: usize,
    rx: usize,
    /// How long a blocking read or write waits before `TimedOut`.
    timeout: Duration,
}

// SAFETY: the mapping is owned by this value and all shared state in it is
// accessed through atomics (counters) or in the ring regions the counters
// give to one side at a time.
unsafe impl Send for ShmChannel {}

impl std::fmt::Debug for ShmChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShmChannel")
            .field("memfd", &self.memfd.as_raw_fd())
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl ShmChannel {
    /// Creates a fresh, close-on-exec memfd holding an empty channel and
    /// maps it as the bridge's end; the server maps [`ShmChannel::memfd`].
    ///
    /// # Errors
    /// When the kernel refuses the memfd or the mapping.
    pub fn create() -> io::Result<ShmChannel> {
        Self::create_with_capacity(SHM_RING_CAPACITY)
    }

    /// As [`ShmChannel::create`], with `capacity` bytes per direction.
    ///
    /// # Panics
    /// When `capacity` is not a power of two of at least 64.
    pub fn create_with_capacity(capacity: usize) -> io::Result<ShmChannel> {
        assert!(capacity.is_power_of_two() && capacity >= 64);
        // SAFETY: a NUL-terminated name; the returned descriptor is checked.
        let fd = unsafe { libc::memfd_create(c"netloop-shm".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor that nothing else owns.
        let memfd = unsafe { OwnedFd::from_raw_fd(fd) };
        let len = DATA_OFFSET + 2 * capacity;
        // SAFETY: plain ftruncate on our descriptor.
        if unsafe { libc::ftruncate(memfd.as_raw_fd(), len as libc::off_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let mut channel = Self::map(memfd, len, End::Bridge)?;
        channel.capacity = capacity;
        // SAFETY: the header is at the start of our fresh, zeroed mapping.
        unsafe {
            channel.base.as_ptr().cast::<Header>().write(Header {
                magic: SHM_MAGIC,
                version: SHM_VERSION,
                capacity: capacity as u64,
            });
        }
        Ok(channel)
    }

    /// Maps an existing channel's `memfd` as `end` (the server's side; the
    /// real server does this in C++).
    ///
    /// # Errors
    /// `InvalidData` when the descriptor does not hold a netloop channel of
    /// this layout's version; the kernel's error when it cannot be mapped.
    pub fn attach(memfd: OwnedFd, end: End) -> io::Result<ShmChannel> {
        // SAFETY: fstat into a zeroed struct.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(memfd.as_raw_fd(), &mut stat) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let len = stat.st_size as usize;
        if len < DATA_OFFSET {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "not a netloop shared-memory channel (smaller than its header)",
            ));
        }
        // Read before mapping, so that a stranger's file is never written.
        let mut raw = [0u8; 16];
        // SAFETY: reads at most 16 bytes into our buffer.
        let got = unsafe { libc::pread(memfd.as_raw_fd(), raw.as_mut_ptr().cast(), 16, 0) };
        if got != 16 {
            return Err(io::Error::last_os_error());
        }
        let magic = u32::from_ne_bytes(raw[0..4].try_into().expect("4 bytes"));
        let version = u32::from_ne_bytes(raw[4..8].try_into().expect("4 bytes"));
        let capacity = u64::from_ne_bytes(raw[8..16].try_into().expect("8 bytes")) as usize;
        if (magic, version) != (SHM_MAGIC, SHM_VERSION)
            || !capacity.is_power_of_two()
            || capacity < 64
            || capacity
                .checked_mul(2)
                .and_then(|c| c.checked_add(DATA_OFFSET))
                != Some(len)
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "not a netloop shared-memory channel of version {SHM_VERSION} \
                     (magic {magic:#x}, version {version}, capacity {capacity}, {len} bytes)"
                ),
            ));
        }
        let mut channel = Self::map(memfd, len, end)?;
        channel.capacity = capacity;
        Ok(channel)
    }

    fn map(memfd: OwnedFd, len: usize, end: End) -> io::Result<ShmChannel> {
        // SAFETY: a shared mapping of `len` bytes of our memfd; checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                memfd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let (tx, rx) = match end {
            End::Bridge => (0, 1),
            End::Server => (1, 0),
        };
        Ok(ShmChannel {
            memfd,
            base: NonNull::new(base.cast()).expect("mmap never returns null on success"),
            len,
            capacity: 0,
            tx,
            rx,
            timeout: Duration::from_millis(50),
        })
    }

    /// The descriptor to hand to the server (`--shmFd=N`).
    pub fn memfd(&self) -> &OwnedFd {
        &self.memfd
    }

    /// How long one blocking [`ShmChannel::read`] or
    /// [`ShmChannel::write`] waits before it reports `TimedOut`.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    fn control(&self, ring: usize) -> &RingControl {
        // SAFETY: the control blocks lie inside the mapping, 64-byte aligned,
        // and are only accessed through atomics.
        unsafe {
            &*self
                .base
                .as_ptr()
                .add(HEADER_BYTES + ring * CONTROL_BYTES)
                .cast::<RingControl>()
        }
    }

    fn data(&self, ring: usize) -> *mut u8 {
        // SAFETY: inside the mapping.
        unsafe { self.base.as_ptr().add(DATA_OFFSET + ring * self.capacity) }
    }

    /// Reads what is there (up to `buf.len()`), polling for up to `spin`
    /// first and then sleeping on the futex for the timeout; `Ok(0)` when
    /// the peer closed its side and everything was read, `TimedOut` when
    /// nothing came.
    pub fn read(&mut self, buf: &mut [u8], spin: Duration) -> io::Result<usize> {
        if let Some(n) = self.take(buf) {
            return Ok(n);
        }
        if !spin.is_zero() {
            let end = Instant::now() + spin;
            loop {
                for _ in 0..16 {
                    std::hint::spin_loop();
                }
                if let Some(n) = self.take(buf) {
                    return Ok(n);
                }
                if Instant::now() >= end {
                    break;
                }
            }
        }
        let ring = self.control(self.rx);
        let deadline = Instant::now() + self.timeout;
        loop {
            ring.reader_waiting.store(1, SeqCst);
            let seen = ring.data_seq.load(SeqCst);
            if let Some(n) = self.take(buf) {
                self.control(self.rx).reader_waiting.store(0, SeqCst);
                return Ok(n);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.control(self.rx).reader_waiting.store(0, SeqCst);
                return Err(io::ErrorKind::TimedOut.into());
            }
            futex_wait(&self.control(self.rx).data_seq, seen, left);
        }
    }

    /// Whether a read would return at once: bytes wait, or the peer closed.
    pub fn readable(&self) -> bool {
        let ring = self.control(self.rx);
        ring.head.load(SeqCst) != ring.tail.load(SeqCst) || ring.closed.load(SeqCst) != 0
    }

    /// Copies out what is available: `None` when the ring is empty and
    /// open, `Some(0)` when it is empty and closed.
    fn take(&self, buf: &mut [u8]) -> Option<usize> {
        let ring = self.control(self.rx);
        let tail = ring.tail.load(SeqCst);
        let mut head = ring.head.load(SeqCst);
        if head == tail {
            if ring.closed.load(SeqCst) == 0 {
                return None;
            }
            // Bytes written just before the close are still readable.
            head = ring.head.load(SeqCst);
            if head == tail {
                return Some(0);
            }
        }
        let n = ((head - tail) as usize).min(buf.len());
        if n == 0 {
            return Some(0);
        }
        let start = (tail as usize) & (self.capacity - 1);
        let first = n.min(self.capacity - start);
        // SAFETY: [tail, tail + n) is written by the peer and not yet
        // released back to it; both pieces lie inside the ring.
        unsafe {
            let data = self.data(self.rx);
            std::ptr::copy_nonoverlapping(data.add(start), buf.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(data, buf.as_mut_ptr().add(first), n - first);
        }
        ring.tail.store(tail + n as u64, SeqCst);
        if ring.writer_waiting.load(SeqCst) != 0 {
            ring.space_seq.fetch_add(1, SeqCst);
            futex_wake(&ring.space_seq);
        }
        Some(n)
    }

    /// Writes as much of `buf` as fits, sleeping up to the timeout for room
    /// when the ring is full (`TimedOut` if none came).
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.write_closed() {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        if buf.is_empty() {
            return Ok(0);
        }
        let deadline = Instant::now() + self.timeout;
        loop {
            let ring = self.control(self.tx);
            ring.writer_waiting.store(1, SeqCst);
            let seen = ring.space_seq.load(SeqCst);
            let head = ring.head.load(SeqCst);
            let free = self.capacity - (head - ring.tail.load(SeqCst)) as usize;
            if free > 0 {
                ring.writer_waiting.store(0, SeqCst);
                let n = free.min(buf.len());
                let start = (head as usize) & (self.capacity - 1);
                let first = n.min(self.capacity - start);
                // SAFETY: [head, head + n) is free ring space owned by us
                // until the release below.
                unsafe {
                    let data = self.data(self.tx);
                    std::ptr::copy_nonoverlapping(buf.as_ptr(), data.add(start), first);
                    std::ptr::copy_nonoverlapping(buf.as_ptr().add(first), data, n - first);
                }
                ring.head.store(head + n as u64, SeqCst);
                if ring.reader_waiting.load(SeqCst) != 0 {
                    ring.data_seq.fetch_add(1, SeqCst);
                    futex_wake(&ring.data_seq);
                }
                return Ok(n);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                ring.writer_waiting.store(0, SeqCst);
                return Err(io::ErrorKind::TimedOut.into());
            }
            futex_wait(&ring.space_seq, seen, left);
        }
    }
}

impl ShmChannel {
    /// Closes our direction, as a socket's `shutdown(Write)`: the peer reads
    /// what is left, then the end of the stream, while we can still read its
    /// answer. Writing afterwards fails with `BrokenPipe`.
    pub fn shutdown_write(&mut self) {
        let ring = self.control(self.tx);
        ring.closed.store(1, SeqCst);
        ring.data_seq.fetch_add(1, SeqCst);
        futex_wake(&ring.data_seq);
    }

    fn write_closed(&self) -> bool {
        self.control(self.tx).closed.load(SeqCst) != 0
    }
}

impl Drop for ShmChannel {
    /// Closes our direction (the peer reads what is left, then the end of
    /// the stream, as after a socket's close) and unmaps.
    fn drop(&mut self) {
        self.shutdown_write();
        // SAFETY: our own mapping, not used after this.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

impl AsRawFd for ShmChannel {
    fn as_raw_fd(&self) -> RawFd {
        self.memfd.as_raw_fd()
    }
}

impl AsFd for ShmChannel {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.memfd.as_fd()
    }
}

/// Sleeps while `word` holds `expected`, at most `timeout` (a shared futex:
/// the word lives in a mapping two processes share).
fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: FUTEX_WAIT on a live, aligned u32 with a valid timespec; its
    // outcome (woken, timeout, value changed, signal) is re-checked by the caller.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
        );
    }
}

/// Wakes the one process that may sleep on `word`.
fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE on a live, aligned u32.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(capacity: usize) -> (ShmChannel, ShmChannel) {
        let bridge = ShmChannel::create_with_capacity(capacity).unwrap();
        let fd = bridge.memfd().try_clone().unwrap();
        (bridge, ShmChannel::attach(fd, End::Server).unwrap())
    }

    /// The offsets the C++ server (`shm-connection.h`) reads the rings at.
    #[test]
    fn the_layout_is_the_one_the_server_maps() {
        let (bridge, _server) = pair(64);
        let base = bridge.base.as_ptr() as usize;
        let at = |p: *const u8| p as usize - base;
        let ring = |i| bridge.control(i) as *const RingControl as *const u8;
        assert_eq!(at(ring(0)), 64);
        assert_eq!(at(ring(1)), 256);
        let control = bridge.control(1);
        assert_eq!(at(control.tail.as_ptr().cast()) - at(ring(1)), 64);
        assert_eq!(at(control.space_seq.as_ptr().cast()) - at(ring(1)), 72);
        assert_eq!(
            at(control.reader_waiting.as_ptr().cast()) - at(ring(1)),
            128
        );
        assert_eq!(at(control.closed.as_ptr().cast()) - at(ring(1)), 136);
        assert_eq!(at(bridge.data(0)), 512);
        assert_eq!(at(bridge.data(1)), 512 + 64);
        let header = unsafe { std::slice::from_raw_parts(bridge.base.as_ptr(), 16) };
        assert_eq!(&header[..4], b"NLSM");
        assert_eq!(header[4..8], 1u32.to_ne_bytes());
        assert_eq!(header[8..16], 64u64.to_ne_bytes());
    }

    #[test]
    fn bytes_cross_both_ways_in_order_also_across_the_wrap() {
        let (mut bridge, mut server) = pair(64);
        let mut got = [0u8; 64];
        for round in 0..50u8 {
            let message: Vec<u8> = (0..37).map(|i| round.wrapping_add(i)).collect();
            assert_eq!(bridge.write(&message).unwrap(), 37);
            assert_eq!(server.read(&mut got, Duration::ZERO).unwrap(), 37);
            assert_eq!(&got[..37], &message[..]);
            assert_eq!(server.write(&message[..36]).unwrap(), 36);
            assert_eq!(bridge.read(&mut got, Duration::ZERO).unwrap(), 36);
            assert_eq!(&got[..36], &message[..36]);
        }
    }

    #[test]
    fn a_full_ring_times_out_the_write_and_an_empty_one_the_read() {
        let (mut bridge, mut server) = pair(64);
        bridge.set_timeout(Duration::from_millis(20));
        server.set_timeout(Duration::from_millis(20));
        assert_eq!(bridge.write(&[1; 100]).unwrap(), 64);
        let started = Instant::now();
        let err = bridge.write(&[1; 10]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= Duration::from_millis(20));
        let err = bridge
            .read(&mut [0; 8], Duration::from_micros(50))
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    }

    /// A writer asleep on a full ring and a reader asleep on an empty one
    /// are woken by the other side, long before their timeouts: a large
    /// message streams through a small ring.
    #[test]
    fn sleepers_are_woken_and_a_message_larger_than_the_ring_streams_through() {
        let (mut bridge, mut server) = pair(64);
        bridge.set_timeout(Duration::from_secs(10));
        server.set_timeout(Duration::from_secs(10));
        let message: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let expected = message.clone();
        let started = Instant::now();
        let writer = std::thread::spawn(move || {
            let mut sent = 0;
            while sent < message.len() {
                sent += bridge.write(&message[sent..]).unwrap();
            }
            bridge
        });
        let mut got = Vec::new();
        let mut chunk = [0u8; 48];
        while got.len() < expected.len() {
            let n = server.read(&mut chunk, Duration::ZERO).unwrap();
            got.extend_from_slice(&chunk[..n]);
        }
        let bridge = writer.join().unwrap();
        assert_eq!(got, expected);
        assert!(started.elapsed() < Duration::from_secs(5));
        // Closing our side: the peer sees the end of the stream.
        drop(bridge);
        assert_eq!(server.read(&mut chunk, Duration::ZERO).unwrap(), 0);
    }

    /// A descriptor that is not a channel (too small, or another header)
    /// is refused with an error rather than mapped and trusted.
    #[test]
    fn attach_refuses_what_is_not_a_channel() {
        let (bridge, _server) = pair(64);
        let file = tempfile_fd(b"");
        let err = ShmChannel::attach(file, End::Server).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
        let mut other = vec![0u8; 512 + 128];
        other[..4].copy_from_slice(b"XXXX");
        let err = ShmChannel::attach(tempfile_fd(&other), End::Server).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
        assert!(err.to_string().contains("not a netloop"), "{err}");
        // The real one still attaches, from another descriptor.
        let fd = bridge.memfd().try_clone().unwrap();
        assert!(ShmChannel::attach(fd, End::Server).is_ok());
    }

    /// An anonymous file holding `bytes`.
    fn tempfile_fd(bytes: &[u8]) -> OwnedFd {
        // SAFETY: a NUL-terminated name; the result is checked.
        let fd = unsafe { libc::memfd_create(c"not-netloop".as_ptr(), libc::MFD_CLOEXEC) };
        assert!(fd >= 0);
        // SAFETY: a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut file = std::fs::File::from(fd);
        std::io::Write::write_all(&mut file, bytes).unwrap();
        file.into()
    }

    #[test]
    fn bytes_written_before_the_close_are_read_before_the_end() {
        let (mut bridge, mut server) = pair(64);
        server.write(b"last").unwrap();
        drop(server);
        let mut got = [0u8; 8];
        assert_eq!(bridge.read(&mut got, Duration::ZERO).unwrap(), 4);
        assert_eq!(&got[..4], b"last");
        assert_eq!(bridge.read(&mut got, Duration::ZERO).unwrap(), 0);
    }

    /// A half close: the peer sees the end of our stream and can still
    /// answer; we can no longer write.
    #[test]
    fn after_shutdown_write_the_peer_reads_the_end_and_can_still_answer() {
        let (mut bridge, mut server) = pair(64);
        bridge.write(b"bye").unwrap();
        bridge.shutdown_write();
        let err = bridge.write(b"more").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        let mut got = [0u8; 8];
        assert_eq!(server.read(&mut got, Duration::ZERO).unwrap(), 3);
        assert_eq!(server.read(&mut got, Duration::ZERO).unwrap(), 0);
        server.write(b"ok").unwrap();
        assert_eq!(bridge.read(&mut got, Duration::ZERO).unwrap(), 2);
        assert_eq!(&got[..2], b"ok");
    }
}
