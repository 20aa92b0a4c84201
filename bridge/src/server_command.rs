//! How a scenario becomes the ns-3 server's command line, and asking the
//! server whether it accepts it (`netloop-server --check`).
//!
//! The server is the one place that knows which PHY modes a standard has,
//! how a topology file looks and every range of its arguments. Rather than
//! copy those checks, the bridge reads its schema (`--describe`,
//! [`crate::network_schema`]) for the declared limits, `netloop check` and
//! `netloop sweep` ask it (`--check`), and a problem it reports
//! (`netloop-problem: {"argument":"phyMode","message":...}` on stderr) is
//! reported at the scenario key the named argument came from. ns-3's own
//! CommandLine complaints (an unknown argument, a value its type or an ns-3
//! attribute rejects) come back the same way: the server checks every
//! argument before ns-3 reads it (`CheckedCommandLine`). No text is scanned
//! for an argument name; a problem naming none is reported at
//! `network.ns3` (`network.server.args` for a custom program).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use netloop_child_process::die_with_parent;

use crate::config::{Backend, Ns3NetworkConfig, Resolved, ServerArgument, ServerConfig};
use crate::keyed::KeyPath;
use crate::network_schema;
use crate::ns3::{default_server_path, server_problem, Ns3Client, Ns3Error, Ns3Options};

/// How long `--check` may take: it builds nothing, so this only guards
/// against a server that hangs.
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);

/// The server's arguments for a resolved scenario, each with its scenario
/// key: seed and run, the network's own, `[network.server] params` as
/// `--name=value` in name order, then `[network.server] args` verbatim. Trace files go into `out_dir/ns3/`; relative files are read
/// from `base_dir`.
pub fn server_arguments(
    resolved: &Resolved,
    base_dir: &Path,
    out_dir: &Path,
) -> Vec<ServerArgument> {
    let scenario = &resolved.scenario;
    let mut args = vec![
        ServerArgument::new("seed", scenario.seed, "seed"),
        ServerArgument::new("run", scenario.run, "run"),
    ];
    if let Some(ns3) = &scenario.network.ns3 {
        let extras = scenario.network.extras();
        args.extend(ns3.server_arguments(
            &extras,
            resolved.node_count,
            base_dir,
            &out_dir.join("ns3"),
        ));
    }
    args.extend(scenario.network.server.params.iter().map(|(name, value)| {
        ServerArgument::new(
            name,
            value,
            KeyPath::from("network.server.params").and(name),
        )
    }));
    args.extend(
        scenario
            .network
            .server
            .args
            .iter()
            .enumerate()
            .map(|(i, a)| ServerArgument::verbatim(a, KeyPath::from("network.server.args").at(i))),
    );
    args
}

/// The command line of [`server_arguments`].
pub fn command_line(arguments: &[ServerArgument]) -> Vec<String> {
    arguments.iter().map(|a| a.text.clone()).collect()
}

/// The server binary: `[network.server] binary` (relative to the scenario
/// file's directory), else `$NETLOOP_NS3_SERVER`, the build tree, or `PATH`.
pub fn server_binary(server: &ServerConfig, base_dir: &Path) -> PathBuf {
    match &server.binary {
        // A bare name of a scenario in the working directory ("my-server")
        // is that file, not a program looked up on PATH.
        Some(binary) => match base_dir.join(binary) {
            path if path.parent() == Some(Path::new("")) => Path::new(".").join(path),
            path => path,
        },
        None => default_server_path(),
    }
}

/// Spawn options for a run of `resolved` into `out_dir`.
pub fn ns3_options(
    resolved: &Resolved,
    base_dir: &Path,
    out_dir: &Path,
    cancel: Option<Arc<AtomicBool>>,
) -> Ns3Options {
    let server = &resolved.scenario.network.server;
    let arguments = server_arguments(resolved, base_dir, out_dir);
    let mut options = Ns3Options::new(server_binary(server, base_dir), command_line(&arguments));
    options.connect_timeout = Duration::from_nanos(server.connect_timeout.0);
    options.step_timeout = Duration::from_nanos(server.step_timeout.0);
    options.cancel = cancel;
    options.transport = server.transport;
    options.spin_wait = Duration::from_nanos(server.spin_wait.0);
    options
}

