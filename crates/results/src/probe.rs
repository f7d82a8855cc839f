//! The probe record: what one probe measured. lab's probes return it
//! (`compare` prints it in its JSON, a campaign appends it to probes.jsonl),
//! and resumption, `merge` and the report read it back — one type for all, so
//! that none can drift from another. Field order is the line's key order.

use crate::experiment::{Metric, Point};
use crate::files::PROBES_FILE;
use proto::Protocol;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{self, BufRead, BufReader};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Sums over a page's resources of each HAR 1.2 phase, in ms (a phase that
/// does not apply to a resource counts 0); `connect` includes `ssl`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Phases {
    #[serde(deserialize_with = "nan_if_null")]
    pub blocked: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub dns: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub connect: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub ssl: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub send: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub wait: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub receive: f64,
}

impl Phases {
    /// A phase by its HAR name (0 for an unknown name).
    pub fn get(&self, name: &str) -> f64 {
        match name {
            "blocked" => self.blocked,
            "dns" => self.dns,
            "connect" => self.connect,
            "ssl" => self.ssl,
            "send" => self.send,
            "wait" => self.wait,
            "receive" => self.receive,
            _ => 0.0,
        }
    }
}

/// What the user saw of a page load (Chromium's; the model estimates none
/// yet), each in ms from navigation start (the document's request, PLT's
/// start); a figure the browser did not report is absent. docs/visual.md.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Paint {
    /// The document's first response byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttfb_ms: Option<f64>,
    /// First contentful paint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fcp_ms: Option<f64>,
    /// Largest contentful paint as of onload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lcp_ms: Option<f64>,
    /// The LCP element: its tag, then its id, image URL or first words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lcp_element: Option<String>,
    /// Its painted area in the viewport, CSS px².
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lcp_size: Option<f64>,
    /// Speed Index: ∫ (1 − visual progress) dt, from the screen's frames.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_index_ms: Option<f64>,
    /// Visually complete: the first frame as the final one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visually_complete_ms: Option<f64>,
}

/// What one probe measured, with its Trial and point: one line of
/// probes.jsonl, and one probe of `compare`'s JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRecord {
    /// The Trial's key (`experiment::trial_key`); empty outside a campaign.
    pub trial: String,
    /// The Trial's point; empty outside a campaign.
    pub point: Point,
    #[serde(default)]
    pub schema: u32,
    pub protocol: Protocol,
    pub rep: usize,
    #[serde(default, deserialize_with = "nan_if_null")]
    pub plt_ms: f64,
    /// First request packet to last response packet, at the client's side of the link.
    #[serde(default, deserialize_with = "nan_if_null")]
    pub tow_ms: f64,
    #[serde(default)]
    pub connections: usize,
    /// Connections the client opened: TCP SYNs and QUIC Initials (distinct ports).
    #[serde(default)]
    pub syns: u64,
    /// Of those, TCP SYNs that carried data: TCP Fast Open with a cookie
    /// (`--tcp-fastopen`); 0 is left out.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub syns_with_data: u64,
    #[serde(default)]
    pub bytes_down: u64,
    #[serde(default)]
    pub bytes_up: u64,
    #[serde(default)]
    pub packets_down: u64,
    #[serde(default)]
    pub packets_up: u64,
    #[serde(default)]
    pub drops_queue: u64,
    #[serde(default)]
    pub drops_loss: u64,
    #[serde(default)]
    pub resources: usize,
    /// Response body bytes of the page's resources, as the client counted
    /// them (absent in older files: 0).
    #[serde(default)]
    pub body_bytes: u64,
    /// Requests answered 404 that the site has nothing for (replay misses;
    /// absent in older files: 0).
    #[serde(default)]
    pub misses: usize,
    #[serde(default)]
    pub phases: Phases,
    #[serde(default)]
    pub error: Option<String>,
    /// TLS handshakes that resumed a session of an earlier probe of the Trial
    /// (`--tls-resume`; the model client only).
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub tls_resumed: usize,
    /// With competing flows (`--cross-traffic`): how long they had run when
    /// the page's navigation began, ms. The probes draw it at random within
    /// the flows' cycle, so it says which phase of their sawtooth the page
    /// met. None without competing flows and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_lead_ms: Option<f64>,
    /// Seconds since the Unix epoch when the probe started.
    #[serde(default, deserialize_with = "nan_if_null")]
    pub started: f64,
    /// The probe's HAR, relative to the campaign directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub har: Option<String>,
    /// Why its PLT is what it is: the PLT taken apart into mechanisms, from
    /// the link's packet log and the HAR (`explain::analyze`, issue 34). None
    /// for a failed probe and in records written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<explain::Explanation>,
    /// What the user saw: TTFB, FCP, LCP and its element (Chromium's). None
    /// from the model, for a failed probe and in records written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paint: Option<Paint>,
    /// Which view it measured and what it reused of the client's first
    /// load (`--view`, docs/repeat-view.md); its fields sit in the record's
    /// own object. Absent in older files: a first view.
    #[serde(flatten, default)]
    pub reuse: Reuse,
    /// Each resource's times and connection, for a later diagnosis without
    /// the client (`crosscheck` keeps them in its loads; campaigns and
    /// `compare` do not: their HARs hold more). Empty: not kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RequestRow>,
}

