//! Experiment files (TOML): sites, protocols, link axes and Trial knobs, each
//! axis a value, a list or a range; their cross product is the campaign's
//! Trials. Errors name the file, the line and the field. The format is
//! documented with examples in docs/experiments.md.
//!
//! Every axis value is kept in its canonical text form (`150ms`, `1mbit`,
//! `1%`, `256p`), so that a Point prints, compares and keys results the same
//! way everywhere; `trial::settings` turns a Point into a testbed and knobs.

use proto::Protocol;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;
use toml::Spanned;

/// What kind of value an axis holds, and how its text is checked and ordered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Duration,
    /// A bit rate, or `unlimited`.
    Rate,
    Loss,
    Queue,
    /// An integer in `min..=max`; `default` allowed where the kernel has one.
    Int {
        min: i64,
        max: i64,
        default_ok: bool,
    },
    Choice(&'static [&'static str]),
    /// A built-in site name or a site file.
    Site,
}

/// One axis of an experiment: its section, name, kind and default value.
pub struct Field {
    pub section: &'static str,
    pub name: &'static str,
    pub kind: Kind,
    pub default: &'static str,
    pub help: &'static str,
}

/// Every axis, in the order points print. One place for names and defaults.
pub const FIELDS: &[Field] = &[
    Field {
        section: "",
        name: "site",
        kind: Kind::Site,
        default: "",
        help: "a built-in site or a site file, relative to the experiment file",
    },
    Field {
        section: "link",
        name: "rtt",
        kind: Kind::Duration,
        default: "",
        help: "round-trip time, split evenly unless delay_down/delay_up",
    },
    Field {
        section: "link",
        name: "delay_down",
        kind: Kind::Duration,
        default: "",
        help: "one-way delay server → client (with rtt: the rest goes up)",
    },
    Field {
        section: "link",
        name: "delay_up",
        kind: Kind::Duration,
        default: "",
        help: "one-way delay client → server",
    },
    Field {
        section: "link",
        name: "rate",
        kind: Kind::Rate,
        default: "unlimited",
        help: "rate of both directions",
    },
    Field {
        section: "link",
        name: "down",
        kind: Kind::Rate,
        default: "",
        help: "rate server → client (overrides rate)",
    },
    Field {
        section: "link",
        name: "up",
        kind: Kind::Rate,
        default: "",
        help: "rate client → server (overrides rate)",
    },
    Field {
        section: "link",
        name: "loss",
        kind: Kind::Loss,
        default: "0%",
        help: "loss each way: 1% or ge:P,R[,H,K]",
    },
    Field {
        section: "link",
        name: "queue",
        kind: Kind::Queue,
        default: "256p",
        help: "drop-tail queue: 256p, 64kb or both",
    },
    Field {
        section: "link",
        name: "iw",
        kind: Kind::Int {
            min: 1,
            max: 1000,
            default_ok: true,
        },
        default: "default",
        help: "server TCP initial window in segments",
    },
    Field {
        section: "link",
        name: "cc",
        kind: Kind::Choice(&["cubic", "bbr", "reno"]),
        default: "cubic",
        help: "TCP congestion control",
    },
    Field {
        section: "knobs",
        name: "shards",
        kind: Kind::Int {
            min: 1,
            max: 254,
            default_ok: false,
        },
        default: "1",
        help: "server addresses the site's hosts are spread over",
    },
    Field {
        section: "knobs",
        name: "max_streams",
        kind: Kind::Int {
            min: 1,
            max: 1_000_000,
            default_ok: false,
        },
        default: "100",
        help: "server's concurrent streams per connection",
    },
    Field {
        section: "knobs",
        name: "tls",
        kind: Kind::Choice(&["any", "1.2", "1.3"]),
        default: "any",
        help: "TLS version",
    },
    Field {
        section: "knobs",
        name: "conns_per_host",
        kind: Kind::Int {
            min: 1,
            max: 64,
            default_ok: false,
        },
        default: "6",
        help: "HTTP/1.1 connections per host",
    },
    Field {
        section: "knobs",
        name: "depth",
        kind: Kind::Int {
            min: 1,
            max: 128,
            default_ok: false,
        },
        default: "8",
        help: "pipelining depth",
    },
    Field {
        section: "knobs",
        name: "server_delay",
        kind: Kind::Duration,
        default: "0ms",
        help: "server think time per response",
    },
];

