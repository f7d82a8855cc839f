//! `spdylab import`: a HAR (or a directory of HARs, a corpus) into a
//! directory that `--site DIR` loads; prints what the import did.

use crate::Failure;
use clap::Args;
use lab::sites::ImportReport;
use serde_json::json;
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

fn print(name: &str, har: &std::path::Path, r: &ImportReport) {
    println!(
        "{name} ({}): {} entries, {} pages → {} resources on {} hosts, {:.1} kB",
        har.display(),
        r.entries,
        r.pages,
        r.resources,
        r.hosts,
        r.bytes as f64 / 1000.0
    );
    println!(
        "  bodies: {} recorded, {} generated ({} enlarged to hold their references)",
        r.bodies_recorded, r.bodies_generated, r.bodies_enlarged
    );
    println!(
        "  parents: {} initiator, {} discovery, {} document, {} redirect",
        r.parents_initiator, r.parents_discovery, r.parents_document, r.parents_redirect
    );
    let versions: Vec<String> = r
        .http_versions
        .iter()
        .map(|(v, n)| format!("{} x{n}", if v.is_empty() { "(none)" } else { v }))
        .collect();
    println!("  httpVersion: {}", versions.join(", "));
    let mut reasons: Vec<(String, usize)> = Vec::new();
    for s in &r.skipped {
        match reasons.iter_mut().find(|(x, _)| *x == s.reason) {
            Some((_, n)) => *n += 1,
            None => reasons.push((s.reason.clone(), 1)),
        }
    }
    println!("  skipped: {}", r.skipped.len());
    for s in &r.skipped {
        println!("    {}  {}", s.reason, s.url);
    }
}

pub fn run(args: ImportArgs) -> Result<i32, Failure> {
    let imported = match &args.out {
        Some(out) => lab::sites::import(&args.har, out)?,
        None => {
            let list = lab::sites::hars(&args.har).map_err(|e| Failure::Usage(e.to_string()))?;
            let mut v = Vec::new();
            for h in list {
                let (s, report) =
                    lab::sites::import_har(&h).map_err(|e| Failure::Usage(e.to_string()))?;
                v.push(lab::sites::Imported {
                    har: h,
                    name: s.name,
                    report,
                });
            }
            v
        }
    };
    if args.json {
        let list: Vec<_> = imported
            .iter()
            .map(|i| json!({"har": i.har, "name": i.name, "import": i.report}))
            .collect();
        println!("{}", json!({"schema": 1, "out": args.out, "sites": list}));
        return Ok(0);
    }
    for i in &imported {
        print(&i.name, &i.har, &i.report);
    }
    if let Some(out) = &args.out {
        println!("wrote {}", out.display());
    }
    Ok(0)
}
