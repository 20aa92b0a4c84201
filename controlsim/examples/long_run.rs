//! Memory check: one hour of simulated time at 1 kHz (3.6 million steps),
//! recording every step into a CSV file, through the closed-loop oracle.
//!
//! Two loops: a PID-controlled DC servo tracking a square wave (sensor and
//! controller at 10 ms) and a 4-state linear plant driven by a sine. The time
//! series streams through [`Recorder`]; the peak resident set size must not
//! depend on the run length.
//!
//! ```text
//! cargo run --release -p controlsim --example long_run -- [OUT.csv] [SECONDS]
//! ```
//!
//! Without `OUT.csv` (or with `-`) the rows go to a byte counter instead of a
//! file. Prints
//! one `key=value` line, including `peak_rss_kb` read from `/proc/self/status`
//! (`VmHWM`, the same figure as `/usr/bin/time -v`'s "Maximum resident set
//! size").

use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::Instant;

use controlsim::{ClosedLoop, Delays, Recorder, Response, System, SystemConfig};

const SCENARIO: &str = r#"
step = "1ms"
solver = "rk4"

[[loops]]
name = "servo"
[loops.plant]
kind = "dc_servo"
[loops.sensor]
period = "10ms"
noise_std = 0.0005
[loops.actuator]
min = -12.0
max = 12.0
[loops.controller]
kind = "pid"
kp = 20.0
ki = 10.0
kd = 1.0
u_min = -12.0
u_max = 12.0
[loops.reference]
kind = "square"
period = "20s"
low = -1.0
high = 1.0

[[loops]]
name = "four"
[loops.plant]
kind = "state_space"
a = [[0.0, 1.0, 0.0, 0.0], [-2.0, -0.6, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.5, 0.0, -10.0, -2.4]]
b = [[0.0], [1.0], [0.0], [0.5]]
c = [[1.0, 0.0, 0.0, 0.0]]
[loops.sensor]
period = "10ms"
[loops.controller]
kind = "open_loop"
[loops.reference]
kind = "sine"
amplitude = 1.0
frequency = 0.1
"#;

/// Counts bytes instead of storing them.
struct Counter(u64);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Peak resident set size in kB (`VmHWM`), if the kernel reports it.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn run<W: Write>(out: W, steps: u64) -> Result<(u64, W), Box<dyn std::error::Error>> {
    let cfg: SystemConfig = toml::from_str(SCENARIO)?;
    let system = System::from_config(&cfg, 1)?;
    let mut recorder = Recorder::new(&system, out, std::num::NonZeroU64::MIN)?;
    let mut cl = ClosedLoop::new(system, Delays::default(), Response::Direct);
    cl.run_to(steps, &mut recorder)?;
    let rows = recorder.rows() + 1;
    let out = recorder.finish(cl.system())?;
    Ok((rows, out))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seconds: u64 = match args.get(1) {
        Some(s) => s.parse()?,
        None => 3600,
    };
    let steps = seconds * 1000;
    let start = Instant::now();
    let (rows, bytes) = match args.first().filter(|p| !p.is_empty() && *p != "-") {
        Some(path) => {
            let (rows, mut w) = run(BufWriter::new(File::create(path)?), steps)?;
            w.flush()?;
            (rows, std::fs::metadata(path)?.len())
        }
        None => {
            let (rows, c) = run(Counter(0), steps)?;
            (rows, c.0)
        }
    };
    let wall = start.elapsed().as_secs_f64();
    let rss = peak_rss_kb().map_or_else(|| "unknown".to_string(), |kb| kb.to_string());
    println!(
        "long_run_simulated_s={seconds} steps={steps} rows={rows} csv_bytes={bytes} wall_s={wall:.1} peak_rss_kb={rss}"
    );
    Ok(())
}
