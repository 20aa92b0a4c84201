//! The sync scheme of a run with each scheme's own parameters, made once
//! when the application resolves a scenario's `[sync]` table (bridge's
//! `config::resolve_sync`; the table stays the scenario's written and
//! hashed form). A scheme that needs a period has one by construction, so
//! the session never asks "is there a period?" at run time.

use std::num::NonZeroU64;

use crate::resolved::SchemeKind;

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
