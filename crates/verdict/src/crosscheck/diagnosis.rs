//! Where the model's error lives (issue 49). Per Trial, the model's loads
//! against Chromium's taken apart the way `explain` takes one protocol
//! against another: model − Chromium per component of the PLT
//! (`explain::difference`). Per pair of protocols, the PLT gain error (model
//! − Chromium, in points) taken apart by component, worst first: each
//! client's gain is Σ over the components of (A's − B's) / A's PLT, so the
//! gain error is the sum of each component's share of it. Trials whose loads
//! were not both stored explained (a reference stored before they were) are
//! left out.

use super::{Loads, Row};
use explain::{Component, Difference, Explanation};
use proto::Protocol;
use serde::Serialize;

/// One Trial: the model's loads against Chromium's.
#[derive(Debug, Clone, Serialize)]
pub struct TrialDiagnosis {
    pub site: String,
    pub link: String,
    pub protocol: Protocol,
    /// Model − Chromium per component (labels "model" and "Chromium").
    pub difference: Difference,
}

/// Per Trial with both clients' loads explained, model − Chromium.
pub fn trials(rows: &[Row]) -> Vec<TrialDiagnosis> {
    rows.iter()
        .filter_map(|r| {
            let (model, chromium) = (
                Loads::explained(&r.model_loads),
                Loads::explained(&r.chromium_loads),
            );
            (!model.is_empty() && !chromium.is_empty()).then_some((r, model, chromium))
        })
        .map(|(r, model, chromium)| {
            let mut difference = explain::difference(&model, &chromium);
            difference.a_label = "model".into();
            difference.b_label = "Chromium".into();
            TrialDiagnosis {
                site: r.site.clone(),
                link: r.link.clone(),
                protocol: r.protocol,
                difference,
            }
        })
        .collect()
}

/// One component's part of a pair's gain error, in points, over the points.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ComponentError {
    pub component: Component,
    pub mean_pts: f64,
    pub mean_abs_pts: f64,
}

