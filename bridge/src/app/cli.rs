//! The command line: every subcommand, argument and help text of `netloop`
//! (docs/cli.md is its user's guide). Only the definitions live here; the
//! commands are in the sibling modules and [`super::dispatch`] picks one.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use protocol::SimTime;

use crate::config::Backend;

pub const ABOUT: &str = "Co-simulation of networked control systems over ns-3";

pub const AFTER_HELP: &str = "\
Examples:
  netloop run examples/dc_servo_p2p.toml --network builtin --plot
  netloop check examples/dc_servo_p2p.toml --set loops[0].controller.kp=30
  netloop sweep examples/sweep_delay_gain.toml --jobs 4
  netloop plot results/sweep_delay_gain

Docs: docs/tutorial.md (first steps), docs/scenario.md (every key), docs/cli.md.
Logging: -v, -vv, -q, or RUST_LOG (e.g. RUST_LOG=bridge=debug).";

#[derive(Parser)]
#[command(name = "netloop", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Cli {
    /// More log output (-v: debug, -vv: trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Only errors: no summary, no progress bar.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
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
pub struct ScenarioArgs {
    /// Scenario file (TOML); see docs/scenario.md.
    pub scenario: PathBuf,
    /// Set any key of the scenario by its dotted path, e.g. loops[0].controller.kp=30,
    /// duration=5s, network.builtin.delay={ kind = "constant", value = "5ms" }. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Use this network backend instead of the scenario's.
    #[arg(long, value_enum)]
    pub network: Option<BackendArg>,
}

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// Run directory (default: results/<scenario name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also draw the run's plots into <out>/plots/.
    #[arg(long)]
    pub plot: bool,
    /// Form of timeseries and packets (overrides `[output] format`).
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
}

#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// Print the resolved scenario as TOML, with every default filled in.
    #[arg(long)]
    pub print: bool,
    /// Also run the network's own program (`[network.server] binary`) to check
    /// it; without, a program the scenario names is not run.
    #[arg(long)]
    pub with_server: bool,
    /// Print the resolved component graph as Graphviz DOT (a `[[loops]]`
    /// file: the graph its loops expand into).
    #[arg(long)]
    pub graph: bool,
}

