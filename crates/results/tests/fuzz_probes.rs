//! Property tests with arbitrary inputs for reading probes.jsonl (the fuzzing
//! of issue 19): arbitrary lines never panic, a bad complete line is an error
//! naming the file and its line, a torn last line is cut off by repair and the
//! lines before it kept; every record (finite numbers) written as a line reads
//! back as itself. docs/fuzzing.md has the long runs and the coverage-guided
//! target.

use proptest::prelude::*;
use results::probe::RequestRow;
use results::{read_probes, Paint, Phases, ProbeRecord, Protocol, PROBES_FILE};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh directory for one case, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new() -> Dir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let d = std::env::temp_dir().join(format!(
            "results-fuzz-probes-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        -1e12f64..1e12,
        Just(0.0),
        Just(-1.0),
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
    ]
}

/// Paints as Chromium reports them, any figure possibly missing.
fn any_paint() -> impl Strategy<Value = Paint> {
    (
        proptest::option::of(finite()),
        proptest::option::of(finite()),
        proptest::option::of(finite()),
        proptest::option::of("\\PC{0,30}"),
        proptest::option::of(finite()),
        proptest::option::of(finite()),
        proptest::option::of(finite()),
    )
        .prop_map(
            |(
                ttfb_ms,
                fcp_ms,
                lcp_ms,
                lcp_element,
                lcp_size,
                speed_index_ms,
                visually_complete_ms,
            )| {
                Paint {
                    ttfb_ms,
                    fcp_ms,
                    lcp_ms,
                    lcp_element,
                    lcp_size,
                    speed_index_ms,
                    visually_complete_ms,
                }
            },
        )
}

fn any_record() -> impl Strategy<Value = ProbeRecord> {
    (
        (
            "\\PC{0,30}",
            proptest::collection::btree_map("[a-z_]{1,8}", "\\PC{0,10}", 0..4),
            any::<u32>(),
            proptest::sample::select(Protocol::ALL.to_vec()),
            any::<usize>(),
            finite(),
            finite(),
            any::<usize>(),
        ),
        (
            any::<[u64; 7]>(),
            any::<usize>(),
            proptest::collection::vec(finite(), 7),
            proptest::option::of("\\PC{0,30}"),
            finite(),
            proptest::option::of("[a-z0-9/.]{1,20}"),
            proptest::option::of(any_paint()),
        ),
    )
        .prop_map(
            |(
                (trial, point, schema, protocol, rep, plt_ms, tow_ms, connections),
                (n, resources, ph, error, started, har, paint),
            )| ProbeRecord {
                trial,
                point,
                schema,
                protocol,
                rep,
                plt_ms,
                tow_ms,
                connections,
                syns: n[0],
                syns_with_data: n[0] / 2,
                bytes_down: n[1],
                bytes_up: n[2],
                packets_down: n[3],
                packets_up: n[4],
                drops_queue: n[5],
                drops_loss: n[6],
                resources,
                body_bytes: 0,
                misses: 0,
                tls_resumed: 0,
                cross_lead_ms: started.is_finite().then_some(started / 1e6),
                phases: Phases {
                    blocked: ph[0],
                    dns: ph[1],
                    connect: ph[2],
                    ssl: ph[3],
                    send: ph[4],
                    wait: ph[5],
                    receive: ph[6],
                },
                error,
                started,
                har,
                // Its own round trip is explain's test.
                explain: None,
                paint,
                reuse: Default::default(),
                // A row when the record has a HAR: its round trip too.
                requests: (resources % 2 == 1)
                    .then(|| {
                        RequestRow(
                            "a.example".into(),
                            "/x?y=\"z\"".into(),
                            "text/css".into(),
                            resources,
                            tow_ms,
                            tow_ms,
                            plt_ms,
                            plt_ms,
                            n[1],
                            200,
                        )
                    })
                    .into_iter()
                    .collect(),
            },
        )
}

