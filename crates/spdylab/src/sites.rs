//! `spdylab sites`: list the built-in sites, or show one's tree.

use crate::Failure;
use clap::Args;
use lab::text::sites as text;

/// List the built-in sites, or show the tree of one (built-in or a TOML file)
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab sites
  spdylab sites youtube
  spdylab sites objects-200x5kB
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

pub fn run(args: SitesArgs) -> Result<i32, Failure> {
    let Some(name) = &args.site else {
        let sites = lab::sites::builtin(args.seed);
        let (doc, list) = (
            || lab::sites::list_document(&sites),
            || text::list(&sites).join("\n"),
        );
        crate::print_json_or(args.json, doc, list);
        return Ok(0);
    };
    let s = lab::sites::resolve(name, args.seed).map_err(|e| Failure::Usage(e.named("--site")))?;
    match (&args.export, args.json) {
        (Some(dir), _) => {
            lab::sites::export(&s, dir).map_err(|e| Failure::Usage(format!("--export {e}")))?;
            println!("{}", text::exported(&s, dir));
        }
        (None, true) => println!("{}", lab::sites::site_document(&s)),
        (None, false) => println!("{}", text::tree(&s).join("\n")),
    }
    Ok(0)
}
