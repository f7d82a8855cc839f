//! The one site resolver: a built-in site by name, a site file (.toml), a
//! recorded page (.har, imported on the fly) or an imported directory (holding
//! `site.json`) by path — relative to a base directory for experiment files.
//! Every command and the campaigns resolve `--site` and `sites = [...]` through
//! it. Also `import`: HARs (one, or a directory of them: a corpus) into
//! directories, written whole or not at all; and the JSON of `spdylab sites`
//! and `spdylab import`.

use serde_json::json;
pub use site::{Layout, Preload, Site, DEFAULT_SEED};
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
                "no built-in site '{name}' (built-in: {}, {}); a site file ends in .toml, a recorded page in .har",
                site::builtin_names().collect::<Vec<_>>().join(", "),
                site::OBJECTS_FORM
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
    if name_or_path.ends_with(".har") {
        let path = base.join(name_or_path);
        return import_har(&path).map(|(s, _)| s);
    }
    let path = base.join(name_or_path);
    if path.join("site.json").is_file() {
        return load_dir(&path).map(|(s, _)| s);
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

/// `name_or_path` resolved (`resolve`) and laid out (`lay_out`), with the
/// number of server addresses it is placed on (`shards` for the origin
/// layout, the layout's own otherwise: `trial::addresses`). Err: the
/// message, naming `--site`, `--shards` or `--layout`.
pub fn laid_out(
    name_or_path: &str,
    seed: u64,
    layout: Layout,
    shards: u16,
) -> Result<(Site, usize), String> {
    let origin = resolve(name_or_path, seed).map_err(|e| e.named("--site"))?;
    let addresses = crate::trial::addresses(layout, shards as usize, &|k| format!("--{k}"))?;
    let s = lay_out(&origin, layout).map_err(|e| format!("--layout {layout}: {e}"))?;
    Ok((s, addresses))
}

/// Each of `names` as `laid_out`, and the number of addresses they are
/// placed on (`shards` for none).
pub fn laid_out_all(
    names: &[String],
    seed: u64,
    layout: Layout,
    shards: u16,
) -> Result<(Vec<Site>, usize), String> {
    let mut sites = Vec::new();
    let mut addresses = usize::from(shards);
    for name in names {
        let (site, n) = laid_out(name, seed, layout, shards)?;
        sites.push(site);
        addresses = n;
    }
    Ok((sites, addresses))
}

/// The built-in sites, in their order, the test pages (`site::TESTS`) last.
pub fn builtin(seed: u64) -> Vec<Site> {
    site::builtin_names()
        .filter_map(|n| site::builtin(n, seed))
        .collect()
}

/// Writes each resource to DIR/<host>/<path>, as a real server's docroot.
pub fn export(s: &Site, dir: &Path) -> std::io::Result<()> {
    peers::write_docroot(s, dir)
}

pub use site::har::ImportReport;

/// The site name of a HAR or directory: its file stem.
fn stem(path: &Path) -> String {
    let s = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "imported".into());
    if s.is_empty() {
        "imported".into()
    } else {
        s
    }
}

/// Imports one HAR file (errors name the file).
pub fn import_har(path: &Path) -> Result<(Site, ImportReport), SiteError> {
    let bytes = read_limited(path, site::har::MAX_HAR_BYTES)?;
    site::har::import(&stem(path), &bytes)
        .map_err(|e| SiteError::Invalid(format!("{}: {e}", path.display())))
}

