//! The sync scheme of a run with each scheme's own parameters, made once
//! when a scenario is resolved ([`SyncScheme::resolve`]) from its `[sync]`
//! table ([`SyncConfig`], which stays the scenario's written and hashed
//! form). A scheme that needs a period has one by construction, so the
//! session never asks "is there a period?" at run time.

use std::num::NonZeroU64;

use controlsim::StepSize;

use crate::config::{ScenarioError, SchemeKind, SyncConfig};

/// Time-stepping: both simulators run each period side by side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeStepping {
    /// The sync period, in steps.
    pub period: NonZeroU64,
}

/// Master-slave: the network runs each period first, the control side
/// replays it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MasterSlave {
    /// The sync period, in steps.
    pub period: NonZeroU64,
    /// Let the network run several periods ahead when no sync can change
    /// anything (`[sync] lookahead`).
    pub lookahead: bool,
    /// How far a moving node's extrapolated position may drift before a
    /// sync is needed, in metres (`[sync] position_tolerance`; 0: every period).
    pub position_tolerance: f64,
}

/// Event-driven: the network runs to the next packet that acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventDriven {
    /// The most steps between syncs (`[sync] period`), if bounded.
    pub bound: Option<NonZeroU64>,
    /// Announce event-triggered answers to the network as rules (`[sync] rules`).
    pub rules: bool,
}

/// A run's sync scheme and its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SyncScheme {
    TimeStepping(TimeStepping),
    MasterSlave(MasterSlave),
    EventDriven(EventDriven),
}

impl SyncScheme {
    /// The scheme `sync` asks for on the grid of `step`.
    ///
    /// # Errors
    /// `sync.period` missing for a scheme that needs it, or not a positive
    /// multiple of the step.
    pub fn resolve(sync: &SyncConfig, step: StepSize) -> Result<SyncScheme, ScenarioError> {
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

    /// The scheme's name.
    pub fn kind(&self) -> SchemeKind {
        match self {
            SyncScheme::TimeStepping(_) => SchemeKind::TimeStepping,
            SyncScheme::MasterSlave(_) => SchemeKind::MasterSlave,
            SyncScheme::EventDriven(_) => SchemeKind::EventDriven,
        }
    }

    /// The most steps between two syncs: the period, or event-driven's
    /// optional bound.
    pub fn max_steps(&self) -> Option<u64> {
        match self {
            SyncScheme::TimeStepping(t) => Some(t.period.get()),
            SyncScheme::MasterSlave(m) => Some(m.period.get()),
            SyncScheme::EventDriven(e) => e.bound.map(NonZeroU64::get),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::SimTime;

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
            SyncScheme::resolve(
                &sync("scheme = \"time_stepping\"\nperiod = \"10ms\""),
                step()
            ),
            Ok(SyncScheme::TimeStepping(TimeStepping { period: steps(10) }))
        );
        assert_eq!(
            SyncScheme::resolve(
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
            SyncScheme::resolve(&sync("scheme = \"event_driven\""), step()),
            Ok(SyncScheme::EventDriven(EventDriven {
                bound: None,
                rules: true
            }))
        );
        let bounded = SyncScheme::resolve(
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
            let e =
                SyncScheme::resolve(&sync(&format!("scheme = \"{scheme}\"")), step()).unwrap_err();
            assert_eq!(e.key.to_string(), "sync.period");
            assert!(e.message.starts_with("required by the"), "{}", e.message);
        }
        let e = SyncScheme::resolve(
            &sync("scheme = \"master_slave\"\nperiod = \"1500us\""),
            step(),
        )
        .unwrap_err();
        assert_eq!(e.key.to_string(), "sync.period");
    }
}
