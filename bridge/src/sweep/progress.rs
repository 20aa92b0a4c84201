//! The sweep's progress bar and the log lines around it.
//!
//! Only one bar exists at a time; while it is shown, every log line (the
//! sweep's own lines and `tracing` output, through [`write_log`]) is printed
//! with the bar suspended, so lines never get mixed into the bar. When stderr
//! is not a terminal the bar is hidden and lines are printed as they are.

use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// A progress bar over `total` runs, registered for [`write_log`].
pub struct Progress {
    bar: ProgressBar,
    quiet: bool,
}

impl Progress {
    /// Shows a bar on stderr when it is a terminal and `quiet` is off.
    pub fn new(total: u64, quiet: bool) -> Progress {
        let target = if quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} runs  ETA {eta}  {msg}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar.clone());
        Progress { bar, quiet }
    }

    pub fn set_message(&self, message: String) {
        self.bar.set_message(message);
    }

    pub fn inc(&self) {
        self.bar.inc(1);
    }

    /// A line above the bar (or on stderr when there is no bar); nothing
    /// when quiet.
    pub fn line(&self, text: &str) {
        if !self.quiet {
            write_log(format!("{text}\n").as_bytes());
        }
    }

    /// A line that is shown even when quiet (failures).
    pub fn important(&self, text: &str) {
        write_log(format!("{text}\n").as_bytes());
    }

    /// Removes the bar.
    pub fn finish(self) {
        self.bar.finish_and_clear();
        *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if !self.bar.is_finished() {
            self.bar.finish_and_clear();
        }
        let mut active = ACTIVE.lock().unwrap_or_else(|e| e.into_inner());
        if active.as_ref().is_some_and(|b| b.is_finished()) {
            *active = None;
        }
    }
}

/// Registers the bar [`write_log`] suspends (a single run's, see
/// [`crate::run_progress`]), or none.
pub fn set_active(bar: Option<ProgressBar>) {
    *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = bar;
}

/// Writes bytes to stderr, suspending the active progress bar if there is one.
/// The logging set-up of the binary sends `tracing` output here.
pub fn write_log(buf: &[u8]) {
    let bar = ACTIVE.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let write = || {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(buf);
        let _ = err.flush();
    };
    match bar {
        Some(bar) if !bar.is_hidden() => bar.suspend(write),
        _ => write(),
    }
}
