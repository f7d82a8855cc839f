//! `peers`: the servers a Trial may use (`--server`) as a table of facts —
//! which protocols each serves and which knobs it honours, as verified
//! (`peers::Capabilities`), with the reason where it does not — and where each
//! real server's binary is, with its version, or which package installs it.
//! `text::peers` formats the table; `Table::document` is its JSON.

use crate::trial::{PeerKind, ServerKind};
use ::peers::{Capabilities, Program, StreamLimit};
use proto::Protocol;
use std::path::PathBuf;

/// A server's binary.
#[derive(Debug, Clone)]
pub enum Binary {
    /// The built-in server: this program itself.
    ThisProgram,
    Installed {
        path: PathBuf,
        version: String,
    },
    /// Not found: this Debian package installs it.
    NotInstalled {
        package: &'static str,
    },
    /// Found but unusable (e.g. its version cannot be read): why.
    Broken(String),
}

/// A row of the table: a protocol, or a knob a server may not honour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// One of spdylab's protocols, by its name.
    Protocol(&'static str),
    /// The HTTP/2 (and SPDY) concurrent-stream limit.
    MaxStreams,
    /// h3's concurrent request streams (QUIC `initial_max_streams_bidi`).
    H3MaxStreams,
    Tls12Only,
    Tls13Only,
    /// A think time before each response.
    ServerDelay,
    /// TLS 1.3 early data over TCP (a repeat view's, `--view repeat|both`).
    EarlyData,
}

/// A cell of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    Yes,
    /// Not, and why.
    No(&'static str),
    /// (MaxStreams) whatever is asked.
    AnyLimit,
    /// (MaxStreams) always this many, whatever is asked.
    FixedLimit(u32),
}

/// A column of the table: a server.
#[derive(Debug, Clone)]
pub struct Column {
    pub server: ServerKind,
    pub binary: Binary,
}

/// The servers (builtin first) and, per feature, a cell per server.
#[derive(Debug, Clone)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<(Feature, Vec<Support>)>,
}

fn binary(kind: PeerKind) -> Binary {
    match kind.version() {
        Ok((path, version)) => Binary::Installed { path, version },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Binary::NotInstalled {
            package: kind.binary().1,
        },
        Err(e) => Binary::Broken(e.to_string()),
    }
}

fn support(why_not: Option<&'static str>) -> Support {
    why_not.map_or(Support::Yes, Support::No)
}

/// The table, looking for each real server's binary.
pub fn table() -> Table {
    let mut columns = vec![Column {
        server: ServerKind::Builtin,
        binary: Binary::ThisProgram,
    }];
    columns.extend(PeerKind::ALL.into_iter().map(|k| Column {
        server: ServerKind::Peer(k),
        binary: binary(k),
    }));
    // None: the builtin server, which does everything.
    let caps: Vec<Option<Capabilities>> = columns
        .iter()
        .map(|c| match c.server {
            ServerKind::Builtin => None,
            ServerKind::Peer(k) => Some(k.capabilities()),
        })
        .collect();
    let row = |f: &dyn Fn(&Capabilities) -> Support, builtin: Support| -> Vec<Support> {
        caps.iter().map(|c| c.as_ref().map_or(builtin, f)).collect()
    };
    let mut rows = Vec::new();
    for p in Protocol::ALL {
        rows.push((
            Feature::Protocol(p.name()),
            row(&|c| support(c.protocol(p)), Support::Yes),
        ));
    }
    rows.push((
        Feature::MaxStreams,
        row(
            &|c| match c.max_streams {
                StreamLimit::Any => Support::AnyLimit,
                StreamLimit::Fixed(n) => Support::FixedLimit(n),
            },
            Support::AnyLimit,
        ),
    ));
    rows.push((
        Feature::H3MaxStreams,
        row(
            &|c| match (c.protocol(Protocol::H3), c.h3_max_streams) {
                (Some(_), _) => Support::No("no h3 (see the h3 row)"),
                (None, StreamLimit::Any) => Support::AnyLimit,
                (None, StreamLimit::Fixed(n)) => Support::FixedLimit(n),
            },
            Support::AnyLimit,
        ),
    ));
    rows.push((
        Feature::Tls12Only,
        row(&|c| support(c.tls12_only), Support::Yes),
    ));
    rows.push((
        Feature::Tls13Only,
        row(&|c| support(c.tls13_only), Support::Yes),
    ));
    rows.push((
        Feature::ServerDelay,
        row(&|c| support(c.server_delay), Support::Yes),
    ));
    rows.push((
        Feature::EarlyData,
        row(&|c| support(c.early_data), Support::Yes),
    ));
    Table { columns, rows }
}

