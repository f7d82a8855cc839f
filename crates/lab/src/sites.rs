//! The one site resolver: a built-in site by name, or a site file (.toml) by
//! path — relative to a base directory for experiment files. Every command
//! and the campaigns resolve `--site` and `sites = [...]` through it.

pub use site::{Layout, Site, DEFAULT_SEED};
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a site name or path did not give a site.
#[derive(Debug)]
pub enum SiteError {
    /// Neither a built-in name nor a .toml path.
    Unknown(String),
    /// The file could not be read.
    Read(PathBuf, std::io::Error),
    /// The file is not a valid site (the message names the file and line).
    Invalid(String),
}

impl fmt::Display for SiteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SiteError::Unknown(name) => write!(
                f,
                "no built-in site '{name}' (built-in: {}); a site file ends in .toml",
                site::BUILTIN.join(", ")
            ),
            SiteError::Read(path, e) => write!(f, "{}: {e}", path.display()),
            SiteError::Invalid(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SiteError {}

impl SiteError {
    /// The message with the flag (`--site`) or key (`sites`) that gave the name.
    pub fn named(&self, key: &str) -> String {
        match self {
            SiteError::Invalid(_) => self.to_string(),
            SiteError::Read(..) if key.starts_with("--") => format!("{key} {self}"),
            _ => format!("{key}: {self}"),
        }
    }
}

/// A built-in site by name, or a site file by path.
pub fn resolve(name_or_path: &str, seed: u64) -> Result<Site, SiteError> {
    resolve_in(name_or_path, seed, Path::new(""))
}

/// As `resolve`, a relative file path taken from `base`.
pub fn resolve_in(name_or_path: &str, seed: u64, base: &Path) -> Result<Site, SiteError> {
    if let Some(site) = site::builtin(name_or_path, seed) {
        return Ok(site);
    }
    if name_or_path.ends_with(".toml") || name_or_path.contains('/') {
        let path = base.join(name_or_path);
        let text = std::fs::read_to_string(&path).map_err(|e| SiteError::Read(path.clone(), e))?;
        return site::parse_toml(&path.display().to_string(), &text).map_err(SiteError::Invalid);
    }
    Err(SiteError::Unknown(name_or_path.to_string()))
}

/// `site` in `layout` (`site::Layout::apply`); the error names the layout
/// and the resource.
pub fn lay_out(site: &Site, layout: Layout) -> Result<Site, SiteError> {
    layout
        .apply(site)
        .map_err(|e| SiteError::Invalid(e.to_string()))
}

/// The built-in sites, in their order.
pub fn builtin(seed: u64) -> Vec<Site> {
    site::BUILTIN
        .iter()
        .filter_map(|n| site::builtin(n, seed))
        .collect()
}

/// Writes each resource to DIR/<host>/<path>, as a real server's docroot.
pub fn export(s: &Site, dir: &Path) -> std::io::Result<()> {
    peers::write_docroot(s, dir)
}
