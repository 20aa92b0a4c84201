//! A run directory holds one run's outputs: a second run into it fails at
//! once naming the first, a re-run starts by removing the old summary and
//! stale outputs, links planted in it are refused, and a full disk is a
//! clear error that leaves no empty files behind.

use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use crate::support::{assert_exit, netloop, servo_example, stderr, summary};

/// `netloop run` of the servo example over the builtin channel into `out`.
fn run_args(out: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "run".into(),
        servo_example().display().to_string(),
        "--network".into(),
        "builtin".into(),
        "-q".into(),
        "--out".into(),
        out.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// A run long enough (seconds of wall time) to be caught in the middle.
const LONG: [&str; 4] = ["--set", "duration=600s", "--set", "record_every=100"];

fn spawn(args: &[String]) -> Child {
    netloop()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the run in `dir` is simulating (its time series is open).
fn wait_running(dir: &Path, child: &mut Child) {
    let started = Instant::now();
    while !dir.join("timeseries.csv.partial").exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it was caught running"
        );
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the run did not start"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_second_run_into_a_busy_directory_fails_at_once_and_the_first_completes_intact() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("shared");
    let mut first = spawn(&run_args(&out, &LONG));
    wait_running(&out, &mut first);

    let started = Instant::now();
    let mut second_args = run_args(&out, &LONG);
    second_args.extend(["--set".into(), "loops[0].controller.kp=30".into()]);
    let second = netloop().args(&second_args).output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the second run waited: {:?}",
        started.elapsed()
    );
    assert_exit(&second, 1);
    let err = stderr(&second);
    assert!(
        err.contains(&format!("netloop process {}", first.id())),
        "the holder's pid is not named: {err}"
    );
    assert!(err.contains("in use"), "{err}");
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first run was disturbed"
    );

    let first = first.wait_with_output().unwrap();
    assert_exit(&first, 0);
    // Intact: the same bytes as the same run alone.
    let alone = dir.path().join("alone");
    let o = netloop().args(run_args(&alone, &LONG)).output().unwrap();
    assert_exit(&o, 0);
    for file in ["summary.json", "timeseries.csv", "packets.csv"] {
        let (a, b) = (
            std::fs::read(out.join(file)).unwrap(),
            std::fs::read(alone.join(file)).unwrap(),
        );
        assert!(
            a == b,
            "{file} of the first run differs from the same run alone"
        );
    }
    assert!(
        !out.join("netloop.lock").exists(),
        "the lock file outlived its run"
    );
}

#[test]
fn a_killed_rerun_leaves_no_summary_saying_complete_and_no_stale_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = netloop()
        .args(run_args(&out, &["--set", "duration=1s", "--plot"]))
        .output()
        .unwrap();
    assert_exit(&o, 0);
    assert_eq!(summary(&out)["complete"], true);
    assert!(out.join("plots").is_dir());
    // Traces of an earlier ns-3 run of the same directory.
    std::fs::create_dir_all(out.join("ns3")).unwrap();
    std::fs::write(out.join("ns3/trace.pcap"), "old").unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();

    let mut rerun = spawn(&run_args(&out, &LONG));
    wait_running(&out, &mut rerun);
    rerun.kill().unwrap(); // SIGKILL: no chance to clean up
    rerun.wait().unwrap();

    match std::fs::read_to_string(out.join("summary.json")) {
        Err(_) => {}
        Ok(text) => panic!("the killed re-run left a summary.json: {text:.200}"),
    }
    for stale in [
        "plots",
        "ns3",
        "timeseries.csv",
        "packets.csv",
        "timing.json",
    ] {
        assert!(
            !out.join(stale).exists(),
            "{stale} of the earlier run is still there"
        );
    }
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine",
        "a file netloop does not write was touched"
    );

    // The lock of the killed run does not block the next one.
    let o = netloop()
        .args(run_args(&out, &["--set", "duration=1s"]))
        .output()
        .unwrap();
    assert_exit(&o, 0);
    assert_eq!(summary(&out)["complete"], true);
}

/// Only the ns-3 server writes traces: a builtin run asked for them, of
/// loops or of a graph, leaves no `ns3/` (one rule for both run kinds).
#[test]
fn a_builtin_run_asked_for_traces_leaves_no_ns3_directory() {
    let graph = crate::support::root().join("tests/cli/graph_flows/servo_graph.toml");
    let dir = tempfile::tempdir().unwrap();
    for (name, mut args) in [
        ("loops", run_args(&dir.path().join("loops"), &[])),
        (
            "graph",
            [
                "run",
                graph.to_str().unwrap(),
                "-q",
                "--out",
                dir.path().join("graph").to_str().unwrap(),
            ]
            .map(String::from)
            .to_vec(),
        ),
    ] {
        args.extend(
            [
                "--set",
                "duration=\"100ms\"",
                "--set",
                "network.traces.pcap=true",
            ]
            .map(String::from),
        );
        let o = netloop().args(&args).output().unwrap();
        assert_exit(&o, 0);
        let out = dir.path().join(name);
        assert_eq!(summary(&out)["complete"], true, "{name}");
        assert!(!out.join("ns3").exists(), "{name}: a builtin run made ns3/");
    }
}

