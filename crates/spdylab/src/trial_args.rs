//! The Trial's knobs as flags (`--max-streams`, `--pool`, `--tls-resume`, …),
//! made from the one table of knobs (`results::experiment::FIELDS`, section
//! `knobs`) rather than written out: each knob's flag is its name with
//! dashes, its help and default are the table's, and its value is checked by
//! `lab::trial::Trial::set`, the very check an experiment file's value goes
//! through. An on/off knob is a switch (`--tls-resume`). So a new knob needs
//! no edit here. Commands flatten `TrialArgs` and call `apply`.

use clap::builder::{ArgAction, PossibleValuesParser, ValueParser};
use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};
use lab::trial::{knob_fields, Trial};
use results::experiment::{Field, Kind};

/// The knobs given on the command line, as (knob, text) in FIELDS order.
#[derive(Debug, Clone, Default)]
pub struct TrialArgs {
    pub given: Vec<(&'static str, String)>,
}

/// `max_streams` → `max-streams`.
fn flag(f: &Field) -> String {
    f.name.replace('_', "-")
}

/// An on/off knob: a switch.
fn is_switch(f: &Field) -> bool {
    matches!(f.kind, Kind::Choice(c) if c == ["off", "on"])
}

/// The value's name in the help: `N`, `DURATION`, `LAYOUT`, ….
fn value_name(f: &Field) -> &'static str {
    match f.kind {
        Kind::Int { .. } => "N",
        Kind::Delay => "DURATION|from-har",
        Kind::Duration => "DURATION",
        Kind::Layout => "LAYOUT",
        Kind::Text(_) => "COSTS",
        _ => "VALUE",
    }
}

/// Checks a flag's value as an experiment file's: the same range, the same parse.
fn checked(name: &'static str) -> ValueParser {
    ValueParser::from(move |s: &str| -> Result<String, String> {
        Trial::default().set(name, s)?;
        Ok(s.trim().to_string())
    })
}

/// The parser of one knob's flag in a command that takes only a few knobs
/// (`load`, `serve`): the same check as `TrialArgs`', the typed value read
/// off the Trial by `read`.
pub fn knob<T: Clone + Send + Sync + 'static>(
    name: &'static str,
    read: fn(&Trial) -> T,
) -> ValueParser {
    ValueParser::from(move |s: &str| -> Result<T, String> {
        let mut t = Trial::default();
        t.set(name, s)?;
        Ok(read(&t))
    })
}

/// A knob's default, as its flag shows and takes it.
pub fn default_of(name: &str) -> &'static str {
    results::experiment::field(name).map_or("", |f| f.default)
}

impl TrialArgs {
    /// Sets the given knobs on `trial`; an error names the flag.
    pub fn apply(&self, trial: &mut Trial) -> Result<(), String> {
        for (name, value) in &self.given {
            trial
                .set(name, value)
                .map_err(|e| format!("--{}: {e}", name.replace('_', "-")))?;
        }
        Ok(())
    }

    /// The Trial of these flags, every other knob at its default.
    pub fn trial(&self) -> Result<Trial, String> {
        let mut t = Trial::default();
        self.apply(&mut t)?;
        Ok(t)
    }
}

impl Args for TrialArgs {
    fn augment_args(mut cmd: Command) -> Command {
        for f in knob_fields() {
            let help = format!("{} [default: {}]", capitalized(f.help), f.default);
            let arg = Arg::new(f.name).long(flag(f)).help(help);
            let arg = if is_switch(f) {
                arg.action(ArgAction::SetTrue)
            } else {
                let arg = arg.action(ArgAction::Set).value_name(value_name(f));
                match f.kind {
                    Kind::Choice(values) => arg.value_parser(PossibleValuesParser::new(values)),
                    _ => arg.value_parser(checked(f.name)),
                }
            };
            cmd = cmd.arg(arg.help_heading("Trial knobs"));
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for TrialArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut args = TrialArgs::default();
        args.update_from_arg_matches(m)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        self.given.clear();
        for f in knob_fields() {
            if is_switch(f) {
                if m.get_flag(f.name) {
                    self.given.push((f.name, "on".into()));
                }
            } else if let Some(v) = m.get_one::<String>(f.name) {
                self.given.push((f.name, v.clone()));
            }
        }
        Ok(())
    }
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
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        trial: TrialArgs,
    }

    fn parse(args: &[&str]) -> Result<Trial, String> {
        let mut all = vec!["x"];
        all.extend_from_slice(args);
        Cli::try_parse_from(all)
            .map_err(|e| e.to_string())?
            .trial
            .trial()
    }

    #[test]
    fn no_flag_is_the_default_trial() {
        assert_eq!(parse(&[]).unwrap(), Trial::default());
    }

    #[test]
    fn every_knob_has_a_flag_that_sets_it() {
        let t = parse(&[
            "--max-streams",
            "1",
            "--conns-per-host",
            "2",
            "--depth",
            "3",
            "--tls",
            "1.2",
            "--server-delay",
            "from-har",
            "--layout",
            "mirror",
            "--cert",
            "rsa2048",
            "--tls-resume",
            "--headers",
            "minimal",
            "--cookie-bytes",
            "200",
            "--warm-metrics",
            "--pool",
            "per-host",
            "--browser-cost",
            "none",
            "--shards",
            "1",
        ])
        .unwrap();
        let d = Trial::default();
        assert_eq!(t.max_streams, 1);
        assert_eq!(t.conns_per_host, 2);
        assert_eq!(t.depth, 3);
        assert_eq!(t.tls13_only, Some(false));
        assert_eq!(t.server_delay, lab::trial::ServerDelay::FromHar);
        assert_eq!(t.layout, lab::sites::Layout::Mirror);
        assert_ne!(t.cert, d.cert);
        assert!(t.tls_resume && t.warm_metrics);
        assert_ne!(t.headers, d.headers);
        assert_eq!(t.headers.cookie_bytes, 200);
        assert_ne!(t.pool, d.pool);
        assert_ne!(t.browser_cost, d.browser_cost);
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
            let e = parse(&[flag, bad]).unwrap_err();
            assert!(e.contains(flag) && e.contains(bad), "{flag} {bad}: {e}");
        }
        // A value the file takes, the flag takes.
        assert_eq!(
            parse(&["--max-streams", "1000000"]).unwrap().max_streams,
            1_000_000
        );
    }
}
