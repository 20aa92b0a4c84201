//! The `netloop` command: parses the command line and calls into `bridge`.
//!
//! Exit codes: 0 success, 1 run failure, 2 bad input (docs/design.md §8.2). A bad
//! scenario or sweep file is always 2, with a message naming the file, the
//! line and the key; a run that starts and fails is 1, with its partial
//! results on disk.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, CommandFactory, Parser, Subcommand};
use protocol::SimTime;

use bridge::config::Backend;
use bridge::graph_scenario;
use bridge::ns3::{default_server_path, Ns3Options, SERVER_ENV};
use bridge::plot::{plot_dir, PlotOptions};
use bridge::probe::{run_probe, ProbeSpec};
use bridge::run::{run_with_progress, RunError, RunOptions};
use bridge::run_progress::RunProgress;
use bridge::scenario_file::{self, backend_override, LoadError, Override};
use bridge::server_command::key_of_problem;
use bridge::sweep::{self, aggregate, ExecOptions, Plan, SweepError, SweepFile};

const ABOUT: &str = "Co-simulation of networked control systems over ns-3";

const AFTER_HELP: &str = "\
Examples:
  netloop run examples/dc_servo_p2p.toml --network builtin --plot
  netloop check examples/dc_servo_p2p.toml --set loops[0].controller.kp=30
  netloop sweep examples/sweep_delay_gain.toml --jobs 4
  netloop plot results/sweep_delay_gain

Docs: docs/tutorial.md (first steps), docs/scenario.md (every key), docs/cli.md.
Logging: -v, -vv, -q, or RUST_LOG (e.g. RUST_LOG=bridge=debug).";

#[derive(Parser)]
#[command(name = "netloop", version, about = ABOUT, after_help = AFTER_HELP)]
struct Cli {
    /// More log output (-v: debug, -vv: trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Only errors: no summary, no progress bar.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one scenario and write its results to a run directory.
    #[command(after_help = "\
Examples:
  netloop run examples/dc_servo_p2p.toml --out results/servo
  netloop run examples/dc_servo_p2p.toml --network builtin --plot
  netloop run examples/dc_servo_p2p.toml --set loops[0].controller.kp=30 --set duration=5s

The run directory holds timeseries.csv, packets.csv, summary.json and timing.json
(and plots/ with --plot). A failed run keeps *.csv.partial files and a summary.json
with \"complete\": false.")]
    Run(RunArgs),
    /// Check a scenario file without running it; print what it resolves to.
    #[command(after_help = "\
Examples:
  netloop check examples/dc_servo_p2p.toml
  netloop check examples/dc_servo_p2p.toml --set loops[0].sensor.period=15ms
  netloop check examples/dc_servo_p2p.toml --print     # the full scenario, defaults filled in
  netloop check examples/servo_byo_plant_floor.toml --with-server  # also run its own ns-3 program

A network's own program ([network.server] binary) is user code: check does not
run it unless --with-server is given, and says so.

Exit code 0: the scenario is valid; 2: it is not (the message names file, line and key).")]
    Check(CheckArgs),
    /// Run a parameter sweep: many runs in parallel, then aggregates with confidence intervals.
    #[command(after_help = "\
Examples:
  netloop sweep examples/sweep_delay_gain.toml
  netloop sweep examples/sweep_delay_gain.toml --jobs 2 --out results/my_sweep
  netloop sweep examples/sweep_delay_gain.toml --resume   # after Ctrl-C or failures
  netloop sweep examples/sweep_delay_gain.toml --dry-run  # check it, list the runs

Writes <out>/runs/<hash>/ per run (named by the hash of its resolved scenario),
<out>/sweep.csv (one row per run), <out>/sweep_summary.csv (mean, std and 95%
confidence interval per parameter point and metric) and <out>/sweep.json (the plan).
The sweep file format is in docs/sweeps.md.")]
    Sweep(SweepArgs),
    /// Plot a run directory or a sweep directory (PNG, SVG and PDF, into DIR/plots/).
    #[command(after_help = "\
Examples:
  netloop plot results/servo                 # a run: trajectories, control, delay, delay CDF, fates
  netloop plot results/sweep_delay_gain      # a sweep: every metric against the first parameter
  netloop plot results/sweep_delay_gain --x loops[0].controller.kp
  netloop plot results/sweep_p2p_link --log-x   # data rates spanning decades
  netloop plot results/sweep_delay_gain --metric iae --metric delay.p99_s
  netloop plot results/sweep_delay_gain --metric all")]
    Plot(PlotArgs),
    /// The ns-3 side: server information, and a probe of a network without a control loop.
    #[command(
        subcommand,
        after_help = "\
Examples:
  netloop ns3 info
  netloop ns3 probe --packets 50 --period 10ms -- --dataRate=1Mbps --delay=2ms"
    )]
    Ns3(Ns3Command),
    /// Print a shell completion script.
    #[command(after_help = "\
