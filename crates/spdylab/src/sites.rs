//! `spdylab sites`: list the built-in sites, or show one's tree.

use crate::Failure;
use clap::Args;
use lab::sites::Site;
use serde_json::json;

/// List the built-in sites, or show the tree of one (built-in or a TOML file)
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab sites
  spdylab sites youtube
  spdylab sites ./shop.toml --json")]
pub struct SitesArgs {
    /// A built-in site's name or a site file (.toml)
    pub site: Option<String>,
    /// Seed of the content and of the split of bytes between resources
    #[arg(long, default_value_t = lab::sites::DEFAULT_SEED)]
    pub seed: u64,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    /// Write the site's files under DIR/<host>/<path> (for real servers to serve)
    #[arg(long, value_name = "DIR", requires = "site")]
    pub export: Option<std::path::PathBuf>,
}

/// A built-in site by name, or a site file by path (`lab::sites::resolve`);
/// errors name the flag, the file and line.
pub fn site(name_or_path: &str, seed: u64) -> Result<Site, Failure> {
    lab::sites::resolve(name_or_path, seed).map_err(|e| Failure::Usage(e.named("--site")))
}

/// Parses `--layout` (origin, mirror, shards:N).
pub fn parse_layout(s: &str) -> Result<lab::sites::Layout, String> {
    s.parse()
}

/// `--site` resolved and laid out by `--layout`, with the number of server
/// addresses it is placed on (`--shards` for the origin layout, the
/// layout's own otherwise: `lab::trial::addresses`).
pub fn laid_out(
    name_or_path: &str,
    seed: u64,
    layout: lab::sites::Layout,
    shards: u16,
) -> Result<(Site, usize), Failure> {
    let origin = site(name_or_path, seed)?;
    let addresses = lab::trial::addresses(layout, shards as usize, &|k| format!("--{k}"))
        .map_err(Failure::Usage)?;
    let s = lab::sites::lay_out(&origin, layout)
        .map_err(|e| Failure::Usage(format!("--layout {layout}: {e}")))?;
    Ok((s, addresses))
}

fn kb(bytes: usize) -> String {
    format!("{:.1} kB", bytes as f64 / 1000.0)
}

pub fn run(args: SitesArgs) -> Result<i32, Failure> {
    match &args.site {
        None => {
            let sites: Vec<Site> = lab::sites::builtin(args.seed);
            if args.json {
                let list: Vec<_> = sites
                    .iter()
                    .map(|s| {
                        json!({"name": s.name, "resources": s.resources.len(),
                               "bytes": s.total_bytes(), "domains": s.hosts().len(), "about": s.about})
                    })
                    .collect();
                println!("{}", json!({"schema": 1, "sites": list}));
            } else {
                println!(
                    "{:<18} {:>9} {:>11} {:>10} {:>8}  about",
                    "site", "resources", "total", "average", "domains"
                );
                for s in &sites {
                    println!(
                        "{:<18} {:>9} {:>11} {:>10} {:>8}  {}",
                        s.name,
                        s.resources.len(),
                        kb(s.total_bytes()),
                        kb(s.total_bytes() / s.resources.len()),
                        s.hosts().len(),
                        s.about
                    );
                }
            }
        }
        Some(name) => {
            let s = site(name, args.seed)?;
            if let Some(dir) = &args.export {
                export(&s, dir)?;
                println!(
                    "wrote {} files ({}) under {}",
                    s.resources.len(),
                    kb(s.total_bytes()),
                    dir.display()
                );
                return Ok(0);
            }
            if args.json {
                println!("{}", json!({"schema": 1, "site": s}));
                return Ok(0);
            }
            println!(
                "{}: {} resources, {}, {} domains — {}",
                s.name,
                s.resources.len(),
                kb(s.total_bytes()),
                s.hosts().len(),
                s.about
            );
            print_tree(&s, 0, 0);
        }
    }
    Ok(0)
}

/// Writes each resource to DIR/<host>/<path>, as a real server's docroot.
fn export(s: &Site, dir: &std::path::Path) -> Result<(), Failure> {
    lab::sites::export(s, dir).map_err(|e| Failure::Usage(format!("--export {e}")))
}

fn print_tree(s: &Site, i: usize, depth: usize) {
    let r = &s.resources[i];
    println!(
        "{:indent$}{:<5} {:>9}  //{}{}  ({})",
        "",
        r.kind.name(),
        kb(r.size),
        r.host,
        r.path,
        format!("{:?}", r.reveal).to_lowercase(),
        indent = depth * 2
    );
    for (c, child) in s.resources.iter().enumerate() {
        if child.parent == Some(i) {
            print_tree(s, c, depth + 1);
        }
    }
}
