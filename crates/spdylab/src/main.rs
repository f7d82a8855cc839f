//! spdylab: does SPDY (and HTTP/2, HTTP/3) really make this page faster on this
//! network? The command line: parses arguments and calls the crates; nothing more.

mod bench;
mod calibrate;
mod compare;
mod crosscheck;
mod diff;
mod explain;
mod failure;
mod import;
mod knob_flags;
mod link_args;
mod loadtest;
mod paper;
mod peer_table;
mod priorities;
mod profiles;
mod progress;
mod record;
mod report;
mod serve;
mod shell;
mod signals;
mod sites;
mod survey;
mod sweep;
mod trial_args;

/// mimalloc rather than glibc malloc (perf): under `spdylab load` the generator
/// spent more time in glibc's free lists (`unlink_chunk`, `_int_free`) than in
/// TLS, and `spdylab bench` ~12 % of its h2 CPU.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};
use std::fmt::Display;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "spdylab",
    version,
    about = "A laboratory for SPDY, HTTP/2 and HTTP/3 over emulated networks",
    after_help = "Example:\n  spdylab calibrate --rtt 150ms --rate 1mbit"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    Shell(shell::ShellArgs),
    Calibrate(calibrate::CalibrateArgs),
    Sites(sites::SitesArgs),
    Profiles(profiles::ProfilesArgs),
    Import(import::ImportArgs),
    Record(record::RecordArgs),
    Serve(serve::ServeArgs),
    Compare(compare::CompareArgs),
    Crosscheck(crosscheck::CrosscheckArgs),
    Explain(explain::ExplainArgs),
    Diff(diff::DiffArgs),
    Sweep(sweep::SweepArgs),
    Merge(sweep::MergeArgs),
    Report(report::ReportArgs),
    Paper(paper::PaperArgs),
    Bench(bench::BenchArgs),
    Load(loadtest::LoadArgs),
    Peers(peer_table::PeersArgs),
    // `probe`: its old name (DESIGN.md), kept as an alias.
    #[command(visible_alias = "probe")]
    Survey(survey::SurveyArgs),
    Priorities(priorities::PrioritiesArgs),
}

/// Why a command failed, with its one mapping to exit codes (bad input and
/// refusals 2, setup 1, a stop by signal 130).
pub use failure::Failure;

/// Prints a command's outcome on stdout: with `--json` its one JSON document,
/// else its text for a person; only the one asked for is made.
pub fn print_json_or<D: Display, T: Display>(
    json: bool,
    doc: impl FnOnce() -> D,
    text: impl FnOnce() -> T,
) {
    match json {
        true => println!("{}", doc()),
        false => println!("{}", text()),
    }
}

/// Commands that only read files and print (no network, no children).
fn prints_only(cmd: &Cmd) -> bool {
    match cmd {
        Cmd::Sites(_)
        | Cmd::Profiles(_)
        | Cmd::Import(_)
        | Cmd::Merge(_)
        | Cmd::Report(_)
        | Cmd::Peers(_)
        | Cmd::Explain(_)
        | Cmd::Diff(_) => true,
        Cmd::Paper(args) => args.print,
        _ => false,
    }
}

fn main() -> ExitCode {
    // Parsing starts no thread, so the user namespace (rootless) may wait
    // until after it: `--help`, a bad flag, and the commands that only read
    // and print never need privileges (a machine without unprivileged user
    // namespaces refused even `spdylab --help` to a user).
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            // One line: what is wrong, naming the flag and the accepted forms.
            let rendered = e.render().to_string();
            let message: Vec<&str> = rendered
                .lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .filter(|l| !l.is_empty())
                .collect();
            eprintln!(
                "spdylab: {}",
                message.join(" ").trim_start_matches("error: ")
            );
            return ExitCode::from(2);
        }
    };
    if prints_only(&cli.command) {
        // `spdylab sites youtube | head` must end quietly when head does, not
        // panic on the closed pipe. Only for commands with no socket, TUN
        // device or child pipe of their own, which must keep SIGPIPE ignored.
        // No other thread exists yet.
        sys::default_sigpipe();
    } else if let Err(e) = lab::process_setup() {
        // Must come before any thread exists.
        eprintln!("spdylab: {e}");
        return ExitCode::from(1);
    }
    let result = match cli.command {
        Cmd::Shell(args) => shell::run(args),
        Cmd::Calibrate(args) => calibrate::run(args),
        Cmd::Sites(args) => sites::run(args),
        Cmd::Profiles(args) => profiles::run(args),
        Cmd::Import(args) => import::run(args),
        Cmd::Record(args) => record::run(args),
        Cmd::Serve(args) => serve::run(args),
        Cmd::Compare(args) => compare::run(args),
        Cmd::Crosscheck(args) => crosscheck::run(args),
        Cmd::Explain(args) => explain::run(args),
        Cmd::Diff(args) => diff::run(args),
        Cmd::Sweep(args) => sweep::run(args),
        Cmd::Merge(args) => sweep::merge(args),
        Cmd::Report(args) => report::run(args),
        Cmd::Paper(args) => paper::run(args),
        Cmd::Bench(args) => bench::run(args),
        Cmd::Load(args) => loadtest::run(args),
        Cmd::Peers(args) => peer_table::run(args),
        Cmd::Survey(args) => survey::run(args),
        Cmd::Priorities(args) => priorities::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => {
            if !matches!(e, Failure::Interrupted) {
                eprintln!("spdylab: {e}");
            }
            ExitCode::from(e.exit_code())
        }
    }
}