Examples:
  netloop completions bash > ~/.local/share/bash-completion/completions/netloop
  netloop completions zsh > ~/.zfunc/_netloop
  netloop completions fish > ~/.config/fish/completions/netloop.fish")]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Args)]
struct ScenarioArgs {
    /// Scenario file (TOML); see docs/scenario.md.
    scenario: PathBuf,
    /// Set any key of the scenario by its dotted path, e.g. loops[0].controller.kp=30,
    /// duration=5s, network.builtin.delay={ kind = "constant", value = "5ms" }. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Use this network backend instead of the scenario's.
    #[arg(long, value_enum)]
    network: Option<BackendArg>,
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    scenario: ScenarioArgs,
    /// Run directory (default: results/<scenario name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also draw the run's plots into <out>/plots/.
    #[arg(long)]
    plot: bool,
    /// Form of timeseries and packets (overrides `[output] format`).
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
}

#[derive(Args)]
struct CheckArgs {
    #[command(flatten)]
    scenario: ScenarioArgs,
    /// Print the resolved scenario as TOML, with every default filled in.
    #[arg(long)]
    print: bool,
    /// Also run the network's own program (`[network.server] binary`) to check
    /// it; without, a program the scenario names is not run.
    #[arg(long)]
    with_server: bool,
    /// Print the resolved component graph as Graphviz DOT (graph scenarios).
    #[arg(long)]
    graph: bool,
}

#[derive(Args)]
struct SweepArgs {
    /// Sweep file (TOML); see docs/sweeps.md. With --status or --aggregate,
    /// a sweep directory will do too.
    sweep: PathBuf,
    /// Runs at once (default: the number of cores).
    #[arg(long, short)]
    jobs: Option<usize>,
    /// Skip runs that are already complete; rerun failed, timed-out and interrupted ones.
    #[arg(long)]
    resume: bool,
    /// Sweep directory (default: results/<sweep file name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Set a key for every run, like the sweep file's [set] (and over it); a key
    /// a [[grid]] axis sweeps is pinned to this one value. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Replications per point (overrides the sweep file's `replications`).
    #[arg(long, value_name = "N")]
    replications: Option<u64>,
    /// Form of each run's timeseries and packets (like --set output.format=...).
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Wall-clock limit per run, e.g. 10min (overrides the sweep file's `timeout`).
    #[arg(long)]
    timeout: Option<SimTime>,
    /// Also draw the sweep's plots into <out>/plots/.
    #[arg(long)]
    plot: bool,
    /// Check the sweep file and every run's scenario, print the plan, run nothing.
    #[arg(long)]
    dry_run: bool,
    /// With --dry-run: also run the network's own program (`[network.server]
    /// binary`) to check it; without, it is not run.
    #[arg(long, requires = "dry_run")]
    with_server: bool,
    /// Run only shard I of N (1 ≤ I ≤ N): every N-th run of the plan, from
    /// the I-th. Shards share the sweep directory and never run the same
    /// run; aggregate with --aggregate when all are done.
    #[arg(long, value_name = "I/N", conflicts_with_all = ["slurm", "status", "aggregate", "dry_run"])]
    shard: Option<bridge::sweep::Shard>,
    /// Submit the sweep to SLURM as a job array (see docs/cluster.md); with
    /// --resume, only the runs that are not complete.
    #[arg(long, conflicts_with_all = ["status", "aggregate", "dry_run"])]
    slurm: bool,
    /// SLURM partition (overrides `[slurm] partition`).
    #[arg(long, requires = "slurm")]
    partition: Option<String>,
    /// SLURM time limit of each array task, e.g. 30:00 (overrides `[slurm] time`).
    #[arg(long, requires = "slurm")]
    time: Option<String>,
    /// SLURM memory of each array task, e.g. 2G (overrides `[slurm] mem`).
    #[arg(long, requires = "slurm")]
    mem: Option<String>,
    /// SLURM account (overrides `[slurm] account`).
    #[arg(long, requires = "slurm")]
    account: Option<String>,
    /// At most this many array tasks at once (overrides `[slurm] array_parallelism`).
    #[arg(long, requires = "slurm")]
    array_parallelism: Option<u32>,
    /// Runs per array task, default 1 (overrides `[slurm] runs_per_task`).
    #[arg(long, requires = "slurm")]
    runs_per_task: Option<u32>,
    /// Show the state of every run (complete, running, failed, pending), run nothing.
    #[arg(long, conflicts_with_all = ["aggregate", "dry_run", "resume"])]
    status: bool,
    /// Write sweep.csv and sweep_summary.csv (and plots with --plot) from the
    /// run directories as they are, run nothing.
    #[arg(long, conflicts_with_all = ["dry_run", "resume"])]
    aggregate: bool,
}

#[derive(Args)]
struct PlotArgs {
    /// A run directory (has summary.json) or a sweep directory (has sweep.json).
    dir: PathBuf,
    /// Sweep plots: the parameter on the x axis (default: the first swept one).
    #[arg(long)]
    x: Option<String>,
    /// Sweep plots: a metric to plot, by full name (servo.theta.iae) or by its end
    /// (iae, delay.p99_s); repeatable; `all` for every metric. Default: the control
    /// figures, mean and p99 delay and delivery ratios.
    #[arg(long = "metric", value_name = "NAME")]
    metrics: Vec<String>,
    /// Sweep plots: a logarithmic x axis (every x value must be a positive number).
    #[arg(long)]
    log_x: bool,
}

/// `--format`: the run's data files as CSV (the default) or Parquet.
#[derive(Clone, Copy, clap::ValueEnum)]
enum FormatArg {
    Csv,
    Parquet,
}

impl FormatArg {
    /// The `--set` that `--format` stands for.
    fn set(self) -> String {
        match self {
            FormatArg::Csv => "output.format=csv".into(),
            FormatArg::Parquet => "output.format=parquet".into(),
        }
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum BackendArg {
    Builtin,
    Ns3,
}

impl From<BackendArg> for Backend {
    fn from(b: BackendArg) -> Backend {
        match b {
            BackendArg::Builtin => Backend::Builtin,
            BackendArg::Ns3 => Backend::Ns3,
        }
    }
}

#[derive(Subcommand)]
enum Ns3Command {
    /// Where the ns-3 server is, its ns-3 version, network kinds and modules.
    #[command(after_help = "\
Examples:
  netloop ns3 info
  netloop ns3 info --server ns3-scenarios/build/netloop-server

The server is looked for in $NETLOOP_NS3_SERVER, then the build tree of this
checkout (ns3-scenarios/build/netloop-server), then PATH.")]
    Info(InfoArgs),
    /// Send a periodic flow through an ns-3 network; print per-packet delays and the delivery ratio.
    #[command(
        after_help = "Example:\n  netloop ns3 probe --packets 50 --period 10ms -- --dataRate=1Mbps --delay=2ms --lossRate=0.1"
    )]
    Probe(ProbeArgs),
}

#[derive(Args)]
struct InfoArgs {
    /// The ns-3 server binary (default: $NETLOOP_NS3_SERVER, the build tree, or PATH).
    #[arg(long)]
    server: Option<PathBuf>,
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

impl From<LoadError> for Failure {
    fn from(e: LoadError) -> Self {
        Failure::BadInput(e.to_string())
    }
}

impl From<SweepError> for Failure {
    fn from(e: SweepError) -> Self {
        match e {
            SweepError::Input(m) => Failure::BadInput(m),
            other => Failure::Run(other.to_string()),
        }
    }
}

fn main() -> ExitCode {
    // Like any Unix tool, end quietly when the reader of our output goes away
    // (`netloop check x.toml | head`) instead of panicking on a failed print.
    // Sockets to the ns-3 server are unaffected: std writes them with
    // MSG_NOSIGNAL, so a dead server is still an error, not a signal.
    // SAFETY: setting a signal disposition at start-up, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.quiet);
    let quiet = cli.quiet;
    let result = match cli.command {
        Command::Run(args) => run_scenario(args, quiet, install_interrupt_handler()),
        Command::Check(args) => check(args, quiet),
        Command::Sweep(args) => run_sweep(args, quiet),
        Command::Plot(args) => plot(args, quiet),
        Command::Ns3(Ns3Command::Info(args)) => ns3_info(args),
        Command::Ns3(Ns3Command::Probe(args)) => {
            probe(args, install_interrupt_handler()).map_err(Failure::from)
        }
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "netloop",
                &mut std::io::stdout(),
            );
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BadInput(message)) => {
            eprintln!("error: {}", message.trim_end());
            ExitCode::from(2)
        }
        Err(Failure::Run(message)) => {
            eprintln!("error: {}", message.trim_end());
            ExitCode::from(1)
        }
    }
}

