//! The empirical delay file parser (network.builtin.delay, kind = "empirical")
//! on arbitrary text: samples or an error naming the line, never a panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use protocol::SimTime;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for unit in [SimTime(1), SimTime(1_000_000), SimTime(1_000_000_000)] {
        match bridge::network::parse_empirical_samples(Path::new("delays.txt"), text, unit) {
            Ok(samples) => assert!(!samples.is_empty()),
            Err(e) => assert!(e.to_string().contains("delays.txt"), "{e}"),
        }
    }
});