pub fn field(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name)
}

/// One point of the sweep: a value for every axis (empty text = not set).
pub type Point = BTreeMap<String, String>;

/// A paper's number, drawn as a mark on the report's plots.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// A site name, or absent for "all sites" (an average over them).
    #[serde(default)]
    pub site: Option<String>,
    /// The protocol whose gain the number is (default: every non-baseline protocol).
    #[serde(default)]
    pub protocol: Option<String>,
    /// The axis and its value the number is at; absent: an average over the sweep.
    #[serde(default)]
    pub axis: Option<String>,
    #[serde(default)]
    pub at: Option<String>,
    pub gain_pct: f64,
    pub label: String,
}

/// A parsed, validated experiment.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct Experiment {
    pub name: String,
    pub description: String,
    pub protocols: Vec<Protocol>,
    pub baseline: Protocol,
    pub reps: usize,
    pub warmup: usize,
    pub seed: u64,
    pub site_seed: u64,
    pub server: String,
    pub client: String,
    #[serde(serialize_with = "ser_duration")]
    pub timeout: Duration,
    /// Every axis with its values, in FIELDS order.
    pub axes: Vec<(String, Vec<String>)>,
    pub references: Vec<Reference>,
}

fn ser_duration<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&link::units::format_duration(*d))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: String,
    sites: Spanned<toml::Value>,
    protocols: Spanned<Vec<String>>,
    #[serde(default)]
    baseline: Option<Spanned<String>>,
    #[serde(default)]
    reps: Option<Spanned<i64>>,
    #[serde(default)]
    warmup: Option<Spanned<i64>>,
    #[serde(default)]
    seed: Option<Spanned<i64>>,
    #[serde(default)]
    site_seed: Option<Spanned<i64>>,
    #[serde(default)]
    server: Option<Spanned<String>>,
    #[serde(default)]
    client: Option<Spanned<String>>,
    #[serde(default)]
    timeout: Option<Spanned<String>>,
    #[serde(default)]
    link: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    knobs: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    reference: Vec<Spanned<Reference>>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Trials a campaign may have before it is refused as a likely mistake.
pub const MAX_TRIALS: usize = 1_000_000;

