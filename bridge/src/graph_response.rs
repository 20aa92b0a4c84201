//! `[[components]] response`: how an event-triggered controller component
//! answers what it receives, the graph form of a loop's `response`
//! (docs/design.md §4.4, docs/cosimulation.md "What a solver-integrated
//! controller sends"). `"direct"` answers with the output at the event time;
//! `"rollback"` with the output one solver step later, computed from the
//! state at the event time and then rolled back, so that only the answer
//! differs. A component with several inbound flows answers every packet of
//! each the same way, from the inputs as they stand at that packet.

use controlsim::graph::adapters::ControllerComponent;
use controlsim::{ConfigError, ControllerConfig, KeyPath};

use crate::config::ResponseKind;
use crate::graph_scenario::ComponentScenario;

/// Refuses `response = "rollback"` on a component that is not a controller:
/// no other kind answers packets with a law it could look ahead with.
///
/// # Errors
/// `components[i].response`, saying which kinds take it.
pub fn check_kind(i: usize, c: &ComponentScenario) -> Result<(), ConfigError> {
    if c.response == ResponseKind::Rollback && c.controller.is_none() {
        return Err(ConfigError::Invalid {
            key: KeyPath::key("components").at(i).and("response"),
            reason: format!(
                "\"rollback\" is for an event-triggered controller component (kind = \"state_space\", \
                 \"transfer_function\" or \"fmu\"), but `{}` is a {}",
                c.name,
                c.kind()
            ),
        });
    }
    Ok(())
}

/// The controller component `c` (`components[i]`) answering as its
/// `response` says.
///
/// # Errors
/// `components[i].response` when `"rollback"` cannot work: a law other
/// than `state_space`, `transfer_function` or an FMU, a time-triggered
/// controller, or an FMU whose state netloop cannot save and restore.
pub fn apply(
    i: usize,
    c: &ComponentScenario,
    component: ControllerComponent,
) -> Result<ControllerComponent, ConfigError> {
    if c.response == ResponseKind::Direct {
        return Ok(component);
    }
    let key = KeyPath::key("components").at(i).and("response");
    let component = component.answer_by_rollback(&key)?;
    if let Some(ControllerConfig::Fmu(f)) = &c.controller {
        if let Some(why) = controlsim::fmu::why_no_rollback(&f.path) {
            return Err(ConfigError::Invalid {
                key,
                reason: format!(
                    "\"rollback\" needs the FMU's state saved and restored, but {why}; use \
                     response = \"direct\" (the FMU's output at the arrival)"
                ),
            });
        }
    }
    Ok(component)
}
