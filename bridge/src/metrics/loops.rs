//! Control metrics of every loop, with or without a reference: each plant
//! output and state against its reference or set point, the control effort
//! and the quadratic cost J = ∫ eₓᵀ Q eₓ + uᵀ R u dt (docs/cosimulation.md,
//! "Output").
//!
//! All integrals use the rectangle rule over the solver step with the values
//! at the start of the step, like the output metrics of
//! [`super::ControlMetricsAccumulator`], so memory is constant in run length.

use std::collections::BTreeMap;

use controlsim::{ControllerConfig, LoopView, PerChannel, SignalConfig};
use serde::{Deserialize, Serialize};

use super::{ControlMetrics, ControlMetricsAccumulator, NonFinite};
use crate::config::{KeyPath, Resolved, ScenarioError};

/// `[loops.metrics]`: what the loop's outputs and states are measured
/// against when they have no reference, and the weights of its quadratic cost.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopMetricsConfig {
    /// Set point per output or state name (an output with a reference is
    /// measured against it instead); default 0: regulation.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub setpoint: BTreeMap<String, f64>,
    /// State weight Q (n × n, or its diagonal), on the states' deviations
    /// from their set points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q: Option<Weight>,
    /// Input weight R (m × m, or its diagonal), on the applied controls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r: Option<Weight>,
}

/// A weight matrix as written: rows, or just the diagonal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "a matrix (an array of rows) or an array of numbers (its diagonal)"
)]
pub enum Weight {
    Matrix(Vec<Vec<f64>>),
    Diagonal(Vec<f64>),
}

impl Weight {
    /// The n × n matrix, row-major.
    fn square(&self, n: usize, key: KeyPath, what: &str) -> Result<Vec<f64>, ScenarioError> {
        let bad = |message: String| ScenarioError::new(key.clone(), message);
        let m = match self {
            Weight::Diagonal(d) => {
                if d.len() != n {
                    return Err(bad(format!(
                        "a diagonal of {} numbers, but the loop has {n} {what}",
                        d.len()
                    )));
                }
                let mut m = vec![0.0; n * n];
                for (i, x) in d.iter().enumerate() {
                    m[i * n + i] = *x;
                }
                m
            }
            Weight::Matrix(rows) => {
                if rows.len() != n || rows.iter().any(|r| r.len() != n) {
                    return Err(bad(format!(
                        "must be {n} × {n} (the loop has {n} {what}), found {} rows of lengths {:?}",
                        rows.len(),
                        rows.iter().map(Vec::len).collect::<Vec<_>>()
                    )));
                }
                rows.concat()
            }
        };
        if m.iter().any(|x| !x.is_finite()) {
            return Err(bad("every entry must be a finite number".into()));
        }
        Ok(m)
    }
}

/// What an output or a state is measured against.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// Reference channel j of the loop.
    Reference(usize),
    Setpoint(f64),
}

impl Target {
    fn value(self, references: &[f64]) -> f64 {
        match self {
            Target::Reference(j) => references[j],
            Target::Setpoint(v) => v,
        }
    }

    fn against(self) -> (&'static str, Option<f64>) {
        match self {
            Target::Reference(_) => ("reference", None),
            Target::Setpoint(v) => ("setpoint", Some(v)),
        }
    }
}

/// One loop's metrics, settled against the built plant.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopMetricsPlan {
    pub outputs: Vec<Target>,
    pub states: Vec<Target>,
    /// Per output: whether its reference is a step (`constant` or `step`),
    /// the only kind where overshoot and settling mean something.
    pub step_outputs: Vec<bool>,
    /// Per input channel: whether the actuator has a limit on it.
    pub limited: Vec<bool>,
    pub q: Option<Vec<f64>>,
    pub r: Option<Vec<f64>>,
}

