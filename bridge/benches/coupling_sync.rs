//! `scripts/bench.sh coupling` (the sync-cost cases, issue 18 items 2 and
//! 3), each against ns-3 alone with the same traffic (`netloop-server
//! --standalone`), whole runs as a user starts them, variants alternating in
//! rounds on a shared machine (ratios are medians of per-round ratios):
//!
//! - [`coupled_1ms`]: the 60 s servo of `overhead` under master-slave at
//!   T = 1 ms with `lookahead = false` (60,000 syncs), over TCP and over a
//!   Unix socket; the cost of one sync (co-simulation minus ns-3 alone, per
//!   sync) against a raw ping-pong of the same sizes over the same transport
//!   between two processes; each also with `[network.server] spin_wait`
//!   (50 µs, or `NETLOOP_BENCH_SPIN_US`) against a ping-pong whose two ends
//!   spin as long before they block; and over shared memory (`transport =
//!   "shm"`), blocking and spinning. `NETLOOP_BENCH_VARIANTS=shm_spin,unix_spin`
//!   runs only the variants named.
//! - [`platoon_tolerance`]: examples/platoon_wave_bsm.toml (4 vehicles, WAVE,
//!   BSMs, T = 20 ms, 20 s), exact and with `position_tolerance = "1cm"`:
//!   both ratios and the syncs made.
//!
//! Last lines: `coupled_1ms_ratio=<best transport>`,
//! `platoon_exact_ratio=...`, `platoon_1cm_ratio=...`.

mod versus_ns3;

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bridge::config::{Metres, Resolved, Transport};
use protocol::{encode, SimTime, Step, StepDone};

use versus_ns3::{example, interleave, median, servo_p2p_alone, standalone, Interleaved};

const SERVO_ROUNDS: usize = 5;
const PLATOON_ROUNDS: usize = 3;
const PING_PONGS: usize = 20_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--echo-fd") {
        let fd: i32 = args[i + 1].parse().unwrap();
        let (request, reply) = (args[i + 2].parse().unwrap(), args[i + 3].parse().unwrap());
        let spin = Duration::from_nanos(args[i + 4].parse().unwrap());
        echo(fd, request, reply, spin);
        return;
    }
    coupled_1ms();
    // NETLOOP_BENCH_SKIP_PLATOON=1: the transport cases alone.
    if std::env::var_os("NETLOOP_BENCH_SKIP_PLATOON").is_none() {
        platoon_tolerance();
    }
}

// ----- master-slave, T = 1 ms, no lookahead -----

/// The spin budget of the spinning variants.
fn spin_budget() -> Duration {
    let us = std::env::var("NETLOOP_BENCH_SPIN_US").map_or(50, |v| v.parse().unwrap());
    Duration::from_micros(us)
}

fn servo(transport: Transport, spin: Duration) -> Resolved {
    let mut s = example("dc_servo_p2p.toml");
    s.duration = SimTime::from_secs(60);
    s.sync.period = Some(SimTime::from_millis(1));
    s.sync.lookahead = false;
    s.network.server.transport = transport;
    s.network.server.spin_wait = SimTime(spin.as_nanos() as u64);
    s.resolve().unwrap()
}

fn servo_alone() -> f64 {
    servo_p2p_alone(None).0
}

