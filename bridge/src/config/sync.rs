//! `[sync]` resolved into netloop-cosim's [`SyncScheme`]: the scheme with
//! its parameters in steps, or the key of what is missing or off the grid.

use controlsim::StepSize;
use netloop_cosim::sync_scheme::{EventDriven, MasterSlave, SyncScheme, TimeStepping};

use super::{ScenarioError, SchemeKind, SyncConfig};

/// The scheme a scenario's `[sync]` table asks for on the grid of `step`:
/// resolving it is the application's, the scheme the co-simulation core's.
///
/// # Errors
/// `sync.period` missing for a scheme that needs it, or not a positive
/// multiple of the step.
pub fn resolve_sync(sync: &SyncConfig, step: StepSize) -> Result<SyncScheme, ScenarioError> {
    let period = match sync.period {
        None => None,
        Some(period) => Some(
            step.period_steps(period)
                .map_err(|e| ScenarioError::new("sync.period", e.to_string()))?,
        ),
    };
    let required = || {
        ScenarioError::new(
            "sync.period",
            format!("required by the {} scheme", sync.scheme),
        )
    };
    Ok(match sync.scheme {
        SchemeKind::TimeStepping => SyncScheme::TimeStepping(TimeStepping {
            period: period.ok_or_else(required)?,
        }),
        SchemeKind::MasterSlave => SyncScheme::MasterSlave(MasterSlave {
            period: period.ok_or_else(required)?,
            lookahead: sync.lookahead,
            position_tolerance: sync.position_tolerance.0,
        }),
        SchemeKind::EventDriven => SyncScheme::EventDriven(EventDriven {
            bound: period,
            rules: sync.rules,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::SimTime;
    use std::num::NonZeroU64;

    fn sync(toml: &str) -> SyncConfig {
        toml::from_str(toml).unwrap()
    }

    fn step() -> StepSize {
        StepSize::new(SimTime::from_millis(1)).unwrap()
    }

    fn steps(n: u64) -> NonZeroU64 {
        NonZeroU64::new(n).unwrap()
    }

    #[test]
    fn each_scheme_gets_its_own_parameters_in_steps() {
        assert_eq!(
            resolve_sync(
                &sync("scheme = \"time_stepping\"\nperiod = \"10ms\""),
                step()
            ),
            Ok(SyncScheme::TimeStepping(TimeStepping { period: steps(10) }))
        );
        assert_eq!(
            resolve_sync(
                &sync(
                    "scheme = \"master_slave\"\nperiod = \"5ms\"\nlookahead = false\n\
                     position_tolerance = 0.25"
                ),
                step()
            ),
            Ok(SyncScheme::MasterSlave(MasterSlave {
                period: steps(5),
                lookahead: false,
                position_tolerance: 0.25,
            }))
        );
        assert_eq!(
            resolve_sync(&sync("scheme = \"event_driven\""), step()),
            Ok(SyncScheme::EventDriven(EventDriven {
                bound: None,
                rules: true
            }))
        );
        let bounded = resolve_sync(
            &sync("scheme = \"event_driven\"\nperiod = \"20ms\"\nrules = false"),
            step(),
        )
        .unwrap();
        assert_eq!(
            bounded,
            SyncScheme::EventDriven(EventDriven {
                bound: Some(steps(20)),
                rules: false
            })
        );
        assert_eq!(bounded.max_steps(), Some(20));
        assert_eq!(bounded.kind(), SchemeKind::EventDriven);
    }

    #[test]
    fn a_scheme_that_needs_a_period_cannot_be_made_without_one() {
        for scheme in ["time_stepping", "master_slave"] {
            let e = resolve_sync(&sync(&format!("scheme = \"{scheme}\"")), step()).unwrap_err();
            assert_eq!(e.key.to_string(), "sync.period");
            assert!(e.message.starts_with("required by the"), "{}", e.message);
        }
        let e = resolve_sync(
            &sync("scheme = \"master_slave\"\nperiod = \"1500us\""),
            step(),
        )
        .unwrap_err();
        assert_eq!(e.key.to_string(), "sync.period");
    }
}