/// The first Ctrl-C (or SIGTERM) asks the run to stop at its next sync and
/// keep its partial results; a second Ctrl-C exits at once.
///
/// SIGTERM never exits at once (SIGKILL is there for that): a sweep's runs
/// get SIGTERM as their parent-death signal, and Linux sends it again each
/// time the dying sweep's threads hand the child on, so a run may see it
/// twice and must still write its partial results.
fn install_interrupt_handler() -> Arc<AtomicBool> {
    let cancel = Arc::new(AtomicBool::new(false));
    // Order matters: the conditional exit sees the flag set by an earlier signal.
    let _ = signal_hook::flag::register_conditional_shutdown(
        signal_hook::consts::SIGINT,
        130,
        Arc::clone(&cancel),
    );
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(signal, Arc::clone(&cancel));
    }
    cancel
}

/// `--set` and `--network`, in that order (`--network` wins over a `--set network.backend`).
fn overrides(args: &ScenarioArgs) -> Result<Vec<Override>, Failure> {
    let mut all = args
        .set
        .iter()
        .map(|s| Override::parse_set(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::BadInput)?;
    if let Some(b) = args.network {
        all.push(backend_override(b.into()));
    }
    Ok(all)
}

fn run_scenario(args: RunArgs, quiet: bool, cancel: Arc<AtomicBool>) -> Result<(), Failure> {
    if graph_scenario::is_graph_file(&args.scenario.scenario) {
        return run_graph_scenario(args, quiet, cancel);
    }
    let mut all = overrides(&args.scenario)?;
    if let Some(format) = args.format {
        all.push(Override::parse_set(&format.set()).map_err(Failure::BadInput)?);
    }
    let loaded = scenario_file::load(&args.scenario.scenario, &all)?;
    let path = &args.scenario.scenario;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".into());
    let out_dir = args
        .out
        .unwrap_or_else(|| PathBuf::from("results").join(stem));
    let options = RunOptions {
        out_dir: out_dir.clone(),
        base_dir: loaded.base_dir.clone(),
        cancel: Some(cancel),
    };
    let progress = RunProgress::for_terminal(loaded.resolved.scenario.duration, quiet);
    let outcome = run_with_progress(&loaded.resolved, &options, progress);
    if let (Ok(report), false) = (&outcome, quiet) {
        print_summary(&report.summary, &report.out_dir);
    }
    // A failed run is plotted too, from its partial files.
    if args.plot
        && !matches!(
            outcome,
            Err(RunError::Config(_)
                | RunError::NetworkRejected { .. }
                | RunError::Output { .. }
                | RunError::Directory(_))
        )
    {
        match plot_dir(&out_dir, &PlotOptions::default()) {
            Ok(files) if !quiet => println!(
                "plots: {} files in {}",
                files.len(),
                out_dir.join("plots").display()
            ),
            Ok(_) => {}
            Err(e) => eprintln!("warning: no plots: {e}"),
        }
    }
    match outcome {
        Ok(_) => Ok(()),
        Err(RunError::Config(message)) => Err(Failure::BadInput(format!("{}: {message}", path.display()))),
        // The server rejected an argument: bad input, reported at its key.
        Err(RunError::NetworkRejected { message, argument }) => {
            let key = key_of_problem(&loaded.resolved, &loaded.base_dir, argument.as_deref(), &message);
            Err(Failure::BadInput(loaded.locate(&key, &message).to_string()))
        }
        Err(RunError::Failed { source, reached, out_dir }) => Err(Failure::Run(format!(
            "{source}\npartial results up to simulated time {reached} kept in {} (summary.json says \"complete\": false)",
            out_dir.display()
        ))),
        Err(e) => Err(Failure::Run(e.to_string())),
    }
}

/// `netloop run` on a graph scenario (`[[components]]`): on one node, or
/// with a `[network]` carrying the flows between nodes.
fn run_graph_scenario(args: RunArgs, quiet: bool, cancel: Arc<AtomicBool>) -> Result<(), Failure> {
    let path = &args.scenario.scenario;
    let has_network = bridge::input::read_input(path)
        .ok()
        .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
        .is_some_and(|t| t.contains_key("network"));
    if args.scenario.network.is_some() && !has_network {
        return Err(Failure::BadInput(format!(
            "{}: --network: this graph scenario has no [network] (all its components are on one node)",
            path.display()
        )));
    }
    let mut loaded = graph_scenario::load(path, &overrides(&args.scenario)?)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".into());
    let out_dir = args
        .out
        .unwrap_or_else(|| PathBuf::from("results").join(stem));
    if loaded.network.is_some() {
        let base_dir = path.parent().map(PathBuf::from).unwrap_or_default();
        let components = loaded.scenario.components.len();
        return match bridge::graph_run::run(loaded, &out_dir, &base_dir, Some(cancel)) {
            Ok(summary) => {
                if !quiet {
                    println!(
                        "{}: {components} components, {} flows over {} ({} syncs), delivery ratio {} in {}",
                        path.display(),
                        summary.flows.len(),
                        summary.network.backend,
                        summary.sync.syncs,
                        summary
                            .delivery_ratio
                            .map_or_else(|| "-".to_string(), |r| format!("{r:.3}")),
                        out_dir.display()
                    );
                }
                Ok(())
            }
            Err(bridge::graph_run::GraphNetRunError::Failed { source, reached, out_dir }) => {
                Err(Failure::Run(format!(
                    "{source}\npartial results up to simulated time {reached} kept in {} (summary.json says \"complete\": false)",
                    out_dir.display()
                )))
            }
            Err(e) => Err(Failure::Run(e.to_string())),
        };
    }
    match graph_scenario::run(&mut loaded, &out_dir) {
        Ok(report) => {
            if !quiet {
                println!(
                    "{}: {} rows of {} components in {}",
                    path.display(),
                    report.rows,
                    loaded.scenario.components.len(),
                    out_dir.join("timeseries.csv").display()
                );
            }
            Ok(())
        }
        Err(graph_scenario::GraphRunError::Failed { source }) => Err(Failure::Run(format!(
            "{source}\npartial time series kept in {}",
            out_dir.join("timeseries.csv").display()
        ))),
        Err(e) => Err(Failure::Run(e.to_string())),
    }
}

/// `netloop check` on a graph scenario: the order, or the DOT with --graph.
fn check_graph(args: CheckArgs, quiet: bool) -> Result<(), Failure> {
    let loaded = graph_scenario::load(&args.scenario.scenario, &overrides(&args.scenario)?)?;
    if args.graph {
        print!("{}", graph_scenario::dot(&loaded));
        return Ok(());
    }
    if args.print {
        let text = toml::to_string(&loaded.scenario)
            .map_err(|e| Failure::Run(format!("cannot print the scenario: {e}")))?;
        print!("{text}");
        return Ok(());
    }
    if quiet {
        return Ok(());
    }
    let s = &loaded.scenario;
    println!("{}: ok", args.scenario.scenario.display());
    println!(
        "  {} simulated in {} steps of {} ({}), {} components, {} connections",
        s.duration,
        loaded.end_step,
        s.step,
        format!("{:?}", s.solver).to_lowercase(),
        s.components.len(),
        s.connections.len()
    );
    let order: Vec<String> = loaded.graph.order().iter().map(|b| b.join(" + ")).collect();
    println!("  evaluation order: {}", order.join(", "));
    Ok(())
}

fn check(args: CheckArgs, quiet: bool) -> Result<(), Failure> {
    if graph_scenario::is_graph_file(&args.scenario.scenario) {
        return check_graph(args, quiet);
    }
    if args.graph {
        return Err(Failure::BadInput(format!(
            "{}: --graph shows a graph scenario ([[components]] and [[connections]]); this file has [[loops]]",
            args.scenario.scenario.display()
        )));
    }
    let loaded = scenario_file::load(&args.scenario.scenario, &overrides(&args.scenario)?)?;
    if let Some(note) = loaded.check_network(args.with_server)? {
        tracing::warn!("{note}");
    }
    let r = &loaded.resolved;
    let s = &r.scenario;
    if args.print {
        let text = toml::to_string(s)
            .map_err(|e| Failure::Run(format!("cannot print the scenario: {e}")))?;
        print!("{text}");
        return Ok(());
    }
    if quiet {
        return Ok(());
    }
    println!("{}: ok", args.scenario.scenario.display());
    println!(
        "  {} simulated in {} steps of {} ({}), sync {}{}",
        s.duration,
        r.end_step,
        s.step,
        format!("{:?}", s.solver).to_lowercase(),
        s.sync.scheme,
        s.sync
            .period
            .map(|p| format!(" every {p}"))
            .unwrap_or_default()
    );
    println!(
        "  network: {} backend, {} nodes; seed {}, run {}",
        s.network.backend, r.node_count, s.seed, s.run
    );
    for (l, n) in s.loops.iter().zip(&r.loops) {
        let place = if n.is_local() {
            format!("local on node {}", n.plant_node)
        } else {
            format!(
                "plant on node {}, controller on node {}",
                n.plant_node, n.controller_node
            )
        };
        println!("  loop {}: {place}", l.name);
    }
    println!("  config hash {}", bridge::run::config_hash(s));
    Ok(())
}

fn run_sweep(args: SweepArgs, quiet: bool) -> Result<(), Failure> {
    if args.status || args.aggregate {
        return inspect_sweep(&args, quiet);
    }
    let mut file = SweepFile::load(&args.sweep)?;
    sweep_overrides(&args).apply(&mut file)?;
    let out = sweep_out_dir(&args);
    let timeout = args.timeout.map(|t| Duration::from_nanos(t.0));
    if timeout == Some(Duration::ZERO) {
        return Err(Failure::BadInput(
            "--timeout must be longer than zero".into(),
        ));
    }
    if args.slurm {
        return submit_sweep(&args, &file, &out, timeout, quiet);
    }
    // A real sweep runs the network's program anyway: check it before the runs start.
    let plan = Plan::build(
        &args.sweep,
        &file,
        &out,
        timeout,
        args.with_server || !args.dry_run,
    )?;
    if args.dry_run {
        println!(
            "{} points x {} replications = {} runs into {}",
            plan.points.len(),
            plan.replications,
            plan.runs.len(),
            out.display()
        );
        for point in &plan.points {
            println!("point {}: {}", point.index, point.label());
        }
        for run in &plan.runs {
            println!(
                "  {} point {} run {}: netloop {}",
                run.dir.display(),
                run.point,
                run.run,
                run.args.join(" ")
            );
        }
        return Ok(());
    }
    // A whole sweep holds its directory alone. Shards share it by design
    // (each run still locks its own run directory), so they take no lock.
    let _lock = if args.shard.is_none() {
        Some(sweep::lock_dir(&out)?)
    } else {
        None
    };
    let exe = std::env::current_exe()
        .map_err(|e| Failure::Run(format!("cannot find the netloop executable: {e}")))?;
    let mut options = ExecOptions::new(exe);
    if let Some(jobs) = args.jobs {
        if jobs == 0 {
            return Err(Failure::BadInput("--jobs must be at least 1".into()));
        }
        options.jobs = jobs;
    }
    options.resume = args.resume;
    options.quiet = quiet;
    options.shard = args.shard;
    if !quiet {
        let shard = args
            .shard
            .map(|s| format!(", shard {s}"))
            .unwrap_or_default();
        eprintln!(
            "sweep: {} points x {} replications = {} runs{shard}, {} at a time, into {}",
            plan.points.len(),
            plan.replications,
            plan.runs.len(),
            options.jobs,
            out.display()
        );
    }
    let report = sweep::execute(&plan, &options)?;
    if let Some(shard) = args.shard {
        // One shard of many: the aggregates wait for all of them (--aggregate).
        let line = sweep::slurm::shard_line(shard, &report.outcomes, &report.selected);
        if !quiet || report.failed() > 0 {
            eprintln!("{line}");
        }
        if report.failed() == 0 {
            return Ok(());
        }
        return Err(Failure::Run(format!(
            "{line}; rerun this shard with: {}",
            resume_command(&args, &out)
        )));
    }
    let written = aggregate::write(&plan, &report)?;
    if args.plot {
        match plot_dir(&out, &PlotOptions::default()) {
            Ok(files) if !quiet => eprintln!(
                "plots: {} files in {}",
                files.len(),
                out.join("plots").display()
            ),
            Ok(_) => {}
            Err(e) => eprintln!("warning: no plots: {e}"),
        }
    }
    let complete = report.outcomes.iter().filter(|o| o.is_complete()).count();
    if !quiet {
        eprintln!(
            "sweep: {complete} of {} runs complete in {:.1}s; {} and {}",
            plan.runs.len(),
            report.makespan.as_secs_f64(),
            written.runs_csv.display(),
            written.summary_csv.display()
        );
    }
    let not_done: Vec<_> = plan
        .runs
        .iter()
        .zip(&report.outcomes)
        .filter(|(_, o)| !o.is_complete())
        .collect();
    if not_done.is_empty() {
        return Ok(());
    }
    let mut listing = String::new();
    for (run, outcome) in &not_done {
        if matches!(outcome, sweep::Outcome::NotRun) {
            continue;
        }
        let error = outcome
            .error()
            .unwrap_or_default()
            .replace('\n', "\n      ");
        listing.push_str(&format!(
            "  {} ({}, run {}): {}\n      {error}\n      log: {}\n",
            run.hash,
            plan.point_of(run).label(),
            run.run,
            outcome.status(),
            out.join(&run.dir).join("netloop.log").display()
        ));
    }
    let again = resume_command(&args, &out);
    if report.interrupted {
        return Err(Failure::Run(format!(
            "sweep interrupted: {} of {} runs not complete\n{listing}  finish it with: {again}",
            not_done.len(),
            plan.runs.len()
        )));
    }
    Err(Failure::Run(format!(
        "{} of {} runs failed:\n{listing}  rerun only these with: {again}",
        not_done.len(),
        plan.runs.len()
    )))
}

/// `--set` and `--replications` of a sweep.
fn sweep_overrides(args: &SweepArgs) -> sweep::SweepOverrides {
    let mut set = args.set.clone();
    set.extend(args.format.map(FormatArg::set));
    sweep::SweepOverrides {
        set,
        replications: args.replications,
    }
}

/// The sweep directory: `--out`, else `results/<sweep file name>`.
fn sweep_out_dir(args: &SweepArgs) -> PathBuf {
    let stem = args
        .sweep
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sweep".into());
    args.out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(stem))
}

