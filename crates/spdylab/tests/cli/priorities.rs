//! `spdylab priorities`: the prioritization matrix on real testbeds — a
//! cell that runs has a score per repetition, a verdict and its HARs, a cell
//! a server cannot run says why, the page links each cell to its waterfall —
//! and bad input is one line, exit 2, before any testbed.

use crate::common::*;

/// The built-in server (priorities on, TCP_NOTSENT_LOWAT) and nginx, over h2
/// and h3, with the model, on a fast link with a small image: the h2 cells
/// run and score, nginx's h3 is refused with its reason; --out holds the
/// JSON, the page and a HAR per probe.
#[test]
fn the_matrix_scores_what_runs_and_says_why_not_for_the_rest() {
    let dir = TempDir::new("priorities");
    let v = run_json(&[
        "priorities",
        "--servers",
        "builtin+lowat,nginx",
        "--protocols",
        "h2,h3",
        "--clients",
        "model",
        "--rtt",
        "20ms",
        "--rate",
        "20mbit",
        "--image-size",
        "20kB",
        "--reps",
        "2",
        "--warmup",
        "0",
        "--out",
        &dir.arg("out"),
        "--json",
    ]);
    assert_eq!(v["image_bytes"], 20_000);
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4, "{v}");
    let cell = |row: &str, protocol: &str| {
        cells
            .iter()
            .find(|c| c["row"] == row && c["protocol"] == protocol)
            .unwrap_or_else(|| panic!("no cell {row} {protocol}: {v}"))
    };
    for (row, protocol) in [
        ("builtin+lowat", "h2"),
        ("builtin+lowat", "h3"),
        ("nginx", "h2"),
    ] {
        let c = cell(row, protocol);
        assert_eq!(c["status"], "ran", "{c}");
        assert_eq!(c["scores"].as_array().unwrap().len(), 2, "{c}");
        let s = &c["summary"];
        assert!(s["median"].as_f64().unwrap() > 0.0, "{c}");
        assert!(
            ["pass", "fail", "epic_fail"].contains(&s["verdict"].as_str().unwrap()),
            "{c}"
        );
        let har = c["median_har"].as_str().unwrap();
        assert!(dir.join("out").join(har).is_file(), "{har}");
        // Every fetch of the test is in the HAR: the page, 2 refs, 30 lows, 2 highs.
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("out").join(har)).unwrap()).unwrap();
        assert!(entries(&doc).len() >= 35, "{}", entries(&doc).len());
    }
    let refused = cell("nginx", "h3");
    assert_eq!(refused["status"], "refused");
    assert!(
        refused["why"].as_str().unwrap().contains("HTTP/3"),
        "{refused}"
    );
    let page = std::fs::read_to_string(dir.join("out/priorities.html")).unwrap();
    assert!(
        page.contains("builtin+lowat") && page.contains("<svg"),
        "{page}"
    );
    assert!(dir.join("out/priorities.json").is_file());
}

#[test]
fn bad_input_is_one_line_exit_2() {
    fails(
        &["priorities", "--servers", "builtin,iis"],
        2,
        "--servers: 'iis' is not a server of the matrix",
    );
    fails(
        &["priorities", "--clients", "safari"],
        2,
        "--clients: 'safari'",
    );
    fails(&["priorities", "--profiles", "5g"], 2, "--profiles: '5g'");
    fails(&["priorities", "--image-size", "10"], 2, "--image-size");
    fails(&["priorities", "--image-size", "lots"], 2, "--image-size");
    fails(&["priorities", "--protocols", "h4"], 2, "--protocols");
    fails(&["priorities", "--reps", "0"], 2, "--reps");
}

/// `--quick` (issue 37's first look, issue 47): the built-in server's four
/// rows, the model only, 3 repetitions; a flag given beside it wins (here
/// the link, the image and one repetition, to keep the test short).
#[test]
fn quick_is_the_builtin_rows_with_the_model_and_flags_given_win() {
    let v = run_json(&[
        "priorities",
        "--quick",
        "--rtt",
        "20ms",
        "--rate",
        "20mbit",
        "--image-size",
        "20kB",
        "--reps",
        "1",
        "--json",
    ]);
    let cells = v["cells"].as_array().unwrap();
    let mut rows: Vec<&str> = cells.iter().map(|c| c["row"].as_str().unwrap()).collect();
    rows.dedup();
    assert_eq!(
        rows,
        [
            "builtin",
            "builtin+lowat",
            "builtin-off",
            "builtin-off+lowat"
        ],
        "{v}"
    );
    assert_eq!(cells.len(), 8, "4 rows x h2, h3 x the model: {v}");
    for c in cells {
        assert_eq!(c["client"], "model", "{c}");
        assert_eq!(c["status"], "ran", "{c}");
        assert_eq!(c["scores"].as_array().unwrap().len(), 1, "{c}");
    }
}
