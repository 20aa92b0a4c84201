//! Scenario checks that need a loop's FMU, made once the FMU paths are
//! resolved against the scenario file.

use controlsim::ControllerConfig;

use crate::config::{KeyPath, Resolved, ResponseKind, ScenarioError};

/// `response = "rollback"` with an FMU controller needs an FMU whose state
/// netloop can save and restore ([`controlsim::fmu::why_no_rollback`]).
///
/// # Errors
/// The key (`loops[i].response`) and the message saying why, and which
/// response works instead.
pub fn check_rollback(resolved: &Resolved) -> Result<(), ScenarioError> {
    for (i, (network, l)) in resolved
        .loops
        .iter()
        .zip(&resolved.system.loops)
        .enumerate()
    {
        let ControllerConfig::Fmu(c) = &l.controller else {
            continue;
        };
        if network.response != ResponseKind::Rollback {
            continue;
        }
        if let Some(why) = controlsim::fmu::why_no_rollback(&c.path) {
            return Err(ScenarioError::new(
                KeyPath::key("loops").at(i).and("response"),
                format!(
                    "\"rollback\" needs the FMU's state saved and restored, but {why}; use \
                     response = \"direct\" (the FMU's output at the arrival)"
                ),
            ));
        }
    }
    Ok(())
}
