//! The campaign directory: its lock against a second writer, the pinned copy
//! of the experiment, the sites' fingerprints (`sites.json`), and every write
//! into it — whole or not at all (`durable`), probes.jsonl appended one
//! fsync'd line at a time.

use super::SweepError;
use results::experiment::{self, campaign_differences, pinned_text, Experiment};
use results::{
    calibration_json, CalibrationEntry, CALIBRATION_FILE, EXPERIMENT_FILE, HAR_DIR, PROBES_FILE,
};
use site::Site;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An open campaign directory, locked against a second writer.
pub struct CampaignDir {
    pub dir: PathBuf,
    pub experiment: Experiment,
    _lock: File,
}

pub(super) fn at(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// The campaign's record of each site it loads: what a site value (a built-in
/// name or a file, relative to the experiment file) turned out to be.
pub const SITES_FILE: &str = "sites.json";

/// A site's fingerprint: FNV-1a 64 of its JSON (resources, sizes, seed).
fn fingerprint(site: &Site) -> String {
    let json = serde_json::to_string(site).unwrap_or_default();
    format!("{:016x}", fnv1a(json.as_bytes()))
}

/// FNV-1a, 64 bits: stable across runs and machines.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

pub(super) fn describe_site(v: &serde_json::Value) -> String {
    format!(
        "{} resources, {:.1} kB, fingerprint {}",
        v["resources"],
        v["bytes"].as_f64().unwrap_or(0.0) / 1e3,
        v["fingerprint"].as_str().unwrap_or("?")
    )
}

/// Checks the sites against those the campaign in `dir` ran before (a site
/// file moved, edited or resolved against another directory is another site),
/// and records the new ones.
pub(super) fn check_sites(
    dir: &Path,
    sites: &HashMap<String, Arc<Site>>,
) -> Result<(), SweepError> {
    let path = dir.join(SITES_FILE);
    let mut known =
        read_sites(&path, "; delete the file to record the sites anew")?.unwrap_or_default();
    let mut names: Vec<&String> = sites.keys().collect();
    names.sort();
    let mut added = false;
    for name in names {
        let site = &sites[name];
        let now = serde_json::json!({
            "fingerprint": fingerprint(site),
            "resources": site.resources.len(),
            "bytes": site.total_bytes(),
        });
        match known.get(name) {
            Some(then) if then["fingerprint"] == now["fingerprint"] => {}
            Some(then) => {
                return Err(SweepError::Usage(format!(
                    "{}: site '{name}' is not the site this campaign ran (then: {}; now: {}; \
                     a site file is read relative to the experiment file): use another --out, \
                     or restore the site",
                    dir.display(),
                    describe_site(then),
                    describe_site(&now)
                )))
            }
            None => {
                known.insert(name.clone(), now);
                added = true;
            }
        }
    }
    if added {
        write_sites(&path, &known)?;
    }
    Ok(())
}

/// A sites.json: each site's name to its fingerprint, resources and bytes.
pub(super) type Sites = serde_json::Map<String, serde_json::Value>;

/// Reads the sites.json at `path` (None when there is none); an unreadable
/// one is a usage error naming its line, `hint` after it.
pub(super) fn read_sites(path: &Path, hint: &str) -> Result<Option<Sites>, SweepError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(at(path, e).into()),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| SweepError::Usage(format!("{}:{}: {e}{hint}", path.display(), e.line())))
}

/// Writes a sites.json whole.
pub(super) fn write_sites(path: &Path, sites: &Sites) -> io::Result<()> {
    let text = serde_json::to_string_pretty(sites).unwrap_or_default() + "\n";
    write_atomically(path, text.as_bytes())
}

/// How long `open` waits for a campaign directory's lock before refusing.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(15);

