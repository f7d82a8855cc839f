//! `--view` with `--client chromium` (issue 38): one Chromium, one profile,
//! loads the page, closes every connection, loads it again. The repeat view
//! takes what the built-in server let it cache (youtube's assets carry
//! `max-age`; its document `no-cache` with an ETag: revalidated), and
//! resumes TLS, so fewer bytes cross the link than on the first view of
//! the same probe.

use crate::common::{self, probes, run_json};

#[test]
fn chromium_s_repeat_view_takes_its_cache_and_moves_fewer_bytes() {
    if !common::is_root() {
        return common::cannot_run("the testbed's namespaces need root");
    }
    if !["/usr/lib/chromium/chromium", "/usr/bin/chromium"]
        .iter()
        .any(|p| std::path::Path::new(p).is_file())
    {
        return common::cannot_run("chromium is not installed (apt-get install chromium)");
    }
    let v = run_json(&testkit::cli::one_quick_rep(
        &[
            "compare",
            "--site",
            "youtube",
            "--client",
            "chromium",
            "--protocols",
            "h2",
            "--view",
            "both",
        ],
        &["--json"],
    ));
    let all = probes(&v);
    assert_eq!(all.len(), 2, "{v}");
    let view = |name: &str| {
        all.iter()
            .find(|p| p["view"].as_str().unwrap_or("first") == name)
            .unwrap_or_else(|| panic!("no {name} view: {v}"))
    };
    let (first, repeat) = (view("first"), view("repeat"));
    for p in [first, repeat] {
        assert!(p["error"].is_null(), "{p}");
    }
    let n = |p: &serde_json::Value, k: &str| p[k].as_u64().unwrap_or(0);
    assert!(
        n(repeat, "bytes_down") < n(first, "bytes_down"),
        "first {first}\nrepeat {repeat}"
    );
    assert_eq!(n(first, "cache_hits"), 0, "{first}");
    assert!(n(repeat, "cache_hits") > 0, "{repeat}");
    // The document (no-cache, with an ETag) revalidated: a 304 on the wire,
    // over a connection whose TLS session Chromium resumed.
    assert_eq!(n(repeat, "not_modified"), 1, "{repeat}");
    assert!(n(repeat, "tls_resumed") >= 1, "{repeat}");
}
