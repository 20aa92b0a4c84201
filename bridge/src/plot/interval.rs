//! The confidence interval a sweep figure draws around a mean: the t
//! interval of `sweep_summary.csv` where it stays inside the metric's
//! possible values, else a percentile bootstrap of the runs' values (which
//! cannot leave them), else the t interval clamped at the bound.
//!
//! An IAE cannot be negative nor a delivery ratio above one, but with few
//! runs and a skewed metric the symmetric t interval says they can.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Resamples per bootstrap interval.
pub const BOOTSTRAP_RESAMPLES: usize = 4000;

/// Where the drawn interval comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// The t interval of `sweep_summary.csv` (a Wilson interval for a
    /// fraction), inside the bounds.
    Summary,
    /// A percentile bootstrap of the point's runs.
    Bootstrap,
    /// The t interval cut at the bound (the runs' values were not at hand).
    Clamped,
}

/// The values a metric can take, from its name: `[0, 1]` for ratios of a
/// whole, fractions and yes/no figures; `[0, ∞)` for errors, costs, times,
/// distances, percentages of overshoot and ratios of magnitudes; none known
/// otherwise.
pub fn metric_bounds(metric: &str) -> (Option<f64>, Option<f64>) {
    let last = metric.rsplit('.').next().unwrap_or(metric);
    if last.ends_with("_fraction")
        || last == "delivery_ratio"
        || last == "settled"
        || last == "string_stable"
    {
        return (Some(0.0), Some(1.0));
    }
    let non_negative = matches!(
        last,
        "iae"
            | "ise"
            | "itae"
            | "peak_deviation"
            | "integral_abs"
            | "integral_square"
            | "peak_abs"
            | "quadratic_cost"
            | "spacing_error_l2"
            | "overshoot_percent"
    ) || last.ends_with("_s")
        || last.ends_with("_m")
        || last.ends_with("_ratio");
    (non_negative.then_some(0.0), None)
}

/// The 2.5% and 97.5% quantiles of the means of [`BOOTSTRAP_RESAMPLES`]
/// resamples of `values`; deterministic for a `seed`. `None` for fewer
/// than two values.
pub fn bootstrap_mean_ci95(values: &[f64], seed: u64) -> Option<(f64, f64)> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut means: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| (0..n).map(|_| values[rng.random_range(0..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let quantile = |p: f64| means[(p * (BOOTSTRAP_RESAMPLES - 1) as f64).round() as usize];
    Some((quantile(0.025), quantile(0.975)))
}

/// The interval to draw for a mean whose summary interval is `lo..hi`,
/// given the metric's `bounds` and, when known, the runs' `values`.
pub fn choose(
    (lo, hi): (f64, f64),
    bounds: (Option<f64>, Option<f64>),
    values: Option<&[f64]>,
    seed: u64,
) -> (f64, f64, Method) {
    let below = bounds.0.is_some_and(|b| lo < b);
    let above = bounds.1.is_some_and(|b| hi > b);
    if !below && !above {
        return (lo, hi, Method::Summary);
    }
    if let Some((l, h)) = values.and_then(|v| bootstrap_mean_ci95(v, seed)) {
        return (l, h, Method::Bootstrap);
    }
    (
        bounds.0.map_or(lo, |b| lo.max(b)),
        bounds.1.map_or(hi, |b| hi.min(b)),
        Method::Clamped,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_come_from_the_metric_name() {
        assert_eq!(metric_bounds("servo.theta.iae"), (Some(0.0), None));
        assert_eq!(metric_bounds("servo.uplink.delay.p99_s"), (Some(0.0), None));
        assert_eq!(metric_bounds("delivery_ratio"), (Some(0.0), Some(1.0)));
        assert_eq!(metric_bounds("unstable_fraction"), (Some(0.0), Some(1.0)));
        assert_eq!(metric_bounds("platoon.worst_peak_ratio"), (Some(0.0), None));
        assert_eq!(metric_bounds("servo.x.theta.mean"), (None, None));
    }

    #[test]
    fn the_bootstrap_of_two_values_spans_them() {
        // Resampled means of {0, 10}: 0, 5 or 10 with probabilities 1/4,
        // 1/2, 1/4; the 2.5% and 97.5% quantiles are the ends.
        assert_eq!(bootstrap_mean_ci95(&[0.0, 10.0], 7), Some((0.0, 10.0)));
        assert_eq!(bootstrap_mean_ci95(&[3.0, 3.0, 3.0], 1), Some((3.0, 3.0)));
        assert_eq!(bootstrap_mean_ci95(&[3.0], 1), None);
        assert_eq!(
            bootstrap_mean_ci95(&[1.0, 2.0, 9.0], 5),
            bootstrap_mean_ci95(&[1.0, 2.0, 9.0], 5)
        );
    }

    #[test]
    fn an_interval_crossing_a_bound_is_bootstrapped_or_clamped() {
        let iae = metric_bounds("iae");
        // Inside: kept.
        assert_eq!(
            choose((0.5, 1.5), iae, None, 0),
            (0.5, 1.5, Method::Summary)
        );
        // Below zero, runs at hand: a bootstrap, inside the runs' range.
        let runs = [0.0, 0.0, 0.0, 4.0];
        let (lo, hi, how) = choose((-1.0, 3.0), iae, Some(&runs), 0);
        assert_eq!(how, Method::Bootstrap);
        assert!(
            (0.0..=4.0).contains(&lo) && lo <= hi && hi <= 4.0,
            "{lo} {hi}"
        );
        assert_eq!(lo, 0.0, "a quarter of the resamples are all zeros");
        // No runs: cut at the bound.
        assert_eq!(
            choose((-1.0, 3.0), iae, None, 0),
            (0.0, 3.0, Method::Clamped)
        );
        let ratio = metric_bounds("delivery_ratio");
        assert_eq!(
            choose((0.9, 1.1), ratio, Some(&[1.0]), 0),
            (0.9, 1.0, Method::Clamped)
        );
    }
}