/// One resource of a load, as a JSON array (a page has dozens, a crosscheck
/// thousands of loads): `[host, path, content type, connection, found,
/// sent, first byte, last byte, body bytes, status]`. The times are ms from
/// navigation start: found (the HAR's start: discovered and queued), sent
/// (after blocked, DNS, connect and TLS), the response's first byte (after
/// send and wait) and its last; the connection is the client's own number
/// (HAR `connection`), so two rows of one load with the same number shared
/// a connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestRow(
    pub String,
    pub String,
    pub String,
    pub usize,
    pub f64,
    pub f64,
    pub f64,
    pub f64,
    pub u64,
    pub u16,
);

/// A probe's view and what a repeat view reused: cache hits, 304s, the
/// bytes the cache gave, QUIC 0-RTT; with `tls_resumed`, the handshake
/// round trips saved. Zero counts are left out of the line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reuse {
    /// `first` or `repeat` (a record is one of the two); a first view's
    /// line leaves it out, so lines written before views read and write
    /// back byte for byte.
    #[serde(skip_serializing_if = "crate::kinds::View::is_first")]
    pub view: crate::kinds::View,
    /// Resources used from the HTTP cache without a request.
    #[serde(skip_serializing_if = "is_zero_usize")]
    pub cache_hits: usize,
    /// Conditional requests answered 304 Not Modified.
    #[serde(skip_serializing_if = "is_zero_usize")]
    pub not_modified: usize,
    /// Body bytes the cache gave (hits and 304s): not on the wire.
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub cached_bytes: u64,
    /// Connections that sent requests before their handshake ended — QUIC
    /// 0-RTT (h3) or TLS 1.3 early data (TCP: https, h2, SPDY) — and those
    /// whose early data the server accepted (docs/repeat-view.md).
    #[serde(skip_serializing_if = "is_zero_usize")]
    pub zero_rtt_sent: usize,
    #[serde(skip_serializing_if = "is_zero_usize")]
    pub zero_rtt_accepted: usize,
    /// Of `zero_rtt_sent`, the connections over TCP: TLS 1.3 early data
    /// sent (accepted or not). A probe is one protocol, so this is
    /// `zero_rtt_sent` on a TCP protocol and 0 on h3.
    #[serde(skip_serializing_if = "is_zero_usize")]
    pub early_data: usize,
    /// Handshake round trips saved against full handshakes: one per
    /// accepted 0-RTT or TLS early data (the request goes with the
    /// ClientHello), one per resumed TLS 1.2 handshake (TLS 1.3 resumption
    /// without early data takes the same one round trip as a full one).
    #[serde(skip_serializing_if = "is_zero_usize")]
    pub handshake_rtts_saved: usize,
}

