//! The text of `spdylab priorities`: per link, a matrix with the servers
//! down and protocol × client across, each cell its verdict, median score
//! and 95 % interval (or why it did not run), then the legend and the
//! reasons of the refusals, numbered.

use crate::priority_matrix::{Cell, Outcome, Request};

/// A cell as text: `pass 1.4 [1.2–1.7]`, `FAIL 9.8 [..]`, `n/a¹`, `error²`.
fn cell_text(cell: &Cell, notes: &mut Vec<String>) -> String {
    let mut note = |why: String| {
        let n = match notes.iter().position(|w| *w == why) {
            Some(i) => i + 1,
            None => {
                notes.push(why);
                notes.len()
            }
        };
        format!("({n})")
    };
    match &cell.outcome {
        Outcome::Ran {
            summary: Some(s),
            errors,
            ..
        } => {
            let ci = if s.ci95[0].is_finite() {
                format!(" [{:.1}–{:.1}]", s.ci95[0], s.ci95[1])
            } else {
                String::new()
            };
            let verdict = match s.verdict {
                crate::priorities::Verdict::Pass => "pass".to_string(),
                v => v.name().to_uppercase(),
            };
            let failed = if errors.is_empty() {
                String::new()
            } else {
                format!(
                    " {}",
                    note(format!("{} probe(s) failed: {}", errors.len(), errors[0]))
                )
            };
            format!("{verdict} {:.1}{ci}{failed}", s.median)
        }
        Outcome::Ran { errors, .. } => {
            let why = errors.first().cloned().unwrap_or_else(|| "no probe".into());
            format!("error {}", note(why))
        }
        Outcome::Refused { why } => format!("n/a {}", note(why.clone())),
        Outcome::Failed { error } => format!("error {}", note(error.clone())),
    }
}

/// The matrices and their notes.
pub fn report(req: &Request, cells: &[Cell]) -> Vec<String> {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let columns: Vec<(String, String)> = req
        .protocols
        .iter()
        .flat_map(|p| {
            req.clients
                .iter()
                .map(move |c| (p.name().to_string(), c.name().to_string()))
        })
        .collect();
    for (link, choice) in &req.links {
        let described = crate::link_flags::testbed_spec(choice, 1)
            .map(|t| t.to_string())
            .unwrap_or_default();
        out.push(format!("{link}: {described}"));
        let mut table: Vec<Vec<String>> = Vec::new();
        let mut head = vec!["server".to_string()];
        head.extend(columns.iter().map(|(p, c)| format!("{p} {c}")));
        table.push(head);
        for row in &req.rows {
            let mut line = vec![row.name.clone()];
            for (p, c) in &columns {
                let text = cells
                    .iter()
                    .find(|x| {
                        x.link == *link && x.row == row.name && x.protocol == *p && x.client == *c
                    })
                    .map_or_else(|| "—".to_string(), |x| cell_text(x, &mut notes));
                line.push(text);
            }
            table.push(line);
        }
        let widths: Vec<usize> = (0..table[0].len())
            .map(|i| {
                table
                    .iter()
                    .map(|r| r[i].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for r in &table {
            let cols: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(t, w)| format!("{t:<w$}"))
                .collect();
            out.push(cols.join("  ").trim_end().to_string());
        }
        out.push(String::new());
    }
    out.push(format!(
        "score: the slower high-priority image's time (request to last byte) over the reference (the same image alone on the warm connection); median of {} repetitions, [95 % CI of the mean]; pass: median ≤ {} (docs/priorities.md). EPIC FAIL: the first high-priority image came after every low one in most repetitions.",
        req.reps,
        crate::priorities::PASS_THRESHOLD
    ));
    for (i, n) in notes.iter().enumerate() {
        out.push(format!("({}) {n}", i + 1));
    }
    out
}
