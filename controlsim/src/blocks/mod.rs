//! The block library (issue 13): graph [`Component`] kinds that say what a
//! component computes without writing Rust, in the spirit of a causal block
//! diagram. A scenario writes one as `[components.block]` with a `kind`;
//! docs/scenario.md ("The block library") documents every kind's keys,
//! ports, direct feedthrough and states.
//!
//! One file per family: [`sources`], [`math`] (with the `expr` block),
//! [`continuous`], [`discrete`], [`nonlinear`], [`routing`] (with the
//! If/IfAction/Merge pattern), [`csv_source`] (`from_csv`) and
//! [`equations`] (a model in the equation language as a block).
//! [`build`] is the one registration point: a
//! [`BlockConfig`] in, a boxed component out.
//!
//! # Conventions
//! - Element-wise blocks take `width` (default 1); every port of such a
//!   block has that many elements. Blocks with several inputs name them
//!   `u0`, `u1`, ...; a single input is `u`, a single output `y`.
//! - Time in seconds is the boundary's [`SimTime`] as `f64`.
//! - A block with internal state (a relay's position, a unit delay's
//!   sample, an integrator's value) snapshots it through
//!   [`Component::save`]/[`Component::load`], so graph rollback is exact.
//! - Every input is held over the step, as for every component; so an
//!   `integrator` adds exactly `h * u` per step (the integral of a held
//!   input), while `transfer_function` and `state_space` integrate their
//!   internal dynamics with the run's solver inside the step.

pub mod continuous;
pub mod csv_source;
pub mod discrete;
pub mod equations;
pub mod math;
pub mod nonlinear;
pub mod routing;
pub mod sources;

mod common;
#[cfg(test)]
mod definitions;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::graph::Component;
use crate::key_path::KeyPath;
use crate::time::StepSize;

pub use common::Values;

/// `[components.block]`: one block of the library, chosen by `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BlockConfig {
    // Sources.
    Constant(sources::ConstantConfig),
    Step(sources::StepConfig),
    Ramp(sources::RampConfig),
    Sine(sources::SineConfig),
    Square(sources::SquareConfig),
    Pulse(sources::PulseConfig),
    Chirp(sources::ChirpConfig),
    Clock(sources::ClockConfig),
    Random(sources::RandomConfig),
    FromCsv(csv_source::FromCsvConfig),
    // Math.
    Gain(math::GainConfig),
    Sum(math::SumConfig),
    Product(math::ProductConfig),
    Function(math::FunctionConfig),
    Min(math::MinMaxConfig),
    Max(math::MinMaxConfig),
    Power(math::PowerConfig),
    Relational(math::RelationalConfig),
    Logic(math::LogicConfig),
    Expr(math::ExprConfig),
    // Continuous.
    Integrator(continuous::IntegratorConfig),
    Derivative(continuous::DerivativeConfig),
    TransferFunction(continuous::TransferFunctionConfig),
    StateSpace(continuous::StateSpaceConfig),
    ZeroPoleGain(continuous::ZeroPoleGainConfig),
    TransportDelay(continuous::TransportDelayConfig),
    // Discrete.
    UnitDelay(discrete::UnitDelayConfig),
    ZeroOrderHold(discrete::ZeroOrderHoldConfig),
    DiscreteIntegrator(discrete::DiscreteIntegratorConfig),
    DiscreteTransferFunction(discrete::DiscreteTransferFunctionConfig),
    DiscreteStateSpace(discrete::DiscreteStateSpaceConfig),
    // Nonlinear.
    Saturation(nonlinear::SaturationConfig),
    DeadZone(nonlinear::DeadZoneConfig),
    Relay(nonlinear::RelayConfig),
    Backlash(nonlinear::BacklashConfig),
    RateLimiter(nonlinear::RateLimiterConfig),
    Quantizer(nonlinear::QuantizerConfig),
    Friction(nonlinear::FrictionConfig),
    #[serde(rename = "lookup_1d")]
    Lookup1d(nonlinear::Lookup1dConfig),
    #[serde(rename = "lookup_2d")]
    Lookup2d(nonlinear::Lookup2dConfig),
    // Routing.
    Mux(routing::MuxConfig),
    Demux(routing::DemuxConfig),
    Selector(routing::SelectorConfig),
    Switch(routing::SwitchConfig),
    If(routing::IfConfig),
    IfAction(routing::IfActionConfig),
    Merge(routing::MergeConfig),
    // Models in the equation language.
    Equations(equations::EquationsBlockConfig),
}

/// What a block may need besides its own keys.
#[derive(Clone, Copy, Debug)]
pub struct BlockContext {
    /// The run's step: the default sample period of discrete blocks, the
    /// grid their periods and delays must lie on.
    pub step: StepSize,
    /// The run's seed, and this component's stream (its index), for
    /// `random`.
    pub seed: u64,
    pub stream: u64,
}

