//! `--client chromium`: headless Chromium in the testbed's client namespace
//! loads every resource of a site over http, https and h2 (the recorder fails a
//! probe whose responses came over another protocol than asked); what it cannot
//! speak is refused up front; `crosscheck` pairs it with the model; no
//! Chromium process outlives the run; and, as root, none runs as root.

use crate::common;
use std::collections::BTreeMap;

use crate::common::{
    assert_loaded_whole, connections_per_host, entries, fails, hars, json_of, ok, probes, run_json,
    TempDir,
};

/// Processes started for the spdylab with this pid: their command lines name
/// its scratch directories (spdylab-<what>-<pid>-<n>).
fn processes_of(pid: u32) -> Vec<String> {
    let marker = format!("-{pid}-");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("spdylab-") && c.contains(&marker))
        .collect()
}

/// Every process below `pid`, each with its start time (so that a reused pid
/// is not taken for a survivor): nginx's workers and Chromium's helpers rename
/// themselves, so only ancestry finds them all.
fn tree_of(pid: u32) -> Vec<(u32, String)> {
    let stat = |p: u32| std::fs::read_to_string(format!("/proc/{p}/stat")).ok();
    // Fields after the command name (which may hold spaces): state ppid … starttime (22nd).
    let fields = |s: &str| -> Vec<String> {
        s.rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().map(String::from).collect())
            .unwrap_or_default()
    };
    let all: Vec<(u32, u32, String)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| {
            let f = fields(&stat(p)?);
            Some((p, f.get(1)?.parse().ok()?, f.get(19)?.clone()))
        })
        .collect();
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            all.iter()
                .filter(|(_, pp, _)| *pp == parent)
                .map(|(p, _, _)| *p),
        );
        i += 1;
    }
    all.into_iter()
        .filter(|(p, _, _)| *p != pid && tree.contains(p))
        .map(|(p, _, start)| (p, start))
        .collect()
}

/// Which of `procs` still run (same pid, same start time).
fn still_running(procs: &[(u32, String)]) -> Vec<u32> {
    procs
        .iter()
        .filter(|(p, start)| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                s.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(19).map(|t| t == start))
                    .unwrap_or(false)
            })
        })
        .map(|(p, _)| *p)
        .collect()
}

/// Scratch directories of the spdylab with this pid visible on the host.
fn directories_of(pid: u32) -> Vec<String> {
    let marker = format!("-{pid}-");
    ["/tmp", "/run/spdylab"]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|rd| rd.flatten())
        .map(|e| e.path().display().to_string())
        .filter(|p| p.contains("spdylab-") && p.contains(&marker))
        .collect()
}