/// `--status` and `--aggregate`: read a sweep directory's plan and runs.
fn inspect_sweep(args: &SweepArgs, quiet: bool) -> Result<(), Failure> {
    let dir = if Plan::is_sweep_dir(&args.sweep) {
        args.sweep.clone()
    } else {
        sweep_out_dir(args)
    };
    let plan = Plan::read(&dir)?;
    let outcomes = sweep::status::outcomes(&plan);
    if args.status {
        print!(
            "{}",
            sweep::status::report(
                &plan,
                &outcomes,
                &sweep::slurm::JobRecord::read(&plan.out_dir)
            )
        );
        return Ok(());
    }
    let complete = outcomes.iter().filter(|o| o.is_complete()).count();
    let report = sweep::ExecReport {
        selected: (0..plan.runs.len()).collect(),
        outcomes,
        interrupted: false,
        makespan: Duration::ZERO,
    };
    let written = aggregate::write(&plan, &report)?;
    if args.plot {
        match plot_dir(&plan.out_dir, &PlotOptions::default()) {
            Ok(files) if !quiet => eprintln!(
                "plots: {} files in {}",
                files.len(),
                plan.out_dir.join("plots").display()
            ),
            Ok(_) => {}
            Err(e) => eprintln!("warning: no plots: {e}"),
        }
    }
    if !quiet {
        eprintln!(
            "sweep: {complete} of {} runs complete; {} and {}",
            plan.runs.len(),
            written.runs_csv.display(),
            written.summary_csv.display()
        );
    }
    Ok(())
}