/// A float as JSON writes it: a number, or null for what was not a number
/// (serde_json writes NaN and infinities as null), read back as NaN rather
/// than refused, so that a record written is always a record read.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

fn is_zero_usize(v: &usize) -> bool {
    *v == 0
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

/// Seconds since the Unix epoch of `t` (0 before it).
pub fn unix_secs(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl ProbeRecord {
    /// A probe that could not run, starting now: all zeros but its error (no
    /// Trial, no point: a campaign sets them).
    pub fn failed(protocol: Protocol, rep: usize, error: String) -> ProbeRecord {
        ProbeRecord {
            trial: String::new(),
            point: Point::new(),
            schema: 1,
            protocol,
            rep,
            plt_ms: 0.0,
            tow_ms: 0.0,
            connections: 0,
            syns: 0,
            syns_with_data: 0,
            bytes_down: 0,
            bytes_up: 0,
            packets_down: 0,
            packets_up: 0,
            drops_queue: 0,
            drops_loss: 0,
            resources: 0,
            body_bytes: 0,
            misses: 0,
            phases: Phases::default(),
            error: Some(error),
            tls_resumed: 0,
            cross_lead_ms: None,
            started: unix_secs(SystemTime::now()),
            har: None,
            explain: None,
            paint: None,
            reuse: Reuse::default(),
            requests: Vec::new(),
        }
    }

    /// The record as one line of probes.jsonl (without its newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a probe record serializes")
    }
}

/// Reads DIR/probes.jsonl (none: no records). A last line cut short by a kill
/// or a full disk (no newline at its end) is cut off the file (when `repair`)
/// so that appending goes on cleanly. Any other bad line, whatever its bytes,
/// is an error naming the file and line: a record is never skipped silently.
pub fn read_probes(dir: &Path, repair: bool) -> io::Result<Vec<ProbeRecord>> {
    let path = dir.join(PROBES_FILE);
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    let mut file = match OpenOptions::new().read(true).write(repair).open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(named(e)),
    };
    let mut out = Vec::new();
    let mut good_len = 0u64;
    let mut reader = BufReader::new(&mut file);
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(named)?;
        if n == 0 {
            break;
        }
        number += 1;
        if line.last() != Some(&b'\n') {
            break; // cut short: dropped below
        }
        match serde_json::from_slice::<ProbeRecord>(&line) {
            Ok(p) => out.push(p),
            Err(e) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}:{number}: not a probe record: {e}; nothing was changed (mend or \
                         delete that line, then run again)",
                        path.display()
                    ),
                ))
            }
        }
        good_len += n as u64;
    }
    drop(reader);
    if repair && file.metadata().map_err(named)?.len() > good_len {
        file.set_len(good_len).map_err(named)?;
        file.sync_data().map_err(named)?;
    }
    Ok(out)
}

/// The last record of each Trial, in file order of first appearance.
pub fn latest(probes: Vec<ProbeRecord>) -> Vec<ProbeRecord> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<ProbeRecord> = Vec::new();
    for p in probes {
        match index.get(&p.trial) {
            Some(&i) => out[i] = p,
            None => {
                index.insert(p.trial.clone(), out.len());
                out.push(p);
            }
        }
    }
    out
}

