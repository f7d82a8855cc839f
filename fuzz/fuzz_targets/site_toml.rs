//! libFuzzer target: arbitrary text as a site TOML file. Never a panic; every
//! error names the file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = site::parse_toml("fuzz.toml", text) {
        assert!(e.starts_with("fuzz.toml:"), "{e}");
    }
});