/// The bytes of the file at `path`, refused when it holds more than `limit`:
/// by its size before it is read, and while it is read, for what has no size
/// (a pipe, `/dev/stdin`, `/proc`, `/dev/zero`) or grows meanwhile.
fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, SiteError> {
    use std::io::Read;
    let too_big = |len: Option<u64>| {
        SiteError::Invalid(format!(
            "{}: the HAR is {}; spdylab imports HARs of at most {} MB (one page)",
            path.display(),
            len.map_or_else(
                || format!("more than {} MB", limit >> 20),
                |l| format!("{} MB", l >> 20)
            ),
            limit >> 20
        ))
    };
    let read_err = |e| SiteError::Read(path.to_path_buf(), e);
    let file = std::fs::File::open(path).map_err(read_err)?;
    let len = file.metadata().map_err(read_err)?.len();
    if len > limit {
        return Err(too_big(Some(len)));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > limit {
        return Err(too_big(None));
    }
    Ok(bytes)
}

/// Reads an imported directory (DIR/site.json and DIR/bodies/).
pub fn load_dir(dir: &Path) -> Result<(Site, ImportReport), SiteError> {
    let file = dir.join("site.json");
    let text = std::fs::read_to_string(&file).map_err(|e| SiteError::Read(file.clone(), e))?;
    site::har::load(&text, |f| {
        std::fs::read(dir.join(f)).map_err(|e| format!("{}: {e}", dir.join(f).display()))
    })
    .map_err(|e| SiteError::Invalid(format!("{}: {e}", dir.display())))
}

/// Writes an imported site into the directory `d` (DIR/site.json and
/// DIR/bodies/): `import` calls it for each site inside the one directory it
/// writes whole.
fn store_dir(site: &Site, report: &ImportReport, d: &Path) -> std::io::Result<()> {
    let (json, files) = site::har::store(site, report);
    std::fs::create_dir_all(d.join("bodies"))?;
    for (name, bytes) in &files {
        std::fs::write(d.join(name), bytes)?;
    }
    std::fs::write(d.join("site.json"), &json)
}

/// What `import` did with one HAR.
#[derive(Debug)]
pub struct Imported {
    pub har: PathBuf,
    pub name: String,
    pub report: ImportReport,
}

/// Why `import` failed: bad input (exit 2) or a write failure (exit 1).
#[derive(Debug)]
pub enum ImportError {
    Input(String),
    Write(String),
}

/// The HARs `path` names: itself, or the `*.har` files of a directory (sorted).
pub fn hars(path: &Path) -> Result<Vec<PathBuf>, SiteError> {
    if path.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| SiteError::Read(path.to_path_buf(), e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "har"))
            .collect();
        v.sort();
        if v.is_empty() {
            return Err(SiteError::Invalid(format!(
                "{}: no .har files in the directory",
                path.display()
            )));
        }
        return Ok(v);
    }
    Ok(vec![path.to_path_buf()])
}

/// Imports a HAR into `out`, or a directory of HARs into `out/<stem>/` each
/// (a corpus). Every HAR is read and checked before anything is written, and
/// `out` is written whole or not at all.
pub fn import(path: &Path, out: &Path) -> Result<Vec<Imported>, ImportError> {
    let list = hars(path).map_err(|e| ImportError::Input(e.to_string()))?;
    let mut sites = Vec::new();
    for h in &list {
        let (s, r) = import_har(h).map_err(|e| ImportError::Input(e.to_string()))?;
        sites.push((h.clone(), s, r));
    }
    let corpus = path.is_dir();
    let write = |tmp: &Path| -> std::io::Result<()> {
        for (_, s, r) in &sites {
            let d = if corpus {
                tmp.join(&s.name)
            } else {
                tmp.to_path_buf()
            };
            store_dir(s, r, &d)?;
        }
        Ok(())
    };
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| ImportError::Write(format!("{}: {e}", parent.display())))?;
    }
    results::durable::write_dir_whole(out, write)
        .map_err(|e| ImportError::Write(format!("{}: {e}", out.display())))?;
    Ok(sites
        .into_iter()
        .map(|(har, s, report)| Imported {
            har,
            name: s.name,
            report,
        })
        .collect())
}

/// What `spdylab import` does: the HARs at `path` imported into `out`
/// (`import`), or, without `out`, only read and reported.
pub fn import_or_inspect(path: &Path, out: Option<&Path>) -> Result<Vec<Imported>, ImportError> {
    if let Some(out) = out {
        return import(path, out);
    }
    let input = |e: SiteError| ImportError::Input(e.to_string());
    let mut v = Vec::new();
    for har in hars(path).map_err(input)? {
        let (s, report) = import_har(&har).map_err(input)?;
        v.push(Imported {
            har,
            name: s.name,
            report,
        });
    }
    Ok(v)
}

/// `import --json`: where the sites were written, and each HAR's import.
pub fn import_document(out: Option<&Path>, imported: &[Imported]) -> serde_json::Value {
    let list: Vec<_> = imported
        .iter()
        .map(|i| json!({"har": i.har, "name": i.name, "import": i.report}))
        .collect();
    json!({"schema": 1, "out": out, "sites": list})
}

/// `sites --json`: the built-in sites, each with its size and domains.
pub fn list_document(sites: &[Site]) -> serde_json::Value {
    let list: Vec<_> = sites
        .iter()
        .map(|s| {
            json!({"name": s.name, "resources": s.resources.len(),
                   "bytes": s.total_bytes(), "domains": s.hosts().len(), "about": s.about})
        })
        .collect();
    json!({"schema": 1, "sites": list})
}

