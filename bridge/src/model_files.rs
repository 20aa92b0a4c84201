//! Model files a scenario names by path: an `equations` plant's
//! `source = "model.eq"` is read relative to the scenario file, once, when
//! the scenario is loaded, so that every run of it (and every point of a
//! sweep) uses the same text and errors in it are found before a run.

use std::path::Path;

use controlsim::equations::Source;
use controlsim::{PlantConfig, SystemConfig};

use crate::input::read_input;

/// Reads the `source` file of every `equations` plant, relative to
/// `base_dir`, into its config.
///
/// # Errors
/// `(key, message)` of the first file that cannot be read, or of a plant
/// that gives both `source` and `equations`.
pub fn read_model_files(
    system: &mut SystemConfig,
    base_dir: &Path,
) -> Result<(), (String, String)> {
    for (i, l) in system.loops.iter_mut().enumerate() {
        let PlantConfig::Equations(c) = &mut l.plant else {
            continue;
        };
        let Some(path) = &c.source else {
            continue;
        };
        if c.equations.is_some() {
            return Err((
                format!("loops[{i}].plant.equations"),
                "give either `source` (a file) or `equations` (inline text), not both".into(),
            ));
        }
        let file = base_dir.join(path);
        let text = read_input(&file).map_err(|e| {
            (
                format!("loops[{i}].plant.source"),
                format!("cannot read {}: {e}", file.display()),
            )
        })?;
        c.loaded = Some(Source {
            name: file.display().to_string(),
            text,
        });
    }
    Ok(())
}
