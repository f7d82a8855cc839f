//! `spdylab explain PATH`: why one protocol wins, from stored probes (verdict::explain).

use crate::Failure;
use clap::Args;
use std::path::PathBuf;

/// Why one protocol is faster: each PLT difference taken apart into measured mechanisms
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab compare --site youtube --protocols https,h2 --rtt 150ms --rate 1mbit --out yt.json
  spdylab explain yt.json
  spdylab explain results/fig2 --json

Each PLT is split into setup, request, window, transfer, retransmission, loss recovery,
queueing, browser and off-wire time from the packet log and the HAR (docs/explain.md).")]
pub struct ExplainArgs {
    /// What `compare --out FILE` wrote, or a campaign directory
    pub path: PathBuf,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ExplainArgs) -> Result<i32, Failure> {
    let groups = verdict::explain::read(&args.path)?;
    let text = || verdict::text::explain::lines(&groups).join("\n");
    crate::print_json_or(args.json, || verdict::explain::document(&groups), text);
    Ok(0)
}