/// Builds the block `c`; `key` names it in errors (`components[3].block`).
///
/// # Errors
/// [`ConfigError`] keyed `key.<field>` for a bad parameter.
pub fn build(
    key: &KeyPath,
    c: &BlockConfig,
    cx: BlockContext,
) -> Result<Box<dyn Component>, ConfigError> {
    use BlockConfig as B;
    Ok(match c {
        B::Constant(c) => Box::new(sources::Source::constant(key, c)?),
        B::Step(c) => Box::new(sources::Source::step(key, c)?),
        B::Ramp(c) => Box::new(sources::Source::ramp(key, c)?),
        B::Sine(c) => Box::new(sources::Source::sine(key, c)?),
        B::Square(c) => Box::new(sources::Source::square(key, c)?),
        B::Pulse(c) => Box::new(sources::Source::pulse(key, c)?),
        B::Chirp(c) => Box::new(sources::Source::chirp(key, c)?),
        B::Clock(c) => Box::new(sources::Source::clock(key, c)?),
        B::Random(c) => Box::new(sources::Random::new(key, c, cx)?),
        B::FromCsv(c) => Box::new(csv_source::FromCsv::new(key, c)?),
        B::Gain(c) => Box::new(math::Gain::new(key, c)?),
        B::Sum(c) => Box::new(math::Sum::new(key, c)?),
        B::Product(c) => Box::new(math::Product::new(key, c)?),
        B::Function(c) => Box::new(math::Function::new(key, c)?),
        B::Min(c) => Box::new(math::MinMax::new(key, c, false)?),
        B::Max(c) => Box::new(math::MinMax::new(key, c, true)?),
        B::Power(c) => Box::new(math::Power::new(key, c)?),
        B::Relational(c) => Box::new(math::Relational::new(key, c)?),
        B::Logic(c) => Box::new(math::Logic::new(key, c)?),
        B::Expr(c) => Box::new(math::Expr::new(key, c)?),
        B::Integrator(c) => Box::new(continuous::Integrator::new(key, c)?),
        B::Derivative(c) => Box::new(continuous::Derivative::new(key, c)?),
        B::TransferFunction(c) => Box::new(continuous::Linear::transfer_function(key, c)?),
        B::StateSpace(c) => Box::new(continuous::Linear::state_space(key, c)?),
        B::ZeroPoleGain(c) => Box::new(continuous::Linear::zero_pole_gain(key, c)?),
        B::TransportDelay(c) => Box::new(continuous::TransportDelay::new(key, c, cx)?),
        B::UnitDelay(c) => Box::new(discrete::Discrete::unit_delay(key, c, cx)?),
        B::ZeroOrderHold(c) => Box::new(discrete::Discrete::zero_order_hold(key, c, cx)?),
        B::DiscreteIntegrator(c) => Box::new(discrete::Discrete::integrator(key, c, cx)?),
        B::DiscreteTransferFunction(c) => {
            Box::new(discrete::Discrete::transfer_function(key, c, cx)?)
        }
        B::DiscreteStateSpace(c) => Box::new(discrete::Discrete::state_space(key, c, cx)?),
        B::Saturation(c) => Box::new(nonlinear::Static::saturation(key, c)?),
        B::DeadZone(c) => Box::new(nonlinear::Static::dead_zone(key, c)?),
        B::Quantizer(c) => Box::new(nonlinear::Static::quantizer(key, c)?),
        B::Friction(c) => Box::new(nonlinear::Static::friction(key, c)?),
        B::Relay(c) => Box::new(nonlinear::Relay::new(key, c)?),
        B::Backlash(c) => Box::new(nonlinear::Backlash::new(key, c)?),
        B::RateLimiter(c) => Box::new(nonlinear::RateLimiter::new(key, c)?),
        B::Lookup1d(c) => Box::new(nonlinear::Lookup1d::new(key, c)?),
        B::Lookup2d(c) => Box::new(nonlinear::Lookup2d::new(key, c)?),
        B::Mux(c) => Box::new(routing::Mux::new(key, c)?),
        B::Demux(c) => Box::new(routing::Demux::new(key, c)?),
        B::Selector(c) => Box::new(routing::Selector::new(key, c)?),
        B::Switch(c) => Box::new(routing::Switch::new(key, c)?),
        B::If(c) => Box::new(routing::If::new(key, c)?),
        B::IfAction(c) => Box::new(routing::IfAction::new(key, c)?),
        B::Merge(c) => Box::new(routing::Merge::new(key, c)?),
        B::Equations(c) => Box::new(equations::Equations::new(key, c, cx)?),
    })
}
