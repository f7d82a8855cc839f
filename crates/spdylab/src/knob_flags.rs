//! The Trial's knobs as command-line flags (`--max-streams`, `--pool`,
//! `--tls-resume`, …), from the one table of knobs
//! (`results::experiment::FIELDS`, section `knobs`): each knob's flag is its
//! name with dashes, its help and default are the table's, an on/off knob is
//! a switch, and a value is checked by `lab::trial::Trial::set`, the very
//! check an experiment file's value goes through. The CLI's spelling of the
//! knobs: `trial_args` makes its clap arguments from these functions, so a
//! new knob needs no edit there or here.

use lab::trial::Trial;
use results::experiment::{Field, Kind};

/// The knob's flag without its dashes: `max_streams` → `max-streams`.
pub fn flag(f: &Field) -> String {
    f.name.replace('_', "-")
}

/// An on/off knob: a switch (given: on), as its kind says (`Kind::Switch`).
pub fn is_switch(f: &Field) -> bool {
    f.kind == Kind::Switch
}

/// The value's name in the help: `N`, `DURATION`, `LAYOUT`, ….
pub fn value_name(f: &Field) -> &'static str {
    match f.kind {
        Kind::Int { .. } => "N",
        Kind::Delay => "DURATION|from-har",
        Kind::Duration => "DURATION",
        Kind::Layout => "LAYOUT",
        Kind::Text(_) => "COSTS",
        _ => "VALUE",
    }
}

/// The flag's help: the table's, as a sentence, with its default.
pub fn help(f: &Field) -> String {
    format!("{} [default: {}]", capitalized(f.help), f.default)
}

/// The possible values of a knob of choices (None: any text, `check`ed).
pub fn choices(f: &Field) -> Option<&'static [&'static str]> {
    f.kind.choices()
}

/// A flag's value checked as an experiment file's (the same range, the same
/// parse), trimmed.
pub fn check(name: &str, text: &str) -> Result<String, String> {
    Trial::default().set(name, text)?;
    Ok(text.trim().to_string())
}

/// A knob's value, checked as `check` does, and typed: `read` takes it off a
/// Trial on which it was set (for commands that take only a few knobs).
pub fn read<T>(name: &str, text: &str, read: fn(&Trial) -> T) -> Result<T, String> {
    let mut t = Trial::default();
    t.set(name, text)?;
    Ok(read(&t))
}

/// A knob's default, as its flag shows and takes it.
pub fn default_of(name: &str) -> &'static str {
    results::experiment::field(name).map_or("", |f| f.default)
}

/// Sets the given knobs, (knob, text) pairs, on `trial`; an error names the flag.
pub fn apply(given: &[(&str, String)], trial: &mut Trial) -> Result<(), String> {
    for (name, value) in given {
        trial
            .set(name, value)
            .map_err(|e| format!("--{}: {e}", name.replace('_', "-")))?;
    }
    Ok(())
}

/// The Trial of the given knobs, every other knob at its default.
pub fn trial(given: &[(&str, String)]) -> Result<Trial, String> {
    let mut t = Trial::default();
    apply(given, &mut t)?;
    Ok(t)
}

/// The table's help begins in lower case (it reads after a key in docs); a
/// flag's help begins a sentence.
fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|first| first.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab::trial::knob_fields;

    /// The knobs named by their flags, as the command line gives them.
    fn parse(flags: &[(&str, &str)]) -> Result<Trial, String> {
        let mut given = Vec::new();
        for (flag, value) in flags {
            let f = knob_fields()
                .find(|f| format!("--{}", super::flag(f)) == *flag)
                .ok_or_else(|| format!("no knob {flag}"))?;
            let value = if is_switch(f) { "on" } else { value };
            if !is_switch(f) && choices(f).is_none() {
                check(f.name, value).map_err(|e| format!("{flag} {value}: {e}"))?;
            }
            given.push((f.name, value.to_string()));
        }
        trial(&given)
    }

    #[test]
    fn no_knob_is_the_default_trial() {
        assert_eq!(parse(&[]).unwrap(), Trial::default());
    }

    /// Each flag sets its knob as `Trial::set` does, alone and all together.
    #[test]
    fn every_knob_has_a_flag_that_sets_it() {
        let flags = [
            ("--max-streams", "1"),
            ("--conns-per-host", "2"),
            ("--depth", "3"),
            ("--tls", "1.2"),
            ("--server-delay", "from-har"),
            ("--layout", "mirror"),
            ("--cert", "rsa2048"),
            ("--tls-resume", ""),
            ("--headers", "minimal"),
            ("--cookie-bytes", "200"),
            ("--warm-metrics", ""),
            ("--pool", "per-host"),
            ("--browser-cost", "none"),
            ("--shards", "2"),
        ];
        let mut want = Trial::default();
        for (flag, value) in flags {
            let alone = parse(&[(flag, value)]).unwrap();
            assert_ne!(alone, Trial::default(), "{flag} {value}");
            let name = flag.trim_start_matches("--").replace('-', "_");
            let value = if value.is_empty() { "on" } else { value };
            want.set(&name, value).unwrap();
        }
        assert_eq!(parse(&flags).unwrap(), want);
    }

    /// The flag's range is the experiment file's: refused alike, named.
    #[test]
    fn out_of_range_values_are_refused_as_in_experiment_files() {
        for (flag, bad) in [
            ("--max-streams", "0"),
            ("--max-streams", "1000001"),
            ("--conns-per-host", "65"),
            ("--depth", "0"),
            ("--cookie-bytes", "4097"),
            ("--shards", "255"),
            ("--server-delay", "soon"),
            ("--browser-cost", "parse=fast"),
            ("--pool", "per-planet"),
        ] {
            let e = parse(&[(flag, bad)]).unwrap_err();
            assert!(e.contains(flag) && e.contains(bad), "{flag} {bad}: {e}");
        }
        // A value the file takes, the flag takes.
        let mut want = Trial::default();
        want.set("max_streams", "1000000").unwrap();
        assert_eq!(parse(&[("--max-streams", "1000000")]).unwrap(), want);
    }

    #[test]
    fn flags_helps_and_value_names_come_from_the_table() {
        let f = results::experiment::field("max_streams").unwrap();
        assert_eq!(flag(f), "max-streams");
        assert_eq!(value_name(f), "N");
        assert!(help(f).starts_with(char::is_uppercase), "{}", help(f));
        assert!(help(f).ends_with(&format!("[default: {}]", f.default)));
        let resume = results::experiment::field("tls_resume").unwrap();
        assert!(is_switch(resume) && !is_switch(f));
        assert_eq!(default_of("max_streams"), f.default);
        assert_eq!(read("shards", "7", |t| t.shards), Ok(7));
        assert_eq!(check("max_streams", " 7 ").as_deref(), Ok("7"));
    }
}