/// The master-slave 1 ms case over both transports, with per-sync costs.
fn coupled_1ms() {
    let spin = spin_budget();
    let all = [
        ("tcp", Transport::Tcp, Duration::ZERO),
        ("unix", Transport::Unix, Duration::ZERO),
        ("shm", Transport::Shm, Duration::ZERO),
        ("tcp_spin", Transport::Tcp, spin),
        ("unix_spin", Transport::Unix, spin),
        ("shm_spin", Transport::Shm, spin),
    ];
    // NETLOOP_BENCH_VARIANTS=unix_spin,shm_spin: only those (default: all).
    let wanted = std::env::var("NETLOOP_BENCH_VARIANTS").ok();
    let transports: Vec<_> = all
        .into_iter()
        .filter(|(name, _, _)| {
            wanted
                .as_deref()
                .is_none_or(|w| w.split(',').any(|v| v.trim() == *name))
        })
        .collect();
    let variants: Vec<Resolved> = transports.iter().map(|(_, t, s)| servo(*t, *s)).collect();
    let Interleaved {
        mut alone,
        mut walls,
        mut ratios,
        syncs,
    } = interleave(
        SERVO_ROUNDS,
        &variants.iter().collect::<Vec<_>>(),
        servo_alone,
        |_| {},
    );
    let mut per_sync: Vec<Vec<f64>> = walls
        .iter()
        .zip(&syncs)
        .map(|(w, &count)| {
            w.iter()
                .zip(&alone)
                .map(|(wall, reference)| (wall - reference) / count as f64 * 1e6)
                .collect()
        })
        .collect();
    // Every variant makes the same syncs.
    let syncs = syncs.last().copied().unwrap_or(0);
    let (request, reply) = empty_step_sizes();
    println!(
        "# 60 s servo over p2p, master-slave T = 1 ms, lookahead = false; {SERVO_ROUNDS} interleaved rounds, medians; spin = {} us",
        spin.as_micros()
    );
    println!(
        "{:<28} {:>8} {:>8} {:>8} {:>12} {:>12}",
        "variant", "wall_s", "syncs", "ratio", "us_per_sync", "raw_rtt_us"
    );
    println!(
        "{:<28} {:>8.3} {:>8} {:>8} {:>12} {:>12}",
        "ns-3 alone",
        median(&mut alone),
        "-",
        "1",
        "-",
        "-"
    );
    let mut best = f64::MAX;
    for (i, (name, transport, spin)) in transports.iter().enumerate() {
        // A raw shared-memory ping-pong would measure the bridge's own
        // channel, not an independent reference: none is given.
        let rtt = match transport {
            Transport::Shm => f64::NAN,
            _ => raw_round_trip_us(*transport, request, reply, *spin),
        };
        let ratio = median(&mut ratios[i]);
        best = best.min(ratio);
        println!(
            "{:<28} {:>8.3} {:>8} {:>8.3} {:>12.1} {:>12.1}",
            format!("co-simulation over {name}"),
            median(&mut walls[i]),
            syncs,
            ratio,
            median(&mut per_sync[i]),
            rtt
        );
        println!("coupled_1ms_ratio_{name}={ratio:.3}");
    }
    println!("coupled_1ms_ratio={best:.3}");
}

fn empty_step_sizes() -> (usize, usize) {
    let step = Step {
        until: SimTime(1),
        stop_at_delivery: false,
        sends: vec![],
        kinematics: vec![],
    };
    let done = StepDone {
        reached: SimTime(1),
        deliveries: vec![],
        drops: vec![],
    };
    (
        encode(&step.into()).unwrap().len(),
        encode(&done.into()).unwrap().len(),
    )
}

/// Median µs of a blocking ping-pong of `request`/`reply` bytes with a child
/// process over a connected pair of `transport`, as the bridge makes it.
/// With a `spin`, both ends poll that long for each message before blocking.
fn raw_round_trip_us(transport: Transport, request: usize, reply: usize, spin: Duration) -> f64 {
    let (mut ours, child): (Box<dyn ReadWrite>, Child) = match transport {
        Transport::Unix => {
            let (ours, theirs) = UnixStream::pair().unwrap();
            let child = spawn_echo(theirs.as_raw_fd(), request, reply, spin);
            (Box::new(ours), child)
        }
        _ => {
            let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
            let ours = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (theirs, _) = listener.accept().unwrap();
            ours.set_nodelay(true).unwrap();
            theirs.set_nodelay(true).unwrap();
            let child = spawn_echo(theirs.as_raw_fd(), request, reply, spin);
            (Box::new(ours), child)
        }
    };
    let out = vec![7u8; request];
    let mut back = vec![0u8; reply];
    let mut samples = Vec::with_capacity(PING_PONGS);
    for i in 0..PING_PONGS + 1000 {
        let started = Instant::now();
        ours.write_all(&out).unwrap();
        spin_read_exact(&mut *ours, &mut back, spin).unwrap();
        if i >= 1000 {
            samples.push(started.elapsed());
        }
    }
    drop(ours);
    let mut child = child;
    let _ = child.wait();
    samples.sort_unstable();
    samples[samples.len() / 2].as_secs_f64() * 1e6
}

trait ReadWrite: Read + Write + AsRawFd {}
impl<T: Read + Write + AsRawFd> ReadWrite for T {}