/// `--slurm`: plan as a local sweep would, then submit a job array.
fn submit_sweep(
    args: &SweepArgs,
    file: &SweepFile,
    out: &Path,
    timeout: Option<Duration>,
    quiet: bool,
) -> Result<(), Failure> {
    let absolute = |p: &Path| -> Result<PathBuf, Failure> {
        std::path::absolute(p)
            .map_err(|e| Failure::Run(format!("cannot make {} absolute: {e}", p.display())))
    };
    // Nodes start in another directory: every path the tasks see is absolute.
    let sweep_file = absolute(&args.sweep)?;
    let out = absolute(out)?;
    let plan = Plan::build(&sweep_file, file, &out, timeout, true)?;
    // Held while the plan is written and old run directories are removed;
    // the array's shards then share the directory.
    let _lock = sweep::lock_dir(&out)?;
    let mut table = file.slurm.clone().unwrap_or_default();
    for (value, slot) in [
        (&args.partition, &mut table.partition),
        (&args.time, &mut table.time),
        (&args.mem, &mut table.mem),
        (&args.account, &mut table.account),
    ] {
        if value.is_some() {
            slot.clone_from(value);
        }
    }
    if args.array_parallelism.is_some() {
        table.array_parallelism = args.array_parallelism;
    }
    if args.runs_per_task.is_some() {
        table.runs_per_task = args.runs_per_task;
    }
    let exe = std::env::current_exe()
        .map_err(|e| Failure::Run(format!("cannot find the netloop executable: {e}")))?;
    let options = sweep::slurm::SlurmOptions {
        table,
        exe,
        sweep_file,
        timeout: args.timeout.map(|t| t.to_string()),
        overrides: sweep_overrides(args).words(),
        plot: args.plot,
        resume: args.resume,
    };
    let submitted = sweep::slurm::submit(&plan, &options)?;
    match submitted.submission {
        None => {
            if !quiet {
                eprintln!(
                    "sweep: all {} runs are complete; nothing to submit",
                    plan.runs.len()
                );
            }
        }
        Some(s) => {
            if !quiet {
                eprintln!(
                    "sweep: {} runs of {} in {} array tasks (shards of {}), into {}",
                    s.runs,
                    plan.runs.len(),
                    s.tasks.len(),
                    s.shards,
                    out.display()
                );
                eprintln!("  batch script {}", submitted.array_script.display());
                eprintln!(
                    "  aggregation job {} runs when the array is done",
                    s.aggregate_job
                );
                eprintln!("  follow it with: netloop sweep {} --status", out.display());
            }
            // The job id alone on stdout, for scripts (`jobid=$(netloop sweep ... --slurm)`).
            println!("{}", s.array_job);
        }
    }
    Ok(())
}

