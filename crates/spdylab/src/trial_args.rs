//! The Trial's knobs as flags (`--max-streams`, `--pool`, `--tls-resume`, …),
//! made from the one table of knobs (`results::experiment::FIELDS`) rather
//! than written out: each flag's name, help, value name and check (the one
//! of an experiment file's value) are `knob_flags`'; an on/off knob is a
//! switch. A new knob needs no edit here. Commands flatten `TrialArgs`
//! (every knob: compare, crosscheck) or `ServedArgs` (the built-in server's:
//! serve, load).

use crate::knob_flags as kf;
use clap::builder::{ArgAction, PossibleValuesParser, ValueParser};
use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};
use lab::trial::{knob_fields, Trial};
use results::experiment::{Field, Holder};
use std::marker::PhantomData;

pub use crate::knob_flags::default_of;

/// Which knobs a command takes as flags, under which help heading.
pub trait KnobSet: Send + Sync + 'static {
    /// Whose knobs (None: every one), as FIELDS' rows say (`Field::holder`).
    const HOLDER: Option<Holder>;
    const HEADING: &'static str;

    /// The set's fields, in FIELDS order.
    fn fields() -> impl Iterator<Item = &'static Field> {
        knob_fields().filter(|f| Self::HOLDER.is_none_or(|h| f.holder == h))
    }
}

/// Every knob of a Trial.
#[derive(Debug, Clone)]
pub struct AllKnobs;

impl KnobSet for AllKnobs {
    const HOLDER: Option<Holder> = None;
    const HEADING: &'static str = "Trial knobs";
}

/// The built-in server's knobs (those `server::Knobs` holds: FIELDS' rows
/// of `Holder::BuiltinServer`): what `serve` and `load` take; a real server
/// refuses those it cannot honour (`Trial::refusal_for`).
#[derive(Debug, Clone)]
pub struct ServerKnobs;

impl KnobSet for ServerKnobs {
    const HOLDER: Option<Holder> = Some(Holder::BuiltinServer);
    const HEADING: &'static str = "Server knobs";
}

/// The knobs of set `S` given on the command line, as (knob, text) in
/// FIELDS order.
#[derive(Debug, Clone)]
pub struct KnobArgs<S> {
    pub given: Vec<(&'static str, String)>,
    set: PhantomData<S>,
}

impl<S> Default for KnobArgs<S> {
    fn default() -> Self {
        KnobArgs {
            given: Vec::new(),
            set: PhantomData,
        }
    }
}

/// Every knob's flag (compare, crosscheck).
pub type TrialArgs = KnobArgs<AllKnobs>;
/// The built-in server's knobs' flags (serve, load).
pub type ServedArgs = KnobArgs<ServerKnobs>;

/// The parser of one knob's flag in a command that takes only a few knobs
/// (`load`, `serve`): the same check as `TrialArgs`', the typed value read
/// off the Trial by `read`.
pub fn knob<T: Clone + Send + Sync + 'static>(
    name: &'static str,
    read: fn(&Trial) -> T,
) -> ValueParser {
    ValueParser::from(move |s: &str| kf::read(name, s, read))
}

impl<S> KnobArgs<S> {
    /// The Trial of these flags, every other knob at its default.
    pub fn trial(&self) -> Result<Trial, String> {
        kf::trial(&self.given)
    }
}

impl<S: KnobSet> Args for KnobArgs<S> {
    fn augment_args(mut cmd: Command) -> Command {
        for f in S::fields() {
            let (name, arg) = (f.name, Arg::new(f.name).long(kf::flag(f)));
            // A switch takes no value (its value name is not shown); a knob
            // of choices lists them; any other is checked as a file's value.
            let arg = match kf::choices(f) {
                _ if kf::is_switch(f) => arg.action(ArgAction::SetTrue),
                Some(values) => arg.value_parser(PossibleValuesParser::new(values)),
                None => arg.value_parser(ValueParser::from(move |s: &str| kf::check(name, s))),
            };
            let arg = arg.value_name(kf::value_name(f)).help(kf::help(f));
            cmd = cmd.arg(arg.help_heading(S::HEADING));
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl<S: KnobSet> FromArgMatches for KnobArgs<S> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut args = KnobArgs::default();
        args.update_from_arg_matches(m)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        self.given = S::fields()
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

    /// The server's set: its knobs' flags and no other, each reaching the
    /// server's knobs (`Trial::served`).
    #[test]
    fn the_servers_knobs_are_flags_that_reach_the_server() {
        let cmd = ServedArgs::augment_args(Command::new("x"));
        let flags: Vec<_> = cmd.get_arguments().filter_map(|a| a.get_long()).collect();
        assert!(flags.contains(&"notsent-lowat") && flags.contains(&"server-priorities"));
        assert!(
            !flags.contains(&"pool") && !flags.contains(&"view"),
            "{flags:?}"
        );
        let args = [
            "x",
            "--notsent-lowat",
            "16384",
            "--server-priorities",
            "off",
            "--tls",
            "1.3",
        ];
        let m = cmd.try_get_matches_from(args).unwrap();
        let t = ServedArgs::from_arg_matches(&m).unwrap().trial().unwrap();
        assert_eq!(t.served.notsent_lowat, Some(16384));
        assert_eq!(t.served.priorities, proto::priority::Policy::Ignore);
        assert_eq!(t.tls13_only(), Some(true));
    }
}