/// The metrics plan of every loop of `resolved`, settled against the built
/// loops (output, state and input names and counts; a system or its graph,
/// [`LoopView`]).
///
/// # Errors
/// A set point naming neither an output nor a state, or one for an output
/// that has a reference; a Q or R of the wrong size.
pub fn plan<V: LoopView + ?Sized>(
    resolved: &Resolved,
    loops: &V,
) -> Result<Vec<LoopMetricsPlan>, ScenarioError> {
    let default = LoopMetricsConfig::default();
    (0..loops.loop_count())
        .zip(&resolved.scenario.loops)
        .map(|(i, scenario)| {
            let config = scenario.metrics.as_ref().unwrap_or(&default);
            let key = |k: &str| KeyPath::key("loops").at(i).and("metrics").and(k);
            let sig = loops.signature(i);
            let with_reference = sig.outputs.len().min(loops.reference_dim(i));
            for name in config.setpoint.keys() {
                match sig.outputs.iter().position(|o| o == name) {
                    Some(j) if j < with_reference && !sig.states.contains(name) => {
                        return Err(ScenarioError::new(key("setpoint"), format!(
                                "output `{name}` is measured against its reference; a set point is for outputs and states without one"
                            )))
                    }
                    Some(_) => {}
                    None if sig.states.contains(name) => {}
                    None => {
                        return Err(ScenarioError::new(key("setpoint"), format!(
                                "`{name}` is neither an output nor a state of the plant: its outputs are {}, its states {}",
                                sig.outputs.join(", "),
                                sig.states.join(", ")
                            )))
                    }
                }
            }
            let setpoint = |name: &str| Target::Setpoint(config.setpoint.get(name).copied().unwrap_or(0.0));
            let outputs: Vec<Target> = sig
                .outputs
                .iter()
                .enumerate()
                .map(|(j, name)| {
                    if j < with_reference {
                        Target::Reference(j)
                    } else {
                        setpoint(name)
                    }
                })
                .collect();
            // A state measured by an output with a reference follows that
            // reference, unless it has a set point of its own.
            let states = sig
                .states
                .iter()
                .map(|name| match sig.outputs.iter().position(|o| o == name) {
                    Some(j) if j < with_reference && !config.setpoint.contains_key(name) => {
                        Target::Reference(j)
                    }
                    _ => setpoint(name),
                })
                .collect();
            let step_outputs = outputs
                .iter()
                .map(|t| match t {
                    Target::Reference(j) => matches!(
                        scenario.reference.0.get(*j),
                        Some(SignalConfig::Constant { .. } | SignalConfig::Step { .. })
                    ),
                    Target::Setpoint(_) => false,
                })
                .collect();
            let limited = limits(scenario.actuator.min.as_ref(), scenario.actuator.max.as_ref(), sig.inputs.len());
            let q = config
                .q
                .as_ref()
                .map(|w| w.square(sig.states.len(), key("q"), "states"))
                .transpose()?;
            let r = config
                .r
                .as_ref()
                .map(|w| w.square(sig.inputs.len(), key("r"), "inputs"))
                .transpose()?;
            Ok(LoopMetricsPlan {
                outputs,
                states,
                step_outputs,
                limited,
                q,
                r,
            })
        })
        .collect()
}

/// Per input channel: whether `min` or `max` bounds it.
fn limits(min: Option<&PerChannel>, max: Option<&PerChannel>, m: usize) -> Vec<bool> {
    let finite = |p: Option<&PerChannel>, i: usize| match p {
        None => false,
        Some(PerChannel::All(x)) => x.is_finite(),
        Some(PerChannel::Each(v)) => v.get(i).is_some_and(|x| x.is_finite()),
    };
    (0..m).map(|i| finite(min, i) || finite(max, i)).collect()
}

/// ∫|e|, ∫e², ∫t|e| and max |e| of one signal's error.
#[derive(Clone, Copy, Debug, Default)]
pub struct Deviation {
    iae: f64,
    ise: f64,
    itae: f64,
    peak: f64,
}

impl Deviation {
    pub fn add(&mut self, t: f64, h: f64, e: f64) {
        let a = e.abs();
        self.iae += a * h;
        self.ise += e * e * h;
        self.itae += t * a * h;
        // NaN-sticky: a NaN error makes the peak NaN, not ignored.
        if a > self.peak || a.is_nan() {
            self.peak = a;
        }
    }
}

/// Metrics of one plant state (summary.json `loops[].states`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StateMetrics {
    pub state: String,
    pub against: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setpoint: Option<f64>,
    pub iae: f64,
    pub ise: f64,
    pub itae: f64,
    pub peak_deviation: f64,
    pub non_finite: BTreeMap<&'static str, NonFinite>,
}

/// Control effort of one input channel (summary.json `loops[].controls`),
/// on the applied (saturated) value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ControlEffort {
    pub input: String,
    /// ∫|u| dt.
    pub integral_abs: f64,
    /// ∫u² dt.
    pub integral_square: f64,
    /// max |u|.
    pub peak_abs: f64,
    /// Fraction of the run's time with the controller's value cut by the
    /// actuator's limits; `None` when the channel has no limit.
    pub saturated_fraction: Option<f64>,
    pub non_finite: BTreeMap<&'static str, NonFinite>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Effort {
    abs: f64,
    square: f64,
    peak: f64,
    saturated: f64,
    time: f64,
}

/// An output's metrics and what it was measured against.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputMetrics {
    pub against: &'static str,
    pub setpoint: Option<f64>,
    pub metrics: ControlMetrics,
}

/// Everything [`LoopMetrics::finish`] reports for one loop.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopMetricsReport {
    pub outputs: Vec<OutputMetrics>,
    pub states: Vec<StateMetrics>,
    pub controls: Vec<ControlEffort>,
    /// J, when the loop has Q or R.
    pub quadratic_cost: Option<f64>,
}

/// The accumulators of one loop.
#[derive(Clone, Debug)]
pub struct LoopMetrics {
    plan: LoopMetricsPlan,
    outputs: Vec<ControlMetricsAccumulator>,
    states: Vec<Deviation>,
    controls: Vec<Effort>,
    cost: f64,
    /// Scratch: the states' deviations.
    dx: Vec<f64>,
}

