//! Merge: the directories of slices run apart (`--shard i/n`) joined into
//! one campaign directory — each Trial's latest record once, its HAR (and
//! filmstrip), the calibrations and the sites' fingerprints.

use super::dir::{
    at, describe_site, read_sites, write_atomically, write_calibration, write_sites, Appender,
    CampaignDir, Sites, SITES_FILE,
};
use super::SweepError;
use results::experiment::{self, campaign_differences, Experiment};
use results::{latest, read_calibration, read_probes, ProbeRecord, EXPERIMENT_FILE, PROBES_FILE};
use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

/// Joins the inputs' sites.json into `out`'s; slices that ran different
/// sites under one name are refused.
fn merge_sites(inputs: &[PathBuf], out: &Path) -> Result<(), SweepError> {
    let mut all = Sites::default();
    let mut from: HashMap<String, PathBuf> = HashMap::new();
    for dir in std::iter::once(&out.to_path_buf()).chain(inputs) {
        let path = dir.join(SITES_FILE);
        let Some(map) = read_sites(&path, "")? else {
            continue;
        };
        for (name, v) in map {
            match all.get(&name) {
                Some(w) if w["fingerprint"] != v["fingerprint"] => {
                    return Err(SweepError::Usage(format!(
                        "site '{name}' differs between {} ({}) and {} ({})",
                        from[&name].display(),
                        describe_site(w),
                        path.display(),
                        describe_site(&v)
                    )))
                }
                Some(_) => {}
                None => {
                    from.insert(name.clone(), path.clone());
                    all.insert(name, v);
                }
            }
        }
    }
    if !all.is_empty() {
        write_sites(&out.join(SITES_FILE), &all)?;
    }
    Ok(())
}

/// Joins campaign directories (slices of one experiment) into `out`.
/// Returns (records written, duplicates skipped).
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<(usize, usize), SweepError> {
    let mut experiment: Option<(Experiment, String, PathBuf)> = None;
    for dir in inputs {
        let path = dir.join(EXPERIMENT_FILE);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| SweepError::Usage(format!("{}: {e}", path.display())))?;
        let exp = experiment::parse(&path.display().to_string(), &text)
            .map_err(|e| SweepError::Usage(e.to_string()))?;
        match &experiment {
            None => experiment = Some((exp, text, path)),
            Some((first, _, first_path)) if !campaign_differences(first, &exp).is_empty() => {
                return Err(SweepError::Usage(format!(
                    "{} and {} are different experiments ({} differ)",
                    first_path.display(),
                    path.display(),
                    campaign_differences(first, &exp).join(", ")
                )))
            }
            Some(_) => {}
        }
    }
    let Some((exp, text, _)) = experiment else {
        return Err(SweepError::Usage(
            "merge needs at least one directory".into(),
        ));
    };
    let cd = CampaignDir::open(out, exp, &text)?;
    let mut seen: HashSet<String> = latest(read_probes(&cd.dir, true)?)
        .into_iter()
        .map(|p| p.trial)
        .collect();
    let mut calibration = read_calibration(&cd.dir)?;
    let mut appender = Appender::open(&cd.dir)?;
    let (mut written, mut skipped) = (0, 0);
    for dir in inputs {
        if dir.canonicalize().ok() == cd.dir.canonicalize().ok() {
            continue;
        }
        // Copy raw lines, so that no field is lost in translation.
        let path = dir.join(PROBES_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(at(&path, e).into()),
        };
        let stored = latest(read_probes(dir, false)?);
        let keep: HashMap<&str, &ProbeRecord> =
            stored.iter().map(|p| (p.trial.as_str(), p)).collect();
        for line in text.lines() {
            let Ok(p) = serde_json::from_str::<ProbeRecord>(line) else {
                continue; // a line cut short by a kill
            };
            // Only the latest record of each Trial, once.
            let latest_here = keep
                .get(p.trial.as_str())
                .is_some_and(|k| k.started == p.started);
            if !latest_here || seen.contains(&p.trial) {
                skipped += 1;
                continue;
            }
            if let Some(har) = &p.har {
                let (from, to) = (dir.join(har), cd.dir.join(har));
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                if from.exists() {
                    let bytes = std::fs::read(&from).map_err(|e| at(&from, e))?;
                    write_atomically(&to, &bytes)?;
                }
                // Its filmstrip (Chromium's frames) beside it, frame by frame.
                let (films, filmt) = (lab::har::filmstrip_dir(&from), lab::har::filmstrip_dir(&to));
                if films.is_dir() {
                    std::fs::create_dir_all(&filmt).map_err(|e| at(&filmt, e))?;
                    for frame in std::fs::read_dir(&films).map_err(|e| at(&films, e))? {
                        let frame = frame.map_err(|e| at(&films, e))?.path();
                        let bytes = std::fs::read(&frame).map_err(|e| at(&frame, e))?;
                        write_atomically(
                            &filmt.join(frame.file_name().unwrap_or_default()),
                            &bytes,
                        )?;
                    }
                }
            }
            appender.append(line)?;
            seen.insert(p.trial);
            written += 1;
        }
        for c in read_calibration(dir)? {
            if !calibration.iter().any(|k| k.link == c.link) {
                calibration.push(c);
            }
        }
    }
    write_calibration(&cd.dir, &calibration)?;
    merge_sites(inputs, &cd.dir)?;
    Ok((written, skipped))
}