/// The command that resumes this sweep exactly: same file, same directory
/// (explicit, since the default depends on the working directory), same
/// jobs, timeout, plots and overrides.
fn resume_command(args: &SweepArgs, out: &Path) -> String {
    let mut words = vec![
        "netloop".to_string(),
        "sweep".into(),
        bridge::shell::word(&args.sweep.display().to_string()),
    ];
    words.extend([
        "--out".into(),
        bridge::shell::word(&out.display().to_string()),
    ]);
    if let Some(jobs) = args.jobs {
        words.extend(["--jobs".into(), jobs.to_string()]);
    }
    if let Some(timeout) = args.timeout {
        words.extend([
            "--timeout".into(),
            bridge::shell::word(&timeout.to_string()),
        ]);
    }
    if args.plot {
        words.push("--plot".into());
    }
    words.extend(
        sweep_overrides(args)
            .words()
            .iter()
            .map(|w| bridge::shell::word(w)),
    );
    if let Some(shard) = args.shard {
        words.extend(["--shard".into(), shard.to_string()]);
    }
    words.push("--resume".into());
    words.join(" ")
}

fn plot(args: PlotArgs, quiet: bool) -> Result<(), Failure> {
    let files = plot_dir(
        &args.dir,
        &PlotOptions {
            x: args.x,
            metrics: args.metrics,
            log_x: args.log_x,
        },
    )
    .map_err(|e| match e {
        bridge::plot::PlotError::Input(m) => Failure::BadInput(m),
        other => Failure::Run(other.to_string()),
    })?;
    if !quiet {
        for f in &files {
            println!("{}", f.display());
        }
    }
    Ok(())
}

