//! What `spdylab sweep` asks before a campaign runs: the experiment file read
//! and parsed, `--server`/`--client` pinned where the file leaves them, and the
//! sites' globs (`sites = ["corpus/*.har"]`) expanded, in the experiment and
//! in the text the campaign keeps. Everything on the parsed TOML: a key or a
//! pattern named in a comment or inside another string is not one. Also the
//! values of `--jobs` and `--shard`; and the run of a prepared campaign,
//! with what it did (`Ran`).

use crate::SweepError;
use results::experiment::{self, Experiment};
use results::{ClientKind, ServerKind};
use serde::Deserialize;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// A sweep as the command line gives it.
#[derive(Debug, Clone, Default)]
pub struct SweepRequest {
    /// The experiment file (TOML).
    pub experiment: PathBuf,
    /// The server, for a file that does not set `server`.
    pub server: Option<ServerKind>,
    /// The client, for a file that does not set `client`.
    pub client: Option<ClientKind>,
}

/// A sweep ready for `campaign::CampaignDir::open` and `campaign::sweep`.
#[derive(Debug, Clone)]
pub struct PreparedSweep {
    /// The experiment, flags pinned and globs expanded.
    pub experiment: Experiment,
    /// The file's text with each glob replaced by what it matched (a corpus
    /// that changes is a changed experiment); comments and layout kept.
    pub text: String,
    /// The directory site names are found from: the file's.
    pub site_base: PathBuf,
}

/// `spdylab sweep FILE… --out DIR`: each experiment file prepared
/// (`prepare`) with its campaign directory — DIR itself for one file,
/// DIR/<file name without .toml> for each of several (two of one name
/// refused, naming the second).
pub fn prepare_each(
    experiments: &[PathBuf],
    out: &Path,
    server: Option<ServerKind>,
    client: Option<ClientKind>,
) -> Result<Vec<(PreparedSweep, PathBuf)>, SweepError> {
    let prepare_one = |experiment: &Path| {
        prepare(&SweepRequest {
            experiment: experiment.to_path_buf(),
            server,
            client,
        })
    };
    if let [one] = experiments {
        return Ok(vec![(prepare_one(one)?, out.to_path_buf())]);
    }
    let mut campaigns: Vec<(PreparedSweep, PathBuf)> = Vec::new();
    for file in experiments {
        let stem = file.file_stem().unwrap_or_default();
        let dir = out.join(stem);
        if campaigns.iter().any(|(_, d)| *d == dir) {
            return Err(SweepError::Usage(format!(
                "{}: two experiment files named {}: each campaign goes to --out/<file name>",
                file.display(),
                stem.to_string_lossy()
            )));
        }
        campaigns.push((prepare_one(file)?, dir));
    }
    Ok(campaigns)
}

/// Reads, parses and completes the request's experiment. Every error is
/// `SweepError::Usage` naming the file (and its line, where there is one).
pub fn prepare(req: &SweepRequest) -> Result<PreparedSweep, SweepError> {
    let file = req.experiment.display().to_string();
    let text = std::fs::read_to_string(&req.experiment)
        .map_err(|e| SweepError::Usage(format!("{file}: {e}")))?;
    // Errors name the lines of the file as the user wrote it.
    let mut exp = experiment::parse(&file, &text).map_err(|e| SweepError::Usage(e.to_string()))?;
    // --server/--client become the experiment's keys: the campaign's copy
    // pins them (so that it says what ran, and a rerun without them is a
    // changed experiment).
    for (key, given) in [
        ("server", req.server.map(|s| s.name())),
        ("client", req.client.map(|c| c.name())),
    ] {
        let Some(v) = given else { continue };
        if experiment::sets_key(&text, key) {
            return Err(SweepError::Usage(format!(
                "--{key} {v}: {file} sets {key} already; change it there or drop the flag"
            )));
        }
    }
    if let Some(s) = req.server {
        exp.server = s;
    }
    if let Some(c) = req.client {
        exp.client = c;
    }
    let site_base = req
        .experiment
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let text = expand_site_globs(&file, &mut exp, &text, &site_base)?;
    Ok(PreparedSweep {
        experiment: exp,
        text,
        site_base,
    })
}

