//! `spdylab diff A B` and budgets (issue 38) on real compares: a run at a
//! longer RTT is called slower with p < 0.05 as independent samples
//! (`--paired`: 4 pairs by repetition cannot reach 0.05), a run against
//! itself is no
//! difference, a failed budget is exit 1 with JUnit XML naming it (for
//! `compare --baseline --budget` too), and bad input is exit 2 naming the
//! file and line.

use crate::common::{fails, ok, run_json, spdylab, TempDir};

fn compare(dir: &TempDir, name: &str, rtt: &str) -> String {
    let out = dir.0.join(name);
    let out = out.to_str().unwrap().to_string();
    run_json(&[
        "compare",
        "--site",
        "icons",
        "--protocols",
        "https,h2",
        "--rtt",
        rtt,
        "--reps",
        "4",
        "--warmup",
        "0",
        "--json",
        "--out",
        &out,
    ]);
    out
}

/// Shifts of PLT and ToW for https and h2 (and of the model's paint
/// metrics, which it estimates since issue 35).
fn both_protocols_plt_and_tow(shifts: &[serde_json::Value]) -> bool {
    ["https", "h2"].iter().all(|p| {
        ["plt", "tow"].iter().all(|m| {
            shifts
                .iter()
                .any(|s| s["protocol"] == *p && s["metric"] == *m)
        })
    })
}

/// The least shift 20 → 60 ms RTT gives a metric: every load pays the
/// longer RTT several times, so PLT, time on wire and TTFB at least 40 ms
/// more; the paint metrics shift less where a fixed wait bounds the fast
/// run's first paint (tight mode's, `BrowserCost::first_frame`), but later
/// all the same.
fn least_shift(s: &serde_json::Value) -> f64 {
    match s["metric"].as_str().unwrap() {
        "plt" | "tow" | "ttfb" => 40.0,
        _ => 1.0,
    }
}

