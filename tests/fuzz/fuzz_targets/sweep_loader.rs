//! The sweep-file checks on arbitrary text: a sweep file or an error naming
//! the file, never a panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Err(e) = bridge::sweep::SweepFile::parse(Path::new("fuzz_sweep.toml"), text) {
        assert!(e.to_string().contains("fuzz_sweep.toml"), "{e}");
    }
});
