//! The text of `spdylab peers`: each server's binary and version (or how to
//! install it), the capability table, and why not where a cell says no.

use crate::peers::Table;

/// The servers' binaries, a blank line, the table (a row per protocol or
/// knob, a column per server), a blank line and the reasons of its noes.
pub fn table(t: &Table) -> Vec<String> {
    let names: Vec<&str> = t.columns.iter().map(|c| c.server.name()).collect();
    let mut out: Vec<String> = t
        .columns
        .iter()
        .zip(&names)
        .map(|(c, name)| match c.binary.found() {
            Ok((path, version)) => format!("{name:<8} {version} ({path})"),
            Err(e) => format!("{name:<8} {e}"),
        })
        .collect();
    out.push(String::new());
    let mut header = format!("{:<16}", "");
    for name in &names {
        header.push_str(&format!(" {name:>9}"));
    }
    out.push(header);
    for (f, cells) in &t.rows {
        let mut row = format!("{:<16}", f.label());
        for cell in cells {
            row.push_str(&format!(" {:>9}", cell.text()));
        }
        out.push(row);
    }
    out.push(String::new());
    out.push("Why not:".into());
    for (f, cells) in &t.rows {
        for (name, cell) in names.iter().zip(cells) {
            if let Some(why) = cell.why_not() {
                out.push(format!("  {name} {}: {why}", f.label()));
            }
        }
    }
    out.push("Verified on loopback with curl, nghttp -v and openssl s_client (crates/peers/tests/servers.rs).".into());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peers::{Binary, Column, Feature, Support};
    use crate::trial::{PeerKind, ServerKind};

    #[test]
    fn binaries_then_the_table_then_why_not() {
        let t = Table {
            columns: vec![
                Column {
                    server: ServerKind::Builtin,
                    binary: Binary::ThisProgram,
                },
                Column {
                    server: ServerKind::Peer(PeerKind::Nginx),
                    binary: Binary::NotInstalled { package: "nginx" },
                },
            ],
            rows: vec![
                (
                    Feature::Protocol("spdy3"),
                    vec![Support::Yes, Support::No("no SPDY module")],
                ),
                (
                    Feature::MaxStreams,
                    vec![Support::AnyLimit, Support::FixedLimit(128)],
                ),
            ],
        };
        let out = table(&t);
        assert!(out[0].starts_with("builtin  spdylab "), "{}", out[0]);
        assert_eq!(out[1], "nginx    not installed: apt-get install nginx");
        assert_eq!(
            out[3],
            format!("{:<16} {:>9} {:>9}", "", "builtin", "nginx")
        );
        assert_eq!(
            out[5],
            format!("{:<16} {:>9} {:>9}", "--max-streams", "any", "128 only")
        );
        assert!(
            out.contains(&"  nginx spdy3: no SPDY module".to_string()),
            "{out:#?}"
        );
        assert_eq!(t.fixed_max_streams(1), Some(128));
        assert_eq!(
            t.document()["servers"][1]["why_not"]["spdy3"],
            "no SPDY module"
        );
    }
}
