//! `netloop ns3`: where the ns-3 server is and what it offers (`info`), and
//! a periodic flow through a network without a control loop (`probe`).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cli::{InfoArgs, ProbeArgs};
use super::Failure;
use crate::ns3::{default_server_path, Ns3Options, SERVER_ENV};
use crate::probe::{run_probe, ProbeSpec};

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
    // The checkout: this crate's parent directory.
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."));
    let built = checkout.join("ns3-scenarios/build/netloop-server");
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

pub fn info(args: InfoArgs) -> Result<(), Failure> {
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
    let mut child = netloop_child_process::die_with_parent(&mut Command::new(program))
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
pub fn probe(args: ProbeArgs, cancel: Arc<AtomicBool>) -> Result<(), Failure> {
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
    let report = run_probe(&options, &spec).map_err(|e| Failure::Run(with_sources(&e)))?;
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

/// An error and its sources, `outer: inner: innermost`.
fn with_sources(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}