/// Parses and validates an experiment; `file` names the source in errors.
pub fn parse(file: &str, text: &str) -> Result<Experiment, String> {
    let doc: File = toml::from_str(text).map_err(|e| match e.span() {
        Some(s) => format!("{file}:{}: {}", line_of(text, s.start), e.message().trim()),
        None => format!("{file}: {}", e.message().trim()),
    })?;
    let at = |span: std::ops::Range<usize>, field: &str, msg: &str| {
        format!("{file}:{}: {field}: {msg}", line_of(text, span.start))
    };

    let mut protocols = Vec::new();
    for name in doc.protocols.get_ref() {
        let p: Protocol = name
            .parse()
            .map_err(|e: String| at(doc.protocols.span(), "protocols", &e))?;
        if protocols.contains(&p) {
            return Err(at(
                doc.protocols.span(),
                "protocols",
                &format!("{p} is listed twice"),
            ));
        }
        protocols.push(p);
    }
    if protocols.is_empty() {
        return Err(at(doc.protocols.span(), "protocols", "name at least one"));
    }
    let baseline = match &doc.baseline {
        None => protocols[0],
        Some(b) => {
            let p: Protocol = b
                .get_ref()
                .parse()
                .map_err(|e: String| at(b.span(), "baseline", &e))?;
            if !protocols.contains(&p) {
                return Err(at(b.span(), "baseline", "must be one of the protocols"));
            }
            p
        }
    };
    let count = |v: &Option<Spanned<i64>>, name: &str, default: i64, min: i64, max: i64| match v {
        None => Ok(default),
        Some(s) if (min..=max).contains(s.get_ref()) => Ok(*s.get_ref()),
        Some(s) => Err(at(
            s.span(),
            name,
            &format!("{} is outside {min}..={max}", s.get_ref()),
        )),
    };
    let reps = count(&doc.reps, "reps", 5, 1, 10_000)? as usize;
    let warmup = count(&doc.warmup, "warmup", 1, 0, 100)? as usize;
    let seed = count(&doc.seed, "seed", 1, 0, i64::MAX)? as u64;
    let site_seed = count(
        &doc.site_seed,
        "site_seed",
        site::DEFAULT_SEED as i64,
        0,
        i64::MAX,
    )? as u64;
    let choice = |v: &Option<Spanned<String>>, name: &str, allowed: &[&str]| match v {
        None => Ok(allowed[0].to_string()),
        Some(s) if allowed.contains(&s.get_ref().as_str()) => Ok(s.get_ref().clone()),
        Some(s) => Err(at(
            s.span(),
            name,
            &format!("'{}' is not one of {}", s.get_ref(), allowed.join(", ")),
        )),
    };
    let server = choice(&doc.server, "server", &results::ServerKind::NAMES)?;
    let client = choice(&doc.client, "client", &["model", "chromium"])?;
    let timeout = match &doc.timeout {
        None => Duration::from_secs(120),
        Some(s) => link::units::parse_duration(s.get_ref())
            .map_err(|e| at(s.span(), "timeout", &e.to_string()))?,
    };

    let mut axes = Vec::new();
    for f in FIELDS {
        let given = match f.section {
            "" => Some(&doc.sites),
            "link" => doc.link.get(f.name),
            _ => doc.knobs.get(f.name),
        };
        let path = if f.section.is_empty() {
            "sites".to_string()
        } else {
            format!("{}.{}", f.section, f.name)
        };
        let values = match given {
            None => vec![f.default.to_string()],
            Some(v) => values(f.kind, v.get_ref()).map_err(|e| at(v.span(), &path, &e))?,
        };
        if values.is_empty() {
            let span = given.map(|v| v.span()).unwrap_or(0..0);
            return Err(at(span, &path, "no values"));
        }
        axes.push((f.name.to_string(), values));
    }
    for (section, table) in [("link", &doc.link), ("knobs", &doc.knobs)] {
        for (key, v) in table {
            if !FIELDS.iter().any(|f| f.section == section && f.name == key) {
                let known: Vec<&str> = FIELDS
                    .iter()
                    .filter(|f| f.section == section)
                    .map(|f| f.name)
                    .collect();
                return Err(at(
                    v.span(),
                    &format!("{section}.{key}"),
                    &format!("unknown; expected one of {}", known.join(", ")),
                ));
            }
        }
    }
    let mut references = Vec::new();
    for r in &doc.reference {
        let span = r.span();
        let r = r.get_ref().clone();
        if let Some(axis) = &r.axis {
            let Some(f) = field(axis) else {
                return Err(at(
                    span,
                    "reference.axis",
                    &format!("'{axis}' is not an axis"),
                ));
            };
            let Some(v) = &r.at else {
                return Err(at(span, "reference.at", "missing (the axis value)"));
            };
            canonical(f.kind, v).map_err(|e| at(span.clone(), "reference.at", &e))?;
        }
        references.push(r);
    }

    let exp = Experiment {
        name: doc.name.unwrap_or_else(|| {
            std::path::Path::new(file)
                .file_stem()
                .map_or("experiment".into(), |s| s.to_string_lossy().into_owned())
        }),
        description: doc.description,
        protocols,
        baseline,
        reps,
        warmup,
        seed,
        site_seed,
        server,
        client,
        timeout,
        axes,
        references,
    };
    let n = exp.trial_count();
    if n > MAX_TRIALS {
        return Err(format!(
            "{file}: {n} Trials; more than {MAX_TRIALS} is refused as a likely mistake"
        ));
    }
    Ok(exp)
}

