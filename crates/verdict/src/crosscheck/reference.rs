//! Chromium's loads from earlier crosschecks (`crosscheck --reference FILE`):
//! a refit of the model's costs, or a change of its code, is checked against
//! the same reference loads without loading the pages in Chromium again —
//! how Lantern measures its accuracy, against stored traces. Chromium's loads
//! are the slow half of a crosscheck (a fresh browser per probe) and the one
//! that needs a quiet machine; the model's are cheap and steady.
//!
//! A Trial is taken from a reference when its site, its link (`LinkKey`: the
//! stored testbed's link, initial window, congestion control and cross
//! traffic, not the label nor the text describing them) and its protocol match one of the
//! reference's rows, the repetitions are as many, and the server is the same
//! (documents of schema 2 written before the server was recorded are taken as
//! the built-in server's); every other Trial runs in Chromium as usual.

use super::{Figure, Loads, Phases};
use proto::Protocol;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;

/// The reference Trials of one or more crosscheck documents.
#[derive(Debug, Default)]
pub struct Reference {
    /// Each Trial's loads, the file it came from and its link's description.
    trials: HashMap<Key, (Loads, PathBuf, String)>,
    /// Each site's tree fingerprint as its Chromium loaded it, and the file
    /// (rows written before fingerprints were stored have none).
    fingerprints: HashMap<String, (String, PathBuf)>,
    files: Vec<PathBuf>,
}

/// The conditions a link puts a Trial in, as a crosscheck stores its testbed
/// (`testbeds[i]` of its document, `netns::TestbedSpec` serialized): the
/// link both ways, the initial window, the congestion control and the cross
/// traffic. Two Trials are on the same link when these are equal, whatever
/// the text describing them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LinkKey(String);

impl LinkKey {
    /// The key of a stored (serialized) testbed.
    pub fn of(testbed: &Value) -> LinkKey {
        let field = |k: &str| testbed.get(k).cloned().unwrap_or(Value::Null);
        let conditions = json!({"link": field("link"), "iw": field("iw"), "cc": field("cc"),
                                "cross": field("cross")});
        LinkKey(conditions.to_string())
    }
}

/// Site name, link, protocol.
type Key = (String, LinkKey, Protocol);

impl Reference {
    /// Reads each `--json` document of `spdylab crosscheck`. `reps` and
    /// `server` are this crosscheck's: a document of other repetitions or
    /// another server is refused. Err: one line naming the file and what is
    /// wrong with it; a Trial in two files is refused too.
    pub fn load(paths: &[PathBuf], reps: usize, server: &str) -> Result<Reference, String> {
        let mut reference = Reference::default();
        for path in paths {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("--reference {}: {e}", path.display()))?;
            let doc: Value = serde_json::from_str(&text).map_err(|e| {
                format!(
                    "--reference {}: not JSON ({e}); give the output of `spdylab crosscheck --json`",
                    path.display()
                )
            })?;
            for (key, loads, described, fingerprint) in trials(&doc, reps, server)
                .map_err(|e| format!("--reference {}: {e}", path.display()))?
            {
                if let Some(f) = fingerprint {
                    match reference.fingerprints.get(&key.0) {
                        Some((g, first)) if *g != f => {
                            return Err(format!(
                                "--reference {}: its {} is another tree than {}'s \
                                 (fingerprints {f} and {g}): give the loads of one",
                                path.display(),
                                key.0,
                                first.display()
                            ))
                        }
                        Some(_) => {}
                        None => {
                            reference
                                .fingerprints
                                .insert(key.0.clone(), (f, path.clone()));
                        }
                    }
                }
                if let Some((_, first, _)) = reference.trials.get(&key) {
                    return Err(format!(
                        "--reference {}: {} {} {} is in {} too; give each Trial once",
                        path.display(),
                        key.0,
                        described,
                        key.2,
                        first.display()
                    ));
                }
                reference
                    .trials
                    .insert(key, (loads, path.clone(), described));
            }
            reference.files.push(path.clone());
        }
        Ok(reference)
    }

    /// Chromium's loads of a Trial, if a reference has it.
    pub fn get(&self, site: &str, link: &LinkKey, protocol: Protocol) -> Option<&Loads> {
        let key = (site.to_string(), link.clone(), protocol);
        self.trials.get(&key).map(|(l, _, _)| l)
    }

    pub fn is_empty(&self) -> bool {
        self.trials.is_empty()
    }

    /// Refuses a reference whose Chromium loaded another tree of `site`
    /// than `fingerprint` (`Site::tree_fingerprint`, hex): an imported
    /// page imported again otherwise, a built-in site of other sizes — its
    /// loads would be judged as this site's. Rows without a fingerprint
    /// (written before they were stored) are taken as they are.
    pub fn check_site(&self, site: &str, fingerprint: &str) -> Result<(), String> {
        match self.fingerprints.get(site) {
            Some((then, path)) if then != fingerprint => Err(format!(
                "--reference {}: Chromium loaded another {site} than this one (its tree \
                 fingerprint was {then}, it is {fingerprint} now: resources added, removed \
                 or resized since): load it in Chromium again, without its rows in the reference",
                path.display()
            )),
            _ => Ok(()),
        }
    }

    /// The files read, in order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

