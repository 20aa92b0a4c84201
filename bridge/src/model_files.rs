//! Model files a scenario names by path, and inline models located in the
//! scenario file.
//!
//! An `equations` plant's or controller's `source = "model.eq"` is read relative to the
//! scenario file, once, when the scenario is loaded, so that every run of it
//! (and every point of a sweep) uses the same text and errors in it are
//! found before a run. An inline `equations = """..."""` is reported under
//! the scenario file's own name and line numbers.

use std::path::Path;

use controlsim::equations::Source;
use controlsim::{ControllerConfig, PlantConfig, SystemConfig};

use crate::config::{KeyPath, ScenarioError};
use crate::input::read_input;

/// Reads the `source` file of every `equations` plant and controller,
/// relative to `base_dir`, into its config; names inline text after
/// `scenario`, with its lines numbered as in the scenario when
/// `line_of(key)` gives the line (1-based) and text of the line that opens
/// the multi-line string.
///
/// # Errors
/// The key of the first file that cannot be read, or of a model
/// that gives both `source` and `equations`.
pub fn read_model_files(
    system: &mut SystemConfig,
    base_dir: &Path,
    scenario: &Path,
    line_of: impl Fn(&KeyPath) -> Option<(usize, String)>,
) -> Result<(), ScenarioError> {
    for (i, l) in system.loops.iter_mut().enumerate() {
        if let PlantConfig::Equations(c) = &mut l.plant {
            let key = KeyPath::key("loops").at(i).and("plant");
            let model = (&c.source, &c.equations, &mut c.loaded);
            read_model(model, &key, base_dir, scenario, &line_of)?;
        }
        if let ControllerConfig::Equations(c) = &mut l.controller {
            let key = KeyPath::key("loops").at(i).and("controller");
            let model = (&c.source, &c.equations, &mut c.loaded);
            read_model(model, &key, base_dir, scenario, &line_of)?;
        }
    }
    Ok(())
}

/// One model's `(source, equations, loaded)` at table `key`.
fn read_model(
    (source, equations, loaded): (&Option<String>, &Option<String>, &mut Option<Source>),
    key: &KeyPath,
    base_dir: &Path,
    scenario: &Path,
    line_of: &impl Fn(&KeyPath) -> Option<(usize, String)>,
) -> Result<(), ScenarioError> {
    match (source, equations) {
        (Some(_), Some(_)) => Err(ScenarioError::new(
            key.child("equations"),
            "give either `source` (a file) or `equations` (inline text), not both",
        )),
        (Some(path), None) => {
            let file = base_dir.join(path);
            let text = read_input(&file).map_err(|e| {
                ScenarioError::new(
                    key.child("source"),
                    format!("cannot read {}: {e}", file.display()),
                )
            })?;
            *loaded = Some(Source {
                name: file.display().to_string(),
                text,
            });
            Ok(())
        }
        (None, Some(text)) => {
            // A multi-line string opened at the end of line L starts on
            // line L + 1 (TOML drops that newline): L newlines in front
            // make the model's line numbers the file's.
            if let Some((line, opening)) = line_of(&key.child("equations")) {
                let opening = opening.trim_end();
                if opening.ends_with("\"\"\"") || opening.ends_with("'''") {
                    *loaded = Some(Source {
                        name: scenario.display().to_string(),
                        text: format!("{}{text}", "\n".repeat(line)),
                    });
                }
            }
            Ok(())
        }
        (None, None) => Ok(()),
    }
}
