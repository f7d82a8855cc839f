//! The text of `spdylab sites` and `spdylab import`: the table of built-in
//! sites (and the synthetic pages' form), a site's heading and tree of
//! resources, what `--export` wrote, and what an import did with each HAR.

use crate::sites::{Imported, Site};
use std::path::Path;

fn kb(bytes: usize) -> String {
    format!("{:.1} kB", bytes as f64 / 1000.0)
}

/// The built-in sites: resources, bytes, average size, domains, about.
pub fn list(sites: &[Site]) -> Vec<String> {
    let mut out = vec![format!(
        "{:<18} {:>9} {:>11} {:>10} {:>8}  about",
        "site", "resources", "total", "average", "domains"
    )];
    for s in sites {
        out.push(format!(
            "{:<18} {:>9} {:>11} {:>10} {:>8}  {}",
            s.name,
            s.resources.len(),
            kb(s.total_bytes()),
            kb(s.total_bytes().checked_div(s.resources.len()).unwrap_or(0)),
            s.hosts().len(),
            s.about
        ));
    }
    out.push(format!("and synthetic pages: {}", site::OBJECTS_FORM));
    out
}

/// A site's heading, then its tree: a line per resource (kind, size, URL,
/// how it is revealed), each child under its parent, indented.
pub fn tree(s: &Site) -> Vec<String> {
    let mut out = vec![format!(
        "{}: {} resources, {}, {} domains — {}",
        s.name,
        s.resources.len(),
        kb(s.total_bytes()),
        s.hosts().len(),
        s.about
    )];
    // Depth first from the page (resource 0), children in their order.
    let mut stack: Vec<(usize, usize)> = match s.resources.is_empty() {
        true => Vec::new(),
        false => vec![(0, 0)],
    };
    while let Some((i, depth)) = stack.pop() {
        let r = &s.resources[i];
        out.push(format!(
            "{:indent$}{:<5} {:>9}  //{}{}  ({})",
            "",
            r.kind.name(),
            kb(r.size),
            r.host,
            r.path,
            format!("{:?}", r.reveal).to_lowercase(),
            indent = depth * 2
        ));
        let children: Vec<usize> = (0..s.resources.len())
            .filter(|&c| s.resources[c].parent == Some(i))
            .collect();
        stack.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
    }
    out
}

/// What `--export DIR` wrote.
pub fn exported(s: &Site, dir: &Path) -> String {
    format!(
        "wrote {} files ({}) under {}",
        s.resources.len(),
        kb(s.total_bytes()),
        dir.display()
    )
}

/// What an import made of each HAR (entries and pages into resources and
/// hosts, its bodies, where each parent came from, the HTTP versions, each
/// entry skipped with its reason), then where it was written, if it was.
pub fn imported(imported: &[Imported], out: Option<&Path>) -> Vec<String> {
    let mut lines = Vec::new();
    for i in imported {
        let r = &i.report;
        let versions: Vec<String> = r
            .http_versions
            .iter()
            .map(|(v, n)| format!("{} x{n}", if v.is_empty() { "(none)" } else { v }))
            .collect();
        lines.push(format!(
            "{} ({}): {} entries, {} pages → {} resources on {} hosts, {:.1} kB",
            i.name,
            i.har.display(),
            r.entries,
            r.pages,
            r.resources,
            r.hosts,
            r.bytes as f64 / 1000.0
        ));
        lines.push(format!(
            "  bodies: {} recorded, {} generated ({} enlarged to hold their references)",
            r.bodies_recorded, r.bodies_generated, r.bodies_enlarged
        ));
        lines.push(format!(
            "  parents: {} initiator, {} discovery, {} after a script, {} document, {} redirect",
            r.parents_initiator,
            r.parents_discovery,
            r.parents_timing,
            r.parents_document,
            r.parents_redirect
        ));
        lines.push(format!("  httpVersion: {}", versions.join(", ")));
        lines.push(format!("  skipped: {}", r.skipped.len()));
        lines.extend(
            r.skipped
                .iter()
                .map(|s| format!("    {}  {}", s.reason, s.url)),
        );
    }
    lines.extend(out.map(|out| format!("wrote {}", out.display())));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_has_every_resource_once_children_under_their_parent() {
        let s = site::builtin("youtube", crate::sites::DEFAULT_SEED).unwrap();
        let out = tree(&s);
        assert!(out[0].starts_with("youtube: "), "{}", out[0]);
        assert_eq!(out.len(), s.resources.len() + 1);
        // The page first, unindented; a child one step deeper than its parent.
        assert!(out[1].starts_with(s.resources[0].kind.name()), "{}", out[1]);
        let indent = |l: &str| l.len() - l.trim_start().len();
        for pair in out[1..].windows(2) {
            assert!(indent(&pair[1]) <= indent(&pair[0]) + 2, "{pair:?}");
        }
    }

    #[test]
    fn the_list_has_a_row_per_site_under_the_header_then_the_synthetic_form() {
        let sites = crate::sites::builtin(crate::sites::DEFAULT_SEED);
        let out = list(&sites);
        assert_eq!(out.len(), sites.len() + 2);
        assert!(out[sites.len() + 1].contains("objects-NxSIZE"));
        assert!(out[0].starts_with("site ") && out[0].ends_with("  about"));
        for (line, s) in out[1..].iter().zip(&sites) {
            assert!(line.starts_with(&s.name) && line.contains(" kB"), "{line}");
        }
    }
}