#[test]
fn a_symbolic_link_planted_in_the_run_directory_is_refused() {
    for name in ["timeseries.csv.partial", "summary.json", "plots"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        std::fs::create_dir_all(&out).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, out.join(name)).unwrap();
        let o = netloop()
            .args(run_args(&out, &["--set", "duration=1s", "--plot"]))
            .output()
            .unwrap();
        assert_exit(&o, 1);
        let err = stderr(&o);
        assert!(
            err.contains(&format!("{} is a symbolic link", out.join(name).display())),
            "{name}: {err}"
        );
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "precious",
            "{name}: written through the link"
        );
        assert!(out.join(name).is_symlink(), "{name}: the link was removed");
        assert!(!out.join("timeseries.csv").exists(), "{name}: the run ran");
    }
}

/// Runs `netloop` with `args` inside a fresh mount namespace where `dir` is
/// a tmpfs of `pages` 4 KiB pages, after filling all but `free` of them;
/// `None` where mount namespaces are not allowed.
fn run_on_small_disk(dir: &Path, pages: u64, free: u64, args: &[String]) -> Option<Output> {
    let exe = env!("CARGO_BIN_EXE_netloop");
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = format!(
        "mount -t tmpfs -o size={}k tmpfs '{d}' || exit 99; \
         [ {fill} -eq 0 ] || head -c {fill_bytes} /dev/zero > '{d}/filler' || exit 98; \
         '{exe}' {args}; code=$?; ls -la '{d}/out' >&2; exit $code",
        pages * 4,
        d = dir.display(),
        fill = pages - free,
        fill_bytes = (pages - free) * 4096,
        args = quoted.join(" ")
    );
    let o = std::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", &script])
        .env_remove("RUST_LOG")
        .output()
        .ok()?;
    if o.status.code() == Some(99) || (o.status.code() == Some(1) && stderr(&o).contains("unshare"))
    {
        eprintln!("skipped: cannot mount a tmpfs here: {}", stderr(&o));
        return None;
    }
    Some(o)
}

/// Pages a file of `bytes` takes on tmpfs.
fn pages(bytes: u64) -> u64 {
    bytes.div_ceil(4096)
}

#[test]
fn a_full_disk_is_a_clear_error_that_leaves_no_empty_files() {
    let dir = tempfile::tempdir().unwrap();
    let short = ["--set", "duration=1s"];
    // The same run on a roomy disk, to know what it needs.
    let roomy = dir.path().join("roomy");
    let o = netloop().args(run_args(&roomy, &short)).output().unwrap();
    assert_exit(&o, 0);
    let size = |f: &str| std::fs::metadata(roomy.join(f)).unwrap().len();
    let data = pages(size("timeseries.csv")) + pages(size("packets.csv"));
    let small = dir.path().join("small");
    std::fs::create_dir_all(&small).unwrap();
    let out = small.join("out");
    let args = run_args(&out, &short);
    // Room for nothing; for the lock (its pid) and the data files but not
    // timing.json and the summary; for everything but the summary.
    for free in [0, 1 + data, 1 + data + pages(size("timing.json"))] {
        let Some(o) = run_on_small_disk(&small, 4096, free, &args) else {
            return;
        };
        assert_exit(&o, 1);
        let err = stderr(&o);
        assert!(
            err.contains("No space left on device"),
            "free {free} pages: {err}"
        );
        assert!(
            err.contains("cannot write the run directory"),
            "free {free} pages: {err}"
        );
        let listing: Vec<&str> = err
            .lines()
            .skip_while(|l| !l.starts_with("total "))
            .collect();
        assert!(
            !listing.is_empty(),
            "free {free} pages: no listing of the run directory: {err}"
        );
        for line in &listing {
            assert!(
                !line.ends_with(".tmp"),
                "free {free} pages: a temporary file is left:\n{}",
                listing.join("\n")
            );
            assert!(
                !line.ends_with("summary.json"),
                "free {free} pages: a summary is left:\n{}",
                listing.join("\n")
            );
        }
    }
}