/// A reference Trial: its key, Chromium's loads, the description of its
/// link and its site's tree fingerprint, if stored.
type Trial = (Key, Loads, String, Option<String>);

/// Every row of a document as a Trial's key, Chromium's loads, the
/// description of its link and its site's tree fingerprint, if stored.
fn trials(doc: &Value, reps: usize, server: &str) -> Result<Vec<Trial>, String> {
    if doc.get("schema").and_then(Value::as_u64) != Some(2) {
        return Err(
            "not a document of `spdylab crosscheck --json` (schema 2): give that output".into(),
        );
    }
    let their_reps = doc.get("reps").and_then(Value::as_u64).unwrap_or(0) as usize;
    if their_reps != reps {
        return Err(format!(
            "its Trials have {their_reps} repetitions, this crosscheck --reps {reps}: run with --reps {their_reps}"
        ));
    }
    let their_server = doc
        .get("server")
        .and_then(Value::as_str)
        .unwrap_or("builtin");
    if their_server != server {
        return Err(format!(
            "its Chromium loaded from the {their_server} server, this crosscheck's from {server}"
        ));
    }
    // `links[i]` labels and describes `testbeds[i]`.
    let links: HashMap<&str, (&str, LinkKey)> = array(doc, "links")?
        .iter()
        .zip(array(doc, "testbeds")?)
        .filter_map(|(l, testbed)| {
            let described = l.get("link")?.as_str()?;
            Some((l.get("label")?.as_str()?, (described, LinkKey::of(testbed))))
        })
        .collect();
    let mut out = Vec::new();
    for (i, row) in array(doc, "rows")?.iter().enumerate() {
        let at = |field: &str| format!("rows[{i}].{field}");
        let text = |field: &str| {
            row.get(field)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{}: missing or not text", at(field)))
        };
        let (site, label) = (text("site")?, text("link")?);
        let (described, link) = links
            .get(label)
            .ok_or_else(|| format!("{}: {label} is not among its links", at("link")))?;
        let protocol: Protocol = text("protocol")?
            .parse()
            .map_err(|e| format!("{}: {e}", at("protocol")))?;
        let number = |v: Option<&Value>| v.and_then(Value::as_f64).unwrap_or(f64::NAN);
        let phases = row.get("chromium_phases");
        let phase = |name: &str| number(phases.and_then(|p| p.get(name)));
        let mut values = Vec::new();
        for cell in row
            .get("metrics")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(figure) = cell
                .get("metric")
                .and_then(Value::as_str)
                .and_then(|m| Figure::ALL.into_iter().find(|f| f.name() == m))
            else {
                continue;
            };
            let v: Vec<f64> = cell
                .get("chromium")
                .and_then(Value::as_array)
                .ok_or_else(|| format!("{}: no chromium values", at("metrics")))?
                .iter()
                .filter_map(Value::as_f64)
                .collect();
            values.push((figure, v));
        }
        if !values.iter().any(|(f, _)| *f == Figure::Plt) {
            return Err(format!("{}: no plt", at("metrics")));
        }
        let loads = Loads {
            values,
            resources: number(row.get("chromium_resources")),
            connections: number(row.get("chromium_connections")),
            phases: Phases {
                connect: phase("connect"),
                ssl: phase("ssl"),
                wait: phase("wait"),
                receive: phase("receive"),
                discovery: phase("discovery"),
            },
            failed: row
                .get("chromium_failed")
                .and_then(Value::as_u64)
                .unwrap_or(0) as usize,
            records: match row.get("chromium_loads") {
                None => Vec::new(),
                Some(v) => serde_json::from_value(v.clone())
                    .map_err(|e| format!("{}: {e}", at("chromium_loads")))?,
            },
            machine_load: row.get("chromium_machine_load").and_then(Value::as_f64),
            cpu_busy_pct: row.get("chromium_cpu_busy_pct").and_then(Value::as_f64),
        };
        out.push((
            (site.to_string(), link.clone(), protocol),
            loads,
            described.to_string(),
            row.get("site_fingerprint")
                .and_then(Value::as_str)
                .map(str::to_string),
        ));
    }
    Ok(out)
}

