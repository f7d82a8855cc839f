//! Campaigns end to end on real testbeds: a sweep killed with SIGKILL midway and
//! rerun ends with exactly one result per Trial; several experiment files run
//! as one pool (as `paper all` runs its figures), each campaign in its own
//! directory, and resume after a kill; a changed experiment is
//! refused; slices merge into the whole; the report's summary.csv has the
//! documented columns and report.html renders every plot in headless Chromium
//! with no console message.

use crate::common;

use crate::common::{ok, spdylab, TempDir};
use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const EXPERIMENT: &str = r#"
name = "kill-test"
sites = ["twitter"]
protocols = ["https", "h2"]
reps = 4
warmup = 0
[link]
rtt = ["10ms", "40ms"]
rate = "8mbit"
"#;
const TRIALS: usize = 2 * 2 * 4;

fn write_experiment(dir: &TempDir, text: &str) -> String {
    let path = dir.join("exp.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Trial key → number of records, over every complete line of probes.jsonl.
fn records(dir: &Path) -> HashMap<String, usize> {
    let text = std::fs::read_to_string(dir.join("probes.jsonl")).unwrap_or_default();
    let mut out = HashMap::new();
    // A line the sweep is writing as this reads it has no newline yet (CI
    // of 78e4c07 read a probe's first 4 049 bytes).
    for line in text
        .split_inclusive('\n')
        .filter_map(|l| l.strip_suffix('\n'))
    {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        *out.entry(v["trial"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    out
}

/// Kills `child` (a sweep under way) with SIGKILL once `recorded` counts
/// at least `n` probes on disk; the sweep must still be running then, and
/// a probe must come within 300 s.
fn kill_once_recorded(child: &mut Child, recorded: impl Fn() -> usize, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(300);
    while recorded() < n {
        assert!(Instant::now() < deadline, "no probe finished in 300 s");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep ended before it was killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

#[test]
fn a_sweep_killed_midway_resumes_with_one_result_per_trial() {
    let dir = TempDir::new("kill");
    let exp = write_experiment(&dir, EXPERIMENT);
    let out = dir.join("out");
    let out_s = out.display().to_string();
    let mut child = common::command(&[
        "sweep",
        &exp,
        "--out",
        &out_s,
        "--jobs",
        "2",
        "--no-calibration",
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    // Kill it once some, but not all, probes are in.
    kill_once_recorded(&mut child, || records(&out).values().sum(), 3);
    let before = records(&out);
    let n_before: usize = before.values().sum();
    assert!(
        n_before < TRIALS,
        "the sweep finished before the kill; the test needs more Trials"
    );
    assert!(before.values().all(|&n| n == 1), "{before:?}");

    // A write cut short by the kill: the rerun must drop it, not trip on it.
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(out.join("probes.jsonl"))
        .unwrap();
    f.write_all(b"{\"trial\":\"site=twitter rtt=10ms").unwrap();
    drop(f);

    let rerun = spdylab(&[
        "sweep",
        &exp,
        "--out",
        &out_s,
        "--jobs",
        "2",
        "--no-calibration",
    ]);
    ok(&rerun);
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert!(
        stderr.contains(&format!("{n_before} finished before")),
        "{stderr}"
    );
    let after = records(&out);
    assert_eq!(after.len(), TRIALS, "{after:?}");
    assert!(after.values().all(|&n| n == 1), "{after:?}");
    for k in before.keys() {
        assert!(after.contains_key(k));
    }

    // Nothing is run twice.
    let again = spdylab(&["sweep", &exp, "--out", &out_s, "--no-calibration"]);
    ok(&again);
    assert_eq!(records(&out).values().sum::<usize>(), TRIALS);

    // A changed experiment file is refused, naming what changed.
    let changed = write_experiment(&dir, &EXPERIMENT.replace("reps = 4", "reps = 5"));
    let refused = spdylab(&["sweep", &changed, "--out", &out_s]);
    assert_eq!(refused.status.code(), Some(2));
    let msg = String::from_utf8_lossy(&refused.stderr);
    assert!(
        msg.contains("different experiment") && msg.contains("reps"),
        "{msg}"
    );
}

/// (start, end) in unix seconds of every probe in `dir`'s probes.jsonl.
fn spans(dir: &Path) -> Vec<(f64, f64)> {
    let text = std::fs::read_to_string(dir.join("probes.jsonl")).unwrap_or_default();
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let start = v["started"].as_f64().unwrap();
            (start, start + v["plt_ms"].as_f64().unwrap() / 1e3)
        })
        .collect()
}

/// Two campaigns given together run in one pool: the second one's work starts
/// while the first one's runs (not after its last probe), each campaign's
/// probes go to its own directory and nowhere else, and a kill midway loses
/// nothing: the rerun runs only what is missing, once.
#[test]
fn two_campaigns_share_one_pool_and_resume_after_a_kill() {
    let dir = TempDir::new("pool");
    let a = dir.join("near.toml");
    std::fs::write(&a, EXPERIMENT.replace("kill-test", "near")).unwrap();
    let b = dir.join("far.toml");
    let far = EXPERIMENT
        .replace("kill-test", "far")
        .replace("[\"10ms\", \"40ms\"]", "[\"20ms\", \"60ms\"]");
    std::fs::write(&b, far).unwrap();
    let (a, b) = (a.display().to_string(), b.display().to_string());
    let out = dir.join("out");
    let out_s = out.display().to_string();
    let (near, far) = (out.join("near"), out.join("far"));
    let args = [
        "sweep",
        &a,
        &b,
        "--out",
        &out_s,
        "--jobs",
        "2",
        "--no-calibration",
    ];
    let mut child = common::command(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let count = || records(&near).values().sum::<usize>() + records(&far).values().sum::<usize>();
    kill_once_recorded(&mut child, count, 4);
    let before = (records(&near), records(&far));
    let n_before = count();
    assert!(n_before < 2 * TRIALS, "finished before the kill");
    assert!(before.0.values().chain(before.1.values()).all(|&n| n == 1));

    let rerun = spdylab(&args);
    ok(&rerun);
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    for (name, n) in [("near", before.0.len()), ("far", before.1.len())] {
        assert!(
            stderr.contains(&format!(
                "sweep {name}: {TRIALS} Trials, {n} finished before"
            )),
            "{stderr}"
        );
    }
    for (campaign, rtts) in [(&near, ["10ms", "40ms"]), (&far, ["20ms", "60ms"])] {
        let after = records(campaign);
        assert_eq!(after.len(), TRIALS, "{after:?}");
        assert!(after.values().all(|&n| n == 1), "{after:?}");
        // Only its own Trials, under the experiment it was given.
        assert!(
            after
                .keys()
                .all(|k| rtts.iter().any(|r| k.contains(&format!("rtt={r} ")))),
            "{after:?}"
        );
        let pinned = std::fs::read_to_string(campaign.join("experiment.toml")).unwrap();
        let name = campaign.file_name().unwrap().to_string_lossy().to_string();
        assert!(pinned.contains(&format!("name = \"{name}\"")), "{pinned}");
    }
    // One pool: far's longest point and near's started together, so far's
    // first probe began before near's last one ended.
    let (near_end, far_start) = (
        spans(&near).iter().map(|s| s.1).fold(f64::MIN, f64::max),
        spans(&far).iter().map(|s| s.0).fold(f64::MAX, f64::min),
    );
    assert!(
        far_start < near_end,
        "{far_start} >= {near_end}: one after the other"
    );

    // Nothing is run twice; two files of one name are refused.
    ok(&spdylab(&args));
    assert_eq!(count(), 2 * TRIALS);
    std::fs::create_dir_all(dir.join("again")).unwrap();
    let twin = dir.join("again/near.toml");
    std::fs::copy(&a, &twin).unwrap();
    let twin = twin.display().to_string();
    common::fails(
        &["sweep", &a, &twin, "--out", &out_s],
        2,
        "two experiment files named near",
    );
}

#[test]
fn slices_merge_and_the_report_renders_in_chromium() {
    let dir = TempDir::new("merge");
    let exp = write_experiment(&dir, &EXPERIMENT.replace("reps = 4", "reps = 2"));
    let trials = TRIALS / 2;
    let mut slices = Vec::new();
    for i in 1..=2 {
        let out = dir.join(format!("slice-{i}")).display().to_string();
        ok(&spdylab(&[
            "sweep",
            &exp,
            "--out",
            &out,
            "--shard",
            &format!("{i}/2"),
            "--jobs",
            "1",
        ]));
        let n: usize = records(Path::new(&out)).values().sum();
        assert_eq!(n, trials / 2, "slice {i}");
        slices.push(out);
    }
    // A filmstrip beside a HAR (Chromium's; the model writes none) goes
    // with it.
    let har = std::fs::read_dir(Path::new(&slices[0]).join("har"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "har"))
        .expect("a HAR in the slice");
    let film = har.with_extension("filmstrip");
    std::fs::create_dir_all(&film).unwrap();
    std::fs::write(film.join("0100ms.jpg"), b"frame").unwrap();
    let merged = dir.join("all");
    let merged_s = merged.display().to_string();
    ok(&spdylab(&[
        "merge", &slices[0], &slices[1], "--out", &merged_s,
    ]));
    let copied = merged
        .join("har")
        .join(film.file_name().unwrap())
        .join("0100ms.jpg");
    assert_eq!(
        std::fs::read(&copied).unwrap(),
        b"frame",
        "{}",
        copied.display()
    );
    let all = records(&merged);
    assert_eq!(all.len(), trials);
    assert!(all.values().all(|&n| n == 1));
    // Merging again adds nothing.
    ok(&spdylab(&[
        "merge", &slices[0], &slices[1], "--out", &merged_s,
    ]));
    assert_eq!(records(&merged).values().sum::<usize>(), trials);
    let cal: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("calibration.json")).unwrap())
            .unwrap();
    assert_eq!(
        cal.as_array().unwrap().len(),
        2,
        "one calibration per link: {cal}"
    );

    ok(&spdylab(&["report", &merged_s]));
    // summary.csv: the documented columns, one row per point and protocol.
    let csv = std::fs::read_to_string(merged.join("summary.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let documented = [
        "site",
        "rtt",
        "point",
        "protocol",
        "n",
        "failed",
        "plt_mean_ms",
        "plt_median_ms",
        "plt_ci_lo_ms",
        "plt_ci_hi_ms",
        "tow_mean_ms",
        "tow_median_ms",
        "gain_pct",
        "gain_ci_lo",
        "gain_ci_hi",
        "tow_gain_pct",
        "connect_ms",
        "ssl_ms",
        "send_ms",
        "wait_ms",
        "receive_ms",
        "connections",
        "bytes_down",
        "metric",
        "plt_gain_pct",
        "tow_gain_ci_lo",
        "tow_gain_ci_hi",
        "metric_mean_ms",
        "metric_median_ms",
        "metric_ci_lo_ms",
        "metric_ci_hi_ms",
        "ttfb_mean_ms",
        "fcp_mean_ms",
        "lcp_mean_ms",
        "si_mean_ms",
    ];
    assert_eq!(header, documented);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2 * 2);
    for r in &rows {
        assert_eq!(r.len(), header.len(), "{r:?}");
        assert_eq!(r[4], "2", "n: {r:?}");
        let plt: f64 = r[6].parse().unwrap();
        assert!(plt > 0.0);
    }

    // report.html in headless Chromium, with no network at all (its own namespace).
    let html = merged.join("report.html");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("src=") && !page.contains("href=\"http") && !page.contains("<link "),
        "self-contained"
    );
    let plots: usize = page
        .split("data-plots=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(plots >= 5, "{plots} plots");
    let profile = dir.join("chromium-profile");
    let out = Command::new("unshare")
        .args([
            "--net",
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=3000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("chromium (Debian package `chromium`; `make deps` installs it)");
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    let rendered = dom
        .split("data-rendered=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("the page's check did not run:\n{log}"));
    assert_eq!(
        rendered,
        plots.to_string(),
        "every plot has a size and content"
    );
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
}

/// `sweep` of this experiment text is refused: exit 2, `says` in the
/// message, and no result written to `out`.
fn sweep_refuses(dir: &TempDir, text: &str, out: &str, says: &str) {
    let exp = write_experiment(dir, text);
    let out = dir.join(out);
    let o = spdylab(&["sweep", &exp, "--out", &out.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    let msg = String::from_utf8_lossy(&o.stderr);
    assert!(msg.contains(says), "{msg}");
    assert!(!out.join("probes.jsonl").exists());
}

#[test]
fn bad_experiment_files_name_file_line_and_field() {
    let dir = TempDir::new("bad");
    sweep_refuses(
        &dir,
        "sites = [\"twitter\"]\nprotocols = [\"https\"]\n[link]\nrtt = \"fast\"\n",
        "o",
        "exp.toml:4: link.rtt: ",
    );
    // A point that contradicts itself is refused before anything runs.
    sweep_refuses(
        &dir,
        "sites = [\"twitter\"]\nprotocols = [\"https\"]\n[link]\nrtt = \"10ms\"\ndelay_down = \"20ms\"\n",
        "o2",
        "link.delay_down is longer than link.rtt",
    );
    // So is one the built-in server's QUIC cannot honour with its link: the
    // check compare makes, made for every point (here the second cc).
    sweep_refuses(
        &dir,
        "sites = [\"twitter\"]\nprotocols = [\"h3\"]\n[link]\nrtt = \"10ms\"\ncc = [\"cubic\", \"bbr\"]\n[knobs]\nquic_hystart = \"on\"\n",
        "o3",
        "--quic-hystart on: HyStart++ is in quinn's Cubic here, and QUIC's congestion control is bbr",
    );
}

#[test]
fn a_corpus_glob_is_every_har_in_it_and_a_glob_matching_nothing_is_refused() {
    let dir = TempDir::new("corpus");
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    for har in ["pagexray-http2-chrome.har", "haralyzer-humanssuck.net.har"] {
        std::fs::copy(data.join(har), corpus.join(har)).unwrap();
    }
    std::fs::write(corpus.join("notes.txt"), "not a page").unwrap();
    let exp = write_experiment(
        &dir,
        "sites = [\"corpus/*.har\"]\nprotocols = [\"h2\"]\nreps = 1\nwarmup = 0\n[link]\nrtt = \"20ms\"\nrate = \"8mbit\"\n",
    );
    let out_dir = dir.join("out");
    let sweep = || {
        ok(&spdylab(&[
            "sweep",
            &exp,
            "--out",
            &out_dir.display().to_string(),
            "--no-calibration",
        ]))
    };
    sweep();
    let copy = std::fs::read_to_string(out_dir.join("experiment.toml")).unwrap();
    assert!(
        copy.contains(
            r#"sites = ["corpus/haralyzer-humanssuck.net.har", "corpus/pagexray-http2-chrome.har"]"#
        ),
        "{copy}"
    );
    let got = records(&out_dir);
    assert_eq!(got.len(), 2, "{got:?}");
    // Rerun: the same corpus is the same experiment, nothing runs again.
    sweep();
    assert_eq!(records(&out_dir), got);

    sweep_refuses(
        &dir,
        "protocols = [\"h2\"]\nsites = [\"corpus/*.zip\"]\n[link]\nrtt = \"20ms\"\n",
        "o2",
        "exp.toml:2: sites: 'corpus/*.zip' matches no file",
    );
    assert!(!dir.join("o2").exists());
}
