//! The Trial's knobs as flags (`--max-streams`, `--pool`, `--tls-resume`, …),
//! made from the one table of knobs (`results::experiment::FIELDS`, section
//! `knobs`) rather than written out: each knob's flag, help, value name and
//! check are `lab::knob_flags`', the check being `lab::trial::Trial::set`,
//! the very check an experiment file's value goes through. An on/off knob is
//! a switch (`--tls-resume`). So a new knob needs no edit here. Commands
//! flatten `TrialArgs` and call `trial`.

use clap::builder::{ArgAction, PossibleValuesParser, ValueParser};
use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};
use lab::knob_flags as kf;
use lab::trial::{knob_fields, Trial};

pub use lab::knob_flags::default_of;

/// The knobs given on the command line, as (knob, text) in FIELDS order.
#[derive(Debug, Clone, Default)]
pub struct TrialArgs {
    pub given: Vec<(&'static str, String)>,
}

/// The parser of one knob's flag in a command that takes only a few knobs
/// (`load`, `serve`): the same check as `TrialArgs`', the typed value read
/// off the Trial by `read`.
pub fn knob<T: Clone + Send + Sync + 'static>(
    name: &'static str,
    read: fn(&Trial) -> T,
) -> ValueParser {
    ValueParser::from(move |s: &str| kf::read(name, s, read))
}

impl TrialArgs {
    /// The Trial of these flags, every other knob at its default.
    pub fn trial(&self) -> Result<Trial, String> {
        kf::trial(&self.given)
    }
}

impl Args for TrialArgs {
    fn augment_args(mut cmd: Command) -> Command {
        for f in knob_fields() {
            let (name, arg) = (f.name, Arg::new(f.name).long(kf::flag(f)));
            let arg = match kf::choices(f) {
                _ if kf::is_switch(f) => arg.action(ArgAction::SetTrue),
                Some(values) => arg.value_parser(PossibleValuesParser::new(values)),
                None => arg.value_parser(ValueParser::from(move |s: &str| kf::check(name, s))),
            };
            let arg = match kf::is_switch(f) {
                true => arg,
                false => arg.action(ArgAction::Set).value_name(kf::value_name(f)),
            };
            cmd = cmd.arg(arg.help(kf::help(f)).help_heading("Trial knobs"));
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
        self.given = knob_fields()
            .filter_map(|f| match kf::is_switch(f) {
                true => Some((f.name, m.get_flag(f.name).then(|| "on".to_string())?)),
                false => Some((f.name, m.get_one::<String>(f.name)?.clone())),
            })
            .collect();
        Ok(())
    }
}

/// Every knob of the table has its flag, which lands in `given` (what a
/// knob's value does is tested in lab::knob_flags); clap refuses a value
/// out of the knob's range or choices, naming the flag and the value.
#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        trial: TrialArgs,
    }

    fn parse(args: &[&str]) -> Result<TrialArgs, String> {
        let all = std::iter::once("x").chain(args.iter().copied());
        Ok(Cli::try_parse_from(all).map_err(|e| e.to_string())?.trial)
    }

    #[test]
    fn every_knob_has_a_flag_and_no_flag_is_the_default_trial() {
        assert_eq!(parse(&[]).unwrap().trial().unwrap(), Trial::default());
        for f in knob_fields() {
            let flag = format!("--{}", kf::flag(f));
            let given = match kf::is_switch(f) {
                true => parse(&[&flag]),
                false => parse(&[&flag, f.default]),
            };
            let want = if kf::is_switch(f) { "on" } else { f.default };
            assert_eq!(given.unwrap().given, [(f.name, want.to_string())], "{flag}");
        }
        for (flag, bad) in [("--max-streams", "0"), ("--pool", "per-planet")] {
            let e = parse(&[flag, bad]).unwrap_err();
            assert!(e.contains(flag) && e.contains(bad), "{flag} {bad}: {e}");
        }
    }
}
