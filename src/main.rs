//! The `netloop` command: parses the command line and calls into `bridge`.
//!
//! Exit codes: 0 success, 1 run failure, 2 bad input (DESIGN §8).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use protocol::SimTime;

use bridge::ns3::{default_server_path, Ns3Options};
use bridge::probe::{run_probe, ProbeSpec};

#[derive(Parser)]
#[command(name = "netloop", version, about = "Co-simulation of networked control systems over ns-3")]
struct Cli {
    /// More log output (-v: debug, -vv: trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Only errors.
    #[arg(short, long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Drive the ns-3 server directly, without a control loop.
    #[command(subcommand)]
    Ns3(Ns3Command),
}

#[derive(Subcommand)]
enum Ns3Command {
    /// Send a periodic flow through an ns-3 network; print per-packet delays and the delivery ratio.
    #[command(after_help = "Example:\n  netloop ns3 probe --packets 50 --period 10ms -- --dataRate=1Mbps --delay=2ms --lossRate=0.1")]
    Probe(ProbeArgs),
}

#[derive(Args)]
struct ProbeArgs {
    /// Number of packets.
    #[arg(long, default_value_t = 100)]
    packets: u64,
    /// Time between packets, e.g. 10ms.
    #[arg(long, default_value = "10ms")]
    period: SimTime,
    /// Payload bytes per packet.
    #[arg(long, default_value_t = 64)]
    size: u32,
    /// Sending node.
    #[arg(long, default_value_t = 0)]
    src: u32,
    /// Receiving node.
    #[arg(long, default_value_t = 1)]
    dst: u32,
    /// Destination port.
    #[arg(long, default_value_t = 9000)]
    port: u16,
    /// Simulated time to wait for stragglers after the last send.
    #[arg(long, default_value = "1s")]
    drain: SimTime,
    /// The ns-3 server binary (default: $NETLOOP_NS3_SERVER, the build tree, or PATH).
    #[arg(long)]
    server: Option<PathBuf>,
    /// Seconds to wait for each answer of the server.
    #[arg(long, default_value_t = 300)]
    step_timeout: u64,
    /// ns-3 arguments describing the network, after `--` (see `netloop-server --PrintHelp`).
    #[arg(last = true)]
    ns3_args: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.quiet);
    let result = match cli.command {
        Command::Ns3(Ns3Command::Probe(args)) => probe(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn init_logging(verbose: u8, quiet: bool) {
    use tracing_subscriber::EnvFilter;
    let default = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "debug",
        (false, _) => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}

fn probe(args: ProbeArgs) -> anyhow::Result<()> {
    let mut options = Ns3Options::new(args.server.unwrap_or_else(default_server_path), args.ns3_args);
    options.step_timeout = Duration::from_secs(args.step_timeout);
    let spec = ProbeSpec {
        packets: args.packets,
        period: args.period,
        size: args.size,
        src: args.src,
        dst: args.dst,
        port: args.port,
        drain: args.drain,
    };
    let report = run_probe(&options, &spec)?;
    println!("# {} | {}", report.server, report.network);
    println!("{:>6} {:>12} {:>12} {:>12}", "packet", "sent_ms", "received_ms", "delay_us");
    for r in &report.records {
        let sent = r.sent.as_secs_f64() * 1e3;
        match (r.received, r.drop_reason) {
            (Some(rx), _) => println!(
                "{:>6} {:>12.3} {:>12.6} {:>12.3}",
                r.number,
                sent,
                rx.as_secs_f64() * 1e3,
                (rx - r.sent).as_nanos() as f64 / 1e3
            ),
            (None, Some(reason)) => println!("{:>6} {:>12.3} {:>12} {:>12}", r.number, sent, format!("lost:{reason:?}"), "-"),
            (None, None) => println!("{:>6} {:>12.3} {:>12} {:>12}", r.number, sent, "in-flight", "-"),
        }
    }
    println!(
        "delivered {}/{} packets, delivery ratio {:.4}",
        report.delivered(),
        report.records.len(),
        report.delivery_ratio()
    );
    Ok(())
}
