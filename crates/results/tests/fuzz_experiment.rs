//! Property tests with arbitrary inputs for experiment TOML files (the fuzzing
//! of issue 19): arbitrary text, valid files mutated line by line and files
//! written from arbitrary axis values and ranges never panic; every error names
//! the file and a line of it (but for too many Trials, which is about the whole
//! file); a file that parses is within the Trial limit. docs/fuzzing.md has the
//! long runs and the coverage-guided target.

use proptest::prelude::*;
use results::experiment::{self, MAX_TRIALS};
use results::ExperimentError;

const GOOD: &str = r#"# A sweep.
name = "rtt"
description = "YouTube and Twitter"
sites = ["youtube", "twitter"]
protocols = ["https", "h2", "spdy3"]
baseline = "https"
reps = 5
warmup = 1
seed = 3
server = "builtin"
client = "model"
timeout = "60s"

[link]
rtt = { from = "10ms", to = "490ms", step = "80ms" }
rate = ["1mbit", "10mbit"]
loss = "1%"
queue = "256p"
iw = { from = 3, to = 30, factor = 2 }

[knobs]
shards = [1, 4]
server_delay = "0ms"

[[reference]]
label = "004 Fig. 2"
gain_pct = 12.5
axis = "rtt"
at = "90ms"
"#;

fn check(text: &str) -> Result<results::Experiment, ExperimentError> {
    let r = experiment::parse("fuzz.toml", text);
    match &r {
        Ok(e) => assert!(e.trial_count() <= MAX_TRIALS),
        Err(e) => {
            let shown = e.to_string();
            assert!(shown.starts_with("fuzz.toml:"), "{shown}");
            let lines = text.lines().count().max(1) + 1;
            match e {
                ExperimentError::Field { line, .. }
                | ExperimentError::Syntax {
                    line: Some(line), ..
                } => assert!(
                    (1..=lines).contains(line),
                    "line {line} of {lines}: {shown}"
                ),
                ExperimentError::Syntax { line: None, .. } => panic!("no line: {shown}"),
                ExperimentError::TooManyTrials { .. } => {}
            }
        }
    }
    r
}

/// A value an axis could be given, right or wrong.
fn any_value() -> impl Strategy<Value = String> {
    let scalar = prop_oneof![
        "\"[0-9]{1,6}(\\.[0-9]{1,3})?(ms|s|us|ns|m|h|mbit|kbit|gbit|bit|kb|mb|b|%|p)?\"",
        "\"(unlimited|default|youtube|twitter|codel:5ms,100ms|ge:1%,10%,0.5,1|cubic|reno|bbr|1.2|1.3|x)\"",
        // Values of the keys added since (profile, cpu_slowdown,
        // notsent_lowat, cross_traffic, browser_cost, pool, ...).
        "\"(fios|cable|lte|4g|dsl|3g-fast|3g|5g|3G|none|fitted|chromium|per-host|per-address|from-har|shards:[0-9]{1,3}|origin|mirror)\"",
        "\"((cubic|bbr|reno|udp|x):[0-9]{0,4}(kbit|mbit)?,? ?){0,3}\"",
        "\"((navigation|parse|script|request|x)=[0-9]{0,4}(ms|us|s)?(/kB)?,?){0,4}\"",
        "(0|1|2|4|20|21|-1|16384|67108864|67108865|9223372036854775807)",
        "-?[0-9]{1,20}",
        "-?[0-9]{1,5}\\.[0-9]{1,5}(e-?[0-9]{1,3})?",
        Just("true".to_string()),
        Just("nan".to_string()),
        Just("inf".to_string()),
    ];
    prop_oneof![
        scalar.clone(),
        proptest::collection::vec(scalar.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
        proptest::collection::vec(("(from|to|step|factor|by)", scalar), 0..4).prop_map(|kv| {
            let body: Vec<String> = kv.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            format!("{{ {} }}", body.join(", "))
        }),
    ]
}

/// A line that could be in an experiment file, right or wrong.
fn any_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("[link]".to_string()),
        Just("[knobs]".to_string()),
        Just("[[reference]]".to_string()),
        (
            "(rtt|delay_down|delay_up|rate|down|up|loss|queue|iw|cc|shards|max_streams|tls|conns_per_host|depth|server_delay|sites|protocols|reps|warmup|seed|site_seed|timeout|server|client|baseline|gain_pct|label|axis|at|x|profile|cross_traffic|cpu_slowdown|notsent_lowat|browser_cost|pool|layout|cert|tls_resume|headers|cookie_bytes|warm_metrics)",
            any_value()
        )
            .prop_map(|(k, v)| format!("{k} = {v}")),
        "\\PC{0,24}",
    ]
}