/// The values an axis takes: a value, a list, or a `{ from, to, step | factor }` range.
fn values(kind: Kind, v: &toml::Value) -> Result<Vec<String>, String> {
    match v {
        toml::Value::Array(items) => {
            let mut out = Vec::new();
            for item in items {
                if matches!(item, toml::Value::Array(_) | toml::Value::Table(_)) {
                    return Err("a list holds plain values".into());
                }
                let c = canonical(kind, &scalar(item)?)?;
                if out.contains(&c) {
                    return Err(format!("{c} is listed twice"));
                }
                out.push(c);
            }
            Ok(out)
        }
        toml::Value::Table(t) => range(kind, t),
        other => Ok(vec![canonical(kind, &scalar(other)?)?]),
    }
}

fn scalar(v: &toml::Value) -> Result<String, String> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        _ => Err("expected a value, a list or { from, to, step }".into()),
    }
}

/// Checks one value and returns its canonical text.
pub fn canonical(kind: Kind, s: &str) -> Result<String, String> {
    let s = s.trim();
    match kind {
        Kind::Duration => link::units::parse_duration(s)
            .map(link::units::format_duration)
            .map_err(|e| e.to_string()),
        Kind::Rate if s == "unlimited" => Ok(s.into()),
        Kind::Rate => s
            .parse::<link::Bitrate>()
            .map(|r| r.to_string())
            .map_err(|e| format!("{e}, or unlimited")),
        Kind::Loss => s
            .parse::<link::LossModel>()
            .map(|l| l.to_string())
            .map_err(|e| e.to_string()),
        Kind::Queue => s
            .parse::<link::QueueLimit>()
            .map(|q| q.to_string())
            .map_err(|e| e.to_string()),
        Kind::Int {
            default_ok: true, ..
        } if s == "default" => Ok(s.into()),
        Kind::Int {
            min,
            max,
            default_ok,
        } => match s.parse::<i64>() {
            Ok(i) if (min..=max).contains(&i) => Ok(i.to_string()),
            _ => Err(format!(
                "'{s}' is not an integer in {min}..={max}{}",
                if default_ok { " or default" } else { "" }
            )),
        },
        Kind::Choice(allowed) if allowed.contains(&s) => Ok(s.into()),
        Kind::Choice(allowed) => Err(format!("'{s}' is not one of {}", allowed.join(", "))),
        Kind::Site if s.is_empty() => Err("a site name or file is empty".into()),
        Kind::Site => Ok(s.into()),
    }
}

/// The value's magnitude in the axis's base unit (ms, bit/s, fraction, count),
/// for ranges and plots; None where the axis is not numeric.
pub fn magnitude(kind: Kind, canonical: &str) -> Option<f64> {
    match kind {
        Kind::Duration => link::units::parse_duration(canonical)
            .ok()
            .map(|d| d.as_secs_f64() * 1e3),
        Kind::Rate => canonical
            .parse::<link::Bitrate>()
            .ok()
            .map(|r| r.bits_per_sec() as f64),
        Kind::Loss => canonical
            .parse::<link::LossModel>()
            .ok()
            .map(|l| l.mean_loss() * 100.0),
        Kind::Int { .. } => canonical.parse::<i64>().ok().map(|i| i as f64),
        Kind::Queue | Kind::Choice(_) | Kind::Site => None,
    }
}

/// The canonical text of a magnitude (inverse of `magnitude`).
fn from_magnitude(kind: Kind, m: f64) -> String {
    match kind {
        Kind::Duration => {
            link::units::format_duration(Duration::from_nanos((m * 1e6).round() as u64))
        }
        Kind::Rate => link::Bitrate(m.round() as u64).to_string(),
        Kind::Loss => {
            let pct = (m * 1e6).round() / 1e6;
            format!("{pct}%")
        }
        _ => format!("{}", m.round() as i64),
    }
}

