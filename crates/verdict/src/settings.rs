//! What a stored run was made with — client, server, site, link, knobs and
//! build — as `compare --out` records it (its `settings`) and a campaign
//! directory says (its pinned experiment and `builds.txt`), and where two
//! runs differ. `spdylab diff` and `compare --baseline` print the
//! differences above their table, and refuse (exit 2, unless `--force`) two
//! runs of different clients or sites: their shifts would read as a run
//! that got faster or slower when it is another measurement (issue 47).

use results::experiment::{self, knob_fields, Experiment};
use serde_json::{json, Map, Value};

/// The commit this binary was built from (`git describe`, build.rs).
pub const BUILD: &str = env!("SPDYLAB_BUILD");

/// The campaign directory's list of the builds that ran in it, one a line.
pub const BUILDS_FILE: &str = "builds.txt";

/// The settings that make two runs the same measurement, in the order they
/// print; each knob is `knobs.NAME`.
const ORDER: [&str; 4] = ["client", "server", "site", "link"];

/// Settings whose difference makes a comparison meaningless: refused
/// unless forced.
pub const REFUSED_WHEN_THEY_DIFFER: [&str; 2] = ["client", "site"];

/// A run's settings by name; None where the run did not record it (a
/// document written before settings were).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    entries: Vec<(String, Option<String>)>,
}

/// One setting in which A and B differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub name: String,
    pub a: String,
    pub b: String,
}

impl Settings {
    /// A compare's settings: its client, server, site, link, the knobs given
    /// (`knobs`, the rest at their defaults) and this build.
    pub fn of_compare(
        client: &str,
        server: &str,
        site: &str,
        link: &str,
        knobs: &[(&str, String)],
    ) -> Settings {
        let mut entries: Vec<(String, Option<String>)> = vec![
            ("client".into(), Some(client.into())),
            ("server".into(), Some(server.into())),
            ("site".into(), Some(site.into())),
            ("link".into(), Some(link.into())),
        ];
        for f in knob_fields() {
            let given = knobs.iter().find(|(k, _)| *k == f.name).map(|(_, v)| v);
            let value = given
                .map(|v| experiment::canonical(f.kind, v).unwrap_or_else(|_| v.clone()))
                .unwrap_or_else(|| f.default.to_string());
            entries.push((format!("knobs.{}", f.name), Some(value)));
        }
        entries.push(("build".into(), Some(BUILD.into())));
        Settings { entries }
    }

    /// As `compare --out` stores it: client, server, site, link, the knobs
    /// away from their defaults, build.
    pub fn to_json(&self) -> Value {
        let mut top = Map::new();
        let mut knobs = Map::new();
        for (name, value) in &self.entries {
            let Some(value) = value else { continue };
            match name.strip_prefix("knobs.") {
                Some(k) => {
                    let default = experiment::field(k).map(|f| f.default);
                    if default != Some(value.as_str()) {
                        knobs.insert(k.into(), json!(value));
                    }
                }
                None => {
                    top.insert(name.clone(), json!(value));
                }
            }
        }
        top.insert("knobs".into(), Value::Object(knobs));
        Value::Object(top)
    }

    /// A compare document's settings; of one written before they were,
    /// what it has (its site and link), the rest not recorded.
    pub fn of_document(doc: &Value) -> Settings {
        let text = |v: &Value| v.as_str().map(String::from);
        let s = &doc["settings"];
        if !s.is_object() {
            let mut entries: Vec<(String, Option<String>)> = vec![
                ("client".into(), None),
                ("server".into(), None),
                ("site".into(), text(&doc["site"])),
                ("link".into(), text(&doc["link"])),
            ];
            entries.extend(knob_fields().map(|f| (format!("knobs.{}", f.name), None)));
            entries.push(("build".into(), None));
            return Settings { entries };
        }
        let mut entries: Vec<(String, Option<String>)> =
            ORDER.iter().map(|k| (k.to_string(), text(&s[k]))).collect();
        for f in knob_fields() {
            let v = text(&s["knobs"][f.name]).unwrap_or_else(|| f.default.to_string());
            entries.push((format!("knobs.{}", f.name), Some(v)));
        }
        entries.push(("build".into(), text(&s["build"])));
        Settings { entries }
    }