/// A metric's value in a probe (here, not in `experiment`, which the
/// probe's record names: one direction between the two modules).
impl Metric {
    /// Its value in a probe, ms; None where the probe has none (a paint
    /// the browser did not report) or it is not a number.
    pub fn of(self, p: &ProbeRecord) -> Option<f64> {
        let paint = p.paint.as_ref();
        match self {
            Metric::Plt => Some(p.plt_ms),
            Metric::Tow => Some(p.tow_ms),
            Metric::Ttfb => paint.and_then(|x| x.ttfb_ms),
            Metric::Fcp => paint.and_then(|x| x.fcp_ms),
            Metric::Lcp => paint.and_then(|x| x.lcp_ms),
            Metric::Si => paint.and_then(|x| x.speed_index_ms),
        }
        .filter(|v| v.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line as campaigns write it (key order included).
    const LINE: &str = r#"{"trial":"site=icons rtt=20ms protocol=h2 rep=0","point":{"rtt":"20ms","site":"icons"},"schema":1,"protocol":"h2","rep":0,"plt_ms":61.5,"tow_ms":60.25,"connections":1,"syns":1,"bytes_down":120000,"bytes_up":4000,"packets_down":90,"packets_up":50,"drops_queue":0,"drops_loss":0,"resources":12,"body_bytes":110000,"misses":0,"phases":{"blocked":0.5,"dns":0.0,"connect":40.0,"ssl":20.0,"send":1.0,"wait":100.0,"receive":30.0},"error":null,"started":1700000000.5,"har":"har/0011223344556677.har"}"#;

    /// A line as campaigns wrote it before every record had its body bytes
    /// and misses (they were left out when 0, and before that not known).
    const OLD_LINE: &str = r#"{"trial":"site=icons rtt=20ms protocol=h2 rep=0","point":{"rtt":"20ms","site":"icons"},"schema":1,"protocol":"h2","rep":0,"plt_ms":61.5,"tow_ms":60.25,"connections":1,"syns":1,"bytes_down":120000,"bytes_up":4000,"packets_down":90,"packets_up":50,"drops_queue":0,"drops_loss":0,"resources":12,"phases":{"blocked":0.5,"dns":0.0,"connect":40.0,"ssl":20.0,"send":1.0,"wait":100.0,"receive":30.0},"error":null,"started":1700000000.5,"har":"har/0011223344556677.har"}"#;

    #[test]
    fn a_line_reads_and_writes_back_byte_for_byte() {
        let r: ProbeRecord = serde_json::from_str(LINE).unwrap();
        assert_eq!(r.protocol, Protocol::H2);
        assert_eq!(r.phases.get("ssl"), 20.0);
        assert_eq!(r.to_line(), LINE);
        let failed = ProbeRecord {
            error: Some("testbed: boom".into()),
            har: None,
            ..r
        };
        let line = failed.to_line();
        assert!(
            line.ends_with(r#""error":"testbed: boom","started":1700000000.5}"#),
            "{line}"
        );
    }

    /// An older line reads, its body bytes and misses 0, and is written back
    /// with them.
    #[test]
    fn an_older_line_reads() {
        let r: ProbeRecord = serde_json::from_str(OLD_LINE).unwrap();
        assert_eq!((r.body_bytes, r.misses, r.tls_resumed), (0, 0, 0));
        let line = ProbeRecord {
            body_bytes: 110000,
            ..r
        }
        .to_line();
        assert_eq!(line, LINE);
    }

    /// A line without paints (the model's, older ones) reads with none and
    /// is written without them; a Chromium probe's paints read back as
    /// themselves, a figure it did not report absent from the line.
    #[test]
    fn paints_are_optional_in_a_line() {
        let r: ProbeRecord = serde_json::from_str(LINE).unwrap();
        assert_eq!(r.paint, None);
        assert!(!r.to_line().contains("paint"));
        let painted = ProbeRecord {
            paint: Some(Paint {
                ttfb_ms: Some(41.5),
                fcp_ms: Some(120.25),
                lcp_ms: None,
                lcp_element: None,
                lcp_size: None,
                speed_index_ms: None,
                visually_complete_ms: Some(400.5),
            }),
            ..r
        };
        let line = painted.to_line();
        assert!(
            line.ends_with(
                r#","paint":{"ttfb_ms":41.5,"fcp_ms":120.25,"visually_complete_ms":400.5}}"#
            ),
            "{line}"
        );
        let back: ProbeRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back, painted);
        let with_lcp = r#"{"protocol":"h2","rep":0,"trial":"","point":{},"paint":{"lcp_ms":300.0,"lcp_element":"p \"a b\"","lcp_size":871250.0,"future":1}}"#;
        let back: ProbeRecord = serde_json::from_str(with_lcp).unwrap();
        let p = back.paint.unwrap();
        assert_eq!((p.lcp_ms, p.lcp_size), (Some(300.0), Some(871250.0)));
        assert_eq!(p.lcp_element.as_deref(), Some("p \"a b\""));
        assert_eq!((p.ttfb_ms, p.fcp_ms), (None, None));
    }

    /// A record that could not run: all zeros but its error, started now.
    #[test]
    fn a_failed_record() {
        let r = ProbeRecord::failed(Protocol::H3, 2, "testbed: boom".into());
        assert_eq!((r.protocol, r.rep, r.schema), (Protocol::H3, 2, 1));
        assert_eq!(r.error.as_deref(), Some("testbed: boom"));
        assert!(r.started > 1.6e9, "{}", r.started);
        let back: ProbeRecord = serde_json::from_str(&r.to_line()).unwrap();
        assert_eq!(back, r);
    }

    /// A NaN (a phase or time that could not be computed) is written as
    /// null; it reads back as NaN, not as a bad line.
    #[test]
    fn a_record_with_nan_reads_back() {
        let r: ProbeRecord = serde_json::from_str(LINE).unwrap();
        let nan = ProbeRecord {
            plt_ms: f64::NAN,
            started: f64::INFINITY,
            phases: Phases {
                wait: f64::NAN,
                ..r.phases
            },
            ..r
        };
        let line = nan.to_line();
        assert!(line.contains(r#""plt_ms":null"#), "{line}");
        let back: ProbeRecord = serde_json::from_str(&line).unwrap();
        assert!(back.plt_ms.is_nan() && back.phases.wait.is_nan() && back.started.is_nan());
        assert_eq!(back.tow_ms, 60.25);
        assert_eq!(back.to_line(), line);
    }

    #[test]
    fn cut_lines_are_repaired_and_bad_ones_named() {
        let dir = std::env::temp_dir().join(format!("results-probes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(PROBES_FILE);
        std::fs::write(&path, format!("{LINE}\n{LINE}\n{{\"trial\":\"x")).unwrap();
        let all = read_probes(&dir, true).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(latest(all).len(), 1);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{LINE}\n{LINE}\n")
        );
        std::fs::write(&path, format!("{LINE}\nnot json\n")).unwrap();
        let err = read_probes(&dir, false).unwrap_err().to_string();
        assert!(err.contains("probes.jsonl:2: "), "{err}");
        // Bytes that are not UTF-8, an empty line, a record cut and joined to
        // the next: each named, the file untouched even when repairing.
        for bad in [&b"\xff\xfe{\n"[..], b"\n", &LINE.as_bytes()[..40]] {
            let mut text = format!("{LINE}\n").into_bytes();
            text.extend_from_slice(bad);
            if !bad.ends_with(b"\n") {
                text.push(b'\n');
            }
            text.extend_from_slice(format!("{LINE}\n").as_bytes());
            std::fs::write(&path, &text).unwrap();
            let err = read_probes(&dir, true).unwrap_err().to_string();
            assert!(err.contains("probes.jsonl:2: not a probe record"), "{err}");
            assert_eq!(std::fs::read(&path).unwrap(), text);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A repeat view's record says so, with what it reused; it reads back.
    #[test]
    fn a_repeat_views_line_says_so_and_reads_back() {
        let r: ProbeRecord = serde_json::from_str(LINE).unwrap();
        assert_eq!(r.reuse.view, crate::View::First);
        let repeat = ProbeRecord {
            reuse: Reuse {
                view: crate::View::Repeat,
                cache_hits: 9,
                not_modified: 1,
                cached_bytes: 90000,
                zero_rtt_sent: 1,
                zero_rtt_accepted: 1,
                early_data: 0,
                handshake_rtts_saved: 1,
            },
            ..r
        };
        let line = repeat.to_line();
        assert!(line.contains(r#""view":"repeat","cache_hits":9,"not_modified":1,"cached_bytes":90000,"zero_rtt_sent":1,"zero_rtt_accepted":1,"handshake_rtts_saved":1"#), "{line}");
        let back: ProbeRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back, repeat);
    }
}
