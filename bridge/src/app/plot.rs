//! `netloop plot`: the figures of a run or sweep directory.

use super::cli::PlotArgs;
use super::Failure;
use crate::plot::{plot_dir, PlotOptions};

pub fn plot(args: PlotArgs, quiet: bool) -> Result<(), Failure> {
    let files = plot_dir(
        &args.dir,
        &PlotOptions {
            x: args.x,
            metrics: args.metrics,
            log_x: args.log_x,
        },
    )
    .map_err(|e| match e {
        crate::plot::PlotError::Input(m) => Failure::BadInput(m),
        other => Failure::Run(other.to_string()),
    })?;
    if !quiet {
        for f in &files {
            println!("{}", f.display());
        }
    }
    Ok(())
}
