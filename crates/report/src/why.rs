//! The "Why" section of a campaign's report (issue 34): per site, what each
//! protocol's page load time is made of, read off each probe's
//! [`explain::Explanation`] (`ProbeRecord::explain`), along each swept axis.
//!
//! - the PLT's components (off wire, retransmission, transfer, loss
//!   recovery, setup, queueing, window, request, browser) as stacked bars,
//!   one per protocol at each value of the axis (004's Fig. 3 and Fig. 5 for
//!   every axis), with the same means in a table below;
//! - RTT inflation and gateway loss at the bottleneck per protocol against
//!   the axis (004 §IV-B's "up to 3 % PLR", "inflating RTT by up to 570 %");
//! - how each connection's flight grew, round trip by round trip, in one
//!   probe per protocol (004's argument that one SPDY connection's window
//!   outgrows any of HTTPS's parallel ones).
//!
//! Probes that failed or carry no explanation (written before issue 34) are
//! left out, and a site with none says so in a sentence.

use crate::axes::{axis_label, log_axis, swept_axes, x_of, x_ticks};
use crate::html::Html;
use crate::svg::{self, colour, esc, Series, StackedBar};
use explain::{Component, Explanation};
use results::experiment::point_key;
use results::stats::{mean, summarize};
use results::{Experiment, ProbeRecord};
use std::fmt::Write as _;

/// Each component's colour, the same in every plot of the section (none of
/// them a protocol's or a HAR phase's colour, so a pixel of one is a bar's).
pub(crate) const COMPONENT_COLOURS: [(Component, &str); 9] = [
    (Component::OffWire, "#dddddd"),
    (Component::Retransmission, "#a50f15"),
    (Component::Transfer, "#3182bd"),
    (Component::LossRecovery, "#fb6a4a"),
    (Component::Setup, "#fd8d3c"),
    (Component::Queueing, "#756bb1"),
    (Component::Window, "#9ecae1"),
    (Component::Request, "#74c476"),
    (Component::Browser, "#a6761d"),
];

/// Colours of the connections in the flight plot, largest first.
const CONNECTION_COLOURS: [&str; 8] = [
    "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666",
];

/// The connections drawn per probe in the flight plot.
const MAX_CONNECTIONS: usize = 8;

/// A probe that loaded and carries its explanation.
type Explained<'a> = (&'a ProbeRecord, &'a Explanation);

/// The Why section of one site; `first` puts the `why` anchor on it, and
/// `waterfall` (the report's option, a Trial key) names the point whose
/// probes' flights are drawn.
pub(crate) fn section(
    h: &mut Html,
    exp: &Experiment,
    probes: &[ProbeRecord],
    site: &str,
    first: bool,
    waterfall: Option<&str>,
) {
    let _ = write!(
        h.body,
        r#"<section class="why"{}>"#,
        if first { r#" id="why""# } else { "" }
    );
    h.section(
        &format!("why-{site}"),
        &format!("{site}: why — the PLT taken apart"),
    );
    let here: Vec<Explained> = probes
        .iter()
        .filter(|p| p.error.is_none() && p.point.get("site").map(String::as_str) == Some(site))
        .filter_map(|p| Some((p, p.explain.as_ref()?)))
        .collect();
    if here.is_empty() {
        h.p("No probe of this site carries an explanation (the campaign was recorded before spdylab explained its probes, or every probe failed): nothing to take apart.");
        h.body.push_str("</section>");
        return;
    }
    let protocols: Vec<String> = exp.protocols.iter().map(|p| p.name().to_string()).collect();
    let axes = swept_axes(exp);
    h.p("Each probe's page load time is a partition of its time into mechanisms, read off the link's packet log and the HAR as spdylab explain does (docs/explain.md): every instant goes to the first of these that holds — off wire, retransmission, transfer (the bottleneck busy with the page), loss recovery, setup (handshakes), queueing, window (the sender window-limited), request (a request round outstanding), browser. Failed probes and probes without an explanation are left out.");
    if axes.is_empty() {
        let groups = vec![(String::new(), here.clone())];
        components(h, exp, site, None, &groups, &protocols);
        bottleneck(h, exp, site, None, &groups, &protocols);
    }
    for axis in &axes {
        let groups: Vec<(String, Vec<Explained>)> = exp
            .values(axis)
            .iter()
            .map(|v| {
                let at: Vec<Explained> = here
                    .iter()
                    .filter(|(p, _)| p.point.get(axis.as_str()) == Some(v))
                    .copied()
                    .collect();
                (v.clone(), at)
            })
            .collect();
        components(h, exp, site, Some(axis), &groups, &protocols);
        bottleneck(h, exp, site, Some(axis), &groups, &protocols);
    }
    flights(h, exp, &here, waterfall);
    h.body.push_str("</section>");
}

/// The mean of each component (ms) over `set`, in `Component::ALL`'s order.
pub(crate) fn component_means(set: &[Explained]) -> [f64; 9] {
    Component::ALL.map(|c| {
        mean(
            &set.iter()
                .map(|(_, e)| e.components.get(c))
                .collect::<Vec<_>>(),
        )
    })
}

/// The probes of `set` loaded with `protocol`.
fn of<'a>(set: &[Explained<'a>], protocol: &str) -> Vec<Explained<'a>> {
    set.iter()
        .filter(|(p, _)| p.protocol.name() == protocol)
        .copied()
        .collect()
}

