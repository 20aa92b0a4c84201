//! Figures of merit for a run: control performance per loop and delay
//! statistics per flow, as written to `summary.json`.

use std::collections::BTreeMap;

use serde::Serialize;

// Age of information and delay statistics are the ledger's, in the
// co-simulation core (bridge/cosim).
pub use netloop_cosim::aoi;
pub use netloop_cosim::delay_stats::DelayStats;
pub mod loops;
pub mod platoon;

/// Integral error measures and step-response figures of one loop output,
/// accumulated step by step (rectangle rule over the solver step, with the
/// value at the start of each step), so memory is constant in run length.
///
/// Overshoot and settling time are measured from the step: the last change
/// of the reference (the start of the first solver step with its final
/// value `r_end`; time zero when it never changes), with the output `y_s`
/// at that step. Overshoot is the largest excursion since the step beyond
/// `r_end` in the direction of the step, in percent of `|r_end - y_s|`.
/// Settling time runs from the step to the end of the last step at which
/// `|y - r_end|` exceeded `settling_band` (default 2%) of `|r_end - y_s|`.
/// Both are `None` when the reference does not move the output
/// (`r_end == y_s`), and for an accumulator made [`with_step`]`(_, false)`
/// (a reference that is not a step, or a set point). An output still
/// outside the band at the end of the run (or a reference still changing
/// then) has not settled: `settled` is `false` and the settling time
/// `None`, not the run's length.
///
/// [`with_step`]: ControlMetricsAccumulator::with_step
#[derive(Clone, Debug)]
pub struct ControlMetricsAccumulator {
    iae: f64,
    ise: f64,
    itae: f64,
    /// Largest |r - y| (NaN once the error was NaN).
    peak: f64,
    /// Whether overshoot and settling are reported at all.
    step: bool,
    /// The output at the last reference change (at the start without one).
    y_step: Option<f64>,
    /// Extremes of the output since the last reference change.
    max_y: f64,
    min_y: f64,
    /// Reference in force at the last step; a change restarts settling.
    r: Option<f64>,
    /// Start of the first step with the reference in force now.
    step_time: f64,
    /// End of the last step at which y was outside the settling band.
    last_outside: f64,
    /// Whether the last step added was outside the band.
    outside_at_end: bool,
    settling_band: f64,
}

/// A metric that is not a number JSON can hold: an integral that overflowed
/// (`inf`), or one that met a NaN output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum NonFinite {
    #[serde(rename = "inf")]
    Infinite,
    #[serde(rename = "-inf")]
    NegativeInfinite,
    #[serde(rename = "nan")]
    NaN,
}

impl NonFinite {
    /// `None` for a finite value.
    pub fn of(x: f64) -> Option<NonFinite> {
        if x.is_nan() {
            Some(NonFinite::NaN)
        } else if x == f64::INFINITY {
            Some(NonFinite::Infinite)
        } else if x == f64::NEG_INFINITY {
            Some(NonFinite::NegativeInfinite)
        } else {
            None
        }
    }
}

/// What [`ControlMetricsAccumulator::finish`] reports.
///
/// JSON has no infinity or NaN: such a metric is written as `null` and
/// named in `non_finite` with its value, so that it is seen, not dropped.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ControlMetrics {
    pub iae: f64,
    pub ise: f64,
    pub itae: f64,
    pub overshoot_percent: Option<f64>,
    /// From the last reference change; `None` when not settled or no step.
    pub settling_time_s: Option<f64>,
    /// Whether the output settled by the end of the run; `None` when the
    /// reference does not move the output.
    pub settled: Option<bool>,
    /// Largest |r - y| over the run.
    pub peak_deviation: f64,
    /// The metrics above that are infinite or NaN, by name.
    pub non_finite: BTreeMap<&'static str, NonFinite>,
}

