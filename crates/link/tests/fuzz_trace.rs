//! Property tests with arbitrary inputs for the parsers of link's outside text
//! (the fuzzing of issue 19): Mahimahi traces, and the units experiment files,
//! site files and the command line hand over (`150ms`, `30kb`, `1mbit`, `1%`,
//! `codel:5ms,100ms`). Arbitrary and mutated text never panics; errors name a
//! line of the trace; a valid trace parses to its opportunities and period;
//! each unit's canonical text parses back to itself. docs/fuzzing.md has the
//! long runs and the coverage-guided targets.

use link::units::{format_duration, parse_bytes, parse_duration};
use link::{Bitrate, LossModel, QueueSpec, Trace};
use proptest::prelude::*;
use std::time::Duration;

fn check_trace(text: &str) -> Result<Trace, link::TraceError> {
    let r = Trace::parse("fuzz.trace", text);
    match &r {
        Ok(t) => {
            assert!(t.opportunities_per_period() > 0);
            assert!(!t.period().is_zero());
            assert!(t.mean_bits_per_sec() > 0.0);
        }
        Err(e) => {
            assert!(e.line <= text.lines().count(), "{e}");
            assert!(e.to_string().starts_with("fuzz.trace"), "{e}");
        }
    }
    r
}

/// Text for one trace line: mostly numbers, now and then something else.
fn any_line() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (0u64..100_000).prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => "[ \t]{0,2}[0-9]{0,25}[ \t\r]{0,2}",
        1 => "\\PC{0,12}",
    ]
}

proptest! {
    #[test]
    fn fuzz_trace_arbitrary_text_never_panics(text in "\\PC{0,300}") {
        let _ = check_trace(&text);
    }

    #[test]
    fn fuzz_trace_arbitrary_lines_never_panic(lines in proptest::collection::vec(any_line(), 0..40)) {
        let _ = check_trace(&lines.join("\n"));
    }

    #[test]
    fn fuzz_valid_traces_parse_to_their_opportunities_and_period(
        mut ms in proptest::collection::vec(0u64..18_000_000_000_000, 1..60),
        blank in proptest::collection::vec(any::<bool>(), 60),
    ) {
        ms.sort_unstable();
        let last = *ms.last().unwrap();
        prop_assume!(last > 0);
        let mut text = String::new();
        for (i, m) in ms.iter().enumerate() {
            if blank[i] {
                text.push_str("  \n");
            }
            text.push_str(&format!("{m}\n"));
        }
        let t = check_trace(&text).unwrap();
        prop_assert_eq!(t.opportunities_per_period(), ms.len());
        prop_assert_eq!(t.period(), Duration::from_millis(last));
    }

    #[test]
    fn fuzz_trace_with_huge_timestamps_is_refused_or_exact(ms in any::<u64>()) {
        // Nanoseconds of a period must fit in 64 bits, or the trace is refused.
        match check_trace(&format!("1\n{ms}\n")) {
            Ok(t) => prop_assert_eq!(t.period(), Duration::from_millis(ms)),
            Err(e) => prop_assert!(ms == 0 || ms.checked_mul(1_000_000).is_none(), "{e}"),
        }
    }

    #[test]
    fn fuzz_units_arbitrary_text_never_panics_and_canonical_forms_read_back(
        s in prop_oneof![
            "\\PC{0,24}",
            "[0-9]{0,22}(\\.[0-9]{0,8})?(e[0-9]{1,3})?(ns|us|ms|s|m|h|b|kb|mb|gb|kib|mib|bit|kbit|mbit|gbit|bps|%|p)?",
            "(ge|codel|droptail|fifo|red):[0-9.%msbk,]{0,24}",
        ],
    ) {
        if let Ok(d) = parse_duration(&s) {
            let text = format_duration(d);
            prop_assert_eq!(parse_duration(&text), Ok(d), "{:?} → {:?}", s, text);
        }
        let _ = parse_bytes(&s);
        if let Ok(r) = s.parse::<Bitrate>() {
            let text = r.to_string();
            prop_assert!(text.parse::<Bitrate>().is_ok(), "{:?} → {:?}", s, text);
        }
        if let Ok(l) = s.parse::<LossModel>() {
            let text = l.to_string();
            prop_assert!(text.parse::<LossModel>().is_ok(), "{:?} → {:?}", s, text);
        }
        if let Ok(q) = s.parse::<QueueSpec>() {
            let text = q.to_string();
            prop_assert!(text.parse::<QueueSpec>().is_ok(), "{:?} → {:?}", s, text);
        }
    }
}

#[test]
fn fuzz_regression_a_timestamp_whose_nanoseconds_overflow_is_refused() {
    // 18446744073709 ms is above u64::MAX ns: it used to wrap (or panic in debug).
    let e = Trace::parse("big.trace", "1\n18446744073710\n").unwrap_err();
    assert_eq!(e.line, 2, "{e}");
    assert!(e.to_string().starts_with("big.trace:2:"), "{e}");
}
