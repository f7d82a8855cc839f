//! libFuzzer target: arbitrary text as a Mahimahi trace. Never a panic; an
//! error names a line of the text (or none, for the whole trace); a trace that
//! parses has opportunities and a period above 0.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match link::Trace::parse("fuzz.trace", text) {
        Ok(t) => {
            assert!(t.opportunities_per_period() > 0);
            assert!(!t.period().is_zero());
            let _ = t.mean_bits_per_sec();
        }
        Err(e) => assert!(e.line <= text.lines().count(), "{e}"),
    }
});