/// The scenario key behind a problem the server reported about its
/// arguments (its structured line): the key of the argument it named,
/// else `network.ns3`, or `network.server.args` for a custom program,
/// whose arguments come from there.
pub fn key_of_problem(resolved: &Resolved, base_dir: &Path, argument: Option<&str>) -> KeyPath {
    let arguments = server_arguments(resolved, base_dir, Path::new("."));
    key_of_argument(&arguments, argument).unwrap_or_else(|| fallback_key(resolved))
}

/// The key of a problem that names no argument of the command line.
fn fallback_key(resolved: &Resolved) -> KeyPath {
    match &resolved.scenario.network.ns3 {
        Some(Ns3NetworkConfig::Custom(_)) => "network.server.args".into(),
        _ => "network.ns3".into(),
    }
}

/// The key of the argument named `argument` on a command line: of the last
/// one of that name, which is the one the server took.
fn key_of_argument(arguments: &[ServerArgument], argument: Option<&str>) -> Option<KeyPath> {
    let name = argument?;
    arguments
        .iter()
        .rev()
        .find(|a| a.name == name)
        .map(|a| a.key.clone())
}

/// What `--check` found.
#[derive(Debug, PartialEq, Eq)]
pub enum NetworkCheck {
    /// The server accepts every argument.
    Accepted,
    /// Nothing to ask: the builtin network.
    NotApplicable,
    /// The scenario names its own program (`[network.server] binary`), which
    /// was not run: checking a scenario runs no code it names unless asked
    /// (`--with-server`). The program exists.
    Skipped { binary: PathBuf },
    /// No server to ask (it cannot be started); the run will say so.
    NoServer { binary: PathBuf, reason: String },
    /// The server rejected an argument: the scenario key and its message.
    Rejected { key: KeyPath, message: String },
}

