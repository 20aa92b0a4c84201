//! `scripts/bench.sh roundtrip`: latency of one empty Step/StepDone round trip
//! through the real ns-3 server, against a plain TCP ping-pong of the same
//! byte sizes between two processes on loopback, and against the variant that
//! opens and closes a TCP connection at every sync (how older MATLAB–ns-3
//! couplings worked).
//!
//! The machines are shared and noisy, so the three measurements alternate in
//! many short rounds: load that comes and goes hits all three alike. Medians
//! and p99 are over all round trips; each ratio is the median over rounds of
//! that round's ratio of medians, which a burst of load in a few rounds
//! cannot move. The last line printed is
//! `roundtrip_ratio=<median ours / median raw ping-pong>`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bridge::ns3::{default_server_path, Ns3Client, Ns3Options};
use protocol::{encode, FlowSpec, SimTime, Step, StepDone, Transport};

const ROUNDS: usize = 40;
const PER_ROUND: usize = 250;
const WARMUP: usize = 500;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--echo-server") {
        let request: usize = args[i + 1].parse().unwrap();
        let reply: usize = args[i + 2].parse().unwrap();
        let reconnect = args.get(i + 3).is_some_and(|a| a == "reconnect");
        echo_server(request, reply, reconnect);
        return;
    }

    let empty_step = |until| Step {
        until,
        stop_at_delivery: false,
        sends: vec![],
        kinematics: vec![],
    };
    let request_len = encode(&empty_step(SimTime(1)).into()).unwrap().len();
    let reply_len = encode(
        &StepDone {
            reached: SimTime(1),
            deliveries: vec![],
            drops: vec![],
        }
        .into(),
    )
    .unwrap()
    .len();

    let server = default_server_path();
    let options = Ns3Options::new(
        server.clone(),
        vec!["--network=p2p".into(), "--nodes=2".into()],
    );
    let mut client =
        Ns3Client::start(&options).expect("start the ns-3 server (scripts/setup.sh builds it)");
    client
        .configure(vec![FlowSpec {
            flow: 0,
            port: 9000,
            src: 0,
            dst: 1,
            transport: Transport::Udp,
            stop_on_delivery: false,
        }])
        .unwrap();
    let mut now = 0u64;
    let mut ours_step = || {
        now += 1_000;
        let started = Instant::now();
        client.step(empty_step(SimTime(now))).unwrap();
        started.elapsed()
    };

    let (mut echo, port) = spawn_echo(request_len, reply_len, false);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_nodelay(true).unwrap();
    let request = vec![7u8; request_len];
    let mut reply = vec![0u8; reply_len];
    let mut raw_step = || {
        let started = Instant::now();
        stream.write_all(&request).unwrap();
        stream.read_exact(&mut reply).unwrap();
        started.elapsed()
    };

    let (mut echo_reconnect, reconnect_port) = spawn_echo(request_len, reply_len, true);
    let mut reconnect_reply = vec![0u8; reply_len];
    let mut reconnect_step = || {
        let started = Instant::now();
        let mut s = TcpStream::connect(("127.0.0.1", reconnect_port)).unwrap();
        s.set_nodelay(true).unwrap();
        s.write_all(&request).unwrap();
        s.read_exact(&mut reconnect_reply).unwrap();
        drop(s);
        started.elapsed()
    };

    for _ in 0..WARMUP {
        ours_step();
        raw_step();
        reconnect_step();
    }
    let (mut ours, mut raw, mut reconnect) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ratios, mut reconnect_ratios) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let mut o: Vec<Duration> = (0..PER_ROUND).map(|_| ours_step()).collect();
        let mut r: Vec<Duration> = (0..PER_ROUND).map(|_| raw_step()).collect();
        let mut c: Vec<Duration> = (0..PER_ROUND).map(|_| reconnect_step()).collect();
        let (mo, mr, mc) = (median(&mut o), median(&mut r), median(&mut c));
        ratios.push(mo / mr);
        reconnect_ratios.push(mc / mo);
        ours.extend(o);
        raw.extend(r);
        reconnect.extend(c);
    }
    drop(client);
    let _ = echo.kill();
    let _ = echo_reconnect.kill();

    println!(
        "# empty Step ({request_len} B) / StepDone ({reply_len} B) round trips, {} each",
        ours.len()
    );
    println!("# server: {}", server.display());
    let (m_ours, p_ours) = report("netloop <-> ns-3 server", &mut ours);
    let (m_raw, p_raw) = report("raw TCP ping-pong", &mut raw);
    let (m_rc, p_rc) = report("TCP connect per sync", &mut reconnect);
    println!(
        "median_us ours={:.2} raw={:.2} reconnect={:.2}",
        us(m_ours),
        us(m_raw),
        us(m_rc)
    );
    println!(
        "p99_us ours={:.2} raw={:.2} reconnect={:.2}",
        us(p_ours),
        us(p_raw),
        us(p_rc)
    );
    println!("reconnect_ratio={:.3}", median_f64(&mut reconnect_ratios));
    println!("roundtrip_ratio={:.3}", median_f64(&mut ratios));
}

fn median(samples: &mut [Duration]) -> f64 {
    samples.sort_unstable();
    us(samples[samples.len() / 2])
}

fn median_f64(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn report(name: &str, samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort_unstable();
    let at =
        |q: f64| samples[((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1];
    let (median, p99) = (at(0.5), at(0.99));
    println!(
        "{name:<26} median {:>8.2} us   p99 {:>8.2} us",
        us(median),
        us(p99)
    );
    (median, p99)
}

/// Re-runs this binary as the far end of the ping-pong, in its own process.
fn spawn_echo(request: usize, reply: usize, reconnect: bool) -> (Child, u16) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--echo-server", &request.to_string(), &reply.to_string()])
        .args(reconnect.then_some("reconnect"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line.trim().parse().unwrap())
}

fn echo_server(request: usize, reply: usize, reconnect: bool) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    println!("{}", listener.local_addr().unwrap().port());
    std::io::stdout().flush().unwrap();
    let mut inbox = vec![0u8; request];
    let outbox = vec![9u8; reply];
    let serve = |stream: &mut TcpStream, inbox: &mut [u8]| -> bool {
        stream.read_exact(inbox).is_ok() && stream.write_all(&outbox).is_ok()
    };
    if reconnect {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            stream.set_nodelay(true).unwrap();
            serve(&mut stream, &mut inbox);
        }
    } else {
        let (mut stream, _) = listener.accept().unwrap();
        stream.set_nodelay(true).unwrap();
        while serve(&mut stream, &mut inbox) {}
    }
}
