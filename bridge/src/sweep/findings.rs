//! The sweep figures beyond the per-output and per-flow ones: state, effort
//! and cost metrics, platoon metrics and stop conditions (`metrics_of` adds
//! them), and the fraction of runs a stop condition ended per point, with a
//! Wilson score interval (`sweep_summary.csv` rows `<condition>_fraction`).
//!
//! A run that a stop condition ended is a finding, not a failure: it counts
//! in the fractions, and its `stop.time_s` in the mean stop time, but not in
//! the means of the other metrics, which would mix truncated runs with whole
//! ones.

use serde_json::Value;
use statrs::distribution::{ContinuousCDF, Normal};

use super::aggregate::Metrics;

/// The figures of `summary` that [`super::aggregate::metrics_of`] does not
/// name itself: per loop `<loop>.x.<state>.<metric>`,
/// `<loop>.u.<input>.<metric>` and `<loop>.quadratic_cost`; per follower
/// `platoon.<loop>.<metric>` and the platoon's `platoon.<metric>`; and
/// `stop.time_s` for a run that a stop condition ended.
pub fn metrics_of(summary: &Value) -> Metrics {
    let mut out = Vec::new();
    for lp in summary["loops"].as_array().into_iter().flatten() {
        let name = lp["name"].as_str().unwrap_or("loop");
        for (list, key, tag) in [("states", "state", "x"), ("controls", "input", "u")] {
            for entry in lp[list].as_array().into_iter().flatten() {
                let prefix = format!("{name}.{tag}.{}", entry[key].as_str().unwrap_or("?"));
                numbers(entry, &prefix, &[key, "setpoint"], &mut out);
            }
        }
        if let Some(j) = lp.get("quadratic_cost") {
            out.push((
                format!("{name}.quadratic_cost"),
                figure(j, lp, "quadratic_cost"),
            ));
        }
    }
    let platoon = &summary["platoon"];
    for f in platoon["followers"].as_array().into_iter().flatten() {
        let prefix = format!("platoon.{}", f["loop"].as_str().unwrap_or("?"));
        numbers(f, &prefix, &["loop", "predecessor"], &mut out);
    }
    numbers(platoon, "platoon", &["followers"], &mut out);
    if let Some(t) = summary["stop"]["time_s"].as_f64() {
        out.push(("stop.time_s".into(), Some(t)));
    }
    out
}

/// A number of `entry`, or the infinity / NaN its `non_finite` names.
fn figure(v: &Value, entry: &Value, name: &str) -> Option<f64> {
    v.as_f64()
        .or_else(|| match entry["non_finite"][name].as_str()? {
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            _ => Some(f64::NAN),
        })
}

/// The numbers and booleans (as 1 / 0) of an object, named `prefix.key`.
fn numbers(entry: &Value, prefix: &str, skip: &[&str], out: &mut Metrics) {
    let Some(map) = entry.as_object() else { return };
    for (k, v) in map {
        if skip.contains(&k.as_str()) || k == "non_finite" {
            continue;
        }
        let value = match v {
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            Value::Null | Value::Number(_) => figure(v, entry, k),
            _ => continue,
        };
        out.push((format!("{prefix}.{k}"), value));
    }
}

/// The status a run's summary gives: `complete`, `failed`, or the name of
/// the stop condition that ended it (`complete` for summaries from before
/// stop conditions).
pub fn status_of(summary: &Value) -> String {
    summary["status"].as_str().unwrap_or("complete").to_string()
}

/// The names of the stop conditions of a run's scenario, in name order.
pub fn condition_names(summary: &Value) -> Vec<String> {
    match &summary["scenario"]["stop_when"] {
        Value::String(_) => vec![crate::stop::UNSTABLE.to_string()],
        Value::Object(m) => m.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// The 95% Wilson score interval of a proportion of `k` in `n`: it stays
/// inside [0, 1] and is not empty at k = 0 or k = n, where the normal
/// interval collapses to a point.
pub fn wilson95(k: usize, n: usize) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let z = Normal::new(0.0, 1.0)
        .expect("a standard normal")
        .inverse_cdf(0.975);
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2n = z * z / n;
    let centre = (p + z2n / 2.0) / (1.0 + z2n);
    let half = z / (1.0 + z2n) * (p * (1.0 - p) / n + z2n / (4.0 * n)).sqrt();
    // At k = 0 (k = n) the bound is 0 (1) exactly, not a rounding away.
    let low = if k == 0.0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let high = if k == n {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    Some((low, high))
}

/// One `<condition>_fraction` row: `n` runs, `k` of them ended by it.
pub struct Fraction {
    pub metric: String,
    pub n: usize,
    pub k: usize,
}

impl Fraction {
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.k as f64 / self.n as f64)
    }
}