/// Asks the server whether it accepts the network of `resolved`
/// (`netloop-server --check`), which builds nothing and reads topology files.
///
/// A program the scenario names itself (`[network.server] binary`) is user
/// code: it is run only `with_server` (`netloop check --with-server`), and
/// otherwise only looked for ([`NetworkCheck::Skipped`]). A custom kind's
/// program need not know `--check`, so it is checked by starting it for
/// real: the handshake and a Configure without flows, which must report at
/// least the scenario's node count.
pub fn check_network(resolved: &Resolved, base_dir: &Path, with_server: bool) -> NetworkCheck {
    let scenario = &resolved.scenario;
    let Some(ns3) = scenario
        .network
        .ns3
        .as_ref()
        .filter(|_| scenario.network.backend == Backend::Ns3)
    else {
        return NetworkCheck::NotApplicable;
    };
    let binary = server_binary(&scenario.network.server, base_dir);
    let own_program = scenario.network.server.binary.is_some();
    if own_program && !binary.is_file() {
        return NetworkCheck::Rejected {
            key: "network.server.binary".into(),
            message: format!(
                "{} does not exist (a relative path is relative to the scenario file)",
                binary.display()
            ),
        };
    }
    if own_program && !with_server {
        return NetworkCheck::Skipped { binary };
    }
    // Trace files are the run's own business (and the server would create
    // them to see whether it can).
    let arguments: Vec<ServerArgument> = server_arguments(resolved, base_dir, Path::new("."))
        .into_iter()
        .filter(|a| !a.key.starts_with(&KeyPath::from("network.traces")))
        .collect();
    if matches!(ns3, Ns3NetworkConfig::Custom(_)) {
        return start_custom_program(resolved, binary, &arguments);
    }
    let mut line = command_line(&arguments);
    line.push("--check".into());
    let no_server = |reason: String| NetworkCheck::NoServer {
        binary: binary.clone(),
        reason,
    };
    let mut child = match die_with_parent(&mut Command::new(&binary))
        .args(&line)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return no_server(e.to_string()),
    };
    let status = match netloop_child_process::wait_until(&mut child, Instant::now() + CHECK_TIMEOUT)
    {
        Ok(Some(status)) => status,
        Ok(None) => {
            return NetworkCheck::Rejected {
                key: "network.ns3".into(),
                message: format!(
                    "{} --check did not answer within {CHECK_TIMEOUT:?}",
                    binary.display()
                ),
            };
        }
        Err(e) => return no_server(e.to_string()),
    };
    // What the server said, not all of it: a runaway one must not fill memory.
    let mut stderr = String::new();
    if let Some(pipe) = child.stderr.take() {
        let _ = pipe.take(1 << 20).read_to_string(&mut stderr);
    }
    match status.code() {
        Some(0) => NetworkCheck::Accepted,
        Some(2) => {
            let problem = network_schema::server_problem_of(&stderr);
            let message = problem
                .as_ref()
                .map_or_else(|| server_problem(&stderr), |p| p.message.clone());
            let argument = problem.as_ref().map(|p| p.argument.as_str());
            if argument == Some("check") {
                return NetworkCheck::Rejected {
                    key: "network.server.binary".into(),
                    message: format!(
                        "{} does not know --check ({message}); rebuild it from this checkout with scripts/build-ns3.sh",
                        binary.display()
                    ),
                };
            }
            let key = key_of_argument(&arguments, argument)
                .unwrap_or_else(|| KeyPath::from("network.ns3"));
            NetworkCheck::Rejected { key, message }
        }
        // Any other code (a server that is not netloop's, one built before
        // --check, a crash) did not find the network good either, so `check`
        // and sweep planning fail rather than let the runs find out.
        _ => NetworkCheck::Rejected {
            key: "network.ns3".into(),
            message: format!(
                "{} --check failed ({}): {}",
                binary.display(),
                crate::ns3::describe_exit(Some(status)),
                server_problem(&stderr)
            ),
        },
    }
}

