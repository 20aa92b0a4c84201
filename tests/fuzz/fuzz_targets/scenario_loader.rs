//! The scenario loader (TOML text and `--set` overrides → a resolved,
//! validated scenario) on arbitrary input: a scenario or an error naming the
//! file or the override, never a panic or an allocation out of proportion.
//!
//! Input: leading lines `--set key=value` are overrides (as on the command
//! line); the rest is the scenario file.
#![no_main]

use std::path::Path;

use bridge::scenario_file::{load_text, Override};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut overrides = Vec::new();
    let mut rest = text;
    while let Some(line) = rest.strip_prefix("--set ") {
        let (arg, tail) = line.split_once('\n').unwrap_or((line, ""));
        match Override::parse_set(arg) {
            Ok(o) => overrides.push(o),
            Err(e) => {
                assert!(e.starts_with("--set "), "{e}");
                return;
            }
        }
        rest = tail;
    }
    // A directory that does not exist: loading must not read other files.
    let path = Path::new("/nonexistent-netloop-fuzz/scenario.toml");
    match load_text(path, rest, &overrides) {
        Ok(loaded) => {
            // What `netloop check --print` does with it.
            let _ = toml::to_string(&loaded.resolved.scenario);
            let _ = bridge::run::config_hash(&loaded.resolved.scenario);
        }
        Err(e) => {
            let text = e.to_string();
            assert!(text.contains("scenario.toml") || text.contains("--set"), "{text}");
        }
    }
});
