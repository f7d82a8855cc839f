//! `spdylab profiles`: the named networks `--profile` and experiment files
//! take, each with its numbers and where they come from.

use crate::Failure;
use clap::Args;
use lab::text::profiles as text;

/// List the named network profiles: rates, RTT and source
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab profiles
  spdylab profiles --json
  spdylab compare --site youtube --profile 3g-fast --rtt 300ms   # 3G Fast's rates at 300 ms

A profile fills the link's rates and RTT that are not given: flags after it (or
an experiment's link fields beside `profile`) override single fields.")]
pub struct ProfilesArgs {
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ProfilesArgs) -> Result<i32, Failure> {
    let table = || text::table(link::PROFILES).join("\n");
    crate::print_json_or(args.json, || text::document(link::PROFILES), table);
    Ok(0)
}