/// Where the server binary would be found, in order, and the one that is used.
fn server_candidates() -> (Vec<String>, Option<PathBuf>) {
    let mut looked = Vec::new();
    if let Some(p) = std::env::var_os(SERVER_ENV) {
        let p = PathBuf::from(p);
        looked.push(format!("${SERVER_ENV} = {}", p.display()));
        let found = p.is_file().then_some(p);
        return (looked, found);
    }
    looked.push(format!("${SERVER_ENV} (not set)"));
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("ns3-scenarios/build/netloop-server");
    looked.push(format!("{} (build tree)", built.display()));
    let found = if built.is_file() {
        Some(built)
    } else {
        looked.push("netloop-server on PATH".into());
        std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .map(|d| d.join("netloop-server"))
            .find(|p| p.is_file())
    };
    (looked, found)
}

fn ns3_info(args: InfoArgs) -> Result<(), Failure> {
    let (looked, found) = match args.server {
        Some(p) => (
            vec![format!("{} (--server)", p.display())],
            Some(p).filter(|p| p.is_file()),
        ),
        None => server_candidates(),
    };
    let Some(server) = found else {
        return Err(Failure::Run(format!(
            "the ns-3 server (netloop-server) was not found; netloop looked at:\n  {}\nbuild it with scripts/setup.sh (or scripts/build-ns3.sh), or set {SERVER_ENV}",
            looked.join("\n  ")
        )));
    };
    println!(
        "server: {}",
        server.canonicalize().unwrap_or(server.clone()).display()
    );
    println!("looked at: {}", looked.join("; "));
    let output = run_with_timeout(&server, &["--info"], Duration::from_secs(20))
        .map_err(|e| Failure::Run(format!("cannot run {} --info: {e}", server.display())))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let info = stdout.lines().find_map(|l| {
        serde_json::from_str::<serde_json::Value>(l.trim())
            .ok()
            .filter(|v| v.is_object())
    });
    match (output.status.success(), info) {
        (true, Some(info)) => {
            // Known keys first, in a reading order, under friendly names; then any others.
            const KNOWN: [(&str, &str); 6] = [
                ("software", "software"),
                ("ns3_version", "ns-3 version"),
                ("networks", "network kinds"),
                ("transports", "transports"),
                ("traces", "traces"),
                ("modules", "ns-3 modules"),
            ];
            let map = info.as_object().expect("checked above");
            let known = KNOWN
                .iter()
                .filter_map(|(k, label)| map.get(*k).map(|v| (label.to_string(), v)));
            let others = map
                .iter()
                .filter(|(k, _)| !KNOWN.iter().any(|(known, _)| known == k))
                .map(|(k, v)| (k.replace('_', " "), v));
            for (label, value) in known.chain(others) {
                let text = match value {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Array(a) => a
                        .iter()
                        .map(|v| {
                            v.as_str()
                                .map(String::from)
                                .unwrap_or_else(|| v.to_string())
                        })
                        .collect::<Vec<_>>()
                        .join(", "),
                    other => other.to_string(),
                };
                println!("{label}: {text}");
            }
            Ok(())
        }
        _ => {
            let said = String::from_utf8_lossy(&output.stderr);
            let first = said
                .lines()
                .chain(stdout.lines())
                .find(|l| !l.trim().is_empty())
                .unwrap_or("(nothing)");
            Err(Failure::Run(format!(
                "{} does not support --info (it answered: {first}); rebuild it from this checkout with scripts/build-ns3.sh",
                server.display()
            )))
        }
    }
}