/// " Pooled over …." naming the other swept axes, when there are others.
fn pooled_over(exp: &Experiment, axis: Option<&String>) -> String {
    let rest: Vec<String> = swept_axes(exp)
        .into_iter()
        .filter(|a| Some(a) != axis)
        .collect();
    if axis.is_none() || rest.is_empty() {
        String::new()
    } else {
        format!(" Pooled over {}.", rest.join(", "))
    }
}

/// Stacked component means per protocol at each value of `axis` (one group
/// when nothing is swept), and the table of the same numbers.
fn components(
    h: &mut Html,
    exp: &Experiment,
    site: &str,
    axis: Option<&String>,
    groups: &[(String, Vec<Explained>)],
    protocols: &[String],
) {
    let palette: Vec<(&str, &str)> = COMPONENT_COLOURS
        .iter()
        .map(|(c, colour)| (c.name(), *colour))
        .collect();
    let bars: Vec<(String, Vec<StackedBar>)> = groups
        .iter()
        .map(|(value, set)| {
            let bars = protocols
                .iter()
                .map(|proto| {
                    let set = of(set, proto);
                    // Nothing explained: an empty bar, not one of NaN.
                    let segments = if set.is_empty() {
                        Vec::new()
                    } else {
                        Component::ALL
                            .iter()
                            .zip(component_means(&set))
                            .map(|(c, m)| (c.name().to_string(), m))
                            .collect()
                    };
                    StackedBar {
                        label: proto.clone(),
                        segments,
                    }
                })
                .collect();
            (value.clone(), bars)
        })
        .collect();
    let (x_label, against) = match axis {
        Some(a) => (axis_label(a), format!(" against {a}")),
        None => ("all probes (nothing swept)".to_string(), String::new()),
    };
    h.figure(
        svg::grouped_stacked_bars(
            &format!("{site}: what the PLT is made of{against}"),
            &x_label,
            "mean ms per page",
            &bars,
            &palette,
        ),
        &format!(
            "Mean of each component over the probes that loaded and were explained, one bar per protocol (left to right: {}) at each value; a bar's height is the mean PLT, written above it.{}",
            protocols.join(", "),
            pooled_over(exp, axis)
        ),
    );
    let _ = write!(
        h.body,
        r#"<table class="why-components"><tr><th>{}</th><th>protocol</th><th>n</th>"#,
        esc(axis.map_or("point", |a| a.as_str()))
    );
    for c in Component::ALL {
        let _ = write!(h.body, "<th>{}</th>", esc(c.name()));
    }
    h.body
        .push_str("<th>Σ components</th><th>mean PLT</th></tr>");
    for (value, set) in groups {
        for proto in protocols {
            let set = of(set, proto);
            if set.is_empty() {
                continue;
            }
            let means = component_means(&set);
            let _ = write!(
                h.body,
                "<tr><td>{}</td><td>{}</td><td>{}</td>",
                esc(if axis.is_some() { value } else { "all" }),
                esc(proto),
                set.len()
            );
            for m in means {
                let _ = write!(h.body, "<td>{m:.0}</td>");
            }
            let plt = mean(&set.iter().map(|(p, _)| p.plt_ms).collect::<Vec<_>>());
            let _ = write!(
                h.body,
                "<td>{:.0}</td><td>{plt:.0}</td></tr>",
                means.iter().sum::<f64>()
            );
        }
    }
    h.body.push_str("</table>");
    h.p("The same means in ms: the components of every probe sum to its PLT, so Σ components is the mean PLT (up to rounding).");
}

