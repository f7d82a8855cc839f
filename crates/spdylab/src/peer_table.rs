//! `spdylab peers`: the capability table of the servers (`--server`) — which
//! protocols each serves and which knobs it honours, as verified — and where
//! each real server's binary is, with its version, or how to install it.

use crate::Failure;
use clap::Args;
use peers::{PeerKind, Program, StreamLimit};
use proto::Protocol;
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

/// One column of the table: a server's name, its capabilities (None: builtin,
/// which does everything) and its binary.
struct Column {
    name: &'static str,
    kind: Option<PeerKind>,
    binary: Result<(String, String), String>,
}

fn columns() -> Vec<Column> {
    let mut cols = vec![Column {
        name: "builtin",
        kind: None,
        binary: Ok((
            "this binary".into(),
            format!("spdylab {}", env!("CARGO_PKG_VERSION")),
        )),
    }];
    for k in PeerKind::ALL {
        cols.push(Column {
            name: k.name(),
            kind: Some(k),
            binary: k
                .version()
                .map(|(p, v)| (p.display().to_string(), v))
                .map_err(|e| {
                    let (_, package) = k.binary();
                    if e.kind() == std::io::ErrorKind::NotFound {
                        format!("not installed: apt-get install {package}")
                    } else {
                        e.to_string()
                    }
                }),
        });
    }
    cols
}

/// One cell of the table: what it says, and why not where it says no.
type Cell = (String, Option<&'static str>);

/// Row label, then a cell per column.
fn rows(cols: &[Column]) -> Vec<(String, Vec<Cell>)> {
    let mut out = Vec::new();
    for p in Protocol::ALL {
        out.push((
            p.to_string(),
            cols.iter()
                .map(
                    |c| match c.kind.and_then(|k| k.capabilities().protocol(p)) {
                        None => ("yes".to_string(), None),
                        Some(why) => ("no".to_string(), Some(why)),
                    },
                )
                .collect(),
        ));
    }
    out.push((
        "--max-streams".into(),
        cols.iter()
            .map(|c| match c.kind.map(|k| k.capabilities().max_streams) {
                None | Some(StreamLimit::Any) => ("any".to_string(), None),
                Some(StreamLimit::Fixed(n)) => (format!("{n} only"), None),
            })
            .collect(),
    ));
    type Pick = fn(&peers::Capabilities) -> Option<&'static str>;
    let knobs: [(&str, Pick); 3] = [
        ("--tls 1.2", |c| c.tls12_only),
        ("--tls 1.3", |c| c.tls13_only),
        ("--server-delay", |c| c.server_delay),
    ];
    for (label, pick) in knobs {
        out.push((
            label.to_string(),
            cols.iter()
                .map(|c| match c.kind.and_then(|k| pick(&k.capabilities())) {
                    None => ("yes".to_string(), None),
                    Some(why) => ("no".to_string(), Some(why)),
                })
                .collect(),
        ));
    }
    out
}

pub fn run(args: PeersArgs) -> Result<i32, Failure> {
    let cols = columns();
    let table = rows(&cols);
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
                let max_streams = match c.kind.map(|k| k.capabilities().max_streams) {
                    None | Some(StreamLimit::Any) => Value::Null,
                    Some(StreamLimit::Fixed(n)) => json!(n),
                };
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
