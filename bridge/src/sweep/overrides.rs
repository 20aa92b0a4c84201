//! `netloop sweep --set KEY=VALUE --replications N`: changing a sweep file
//! from the command line without editing it.
//!
//! `--set` works like the file's `[set]` table and wins over it. A key that
//! a `[[grid]]` axis sweeps is pinned to the one value instead (its column
//! stays, with that value), so `--set` can shrink a study to one slice; a key
//! of a `[[zip]]` group or of `[[points]]` cannot be pinned alone and is an
//! error.

use crate::scenario_file::{parse_value, KeyPath};

use super::{SweepError, SweepFile};

/// What the command line changes in a sweep file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepOverrides {
    /// `KEY=VALUE`, as given to `--set`.
    pub set: Vec<String>,
    /// `--replications N`.
    pub replications: Option<u64>,
}

impl SweepOverrides {
    /// Whether there is nothing to change.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty() && self.replications.is_none()
    }

    /// The same overrides as command-line words, for a command that must
    /// rebuild the same plan (a SLURM task, a resume hint).
    pub fn words(&self) -> Vec<String> {
        let mut words = Vec::new();
        for s in &self.set {
            words.push("--set".into());
            words.push(s.clone());
        }
        if let Some(r) = self.replications {
            words.push("--replications".into());
            words.push(r.to_string());
        }
        words
    }

    /// Applies the overrides to `file`.
    ///
    /// # Errors
    /// [`SweepError::Input`] for `--set` without `=`, a bad key, a key of a
    /// zip group or explicit points, or `--replications 0`.
    pub fn apply(&self, file: &mut SweepFile) -> Result<(), SweepError> {
        if self.replications == Some(0) {
            return Err(SweepError::Input(
                "--replications must be at least 1".into(),
            ));
        }
        if let Some(r) = self.replications {
            file.replications = r;
        }
        for arg in &self.set {
            let (key, text) = arg.split_once('=').ok_or_else(|| {
                SweepError::Input(format!(
                    "--set {arg}: expected KEY=VALUE, e.g. --set duration=2s"
                ))
            })?;
            let name = KeyPath::parse(key)
                .map_err(|e| SweepError::Input(format!("--set {arg}: {e}")))?
                .to_string();
            let value = parse_value(text);
            let same = |k: &str| KeyPath::parse(k).is_ok_and(|p| p.to_string() == name);
            if let Some(axis) = file.grid.iter_mut().find(|g| same(&g.key)) {
                axis.values = vec![value];
                continue;
            }
            if let Some(i) = file.zip.iter().position(|z| z.keys.iter().any(|k| same(k))) {
                return Err(SweepError::Input(format!(
                    "--set {arg}: `{name}` is swept together with other keys in zip[{i}]; \
                     edit the sweep file to pin a zip group"
                )));
            }
            if file.points.iter().any(|p| p.keys().any(|k| same(k))) {
                return Err(SweepError::Input(format!(
                    "--set {arg}: `{name}` is set by [[points]]; edit the sweep file to pin it"
                )));
            }
            // Replaces a `[set]` entry that names the same key in another spelling.
            file.set.retain(|k, _| !same(k));
            file.set.insert(name, value);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn file(text: &str) -> SweepFile {
        SweepFile::parse(Path::new("s.toml"), text).unwrap()
    }

    const SWEEP: &str = r#"
scenario = "x.toml"
replications = 3
[set]
duration = "2s"
"loops.0.controller.kp" = 5.0
[[grid]]
key = "network.builtin.delay.value"
values = ["1ms", "5ms"]
[[zip]]
keys = ["loops[0].sensor.period", "loops[0].controller.period"]
values = [["10ms", "10ms"]]
"#;

    #[test]
    fn set_wins_over_the_files_set_and_pins_a_grid_axis() {
        let mut f = file(SWEEP);
        SweepOverrides {
            set: vec![
                "duration=1s".into(),
                "loops[0].controller.kp=7.5".into(),
                "network.builtin.delay.value=2ms".into(),
                "seed=4".into(),
            ],
            replications: Some(5),
        }
        .apply(&mut f)
        .unwrap();
        assert_eq!(f.replications, 5);
        assert_eq!(f.set["duration"], toml::Value::String("1s".into()));
        assert_eq!(f.set["loops[0].controller.kp"], toml::Value::Float(7.5));
        assert!(!f.set.contains_key("loops.0.controller.kp"));
        assert_eq!(f.set["seed"], toml::Value::Integer(4));
        assert_eq!(f.grid[0].values, [toml::Value::String("2ms".into())]);
    }

    #[test]
    fn bad_overrides_are_input_errors_naming_the_argument() {
        let cases = [
            (vec!["duration"], None, "expected KEY=VALUE"),
            (vec!["loops[0].sensor.period=5ms"], None, "zip[0]"),
            (vec![], Some(0), "--replications must be at least 1"),
        ];
        for (set, replications, expected) in cases {
            let mut f = file(SWEEP);
            let e = SweepOverrides {
                set: set.into_iter().map(String::from).collect(),
                replications,
            }
            .apply(&mut f)
            .unwrap_err();
            assert!(
                matches!(&e, SweepError::Input(m) if m.contains(expected)),
                "{e}"
            );
        }
    }

    #[test]
    fn words_round_trip_the_command_line() {
        let o = SweepOverrides {
            set: vec!["a=1".into()],
            replications: Some(2),
        };
        assert_eq!(o.words(), ["--set", "a=1", "--replications", "2"]);
    }
}