/// Checks a custom kind's program by starting it: it must shake hands and
/// serve at least the scenario's nodes. It is stopped right after.
fn start_custom_program(
    resolved: &Resolved,
    binary: PathBuf,
    arguments: &[ServerArgument],
) -> NetworkCheck {
    let server = &resolved.scenario.network.server;
    let mut options = Ns3Options::new(binary, command_line(arguments));
    options.connect_timeout = Duration::from_nanos(server.connect_timeout.0);
    options.step_timeout = CHECK_TIMEOUT;
    let rejected = |key: &'static str, message: String| NetworkCheck::Rejected {
        key: key.into(),
        message,
    };
    let mut client = match Ns3Client::start(&options) {
        Ok(client) => client,
        Err(Ns3Error::BadArgument {
            message, argument, ..
        }) => {
            let key = key_of_argument(arguments, argument.as_deref())
                .unwrap_or_else(|| KeyPath::from("network.server.args"));
            return NetworkCheck::Rejected { key, message };
        }
        Err(Ns3Error::Spawn { binary, source }) => {
            return NetworkCheck::NoServer {
                binary,
                reason: source.to_string(),
            }
        }
        Err(e) => {
            return rejected(
                "network.server.binary",
                format!("the program did not start as a netloop server: {e}"),
            )
        }
    };
    match client.configure(Vec::new()) {
        Ok(configured) if configured.node_count >= resolved.node_count => NetworkCheck::Accepted,
        Ok(configured) => rejected(
            "network.ns3.nodes",
            format!(
                "the program serves {} nodes ({}), the scenario needs {}",
                configured.node_count, configured.description, resolved.node_count
            ),
        ),
        Err(e) => rejected(
            "network.server.binary",
            format!("the program did not answer a Configure: {e}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_is_relative_to_the_scenarios_directory_even_as_a_bare_name() {
        let server = |binary: &str| ServerConfig {
            binary: Some(binary.into()),
            ..ServerConfig::default()
        };
        assert_eq!(
            server_binary(&server("my-server"), Path::new("")),
            Path::new("./my-server")
        );
        assert_eq!(
            server_binary(&server("my-server"), Path::new("dir")),
            Path::new("dir/my-server")
        );
        assert_eq!(
            server_binary(&server("bin/x"), Path::new("")),
            Path::new("bin/x")
        );
        assert_eq!(
            server_binary(&server("/abs/x"), Path::new("dir")),
            Path::new("/abs/x")
        );
    }

    /// The argument the server named is looked up, by name only: the last
    /// of that name is the one the server took; a name not passed has no key.
    #[test]
    fn a_problem_is_traced_to_the_key_of_the_argument_it_names() {
        let args = KeyPath::from("network.server.args");
        let arguments = [
            ServerArgument::new("nodes", "3", "network.ns3.nodes"),
            ServerArgument::new("phyMode", "Bogus", "network.radio.phy_mode"),
            ServerArgument::verbatim("--ns3::WifiMac::Ssid=x", args.clone().at(0)),
            ServerArgument::verbatim("--nodes=4", args.at(1)),
        ];
        let key = |argument| key_of_argument(&arguments, argument).map(|k| k.to_string());
        assert_eq!(
            key(Some("phyMode")).as_deref(),
            Some("network.radio.phy_mode")
        );
        assert_eq!(
            key(Some("ns3::WifiMac::Ssid")).as_deref(),
            Some("network.server.args[0]")
        );
        assert_eq!(
            key(Some("nodes")).as_deref(),
            Some("network.server.args[1]")
        );
        assert_eq!(key(Some("elsewhere")), None);
        assert_eq!(key(Some("")), None);
        assert_eq!(key(None), None);
    }

    /// `[network.server] params` become typed `--name=value` flags, in name
    /// order, after the network's own arguments and before `args`; a swept
    /// float keeps its shortest form (0.1, not 0.1000000000000000055).
    #[test]
    fn params_are_passed_as_flags_before_the_verbatim_args() {
        let example =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/servo_byo_plant_floor.toml");
        let set = |key: &str, value: toml::Value| crate::scenario_file::Override {
            path: crate::scenario_file::KeyPath::parse(key).unwrap(),
            value,
            origin: format!("test: {key}"),
        };
        let loaded = crate::scenario_file::load(
            &example,
            &[
                set("network.server.params.loss", toml::Value::Float(0.1)),
                set(
                    "network.server.params.mode",
                    toml::Value::String("fast".into()),
                ),
                set("network.server.params.hops", toml::Value::Integer(3)),
                set("network.server.params.verbose", toml::Value::Boolean(false)),
            ],
        )
        .unwrap();
        let arguments = server_arguments(&loaded.resolved, &loaded.base_dir, Path::new("."));
        let texts = command_line(&arguments);
        let tail = &texts[texts.len() - 6..];
        assert_eq!(
            tail,
            [
                "--hops=3",
                "--loss=0.1",
                "--mode=fast",
                "--verbose=false",
                "--distance=20",
                "--csmaDelay=50us"
            ]
        );
        let loss = arguments.iter().find(|a| a.name == "loss").unwrap();
        assert_eq!(loss.key, KeyPath::from("network.server.params").and("loss"));
    }

    #[test]
    fn a_param_that_is_not_a_flag_name_is_refused_naming_its_key() {
        let example =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/servo_byo_plant_floor.toml");
        for (name, value) in [
            ("\"a b\"", toml::Value::Integer(1)),
            ("seed", toml::Value::Integer(1)),
        ] {
            let key = format!("network.server.params.{name}");
            let e = crate::scenario_file::load(
                &example,
                &[crate::scenario_file::Override {
                    path: crate::scenario_file::KeyPath::parse(&key).unwrap(),
                    value,
                    origin: "test".into(),
                }],
            )
            .unwrap_err()
            .to_string();
            assert!(e.contains("network.server.params."), "{e}");
        }
    }
}