/// The points (x, mean, CI low, CI high) of one figure per protocol against
/// the axis; groups where no probe defines it are not drawn.
fn series(
    exp: &Experiment,
    axis: Option<&String>,
    groups: &[(String, Vec<Explained>)],
    protocols: &[String],
    figure: &dyn Fn(&Explanation) -> Option<f64>,
) -> Vec<Series> {
    protocols
        .iter()
        .map(|proto| {
            let points = groups
                .iter()
                .filter_map(|(value, set)| {
                    let xs: Vec<f64> = of(set, proto)
                        .iter()
                        .filter_map(|(_, e)| figure(e))
                        .filter(|v| v.is_finite())
                        .collect();
                    if xs.is_empty() {
                        return None;
                    }
                    let s = summarize(&xs);
                    let x = axis.map_or(0.0, |a| x_of(exp, a, value));
                    Some((x, s.mean, s.ci95[0], s.ci95[1]))
                })
                .collect();
            Series {
                name: proto.clone(),
                colour: colour(proto).into(),
                points,
            }
        })
        .collect()
}

/// Gateway loss: the bottleneck's queue drops over the packets that reached
/// its queues, both directions, % (`explain`'s `gateway_loss_pct`: the loss
/// model sits before the queue, so randomly lost packets are in neither).
pub(crate) fn gateway_loss_pct(e: &Explanation) -> Option<f64> {
    e.mechanisms().gateway_loss_pct
}

/// RTT inflation and gateway loss per protocol against the axis.
fn bottleneck(
    h: &mut Html,
    exp: &Experiment,
    site: &str,
    axis: Option<&String>,
    groups: &[(String, Vec<Explained>)],
    protocols: &[String],
) {
    let (x_label, ticks, log_x, against) = match axis {
        Some(a) => (
            axis_label(a),
            x_ticks(exp, a),
            log_axis(exp, a),
            format!(" against {a}"),
        ),
        None => (
            "all probes (nothing swept)".to_string(),
            vec![(0.0, "all".to_string())],
            false,
            String::new(),
        ),
    };
    let pooled = pooled_over(exp, axis);
    let inflation = series(exp, axis, groups, protocols, &|e| {
        e.bottleneck.rtt_inflation_pct
    });
    h.figure(
        svg::line_chart(
            &format!("{site}: RTT inflation{against}"),
            &x_label,
            "RTT inflation (%)",
            &ticks,
            log_x,
            &inflation,
            &[],
            true,
        ),
        &format!("RTT inflation: the page's mean queue wait at the bottleneck, uplink plus downlink, over the base RTT, % (mean over probes with 95 % CI bands). 004 §IV-B: HTTPS's parallel connections fill the gateway's queue, \"causing up to 3 % PLR and inflating RTT by up to 570 %\".{pooled}"),
    );
    let loss = series(exp, axis, groups, protocols, &gateway_loss_pct);
    let none = if loss.iter().all(|s| s.points.iter().all(|p| p.1 == 0.0)) {
        " No probe had a packet dropped by the queues."
    } else {
        ""
    };
    h.figure(
        svg::line_chart(
            &format!("{site}: gateway loss{against}"),
            &x_label,
            "gateway loss (%)",
            &ticks,
            log_x,
            &loss,
            &[],
            true,
        ),
        &format!("Gateway loss: packets the bottleneck's queues dropped over the packets that reached them, both directions, % (004's gateway PLR; the link's random loss happens before the queue and is in neither count). Mean over probes with 95 % CI bands.{none}{pooled}"),
    );
}

