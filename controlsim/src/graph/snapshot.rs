//! Bit-exact snapshot and restore of a whole [`Graph`]: the boundary, every
//! output port's value and freshness, every component's continuous states,
//! guard modes, last event and count of resets, and its internal state as it
//! [`save`](super::Component::save)s it. Inputs are not state: they are
//! gathered from the outputs before every use.
//!
//! Restoring checks every length first (the internal states against a fresh
//! save of each component), so a snapshot of another graph is a
//! [`ShapeMismatch`] and nothing changes.

use super::component::SavedState;
use super::engine::Graph;
use crate::error::ShapeMismatch;
use crate::event::{Event, GuardMode};

/// The complete mutable state of a [`Graph`] at one boundary.
#[derive(Clone, Debug)]
pub struct GraphSnapshot {
    k: u64,
    evaluated: bool,
    values: Vec<f64>,
    fresh: Vec<u64>,
    /// Per component, the boundary it last answered a packet at.
    answered: Vec<u64>,
    components: Vec<ComponentState>,
}

#[derive(Clone, Debug)]
struct ComponentState {
    x: Vec<f64>,
    guard_modes: Vec<GuardMode>,
    last_event: Option<Event>,
    resets: u64,
    internal: SavedState,
}

impl GraphSnapshot {
    /// The boundary it was taken at.
    pub fn k(&self) -> u64 {
        self.k
    }
}

fn bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Bitwise equality, as for [`Snapshot`](crate::Snapshot).
impl PartialEq for GraphSnapshot {
    fn eq(&self, other: &Self) -> bool {
        self.k == other.k
            && self.evaluated == other.evaluated
            && bits(&self.values, &other.values)
            && self.fresh == other.fresh
            && self.answered == other.answered
            && self.components.len() == other.components.len()
            && self.components.iter().zip(&other.components).all(|(a, b)| {
                bits(&a.x, &b.x)
                    && a.guard_modes == b.guard_modes
                    && match (a.last_event, b.last_event) {
                        (None, None) => true,
                        (Some(p), Some(q)) => {
                            p.time.to_bits() == q.time.to_bits()
                                && p.guard == q.guard
                                && p.kind == q.kind
                        }
                        _ => false,
                    }
                    && a.resets == b.resets
                    && a.internal == b.internal
            })
    }
}

impl Graph {
    /// The complete mutable state now.
    pub fn snapshot(&self) -> GraphSnapshot {
        GraphSnapshot {
            k: self.k,
            evaluated: self.evaluated,
            values: self.values.clone(),
            fresh: self.fresh.clone(),
            answered: self.answered.clone(),
            components: self
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let mut internal = SavedState::default();
                    // A lowered sampled block's state is the program's.
                    if !self.program.save(i, self.k, &self.fresh, &mut internal) {
                        n.component.save(&mut internal);
                    }
                    ComponentState {
                        x: n.x.clone(),
                        guard_modes: n.guards.as_ref().map_or_else(Vec::new, |g| g.modes.clone()),
                        last_event: n.guards.as_ref().and_then(|g| g.last),
                        resets: n.resets,
                        internal,
                    }
                })
                .collect(),
        }
    }

    /// Puts the graph back exactly as it was when `snapshot` was taken.
    ///
    /// # Errors
    /// [`ShapeMismatch`] for a snapshot of a differently shaped graph;
    /// nothing is changed then.
    pub fn restore(&mut self, snapshot: &GraphSnapshot) -> Result<(), ShapeMismatch> {
        let count = |what: &str, expected: usize, found: usize| {
            if expected == found {
                Ok(())
            } else {
                Err(ShapeMismatch {
                    what: what.to_string(),
                    expected,
                    found,
                })
            }
        };
        count(
            "component count",
            self.nodes.len(),
            snapshot.components.len(),
        )?;
        count("output values", self.values.len(), snapshot.values.len())?;
        count("output ports", self.fresh.len(), snapshot.fresh.len())?;
        for (n, s) in self.nodes.iter().zip(&snapshot.components) {
            let guards = n.guards.as_ref().map_or(0, |g| g.modes.len());
            count(
                &format!("component `{}` states", n.name),
                n.x.len(),
                s.x.len(),
            )?;
            count(
                &format!("component `{}` guards", n.name),
                guards,
                s.guard_modes.len(),
            )?;
            self.scratch.clear();
            n.component.save(&mut self.scratch);
            let what = format!("component `{}` internal state", n.name);
            count(&what, self.scratch.reals.len(), s.internal.reals.len())?;
            count(&what, self.scratch.words.len(), s.internal.words.len())?;
        }
        for (i, (n, s)) in self.nodes.iter_mut().zip(&snapshot.components).enumerate() {
            let mismatch = |e| ShapeMismatch {
                what: format!("component `{}` internal state: {e}", n.name),
                expected: 0,
                found: 0,
            };
            n.component
                .load(&mut s.internal.reader())
                .map_err(mismatch)?;
            self.program.load(i, &s.internal).map_err(mismatch)?;
            n.x.copy_from_slice(&s.x);
            n.resets = s.resets;
            if let Some(g) = &mut n.guards {
                g.modes.copy_from_slice(&s.guard_modes);
                g.last = s.last_event;
            }
        }
        self.values.copy_from_slice(&snapshot.values);
        self.fresh.copy_from_slice(&snapshot.fresh);
        self.answered.copy_from_slice(&snapshot.answered);
        self.k = snapshot.k;
        self.evaluated = snapshot.evaluated;
        self.reschedule();
        Ok(())
    }
}
