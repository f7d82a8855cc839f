//! libFuzzer target: arbitrary text as a budget file (`verdict::budget::parse`,
//! `diff --budget`, `spdylab budget`; issue 36). Never a panic; every error
//! (a `verdict::Error`, a usage error to the CLI) names the file, and a
//! line of it where it names one; a file that parses has a budget with its
//! text per `[[budget]]`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use verdict::budget::{parse, Limit};
use verdict::Error;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse("fuzz.toml", text) {
        Ok(budgets) => {
            assert!(!budgets.is_empty());
            for b in &budgets {
                assert!(!b.text.is_empty());
                if let Limit::MaxChangePct { vs, pct } = b.limit {
                    assert!(vs != b.protocol && pct.is_finite(), "{b:?}");
                }
                if let Limit::MaxMs(ms) = b.limit {
                    assert!(ms.is_finite() && ms >= 0.0, "{b:?}");
                }
            }
        }
        Err(Error(m)) => {
            let rest = m
                .strip_prefix("fuzz.toml: ")
                .unwrap_or_else(|| panic!("the error does not name the file: {m}"));
            if let Some(at) = rest.strip_prefix("line ") {
                let digits: String = at.chars().take_while(char::is_ascii_digit).collect();
                let line: usize = digits.parse().unwrap_or_else(|_| panic!("{m}"));
                let lines = text.split('\n').count();
                assert!((1..=lines).contains(&line), "line {line} of {lines}: {m}");
            }
        }
    }
});