#[test]
fn chromium_loads_every_resource_over_the_protocol_asked() {
    // Plain http on icons: youtube's and twitter's names are on Chromium's
    // HSTS preload list (it loads them over TLS; see the next test).
    for (name, protocols) in [
        ("youtube", "https,h2"),
        ("twitter", "https,h2"),
        ("icons", "http"),
    ] {
        let n = protocols.split(',').count();
        let site = site::builtin(name, site::DEFAULT_SEED).unwrap();
        let tmp = TempDir::new(&format!("har-{name}"));
        let har_dir = tmp.join("har");
        let child = common::command(&["compare", "--site", name, "--client", "chromium"])
            .args([
                "--protocols",
                protocols,
                "--rtt",
                "20ms",
                "--rate",
                "20mbit",
            ])
            .args(["--reps", "1", "--warmup", "0", "--json", "--har-dir"])
            .arg(&har_dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let out = child.wait_with_output().unwrap();
        ok(&out);
        let v = json_of(&out);
        assert_eq!(probes(&v).len(), n);
        for p in probes(&v) {
            // An error here would also be a response over another protocol than asked.
            assert_loaded_whole(p, &site);
            // Nothing arrives before a round trip of the link.
            let plt = p["plt_ms"].as_f64().unwrap();
            assert!(plt >= 20.0, "{p}");
            // Time on wire ends with the page (onload): nothing the tab
            // sends after it, such as its favicon, counts (it added a round
            // trip and more: +96 ms). The two figures are on two clocks (the
            // link's log, Chromium's DevTools time mapped onto it), seen
            // 8.5 ms apart on a loaded machine: one RTT of slack (20 ms).
            let rtt = 20.0;
            assert!(p["tow_ms"].as_f64().unwrap() <= plt + rtt, "{p}");
            // Explained from Chromium's HAR and the link's log like the
            // model's: the components partition the PLT, the page's bytes
            // crossed the downlink, each connection the HAR has is a flow.
            let e = &p["explain"];
            let parts = e["components"].as_object().unwrap();
            let sum: f64 = parts.values().map(|v| v.as_f64().unwrap()).sum();
            assert!((sum - e["plt_ms"].as_f64().unwrap()).abs() < 1e-3, "{e}");
            assert!(parts["transfer_ms"].as_f64().unwrap() > 0.0, "{e}");
            let flows = e["connections"].as_array().unwrap();
            assert!(
                !flows.is_empty() && flows.iter().all(|c| c["transport"] == "tcp"),
                "{e}"
            );
            // Handshakes are counted from the HAR's connect spans: one per
            // connection at most, none when Chromium's predictor had every
            // socket open before its request (one CI run: 0 over http).
            let handshakes = e["why"]["handshakes"].as_u64().unwrap();
            assert!(handshakes <= flows.len() as u64, "{e}");
        }
        // The HARs: per host at most 6 connections over h1, one over h2.
        let files = hars(&har_dir);
        assert_eq!(files.len(), n);
        for (name, har) in files {
            let h2 = name.contains("-h2-");
            assert_eq!(entries(&har).len(), site.resources.len());
            for (host, conns) in connections_per_host(&har) {
                let most = if h2 { 1 } else { 6 };
                assert!(conns.len() <= most, "{name}: {host}: {conns:?}");
            }
        }
        // Chromium's crash handler ends once its browser is gone, on its
        // own (seen alive for a moment once in CI): give it as long as the
        // kill -9 test gives the death signals.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !processes_of(pid).is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert_eq!(processes_of(pid), Vec::<String>::new(), "Chromium is gone");
        assert_eq!(
            directories_of(pid),
            Vec::<String>::new(),
            "profiles are gone"
        );
    }
}

/// Chromium turns plain http to twitter.com (on its HSTS preload list) into
/// https: the probe fails, naming it, rather than counting an HTTPS load as http.
#[test]
fn plain_http_that_chromium_upgrades_by_hsts_is_not_an_http_load() {
    let o = common::spdylab(&testkit::cli::one_quick_rep(
        &[
            "compare",
            "--site",
            "twitter",
            "--client",
            "chromium",
            "--protocols",
            "http",
        ],
        &["--json"],
    ));
    let v = json_of(&o);
    let p = &probes(&v)[0];
    let e = p["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error: {p}"));
    assert!(e.contains("HSTS") && e.contains("not plain http"), "{e}");
}

#[test]
fn what_chromium_cannot_speak_is_refused_and_crosscheck_pairs_both_clients() {
    for (protocol, why) in [
        ("spdy3", "SPDY"),
        ("h2c", "h2c"),
        ("http-pipelined", "pipelining"),
    ] {
        let err = fails(
            &[
                "compare",
                "--site",
                "twitter",
                "--client",
                "chromium",
                "--protocols",
                protocol,
            ],
            2,
            "--client chromium",
        );
        assert!(err.contains(why), "{err}");
    }
    let v = run_json(&testkit::cli::one_quick_rep(
        &["crosscheck", "--sites", "twitter", "--protocols", "https"],
        &["--json"],
    ));
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r["model_resources"], r["chromium_resources"], "{r}");
    assert!(r["ratio"].as_f64().unwrap() > 0.0, "{r}");
    assert!(v["mape_pct"].as_f64().unwrap().is_finite(), "{v}");
}

