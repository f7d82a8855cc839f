//! Chromium's loads from earlier crosschecks (`crosscheck --reference FILE`):
//! a refit of the model's costs, or a change of its code, is checked against
//! the same reference loads without loading the pages in Chromium again —
//! how Lantern measures its accuracy, against stored traces. Chromium's loads
//! are the slow half of a crosscheck (a fresh browser per probe) and the one
//! that needs a quiet machine; the model's are cheap and steady.
//!
//! A Trial is taken from a reference when its site, its link (the whole
//! description, not only the label) and its protocol match one of the
//! reference's rows, the repetitions are as many, and the server is the same
//! (documents of schema 2 written before the server was recorded are taken as
//! the built-in server's); every other Trial runs in Chromium as usual.

use super::{Figure, Loads, Phases};
use proto::Protocol;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;

/// The reference Trials of one or more crosscheck documents.
#[derive(Debug, Default)]
pub struct Reference {
    trials: HashMap<Key, (Loads, PathBuf)>,
    files: Vec<PathBuf>,
}

/// Site name, link description, protocol.
type Key = (String, String, Protocol);

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
            for (key, loads) in trials(&doc, reps, server)
                .map_err(|e| format!("--reference {}: {e}", path.display()))?
            {
                if let Some((_, first)) = reference.trials.get(&key) {
                    return Err(format!(
                        "--reference {}: {} {} {} is in {} too; give each Trial once",
                        path.display(),
                        key.0,
                        key.1,
                        key.2,
                        first.display()
                    ));
                }
                reference.trials.insert(key, (loads, path.clone()));
            }
            reference.files.push(path.clone());
        }
        Ok(reference)
    }

    /// Chromium's loads of a Trial, if a reference has it.
    pub fn get(&self, site: &str, link: &str, protocol: Protocol) -> Option<&Loads> {
        let key = (site.to_string(), link.to_string(), protocol);
        self.trials.get(&key).map(|(l, _)| l)
    }

    pub fn is_empty(&self) -> bool {
        self.trials.is_empty()
    }

    /// The files read, in order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

/// Every row of a document as a Trial's key and Chromium's loads.
fn trials(doc: &Value, reps: usize, server: &str) -> Result<Vec<(Key, Loads)>, String> {
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
    let links: HashMap<&str, &str> = array(doc, "links")?
        .iter()
        .filter_map(|l| Some((l.get("label")?.as_str()?, l.get("link")?.as_str()?)))
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
        let link = links
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
        };
        out.push(((site.to_string(), link.to_string(), protocol), loads));
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

    fn doc(reps: usize) -> Value {
        json!({"schema": 2, "reps": reps,
               "links": [{"label": "20ms 1mbit", "link": "rtt 20ms, down 1mbit"}],
               "rows": [{"site": "icons", "link": "20ms 1mbit", "protocol": "h2",
                         "chromium_resources": 51.0, "chromium_connections": 1.0,
                         "chromium_failed": 0,
                         "chromium_phases": {"connect": 1.0, "ssl": 0.5, "wait": 9.0,
                                             "receive": 3.0, "discovery": 40.0},
                         "metrics": [{"metric": "plt", "chromium": [100.0, 120.0]},
                                     {"metric": "fcp", "chromium": [50.0, null]}]}]})
    }

    /// A directory of this test's own (removed first).
    fn scratch(test: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("spdylab-reference-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn write(dir: &std::path::Path, name: &str, v: &Value) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, v.to_string()).unwrap();
        p
    }

    #[test]
    fn a_documents_rows_are_chromiums_loads_by_site_link_and_protocol() {
        let dir = scratch("rows");
        let r = Reference::load(&[write(&dir, "a.json", &doc(2))], 2, "builtin").unwrap();
        let l = r
            .get("icons", "rtt 20ms, down 1mbit", Protocol::H2)
            .unwrap();
        assert_eq!(l.values(Figure::Plt), vec![100.0, 120.0]);
        assert_eq!(l.values(Figure::Fcp), vec![50.0], "nulls are not loads");
        assert!(l.values(Figure::Lcp).is_empty());
        assert_eq!((l.resources, l.connections, l.failed), (51.0, 1.0, 0));
        assert_eq!(l.phases.discovery, 40.0);
        assert!(r
            .get("icons", "rtt 20ms, down 1mbit", Protocol::H3)
            .is_none());
        assert!(
            r.get("icons", "20ms 1mbit", Protocol::H2).is_none(),
            "by description"
        );
    }

    #[test]
    fn other_repetitions_servers_twice_the_same_trial_and_other_files_are_one_line() {
        let dir = scratch("refused");
        let a = write(&dir, "a.json", &doc(2));
        let e = Reference::load(std::slice::from_ref(&a), 3, "builtin").unwrap_err();
        assert!(e.contains("a.json") && e.contains("--reps 2"), "{e}");
        let e = Reference::load(std::slice::from_ref(&a), 2, "nginx").unwrap_err();
        assert!(e.contains("builtin server"), "{e}");
        let b = write(&dir, "b.json", &doc(2));
        let e = Reference::load(&[a.clone(), b], 2, "builtin").unwrap_err();
        assert!(e.contains("b.json") && e.contains("a.json"), "{e}");
        let c = write(&dir, "c.json", &json!({"rows": []}));
        let e = Reference::load(&[c], 2, "builtin").unwrap_err();
        assert!(e.contains("c.json") && e.contains("schema 2"), "{e}");
        let d = dir.join("d.json");
        std::fs::write(&d, "not json").unwrap();
        let e = Reference::load(&[d], 2, "builtin").unwrap_err();
        assert!(e.contains("d.json") && e.contains("not JSON"), "{e}");
        let e = Reference::load(&[dir.join("none.json")], 2, "builtin").unwrap_err();
        assert!(e.contains("none.json"), "{e}");
    }
}
