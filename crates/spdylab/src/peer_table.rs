//! `spdylab peers`: the capability table of the servers (`--server`) — which
//! protocols each serves and which knobs it honours, as verified — and where
//! each real server's binary is, with its version, or how to install it.

use crate::Failure;
use clap::Args;

/// What each server (--server) serves and honours, and whether it is installed
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab peers
  spdylab peers --json

A Trial a server cannot do exactly is refused with the reason (e.g. h2o always
advertises 100 concurrent streams: --max-streams 6 needs another server), never
measured as something else. A stream limit above the site's number of resources
cannot bind, so it counts as any other such limit.")]
pub struct PeersArgs {
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: PeersArgs) -> Result<i32, Failure> {
    let table = lab::peers::table();
    let text = || lab::text::peers::table(&table).join("\n");
    crate::print_json_or(args.json, || table.document(), text);
    Ok(0)
}
