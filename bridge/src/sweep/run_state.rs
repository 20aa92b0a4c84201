//! What a run directory says about its run, so that a sweep can be
//! aggregated, resumed or inspected by any process that sees the directory:
//! the supervisor that ran it, a later `--aggregate` or `--status`, or a
//! SLURM job on another node.
//!
//! The supervisor records each run's outcome in `runs/<hash>/outcome.json`
//! when the run ends (`{"status": "failed", "error": "..."}`). Reading a
//! directory back gives, in this order of precedence:
//! 1. `complete`: `summary.json` says complete with the planned hash (what
//!    `--resume` trusts, whatever else is there);
//! 2. the recorded outcome (`failed`, `timeout`, `interrupted`);
//! 3. `incomplete`: the directory exists but holds no outcome: the run is
//!    still going, or its supervisor died with it (a killed node);
//! 4. `pending`: no directory: never started.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::exec::{is_complete, Outcome};
use crate::output::write_atomically;

/// The file in a run directory that records how the run ended.
pub const OUTCOME_FILE: &str = "outcome.json";

/// The on-disk form of an [`Outcome`]: no wall-clock time, so that the same
/// sweep gives the same bytes wherever it ran.
#[derive(Debug, Serialize, Deserialize)]
struct OutcomeRecord {
    status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout_s: Option<f64>,
}

/// Records how a run ended in its directory.
///
/// # Errors
/// The directory cannot be written.
pub fn record(dir: &Path, outcome: &Outcome) -> std::io::Result<()> {
    let record = OutcomeRecord {
        status: outcome.status().to_string(),
        error: match outcome {
            Outcome::Failed { error } => Some(error.clone()),
            _ => None,
        },
        timeout_s: match outcome {
            Outcome::TimedOut { limit } => Some(limit.as_secs_f64()),
            _ => None,
        },
    };
    let mut json = serde_json::to_vec_pretty(&record).expect("an outcome always serialises");
    json.push(b'\n');
    write_atomically(&dir.join(OUTCOME_FILE), &json)
}

/// The state of the run planned with `hash` (or `legacy`, see
/// [`is_complete`]) in `dir`, as an [`Outcome`]:
/// [`Outcome::Skipped`] for a complete run, [`Outcome::Incomplete`] for a
/// directory without an outcome, [`Outcome::NotRun`] for no directory.
pub fn read(dir: &Path, hash: &str, legacy: Option<&str>) -> Outcome {
    if is_complete(dir, hash, legacy) {
        return Outcome::Skipped;
    }
    if let Ok(text) = std::fs::read_to_string(dir.join(OUTCOME_FILE)) {
        if let Ok(r) = serde_json::from_str::<OutcomeRecord>(&text) {
            match r.status.as_str() {
                "failed" => {
                    return Outcome::Failed {
                        error: r.error.unwrap_or_default(),
                    }
                }
                "timeout" => {
                    let limit = r
                        .timeout_s
                        .filter(|s| s.is_finite() && *s >= 0.0)
                        .unwrap_or(0.0);
                    return Outcome::TimedOut {
                        limit: Duration::from_secs_f64(limit),
                    };
                }
                "interrupted" => return Outcome::Interrupted,
                // "complete" without a complete summary: the summary was
                // removed or rewritten since; trust the summary.
                _ => {}
            }
        }
    }
    if dir.is_dir() {
        Outcome::Incomplete
    } else {
        Outcome::NotRun
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_read_back_as_recorded() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("runs/abc");
        assert_eq!(read(&dir, "abc", None), Outcome::NotRun);
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(read(&dir, "abc", None), Outcome::Incomplete);
        for outcome in [
            Outcome::Failed {
                error: "the ns-3 server died\nat 1 s".into(),
            },
            Outcome::TimedOut {
                limit: Duration::from_secs(600),
            },
            Outcome::Interrupted,
        ] {
            record(&dir, &outcome).unwrap();
            assert_eq!(read(&dir, "abc", None), outcome);
        }
        // A complete summary with the planned hash wins over any record.
        std::fs::write(
            dir.join("summary.json"),
            r#"{"complete": true, "config_hash": "abc"}"#,
        )
        .unwrap();
        assert_eq!(read(&dir, "abc", None), Outcome::Skipped);
        assert_eq!(read(&dir, "new", Some("abc")), Outcome::Skipped);
        assert_eq!(read(&dir, "other", None), Outcome::Interrupted);
    }
}
