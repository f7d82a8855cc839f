//! The line-by-line mutation of a good file that the property tests of the
//! file formats (site, experiment and budget TOML) start from: up to four
//! edits, each replacing, inserting or removing one line.

use proptest::prelude::*;
use proptest::sample::Index;

/// One edit of a file's lines: where, which (0 replace, 1 insert, 2
/// remove), and the line to replace or insert.
pub type LineEdit = (Index, u8, String);

/// One to four edits whose new lines come from `line`.
pub fn edits(line: impl Strategy<Value = String>) -> impl Strategy<Value = Vec<LineEdit>> {
    proptest::collection::vec((any::<Index>(), 0u8..3, line), 1..5)
}

/// The lines of `good` with `edits` made in order (a file never loses its
/// last line: removing it puts the edit's line in its place).
pub fn apply(good: &str, edits: Vec<LineEdit>) -> Vec<String> {
    let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
    for (at, op, line) in edits {
        let i = at.index(lines.len());
        match op {
            0 => lines[i] = line,
            1 => lines.insert(i, line),
            _ => {
                lines.remove(i);
                if lines.is_empty() {
                    lines.push(line);
                }
            }
        }
    }
    lines
}