/// Runs a short command, killing it after `timeout`.
fn run_with_timeout(
    program: &Path,
    args: &[&str],
    timeout: Duration,
) -> std::io::Result<std::process::Output> {
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let started = Instant::now();
    loop {
        if child.try_wait()?.is_some() {
            return child.wait_with_output();
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {timeout:?}"),
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn print_summary(summary: &bridge::run::RunSummary, dir: &Path) {
    match &summary.stop {
        Some(stop) => println!(
            "run stopped: {} (`{}`) at {}, {} syncs ({})",
            stop.condition,
            stop.expression,
            SimTime(stop.time_ns),
            summary.sync.syncs,
            summary.sync.scheme
        ),
        None => println!(
            "run complete: {} simulated, {} syncs ({})",
            SimTime(summary.reached_ns),
            summary.sync.syncs,
            summary.sync.scheme
        ),
    }
    println!("network: {}", summary.network.description);
    for lp in &summary.loops {
        for out in &lp.outputs {
            let m = &out.metrics;
            println!(
                "loop {} {}: IAE {:.6}  ISE {:.6}  ITAE {:.6}  overshoot {}  {}",
                lp.name,
                out.output,
                m.iae,
                m.ise,
                m.itae,
                m.overshoot_percent
                    .map_or("-".into(), |o| format!("{o:.2}%")),
                m.settling_text(),
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

/// Log lines go to stderr through the sweep's progress bar (suspended while
/// a line is printed), so the two never interleave.
struct LogSink;

impl std::io::Write for LogSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        bridge::sweep::progress::write_log(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(|| LogSink)
        .init();
}

fn probe(args: ProbeArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<()> {
    let mut options = Ns3Options::new(
        args.server.unwrap_or_else(default_server_path),
        args.ns3_args,
    );
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
    println!(
        "{:>6} {:>12} {:>12} {:>12}",
        "packet", "sent_ms", "received_ms", "delay_us"
    );
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
            (None, Some(reason)) => {
                println!(
                    "{:>6} {:>12.3} {:>12} {:>12}",
                    r.number,
                    sent,
                    format!("lost:{reason:?}"),
                    "-"
                )
            }
            (None, None) => println!(
                "{:>6} {:>12.3} {:>12} {:>12}",
                r.number, sent, "in-flight", "-"
            ),
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
