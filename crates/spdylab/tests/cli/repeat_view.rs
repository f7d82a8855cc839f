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

/// `--repeat-cache clear` (Kakhki et al.'s 0-RTT pages): both clients'
/// repeat views start with an empty HTTP cache but keep their TLS and QUIC
/// state, so over h3 every response comes again (no cache hit, no 304:
/// about the first view's bytes) in a connection that sent 0-RTT the
/// built-in server accepted.
#[test]
fn a_cleared_repeat_view_fetches_everything_again_over_0rtt_with_both_clients() {
    if !common::is_root() {
        return common::cannot_run("the testbed's namespaces need root");
    }
    let chromium = ["/usr/lib/chromium/chromium", "/usr/bin/chromium"]
        .iter()
        .any(|p| std::path::Path::new(p).is_file());
    if !chromium {
        common::cannot_run("chromium is not installed: the model's half only");
    }
    for client in ["model", "chromium"]
        .into_iter()
        .take(1 + chromium as usize)
    {
        let v = run_json(&testkit::cli::one_quick_rep(
            &[
                "compare",
                "--site",
                "objects-10x20kB",
                "--client",
                client,
                "--protocols",
                "h3",
                "--view",
                "both",
                "--repeat-cache",
                "clear",
            ],
            &["--json"],
        ));
        let all = probes(&v);
        assert_eq!(all.len(), 2, "{client}: {v}");
        let view = |name: &str| {
            all.iter()
                .find(|p| p["view"].as_str().unwrap_or("first") == name)
                .unwrap_or_else(|| panic!("{client}: no {name} view: {v}"))
        };
        let (first, repeat) = (view("first"), view("repeat"));
        for p in [first, repeat] {
            assert!(p["error"].is_null(), "{client}: {p}");
        }
        let n = |p: &serde_json::Value, k: &str| p[k].as_u64().unwrap_or(0);
        assert_eq!(n(repeat, "cache_hits"), 0, "{client}: {repeat}");
        assert_eq!(n(repeat, "not_modified"), 0, "{client}: {repeat}");
        // Eleven responses of 20 kB or so, again: more than 200 kB down.
        assert!(
            n(repeat, "bytes_down") > 200_000,
            "{client}: first {first}\nrepeat {repeat}"
        );
        assert_eq!(n(repeat, "zero_rtt_accepted"), 1, "{client}: {repeat}");
        assert_eq!(n(first, "zero_rtt_sent"), 0, "{client}: {first}");
    }
}