/// The fraction rows of one point from the statuses of its finished runs:
/// one per condition, and `stopped_fraction` (any condition) when there
/// are several.
pub fn fractions(names: &[String], statuses: &[&str]) -> Vec<Fraction> {
    let n = statuses.len();
    let mut rows: Vec<Fraction> = names
        .iter()
        .map(|name| Fraction {
            metric: format!("{name}_fraction"),
            n,
            k: statuses.iter().filter(|s| **s == name.as_str()).count(),
        })
        .collect();
    if names.len() > 1 {
        rows.push(Fraction {
            metric: "stopped_fraction".into(),
            n,
            k: statuses
                .iter()
                .filter(|s| names.iter().any(|name| name == *s))
                .count(),
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known answers: k = 0 of n = 5 gives [0, z²/(n + z²)] = [0, 0.43448];
    /// k = 5 of 5 its mirror; k = 2 of 10: [0.056682, 0.509838] (Wilson
    /// 1927, computed by hand from (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)).
    #[test]
    fn wilson_interval_matches_known_values() {
        let (lo, hi) = wilson95(0, 5).unwrap();
        assert_eq!(lo, 0.0);
        assert!((hi - 0.434_482).abs() < 1e-6, "{hi}");
        let (lo, hi) = wilson95(5, 5).unwrap();
        assert!((lo - 0.565_518).abs() < 1e-6, "{lo}");
        assert!((hi - 1.0).abs() < 1e-12, "{hi}");
        let (lo, hi) = wilson95(2, 10).unwrap();
        assert!((lo - 0.056_682).abs() < 1e-6, "{lo}");
        assert!((hi - 0.509_838).abs() < 1e-6, "{hi}");
        assert_eq!(wilson95(0, 0), None);
    }

    #[test]
    fn fractions_count_each_condition_and_any() {
        let names = vec!["fell".to_string(), "ran_off".to_string()];
        let rows = fractions(&names, &["complete", "fell", "fell", "ran_off"]);
        let got: Vec<(&str, usize, usize)> =
            rows.iter().map(|r| (r.metric.as_str(), r.k, r.n)).collect();
        assert_eq!(
            got,
            [
                ("fell_fraction", 2, 4),
                ("ran_off_fraction", 1, 4),
                ("stopped_fraction", 3, 4)
            ]
        );
        let one = fractions(&["unstable".into()], &["unstable", "complete"]);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].mean(), Some(0.5));
    }

    #[test]
    fn states_controls_cost_platoon_and_stop_are_named() {
        let summary = serde_json::json!({
            "status": "unstable",
            "stop": {"condition": "unstable", "time_s": 1.25},
            "loops": [{"name": "p", "states": [{"state": "theta", "against": "setpoint", "setpoint": 0.0,
                "iae": 1.0, "ise": null, "non_finite": {"ise": "inf"}}],
                "controls": [{"input": "force", "integral_abs": 2.0, "saturated_fraction": null, "non_finite": {}}],
                "quadratic_cost": 3.5}],
            "platoon": {"followers": [{"loop": "f1", "predecessor": "lead", "spacing_error_max_m": 0.5}],
                "worst_peak_ratio": 0.9, "string_stable": true}
        });
        let m = metrics_of(&summary);
        let names: Vec<&str> = m.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "p.x.theta.iae",
                "p.x.theta.ise",
                "p.u.force.integral_abs",
                "p.u.force.saturated_fraction",
                "p.quadratic_cost",
                "platoon.f1.spacing_error_max_m",
                "platoon.string_stable",
                "platoon.worst_peak_ratio",
                "stop.time_s"
            ]
        );
        assert_eq!(m[1].1, Some(f64::INFINITY));
        assert_eq!(m[3].1, None);
        assert_eq!(m[6].1, Some(1.0));
        assert_eq!(status_of(&summary), "unstable");
    }
}