#[derive(Args)]
pub struct SweepArgs {
    /// Sweep file (TOML); see docs/sweeps.md. With --status or --aggregate,
    /// a sweep directory will do too.
    pub sweep: PathBuf,
    /// Runs at once (default: the number of cores).
    #[arg(long, short)]
    pub jobs: Option<usize>,
    /// Skip runs that are already complete; rerun failed, timed-out and interrupted ones.
    #[arg(long)]
    pub resume: bool,
    /// Sweep directory (default: results/<sweep file name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Set a key for every run, like the sweep file's [set] (and over it); a key
    /// a [[grid]] axis sweeps is pinned to this one value. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Replications per point (overrides the sweep file's `replications`).
    #[arg(long, value_name = "N")]
    pub replications: Option<u64>,
    /// Form of each run's timeseries and packets (like --set output.format=...).
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Wall-clock limit per run, e.g. 10min (overrides the sweep file's `timeout`).
    #[arg(long)]
    pub timeout: Option<SimTime>,
    /// Also draw the sweep's plots into <out>/plots/.
    #[arg(long)]
    pub plot: bool,
    /// Check the sweep file and every run's scenario, print the plan, run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: also run the network's own program (`[network.server]
    /// binary`) to check it; without, it is not run.
    #[arg(long, requires = "dry_run")]
    pub with_server: bool,
    /// Run only shard I of N (1 ≤ I ≤ N): every N-th run of the plan, from
    /// the I-th. Shards share the sweep directory and never run the same
    /// run; aggregate with --aggregate when all are done.
    #[arg(long, value_name = "I/N", conflicts_with_all = ["slurm", "status", "aggregate", "dry_run"])]
    pub shard: Option<crate::sweep::Shard>,
    /// Submit the sweep to SLURM as a job array (see docs/cluster.md); with
    /// --resume, only the runs that are not complete.
    #[arg(long, conflicts_with_all = ["status", "aggregate", "dry_run"])]
    pub slurm: bool,
    /// SLURM partition (overrides `[slurm] partition`).
    #[arg(long, requires = "slurm")]
    pub partition: Option<String>,
    /// SLURM time limit of each array task, e.g. 30:00 (overrides `[slurm] time`).
    #[arg(long, requires = "slurm")]
    pub time: Option<String>,
    /// SLURM memory of each array task, e.g. 2G (overrides `[slurm] mem`).
    #[arg(long, requires = "slurm")]
    pub mem: Option<String>,
    /// SLURM account (overrides `[slurm] account`).
    #[arg(long, requires = "slurm")]
    pub account: Option<String>,
    /// At most this many array tasks at once (overrides `[slurm] array_parallelism`).
    #[arg(long, requires = "slurm")]
    pub array_parallelism: Option<u32>,
    /// Runs per array task, default 1 (overrides `[slurm] runs_per_task`).
    #[arg(long, requires = "slurm")]
    pub runs_per_task: Option<u32>,
    /// Show the state of every run (complete, running, failed, pending), run nothing.
    #[arg(long, conflicts_with_all = ["aggregate", "dry_run", "resume"])]
    pub status: bool,
    /// Write sweep.csv and sweep_summary.csv (and plots with --plot) from the
    /// run directories as they are, run nothing.
    #[arg(long, conflicts_with_all = ["dry_run", "resume"])]
    pub aggregate: bool,
}

#[derive(Args)]
pub struct PlotArgs {
    /// A run directory (has summary.json) or a sweep directory (has sweep.json).
    pub dir: PathBuf,
    /// Sweep plots: the parameter on the x axis (default: the first swept one).
    #[arg(long)]
    pub x: Option<String>,
    /// Sweep plots: a metric to plot, by full name (servo.theta.iae) or by its end
    /// (iae, delay.p99_s); repeatable; `all` for every metric. Default: the control
    /// figures, mean and p99 delay and delivery ratios.
    #[arg(long = "metric", value_name = "NAME")]
    pub metrics: Vec<String>,
    /// Sweep plots: a logarithmic x axis (every x value must be a positive number).
    #[arg(long)]
    pub log_x: bool,
}

/// `--format`: the run's data files as CSV (the default) or Parquet.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum FormatArg {
    Csv,
    Parquet,
}

impl FormatArg {
    /// The `--set` that `--format` stands for.
    pub fn set(self) -> String {
        match self {
            FormatArg::Csv => "output.format=csv".into(),
            FormatArg::Parquet => "output.format=parquet".into(),
        }
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum BackendArg {
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
pub enum Ns3Command {
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
pub struct InfoArgs {
    /// The ns-3 server binary (default: $NETLOOP_NS3_SERVER, the build tree, or PATH).
    #[arg(long)]
    pub server: Option<PathBuf>,
}

#[derive(Args)]
pub struct ProbeArgs {
    /// Number of packets.
    #[arg(long, default_value_t = 100)]
    pub packets: u64,
    /// Time between packets, e.g. 10ms.
    #[arg(long, default_value = "10ms")]
    pub period: SimTime,
    /// Payload bytes per packet.
    #[arg(long, default_value_t = 64)]
    pub size: u32,
    /// Sending node.
    #[arg(long, default_value_t = 0)]
    pub src: u32,
    /// Receiving node.
    #[arg(long, default_value_t = 1)]
    pub dst: u32,
    /// Destination port.
    #[arg(long, default_value_t = 9000)]
    pub port: u16,
    /// Simulated time to wait for stragglers after the last send.
    #[arg(long, default_value = "1s")]
    pub drain: SimTime,
    /// The ns-3 server binary (default: $NETLOOP_NS3_SERVER, the build tree, or PATH).
    #[arg(long)]
    pub server: Option<PathBuf>,
    /// Seconds to wait for each answer of the server.
    #[arg(long, default_value_t = 300)]
    pub step_timeout: u64,
    /// ns-3 arguments describing the network, after `--` (see `netloop-server --PrintHelp`).
    #[arg(last = true)]
    pub ns3_args: Vec<String>,
}
