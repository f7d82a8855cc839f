//! From choices to a testbed and knobs: the one place where an RTT is split
//! into one-way delays, a rate or a trace becomes a link's service, and an
//! experiment's Point becomes the settings of its probes. The CLI's LINK
//! flags and experiment files both come through here.

use crate::experiment::Point;
use link::{Bitrate, DirectionSpec, LinkSpec, LossModel, QueueSpec, Service, Trace};
use netns::{CongestionControl, TestbedSpec};
use std::sync::Arc;
use std::time::Duration;

/// The link as a user chose it, before RTTs are split and rates resolved.
#[derive(Debug, Clone, Default)]
pub struct LinkChoice {
    pub rtt: Option<Duration>,
    pub delay_down: Option<Duration>,
    pub delay_up: Option<Duration>,
    pub rate: Option<Bitrate>,
    pub down: Option<Bitrate>,
    pub up: Option<Bitrate>,
    pub trace_down: Option<Arc<Trace>>,
    pub trace_up: Option<Arc<Trace>>,
    pub loss: LossModel,
    pub queue: QueueSpec,
    pub iw: Option<u32>,
    pub cc: Option<CongestionControl>,
    pub seed: u64,
}

pub fn congestion_control(name: &str) -> Option<CongestionControl> {
    [
        CongestionControl::Cubic,
        CongestionControl::Bbr,
        CongestionControl::Reno,
    ]
    .into_iter()
    .find(|c| c.name() == name)
}

impl LinkChoice {
    /// The testbed, or an error naming the fields through `name` (which turns
    /// `rtt`, `delay_down`, … into `--rtt` or `link.rtt`).
    pub fn testbed_spec(
        &self,
        shards: usize,
        name: &dyn Fn(&str) -> String,
    ) -> Result<TestbedSpec, String> {
        let (down_delay, up_delay) = self.delays(name)?;
        let service = |trace: &Option<Arc<Trace>>, rate: Option<Bitrate>| match trace {
            Some(t) => Service::Trace(t.clone()),
            None => rate.map_or(Service::Unlimited, Service::Rate),
        };
        let direction = |service, delay| DirectionSpec {
            service,
            delay,
            loss: self.loss,
            queue: self.queue,
        };
        Ok(TestbedSpec {
            link: LinkSpec {
                down: direction(
                    service(&self.trace_down, self.down.or(self.rate)),
                    down_delay,
                ),
                up: direction(service(&self.trace_up, self.up.or(self.rate)), up_delay),
            },
            shards,
            iw: self.iw,
            cc: self.cc.unwrap_or(CongestionControl::Cubic),
            seed: self.seed,
            hosts: Vec::new(),
        })
    }

    /// (down, up) one-way delays from rtt, delay_down and delay_up.
    fn delays(&self, name: &dyn Fn(&str) -> String) -> Result<(Duration, Duration), String> {
        match (self.rtt, self.delay_down, self.delay_up) {
            (None, down, up) => Ok((down.unwrap_or_default(), up.unwrap_or_default())),
            (Some(rtt), None, None) => Ok((rtt / 2, rtt - rtt / 2)),
            (Some(rtt), Some(down), None) => rtt
                .checked_sub(down)
                .map(|up| (down, up))
                .ok_or_else(|| format!("{} is longer than {}", name("delay_down"), name("rtt"))),
            (Some(rtt), None, Some(up)) => rtt
                .checked_sub(up)
                .map(|down| (down, up))
                .ok_or_else(|| format!("{} is longer than {}", name("delay_up"), name("rtt"))),
            (Some(rtt), Some(down), Some(up)) if down + up == rtt => Ok((down, up)),
            (Some(_), Some(_), Some(_)) => Err(format!(
                "{} disagrees with {} + {}; give the delays or the RTT",
                name("rtt"),
                name("delay_down"),
                name("delay_up")
            )),
        }
    }
}

/// Everything a probe of one Point needs besides the site and protocols.
#[derive(Debug, Clone)]
pub struct Settings {
    pub site: String,
    pub testbed: TestbedSpec,
    pub max_streams: u32,
    pub tls13_only: Option<bool>,
    pub conns_per_host: usize,
    pub depth: usize,
    pub server_delay: Duration,
}

/// A Point's settings; its values were checked when the experiment was parsed,
/// so an error here names the axis and means the values contradict each other.
pub fn settings(p: &Point, seed: u64) -> Result<Settings, String> {
    let text = |k: &str| p.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let duration = |k: &str| -> Result<Option<Duration>, String> {
        text(k)
            .map(|v| link::units::parse_duration(v).map_err(|e| format!("link.{k}: {e}")))
            .transpose()
    };
    let rate = |k: &str| -> Result<Option<Bitrate>, String> {
        match text(k) {
            None | Some("unlimited") => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|e| format!("link.{k}: {e}")),
        }
    };
    let int = |k: &str, default: i64| -> Result<i64, String> {
        match text(k) {
            None | Some("default") => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("{k}: '{v}' is not an integer")),
        }
    };
    let choice = LinkChoice {
        rtt: duration("rtt")?,
        delay_down: duration("delay_down")?,
        delay_up: duration("delay_up")?,
        rate: rate("rate")?,
        down: rate("down")?,
        up: rate("up")?,
        trace_down: None,
        trace_up: None,
        loss: match text("loss") {
            None => LossModel::None,
            Some(v) => v.parse().map_err(|e| format!("link.loss: {e}"))?,
        },
        queue: match text("queue") {
            None => QueueSpec::default(),
            Some(v) => v.parse().map_err(|e| format!("link.queue: {e}"))?,
        },
        iw: match text("iw") {
            None | Some("default") => None,
            Some(_) => Some(int("iw", 10)? as u32),
        },
        cc: text("cc").and_then(congestion_control),
        seed,
    };
    let shards = int("shards", 1)? as usize;
    let testbed = choice.testbed_spec(shards, &|k| format!("link.{k}"))?;
    Ok(Settings {
        site: text("site").unwrap_or_default().to_string(),
        testbed,
        max_streams: int("max_streams", 100)? as u32,
        tls13_only: match text("tls") {
            Some("1.3") => Some(true),
            Some("1.2") => Some(false),
            _ => None,
        },
        conns_per_host: int("conns_per_host", 6)? as usize,
        depth: int("depth", 8)? as usize,
        server_delay: duration("server_delay")?.unwrap_or_default(),
    })
}