#[test]
fn a_slower_network_is_called_slower_and_budgets_decide_the_exit_status() {
    let dir = TempDir::new("diff");
    let fast = compare(&dir, "fast.json", "20ms");
    let slow = compare(&dir, "slow.json", "60ms");
    // Paired by repetition (4 each, repetitions 0 to 3): Wilcoxon, whose
    // smallest p with 4 pairs is 2/16; no interval below 6 pairs.
    let doc = run_json(&["diff", &fast, &slow, "--json", "--paired"]);
    assert_eq!(doc["schema"], 1, "{doc}");
    let shifts = doc["shifts"].as_array().unwrap();
    assert!(both_protocols_plt_and_tow(shifts), "{doc}");
    for s in shifts {
        assert_eq!(s["test"], "wilcoxon", "{s}");
        assert!(s["shift_ms"].as_f64().unwrap() >= least_shift(s), "{s}");
        assert!(s["p_value"].as_f64().unwrap() > 0.05, "{s}");
        assert_eq!(s["verdict"], "no_difference", "{s}");
        assert!(s["shift_ci95_ms"].is_null(), "{s}");
    }
    // As independent samples (the default): Mann-Whitney, 4 a side reach 2/70.
    let doc = run_json(&["diff", &fast, &slow, "--json"]);
    let shifts = doc["shifts"].as_array().unwrap();
    assert!(both_protocols_plt_and_tow(shifts), "{doc}");
    for s in shifts {
        assert_eq!(s["test"], "mann-whitney", "{s}");
        assert_eq!(s["verdict"], "slower", "{s}");
        assert!(s["shift_ms"].as_f64().unwrap() >= least_shift(s), "{s}");
        assert!(s["p_value"].as_f64().unwrap() < 0.05, "{s}");
        let [lo, hi] = [0, 1].map(|i| s["shift_ci95_ms"][i].as_f64().unwrap());
        assert!(
            lo <= s["shift_ms"].as_f64().unwrap() && s["shift_ms"].as_f64().unwrap() <= hi,
            "{s}"
        );
    }
    // Against itself: no difference, whatever the noise.
    let same = run_json(&["diff", &slow, &slow, "--json", "--paired"]);
    for s in same["shifts"].as_array().unwrap() {
        assert_eq!(s["test"], "wilcoxon", "{s}");
        assert_eq!(s["p_value"], 1.0, "{s}");
        assert_eq!(s["verdict"], "no_difference", "{s}");
        assert_eq!(s["shift_ms"], 0.0, "{s}");
    }
    // Budgets on B: h2 within 60 s passes, https within 1 ms fails: exit 1,
    // the text says which, the JUnit file counts one failure.
    let budgets = dir.0.join("budgets.toml");
    std::fs::write(
        &budgets,
        "[[budget]]\nmetric = \"plt\"\nprotocol = \"h2\"\nmax = \"60s\"\n\n\
         [[budget]]\nmetric = \"plt\"\nprotocol = \"https\"\nmax = \"1ms\"\n",
    )
    .unwrap();
    let junit = dir.0.join("budgets.xml");
    let o = spdylab(&[
        "diff",
        &fast,
        &slow,
        "--budget",
        budgets.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("PASS plt h2 <= 60s"), "{text}");
    assert!(text.contains("FAIL plt https <= 1ms"), "{text}");
    assert!(text.contains("budgets: 2 checked, 1 failed"), "{text}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
    // compare judges itself the same way: against a baseline, with budgets.
    let o = spdylab(&[
        "compare",
        "--site",
        "icons",
        "--protocols",
        "https,h2",
        "--rtt",
        "60ms",
        "--reps",
        "4",
        "--warmup",
        "0",
        "--baseline",
        &fast,
        "--budget",
        budgets.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("FAIL plt https <= 1ms") && text.contains("slower"),
        "{text}"
    );
    // Only passing budgets: exit 0.
    std::fs::write(
        &budgets,
        "[[budget]]\nmetric = \"tow\"\nprotocol = \"h2\"\nmax = \"60s\"\n",
    )
    .unwrap();
    ok(&spdylab(&[
        "diff",
        &fast,
        &slow,
        "--budget",
        budgets.to_str().unwrap(),
    ]));
    // Bad input: exit 2 naming the file and line, or the path.
    std::fs::write(
        &budgets,
        "[[budget]]\nmetric = \"plt\"\nprotocol = \"h2\"\nmax = \"fast\"\n",
    )
    .unwrap();
    fails(
        &["diff", &fast, &slow, "--budget", budgets.to_str().unwrap()],
        2,
        "line 4: max: 'fast'",
    );
    fails(
        &["diff", &fast, "/nonexistent/b.json"],
        2,
        "/nonexistent/b.json",
    );
    fails(&["diff", &fast, &slow, "--alpha", "2"], 2, "--alpha 2");
}

/// diff says where A and B were made differently, above its table, and
/// refuses (exit 2, unless --force) runs of another client or site: a
/// model's run against Chromium's read as one run that got slower (issue 47).
#[test]
fn diff_prints_the_settings_that_differ_and_refuses_another_client_or_site() {
    let dir = TempDir::new("diff-settings");
    let fast = compare(&dir, "fast.json", "20ms");
    let slow = compare(&dir, "slow.json", "60ms");
    let o = spdylab(&["diff", &fast, &slow]);
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    let head: Vec<&str> = text.lines().take(2).collect();
    assert_eq!(head[0], "A and B differ in:", "{text}");
    assert!(
        head[1].trim_start().starts_with("link ")
            && head[1].contains("A rtt 20ms")
            && head[1].contains("B rtt 60ms"),
        "{text}"
    );
    let doc = run_json(&["diff", &fast, &slow, "--json"]);
    assert_eq!(doc["settings"]["differ"][0]["name"], "link", "{doc}");
    // The same run made by another client (its settings say so): refused,
    // naming both; --force compares, and says the client differs.
    let stored: serde_json::Value = serde_json::from_slice(&std::fs::read(&slow).unwrap()).unwrap();
    assert_eq!(stored["settings"]["client"], "model", "{stored}");
    assert_eq!(stored["settings"]["site"], "icons", "{stored}");
    assert!(!stored["settings"]["build"].as_str().unwrap().is_empty());
    let mut chromium = stored.clone();
    chromium["settings"]["client"] = "chromium".into();
    let other = dir.0.join("chromium.json");
    std::fs::write(&other, chromium.to_string()).unwrap();
    let other = other.to_str().unwrap();
    fails(&["diff", &slow, other], 2, "client: A model, B chromium");
    let o = spdylab(&["diff", &slow, other, "--force"]);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("client  A model  B chromium"));
    // compare --baseline refuses the same, before it runs.
    let err = fails(
        &[
            "compare",
            "--site",
            "twitter",
            "--protocols",
            "https,h2",
            "--rtt",
            "20ms",
            "--reps",
            "4",
            "--baseline",
            &fast,
        ],
        2,
        "site: A icons, B twitter",
    );
    assert!(err.contains("--force"), "{err}");
}
