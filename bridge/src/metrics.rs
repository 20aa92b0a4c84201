//! Figures of merit for a run: control performance per loop and delay
//! statistics per flow, as written to `summary.json`.

use serde::Serialize;

/// Integral error measures and step-response figures of one loop output,
/// accumulated step by step (rectangle rule over the solver step, with the
/// value at the start of each step), so memory is constant in run length.
///
/// Overshoot and settling time are taken against the final reference value
/// `r_end` and the initial output `y0`: overshoot is the largest excursion
/// beyond `r_end` in the direction of the step, in percent of `|r_end - y0|`;
/// settling time is the end of the last step at which `|y - r_end|` exceeded
/// `settling_band` (default 2%) of `|r_end - y0|`. Both are `None` when the
/// reference does not move the output (`r_end == y0`).
#[derive(Clone, Debug)]
pub struct ControlMetricsAccumulator {
    iae: f64,
    ise: f64,
    itae: f64,
    y0: Option<f64>,
    max_y: f64,
    min_y: f64,
    /// Reference in force at the last step; a change restarts settling.
    r: Option<f64>,
    /// End of the last step at which y was outside the settling band.
    last_outside: f64,
    settling_band: f64,
}

/// What [`ControlMetricsAccumulator::finish`] reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ControlMetrics {
    pub iae: f64,
    pub ise: f64,
    pub itae: f64,
    pub overshoot_percent: Option<f64>,
    pub settling_time_s: Option<f64>,
}

impl ControlMetricsAccumulator {
    pub fn new(settling_band: f64) -> Self {
        ControlMetricsAccumulator {
            iae: 0.0,
            ise: 0.0,
            itae: 0.0,
            y0: None,
            max_y: f64::NEG_INFINITY,
            min_y: f64::INFINITY,
            r: None,
            last_outside: 0.0,
            settling_band,
        }
    }

    /// Adds one solver step `[t, t + h)` with output `y` and reference `r` at `t`.
    pub fn add(&mut self, t: f64, h: f64, y: f64, r: f64) {
        let e = r - y;
        self.iae += e.abs() * h;
        self.ise += e * e * h;
        self.itae += t * e.abs() * h;
        let y0 = *self.y0.get_or_insert(y);
        self.max_y = self.max_y.max(y);
        self.min_y = self.min_y.min(y);
        let moved = self.r.is_some_and(|previous| previous != r);
        let outside = (y - r).abs() > self.settling_band * (r - y0).abs();
        if moved || outside {
            self.last_outside = t + h;
        }
        self.r = Some(r);
    }

    pub fn finish(&self) -> ControlMetrics {
        let (Some(y0), Some(r_end)) = (self.y0, self.r) else {
            return ControlMetrics { iae: 0.0, ise: 0.0, itae: 0.0, overshoot_percent: None, settling_time_s: None };
        };
        let size = r_end - y0;
        let (overshoot_percent, settling_time_s) = if size == 0.0 {
            (None, None)
        } else {
            let beyond = if size > 0.0 { self.max_y - r_end } else { r_end - self.min_y };
            (Some(100.0 * beyond.max(0.0) / size.abs()), Some(self.last_outside))
        };
        ControlMetrics { iae: self.iae, ise: self.ise, itae: self.itae, overshoot_percent, settling_time_s }
    }
}

/// Delay statistics of one flow, in seconds; percentiles by nearest rank.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DelayStats {
    pub count: usize,
    pub mean_s: Option<f64>,
    pub p50_s: Option<f64>,
    pub p95_s: Option<f64>,
    pub p99_s: Option<f64>,
    pub max_s: Option<f64>,
}

impl DelayStats {
    /// From delays in nanoseconds, in any order.
    pub fn from_nanos(mut delays: Vec<u64>) -> Self {
        delays.sort_unstable();
        let n = delays.len();
        let secs = |ns: u64| ns as f64 / 1e9;
        let rank = |p: f64| {
            // Nearest rank: the smallest value with at least p% of the data at or below it.
            let k = ((p / 100.0) * n as f64).ceil() as usize;
            secs(delays[k.clamp(1, n) - 1])
        };
        if n == 0 {
            return DelayStats { count: 0, mean_s: None, p50_s: None, p95_s: None, p99_s: None, max_s: None };
        }
        let sum: u128 = delays.iter().map(|&d| d as u128).sum();
        DelayStats {
            count: n,
            mean_s: Some(sum as f64 / n as f64 / 1e9),
            p50_s: Some(rank(50.0)),
            p95_s: Some(rank(95.0)),
            p99_s: Some(rank(99.0)),
            max_s: Some(secs(delays[n - 1])),
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
        assert!((f.settling_time_s.unwrap() - tau * 50f64.ln()).abs() < 2.0 * h, "{f:?}");
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
            let y = 1.0 - (-zeta * wn * t).exp() * ((wd * t).cos() + zeta * wn / wd * (wd * t).sin());
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
        assert_eq!((f.overshoot_percent, f.settling_time_s), (None, None));
        assert!((f.iae - 0.05).abs() < 1e-12);
    }

    #[test]
    fn delay_percentiles_by_nearest_rank() {
        let s = DelayStats::from_nanos((1..=100).rev().map(|x| x * 1_000_000).collect());
        assert_eq!(s.count, 100);
        assert_eq!(s.p50_s, Some(0.050));
        assert_eq!(s.p95_s, Some(0.095));
        assert_eq!(s.p99_s, Some(0.099));
        assert_eq!(s.max_s, Some(0.100));
        assert!((s.mean_s.unwrap() - 0.0505).abs() < 1e-12);
        assert_eq!(DelayStats::from_nanos(vec![]).mean_s, None);
        assert_eq!(DelayStats::from_nanos(vec![7]).p99_s, Some(7e-9));
    }
}