impl ControlMetrics {
    /// The settling time for people: `settling 0.581s`, `not settled` or
    /// `settling -` (no step).
    pub fn settling_text(&self) -> String {
        match (self.settled, self.settling_time_s) {
            (Some(false), _) => "not settled".into(),
            (_, Some(s)) => format!("settling {s:.3}s"),
            _ => "settling -".into(),
        }
    }
}

/// `x` rounded to the nearest nanosecond: a difference of two step times is
/// then the double nearest the exact one, not `0.5810000000000001`.
fn to_nanosecond(x: f64) -> f64 {
    (x * 1e9).round() / 1e9
}

impl ControlMetricsAccumulator {
    /// An accumulator that reports overshoot and settling (a step reference).
    pub fn new(settling_band: f64) -> Self {
        Self::with_step(settling_band, true)
    }

    /// `step`: whether the reference is a step, so that overshoot and
    /// settling mean something; without one they are `None`.
    pub fn with_step(settling_band: f64, step: bool) -> Self {
        ControlMetricsAccumulator {
            iae: 0.0,
            ise: 0.0,
            itae: 0.0,
            peak: 0.0,
            step,
            y_step: None,
            max_y: f64::NEG_INFINITY,
            min_y: f64::INFINITY,
            r: None,
            step_time: 0.0,
            last_outside: 0.0,
            outside_at_end: false,
            settling_band,
        }
    }

    /// Adds one solver step `[t, t + h)` with output `y` and reference `r` at `t`.
    pub fn add(&mut self, t: f64, h: f64, y: f64, r: f64) {
        let e = r - y;
        self.iae += e.abs() * h;
        self.ise += e * e * h;
        self.itae += t * e.abs() * h;
        if e.abs() > self.peak || e.is_nan() {
            self.peak = e.abs();
        }
        let moved = self.r.is_some_and(|previous| previous != r);
        if moved {
            self.step_time = t;
            self.y_step = Some(y);
            self.max_y = f64::NEG_INFINITY;
            self.min_y = f64::INFINITY;
        }
        let y_step = *self.y_step.get_or_insert(y);
        self.max_y = self.max_y.max(y);
        self.min_y = self.min_y.min(y);
        // Not `>`: a NaN output is outside every band.
        let inside = (y - r).abs() <= self.settling_band * (r - y_step).abs();
        self.outside_at_end = moved || !inside;
        if self.outside_at_end {
            self.last_outside = t + h;
        }
        self.r = Some(r);
    }