/// A pair's PLT gain error taken apart.
#[derive(Debug, Clone, Serialize)]
pub struct PairDiagnosis {
    pub a: Protocol,
    pub b: Protocol,
    /// The (site, link) points with all four sets of loads explained.
    pub points: usize,
    /// The mean gain error over them, points (the components' sum, up to
    /// the residual of the partition).
    pub mean_error_pts: f64,
    /// Per component, the largest mean |part| first.
    pub components: Vec<ComponentError>,
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = v.collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// One client's gain of B over A, per component, in points: (mean A's
/// component − mean B's) / mean A's PLT × 100.
fn gain_parts(a: &[Explanation], b: &[Explanation]) -> Option<Vec<f64>> {
    let plt_a = mean(a.iter().map(|e| e.plt_ms)).filter(|p| *p > 0.0)?;
    Component::ALL
        .iter()
        .map(|&c| {
            let (ca, cb) = (
                mean(a.iter().map(|e| e.components.get(c)))?,
                mean(b.iter().map(|e| e.components.get(c)))?,
            );
            Some((ca - cb) / plt_a * 100.0)
        })
        .collect()
}

/// Per pair of protocols (A before B in the order the rows first name
/// them), the PLT gain error by component over the (site, link) points
/// where both clients' loads of both are explained.
pub fn pairs(rows: &[Row]) -> Vec<PairDiagnosis> {
    use super::gains::{find_row, protocols};
    let order = protocols(rows);
    let mut out = Vec::new();
    for (i, &a) in order.iter().enumerate() {
        for &b in &order[i + 1..] {
            // Per point, per component: model's part − Chromium's.
            let errors: Vec<Vec<f64>> = rows
                .iter()
                .filter(|r| r.protocol == a)
                .filter_map(|ra| {
                    let rb = find_row(rows, &ra.site, &ra.link, b)?;
                    let explained = |r: &Row, model: bool| {
                        Loads::explained(if model {
                            &r.model_loads
                        } else {
                            &r.chromium_loads
                        })
                    };
                    let model = gain_parts(&explained(ra, true), &explained(rb, true))?;
                    let chromium = gain_parts(&explained(ra, false), &explained(rb, false))?;
                    Some(model.iter().zip(&chromium).map(|(m, c)| m - c).collect())
                })
                .collect();
            if errors.is_empty() {
                continue;
            }
            let mut components: Vec<ComponentError> = Component::ALL
                .iter()
                .enumerate()
                .map(|(k, &component)| ComponentError {
                    component,
                    mean_pts: mean(errors.iter().map(|e| e[k])).unwrap_or(0.0),
                    mean_abs_pts: mean(errors.iter().map(|e| e[k].abs())).unwrap_or(0.0),
                })
                .collect();
            components.sort_by(|x, y| y.mean_abs_pts.total_cmp(&x.mean_abs_pts));
            out.push(PairDiagnosis {
                a,
                b,
                points: errors.len(),
                mean_error_pts: mean(errors.iter().map(|e| e.iter().sum::<f64>())).unwrap_or(0.0),
                components,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crosscheck::tests::row;
    use results::ProbeRecord;

    /// An explained load: `setup` and `transfer` ms, the PLT their sum.
    fn load(label: &str, setup: f64, transfer: f64) -> Explanation {
        Explanation {
            label: label.into(),
            plt_ms: setup + transfer,
            base_rtt_ms: 20.0,
            components: explain::Components {
                setup_ms: setup,
                transfer_ms: transfer,
                ..Default::default()
            },
            why: Default::default(),
            connections: Vec::new(),
            bottleneck: explain::Bottleneck {
                up: Default::default(),
                down: Default::default(),
                rtt_inflation_pct: None,
            },
            utilization: Default::default(),
            browser_cost_ms: None,
            unmatched_log_entries: 0,
            competing: None,
        }
    }

    fn explained(p: Protocol, model: [f64; 2], chromium: [f64; 2]) -> Row {
        let mut r = row("icons", "20ms 8mbit", "8mbit", "20ms", p, &[], &[]);
        let record = |e: Explanation| ProbeRecord {
            explain: Some(e),
            error: None,
            ..ProbeRecord::failed(p, 0, String::new())
        };
        r.model_loads = vec![record(load(p.name(), model[0], model[1]))];
        r.chromium_loads = vec![record(load(p.name(), chromium[0], chromium[1]))];
        r
    }

    /// https then h2: the model's h2 saves 100 ms of setup of 1000 (10
    /// points), Chromium's 50 ms (5 points), and both save 100 ms of
    /// transfer (10 points each): the error, +5 points, is all setup's.
    #[test]
    fn the_gain_error_is_the_sum_of_each_components_part() {
        let rows = [
            explained(Protocol::Https, [300.0, 700.0], [300.0, 700.0]),
            explained(Protocol::H2, [200.0, 600.0], [250.0, 600.0]),
        ];
        let t = trials(&rows);
        assert_eq!(t.len(), 2);
        assert_eq!(t[1].difference.component(Component::Setup), Some(-50.0));
        assert_eq!(
            explain::text::difference(&t[1].difference),
            "model vs Chromium: \u{2212}50 ms = \u{2212}50 ms setup + residual 0 ms"
        );
        let p = pairs(&rows);
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p[0].a, p[0].b, p[0].points),
            (Protocol::Https, Protocol::H2, 1)
        );
        assert!((p[0].mean_error_pts - 5.0).abs() < 1e-9, "{p:?}");
        assert_eq!(p[0].components[0].component, Component::Setup);
        assert!((p[0].components[0].mean_pts - 5.0).abs() < 1e-9);
        assert!(p[0].components[1].mean_abs_pts.abs() < 1e-9);
    }

    #[test]
    fn trials_without_both_clients_explained_are_left_out() {
        let mut r = explained(Protocol::H2, [1.0, 1.0], [1.0, 1.0]);
        r.chromium_loads.clear();
        assert!(trials(&[r.clone()]).is_empty());
        assert!(pairs(&[r]).is_empty());
    }
}
