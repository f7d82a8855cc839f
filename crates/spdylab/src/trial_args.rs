//! The Trial's knobs as flags (`--max-streams`, `--pool`, `--tls-resume`, …),
//! made from the one table of knobs (`results::experiment::FIELDS`) rather
//! than written out: each flag's name, help, value name and check (the one
//! of an experiment file's value) are `knob_flags`'; an on/off knob is a
//! switch. A new knob needs no edit here. Commands flatten `TrialArgs`.

use crate::knob_flags as kf;
use clap::builder::{ArgAction, PossibleValuesParser, ValueParser};
use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};
use lab::trial::{knob_fields, Trial};

pub use crate::knob_flags::default_of;

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
            // A switch takes no value (its value name is not shown); a knob
            // of choices lists them; any other is checked as a file's value.
            let arg = match kf::choices(f) {
                _ if kf::is_switch(f) => arg.action(ArgAction::SetTrue),
                Some(values) => arg.value_parser(PossibleValuesParser::new(values)),
                None => arg.value_parser(ValueParser::from(move |s: &str| kf::check(name, s))),
            };
            let arg = arg.value_name(kf::value_name(f)).help(kf::help(f));
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
        self.given = knob_fields()
            .filter_map(|f| match kf::is_switch(f) {
                true => Some((f.name, m.get_flag(f.name).then(|| "on".to_string())?)),
                false => Some((f.name, m.get_one::<String>(f.name)?.clone())),
            })
            .collect();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every knob of the table has its flag, which lands in `given` (what a
    /// knob's value does is tested in knob_flags).
    #[test]
    fn every_knob_has_a_flag() {
        for f in knob_fields() {
            let flag = format!("--{}", kf::flag(f));
            let (args, want) = match kf::is_switch(f) {
                true => (vec!["x", &flag], "on"),
                false => (vec!["x", &flag, f.default], f.default),
            };
            let m = TrialArgs::augment_args(Command::new("x")).try_get_matches_from(args);
            let given = TrialArgs::from_arg_matches(&m.unwrap()).unwrap().given;
            assert_eq!(given, [(f.name, want.to_string())], "{flag}");
        }
    }
}