/// A line that may or may not be a record.
fn any_line() -> impl Strategy<Value = String> {
    prop_oneof![
        any_record().prop_map(|r| r.to_line()),
        // A record with a few characters changed.
        (
            any_record(),
            proptest::collection::vec((any::<prop::sample::Index>(), any::<char>()), 1..4)
        )
            .prop_map(|(r, edits)| {
                let mut chars: Vec<char> = r.to_line().chars().collect();
                for (i, c) in edits {
                    let n = i.index(chars.len());
                    chars[n] = if c == '\n' { ' ' } else { c };
                }
                chars.into_iter().collect()
            }),
        "[^\n]{0,60}",
    ]
}

proptest! {
    #[test]
    fn fuzz_probe_records_read_back_as_themselves(records in proptest::collection::vec(any_record(), 0..6)) {
        let dir = Dir::new();
        let text: String = records.iter().map(|r| r.to_line() + "\n").collect();
        std::fs::write(dir.0.join(PROBES_FILE), &text).unwrap();
        let back = read_probes(&dir.0, false).unwrap();
        prop_assert_eq!(back.len(), records.len());
        for (a, b) in back.iter().zip(&records) {
            prop_assert_eq!(a.to_line(), b.to_line());
        }
    }

    #[test]
    fn fuzz_probes_arbitrary_lines_never_panic_and_bad_lines_are_named(
        lines in proptest::collection::vec(any_line(), 0..6),
        torn in proptest::option::of("[^\n]{1,40}"),
    ) {
        let dir = Dir::new();
        let path = dir.0.join(PROBES_FILE);
        let mut text: String = lines.iter().map(|l| l.clone() + "\n").collect();
        let complete = text.len();
        if let Some(t) = &torn {
            text.push_str(t);
        }
        std::fs::write(&path, &text).unwrap();
        let first_bad = lines
            .iter()
            .position(|l| serde_json::from_str::<ProbeRecord>(l).is_err());
        match (read_probes(&dir.0, true), first_bad) {
            (Ok(records), None) => {
                prop_assert_eq!(records.len(), lines.len());
                // The torn last line is cut off, the complete ones kept.
                prop_assert_eq!(std::fs::read(&path).unwrap(), text.as_bytes()[..complete].to_vec());
            }
            (Err(e), Some(n)) => {
                let e = e.to_string();
                let named = format!("{PROBES_FILE}:{}: ", n + 1);
                prop_assert!(e.contains(&named), "{} does not name {}", e, named);
                // Nothing is cut from a file with a bad line.
                prop_assert_eq!(std::fs::read(&path).unwrap(), text.into_bytes());
            }
            (r, bad) => prop_assert!(false, "read {:?}, first bad line {:?}", r.map(|v| v.len()), bad),
        }
    }
}

#[test]
fn fuzz_regression_a_float_reads_back_to_its_last_bit() {
    // serde_json without float_roundtrip read this back as ...906e253.
    let line = r#"{"trial":"","point":{},"schema":0,"protocol":"http","rep":0,"plt_ms":9.228461595586907e253,"tow_ms":0.0}"#;
    let r: ProbeRecord = serde_json::from_str(line).unwrap();
    assert_eq!(r.plt_ms, 9.228461595586907e253);
    let back: ProbeRecord = serde_json::from_str(&r.to_line()).unwrap();
    assert_eq!(back.plt_ms.to_bits(), r.plt_ms.to_bits());
}

#[test]
fn fuzz_regression_a_line_that_is_not_utf8_is_named() {
    // cargo-fuzz (target probes): a record with one byte turned into 0xff read
    // as "stream did not contain valid UTF-8", naming neither file nor line.
    let dir = Dir::new();
    let path = dir.0.join(PROBES_FILE);
    let good = r#"{"trial":"t","point":{},"protocol":"h2","rep":0}"#;
    let mut bytes = format!("{good}\n").into_bytes();
    bytes.extend_from_slice(b"{\"trial\":\"\xff\",\"point\":{},\"protocol\":\"h2\",\"rep\":1}\n");
    std::fs::write(&path, &bytes).unwrap();
    let e = read_probes(&dir.0, true).unwrap_err().to_string();
    assert!(e.contains(&format!("{PROBES_FILE}:2: ")), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "nothing is cut");
}
