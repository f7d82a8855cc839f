//! What one probe hands to [`crate::analyze`]: the link's packet log and spec,
//! navigation start and PLT on the link's clock, and per resource the HAR's
//! connection id, discovery time and phases. Plain data: `lab` fills it from
//! the model's `client::Entry` and from Chromium's HAR alike.

use link::{LinkSpec, LogEntry, Time};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// HAR 1.2 phases of one resource, in ms. Negative (HAR's -1: "does not
/// apply") reads as 0. As in HAR, `ssl` lies inside `connect` (the model and
/// Chromium both write it so; a QUIC handshake is `connect` = `ssl`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    pub blocked_ms: f64,
    pub dns_ms: f64,
    pub connect_ms: f64,
    pub ssl_ms: f64,
    pub send_ms: f64,
    pub wait_ms: f64,
    pub receive_ms: f64,
}

/// One resource as a HAR entry has it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    /// The HAR's connection id (the model's connection index, Chromium's
    /// socket id), as text: resources on one connection share it.
    pub connection: String,
    /// When it was discovered (the HAR entry's start), ms from navigation start.
    pub started_ms: f64,
    pub phases: Phases,
    /// Handshake rounds of the connection this resource opened (TCP 1 + TLS
    /// 1.2 2 = 3, TCP 1 + TLS 1.3 1 = 2, QUIC 1), when the caller knows them;
    /// else inferred from the phases (see [`Resource::handshake_rounds`]).
    #[serde(default)]
    pub handshake_rounds: Option<u32>,
}

/// The browser's own costs, as the model reports them (ms). Passed through to
/// the explanation as given: they are not on the wire, so the partition puts
/// them in `browser` (or `off_wire` before the first packet).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BrowserCost {
    pub navigation_ms: f64,
    pub parse_ms: f64,
    pub script_ms: f64,
    pub request_ms: f64,
}

/// Everything [`crate::analyze`] reads of one probe.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// What the probe loaded with (`h2`, `https`, …): carried into the
    /// explanation for the text.
    pub label: &'a str,
    /// The link's packet log, in the order the link told it (per direction,
    /// each packet's fate comes after its arrival, deliveries in FIFO order).
    pub log: &'a [LogEntry],
    pub spec: &'a LinkSpec,
    /// Navigation start on the link's clock.
    pub navigation_start: Time,
    /// The probe's start on the link's clock (at or before navigation start:
    /// Chromium may open its first connection before its document request
    /// is timed), when the log holds every connection of the page from its
    /// opening (a probe's). The page's connections are then those the log
    /// sees open (a SYN or a QUIC Initial) from here to the window's end: a
    /// flow of an earlier probe whose opening came before the log's first
    /// entry (a server closing an idle connection seconds later) is not the
    /// page's. None: the log may begin with the page's connections already
    /// open, and every flow first seen inside the window is the page's.
    pub window_start: Option<Time>,
    /// The page load time: the explained window is
    /// [navigation_start, navigation_start + plt].
    pub plt: Duration,
    pub resources: &'a [Resource],
    pub browser_cost: Option<BrowserCost>,
}

impl Phases {
    /// The phases with HAR's -1 (and NaN) read as 0.
    pub fn clamped(&self) -> Phases {
        let c = |x: f64| if x.is_finite() && x > 0.0 { x } else { 0.0 };
        Phases {
            blocked_ms: c(self.blocked_ms),
            dns_ms: c(self.dns_ms),
            connect_ms: c(self.connect_ms),
            ssl_ms: c(self.ssl_ms).min(c(self.connect_ms)),
            send_ms: c(self.send_ms),
            wait_ms: c(self.wait_ms),
            receive_ms: c(self.receive_ms),
        }
    }
}

impl Resource {
    /// Its phases as intervals of ms from navigation start, laid end to end
    /// as HAR orders them: (connect, request = send + wait, receive).
    pub(crate) fn spans_ms(&self) -> Spans {
        let p = self.phases.clamped();
        let start = if self.started_ms.is_finite() {
            self.started_ms.max(0.0)
        } else {
            0.0
        };
        let connect_at = start + p.blocked_ms + p.dns_ms;
        let send_at = connect_at + p.connect_ms;
        let head_at = send_at + p.send_ms + p.wait_ms;
        let done_at = head_at + p.receive_ms;
        Spans {
            connect: (connect_at, send_at),
            request: (send_at, head_at),
            receive: (head_at, done_at),
        }
    }

    /// The handshake rounds of the connection this resource opened: the
    /// given figure, else TCP's one round (none when `connect` is all `ssl`:
    /// QUIC) plus TLS's, `ssl / rtt` rounded and held to 1..=2. 0 when it
    /// opened no connection.
    pub fn handshake_rounds(&self, rtt: Duration) -> u32 {
        if let Some(r) = self.handshake_rounds {
            return r;
        }
        let p = self.phases.clamped();
        if p.connect_ms <= 0.0 {
            return 0;
        }
        let quic = p.ssl_ms > 0.0 && p.ssl_ms >= p.connect_ms * 0.999;
        let rtt_ms = rtt.as_secs_f64() * 1e3;
        let tls = if p.ssl_ms <= 0.0 {
            0
        } else if rtt_ms <= 0.0 {
            1
        } else {
            ((p.ssl_ms / rtt_ms).round() as u32).clamp(1, 2)
        };
        if quic {
            tls
        } else {
            1 + tls
        }
    }
}

/// A resource's phases on the navigation clock, ms.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spans {
    pub connect: (f64, f64),
    pub request: (f64, f64),
    pub receive: (f64, f64),
}