    pub fn finish(&self) -> ControlMetrics {
        let (Some(y_step), Some(r_end)) = (self.y_step, self.r) else {
            return ControlMetrics {
                iae: 0.0,
                ise: 0.0,
                itae: 0.0,
                overshoot_percent: None,
                settling_time_s: None,
                settled: None,
                peak_deviation: 0.0,
                non_finite: BTreeMap::new(),
            };
        };
        let size = r_end - y_step;
        let (overshoot_percent, settling_time_s, settled) = if size == 0.0 || !self.step {
            (None, None, None)
        } else {
            let beyond = if size > 0.0 {
                self.max_y - r_end
            } else {
                r_end - self.min_y
            };
            let settled = !self.outside_at_end;
            let settling =
                settled.then(|| to_nanosecond((self.last_outside - self.step_time).max(0.0)));
            (
                Some(100.0 * beyond.max(0.0) / size.abs()),
                settling,
                Some(settled),
            )
        };
        let non_finite = [
            ("iae", Some(self.iae)),
            ("ise", Some(self.ise)),
            ("itae", Some(self.itae)),
            ("overshoot_percent", overshoot_percent),
            ("peak_deviation", Some(self.peak)),
        ]
        .into_iter()
        .filter_map(|(name, x)| Some((name, NonFinite::of(x?)?)))
        .collect();
        ControlMetrics {
            iae: self.iae,
            ise: self.ise,
            itae: self.itae,
            overshoot_percent,
            settling_time_s,
            settled,
            peak_deviation: self.peak,
            non_finite,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// First-order response y = 1 - e^{-t/τ} to a unit step: IAE = ∫e^{-t/τ} = τ,
    /// ISE = τ/2, ITAE = τ², no overshoot, 2% settling at τ ln 50.
    #[test]
    fn first_order_step_response_has_its_analytic_figures() {
        let tau = 0.5;
        let h = 1e-5;
        let mut m = ControlMetricsAccumulator::new(0.02);
        let steps = (10.0 / h) as usize;
        for k in 0..steps {
            let t = k as f64 * h;
            m.add(t, h, 1.0 - (-t / tau).exp(), 1.0);
        }
        let f = m.finish();
        assert!((f.iae - tau).abs() < 1e-4, "{f:?}");
        assert!((f.ise - tau / 2.0).abs() < 1e-4, "{f:?}");
        assert!((f.itae - tau * tau).abs() < 1e-4, "{f:?}");
        assert_eq!(f.overshoot_percent, Some(0.0));
        assert!(
            (f.settling_time_s.unwrap() - tau * 50f64.ln()).abs() < 2.0 * h,
            "{f:?}"
        );
    }

    /// Underdamped second order, ζ = 0.2, ω = 1: overshoot e^{-πζ/√(1-ζ²)} = 52.66%.
    #[test]
    fn second_order_overshoot() {
        let (zeta, wn) = (0.2f64, 1.0f64);
        let wd = wn * (1.0 - zeta * zeta).sqrt();
        let h = 1e-4;
        let mut m = ControlMetricsAccumulator::new(0.02);
        for k in 0..(60.0 / h) as usize {
            let t = k as f64 * h;
            let y =
                1.0 - (-zeta * wn * t).exp() * ((wd * t).cos() + zeta * wn / wd * (wd * t).sin());
            m.add(t, h, y, 1.0);
        }
        let expected = 100.0 * (-std::f64::consts::PI * zeta / (1.0 - zeta * zeta).sqrt()).exp();
        let got = m.finish().overshoot_percent.unwrap();
        assert!((got - expected).abs() < 1e-3, "{got} vs {expected}");
    }

    #[test]
    fn no_step_means_no_overshoot_or_settling() {
        let mut m = ControlMetricsAccumulator::new(0.02);
        m.add(0.0, 0.1, 0.0, 0.0);
        m.add(0.1, 0.1, 0.5, 0.0);
        let f = m.finish();
        assert_eq!(
            (f.overshoot_percent, f.settling_time_s, f.settled),
            (None, None, None)
        );
        assert!((f.iae - 0.05).abs() < 1e-12);
    }

    /// The same first-order response to a unit step at t_s = 0.3 s, sampled
    /// every h = 1 ms at t = k h: the error e^{-(t - t_s)/τ} is outside the
    /// 2% band while t - t_s < τ ln 50 = 1.95601 s, so the last sample
    /// outside is at t_s + 1.956 and the step it starts ends 1.957 s after
    /// the step: settling is measured from the step, not from t = 0.
    #[test]
    fn settling_is_measured_from_the_reference_step() {
        let (tau, t_step, h) = (0.5, 0.3, 1e-3);
        let mut m = ControlMetricsAccumulator::new(0.02);
        for k in 0..6000u64 {
            let t = k as f64 / 1000.0; // as the run computes it: nanoseconds / 1e9
            let (y, r) = if k < 300 {
                (0.0, 0.0)
            } else {
                (1.0 - (-(t - t_step) / tau).exp(), 1.0)
            };
            m.add(t, h, y, r);
        }
        let f = m.finish();
        let expected = ((tau * 50f64.ln()) / h).ceil() * h;
        assert_eq!(expected, 1.957);
        assert_eq!(f.settled, Some(true));
        assert_eq!(f.settling_time_s, Some(1.957), "{f:?}");
        assert_eq!(f.settling_text(), "settling 1.957s");
        assert!(f.non_finite.is_empty());
    }

    /// An output that never enters the band, and one that leaves it again
    /// at the end, have not settled: no settling time (not the run's length).
    #[test]
    fn a_loop_that_never_settles_says_so() {
        let mut stuck = ControlMetricsAccumulator::new(0.02);
        let mut leaving = ControlMetricsAccumulator::new(0.02);
        for k in 0..100 {
            let t = k as f64 * 0.01;
            stuck.add(t, 0.01, 0.5, 1.0);
            leaving.add(
                t,
                0.01,
                [0.0, 1.0, 1.1][usize::from(k > 0) + usize::from(k == 99)],
                1.0,
            );
        }
        for f in [stuck.finish(), leaving.finish()] {
            assert_eq!((f.settled, f.settling_time_s), (Some(false), None), "{f:?}");
            assert_eq!(f.settling_text(), "not settled");
        }
        let json = serde_json::to_value(stuck.finish()).unwrap();
        assert_eq!(json["settled"], false);
        assert!(json["settling_time_s"].is_null());
    }

    /// An error of 1e160 squares to infinity: the ISE cannot be a JSON
    /// number, so it is written as null and named in `non_finite`.
    #[test]
    fn an_overflowing_ise_is_kept_visible() {
        let mut m = ControlMetricsAccumulator::new(0.02);
        for k in 0..10 {
            m.add(k as f64 * 0.1, 0.1, 0.0, 1e160);
        }
        let f = m.finish();
        assert_eq!(f.ise, f64::INFINITY);
        assert!((f.iae - 1e160).abs() < 1e145, "{f:?}");
        assert_eq!(f.non_finite, BTreeMap::from([("ise", NonFinite::Infinite)]));
        let json = serde_json::to_value(&f).unwrap();
        assert!(json["ise"].is_null());
        assert_eq!(json["non_finite"], serde_json::json!({"ise": "inf"}));
        let mut nan = ControlMetricsAccumulator::new(0.02);
        nan.add(0.0, 0.1, f64::NAN, 1.0);
        let f = nan.finish();
        assert_eq!(f.non_finite.get("iae"), Some(&NonFinite::NaN));
        assert_eq!(f.settled, Some(false), "a NaN output is outside every band");
    }

    /// A second step, from 0.5 to 1 at t = 1 s, with the output at 0.5
    /// then and peaking at 1.1: the overshoot is 0.1 of the step's size
    /// 0.5, 20% (not 10% of the distance from the initial output 0), and
    /// the settling band is 2% of 0.5. Without a step reference, neither.
    #[test]
    fn overshoot_is_measured_from_the_output_at_the_step() {
        let y = |k: u32| match k {
            0 => 0.0,
            1..100 => 0.5,
            100 => 0.5,
            101 => 1.1,
            102 => 1.0095,
            _ => 1.0,
        };
        let mut step = ControlMetricsAccumulator::new(0.02);
        let mut ramp = ControlMetricsAccumulator::with_step(0.02, false);
        for k in 0..200u32 {
            let r = if k < 100 { 0.5 } else { 1.0 };
            step.add(f64::from(k) / 100.0, 0.01, y(k), r);
            ramp.add(f64::from(k) / 100.0, 0.01, y(k), r);
        }
        let f = step.finish();
        assert!((f.overshoot_percent.unwrap() - 20.0).abs() < 1e-9, "{f:?}");
        // Outside the 0.01 band at k = 101 (0.1 off), inside from k = 102.
        assert_eq!(f.settling_time_s, Some(0.02), "{f:?}");
        assert!((f.peak_deviation - 0.5).abs() < 1e-12);
        let g = ramp.finish();
        assert_eq!(
            (g.overshoot_percent, g.settling_time_s, g.settled),
            (None, None, None)
        );
        assert_eq!(g.iae, f.iae);
    }
}
