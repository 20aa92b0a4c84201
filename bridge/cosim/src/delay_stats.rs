//! A flow's delay statistics (summary.json `flows[].delay`), from the
//! delays the ledger kept.

use serde::Serialize;

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
            return DelayStats {
                count: 0,
                mean_s: None,
                p50_s: None,
                p95_s: None,
                p99_s: None,
                max_s: None,
            };
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
