//! The step grid: a non-zero integer step `h` in nanoseconds and the step
//! index `k` (docs/design.md §2.2).
//!
//! Every instant the engine cares about is a boundary `k*h`. Step `k` covers
//! `[k*h, (k+1)*h)`. Periods (sensors, controllers, discrete plants) are
//! integer multiples of `h`, checked once at construction, so that "is this
//! sensor due now?" is an integer remainder and never a float comparison.
//! Seconds as `f64` appear only where physics needs them (the right-hand side
//! of an ODE, a controller gain times an elapsed time) and when printing.

use std::num::NonZeroU64;

use crate::SimTime;

/// Why a step size or a period does not fit the step grid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    /// `StepSize::new(0)`.
    #[error("the step size must be at least 1ns, got 0")]
    ZeroStep,
    /// A period or offset that does not land on the step grid.
    #[error("{value} is not an integer multiple of the step {step}")]
    NotAMultiple { value: SimTime, step: SimTime },
    /// A period of zero.
    #[error("a period must be a positive multiple of the step {step}, got 0")]
    ZeroPeriod { step: SimTime },
}

/// The solver step `h`: a non-zero whole number of nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StepSize(NonZeroU64);

impl StepSize {
    /// # Errors
    /// [`TimeError::ZeroStep`] for a zero step.
    pub fn new(h: SimTime) -> Result<Self, TimeError> {
        NonZeroU64::new(h.as_nanos())
            .map(StepSize)
            .ok_or(TimeError::ZeroStep)
    }

    /// The step as a duration.
    pub fn get(self) -> SimTime {
        SimTime(self.0.get())
    }

    pub fn as_nanos(self) -> u64 {
        self.0.get()
    }

    /// The step in seconds, for the ODE right-hand side.
    pub fn as_secs_f64(self) -> f64 {
        self.get().as_secs_f64()
    }

    /// The time of boundary `k`, or `None` when `k*h` overflows `u64` ns
    /// (after 584 years).
    pub fn time_of(self, k: u64) -> Option<SimTime> {
        k.checked_mul(self.0.get()).map(SimTime)
    }

    /// `ceil(t / h)`: the first boundary at or after `t`. This is docs/design.md §2.3's
    /// arrival rule: a value that arrives at `t` takes effect from this step on.
    pub fn step_at_or_after(self, t: SimTime) -> u64 {
        t.as_nanos().div_ceil(self.0.get())
    }

    /// `floor(t / h)`: the index of the step whose interval contains `t`.
    pub fn step_containing(self, t: SimTime) -> u64 {
        t.as_nanos() / self.0.get()
    }

    /// The number of steps in `d`, which must be a whole multiple of `h`
    /// (zero is allowed: an offset of zero steps).
    ///
    /// # Errors
    /// [`TimeError::NotAMultiple`] when `d` is off the grid.
    pub fn steps_in(self, d: SimTime) -> Result<u64, TimeError> {
        let h = self.0.get();
        if d.as_nanos() % h == 0 {
            Ok(d.as_nanos() / h)
        } else {
            Err(TimeError::NotAMultiple {
                value: d,
                step: self.get(),
            })
        }
    }

    /// The number of steps in a period, which must be a positive multiple of `h`.
    ///
    /// # Errors
    /// [`TimeError::ZeroPeriod`] or [`TimeError::NotAMultiple`].
    pub fn period_steps(self, period: SimTime) -> Result<NonZeroU64, TimeError> {
        let n = self.steps_in(period)?;
        NonZeroU64::new(n).ok_or(TimeError::ZeroPeriod { step: self.get() })
    }
}

/// A periodic schedule on the step grid: due at boundaries
/// `phase, phase + period, phase + 2*period, ...` (in steps).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Periodic {
    /// Period in steps.
    pub period: NonZeroU64,
    /// Offset of the first instant, in steps; less than `period`.
    pub phase: u64,
}

impl Periodic {
    /// Whether boundary `k` is one of the schedule's instants.
    pub fn is_due(self, k: u64) -> bool {
        k >= self.phase && (k - self.phase) % self.period.get() == 0
    }

    /// The first instant at or after boundary `k`.
    pub fn next_at_or_after(self, k: u64) -> u64 {
        if k <= self.phase {
            return self.phase;
        }
        let p = self.period.get();
        self.phase + (k - self.phase).div_ceil(p) * p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_step_is_an_error_not_a_panic() {
        assert_eq!(StepSize::new(SimTime::ZERO), Err(TimeError::ZeroStep));
    }

    #[test]
    fn periods_must_divide() {
        let h = StepSize::new(SimTime::from_micros(100)).unwrap();
        assert_eq!(h.period_steps(SimTime::from_millis(10)).unwrap().get(), 100);
        assert_eq!(
            h.period_steps(SimTime::from_micros(150)),
            Err(TimeError::NotAMultiple {
                value: SimTime::from_micros(150),
                step: h.get()
            })
        );
        assert_eq!(
            h.period_steps(SimTime::ZERO),
            Err(TimeError::ZeroPeriod { step: h.get() })
        );
        assert_eq!(h.steps_in(SimTime::ZERO), Ok(0));
    }

    #[test]
    fn arrival_rule_is_ceil() {
        let h = StepSize::new(SimTime::from_millis(1)).unwrap();
        assert_eq!(h.step_at_or_after(SimTime::ZERO), 0);
        assert_eq!(h.step_at_or_after(SimTime(1)), 1);
        assert_eq!(h.step_at_or_after(SimTime::from_millis(3)), 3);
        assert_eq!(h.step_at_or_after(SimTime(3_000_001)), 4);
        assert_eq!(h.step_containing(SimTime(3_999_999)), 3);
        assert_eq!(h.time_of(u64::MAX), None);
        assert_eq!(h.time_of(7), Some(SimTime::from_millis(7)));
    }

    #[test]
    fn periodic_schedule() {
        let s = Periodic {
            period: NonZeroU64::new(4).unwrap(),
            phase: 1,
        };
        let due: Vec<u64> = (0..12).filter(|&k| s.is_due(k)).collect();
        assert_eq!(due, [1, 5, 9]);
        assert_eq!(s.next_at_or_after(0), 1);
        assert_eq!(s.next_at_or_after(2), 5);
        assert_eq!(s.next_at_or_after(5), 5);
    }
}