fn range(kind: Kind, t: &toml::map::Map<String, toml::Value>) -> Result<Vec<String>, String> {
    if !matches!(
        kind,
        Kind::Duration | Kind::Rate | Kind::Loss | Kind::Int { .. }
    ) {
        return Err("this axis takes a value or a list, not a range".into());
    }
    for key in t.keys() {
        if !["from", "to", "step", "factor"].contains(&key.as_str()) {
            return Err(format!(
                "unknown range key '{key}'; expected from, to, step or factor"
            ));
        }
    }
    let get = |key: &str| -> Result<Option<f64>, String> {
        t.get(key)
            .map(|v| {
                let text = canonical(kind, &scalar(v)?).map_err(|e| format!("{key}: {e}"))?;
                magnitude(kind, &text).ok_or_else(|| format!("{key}: not a number"))
            })
            .transpose()
    };
    let from = get("from")?.ok_or("a range needs from")?;
    let to = get("to")?.ok_or("a range needs to")?;
    if to < from {
        return Err("to is below from".into());
    }
    let mut out = Vec::new();
    match (t.get("step"), t.get("factor")) {
        (Some(_), Some(_)) => return Err("give step or factor, not both".into()),
        (None, Some(f)) => {
            let factor = match f {
                toml::Value::Integer(i) => *i as f64,
                toml::Value::Float(x) => *x,
                _ => return Err("factor is a number such as 2".into()),
            };
            if !(factor > 1.0 && factor.is_finite()) || from <= 0.0 {
                return Err("factor must be above 1, and from above 0".into());
            }
            let mut x = from;
            while x <= to * (1.0 + 1e-9) {
                out.push(canonical(kind, &from_magnitude(kind, x))?);
                x *= factor;
                if out.len() > 10_000 {
                    return Err("more than 10000 values".into());
                }
            }
        }
        (step, None) => {
            let step = match step {
                None if matches!(kind, Kind::Int { .. }) => 1.0,
                None => return Err("a range needs step (or factor)".into()),
                Some(_) => get("step")?.unwrap_or(0.0),
            };
            if step <= 0.0 {
                return Err("step must be above 0".into());
            }
            let n = ((to - from) / step + 1e-9).floor() as usize;
            if n >= 10_000 {
                return Err("more than 10000 values".into());
            }
            for i in 0..=n {
                out.push(canonical(
                    kind,
                    &from_magnitude(kind, from + step * i as f64),
                )?);
            }
        }
    }
    out.dedup();
    Ok(out)
}

impl Experiment {
    /// The axes that take more than one value: what the sweep varies.
    pub fn swept(&self) -> Vec<&str> {
        self.axes
            .iter()
            .filter(|(_, v)| v.len() > 1)
            .map(|(n, _)| n.as_str())
            .collect()
    }

    pub fn values(&self, axis: &str) -> &[String] {
        self.axes
            .iter()
            .find(|(n, _)| n == axis)
            .map_or(&[], |(_, v)| v.as_slice())
    }

    /// Every point of the cross product, in a stable order (first axis slowest).
    pub fn points(&self) -> Vec<Point> {
        let mut points = vec![Point::new()];
        for (name, values) in &self.axes {
            let mut next = Vec::with_capacity(points.len() * values.len());
            for p in &points {
                for v in values {
                    let mut q = p.clone();
                    if !v.is_empty() {
                        q.insert(name.clone(), v.clone());
                    }
                    next.push(q);
                }
            }
            points = next;
        }
        points
    }

    pub fn trial_count(&self) -> usize {
        self.axes
            .iter()
            .map(|(_, v)| v.len())
            .fold(1usize, |a, n| a.saturating_mul(n))
            .saturating_mul(self.protocols.len())
            .saturating_mul(self.reps)
    }
}