#[test]
fn devices_and_endless_files_are_refused_quickly_under_a_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let delay_file = write_scenario_with_delay_file(dir.path(), Path::new("/dev/zero"));
    for (scenario, what) in [
        (PathBuf::from("/dev/zero"), "scenario"),
        (delay_file, "empirical delay file"),
    ] {
        let started = Instant::now();
        let o =
            limited(netloop().args(["check", scenario.to_str().unwrap(), "--network", "builtin"]));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{what}: took {:?}",
            started.elapsed()
        );
        assert_exit(&o, 2);
        let err = stderr(&o);
        assert!(
            err.contains("cannot read /dev/zero: it is larger than 16 MiB"),
            "{what}: {err}"
        );
    }
}

/// Model files a scenario names (an FMU, an equation model), in loops and
/// in graph components, are read under a cap too: `/dev/zero` is refused
/// quickly with the limit, not read until memory runs out.
#[test]
fn model_files_that_never_end_are_refused_quickly_under_a_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let fmu_loop = "duration = \"1s\"\nstep = \"1ms\"\n[sync]\nscheme = \"time_stepping\"\nperiod = \"10ms\"\n\
        [network]\nbackend = \"builtin\"\n[network.builtin]\ndelay = { kind = \"constant\", value = \"3ms\" }\n\
        [[loops]]\nname = \"chain\"\nplant_node = 0\ncontroller_node = 1\n[loops.plant]\nkind = \"fmu\"\n\
        path = \"/dev/zero\"\nstep = \"10ms\"\n[loops.sensor]\nperiod = \"10ms\"\n[loops.controller]\nkind = \"open_loop\"\n";
    // The cascade example with its plant replaced.
    let cascade = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cascade_servo_graph.toml"),
    )
    .unwrap();
    let servo = "[components.plant]\nkind = \"dc_servo\"\noutputs = [\"theta\", \"omega\"]";
    assert!(cascade.contains(servo), "the cascade example changed");
    let graph = |plant: &str| cascade.replace(servo, &format!("[components.plant]\n{plant}"));
    let cases = [
        (
            "fmu_loop.toml",
            fmu_loop.to_string(),
            "loops[0].plant.path",
            "256 MiB",
        ),
        (
            "fmu_graph.toml",
            graph("kind = \"fmu\"\npath = \"/dev/zero\"\nstep = \"1ms\""),
            "components[0].plant.path",
            "256 MiB",
        ),
        (
            "equations_graph.toml",
            graph("kind = \"equations\"\nsource = \"/dev/zero\""),
            "components[0].plant.source",
            "16 MiB",
        ),
    ];
    for (name, text, key, limit) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let started = Instant::now();
        let o = limited(netloop().args(["check", path.to_str().unwrap()]));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{name}: took {:?}",
            started.elapsed()
        );
        assert_exit(&o, 2);
        let err = stderr(&o);
        assert!(
            err.starts_with(&format!("error: `{key}`: ")),
            "{name}: {err}"
        );
        assert!(
            err.contains(&format!(
                "/dev/zero: it is larger than {limit}, the most netloop reads from"
            )),
            "{name}: {err}"
        );
    }
}

/// The servo example with an empirical delay read from `file`.
fn write_scenario_with_delay_file(dir: &Path, file: &Path) -> PathBuf {
    let text = std::fs::read_to_string(servo_example()).unwrap().replace(
        "delay = { kind = \"constant\", value = \"2752us\" }",
        &format!(
            "delay = {{ kind = \"empirical\", file = \"{}\" }}",
            file.display()
        ),
    );
    assert!(
        text.contains("empirical"),
        "the servo example's builtin delay changed"
    );
    let path = dir.join("empirical.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs a command with its address space limited to 1 GiB, so that reading
/// an endless file whole fails instead of taking the machine's memory.
fn limited(command: &mut std::process::Command) -> Output {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 1 << 30,
                rlim_max: 1 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.output().unwrap()
}

#[test]
fn a_long_offending_line_is_quoted_by_its_first_80_characters() {
    let dir = tempfile::tempdir().unwrap();
    let numbers = (0..200_000)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let base = std::fs::read_to_string(servo_example()).unwrap();
    // A type error on the long line, and a syntax error in it.
    for (name, line) in [
        ("typed.toml", format!("record_every = [{numbers}]")),
        ("syntax.toml", format!("record_every = [{numbers} oops]")),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("{line}\n{base}")).unwrap();
        let o = netloop()
            .args(["check", path.to_str().unwrap()])
            .output()
            .unwrap();
        assert_exit(&o, 2);
        let err = stderr(&o);
        assert!(err.len() < 2000, "{name}: {} bytes of error", err.len());
        assert!(
            err.contains("record_every = [0, 1, 2, 3") && err.contains('…'),
            "{name}: {err}"
        );
    }
}
