//! Platoon metrics: the spacing error of every CACC follower and the string
//! stability of the platoon.
//!
//! A follower's spacing error is its true gap minus the gap its spacing
//! policy asks for, `e = (p_pred − length_pred − p) − (standstill + h v)`,
//! from the plants' states (not the radar's noisy view). String stability
//! compares each follower with the follower in front of it: the ratio of
//! their peak |e| and of their L2 norms ‖e‖₂ = sqrt(∫e² dt). Ratios at or
//! below one down the string mean disturbances do not grow.

use controlsim::LoopView;
use serde::Serialize;

use super::loops::cacc_policy;
use crate::config::Resolved;

/// One follower to watch.
#[derive(Clone, Debug)]
struct Follower {
    loop_index: usize,
    predecessor: usize,
    standstill: f64,
    time_gap: f64,
    /// Index in the followers of the predecessor, when it is a follower.
    ahead: Option<usize>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Spacing {
    square: f64,
    peak: f64,
    time: f64,
}

/// Accumulates the spacing errors of a run's CACC followers.
#[derive(Clone, Debug)]
pub struct PlatoonMetrics {
    followers: Vec<Follower>,
    spacing: Vec<Spacing>,
}

/// One follower's figures (summary.json `platoon.followers`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FollowerSummary {
    #[serde(rename = "loop")]
    pub loop_name: String,
    pub predecessor: String,
    /// sqrt(∫e² dt / T), m.
    pub spacing_error_rms_m: f64,
    /// max |e|, m.
    pub spacing_error_max_m: f64,
    /// ‖e‖₂ = sqrt(∫e² dt), m √s.
    pub spacing_error_l2: f64,
    /// max |e| over the predecessor's; `None` when the predecessor is not a
    /// follower (the leader) or its peak is zero.
    pub peak_ratio: Option<f64>,
    /// ‖e‖₂ over the predecessor's, likewise.
    pub l2_ratio: Option<f64>,
}

/// summary.json `platoon`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlatoonSummary {
    pub followers: Vec<FollowerSummary>,
    /// The largest `peak_ratio` down the string.
    pub worst_peak_ratio: Option<f64>,
    /// The largest `l2_ratio` down the string.
    pub worst_l2_ratio: Option<f64>,
    /// Every ratio at most one; `None` without a pair of followers.
    pub string_stable: Option<bool>,
}

impl PlatoonMetrics {
    /// The CACC followers of `resolved` (none: no platoon metrics).
    pub fn new<V: LoopView + ?Sized>(resolved: &Resolved, loops: &V) -> Option<Self> {
        let mut followers: Vec<Follower> = Vec::new();
        for (i, scenario) in (0..loops.loop_count()).zip(&resolved.scenario.loops) {
            let (Some((standstill, time_gap)), Some(predecessor)) =
                (cacc_policy(&scenario.controller), loops.predecessor(i))
            else {
                continue;
            };
            followers.push(Follower {
                loop_index: i,
                predecessor,
                standstill,
                time_gap,
                ahead: None,
            });
        }
        if followers.is_empty() {
            return None;
        }
        let indices: Vec<usize> = followers.iter().map(|f| f.loop_index).collect();
        for f in &mut followers {
            f.ahead = indices.iter().position(|&i| i == f.predecessor);
        }
        Some(PlatoonMetrics {
            spacing: vec![Spacing::default(); followers.len()],
            followers,
        })
    }

    /// Adds the step `[t, t + h)` with the loops at its start.
    pub fn add<V: LoopView + ?Sized>(&mut self, h: f64, loops: &V) {
        for (f, s) in self.followers.iter().zip(&mut self.spacing) {
            let (Some(me), Some(ahead)) = (
                loops.kinematics(f.loop_index),
                loops.kinematics(f.predecessor),
            ) else {
                continue;
            };
            let gap = ahead.position - ahead.length - me.position;
            let e = gap - (f.standstill + f.time_gap * me.velocity);
            s.square += e * e * h;
            if e.abs() > s.peak || e.is_nan() {
                s.peak = e.abs();
            }
            s.time += h;
        }
    }

    pub fn finish<V: LoopView + ?Sized>(&self, loops: &V) -> PlatoonSummary {
        let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
        let l2 = |s: &Spacing| s.square.sqrt();
        let followers: Vec<FollowerSummary> = self
            .followers
            .iter()
            .zip(&self.spacing)
            .map(|(f, s)| {
                let ahead = f.ahead.map(|a| &self.spacing[a]);
                FollowerSummary {
                    loop_name: loops.loop_name(f.loop_index).to_string(),
                    predecessor: loops.loop_name(f.predecessor).to_string(),
                    spacing_error_rms_m: if s.time > 0.0 {
                        (s.square / s.time).sqrt()
                    } else {
                        0.0
                    },
                    spacing_error_max_m: s.peak,
                    spacing_error_l2: l2(s),
                    peak_ratio: ahead.and_then(|a| ratio(s.peak, a.peak)),
                    l2_ratio: ahead.and_then(|a| ratio(l2(s), l2(a))),
                }
            })
            .collect();
        let worst = |pick: fn(&FollowerSummary) -> Option<f64>| {
            followers.iter().filter_map(pick).reduce(f64::max)
        };
        let worst_peak_ratio = worst(|f| f.peak_ratio);
        let worst_l2_ratio = worst(|f| f.l2_ratio);
        let string_stable = match (worst_peak_ratio, worst_l2_ratio) {
            (None, None) => None,
            (p, l) => Some(p.unwrap_or(0.0) <= 1.0 && l.unwrap_or(0.0) <= 1.0),
        };
        PlatoonSummary {
            followers,
            worst_peak_ratio,
            worst_l2_ratio,
            string_stable,
        }
    }
}
