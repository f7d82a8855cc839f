//! The arguments the CLI tests (spdylab's tests/cli/*.rs and tests/peers.rs)
//! give `spdylab` again and again.

/// One repetition, no warm-up, on a quick link (20 ms, 20 Mbit/s): the
/// shortest Trial that still loads a page over a link.
pub const ONE_QUICK_REP: [&str; 8] = [
    "--rtt", "20ms", "--rate", "20mbit", "--reps", "1", "--warmup", "0",
];

/// The arguments `head`, then [`ONE_QUICK_REP`], then `tail`.
pub fn one_quick_rep<'a>(head: &[&'a str], tail: &[&'a str]) -> Vec<&'a str> {
    [head, &ONE_QUICK_REP, tail].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quick_rep_stands_between_head_and_tail() {
        assert_eq!(
            one_quick_rep(&["compare", "--site", "icons"], &["--json"]).join(" "),
            "compare --site icons --rtt 20ms --rate 20mbit --reps 1 --warmup 0 --json"
        );
    }
}