impl CampaignDir {
    /// Opens (or creates) DIR for `experiment`, whose text is `text`. Refuses a
    /// DIR that holds a different experiment, or that another sweep is writing.
    /// The copy kept is `text` pinned (`experiment::pinned_text`); labels (name,
    /// description) may change between runs, and the copy follows them.
    pub fn open(dir: &Path, experiment: Experiment, text: &str) -> Result<CampaignDir, SweepError> {
        std::fs::create_dir_all(dir).map_err(|e| at(dir, e))?;
        let lock_path = dir.join(".lock");
        let lock = File::create(&lock_path).map_err(|e| at(&lock_path, e))?;
        // A sweep killed a moment ago (kill -9) may still hold the lock through
        // the processes it started, which die with it within moments
        // (PR_SET_PDEATHSIG): wait for them a little before refusing.
        let patience = std::time::Instant::now() + LOCK_PATIENCE;
        while !sys::try_lock_exclusive(&lock) {
            if std::time::Instant::now() >= patience {
                return Err(SweepError::Usage(format!(
                    "{} is in use by another spdylab sweep",
                    dir.display()
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let saved = dir.join(EXPERIMENT_FILE);
        match std::fs::read_to_string(&saved) {
            Ok(old_text) => {
                let old = experiment::parse(&saved.display().to_string(), &old_text)
                    .map_err(|e| SweepError::Usage(e.to_string()))?;
                let differ = campaign_differences(&old, &experiment);
                if !differ.is_empty() {
                    return Err(SweepError::Usage(format!(
                        "{} holds results of a different experiment ({} differs from {}); \
                         use another --out, or restore the experiment file{}",
                        dir.display(),
                        differ.join(", "),
                        saved.display(),
                        if differ.iter().any(|d| d == "server" || d == "client") {
                            " (and the --server/--client it ran with)"
                        } else {
                            ""
                        }
                    )));
                }
                if old != experiment {
                    // Only labels changed: the copy follows them.
                    write_atomically(&saved, pinned_text(&experiment, text).as_bytes())?;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                write_atomically(&saved, pinned_text(&experiment, text).as_bytes())?;
            }
            Err(e) => return Err(at(&saved, e).into()),
        }
        note_build(dir)?;
        Ok(CampaignDir {
            dir: dir.to_path_buf(),
            experiment,
            _lock: lock,
        })
    }
}

/// Adds this binary's build to the directory's list (`settings::BUILDS_FILE`)
/// unless it is there: what `diff` says of the builds that made a campaign.
fn note_build(dir: &Path) -> io::Result<()> {
    use verdict::settings::{campaign_builds, BUILD, BUILDS_FILE};
    let mut builds = campaign_builds(dir).unwrap_or_default();
    if builds.iter().any(|b| b == BUILD) {
        return Ok(());
    }
    builds.push(BUILD.to_string());
    let path = dir.join(BUILDS_FILE);
    write_atomically(&path, format!("{}\n", builds.join("\n")).as_bytes())
}

/// Writes `path` whole or not at all (`durable::write_whole`); a failure names
/// the file and leaves no temporary.
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    results::durable::write_whole(path, bytes).map_err(|e| at(path, e))
}

/// fsyncs the directory holding `path`, so that a new name in it survives a crash.
fn sync_dir(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    results::durable::sync_dir(dir).map_err(|e| at(dir, e))
}

/// Appends records to probes.jsonl, each line fsync'd (fdatasync) before the
/// next probe is counted. A write that fails (a full disk) is cut back off
/// the file, so it still ends in a whole line, and no line is appended after.
pub(super) struct Appender {
    file: File,
    path: PathBuf,
    /// The file's length: every byte a whole line.
    len: u64,
    broken: bool,
}

impl Appender {
    pub(super) fn open(dir: &Path) -> io::Result<Appender> {
        let path = dir.join(PROBES_FILE);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| at(&path, e))?;
        let len = file.metadata().map_err(|e| at(&path, e))?.len();
        sync_dir(&path)?;
        Ok(Appender {
            file,
            path,
            len,
            broken: false,
        })
    }

    pub(super) fn append(&mut self, line: &str) -> io::Result<()> {
        if self.broken {
            return Err(io::Error::other(format!(
                "{}: not appended after an earlier failed write",
                self.path.display()
            )));
        }
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        let result = self
            .file
            .write_all(&buf)
            .and_then(|()| self.file.sync_data());
        match result {
            Ok(()) => {
                self.len += buf.len() as u64;
                Ok(())
            }
            Err(e) => {
                self.broken = true;
                // A part of the line may be in: cut it off (were this to fail
                // too, the next run drops a cut-short last line).
                let _ = self.file.set_len(self.len);
                let _ = self.file.sync_data();
                Err(io::Error::new(
                    e.kind(),
                    format!(
                        "{}: {e}; the file ends at its last whole line: make room and run \
                         the same command again to resume",
                        self.path.display()
                    ),
                ))
            }
        }
    }
}

/// A stable file name for a Trial's HAR.
pub(super) fn har_name(trial: &str) -> String {
    format!("{HAR_DIR}/{:016x}.har", fnv1a(trial.as_bytes()))
}

pub(super) fn write_calibration(dir: &Path, entries: &[CalibrationEntry]) -> io::Result<()> {
    write_atomically(
        &dir.join(CALIBRATION_FILE),
        calibration_json(entries).as_bytes(),
    )
}