    /// A campaign's settings: its client and server, its sites and link
    /// axes (each value list), its knobs (their axes, else defaults) and
    /// the builds that ran in it (`builds`, None where it kept no list).
    pub fn of_campaign(exp: &Experiment, builds: Option<Vec<String>>) -> Settings {
        let axis = |name: &str| exp.values(name).join(", ");
        let link: Vec<String> = experiment::FIELDS
            .iter()
            .filter(|f| f.section == "link")
            .filter(|f| !exp.values(f.name).is_empty())
            .filter(|f| exp.values(f.name) != [f.default.to_string()])
            .map(|f| format!("{}={}", f.name, axis(f.name)))
            .collect();
        let mut entries: Vec<(String, Option<String>)> = vec![
            ("client".into(), Some(exp.client.name().into())),
            ("server".into(), Some(exp.server.name().into())),
            ("site".into(), Some(axis("site"))),
            ("link".into(), Some(link.join(" "))),
        ];
        for f in knob_fields() {
            let v = match exp.values(f.name) {
                [] => f.default.to_string(),
                _ => axis(f.name),
            };
            entries.push((format!("knobs.{}", f.name), Some(v)));
        }
        entries.push(("build".into(), builds.map(|b| b.join(", "))));
        Settings { entries }
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Where A (self) and B differ, in print order; a setting one of them
    /// did not record is not a difference (`unrecorded` names it).
    pub fn differences(&self, b: &Settings) -> Vec<Difference> {
        self.entries
            .iter()
            .filter_map(|(name, a)| {
                let (a, b) = (a.as_deref()?, b.get(name)?);
                (a != b).then(|| Difference {
                    name: name.clone(),
                    a: a.into(),
                    b: b.into(),
                })
            })
            .collect()
    }

    /// The settings A (self) or B did not record.
    pub fn unrecorded(&self, b: &Settings) -> Vec<String> {
        self.entries
            .iter()
            .filter(|(name, a)| a.is_none() || b.get(name).is_none())
            .map(|(name, _)| name.clone())
            .collect()
    }
}

/// Why A and B are not one measurement run twice (a client or site
/// differs), if they are not.
pub fn refusal(differences: &[Difference]) -> Option<String> {
    let d: Vec<String> = differences
        .iter()
        .filter(|d| REFUSED_WHEN_THEY_DIFFER.contains(&d.name.as_str()))
        .map(|d| format!("{}: A {}, B {}", d.name, d.a, d.b))
        .collect();
    (!d.is_empty()).then(|| {
        format!(
            "not the same measurement ({}): a shift would read as B faster or slower; --force compares them anyway",
            d.join(", ")
        )
    })
}

/// The builds a campaign directory lists (None: it keeps no list).
pub fn campaign_builds(dir: &std::path::Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(dir.join(BUILDS_FILE)).ok()?;
    Some(
        text.lines()
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compare(client: &str, site: &str, knobs: &[(&str, String)]) -> Settings {
        Settings::of_compare(client, "builtin", site, "150 ms / 1 Mbit", knobs)
    }

    #[test]
    fn a_compares_settings_read_back_as_written() {
        let s = compare("model", "youtube", &[("max_streams", "1".into())]);
        let doc = json!({ "settings": s.to_json() });
        assert_eq!(Settings::of_document(&doc), s);
        // Only the knobs away from their defaults are stored.
        assert_eq!(doc["settings"]["knobs"], json!({ "max_streams": "1" }));
        assert_eq!(doc["settings"]["build"], json!(BUILD));
    }

    #[test]
    fn another_client_or_site_is_refused_another_knob_is_said() {
        let a = compare("model", "youtube", &[]);
        let b = compare("chromium", "youtube", &[("max_streams", "1".into())]);
        let d = a.differences(&b);
        let names: Vec<&str> = d.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["client", "knobs.max_streams"]);
        assert!(refusal(&d).unwrap().contains("client: A model, B chromium"));
        let c = compare("model", "youtube", &[("max_streams", "1".into())]);
        assert_eq!(refusal(&a.differences(&c)), None);
        assert_eq!(a.differences(&a), []);
        let other_site = compare("model", "twitter", &[]);
        assert!(refusal(&a.differences(&other_site))
            .unwrap()
            .contains("site: A youtube, B twitter"));
    }

    #[test]
    fn a_campaigns_settings_are_its_experiments_and_builds() {
        let text = |client: &str| {
            format!("sites = [\"youtube\", \"icons\"]\nprotocols = [\"h2\"]\nclient = \"{client}\"\n[link]\nrtt = [\"20ms\", \"150ms\"]\n[knobs]\nmax_streams = 1\n")
        };
        let model = experiment::parse("m.toml", &text("model")).unwrap();
        let a = Settings::of_campaign(&model, Some(vec!["abc".into()]));
        assert_eq!(a.get("site"), Some("youtube, icons"));
        assert_eq!(a.get("link"), Some("rtt=20ms, 150ms"));
        assert_eq!(a.get("knobs.max_streams"), Some("1"));
        assert_eq!(a.get("build"), Some("abc"));
        let chromium = experiment::parse("c.toml", &text("chromium")).unwrap();
        let b = Settings::of_campaign(&chromium, None);
        let d = a.differences(&b);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(refusal(&d).unwrap().contains("client: A model, B chromium"));
        assert_eq!(a.unrecorded(&b), ["build"]);
    }

    #[test]
    fn an_old_document_has_its_site_and_link_the_rest_unrecorded() {
        let old = json!({ "site": "twitter", "link": "150 ms / 1 Mbit" });
        let a = Settings::of_document(&old);
        let b = compare("model", "youtube", &[]);
        let d = a.differences(&b);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].name, "site");
        let unrecorded = a.unrecorded(&b);
        assert!(unrecorded.contains(&"client".to_string()));
        assert!(unrecorded.contains(&"build".to_string()));
    }
}