/// `read_exact`, polling without blocking for up to `spin` before the
/// first blocking read (what the bridge and the server do with `spin_wait`).
fn spin_read_exact<S: Read + AsRawFd + ?Sized>(
    stream: &mut S,
    buf: &mut [u8],
    spin: Duration,
) -> std::io::Result<()> {
    let mut filled = 0;
    if !spin.is_zero() {
        let end = Instant::now() + spin;
        while filled < buf.len() {
            // SAFETY: the rest of `buf` is valid writable memory.
            let n = unsafe {
                libc::recv(
                    stream.as_raw_fd(),
                    buf[filled..].as_mut_ptr().cast(),
                    buf.len() - filled,
                    libc::MSG_DONTWAIT,
                )
            };
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            if n > 0 {
                filled += n as usize;
                continue;
            }
            if Instant::now() >= end {
                break;
            }
            for _ in 0..16 {
                std::hint::spin_loop();
            }
        }
    }
    stream.read_exact(&mut buf[filled..])
}

/// This binary again, echoing on an inherited descriptor.
fn spawn_echo(fd: i32, request: usize, reply: usize, spin: Duration) -> Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--echo-fd", &fd.to_string()])
        .args([
            request.to_string(),
            reply.to_string(),
            spin.as_nanos().to_string(),
        ])
        .stdout(Stdio::null());
    // SAFETY: one async-signal-safe call between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.spawn().unwrap()
}

fn echo(fd: i32, request: usize, reply: usize, spin: Duration) {
    use std::os::fd::FromRawFd;
    // SAFETY: the parent handed us this descriptor and nothing else owns it.
    let mut stream = unsafe { std::fs::File::from_raw_fd(fd) };
    let mut inbox = vec![0u8; request];
    let outbox = vec![9u8; reply];
    while spin_read_exact(&mut stream, &mut inbox, spin).is_ok()
        && stream.write_all(&outbox).is_ok()
    {}
}

// ----- the platoon with and without a position tolerance -----

fn platoon(tolerance: f64) -> Resolved {
    let mut s = example("platoon_wave_bsm.toml");
    s.sync.position_tolerance = Metres(tolerance);
    s.resolve().unwrap()
}

/// ns-3 alone with the example's traffic: 4 nodes 30 m apart, the
/// feed-forward flows vehicle to vehicle every 20 ms, 10 Hz BSMs.
fn platoon_alone() -> f64 {
    standalone([
        "--network=wave",
        "--nodes=4",
        "--waveMac=ocb",
        "--txPower=20",
        "--propagation=logDistance",
        "--phyMode=OfdmRate6MbpsBW10MHz",
        "--bsmNodes=all",
        "--bsmRate=10",
        "--bsmSize=200",
        "--positions=90,0,0;60,0,0;30,0,0;0,0,0",
        "--standalone",
        "--standaloneFlows=0>1:9005:100:20ms;1>2:9008:100:20ms;2>3:9011:100:20ms",
        "--stopTime=20s",
    ])
    .0
}

fn platoon_tolerance() {
    let variants = [("exact", platoon(0.0)), ("1cm", platoon(0.01))];
    let Interleaved {
        mut alone,
        mut walls,
        mut ratios,
        syncs,
    } = interleave(
        PLATOON_ROUNDS,
        &variants.iter().map(|(_, r)| r).collect::<Vec<_>>(),
        platoon_alone,
        |_| {},
    );
    println!(
        "# examples/platoon_wave_bsm.toml (4 vehicles, WAVE, BSMs, T = 20 ms, 20 s); {PLATOON_ROUNDS} interleaved rounds, medians"
    );
    println!(
        "{:<28} {:>8} {:>8} {:>8}",
        "variant", "wall_s", "syncs", "ratio"
    );
    println!(
        "{:<28} {:>8.3} {:>8} {:>8}",
        "ns-3 alone",
        median(&mut alone),
        "-",
        "1"
    );
    for (i, (name, _)) in variants.iter().enumerate() {
        let ratio = median(&mut ratios[i]);
        println!(
            "{:<28} {:>8.3} {:>8} {:>8.3}",
            format!("co-simulation, {name}"),
            median(&mut walls[i]),
            syncs[i],
            ratio
        );
        println!(
            "platoon_{name}_ratio={ratio:.3} platoon_{name}_syncs={}",
            syncs[i]
        );
    }
}