/// `sites = ["corpus/*.har"]`: every matching file a site, sorted, found from
/// `base`. Expands the experiment's site axis and returns `text` with each
/// glob string replaced by the names it matched (in the array it stood in, or
/// as an array where `sites` was one string).
pub fn expand_site_globs(
    file: &str,
    exp: &mut Experiment,
    text: &str,
    base: &Path,
) -> Result<String, SweepError> {
    let Some((_, values)) = exp.axes.iter_mut().find(|(n, _)| n == "site") else {
        return Ok(text.to_string());
    };
    if !values.iter().any(|v| is_glob(v)) {
        return Ok(text.to_string());
    }
    let strings = site_strings(text);
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    for (pattern, span, in_array) in &strings {
        if !is_glob(pattern) {
            continue;
        }
        let line = text[..span.start].matches('\n').count() + 1;
        let matched = lab::sites::expand_globs(std::slice::from_ref(pattern), base)
            .map_err(|(_, why)| SweepError::Usage(format!("{file}:{line}: sites: {why}")))?;
        let list: Vec<String> = matched.iter().map(|m| toml_string(m)).collect();
        let list = if *in_array {
            list.join(", ")
        } else {
            format!("[{}]", list.join(", "))
        };
        edits.push((span.clone(), list));
    }
    *values = lab::sites::expand_globs(values, base)
        .map_err(|(_, why)| SweepError::Usage(format!("{file}: sites: {why}")))?;
    let mut text = text.to_string();
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    for (span, list) in edits {
        text.replace_range(span, &list);
    }
    Ok(text)
}

fn is_glob(name: &str) -> bool {
    name.contains(['*', '?'])
}

/// `s` as a TOML string.
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The strings of the top-level `sites` key as the TOML parser found them:
/// each with the byte range of its literal in `text` and whether it stands in
/// an array. Empty where `text` is not TOML or `sites` is neither form.
fn site_strings(text: &str) -> Vec<(String, Range<usize>, bool)> {
    #[derive(Deserialize)]
    struct Many {
        sites: Vec<Spanned<String>>,
    }
    #[derive(Deserialize)]
    struct One {
        sites: Spanned<String>,
    }
    if let Ok(m) = toml::from_str::<Many>(text) {
        return m
            .sites
            .into_iter()
            .map(|s| (s.span(), s.into_inner()))
            .map(|(span, s)| (s, span, true))
            .collect();
    }
    if let Ok(o) = toml::from_str::<One>(text) {
        let span = o.sites.span();
        return vec![(o.sites.into_inner(), span, false)];
    }
    Vec::new()
}

/// Testbeds run at once by default: `auto`, as many as the cores' CPU budget
/// allows (sixteen per core at most; a point weighs 0.05 of a core plus half a
/// core per 100 Mbit/s of its link, an unlimited link or a calibration a whole core).
pub const DEFAULT_JOBS: &str = "auto";

/// `--jobs`: a number of testbeds, or None for `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jobs(pub Option<usize>);

/// `--jobs`: a number of testbeds (1..=64), or `auto`.
pub fn parse_jobs(s: &str) -> Result<Jobs, String> {
    if s == "auto" {
        return Ok(Jobs(None));
    }
    match s.parse::<usize>() {
        Ok(n) if (1..=64).contains(&n) => Ok(Jobs(Some(n))),
        _ => Err(format!("'{s}' is not 1..=64 or auto")),
    }
}

/// `--shard I/N`: slice I of N, 1-based.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("'{s}' is not I/N with 1 <= I <= N, e.g. 3/8");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

/// What a campaign run did: its Trials (in this slice), those finished
/// before, the probes run now and those that failed, and its seconds.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ran {
    pub trials: usize,
    pub finished_before: usize,
    pub ran: usize,
    pub failed: usize,
    pub seconds: f64,
}

impl Ran {
    /// The exit status: 1 when a probe failed, else 0.
    pub fn exit_code(&self) -> i32 {
        i32::from(self.failed > 0)
    }

    /// The run as one JSON object (`sweep --json`), with where its results are.
    pub fn document(&self, out: &Path) -> serde_json::Value {
        serde_json::json!({"schema": 1, "out": out, "trials": self.trials,
                           "finished_before": self.finished_before, "ran": self.ran,
                           "failed": self.failed, "seconds": self.seconds})
    }
}

