//! The progress bar of a single `netloop run`: simulated time reached, the
//! rate of simulated to wall-clock time, and the time left.
//!
//! Shown only on a terminal: not with `-q`, not when stderr is a file or a
//! pipe (a sweep's runs write their stderr to `netloop.log`, so they never
//! draw one). Log lines are printed above it, as the sweep's bar does
//! ([`crate::sweep::progress::write_log`]).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use protocol::SimTime;

/// Redraws per run at most: the observer calls [`RunProgress::at`] every
/// step, and most calls only compare two integers.
const UPDATES: u64 = 1000;

/// A bar over the simulated duration of a run.
#[derive(Debug)]
pub struct RunProgress {
    bar: ProgressBar,
    total: SimTime,
    /// Simulated time of the next update of the bar.
    next: u64,
}

impl RunProgress {
    /// A bar for a run of `duration`, or `None` when quiet or stderr is not
    /// a terminal.
    pub fn for_terminal(duration: SimTime, quiet: bool) -> Option<RunProgress> {
        (!quiet && std::io::stderr().is_terminal())
            .then(|| RunProgress::new(duration, ProgressDrawTarget::stderr()))
    }

    /// A bar drawing to `target` (hidden in tests).
    pub fn new(duration: SimTime, target: ProgressDrawTarget) -> RunProgress {
        let bar = ProgressBar::with_draw_target(Some(duration.0.max(1)), target);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {msg}  ETA {eta}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        crate::sweep::progress::set_active(Some(bar.clone()));
        RunProgress {
            bar,
            total: duration,
            next: 0,
        }
    }

    /// The run has reached simulated time `t`.
    pub fn at(&mut self, t: SimTime) {
        if t.0 < self.next {
            return;
        }
        self.next = t.0 + (self.total.0 / UPDATES).max(1);
        self.bar.set_position(t.0);
        self.bar
            .set_message(message(t, self.total, self.bar.elapsed()));
    }

    /// What the bar shows now.
    pub fn message_now(&self) -> String {
        self.bar.message()
    }

    /// Removes the bar.
    pub fn finish(self) {
        self.bar.finish_and_clear();
        crate::sweep::progress::set_active(None);
    }
}

impl Drop for RunProgress {
    fn drop(&mut self) {
        if !self.bar.is_finished() {
            self.bar.finish_and_clear();
            crate::sweep::progress::set_active(None);
        }
    }
}

/// `1.250 s / 10 s simulated, 3.2x real time`.
pub fn message(t: SimTime, total: SimTime, wall: Duration) -> String {
    let simulated = t.as_secs_f64();
    let rate = if wall.as_secs_f64() > 0.0 {
        format!(", {:.3}x real time", simulated / wall.as_secs_f64())
    } else {
        String::new()
    };
    format!("{simulated:.3} s / {} simulated{rate}", total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_gives_simulated_time_and_rate() {
        assert_eq!(
            message(
                SimTime::from_millis(1250),
                SimTime::from_secs(10),
                Duration::from_millis(500)
            ),
            "1.250 s / 10s simulated, 2.500x real time"
        );
        assert_eq!(
            message(SimTime::ZERO, SimTime::from_secs(10), Duration::ZERO),
            "0.000 s / 10s simulated"
        );
    }

    #[test]
    fn the_bar_follows_simulated_time_in_steps() {
        let mut p = RunProgress::new(SimTime::from_secs(1), ProgressDrawTarget::hidden());
        p.at(SimTime::from_millis(500));
        assert_eq!(p.bar.position(), 500_000_000);
        // Within a thousandth of the run: not redrawn.
        p.at(SimTime(500_000_001));
        assert_eq!(p.bar.position(), 500_000_000);
        p.at(SimTime::from_secs(1));
        assert_eq!(p.bar.position(), 1_000_000_000);
        assert!(
            p.message_now().starts_with("1.000 s / 1s simulated"),
            "{}",
            p.message_now()
        );
        p.finish();
    }
}
