//! What verdict's commands print for a person: the tables of diff and
//! budgets, explain and crosscheck as lines of text. The CLI only prints
//! these lines; the layout is decided and tested here.

pub mod check;
pub mod crosscheck;
pub mod diff;
pub mod explain;

/// Points (`results::experiment::point_key`s, `key=value` pairs) as a
/// person reads many of them: the settings every point shares said once, each
/// point by its site and the settings that vary.
pub struct Points<'a> {
    first: Vec<(&'a str, &'a str)>,
    varied: Vec<&'a str>,
}

impl<'a> Points<'a> {
    pub fn of(points: impl Iterator<Item = &'a str>) -> Points<'a> {
        fn pairs(p: &str) -> Vec<(&str, &str)> {
            p.split(' ').filter_map(|kv| kv.split_once('=')).collect()
        }
        let mut first: Option<Vec<(&str, &str)>> = None;
        let mut varied: Vec<&str> = Vec::new();
        for p in points {
            let these = pairs(p);
            let base = first.get_or_insert_with(|| these.clone());
            for &(k, v) in &these {
                if !base.contains(&(k, v)) && !varied.contains(&k) {
                    varied.push(k);
                }
            }
            for &(k, _) in base.iter() {
                if !these.iter().any(|&(tk, _)| tk == k) && !varied.contains(&k) {
                    varied.push(k);
                }
            }
        }
        Points {
            first: first.unwrap_or_default(),
            varied,
        }
    }

    /// `every point: rtt=150ms …`, or None when there are no points.
    pub fn common(&self) -> Option<String> {
        let shared: Vec<String> = self
            .first
            .iter()
            .filter(|(k, _)| *k != "site" && !self.varied.contains(k))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        (!self.first.is_empty()).then(|| format!("every point: {}", shared.join(" ")))
    }

    /// `site=youtube rate=8mbit`: a point by its site and what varies.
    pub fn shown(&self, point: &str) -> String {
        point
            .split(' ')
            .filter(|kv| {
                let key = kv.split('=').next().unwrap_or_default();
                key == "site" || self.varied.contains(&key)
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}
