//! `netloop plot`: the figures of a run or sweep directory.

use std::path::Path;

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

/// `--plot` after a run or a sweep: draws the figures of `dir` and says
/// where they are (`plots: N files in DIR/plots`); a directory that cannot
/// be plotted is a warning, not a failure of the run.
pub(super) fn plot_after(dir: &Path) -> Option<String> {
    match plot_dir(dir, &PlotOptions::default()) {
        Ok(files) => Some(format!(
            "plots: {} files in {}",
            files.len(),
            dir.join("plots").display()
        )),
        Err(e) => {
            eprintln!("warning: no plots: {e}");
            None
        }
    }
}