proptest! {
    #[test]
    fn fuzz_experiment_arbitrary_text_never_panics(text in "\\PC{0,400}") {
        let _ = check(&text);
    }

    #[test]
    fn fuzz_experiment_mutated_files_never_panic_and_errors_name_file_and_line(
        edits in testkit::lines::edits(any_line()),
    ) {
        let lines = testkit::lines::apply(GOOD, edits);
        let _ = check(&lines.join("\n"));
    }

    #[test]
    fn fuzz_experiment_axes_from_arbitrary_values_never_panic(
        axes in proptest::collection::vec(
            ("(rtt|delay_down|delay_up|rate|down|up|loss|queue|iw|cc)", any_value()),
            0..4,
        ),
        knobs in proptest::collection::vec(("(shards|max_streams|tls|conns_per_host|depth|server_delay|[a-z_]{1,8})", any_value()), 0..3),
    ) {
        let mut text = String::from("sites = \"youtube\"\nprotocols = [\"h2\"]\n[link]\n");
        let mut seen = Vec::new();
        for (k, v) in &axes {
            if !seen.contains(k) {
                seen.push(k.clone());
                text.push_str(&format!("{k} = {v}\n"));
            }
        }
        text.push_str("[knobs]\n");
        for (k, v) in &knobs {
            if !seen.contains(k) {
                seen.push(k.clone());
                text.push_str(&format!("{k} = {v}\n"));
            }
        }
        if let Ok(e) = check(&text) {
            // What parsed reads back the same from its own values.
            for (name, values) in &e.axes {
                let f = experiment::field(name).unwrap();
                for v in values.iter().filter(|v| !v.is_empty()) {
                    prop_assert_eq!(&experiment::canonical(f.kind, v).unwrap(), v);
                }
            }
        }
    }
}

proptest! {
    /// Every key of `experiment::FIELDS` (those added by later issues too:
    /// `profile`, `cpu_slowdown`, `notsent_lowat`, `cross_traffic`, ...), in
    /// its section, with arbitrary values and its own choices.
    #[test]
    fn fuzz_experiment_every_field_with_arbitrary_values_never_panics(
        fields in proptest::collection::vec(
            (any::<prop::sample::Index>(), any::<prop::sample::Index>(), any_value(), 0u8..3),
            1..5,
        ),
    ) {
        let mut sections: Vec<(&str, Vec<String>)> = vec![("", vec![]), ("link", vec![]), ("knobs", vec![])];
        let mut seen = Vec::new();
        for (f, choice, v, form) in &fields {
            let f = &experiment::FIELDS[f.index(experiment::FIELDS.len())];
            if seen.contains(&f.name) {
                continue;
            }
            seen.push(f.name);
            let v = match (f.kind.choices(), f.kind, *form) {
                // One of its choices (a switch's: off, on), alone or in a list.
                (Some(c), _, 0) => format!("\"{}\"", c[choice.index(c.len())]),
                (Some(c), _, 1) => format!("[\"{}\", {v}]", c[choice.index(c.len())]),
                // An integer in its range.
                (_, experiment::Kind::Int { min, max, .. }, 0 | 1) => {
                    let span = (max - min).clamp(0, 1 << 20) as usize + 1;
                    (min + choice.index(span) as i64).to_string()
                }
                _ => v.clone(),
            };
            let name = if f.name == "site" { "sites" } else { f.name };
            let section = sections.iter_mut().find(|(s, _)| *s == f.section).unwrap();
            section.1.push(format!("{name} = {v}"));
        }
        let mut text = String::from("protocols = [\"h2\"]\n");
        if !seen.contains(&"site") {
            text.push_str("sites = \"youtube\"\n");
        }
        for (section, lines) in &sections {
            if !section.is_empty() {
                text.push_str(&format!("[{section}]\n"));
            }
            for l in lines {
                text.push_str(l);
                text.push('\n');
            }
        }
        if let Ok(e) = check(&text) {
            for (name, values) in &e.axes {
                let f = experiment::field(name).unwrap();
                for v in values.iter().filter(|v| !v.is_empty()) {
                    prop_assert_eq!(&experiment::canonical(f.kind, v).unwrap(), v);
                }
            }
        }
    }
}

#[test]
fn every_field_is_in_a_section_the_fuzz_writes() {
    for f in experiment::FIELDS {
        assert!(["", "link", "knobs"].contains(&f.section), "{}", f.name);
    }
}

#[test]
fn the_good_file_parses() {
    let e = check(GOOD).unwrap();
    assert_eq!(e.values("rtt").len(), 7);
}
