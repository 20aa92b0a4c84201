//! Age of information at a flow's receiver: Δ(t) = t − (send time of the
//! freshest sample the receiver has accepted by t).
//!
//! Δ is a saw-tooth: it drops to a packet's delay when a fresher sample is
//! accepted and grows at rate one in between. It is defined from the first
//! accepted packet to the end of the run, and its statistics are over that
//! time, exactly (no sampling): the mean is ∫Δ dt over the time, the p99 the
//! age that Δ exceeds for 1% of the time, the max the highest peak.

use serde::Serialize;

/// Age-of-information statistics of one flow, in seconds (summary.json
/// `flows[].aoi`); all `None` when nothing was accepted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgeStats {
    pub mean_s: Option<f64>,
    pub p99_s: Option<f64>,
    pub max_s: Option<f64>,
}

/// One rising stretch of the saw-tooth: age `from` up to age `to`.
#[derive(Clone, Copy, Debug)]
struct Ramp {
    from: f64,
    to: f64,
}

impl AgeStats {
    /// From the accepted packets as `(received_ns, sent_ns)`, in any order,
    /// over the run up to `end_ns`.
    pub fn from_updates(mut updates: Vec<(u64, u64)>, end_ns: u64) -> AgeStats {
        updates.sort_unstable();
        let mut ramps: Vec<Ramp> = Vec::with_capacity(updates.len());
        // The freshest send time accepted so far, and the time it took effect.
        let mut fresh: Option<(u64, u64)> = None;
        for &(received, sent) in updates.iter().filter(|(r, _)| *r <= end_ns) {
            match fresh {
                None => fresh = Some((received, sent)),
                Some((since, freshest)) if sent > freshest => {
                    ramps.push(Ramp {
                        from: (since - freshest) as f64 / 1e9,
                        to: (received - freshest) as f64 / 1e9,
                    });
                    fresh = Some((received, sent));
                }
                // An older sample than the one held brings nothing new.
                Some(_) => {}
            }
        }
        let Some((since, freshest)) = fresh else {
            return AgeStats {
                mean_s: None,
                p99_s: None,
                max_s: None,
            };
        };
        ramps.push(Ramp {
            from: (since - freshest) as f64 / 1e9,
            to: (end_ns - freshest) as f64 / 1e9,
        });
        let total: f64 = ramps.iter().map(|r| r.to - r.from).sum();
        let max = ramps.iter().map(|r| r.to).fold(0.0, f64::max);
        if total <= 0.0 {
            // Accepted at the very end: one instant, at its delay.
            return AgeStats {
                mean_s: Some(max),
                p99_s: Some(max),
                max_s: Some(max),
            };
        }
        let area: f64 = ramps
            .iter()
            .map(|r| (r.to * r.to - r.from * r.from) / 2.0)
            .sum();
        // Time with Δ above a: decreasing in a; bisect for 1% of the total.
        let above = |a: f64| -> f64 { ramps.iter().map(|r| (r.to - r.from.max(a)).max(0.0)).sum() };
        let (mut lo, mut hi) = (0.0, max);
        for _ in 0..100 {
            let mid = (lo + hi) / 2.0;
            if above(mid) > 0.01 * total {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        AgeStats {
            mean_s: Some(area / total),
            p99_s: Some(hi),
            max_s: Some(max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Samples sent every 10 ms from t = 0, each arriving 2 ms later, until
    /// t = 100 ms: Δ ramps from 2 to 12 ms in each of ten periods (the last
    /// from 92 ms to the end at 100 ms, from 2 to 10 ms). Mean over the
    /// 98 ms: (9 · 70 + 48) / 98 = 6.918 ms; max 12 ms; Δ > a for
    /// 9 (12 − a) ms when a ≥ 10 ms, so 1% (0.98 ms) at a = 11.8911 ms.
    #[test]
    fn periodic_updates_have_the_saw_tooth_figures() {
        let updates: Vec<(u64, u64)> = (0..10)
            .map(|k| (k * 10 * MS + 2 * MS, k * 10 * MS))
            .collect();
        let s = AgeStats::from_updates(updates, 100 * MS);
        let mean = (9.0 * (12.0f64.powi(2) - 4.0) / 2.0 + (100.0 - 4.0) / 2.0) / 98.0 / 1e3;
        assert!((s.mean_s.unwrap() - mean).abs() < 1e-12, "{s:?}");
        assert!((mean - 0.006_918_367).abs() < 1e-9);
        assert_eq!(s.max_s, Some(0.012));
        let p99 = 0.012 - 0.00098 / 9.0;
        assert!((s.p99_s.unwrap() - p99).abs() < 1e-12, "{s:?} vs {p99}");
    }

    /// A reordered older sample does not lower the age; nothing accepted
    /// means no figures.
    #[test]
    fn stale_samples_do_not_refresh() {
        let fresh = AgeStats::from_updates(vec![(2 * MS, 0), (12 * MS, 10 * MS)], 20 * MS);
        let with_stale = AgeStats::from_updates(
            vec![(2 * MS, 0), (12 * MS, 10 * MS), (15 * MS, 5 * MS)],
            20 * MS,
        );
        assert_eq!(fresh, with_stale);
        assert_eq!(fresh.max_s, Some(0.012));
        assert_eq!(AgeStats::from_updates(vec![], 20 * MS).mean_s, None);
    }
}
