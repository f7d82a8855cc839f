//! The experiment's swept axes as a report draws them: the sites, the other
//! swept axes, each value's x position, labels and ticks.

use results::experiment::{self, Kind};
use results::Experiment;

pub(crate) fn sites(exp: &Experiment) -> Vec<String> {
    exp.values("site").to_vec()
}

/// A site as a reader knows it: for a HAR or a directory (a path, as an
/// experiment names an imported site), its file stem — the name `spdylab
/// compare` prints (`lab::sites`) — else the site as named.
pub(crate) fn site_name(site: &str) -> String {
    let path = std::path::Path::new(site);
    if !site.contains('/') && path.extension().is_none() {
        return site.to_string();
    }
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| site.to_string())
}

/// The swept axes other than the site.
pub(crate) fn swept_axes(exp: &Experiment) -> Vec<String> {
    exp.swept()
        .into_iter()
        .filter(|a| *a != "site")
        .map(String::from)
        .collect()
}

pub(crate) fn kind(axis: &str) -> Kind {
    experiment::field(axis).map_or(Kind::Site, |f| f.kind)
}

/// The x position of an axis value: its magnitude, or its index for categories.
pub(crate) fn x_of(exp: &Experiment, axis: &str, value: &str) -> f64 {
    experiment::magnitude(kind(axis), value).unwrap_or_else(|| {
        exp.values(axis)
            .iter()
            .position(|v| v == value)
            .unwrap_or(0) as f64
    })
}

pub(crate) fn axis_label(axis: &str) -> String {
    match kind(axis) {
        Kind::Duration => format!("{axis} (ms)"),
        Kind::Rate => format!("{axis} (bit/s)"),
        Kind::Loss => format!("{axis} (%)"),
        _ => axis.to_string(),
    }
}

pub(crate) fn log_axis(exp: &Experiment, axis: &str) -> bool {
    let xs: Vec<f64> = exp
        .values(axis)
        .iter()
        .filter_map(|v| experiment::magnitude(kind(axis), v))
        .collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(*x), b.max(*x)));
    matches!(kind(axis), Kind::Rate) && lo > 0.0 && hi / lo >= 8.0
}

pub(crate) fn x_ticks(exp: &Experiment, axis: &str) -> Vec<(f64, String)> {
    let values = exp.values(axis);
    let step = values.len().div_ceil(13).max(1);
    values
        .iter()
        .enumerate()
        .filter(|(i, _)| i % step == 0 || *i == values.len() - 1)
        .map(|(_, v)| (x_of(exp, axis, v), v.clone()))
        .collect()
}