/// `compare --check N` (issue 49): Chromium loads each protocol it speaks
/// N times after the model's loads; under the table, per protocol, both
/// gains with their CIs and whether they agree, the same in `--out`'s
/// JSON; a protocol Chromium cannot load is named, not checked. Refused
/// when there is no model to check or Chromium cannot load the baseline.
#[test]
fn compare_check_loads_chromium_beside_the_model_and_says_whether_they_agree() {
    let dir = TempDir::new("check");
    let out = dir.join("compare.json");
    let out_arg = out.display().to_string();
    let o = common::spdylab(&[
        "compare",
        "--site",
        "icons",
        "--protocols",
        "https,h2,spdy3",
        "--rtt",
        "20ms",
        "--rate",
        "20mbit",
        "--reps",
        "2",
        "--warmup",
        "0",
        "--check",
        "2",
        "--out",
        &out_arg,
    ]);
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("check: Chromium's PLT gains over https (2 loads per protocol"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.contains(" h2 ") && l.contains(" vs model "))
        .unwrap_or_else(|| panic!("no check line for h2: {text}"));
    assert!(
        [
            "  Chromium agrees: h2",
            "  DISAGREES: Chromium h2",
            "  cannot tell: h2"
        ]
        .iter()
        .any(|start| line.starts_with(start)),
        "{line}"
    );
    assert!(
        text.contains("  spdy3: not checked: Chromium dropped SPDY"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let check = &v["check"];
    assert_eq!(check["loads"], 2, "{check}");
    assert_eq!(
        probes(check).len(),
        4,
        "two loads of https and of h2: {check}"
    );
    assert!(
        probes(check).iter().all(|p| p["error"].is_null()),
        "{check}"
    );
    let agreement = check["agreement"].as_array().unwrap();
    assert_eq!(agreement.len(), 1, "{check}");
    let a = &agreement[0];
    assert_eq!(
        (a["protocol"].as_str(), a["baseline"].as_str()),
        (Some("h2"), Some("https"))
    );
    let model_h2 = v["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["protocol"] == "h2")
        .unwrap();
    assert_eq!(
        a["model"]["pct"], model_h2["gain_pct"],
        "the model's gain is the table's"
    );
    assert_eq!(check["skipped"][0]["protocol"], "spdy3", "{check}");
    let base = ["compare", "--site", "icons", "--reps", "1", "--check", "2"];
    let chromium = ["--client", "chromium", "--protocols", "https,h2"];
    let err = fails(&[&base[..], &chromium].concat(), 2, "--check");
    assert!(err.contains("no model to check"), "{err}");
    let err = fails(
        &[&base[..], &["--protocols", "spdy3,h2"]].concat(),
        2,
        "--check",
    );
    assert!(err.contains("spdy3, the baseline"), "{err}");
}

#[test]
fn kill_9_leaves_no_browser_server_or_directory() {
    let mut child = common::command(&["compare", "--site", "youtube", "--server", "nginx"])
        .args(["--client", "chromium", "--protocols", "https,h2"])
        .args(["--rtt", "150ms", "--rate", "1mbit", "--reps", "50"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until both nginx and Chromium run for it (a page takes seconds at 1 Mbit).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let running = processes_of(pid);
        if running.iter().any(|c| c.contains("nginx"))
            && running.iter().any(|c| c.contains("chromium"))
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nginx and chromium did not both start: {running:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let tree = tree_of(pid);
    assert!(
        tree.len() > 4,
        "the keepers, inits, nginx and its workers, Chromium's processes: {tree:?}"
    );
    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();
    // The death signals travel down the chains; give the kernel a moment to reap.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !(processes_of(pid).is_empty() && still_running(&tree).is_empty())
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        still_running(&tree),
        Vec::<u32>::new(),
        "descendants outlived spdylab"
    );
    assert_eq!(
        processes_of(pid),
        Vec::<String>::new(),
        "processes outlived spdylab"
    );
    assert_eq!(
        directories_of(pid),
        Vec::<String>::new(),
        "directories outlived spdylab"
    );
}

#[test]
fn a_real_server_gives_chromium_every_cross_origin_font_and_iframe() {
    // 17 domains: fonts from another origin need CORS, third-party iframes
    // must report their requests on the page's target.
    let site = site::builtin("http-archive-2014", site::DEFAULT_SEED).unwrap();
    let v = run_json(&testkit::cli::one_quick_rep(
        &[
            "compare",
            "--site",
            "http-archive-2014",
            "--client",
            "chromium",
            "--server",
            "nginx",
            "--protocols",
            "https,h2",
        ],
        &["--json"],
    ));
    for p in probes(&v) {
        assert_loaded_whole(p, &site);
    }
}

/// What the user saw (issue 35): each Chromium probe carries TTFB, FCP and
/// LCP with its element, in ms from the document's request like its PLT;
/// the summary has their means with PLT's Student-t interval; the model's
/// probes carry its estimates of the same.
#[test]
fn chromium_probes_carry_ttfb_fcp_and_lcp_and_the_model_estimates_them() {
    let run = |site: &str, client: &str| {
        run_json(&testkit::cli::one_quick_rep(
            &[
                "compare",
                "--site",
                site,
                "--client",
                client,
                "--protocols",
                "https,h2",
            ],
            &["--json"],
        ))
    };
    let figure = |p: &serde_json::Value, k: &str| {
        p["paint"][k]
            .as_f64()
            .unwrap_or_else(|| panic!("no {k}: {p}"))
    };
    for site in ["icons", "twitter"] {
        let v = run(site, "chromium");
        assert_eq!(probes(&v).len(), 2);
        for p in probes(&v) {
            assert!(p["error"].is_null(), "{p}");
            let plt = p["plt_ms"].as_f64().unwrap();
            let (ttfb, fcp, lcp) = (
                figure(p, "ttfb_ms"),
                figure(p, "fcp_ms"),
                figure(p, "lcp_ms"),
            );
            // The first byte takes a round trip of the link at least (TCP
            // and TLS take more); nothing paints before the first byte.
            assert!(ttfb >= 20.0 && ttfb <= fcp, "{p}");
            // A largest contentful paint is a contentful paint.
            assert!(fcp <= lcp, "{p}");
            // A page's first frame may come after onload: twitter's
            // stylesheets and script (render-blocking) are its last responses
            // but its images'; icons' text paints while its 50 icons load on
            // an idle machine, but a busy one (a CI run beside builds) has
            // shown its first frame 40 ms after onload. FCP can then exceed
            // PLT, within the second Chromium is listened to after onload,
            // and LCP is as of that first frame (5 ms: the two clocks, less
            // than a frame). No timed bound tighter than that.
            assert!(fcp <= plt + 1000.0, "{p}");
            assert!(lcp <= plt.max(fcp) + 5.0, "{p}");
            // A built-in page's largest element is its headline or its hero
            // image (docs/visual.md, "What the built-in pages look like"),
            // described: never a filler paragraph.
            let element = p["paint"]["lcp_element"].as_str().unwrap_or("");
            assert!(
                element.starts_with("h1 \"") || element.starts_with("img "),
                "{p}"
            );
            assert!(figure(p, "lcp_size") > 0.0, "{p}");
        }
        for s in v["summary"].as_array().unwrap() {
            for k in ["ttfb_ms", "fcp_ms", "lcp_ms"] {
                assert_eq!(s[k]["n"], 1, "{s}");
                assert!(s[k]["mean"].as_f64().unwrap() > 0.0, "{s}");
                // One repetition: no interval (as PLT's).
                assert!(s[k]["ci95"][0].is_null(), "{s}");
            }
        }
    }
    // The model estimates the same figures (crates/client/src/paint.rs),
    // ordered as Chromium's must be.
    let v = run("icons", "model");
    for p in probes(&v) {
        let (ttfb, fcp, lcp) = (
            figure(p, "ttfb_ms"),
            figure(p, "fcp_ms"),
            figure(p, "lcp_ms"),
        );
        assert!(ttfb >= 20.0 && ttfb <= fcp && fcp <= lcp, "{p}");
        assert!(figure(p, "lcp_size") > 0.0, "{p}");
    }
    for s in v["summary"].as_array().unwrap() {
        for k in ["ttfb_ms", "fcp_ms", "lcp_ms"] {
            assert_eq!(s[k]["n"], 1, "{s}");
        }
    }
}

/// Speed Index, visually complete and the filmstrip (issue 35, docs/visual.md):
/// each Chromium probe has both figures, on PLT's clock, ordered as they
/// must be, and its filmstrip of JPEGs that decode beside its HAR; the
/// summary has their means; the model estimates both, and has no filmstrip.
#[test]
fn chromium_probes_carry_speed_index_and_a_filmstrip_the_model_estimates_it() {
    // A 60 Hz frame: screencast frames are stamped with their compositor
    // frame's time, FCP with its presentation (a frame apart at most).
    const FRAME: f64 = 1000.0 / 60.0;
    let run = |client: &str, har_dir: &std::path::Path| {
        let har_dir = har_dir.to_str().unwrap();
        run_json(&testkit::cli::one_quick_rep(
            &[
                "compare",
                "--site",
                "icons",
                "--client",
                client,
                "--protocols",
                "https,h2",
            ],
            &["--json", "--har-dir", har_dir],
        ))
    };
    let tmp = TempDir::new("filmstrip");
    let v = run("chromium", &tmp.join("chromium"));
    let strips: Vec<std::path::PathBuf> = std::fs::read_dir(tmp.join("chromium"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "filmstrip"))
        .collect();
    assert_eq!(probes(&v).len(), 2);
    assert_eq!(strips.len(), 2, "{strips:?}");
    for (i, p) in probes(&v).iter().enumerate() {
        assert!(p["error"].is_null(), "{p}");
        let figure = |k: &str| {
            p["paint"][k]
                .as_f64()
                .unwrap_or_else(|| panic!("no {k}: {p}"))
        };
        let (plt, fcp) = (p["plt_ms"].as_f64().unwrap(), figure("fcp_ms"));
        let (si, vc) = (figure("speed_index_ms"), figure("visually_complete_ms"));
        // Named after its HAR: icons-<protocol>-<n>.filmstrip/<ms>ms.jpg.
        let strip = tmp.join("chromium").join(format!(
            "icons-{}-{:03}.filmstrip",
            p["protocol"].as_str().unwrap(),
            i + 1
        ));
        let mut frames: Vec<(f64, std::path::PathBuf)> = std::fs::read_dir(&strip)
            .unwrap_or_else(|e| panic!("{}: {e}", strip.display()))
            .map(|e| e.unwrap().path())
            // Beside the frames, their visual progress (the report's curves).
            .filter(|f| f.file_name().is_some_and(|n| n != "progress.json"))
            .map(|f| {
                let name = f.file_name().unwrap().to_string_lossy().into_owned();
                let ms = name
                    .strip_suffix("ms.jpg")
                    .unwrap_or_else(|| panic!("{name}"));
                (ms.parse().unwrap(), f)
            })
            .collect();
        frames.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(!frames.is_empty() && frames.len() <= 20, "{frames:?}");
        assert!(strip.join("progress.json").is_file(), "{}", strip.display());
        for (_, f) in &frames {
            let bytes = std::fs::read(f).unwrap();
            let mut d = jpeg_decoder::Decoder::new(&bytes[..]);
            let pixels = d
                .decode()
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let info = d.info().unwrap();
            assert!(
                info.width > 0 && info.width <= 480 && info.height <= 300,
                "{info:?}"
            );
            assert!(!pixels.is_empty());
        }
        let (first, last) = (frames[0].0, frames.last().unwrap().0);
        // Visually complete is one of the screencast's frames (its own
        // clock), or FCP if that frame was stamped before it (issue 47: a
        // screen is not complete before its first contentful paint): not
        // before the first kept, no later than the final one (by onload,
        // or by a later paint) or FCP.
        assert!(fcp > 0.0, "{p}");
        assert!(vc >= fcp, "{p}");
        assert!(first <= vc + FRAME, "{p} {frames:?}");
        assert!(vc <= plt.max(last).max(fcp) + FRAME, "{p} {frames:?}");
        // Incomplete for some of the time from navigation start, at most all of it.
        assert!(0.0 < si && si <= vc, "{p}");
    }
    for s in v["summary"].as_array().unwrap() {
        for k in ["speed_index_ms", "visually_complete_ms"] {
            assert_eq!(s[k]["n"], 1, "{s}");
            assert!(s[k]["mean"].as_f64().unwrap() > 0.0, "{s}");
        }
    }
    // The model estimates both (no frames: it has no screen).
    let v = run("model", &tmp.join("model"));
    for p in probes(&v) {
        let figure = |k: &str| {
            p["paint"][k]
                .as_f64()
                .unwrap_or_else(|| panic!("no {k}: {p}"))
        };
        let (fcp, si, vc) = (
            figure("fcp_ms"),
            figure("speed_index_ms"),
            figure("visually_complete_ms"),
        );
        assert!(fcp <= si + 1e-6 && si <= vc + 1e-6, "{p}");
    }
    for s in v["summary"].as_array().unwrap() {
        for k in ["speed_index_ms", "visually_complete_ms"] {
            assert_eq!(s[k]["n"], 1, "{s}");
        }
    }
    let files = std::fs::read_dir(tmp.join("model")).unwrap();
    for f in files {
        let f = f.unwrap().path();
        assert!(f.extension().is_some_and(|x| x == "har"), "{}", f.display());
    }
}

/// The uids of a process (real, effective, saved, filesystem), from /proc.
fn uids_of(pid: u32) -> Option<Vec<u32>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    Some(
        line[4..]
            .split_whitespace()
            .filter_map(|u| u.parse().ok())
            .collect(),
    )
}

/// Whether a process runs Chromium's binary (not a keeper or init: those
/// are forks of spdylab, whose command line names chromium too).
fn is_chromium(pid: u32) -> bool {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .is_ok_and(|e| e.to_string_lossy().starts_with("/usr/lib/chromium/"))
}

/// As root, `compare --client chromium` runs every Chromium process as an
/// unprivileged user: read from /proc while the run goes on, until it ends.
/// Whether its sandbox is on is said at most once (one line, when it is off).
#[test]
fn chromium_never_runs_as_root() {
    if !common::is_root() {
        return common::cannot_run("Chromium's user is switched only when spdylab is root");
    }
    let tmp = TempDir::new("chromium-user");
    let (out, err) = (tmp.join("stdout"), tmp.join("stderr"));
    let mut child = common::command(&["compare", "--site", "youtube", "--client", "chromium"])
        .args([
            "--protocols",
            "https,h2",
            "--rtt",
            "100ms",
            "--rate",
            "2mbit",
        ])
        .args(["--reps", "2", "--warmup", "0", "--json"])
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut seen: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    let status = loop {
        for (p, _) in tree_of(pid) {
            if is_chromium(p) {
                if let Some(uids) = uids_of(p) {
                    seen.insert(p, uids);
                }
            }
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert!(status.success(), "{stderr}");
    for p in probes(&serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()) {
        assert_eq!(p["error"], serde_json::Value::Null, "{p}");
    }
    assert!(!seen.is_empty(), "no Chromium process seen");
    for (p, uids) in &seen {
        assert!(
            uids.len() == 4 && !uids.contains(&0),
            "process {p}: uids {uids:?}"
        );
    }
    assert!(stderr.matches("with --no-sandbox").count() <= 1, "{stderr}");
}
