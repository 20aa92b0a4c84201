//! Benchmark half of `scripts/bench.sh fmu`: a Co-Simulation FMU plant
//! stepped by netloop's engine, N communication steps of 1 ms with the
//! actuator's held value as input, nothing recorded. Its counterpart is
//! tests/fmu/bench_driver.c, which steps the same FMU through the FMI 2.0
//! C API directly.
//!
//! ```text
//! cargo run --release -p controlsim --example fmu_steps -- PLANT.fmu STEPS
//! ```
//!
//! Prints `netloop_fmu_s=<wall seconds of the stepping> steps=<N> p1=<final
//! output> p1_bits=<its IEEE bits in hex>`.

use std::time::Instant;

use controlsim::{System, SystemConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(fmu), Some(steps)) = (args.first(), args.get(1)) else {
        return Err("usage: fmu_steps PLANT.fmu STEPS".into());
    };
    let steps: u64 = steps.parse()?;
    let scenario = format!(
        r#"
step = "1ms"
[[loops]]
name = "chain"
[loops.plant]
kind = "fmu"
path = {fmu:?}
parameters = {{ p1_0 = 1.0, substeps = 10 }}
[loops.sensor]
period = "1ms"
[loops.controller]
kind = "open_loop"
[loops.reference]
kind = "constant"
value = 0.0
"#
    );
    let cfg: SystemConfig = toml::from_str(&scenario)?;
    let mut system = System::from_config(&cfg, 1)?;
    let start = Instant::now();
    system.advance_silent(steps)?;
    let wall = start.elapsed().as_secs_f64();
    let p1 = system.loops()[0].state()[0];
    println!(
        "netloop_fmu_s={wall:.6} steps={steps} p1={p1:e} p1_bits={:016x}",
        p1.to_bits()
    );
    Ok(())
}
