//! `spdylab import`: a HAR (or a directory of HARs, a corpus) into a
//! directory that `--site DIR` loads; prints what the import did.

use crate::Failure;
use clap::Args;
use std::path::PathBuf;

/// Import a recorded page (HAR 1.2) as a site: bodies, queries, statuses, headers, parents
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab import page.har --out sites/page        # then: spdylab compare --site sites/page ...
  spdylab import hars/ --out corpus               # every *.har: corpus/<name>/
  spdylab import page.har --json                  # the figures only, nothing written
  spdylab compare --site page.har --protocols https,h2   # a HAR also works directly

Parents come from Chrome's _initiator, else from references in earlier bodies, else the
document. Entries that cannot be replayed (data: URLs, failed, websocket, beacon, POST
without body, other pages of the HAR) are listed with their reason.")]
pub struct ImportArgs {
    /// A HAR file, or a directory of *.har files
    pub har: PathBuf,
    /// Write the site here (a directory that must not exist or be empty)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ImportArgs) -> Result<i32, Failure> {
    let out = args.out.as_deref();
    let imported = lab::sites::import_or_inspect(&args.har, out)?;
    let doc = || lab::sites::import_document(out, &imported);
    // Never empty: an import has at least one HAR.
    let text = || lab::text::sites::imported(&imported, out).join("\n");
    crate::print_json_or(args.json, doc, text);
    Ok(0)
}