/// `sites NAME --json`: the whole site.
pub fn site_document(s: &Site) -> serde_json::Value {
    json!({"schema": 1, "site": s})
}

/// Expands the glob patterns among site names (`corpus/*.har`: `*` and `?` in
/// the file name only), relative to `base`, each into its matches sorted (as
/// `corpus/a.har`, each a recorded page named after its file); other names are
/// kept, duplicates dropped. Err: (the pattern, why) — a pattern that matches
/// nothing, or wildcards in a directory.
pub fn expand_globs(names: &[String], base: &Path) -> Result<Vec<String>, (String, String)> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        if !name.contains(['*', '?']) {
            if !out.contains(name) {
                out.push(name.clone());
            }
            continue;
        }
        let (dir, pattern) = match name.rsplit_once('/') {
            Some((d, p)) => (Some(d), p),
            None => (None, name.as_str()),
        };
        if dir.is_some_and(|d| d.contains(['*', '?'])) {
            return Err((name.clone(), "wildcards only in the file name".into()));
        }
        let path = base.join(dir.unwrap_or(""));
        let mut found: Vec<String> = std::fs::read_dir(&path)
            .map_err(|e| (name.clone(), format!("{}: {e}", path.display())))?
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|f| !f.starts_with('.') && wildcard(pattern.as_bytes(), f.as_bytes()))
            .map(|f| dir.map_or(f.clone(), |d| format!("{d}/{f}")))
            .collect();
        if found.is_empty() {
            return Err((
                name.clone(),
                format!("'{name}' matches no file (in {})", path.display()),
            ));
        }
        found.sort();
        for f in found {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    Ok(out)
}

/// Whether `name` matches `pattern` (`*`: any run, `?`: one byte).
fn wildcard(pattern: &[u8], name: &[u8]) -> bool {
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            wildcard(&pattern[1..], name) || (!name.is_empty() && wildcard(pattern, &name[1..]))
        }
        (Some(b'?'), Some(_)) => wildcard(&pattern[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => wildcard(&pattern[1..], &name[1..]),
        _ => false,
    }
}

/// Which of these errors are bad input, a refusal or a failure to run (`crate::Error`).
impl From<ImportError> for crate::Error {
    fn from(e: ImportError) -> crate::Error {
        match e {
            ImportError::Input(m) => crate::Error::Usage(m),
            ImportError::Write(m) => crate::Error::Setup(m.into()),
        }
    }
}

#[cfg(test)]
mod glob_tests {
    use super::*;

    /// Issue 36: a HAR without a size (a pipe, `/dev/stdin`, `/dev/zero`)
    /// was read whole before its size was checked, without an end for
    /// `/dev/zero`: it is now cut at the limit and refused.
    #[test]
    fn fuzz_regression_a_har_without_a_size_is_refused_past_the_limit() {
        let e = read_limited(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        let e = e.to_string();
        assert!(
            e.starts_with(
                "/dev/zero: the HAR is more than 1 MB; spdylab imports HARs of at most 1 MB"
            ),
            "{e}"
        );
        let dir = std::env::temp_dir().join(format!("spdylab-limit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("big.har");
        std::fs::File::create(&f).unwrap().set_len(3 << 20).unwrap();
        let e = read_limited(&f, 1 << 20).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "big.har: the HAR is 3 MB; spdylab imports HARs of at most 1 MB (one page)"
            ),
            "{e}"
        );
        std::fs::write(&f, b"{}").unwrap();
        assert_eq!(read_limited(&f, 2).unwrap(), b"{}");
        assert!(read_limited(&f, 1).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn globs_expand_sorted_and_unmatched_is_an_error() {
        let dir = std::env::temp_dir().join(format!("spdylab-glob-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("corpus")).unwrap();
        for f in ["b.har", "a.har", "c.txt"] {
            std::fs::write(dir.join("corpus").join(f), "").unwrap();
        }
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            expand_globs(&names(&["icons", "corpus/*.har"]), &dir).unwrap(),
            names(&["icons", "corpus/a.har", "corpus/b.har"])
        );
        let e = expand_globs(&names(&["corpus/*.zip"]), &dir).unwrap_err();
        assert!(e.1.contains("matches no file"), "{e:?}");
        assert!(expand_globs(&names(&["*/a.har"]), &dir).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