/// Runs the prepared campaign in the directory `out`, created or resumed
/// (`campaign::CampaignDir::open`, `campaign::sweep`); `on_event` hears of
/// its start, calibrations and probes.
pub fn run(
    sweep: PreparedSweep,
    out: &Path,
    opts: &crate::SweepOptions,
    on_event: &mut dyn FnMut(crate::Event<'_>),
) -> Result<Ran, SweepError> {
    let cd = crate::CampaignDir::open(out, sweep.experiment, &sweep.text)?;
    let started = std::time::Instant::now();
    let mut ran = Ran::default();
    ran.failed = crate::sweep(&cd, opts, &sweep.site_base, &mut |event| {
        if let crate::Event::Start {
            total,
            finished,
            pending,
        } = event
        {
            (ran.trials, ran.finished_before, ran.ran) = (total, finished, pending);
        }
        on_event(event);
    })?;
    ran.seconds = started.elapsed().as_secs_f64();
    Ok(ran)
}

/// Runs the prepared campaigns as one pool (`campaign::sweep_pooled`), each
/// in its own directory, created or resumed: every campaign's pending work in
/// one longest-first queue, so that the testbeds one campaign's tail leaves
/// idle run the next campaign's work. `on_event` hears each event with its
/// campaign's index. Each campaign's `Ran` counts its own probes; its seconds
/// run from the pool's start to its own last probe.
pub fn run_pooled(
    sweeps: Vec<(PreparedSweep, PathBuf)>,
    opts: &crate::SweepOptions,
    on_event: &mut dyn FnMut(usize, crate::Event<'_>),
) -> Result<Vec<Ran>, SweepError> {
    let mut dirs = Vec::with_capacity(sweeps.len());
    let mut bases = Vec::with_capacity(sweeps.len());
    for (sweep, out) in sweeps {
        dirs.push(crate::CampaignDir::open(
            &out,
            sweep.experiment,
            &sweep.text,
        )?);
        bases.push(sweep.site_base);
    }
    let campaigns: Vec<crate::Campaign<'_>> = dirs
        .iter()
        .zip(&bases)
        .map(|(dir, site_base)| crate::Campaign { dir, site_base })
        .collect();
    let started = std::time::Instant::now();
    let mut ran = vec![Ran::default(); campaigns.len()];
    let failed = crate::sweep_pooled(&campaigns, opts, &mut |c, event| {
        match event {
            crate::Event::Start {
                total,
                finished,
                pending,
            } => (ran[c].trials, ran[c].finished_before, ran[c].ran) = (total, finished, pending),
            crate::Event::Probe { .. } => ran[c].seconds = started.elapsed().as_secs_f64(),
            crate::Event::Calibrated { .. } => {}
        }
        on_event(c, event);
    })?;
    for (r, f) in ran.iter_mut().zip(failed) {
        r.failed = f;
    }
    Ok(ran)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "spdylab-sweep-request-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write(path: &Path, text: &str) {
        std::fs::write(path, text).unwrap();
    }

    const SITE: &str = "[[resources]]\npath = \"/\"\nbytes = 100\n";

    #[test]
    fn one_file_sweeps_into_out_several_into_their_names_and_one_name_twice_is_refused() {
        let dir = scratch("each");
        let exp = "sites = [\"icons\"]\nprotocols = [\"https\", \"h2\"]\n";
        std::fs::create_dir_all(dir.join("again")).unwrap();
        let (rtt, loss) = (dir.join("rtt.toml"), dir.join("loss.toml"));
        let again = dir.join("again").join("rtt.toml");
        for f in [&rtt, &loss, &again] {
            write(f, exp);
        }
        let out = dir.join("out");
        let one = prepare_each(std::slice::from_ref(&rtt), &out, None, None).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].1, out);
        let two = prepare_each(&[rtt.clone(), loss], &out, None, None).unwrap();
        let dirs: Vec<&Path> = two.iter().map(|(_, d)| d.as_path()).collect();
        assert_eq!(dirs, [out.join("rtt"), out.join("loss")]);
        match prepare_each(&[rtt, again], &out, None, None) {
            Err(SweepError::Usage(m)) => {
                assert!(m.contains("two experiment files named rtt"), "{m}")
            }
            other => panic!("not refused: {:?}", other.map(|c| c.len())),
        }
    }

    #[test]
    fn a_key_in_a_comment_or_a_string_is_not_set() {
        let dir = scratch("comment");
        let file = dir.join("exp.toml");
        // `server` in a comment, in a string and as a key of another section:
        // none sets the top-level key, so --server may pin it.
        write(
            &file,
            "# server = \"nginx\" would be wrong here\nsites = [\"icons\"]\nprotocols = [\"https\", \"h2\"]\ndescription = \"server = \\\"apache\\\"\"\n",
        );
        let req = SweepRequest {
            experiment: file.clone(),
            server: Some(ServerKind::Peer(results::PeerKind::Nginx)),
            client: None,
        };
        let p = prepare(&req).unwrap();
        assert_eq!(
            p.experiment.server,
            ServerKind::Peer(results::PeerKind::Nginx)
        );
        // The copy pins it, and parses back to what runs.
        let copy = experiment::pinned_text(&p.experiment, &p.text);
        assert!(copy.contains("server = \"nginx\"\n"), "{copy}");
        assert_eq!(experiment::parse("x.toml", &copy).unwrap(), p.experiment);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_key_set_in_its_section_refuses_the_flag() {
        let dir = scratch("set");
        let file = dir.join("exp.toml");
        write(
            &file,
            "sites = [\"icons\"]\nprotocols = [\"https\", \"h2\"]\nserver = \"apache\"\n",
        );
        let req = SweepRequest {
            experiment: file.clone(),
            server: Some(ServerKind::Peer(results::PeerKind::Nginx)),
            client: Some(ClientKind::Model),
        };
        let err = prepare(&req).unwrap_err().to_string();
        assert!(
            err.contains("--server nginx: ") && err.contains("sets server already"),
            "{err}"
        );
        // The client, left to the file's default, may be given.
        let ok = prepare(&SweepRequest {
            server: None,
            ..req
        })
        .unwrap();
        assert_eq!(ok.experiment.client, ClientKind::Model);
        assert_eq!(
            ok.experiment.server,
            ServerKind::Peer(results::PeerKind::Apache)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn globs_expand_in_the_experiment_and_its_copy() {
        let dir = scratch("glob");
        std::fs::create_dir_all(dir.join("sites")).unwrap();
        for name in ["exp2.toml", "exp1.toml", "other.toml", ".exp3.toml"] {
            write(&dir.join("sites").join(name), SITE);
        }
        let file = dir.join("exp.toml");
        // The pattern also stands in a comment and in the description: only
        // the value of `sites` is replaced.
        let text = "# sites = [\"sites/exp*.toml\"] once\ndescription = \"\\\"sites/exp*.toml\\\"\"\nsites = [\"icons\", \"sites/exp*.toml\"]\nprotocols = [\"https\", \"h2\"]\n";
        write(&file, text);
        let p = prepare(&SweepRequest {
            experiment: file.clone(),
            ..Default::default()
        })
        .unwrap();
        let sites = &p
            .experiment
            .axes
            .iter()
            .find(|(n, _)| n == "site")
            .unwrap()
            .1;
        assert_eq!(sites, &["icons", "sites/exp1.toml", "sites/exp2.toml"]);
        assert_eq!(
            p.text,
            "# sites = [\"sites/exp*.toml\"] once\ndescription = \"\\\"sites/exp*.toml\\\"\"\nsites = [\"icons\", \"sites/exp1.toml\", \"sites/exp2.toml\"]\nprotocols = [\"https\", \"h2\"]\n"
        );
        assert_eq!(p.site_base, dir);
        // One string becomes an array; a literal string is a pattern too.
        write(
            &file,
            "sites = 'sites/exp*.toml'\nprotocols = [\"https\", \"h2\"]\n",
        );
        let p = prepare(&SweepRequest {
            experiment: file.clone(),
            ..Default::default()
        })
        .unwrap();
        assert!(
            p.text
                .starts_with("sites = [\"sites/exp1.toml\", \"sites/exp2.toml\"]\n"),
            "{}",
            p.text
        );
        let again = experiment::parse("x.toml", &p.text).unwrap();
        assert_eq!(again.axes, p.experiment.axes);
        // A pattern that matches nothing names its line.
        write(
            &file,
            "protocols = [\"https\", \"h2\"]\nsites = [\n  \"icons\",\n  \"sites/none*.toml\",\n]\n",
        );
        let err = prepare(&SweepRequest {
            experiment: file.clone(),
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with(&format!("{}:4: sites: ", file.display())),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_named_exp_toml_resumes() {
        let dir = scratch("resume");
        let file = dir.join("exp.toml");
        write(
            &file,
            "sites = [\"icons\"]\nprotocols = [\"https\", \"h2\"]\n[link]\nrtt = \"20ms\"\n",
        );
        let out = dir.join("out");
        let req = SweepRequest {
            experiment: file.clone(),
            server: Some(ServerKind::Builtin),
            client: None,
        };
        let p = prepare(&req).unwrap();
        assert_eq!(p.experiment.name, "exp");
        drop(crate::CampaignDir::open(&out, p.experiment, &p.text).unwrap());
        // The copy is DIR/experiment.toml, named "exp" inside: the same
        // command opens the directory again, and so does the copy itself.
        let p = prepare(&req).unwrap();
        drop(crate::CampaignDir::open(&out, p.experiment, &p.text).unwrap());
        let copy = out.join(results::EXPERIMENT_FILE);
        let again = prepare(&SweepRequest {
            experiment: copy,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(again.experiment.name, "exp");
        drop(crate::CampaignDir::open(&out, again.experiment, &again.text).unwrap());
        // Another server is another experiment.
        let other = prepare(&SweepRequest {
            server: Some(ServerKind::Peer(results::PeerKind::Nginx)),
            ..req
        })
        .unwrap();
        let err = crate::CampaignDir::open(&out, other.experiment, &other.text)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("server differs"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