impl Feature {
    /// The row's label: the protocol, or the flag of the knob.
    pub fn label(self) -> String {
        match self {
            Feature::Protocol(p) => p.to_string(),
            Feature::MaxStreams => "--max-streams".into(),
            Feature::H3MaxStreams => "--max-streams h3".into(),
            Feature::Tls12Only => "--tls 1.2".into(),
            Feature::Tls13Only => "--tls 1.3".into(),
            Feature::ServerDelay => "--server-delay".into(),
            Feature::EarlyData => "TLS early data".into(),
        }
    }
}

impl Support {
    /// What the cell says: yes, no, any, or "N only".
    pub fn text(self) -> String {
        match self {
            Support::Yes => "yes".into(),
            Support::No(_) => "no".into(),
            Support::AnyLimit => "any".into(),
            Support::FixedLimit(n) => format!("{n} only"),
        }
    }

    /// Why not, where the cell says no.
    pub fn why_not(self) -> Option<&'static str> {
        match self {
            Support::No(why) => Some(why),
            _ => None,
        }
    }
}

impl Binary {
    /// The binary's path and version, or how to install it (or why it
    /// cannot be used).
    pub fn found(&self) -> Result<(String, String), String> {
        match self {
            Binary::ThisProgram => Ok((
                "this binary".into(),
                format!("spdylab {}", env!("CARGO_PKG_VERSION")),
            )),
            Binary::Installed { path, version } => {
                Ok((path.display().to_string(), version.clone()))
            }
            Binary::NotInstalled { package } => {
                Err(format!("not installed: apt-get install {package}"))
            }
            Binary::Broken(why) => Err(why.clone()),
        }
    }
}

impl Table {
    /// The stream limit the server of column `j` always advertises, if any.
    pub fn fixed_max_streams(&self, j: usize) -> Option<u32> {
        let (_, cells) = self.rows.iter().find(|(f, _)| *f == Feature::MaxStreams)?;
        match cells.get(j) {
            Some(Support::FixedLimit(n)) => Some(*n),
            _ => None,
        }
    }

    /// The table as one JSON object (`peers --json`): per server its binary
    /// or how to install it, what it serves, its fixed stream limit and why
    /// not where it does not.
    pub fn document(&self) -> serde_json::Value {
        use serde_json::{json, Map, Value};
        let servers: Vec<Value> = self
            .columns
            .iter()
            .enumerate()
            .map(|(j, c)| {
                let (mut serves, mut why_not) = (Map::new(), Map::new());
                for (f, cells) in &self.rows {
                    let Some(cell) = cells.get(j) else { continue };
                    serves.insert(f.label(), json!(cell.text()));
                    if let Some(why) = cell.why_not() {
                        why_not.insert(f.label(), json!(why));
                    }
                }
                let binary = c.binary.found();
                json!({
                    "name": c.server.name(),
                    "installed": binary.is_ok(),
                    "binary": binary.as_ref().ok().map(|b| b.0.clone()),
                    "version": binary.as_ref().ok().map(|b| b.1.clone()),
                    "install": binary.as_ref().err(),
                    "capabilities": serves,
                    "fixed_max_streams": self.fixed_max_streams(j),
                    "why_not": why_not,
                })
            })
            .collect();
        json!({"schema": 1, "servers": servers})
    }
}
