//! The `netloop` command: parses the command line and calls into `bridge`.
//!
//! Exit codes: 0 success, 1 run failure, 2 bad input (DESIGN §8).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use protocol::SimTime;

use bridge::config::{Backend, Scenario};
use bridge::ns3::{default_server_path, Ns3Options};
use bridge::probe::{run_probe, ProbeSpec};
use bridge::run::{run, RunError, RunOptions};

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
    /// Run one scenario and write its results to a run directory.
    #[command(after_help = "Example:\n  netloop run examples/dc_servo_p2p.toml --out results/servo")]
    Run(RunArgs),
    /// Drive the ns-3 server directly, without a control loop.
    #[command(subcommand)]
    Ns3(Ns3Command),
}

#[derive(Args)]
struct RunArgs {
    /// Scenario file (TOML).
    scenario: PathBuf,
    /// Run directory (default: results/<scenario name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Use this network backend instead of the scenario's.
    #[arg(long, value_enum)]
    network: Option<BackendArg>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum BackendArg {
    Builtin,
    Ns3,
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

/// How a command failed: bad input (exit 2) or a failed run (exit 1).
enum Failure {
    BadInput(String),
    Run(String),
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Run(format!("{e:#}"))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.quiet);
    let cancel = install_interrupt_handler();
    let result = match cli.command {
        Command::Run(args) => run_scenario(args, cancel),
        Command::Ns3(Ns3Command::Probe(args)) => probe(args, cancel).map_err(Failure::from),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BadInput(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Run(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}

/// The first Ctrl-C (or SIGTERM) asks the run to stop at its next sync and
/// keep its partial results; a second one exits at once.
fn install_interrupt_handler() -> Arc<AtomicBool> {
    let cancel = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // Order matters: the conditional exit sees the flag set by an earlier signal.
        let _ = signal_hook::flag::register_conditional_shutdown(signal, 130, Arc::clone(&cancel));
        let _ = signal_hook::flag::register(signal, Arc::clone(&cancel));
    }
    cancel
}

/// Reads and resolves a scenario; every problem is bad input.
fn load_scenario(path: &Path, backend: Option<Backend>) -> Result<bridge::config::Resolved, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::BadInput(format!("cannot read {}: {e}", path.display())))?;
    let mut scenario = Scenario::from_toml(&text)
        .map_err(|e| Failure::BadInput(format!("{}: {}", path.display(), e.to_string().trim_end())))?;
    if let Some(backend) = backend {
        scenario.network.backend = backend;
    }
    scenario.resolve().map_err(|e| Failure::BadInput(format!("{}: {e}", path.display())))
}

fn run_scenario(args: RunArgs, cancel: Arc<AtomicBool>) -> Result<(), Failure> {
    let backend = args.network.map(|b| match b {
        BackendArg::Builtin => Backend::Builtin,
        BackendArg::Ns3 => Backend::Ns3,
    });
    let resolved = load_scenario(&args.scenario, backend)?;
    let stem = args.scenario.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into());
    let out_dir = args.out.unwrap_or_else(|| PathBuf::from("results").join(stem));
    let options = RunOptions {
        out_dir,
        base_dir: args.scenario.parent().map(Path::to_path_buf).unwrap_or_default(),
        cancel: Some(cancel),
    };
    match run(&resolved, &options) {
        Ok(report) => {
            print_summary(&report.summary, &report.out_dir);
            Ok(())
        }
        Err(RunError::Config(message)) => Err(Failure::BadInput(format!("{}: {message}", args.scenario.display()))),
        Err(RunError::Failed { source, out_dir }) => Err(Failure::Run(format!(
            "{source}\npartial results kept in {} (summary.json says \"complete\": false)",
            out_dir.display()
        ))),
        Err(e) => Err(Failure::Run(e.to_string())),
    }
}

fn print_summary(summary: &bridge::run::RunSummary, dir: &Path) {
    println!("run complete: {} simulated, {} syncs ({})", SimTime(summary.reached_ns), summary.sync.syncs, summary.sync.scheme);
    println!("network: {}", summary.network.description);
    for lp in &summary.loops {
        for out in &lp.outputs {
            let m = &out.metrics;
            println!(
                "loop {} {}: IAE {:.6}  ISE {:.6}  ITAE {:.6}  overshoot {}  settling {}",
                lp.name,
                out.output,
                m.iae,
                m.ise,
                m.itae,
                m.overshoot_percent.map_or("-".into(), |o| format!("{o:.2}%")),
                m.settling_time_s.map_or("-".into(), |s| format!("{s:.3}s")),
            );
        }
    }
    for f in &summary.flows {
        let d = &f.delay;
        println!(
            "flow {} ({} {}): sent {} delivered {} accepted {} lost {} dropped {} | delay mean {} p99 {} max {}",
            f.flow,
            f.loop_name,
            f.direction.as_str(),
            f.counts.sent,
            f.counts.delivered,
            f.counts.accepted,
            f.counts.lost_queue + f.counts.lost_phy + f.counts.lost_mac + f.counts.lost_routing + f.counts.lost_other,
            f.counts.dropped_max_delay + f.counts.dropped_stale,
            fmt_seconds(d.mean_s),
            fmt_seconds(d.p99_s),
            fmt_seconds(d.max_s),
        );
    }
    if let Some(ratio) = summary.delivery_ratio {
        println!("delivery ratio {ratio:.4}");
    }
    println!("results in {}", dir.display());
}

fn fmt_seconds(s: Option<f64>) -> String {
    s.map_or("-".into(), |s| format!("{:.3}ms", s * 1e3))
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

fn probe(args: ProbeArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<()> {
    let mut options = Ns3Options::new(args.server.unwrap_or_else(default_server_path), args.ns3_args);
    options.step_timeout = Duration::from_secs(args.step_timeout);
    options.cancel = Some(cancel);
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