fn array<'a>(doc: &'a Value, field: &str) -> Result<&'a Vec<Value>, String> {
    doc.get(field)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("no `{field}` list"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A stored testbed of `rtt_ms` at 1 Mbit/s, as `netns::TestbedSpec` serializes.
    fn testbed(rtt_ms: u32) -> Value {
        let way = json!({"delay": format!("{}ms", rtt_ms / 2), "loss": {"model": "none"},
                         "queue": "256p", "service": {"rate": 1000000}});
        json!({"cc": "cubic", "cross": "none", "hosts": [], "iw": null, "seed": 1, "shards": 1,
               "warm_metrics": false, "link": {"down": way, "up": way}})
    }

    fn doc(reps: usize) -> Value {
        json!({"schema": 2, "reps": reps,
               "links": [{"label": "20ms 1mbit", "link": "rtt 20ms, down 1mbit"}],
               "testbeds": [testbed(20)],
               "rows": [{"site": "icons", "link": "20ms 1mbit", "protocol": "h2",
                         "chromium_resources": 51.0, "chromium_connections": 1.0,
                         "chromium_failed": 0,
                         "chromium_phases": {"connect": 1.0, "ssl": 0.5, "wait": 9.0,
                                             "receive": 3.0, "discovery": 40.0},
                         "metrics": [{"metric": "plt", "chromium": [100.0, 120.0]},
                                     {"metric": "fcp", "chromium": [50.0, null]}]}]})
    }

    /// A directory of this test's own, removed when dropped (`netns::Scratch`:
    /// one left behind, named by this process's id, matched a later process
    /// of the same id in the Chromium test's check that its profiles are gone).
    fn scratch(test: &str) -> netns::Scratch {
        netns::Scratch::new(&format!("reference-{test}")).unwrap()
    }

    fn write(dir: &std::path::Path, name: &str, v: &Value) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, v.to_string()).unwrap();
        p
    }

    #[test]
    fn a_documents_rows_are_chromiums_loads_by_site_link_and_protocol() {
        let dir = scratch("rows");
        let r = Reference::load(&[write(&dir.0, "a.json", &doc(2))], 2, "builtin").unwrap();
        let at_20ms = LinkKey::of(&testbed(20));
        let l = r.get("icons", &at_20ms, Protocol::H2).unwrap();
        assert_eq!(l.values(Figure::Plt), vec![100.0, 120.0]);
        assert_eq!(l.values(Figure::Fcp), vec![50.0], "nulls are not loads");
        assert!(l.values(Figure::Lcp).is_empty());
        assert_eq!((l.resources, l.connections, l.failed), (51.0, 1.0, 0));
        assert_eq!(l.phases.discovery, 40.0);
        assert!(r.get("icons", &at_20ms, Protocol::H3).is_none());
        assert!(
            r.get("icons", &LinkKey::of(&testbed(50)), Protocol::H2)
                .is_none(),
            "by the link's conditions"
        );
        // The testbed's hosts, seed and shards are not the link's conditions.
        let mut elsewhere = testbed(20);
        elsewhere["seed"] = json!(7);
        elsewhere["hosts"] = json!([["a.test", "198.18.0.2"]]);
        assert!(r
            .get("icons", &LinkKey::of(&elsewhere), Protocol::H2)
            .is_some());
    }

    #[test]
    fn other_repetitions_servers_twice_the_same_trial_and_other_files_are_one_line() {
        let dir = scratch("refused");
        let a = write(&dir.0, "a.json", &doc(2));
        let e = Reference::load(std::slice::from_ref(&a), 3, "builtin").unwrap_err();
        assert!(e.contains("a.json") && e.contains("--reps 2"), "{e}");
        let e = Reference::load(std::slice::from_ref(&a), 2, "nginx").unwrap_err();
        assert!(e.contains("builtin server"), "{e}");
        let b = write(&dir.0, "b.json", &doc(2));
        let e = Reference::load(&[a.clone(), b], 2, "builtin").unwrap_err();
        assert!(e.contains("b.json") && e.contains("a.json"), "{e}");
        let c = write(&dir.0, "c.json", &json!({"rows": []}));
        let e = Reference::load(&[c], 2, "builtin").unwrap_err();
        assert!(e.contains("c.json") && e.contains("schema 2"), "{e}");
        let d = dir.0.join("d.json");
        std::fs::write(&d, "not json").unwrap();
        let e = Reference::load(&[d], 2, "builtin").unwrap_err();
        assert!(e.contains("d.json") && e.contains("not JSON"), "{e}");
        let e = Reference::load(&[dir.0.join("none.json")], 2, "builtin").unwrap_err();
        assert!(e.contains("none.json"), "{e}");
    }

    /// Chromium's loads of another tree of the site (a page imported again
    /// after the importer changed) are refused; rows from before the
    /// fingerprint was stored are taken.
    #[test]
    fn a_site_whose_tree_changed_since_is_refused() {
        let dir = scratch("fingerprint");
        let mut d = doc(2);
        let old = write(&dir.0, "old.json", &d);
        let r = Reference::load(&[old], 2, "builtin").unwrap();
        assert!(r.check_site("icons", "00000000000000ab").is_ok());
        d["rows"][0]["site_fingerprint"] = json!("00000000000000ab");
        let new = write(&dir.0, "new.json", &d);
        let r = Reference::load(&[new], 2, "builtin").unwrap();
        assert!(r.check_site("icons", "00000000000000ab").is_ok());
        assert!(r.check_site("twitter", "0000000000000001").is_ok());
        let e = r.check_site("icons", "00000000000000cd").unwrap_err();
        assert!(
            e.contains("new.json") && e.contains("00000000000000ab"),
            "{e}"
        );
        assert!(e.contains("00000000000000cd") && e.contains("again"), "{e}");
        // Two files of two trees of one site: refused as they are read.
        d["links"][0]["label"] = json!("20ms 1mbit b");
        d["rows"][0]["link"] = json!("20ms 1mbit b");
        d["testbeds"] = json!([testbed(40)]);
        d["rows"][0]["site_fingerprint"] = json!("00000000000000cd");
        let other = write(&dir.0, "other.json", &d);
        let e = Reference::load(&[dir.0.join("new.json"), other], 2, "builtin").unwrap_err();
        assert!(
            e.contains("other.json") && e.contains("another tree"),
            "{e}"
        );
    }
}
