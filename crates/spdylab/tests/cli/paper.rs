//! `spdylab paper` with the QUIC-era studies (issue 50) as a user runs them:
//! `production-quic --quick` is one real campaign per server here (the
//! built-in one and caddy with h2 and h3, nginx, h2o and Apache with h2),
//! each in its own directory with its report and Yu & Benson's cells as
//! marks; `--server` is refused for the group; `--print` shows every member,
//! and `all --server nginx` gives 004's figures nginx, the rest their own.

use crate::common::{self, fails, ok, spdylab, TempDir};

#[test]
fn production_quic_runs_one_campaign_per_real_server_with_its_marks() {
    let printed = spdylab(&["paper", "production-quic", "--quick", "--print"]);
    ok(&printed);
    let text = String::from_utf8_lossy(&printed.stdout);
    for server in ["builtin", "caddy", "nginx", "h2o", "apache"] {
        assert!(text.contains(&format!("server = \"{server}\"")), "{text}");
    }
    fails(
        &["paper", "production-quic", "--server", "nginx", "--print"],
        2,
        "paper production-quic: --server nginx: runs one campaign per server",
    );
    // `all` on another server: 004's figures take it, the QUIC-era presets
    // keep their own (one needs h3, the built-in server's knobs or a peer).
    let all = spdylab(&["paper", "all", "--quick", "--server", "nginx", "--print"]);
    ok(&all);
    let text = String::from_utf8_lossy(&all.stdout);
    let server_of = |name: &str| {
        let file = &text[text.find(&format!("# {name}: ")).unwrap()..];
        file.lines().nth(1).unwrap().to_string()
    };
    assert_eq!(server_of("fig2"), "server = \"nginx\"");
    assert_eq!(server_of("tuned-tcp"), "server = \"builtin\"");
    assert_eq!(server_of("production-quic-caddy"), "server = \"caddy\"");
    assert!(String::from_utf8_lossy(&all.stderr).contains("keep their own server"));
    if !common::is_root() {
        common::cannot_run("a campaign needs root (its testbeds' namespaces)");
        return;
    }
    let dir = TempDir::new("paper-production-quic");
    let out = dir.join("pq");
    ok(&spdylab(&[
        "paper",
        "production-quic",
        "--quick",
        "--out",
        out.to_str().unwrap(),
    ]));
    for (server, protocols) in [
        ("builtin", &["h2", "h3"][..]),
        ("caddy", &["h2", "h3"]),
        ("nginx", &["h2"]),
        ("h2o", &["h2"]),
        ("apache", &["h2"]),
    ] {
        let d = out.join(format!("production-quic-{server}"));
        // Every Trial once, none failed: 2 pages x 2 losses x 3 repetitions.
        let records = common::records(&d);
        assert_eq!(records.len(), 12 * protocols.len(), "{server}: {records:?}");
        assert!(
            records.values().all(|&(n, failed)| n == 1 && failed == 0),
            "{server}: {records:?}"
        );
        let summary = std::fs::read_to_string(d.join("summary.csv")).unwrap();
        for p in protocols {
            assert!(summary.contains(&format!(",{p},")), "{server}: {summary}");
        }
        let report = std::fs::read_to_string(d.join("report.html")).unwrap();
        assert_eq!(
            report.contains("Yu &amp; Benson: Google"),
            protocols.contains(&"h3"),
            "{server}: the study's marks on the h3 members"
        );
    }
}
