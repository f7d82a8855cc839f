//! Property tests with arbitrary inputs for budget files (`verdict::budget::parse`,
//! issue 36's fuzzing of the file formats added since issue 19): arbitrary
//! text, valid files mutated line by line (with multibyte characters, CRLF
//! line endings, a byte-order mark, cut short anywhere) and files written from
//! arbitrary fields never panic. Every error is a `verdict::Error` naming the file;
//! one that names a line names a line of the file, and for a key that is no
//! budget field nor setting, the line holding that key. A file that parses
//! has a budget per `[[budget]]`, each with its text. docs/hardening.md lists
//! them.

use proptest::prelude::*;
use verdict::budget::{parse, Budget, Limit};
use verdict::Error;

const GOOD: &str = r#"# Budgets for CI.
[[budget]]
metric = "plt"
protocol = "h2"
max = "2.5s"

[[budget]]
metric = "tow"
protocol = "h3"
vs = "h2"
max_change = "+5%"
site = "youtube"

[[budget]]
metric = "lcp"
protocol = "https"
max = "1500ms"
profile = "3g"
"#;

/// Parses `text`; checks what an error says of where it is.
fn check(text: &str) -> Result<Vec<Budget>, String> {
    match parse("fuzz.toml", text) {
        Ok(budgets) => {
            assert!(!budgets.is_empty());
            for b in &budgets {
                assert!(!b.text.is_empty());
                if let Limit::MaxChangePct { vs, pct } = b.limit {
                    assert!(vs != b.protocol && pct.is_finite(), "{b:?}");
                }
            }
            Ok(budgets)
        }
        Err(Error(m)) => {
            let rest = m
                .strip_prefix("fuzz.toml: ")
                .unwrap_or_else(|| panic!("the error does not name the file: {m}"));
            if let Some(at) = rest.strip_prefix("line ") {
                let digits: String = at.chars().take_while(char::is_ascii_digit).collect();
                let line: usize = digits
                    .parse()
                    .unwrap_or_else(|_| panic!("no line number: {m}"));
                let lines: Vec<&str> = text.split('\n').collect();
                assert!(
                    (1..=lines.len()).contains(&line),
                    "line {line} of {}: {m}",
                    lines.len()
                );
                // A key that is not a field: its line holds it.
                let after = &at[digits.len()..];
                if let Some((key, _)) = after
                    .strip_prefix(": ")
                    .and_then(|r| r.split_once(": not a budget field"))
                {
                    assert!(
                        lines[line - 1].contains(key),
                        "line {line} lacks {key:?}: {m}\n{text}"
                    );
                }
            }
            Err(m)
        }
    }
}

/// A value a budget field could be given, right or wrong.
fn any_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "\"(plt|tow|ttfb|fcp|lcp|PLT|fcp2|)\"",
        "\"(http|https|spdy3|h2|h2c|h3|h9|HTTPS|)\"",
        "\"[+-]?[0-9]{0,4}(\\.[0-9]{0,3})?(e[0-9]{1,3})? ?(%|ms|s|us|ns|m|h|parsecs)?\"",
        "\"(inf%|nan%|\\+inf%|-inf %|1e400%|%|youtube|3g|150ms)\"",
        "-?[0-9]{1,20}",
        "-?[0-9]{1,3}\\.[0-9]{1,3}",
        Just("true".to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        Just("\"é日本\u{1F600}\"".to_string()),
        "\"\\PC{0,12}\"",
        "'\\PC{0,8}'",
    ]
}

/// A line that could be in a budget file, right or wrong.
fn any_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("[[budget]]".to_string()),
        Just("[budget]".to_string()),
        Just("budget = []".to_string()),
        (
            "( {0,2})(metric|protocol|max|vs|max_change|site|profile|rtt|cpu_slowdown|notsent_lowat|siet|s|\"site\"|\"x y\"|é|a\\.b|m)",
            any_value()
        )
            .prop_map(|(k, v)| format!("{k} = {v}")),
        "\\PC{0,24}",
    ]
}

proptest! {
    #[test]
    fn fuzz_budget_arbitrary_text_never_panics(text in "\\PC{0,400}") {
        let _ = check(&text);
    }

    #[test]
    fn fuzz_budget_mutated_files_never_panic_and_errors_name_file_and_line(
        edits in testkit::lines::edits(any_line()),
        crlf in any::<bool>(),
        bom in any::<bool>(),
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let lines = testkit::lines::apply(GOOD, edits);
        let mut text = lines.join(if crlf { "\r\n" } else { "\n" });
        if bom {
            text.insert(0, '\u{feff}');
        }
        if let Some(at) = cut {
            // Cut short at a character boundary (a span at the very end).
            let mut i = at.index(text.len() + 1);
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            text.truncate(i);
        }
        let _ = check(&text);
    }

    #[test]
    fn fuzz_budget_files_written_from_fields_parse_or_say_where(
        budgets in proptest::collection::vec(
            proptest::collection::vec(
                ("(metric|protocol|max|vs|max_change|site|profile|rtt|x)", any_value()),
                0..7,
            ),
            0..4,
        ),
        crlf in any::<bool>(),
    ) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = String::new();
        for fields in &budgets {
            text.push_str(&format!("[[budget]]{nl}"));
            let mut seen = Vec::new();
            for (k, v) in fields {
                if !seen.contains(k) {
                    seen.push(k.clone());
                    text.push_str(&format!("{k} = {v}{nl}"));
                }
            }
        }
        if let Ok(b) = check(&text) {
            prop_assert_eq!(b.len(), budgets.len());
        }
    }
}

#[test]
fn the_good_file_parses() {
    let b = check(GOOD).unwrap();
    assert_eq!(b.len(), 3);
    assert_eq!(b[2].only.get("profile").map(String::as_str), Some("3g"));
    let crlf = GOOD.replace('\n', "\r\n");
    assert_eq!(check(&crlf).unwrap().len(), 3);
}