/// A point's key: its set values in FIELDS order, `name=value` joined by spaces.
pub fn point_key(p: &Point) -> String {
    FIELDS
        .iter()
        .filter_map(|f| {
            p.get(f.name)
                .filter(|v| !v.is_empty())
                .map(|v| format!("{}={v}", f.name))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A Trial's key: its point, protocol and repetition.
pub fn trial_key(p: &Point, protocol: Protocol, rep: usize) -> String {
    format!("{} protocol={protocol} rep={rep}", point_key(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIG: &str = r#"
name = "fig"
sites = ["youtube", "twitter"]
protocols = ["https", "h2"]
reps = 3

[link]
rtt = { from = "10ms", to = "490ms", step = "40ms" }
rate = "1mbit"
loss = ["0%", "1%"]

[knobs]
max_streams = [1, 6, 100]
"#;

    #[test]
    fn axes_expand_to_the_cross_product() {
        let e = parse("fig.toml", FIG).unwrap();
        assert_eq!(e.values("rtt").len(), 13);
        assert_eq!(e.values("rtt")[0], "10ms");
        assert_eq!(e.values("rtt")[12], "490ms");
        assert_eq!(e.values("loss"), ["0%", "1%"]);
        assert_eq!(e.values("rate"), ["1mbit"]);
        assert_eq!(e.swept(), ["site", "rtt", "loss", "max_streams"]);
        let points = e.points();
        assert_eq!(points.len(), 2 * 13 * 2 * 3);
        assert_eq!(e.trial_count(), points.len() * 2 * 3);
        let key = point_key(&points[0]);
        assert!(
            key.starts_with("site=youtube rtt=10ms rate=1mbit loss=0% queue=256p"),
            "{key}"
        );
        assert!(!key.contains("delay_down"), "{key}");
        let keys: std::collections::HashSet<String> = points.iter().map(point_key).collect();
        assert_eq!(keys.len(), points.len());
    }

    #[test]
    fn geometric_ranges_and_integer_ranges() {
        let e = parse(
            "x.toml",
            "sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nrate = { from = \"64kbit\", to = \"8192kbit\", factor = 2 }\n[knobs]\nshards = { from = 1, to = 7 }\n",
        )
        .unwrap();
        assert_eq!(
            e.values("rate"),
            [
                "64kbit", "128kbit", "256kbit", "512kbit", "1024kbit", "2048kbit", "4096kbit",
                "8192kbit"
            ]
        );
        assert_eq!(e.values("shards").len(), 7);
        assert_eq!(e.values("iw"), ["default"]);
        let e = parse(
            "x.toml",
            "sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nloss = { from = \"0%\", to = \"3%\", step = \"0.5%\" }\n",
        )
        .unwrap();
        assert_eq!(
            e.values("loss"),
            ["0%", "0.5%", "1%", "1.5%", "2%", "2.5%", "3%"]
        );
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let cases = [
            ("sites = \"youtube\"\nprotocols = [\"https\", \"h9\"]\n", "x.toml:2: protocols: "),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nrtt = \"150 parsecs\"\n", "x.toml:4: link.rtt: "),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nrtx = \"150ms\"\n", "x.toml:4: link.rtx: unknown"),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\n[knobs]\nshards = 0\n", "x.toml:4: knobs.shards: "),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nrtt = { from = \"10ms\", to = \"5ms\", step = \"1ms\" }\n", "x.toml:4: link.rtt: to is below from"),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\nreps = 0\n", "x.toml:3: reps: "),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\nbaseline = \"h2\"\n", "x.toml:3: baseline: "),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\ncolour = 3\n", "x.toml:3: unknown field `colour`"),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nqueue = { from = 1, to = 2 }\n", "x.toml:4: link.queue: "),
            ("protocols = [\"https\"]\n", "x.toml:1: missing field `sites`"),
        ];
        for (text, want) in cases {
            let err = parse("x.toml", text).unwrap_err();
            assert!(err.starts_with(want), "{err:?} should start with {want:?}");
        }
    }
}
