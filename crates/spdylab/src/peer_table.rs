//! `spdylab peers`: the capability table of the servers (`--server`) — which
//! protocols each serves and which knobs it honours, as verified — and where
//! each real server's binary is, with its version, or how to install it.

use crate::Failure;
use clap::Args;
use lab::peers::{Binary, Feature, Support};
use serde_json::{json, Value};

/// What each server (--server) serves and honours, and whether it is installed
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab peers
  spdylab peers --json

A Trial a server cannot do exactly is refused with the reason (e.g. h2o always
advertises 100 concurrent streams: --max-streams 6 needs another server), never
measured as something else. A stream limit above the site's number of resources
cannot bind, so it counts as any other such limit.")]
pub struct PeersArgs {
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

/// One column of the table: a server's name, its fixed stream limit if any,
/// and its binary (path, version) or how to install it.
struct Column {
    name: &'static str,
    fixed_max_streams: Option<u32>,
    binary: Result<(String, String), String>,
}

/// One cell of the table: what it says, and why not where it says no.
type Cell = (String, Option<&'static str>);

fn binary(b: &Binary) -> Result<(String, String), String> {
    match b {
        Binary::ThisProgram => Ok((
            "this binary".into(),
            format!("spdylab {}", env!("CARGO_PKG_VERSION")),
        )),
        Binary::Installed { path, version } => Ok((path.display().to_string(), version.clone())),
        Binary::NotInstalled { package } => {
            Err(format!("not installed: apt-get install {package}"))
        }
        Binary::Broken(why) => Err(why.clone()),
    }
}

fn label(f: Feature) -> String {
    match f {
        Feature::Protocol(p) => p.to_string(),
        Feature::MaxStreams => "--max-streams".into(),
        Feature::H3MaxStreams => "--max-streams h3".into(),
        Feature::Tls12Only => "--tls 1.2".into(),
        Feature::Tls13Only => "--tls 1.3".into(),
        Feature::ServerDelay => "--server-delay".into(),
    }
}

fn cell(s: Support) -> Cell {
    match s {
        Support::Yes => ("yes".into(), None),
        Support::No(why) => ("no".into(), Some(why)),
        Support::AnyLimit => ("any".into(), None),
        Support::FixedLimit(n) => (format!("{n} only"), None),
    }
}

/// The columns, and per row its label and a cell per column.
fn table() -> (Vec<Column>, Vec<(String, Vec<Cell>)>) {
    let t = lab::peers::table();
    let limits = t.rows.iter().find(|(f, _)| *f == Feature::MaxStreams);
    let cols = t
        .columns
        .iter()
        .enumerate()
        .map(|(j, c)| Column {
            name: c.server.name(),
            fixed_max_streams: limits.and_then(|(_, cells)| match cells[j] {
                Support::FixedLimit(n) => Some(n),
                _ => None,
            }),
            binary: binary(&c.binary),
        })
        .collect();
    let rows = t
        .rows
        .into_iter()
        .map(|(f, cells)| (label(f), cells.into_iter().map(cell).collect()))
        .collect();
    (cols, rows)
}

pub fn run(args: PeersArgs) -> Result<i32, Failure> {
    let (cols, table) = table();
    if args.json {
        let servers: Vec<Value> = cols
            .iter()
            .enumerate()
            .map(|(j, c)| {
                let mut serves = serde_json::Map::new();
                let mut why_not = serde_json::Map::new();
                for (label, cells) in &table {
                    serves.insert(label.clone(), json!(cells[j].0));
                    if let Some(why) = cells[j].1 {
                        why_not.insert(label.clone(), json!(why));
                    }
                }
                let max_streams = c.fixed_max_streams.map_or(Value::Null, |n| json!(n));
                json!({
                    "name": c.name,
                    "installed": c.binary.is_ok(),
                    "binary": c.binary.as_ref().ok().map(|b| b.0.clone()),
                    "version": c.binary.as_ref().ok().map(|b| b.1.clone()),
                    "install": c.binary.as_ref().err(),
                    "capabilities": serves,
                    "fixed_max_streams": max_streams,
                    "why_not": why_not,
                })
            })
            .collect();
        println!("{}", json!({"schema": 1, "servers": servers}));
        return Ok(0);
    }
    for c in &cols {
        match &c.binary {
            Ok((path, version)) => println!("{:<8} {version} ({path})", c.name),
            Err(e) => println!("{:<8} {e}", c.name),
        }
    }
    println!();
    print!("{:<16}", "");
    for c in &cols {
        print!(" {:>9}", c.name);
    }
    println!();
    for (label, cells) in &table {
        print!("{label:<16}");
        for (cell, _) in cells {
            print!(" {cell:>9}");
        }
        println!();
    }
    println!();
    println!("Why not:");
    for (label, cells) in &table {
        for (c, (_, why)) in cols.iter().zip(cells) {
            if let Some(why) = why {
                println!("  {} {label}: {why}", c.name);
            }
        }
    }
    println!("Verified on loopback with curl, nghttp -v and openssl s_client (crates/peers/tests/servers.rs).");
    Ok(0)
}
