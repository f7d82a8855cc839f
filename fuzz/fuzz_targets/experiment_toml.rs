//! libFuzzer target: arbitrary text as an experiment TOML file. Never a panic;
//! every error names the file, and a line of it where it names one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use results::ExperimentError;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match results::experiment::parse("fuzz.toml", text) {
        Ok(exp) => {
            assert!(exp.trial_count() <= results::experiment::MAX_TRIALS);
        }
        Err(e) => {
            assert!(e.to_string().starts_with("fuzz.toml:"), "{e}");
            let lines = text.lines().count() + 1;
            match e {
                ExperimentError::Field { line, .. }
                | ExperimentError::Syntax {
                    line: Some(line), ..
                } => assert!((1..=lines).contains(&line), "line {line} of {lines}"),
                _ => {}
            }
        }
    }
});