fn non_finite<const N: usize>(
    named: [(&'static str, f64); N],
) -> BTreeMap<&'static str, NonFinite> {
    named
        .into_iter()
        .filter_map(|(name, x)| Some((name, NonFinite::of(x)?)))
        .collect()
}

/// `xᵀ M x` for a row-major square `m`.
fn quadratic(m: &[f64], x: &[f64]) -> f64 {
    let n = x.len();
    (0..n)
        .map(|i| x[i] * (0..n).map(|j| m[i * n + j] * x[j]).sum::<f64>())
        .sum()
}

impl LoopMetrics {
    pub fn new(plan: LoopMetricsPlan, settling_band: f64) -> Self {
        LoopMetrics {
            outputs: plan
                .step_outputs
                .iter()
                .map(|&step| ControlMetricsAccumulator::with_step(settling_band, step))
                .collect(),
            states: vec![Deviation::default(); plan.states.len()],
            controls: vec![Effort::default(); plan.limited.len()],
            cost: 0.0,
            dx: vec![0.0; plan.states.len()],
            plan,
        }
    }

    /// Adds the step `[t, t + h)` of loop `i` of `loops` with its outputs
    /// and references at `t`.
    pub fn add<V: LoopView + ?Sized>(
        &mut self,
        t: f64,
        h: f64,
        loops: &V,
        i: usize,
        outputs: &[f64],
        references: &[f64],
    ) {
        for ((acc, target), y) in self.outputs.iter_mut().zip(&self.plan.outputs).zip(outputs) {
            acc.add(t, h, *y, target.value(references));
        }
        for (((dev, target), x), dx) in self
            .states
            .iter_mut()
            .zip(&self.plan.states)
            .zip(loops.plant_state(i))
            .zip(&mut self.dx)
        {
            *dx = x - target.value(references);
            dev.add(t, h, -*dx);
        }
        let applied = loops.applied_control(i);
        let held = loops.held_control(i);
        for (i, e) in self.controls.iter_mut().enumerate() {
            let u = applied[i];
            e.abs += u.abs() * h;
            e.square += u * u * h;
            if u.abs() > e.peak || u.is_nan() {
                e.peak = u.abs();
            }
            e.time += h;
            // Not `==`: a NaN held value is not "within the limits".
            if !(held[i] == u) {
                e.saturated += h;
            }
        }
        if let Some(q) = &self.plan.q {
            self.cost += quadratic(q, &self.dx) * h;
        }
        if let Some(r) = &self.plan.r {
            self.cost += quadratic(r, applied) * h;
        }
    }

    /// The report of loop `i` of `loops`.
    pub fn finish<V: LoopView + ?Sized>(&self, loops: &V, i: usize) -> LoopMetricsReport {
        let sig = loops.signature(i);
        let outputs = self
            .outputs
            .iter()
            .zip(&self.plan.outputs)
            .map(|(acc, target)| {
                let (against, setpoint) = target.against();
                OutputMetrics {
                    against,
                    setpoint,
                    metrics: acc.finish(),
                }
            })
            .collect();
        let states = self
            .states
            .iter()
            .zip(&self.plan.states)
            .zip(&sig.states)
            .map(|((d, target), name)| {
                let (against, setpoint) = target.against();
                StateMetrics {
                    state: name.clone(),
                    against,
                    setpoint,
                    iae: d.iae,
                    ise: d.ise,
                    itae: d.itae,
                    peak_deviation: d.peak,
                    non_finite: non_finite([
                        ("iae", d.iae),
                        ("ise", d.ise),
                        ("itae", d.itae),
                        ("peak_deviation", d.peak),
                    ]),
                }
            })
            .collect();
        let controls = self
            .controls
            .iter()
            .zip(&self.plan.limited)
            .zip(&sig.inputs)
            .map(|((e, &limited), name)| ControlEffort {
                input: name.clone(),
                integral_abs: e.abs,
                integral_square: e.square,
                peak_abs: e.peak,
                saturated_fraction: (limited && e.time > 0.0).then(|| e.saturated / e.time),
                non_finite: non_finite([
                    ("integral_abs", e.abs),
                    ("integral_square", e.square),
                    ("peak_abs", e.peak),
                ]),
            })
            .collect();
        let quadratic_cost = (self.plan.q.is_some() || self.plan.r.is_some()).then_some(self.cost);
        LoopMetricsReport {
            outputs,
            states,
            controls,
            quadratic_cost,
        }
    }
}

/// Whether loop `scenario` has a CACC controller, and its spacing policy
/// `(standstill, time_gap)`.
pub fn cacc_policy(controller: &ControllerConfig) -> Option<(f64, f64)> {
    match controller {
        ControllerConfig::Cacc(c) => Some((c.standstill, c.time_gap)),
        _ => None,
    }
}