/// The probes whose flights are drawn: per protocol the median-PLT explained
/// probe at the point of the `waterfall` Trial when it is one of this site's,
/// else at the first point of the sweep with an explained probe.
pub(crate) fn chosen<'a>(
    exp: &Experiment,
    here: &[Explained<'a>],
    waterfall: Option<&str>,
) -> Vec<Explained<'a>> {
    let named = waterfall
        .and_then(|t| here.iter().find(|(p, _)| p.trial == t))
        .map(|(p, _)| point_key(&p.point));
    let Some(key) = named.or_else(|| {
        exp.points()
            .iter()
            .map(point_key)
            .find(|k| here.iter().any(|(p, _)| point_key(&p.point) == *k))
    }) else {
        return Vec::new();
    };
    exp.protocols
        .iter()
        .filter_map(|proto| {
            let mut at: Vec<Explained> = here
                .iter()
                .filter(|(p, _)| p.protocol == *proto && point_key(&p.point) == key)
                .copied()
                .collect();
            at.sort_by(|a, b| a.0.plt_ms.total_cmp(&b.0.plt_ms));
            at.get(at.len().saturating_sub(1) / 2).copied()
        })
        .collect()
}

/// Per chosen probe, each of its largest connections' payload delivered
/// per base RTT.
fn flights(h: &mut Html, exp: &Experiment, here: &[Explained], waterfall: Option<&str>) {
    for (p, e) in chosen(exp, here, waterfall) {
        let mut conns: Vec<(usize, &explain::Connection)> = e
            .connections
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.flight_bytes_per_rtt.is_empty())
            .collect();
        conns.sort_by(|a, b| {
            b.1.payload_bytes_delivered_down
                .cmp(&a.1.payload_bytes_delivered_down)
                .then(a.0.cmp(&b.0))
        });
        let shown = conns.len().min(MAX_CONNECTIONS);
        // The title names what tells the probes apart; the caption the Trial.
        let mut name: Vec<String> = p.point.get("site").into_iter().cloned().collect();
        for a in swept_axes(exp) {
            if let Some(v) = p.point.get(&a) {
                name.push(format!("{a}={v}"));
            }
        }
        let title = format!(
            "{} {} rep {}: flight per round trip",
            name.join(" "),
            p.protocol,
            p.rep
        );
        if shown == 0 {
            h.p(&format!(
                "{} ({}, rep {}): no connection delivered data down the link, no flight to draw.",
                p.trial, p.protocol, p.rep
            ));
            continue;
        }
        let rounds = conns[..shown]
            .iter()
            .map(|c| c.1.flight_bytes_per_rtt.len())
            .max()
            .unwrap_or(1);
        let step = rounds.div_ceil(13).max(1);
        let ticks: Vec<(f64, String)> = (1..=rounds)
            .filter(|r| (r - 1) % step == 0 || *r == rounds)
            .map(|r| (r as f64, r.to_string()))
            .collect();
        let series: Vec<Series> = conns[..shown]
            .iter()
            .enumerate()
            .map(|(i, (index, c))| {
                let port = c.client.rsplit(':').next().unwrap_or("");
                Series {
                    name: format!(
                        "#{index} :{port} {:.0} KB",
                        c.payload_bytes_delivered_down as f64 / 1e3
                    ),
                    colour: CONNECTION_COLOURS[i].into(),
                    points: c
                        .flight_bytes_per_rtt
                        .iter()
                        .enumerate()
                        .map(|(r, b)| ((r + 1) as f64, *b as f64 / 1e3, f64::NAN, f64::NAN))
                        .collect(),
                }
            })
            .collect();
        h.figure(
            svg::line_chart(
                &title,
                &format!("round trip (base RTT {:.0} ms) from its first data", e.base_rtt_ms),
                "KB delivered in the round trip",
                &ticks,
                false,
                &series,
                &[],
                true,
            ),
            &format!(
                "How each connection's flight grew: payload delivered down the link in each base-RTT window from the connection's first data, KB (the window as the wire saw it; an explanation keeps the first 64 round trips). Probe {} ({}, repetition {}, PLT {:.0} ms; the median of its protocol at this point), {} of its {} connections with data, largest first (#index in the probe's connections, the client's port, payload delivered).",
                p.trial,
                p.protocol,
                p.rep,
                p.plt_ms,
                shown,
                conns.len()
            ),
        );
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::sections::render;
    use crate::{aggregate, Options};
    use explain::{Bottleneck, Components, Connection, QueueStats, Utilization, Why};
    use results::experiment::{self, point_key};
    use std::path::Path;

    /// A connection that delivered `flight` (bytes per round trip) down.
    fn connection(port: u16, flight: &[u64]) -> Connection {
        Connection {
            transport: "tcp".into(),
            client: format!("10.0.0.1:{port}"),
            server: "10.0.0.2:443".into(),
            opened_by: Some("syn".into()),
            open_ms: 0.0,
            handshake_end_ms: Some(40.0),
            payload_bytes_delivered_down: flight.iter().sum(),
            flight_bytes_per_rtt: flight.to_vec(),
            ..Default::default()
        }
    }

    /// An explanation whose components are `setup`, `transfer`, `request`
    /// (ms, the rest 0; the PLT their sum), with `queue` = (delivered,
    /// random losses, queue drops) each way and RTT inflation `inflation`.
    fn explanation(
        setup: f64,
        transfer: f64,
        request: f64,
        queue: [(u64, u64, u64); 2],
        inflation: f64,
    ) -> Explanation {
        let stats = |(delivered, loss, dropped): (u64, u64, u64)| QueueStats {
            packets_delivered: delivered,
            drops_loss: loss,
            drops_queue: dropped,
            ..QueueStats::default()
        };
        Explanation {
            label: String::new(),
            plt_ms: setup + transfer + request,
            base_rtt_ms: 40.0,
            components: Components {
                setup_ms: setup,
                transfer_ms: transfer,
                request_ms: request,
                ..Components::default()
            },
            why: Why::default(),
            connections: vec![
                connection(50000, &[14_000, 28_000, 40_000]),
                connection(50001, &[14_000, 56_000, 112_000, 150_000]),
            ],
            bottleneck: Bottleneck {
                up: stats(queue[0]),
                down: stats(queue[1]),
                rtt_inflation_pct: Some(inflation),
            },
            utilization: Utilization::default(),
            browser_cost_ms: None,
            unmatched_log_entries: 0,
            competing: None,
        }
    }

    /// youtube over https and h2 at rtt 20ms and 80ms, two repetitions, every
    /// probe explained: https's setup is 300 ms + 100 per repetition, h2's
    /// 100 ms; transfer 500 ms; request 200 ms (×2 at 80ms). Queues: up 90
    /// delivered, 5 lost at random, 10 dropped; down 380 delivered, 20
    /// dropped (gateway loss 30 / 500 = 6 %); RTT inflation 100 % (https) and
    /// 20 % (h2) + 10 per repetition.
    pub(crate) fn fixture() -> (Experiment, Vec<ProbeRecord>) {
        let exp = experiment::parse(
            "why.toml",
            "name = \"w\"\nsites = [\"youtube\"]\nprotocols = [\"https\", \"h2\"]\nreps = 2\n[link]\nrtt = [\"20ms\", \"80ms\"]\nrate = \"1mbit\"\n",
        )
        .unwrap();
        let mut probes = Vec::new();
        for point in exp.points() {
            let rounds = if point["rtt"] == "80ms" { 2.0 } else { 1.0 };
            for rep in 0..2 {
                for proto in ["https", "h2"] {
                    let setup = if proto == "https" {
                        300.0 + 100.0 * rep as f64
                    } else {
                        100.0
                    };
                    let inflation = if proto == "https" { 100.0 } else { 20.0 } + 10.0 * rep as f64;
                    let e = explanation(
                        setup,
                        500.0,
                        200.0 * rounds,
                        [(90, 5, 10), (380, 0, 20)],
                        inflation,
                    );
                    let line = serde_json::json!({
                        "trial": format!("{} protocol={proto} rep={rep}", point_key(&point)),
                        "point": point,
                        "protocol": proto,
                        "rep": rep,
                        "plt_ms": e.plt_ms,
                        "tow_ms": e.plt_ms - 50.0,
                        "bytes_down": 250_000,
                        "connections": 2,
                    });
                    let mut p: ProbeRecord = serde_json::from_value(line).unwrap();
                    p.explain = Some(e);
                    probes.push(p);
                }
            }
        }
        (exp, probes)
    }

    pub(crate) fn report_page(
        exp: &Experiment,
        probes: &[ProbeRecord],
        waterfall: Option<&str>,
    ) -> String {
        let rows = aggregate(exp, probes);
        let opts = Options {
            waterfall: waterfall.map(String::from),
        };
        render(
            Path::new("/nonexistent"),
            exp,
            probes,
            &rows,
            &[],
            &[],
            &opts,
        )
    }

    /// The Why section of a page: from its anchor to the end of its section.
    fn why_of(page: &str) -> &str {
        let start = page
            .find(r#"<section class="why" id="why">"#)
            .expect("the why section");
        let len = page[start..].find("</section>").unwrap();
        &page[start..start + len]
    }

    /// The cells of the component table's rows, by (axis value, protocol).
    fn table(section: &str) -> Vec<Vec<String>> {
        let t = section
            .split(r#"<table class="why-components">"#)
            .nth(1)
            .unwrap();
        let t = t.split("</table>").next().unwrap();
        t.split("<tr>")
            .skip(2)
            .map(|r| {
                r.split("<td>")
                    .skip(1)
                    .map(|c| c.split("</td>").next().unwrap().to_string())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_why_section_stacks_the_components_to_the_plt() {
        let (exp, probes) = fixture();
        let page = report_page(&exp, &probes, None);
        let why = why_of(&page);
        assert!(why.contains(r#"<h2 id="why-youtube">youtube: why — the PLT taken apart</h2>"#));
        assert!(
            page.contains(r##"<a href="#why-youtube">"##),
            "in the contents"
        );
        // After the phases, before the waterfall.
        let at = |s: &str| page.find(s).unwrap();
        assert!(at(r#"id="phases-youtube""#) < at(r#"id="why""#));
        assert!(at(r#"id="why""#) < at(r#"id="waterfall""#));

        let rows = table(why);
        let header: Vec<&str> = why
            .split(r#"<table class="why-components"><tr>"#)
            .nth(1)
            .unwrap()
            .split("</tr>")
            .next()
            .unwrap()
            .split("<th>")
            .skip(1)
            .map(|c| c.trim_end_matches("</th>"))
            .collect();
        assert_eq!(
            header,
            [
                "rtt",
                "protocol",
                "n",
                "off wire",
                "retransmission",
                "transfer",
                "loss recovery",
                "setup",
                "queueing",
                "window",
                "request",
                "browser",
                "Σ components",
                "mean PLT"
            ]
        );
        let want = [
            [
                "20ms", "https", "2", "0", "0", "500", "0", "350", "0", "0", "200", "0", "1050",
                "1050",
            ],
            [
                "20ms", "h2", "2", "0", "0", "500", "0", "100", "0", "0", "200", "0", "800", "800",
            ],
            [
                "80ms", "https", "2", "0", "0", "500", "0", "350", "0", "0", "400", "0", "1250",
                "1250",
            ],
            [
                "80ms", "h2", "2", "0", "0", "500", "0", "100", "0", "0", "400", "0", "1000",
                "1000",
            ],
        ];
        assert_eq!(rows, want.map(|r| r.map(String::from)));

        // The bars: each one's segments, stacked, are as tall as its mean PLT
        // (the tallest, 1250 ms, fills 1 / 1.08 of the plot's height).
        let svg = why.split("<svg").nth(1).unwrap();
        let mut heights: Vec<(String, f64)> = Vec::new();
        for rect in svg.split("<rect ").skip(1) {
            let Some(title) = rect.split("<title>").nth(1) else {
                continue;
            };
            let bar = title.rsplitn(3, ": ").nth(2).unwrap().to_string();
            let h: f64 = rect
                .split("height=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            match heights.iter_mut().find(|b| b.0 == bar) {
                Some(b) => b.1 += h,
                None => heights.push((bar, h)),
            }
        }
        let px = |ms: f64| ms / (1250.0 * 1.08) * svg::STACK_HEIGHT;
        let expected = [
            ("20ms, https", 1050.0),
            ("20ms, h2", 800.0),
            ("80ms, https", 1250.0),
            ("80ms, h2", 1000.0),
        ];
        assert_eq!(heights.len(), expected.len(), "{heights:?}");
        for ((bar, h), (want_bar, plt)) in heights.iter().zip(expected) {
            assert_eq!(bar, want_bar);
            assert!((h - px(plt)).abs() < 0.05, "{bar}: {h} px for {plt} ms");
        }
        // One fixed colour per component, with a legend.
        for (c, colour) in COMPONENT_COLOURS {
            assert!(
                svg.contains(&format!(r#"fill="{colour}"/><text"#)),
                "{}",
                c.name()
            );
            assert!(
                svg.contains(&format!(">{}</text>", c.name())),
                "{}",
                c.name()
            );
        }
        assert!(!page.contains("NaN"));
    }

    #[test]
    fn gateway_loss_is_queue_drops_over_what_reached_the_queues() {
        let e = explanation(1.0, 1.0, 1.0, [(90, 5, 10), (380, 0, 20)], 0.0);
        // 30 dropped of 90 + 10 + 380 + 20 that reached the queues; the 5
        // lost at random never did.
        assert_eq!(gateway_loss_pct(&e), Some(6.0));
        let idle = explanation(1.0, 1.0, 1.0, [(0, 3, 0), (0, 0, 0)], 0.0);
        assert_eq!(gateway_loss_pct(&idle), None);

        let (exp, probes) = fixture();
        let page = report_page(&exp, &probes, None);
        let why = why_of(&page);
        let svgs: Vec<&str> = why.split("<svg").skip(1).collect();
        let titled = |title: &str| {
            *svgs
                .iter()
                .find(|s| s.contains(&format!("<title>{title}</title>")))
                .unwrap_or_else(|| panic!("no plot {title}"))
        };
        let loss = titled("youtube: gateway loss against rtt");
        for proto in ["https", "h2"] {
            for rtt in ["20", "80"] {
                assert!(
                    loss.contains(&format!("<title>{proto}: {rtt} → 6.0 [6.0, 6.0]</title>")),
                    "{loss}"
                );
            }
        }
        // RTT inflation: the mean with its interval, per protocol.
        let inflation = titled("youtube: RTT inflation against rtt");
        assert!(
            inflation.contains("<title>https: 20 → 105.0 ["),
            "{inflation}"
        );
        assert!(inflation.contains("<title>h2: 80 → 25.0 ["), "{inflation}");
        assert!(why.contains("inflating RTT by up to 570 %"));
        assert!(why.contains("up to 3 % PLR"));
    }

    #[test]
    fn flights_are_drawn_for_the_median_probe_of_each_protocol() {
        let (exp, mut probes) = fixture();
        // Three connections in https's probes: the smallest is drawn last.
        for p in &mut probes {
            let e = p.explain.as_mut().unwrap();
            e.connections.push(connection(50002, &[1_000]));
        }
        let page = report_page(&exp, &probes, None);
        let why = why_of(&page);
        // The median of two is the faster: rep 0 for https (setup 300), and
        // rep 0 for h2 (a tie, in file order).
        let https = "<title>youtube rtt=20ms https rep 0: flight per round trip</title>";
        assert!(why.contains(https), "{why}");
        let trial = &probes[0].trial;
        assert!(trial.contains("rtt=20ms") && trial.ends_with("protocol=https rep=0"));
        assert!(why.contains(&format!("Probe {trial} (https, repetition 0, PLT 1000 ms;")));
        assert!(why.contains("<title>youtube rtt=20ms h2 rep 0: flight per round trip</title>"));
        let svg = why
            .split(https)
            .nth(1)
            .unwrap()
            .split("</svg>")
            .next()
            .unwrap();
        // Largest first; one line per connection; KB per round trip.
        let first = svg.find("#1 :50001 332 KB").unwrap();
        assert!(first < svg.find("#0 :50000 82 KB").unwrap());
        assert!(first < svg.find("#2 :50002 1 KB").unwrap());
        assert!(
            svg.contains("#1 :50001 332 KB: 4 → 150.0 (no interval)"),
            "{svg}"
        );
        assert!(why.contains("3 of its 3 connections with data, largest first"));

        // The report's waterfall option moves the flights to its point.
        let named = probes
            .iter()
            .find(|p| p.point["rtt"] == "80ms" && p.rep == 1)
            .unwrap();
        let page = report_page(&exp, &probes, Some(&named.trial));
        let why = why_of(&page);
        assert!(why.contains("<title>youtube rtt=80ms https rep 0: flight per round trip</title>"));
        assert!(!why.contains("rtt=20ms https rep 0: flight"));
    }

    #[test]
    fn probes_without_an_explanation_are_said_so() {
        let (exp, mut probes) = fixture();
        for p in &mut probes {
            p.explain = None;
        }
        let page = report_page(&exp, &probes, None);
        let why = why_of(&page);
        assert!(
            why.contains("No probe of this site carries an explanation"),
            "{why}"
        );
        assert!(!why.contains("<svg"), "nothing drawn: {why}");
        // The rest of the report is still there.
        assert!(page.contains(r#"id="table""#) && page.contains(r#"id="phases-youtube""#));
    }

    #[test]
    fn nothing_swept_is_one_group_of_bars() {
        let (_, probes) = fixture();
        let exp = experiment::parse(
            "one.toml",
            "name = \"w\"\nsites = [\"youtube\"]\nprotocols = [\"https\", \"h2\"]\nreps = 2\n[link]\nrtt = \"20ms\"\nrate = \"1mbit\"\n",
        )
        .unwrap();
        let probes: Vec<ProbeRecord> = probes
            .into_iter()
            .filter(|p| p.point["rtt"] == "20ms")
            .collect();
        let page = report_page(&exp, &probes, None);
        let why = why_of(&page);
        let rows = table(why);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0][..2], ["all".to_string(), "https".to_string()]);
        assert_eq!(rows[0][12..], ["1050".to_string(), "1050".to_string()]);
        assert!(why.contains("<title>youtube: what the PLT is made of</title>"));
        assert!(why.contains("<title>youtube: gateway loss</title>"));
        assert!(!page.contains("NaN"));
    }
}
