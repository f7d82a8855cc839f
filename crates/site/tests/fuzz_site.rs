//! Property tests with arbitrary inputs for site TOML files (the fuzzing of
//! issue 19): arbitrary text and valid files mutated line by line never panic,
//! and every error names the file and a line of it (but for "no [[resource]]",
//! which is about the whole file).
//! docs/fuzzing.md has the long runs and the coverage-guided target.

use proptest::prelude::*;

const GOOD: &str = r#"name = "shop"
seed = 7

[[resource]]
url = "//www.shop.test/"
kind = "html"
size = "5kb"

[[resource]]
url = "//static.shop.test/app.css"
kind = "css"
size = "2kb"
parent = "//www.shop.test/"
reveal = "head"

[[resource]]
url = "//static.shop.test/logo.png"
kind = "png"
size = "1500b"
parent = "//static.shop.test/app.css"
reveal = "css"

[[resource]]
url = "//www.shop.test/app.js"
kind = "js"
size = "3kb"
parent = "//www.shop.test/"
reveal = "body"
"#;

/// Parses `text` and checks what any error says of where it is.
fn check(text: &str) -> Result<site::Site, String> {
    let r = site::parse_toml("fuzz.toml", text);
    if let Err(e) = &r {
        let rest = e
            .strip_prefix("fuzz.toml:")
            .unwrap_or_else(|| panic!("the error does not name the file: {e}"));
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if digits.is_empty() {
            // Only an error about the whole file has no line to point at.
            assert!(rest.starts_with(" no [[resource]]"), "no line: {e}");
        } else {
            let line: usize = digits.parse().unwrap();
            let lines = text.lines().count().max(1) + 1;
            assert!((1..=lines).contains(&line), "line {line} of {lines}: {e}");
        }
    }
    r
}

/// A line that could be in a site file, right or wrong.
fn any_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("[[resource]]".to_string()),
        Just("[resource]".to_string()),
        "(url|parent) = \"//[a-z.]{0,12}/[a-z./]{0,10}\"",
        "kind = \"(html|css|js|png|font|flash|other|gif)\"",
        "size = \"[0-9]{0,12}(b|kb|mb|gb|kib|x)?\"",
        "reveal = \"(head|body|css|script|root|x)\"",
        "(name|about) = \"[ -~]{0,12}\"",
        "seed = -?[0-9]{0,22}",
        "\\PC{0,20}",
    ]
}

proptest! {
    #[test]
    fn fuzz_site_arbitrary_text_never_panics(text in "\\PC{0,400}") {
        let _ = check(&text);
    }

    #[test]
    fn fuzz_site_mutated_files_never_panic_and_errors_name_file_and_line(
        edits in testkit::lines::edits(any_line()),
    ) {
        let lines = testkit::lines::apply(GOOD, edits);
        let _ = check(&lines.join("\n"));
    }

    #[test]
    fn fuzz_site_files_written_from_parts_parse_or_say_where(
        sizes in proptest::collection::vec(0u64..200_000, 1..12),
        parents in proptest::collection::vec(any::<prop::sample::Index>(), 12),
        kinds in proptest::collection::vec(0usize..7, 12),
        reveals in proptest::collection::vec(0usize..4, 12),
        hosts in proptest::collection::vec(0usize..3, 12),
    ) {
        const KINDS: [&str; 7] = ["html", "css", "js", "png", "font", "flash", "other"];
        const REVEALS: [&str; 4] = ["head", "body", "css", "script"];
        let mut text = String::from("name = \"gen\"\n");
        for (i, size) in sizes.iter().enumerate() {
            let url = format!("//h{}.gen.test/r{i}", hosts[i]);
            let kind = if i == 0 { "html" } else { KINDS[kinds[i]] };
            text.push_str(&format!("\n[[resource]]\nurl = \"{url}\"\nkind = \"{kind}\"\nsize = \"{size}b\"\n"));
            if i > 0 {
                let p = parents[i].index(i);
                text.push_str(&format!("parent = \"//h{}.gen.test/r{p}\"\nreveal = \"{}\"\n", hosts[p], REVEALS[reveals[i]]));
            }
        }
        if let Ok(s) = check(&text) {
            prop_assert_eq!(s.resources.len(), sizes.len());
        }
    }
}
