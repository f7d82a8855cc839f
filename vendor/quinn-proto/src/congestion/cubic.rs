use std::any::Any;
use std::cmp;
use std::sync::Arc;

use super::{BASE_DATAGRAM_SIZE, Controller, ControllerFactory};
use crate::connection::RttEstimator;
use crate::{Duration, Instant};

/// CUBIC Constants.
///
/// These are recommended value in RFC8312.
const BETA_CUBIC: f64 = 0.7;

const C: f64 = 0.4;

/// HyStart++ (RFC 9406) constants, the RFC's recommended values.
const MIN_RTT_THRESH: Duration = Duration::from_millis(4);
const MAX_RTT_THRESH: Duration = Duration::from_millis(16);
const MIN_RTT_DIVISOR: u32 = 8;
const N_RTT_SAMPLE: u32 = 8;
const CSS_GROWTH_DIVISOR: u64 = 4;
const CSS_ROUNDS: u32 = 5;

/// HyStart++ (RFC 9406): leaves the initial slow start when the round trip
/// grows (a queue builds) instead of at the first loss. Rounds are told
/// apart by send times: a round ends when a packet sent after it began is
/// acknowledged. One RTT sample per batch of acknowledgements. quinn paces,
/// so the growth per acknowledgement in Conservative Slow Start is not
/// limited (the RFC's L is infinite for paced senders).
#[derive(Debug, Default, Clone)]
struct HyStart {
    round_start: Option<Instant>,
    round_ended: bool,
    sample: Option<Duration>,
    last_round_min: Option<Duration>,
    current_round_min: Option<Duration>,
    samples: u32,
    /// In Conservative Slow Start: the round's minimum RTT that started it.
    css_baseline: Option<Duration>,
    css_rounds: u32,
}

impl HyStart {
    fn in_css(&self) -> bool {
        self.css_baseline.is_some()
    }

    fn on_ack(&mut self, sent: Instant, latest_rtt: Duration) {
        if self.round_start.map_or(true, |start| sent >= start) {
            self.round_ended = true;
        }
        self.sample = Some(latest_rtt);
    }

    /// After a batch of acknowledgements: true when slow start is over.
    fn on_end_acks(&mut self, now: Instant) -> bool {
        if let Some(rtt) = self.sample.take() {
            self.current_round_min = Some(self.current_round_min.map_or(rtt, |m| m.min(rtt)));
            self.samples += 1;
        }
        if let (true, Some(current)) = (self.samples >= N_RTT_SAMPLE, self.current_round_min) {
            match (self.css_baseline, self.last_round_min) {
                (None, Some(last)) => {
                    let thresh = (last / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                    if current >= last + thresh {
                        self.css_baseline = Some(current);
                        self.css_rounds = 0;
                    }
                }
                // The delay went back down: the increase was spurious.
                (Some(baseline), _) if current < baseline => self.css_baseline = None,
                _ => {}
            }
        }
        if !self.round_ended {
            return false;
        }
        self.round_ended = false;
        self.round_start = Some(now);
        self.last_round_min = self.current_round_min.take();
        self.samples = 0;
        if self.in_css() {
            self.css_rounds += 1;
            return self.css_rounds >= CSS_ROUNDS;
        }
        false
    }
}

/// CUBIC State Variables.
///
/// We need to keep those variables across the connection.
/// k, w_max are described in the RFC.
#[derive(Debug, Default, Clone)]
pub(super) struct State {
    k: f64,

    w_max: f64,

    // Store cwnd increment during congestion avoidance.
    cwnd_inc: u64,
}

/// CUBIC Functions.
///
/// Note that these calculations are based on a count of cwnd as bytes,
/// not packets.
/// Unit of t (duration) and RTT are based on seconds (f64).
impl State {
    // K = cbrt(w_max * (1 - beta_cubic) / C) (Eq. 2)
    fn cubic_k(&self, max_datagram_size: u64) -> f64 {
        let w_max = self.w_max / max_datagram_size as f64;
        (w_max * (1.0 - BETA_CUBIC) / C).cbrt()
    }

    // W_cubic(t) = C * (t - K)^3 - w_max (Eq. 1)
    fn w_cubic(&self, t: Duration, max_datagram_size: u64) -> f64 {
        let w_max = self.w_max / max_datagram_size as f64;

        (C * (t.as_secs_f64() - self.k).powi(3) + w_max) * max_datagram_size as f64
    }

    // W_est(t) = w_max * beta_cubic + 3 * (1 - beta_cubic) / (1 + beta_cubic) *
    // (t / RTT) (Eq. 4)
    fn w_est(&self, t: Duration, rtt: Duration, max_datagram_size: u64) -> f64 {
        let w_max = self.w_max / max_datagram_size as f64;
        (w_max * BETA_CUBIC
            + 3.0 * (1.0 - BETA_CUBIC) / (1.0 + BETA_CUBIC) * t.as_secs_f64() / rtt.as_secs_f64())
            * max_datagram_size as f64
    }
}

/// The RFC8312 congestion controller, as widely used for TCP
#[derive(Debug, Clone)]
pub struct Cubic {
    config: Arc<CubicConfig>,
    /// Maximum number of bytes in flight that may be sent.
    window: u64,
    /// Slow start threshold in bytes. When the congestion window is below ssthresh, the mode is
    /// slow start and the window grows by the number of bytes acknowledged.
    ssthresh: u64,
    /// The time when QUIC first detects a loss, causing it to enter recovery. When a packet sent
    /// after this time is acknowledged, QUIC exits recovery.
    recovery_start_time: Option<Instant>,
    cubic_state: State,
    current_mtu: u64,
    /// HyStart++ in the initial slow start, when the config asks for it.
    hystart: Option<HyStart>,
}

impl Cubic {
    /// Construct a state using the given `config` and current time `now`
    pub fn new(config: Arc<CubicConfig>, now: Instant, current_mtu: u16) -> Self {
        Self {
            window: config.initial_window,
            ssthresh: u64::MAX,
            recovery_start_time: None,
            hystart: config.hystart.then(|| HyStart {
                round_start: Some(now),
                ..HyStart::default()
            }),
            config,
            cubic_state: Default::default(),
            current_mtu: current_mtu as u64,
        }
    }

    fn minimum_window(&self) -> u64 {
        2 * self.current_mtu
    }
}

impl Controller for Cubic {
    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    ) {
        if app_limited
            || self
                .recovery_start_time
                .map(|recovery_start_time| sent <= recovery_start_time)
                .unwrap_or(false)
        {
            return;
        }

        if self.window < self.ssthresh {
            // Slow start; with HyStart++, slower once the round trip grows.
            match &mut self.hystart {
                Some(h) if self.ssthresh == u64::MAX => {
                    let in_css = h.in_css();
                    h.on_ack(sent, rtt.latest());
                    self.window += if in_css {
                        bytes / CSS_GROWTH_DIVISOR
                    } else {
                        bytes
                    };
                }
                _ => self.window += bytes,
            }
        } else {
            // Congestion avoidance.
            let ca_start_time;

            match self.recovery_start_time {
                Some(t) => ca_start_time = t,
                None => {
                    // When we come here without congestion_event() triggered,
                    // initialize congestion_recovery_start_time, w_max and k.
                    ca_start_time = now;
                    self.recovery_start_time = Some(now);

                    self.cubic_state.w_max = self.window as f64;
                    self.cubic_state.k = 0.0;
                }
            }

            let t = now - ca_start_time;

            // w_cubic(t + rtt)
            let w_cubic = self.cubic_state.w_cubic(t + rtt.get(), self.current_mtu);

            // w_est(t)
            let w_est = self.cubic_state.w_est(t, rtt.get(), self.current_mtu);

            let mut cubic_cwnd = self.window;

            if w_cubic < w_est {
                // TCP friendly region.
                cubic_cwnd = cmp::max(cubic_cwnd, w_est as u64);
            } else if cubic_cwnd < w_cubic as u64 {
                // Concave region or convex region use same increment.
                let cubic_inc =
                    (w_cubic - cubic_cwnd as f64) / cubic_cwnd as f64 * self.current_mtu as f64;

                // w_cubic grows cubically with the time since the last congestion
                // event and can exceed `u64::MAX` after a long lossless period.
                cubic_cwnd = cubic_cwnd.saturating_add(cubic_inc as u64);
            }

            // Update the increment and increase cwnd by MSS.
            self.cubic_state.cwnd_inc += cubic_cwnd - self.window;

            // cwnd_inc can be more than 1 MSS in the late stage of max probing.
            // however RFC9002 §7.3.3 (Congestion Avoidance) limits
            // the increase of cwnd to 1 max_datagram_size per cwnd acknowledged.
            if self.cubic_state.cwnd_inc >= self.current_mtu {
                self.window += self.current_mtu;
                self.cubic_state.cwnd_inc = 0;
            }
        }
    }

    fn on_end_acks(
        &mut self,
        now: Instant,
        _in_flight: u64,
        _app_limited: bool,
        _largest_packet_num_acked: Option<u64>,
    ) {
        if self.ssthresh != u64::MAX {
            return;
        }
        if let Some(h) = &mut self.hystart {
            if h.on_end_acks(now) {
                // Conservative Slow Start is over: congestion avoidance
                // from the window reached, with no reduction.
                self.ssthresh = self.window;
            }
        }
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        sent: Instant,
        is_persistent_congestion: bool,
        _lost_bytes: u64,
    ) {
        if self
            .recovery_start_time
            .map(|recovery_start_time| sent <= recovery_start_time)
            .unwrap_or(false)
        {
            return;
        }

        self.recovery_start_time = Some(now);
        let window = self.window as f64;

        // Fast convergence lowers W_max first; the 0.7 loss reduction still
        // applies to the old window, not to that already-reduced W_max.
        // https://www.rfc-editor.org/rfc/rfc9438.html#section-4.7
        // https://www.rfc-editor.org/rfc/rfc9438.html#section-4.6
        if window < self.cubic_state.w_max {
            self.cubic_state.w_max = window * (1.0 + BETA_CUBIC) / 2.0;
        } else {
            self.cubic_state.w_max = window;
        }

        self.ssthresh = cmp::max((window * BETA_CUBIC) as u64, self.minimum_window());
        self.window = self.ssthresh;
        self.cubic_state.k = self.cubic_state.cubic_k(self.current_mtu);

        self.cubic_state.cwnd_inc = (self.cubic_state.cwnd_inc as f64 * BETA_CUBIC) as u64;

        if is_persistent_congestion {
            self.recovery_start_time = None;
            self.cubic_state.w_max = self.window as f64;

            // 4.7 Timeout - reduce ssthresh based on BETA_CUBIC
            self.ssthresh = cmp::max(
                (self.window as f64 * BETA_CUBIC) as u64,
                self.minimum_window(),
            );

            self.cubic_state.cwnd_inc = 0;

            self.window = self.minimum_window();
        }
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.current_mtu = new_mtu as u64;
        self.window = self.window.max(self.minimum_window());
    }

    fn window(&self) -> u64 {
        self.window
    }

    fn metrics(&self) -> super::ControllerMetrics {
        super::ControllerMetrics {
            congestion_window: self.window(),
            ssthresh: Some(self.ssthresh),
            pacing_rate: None,
        }
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(self.clone())
    }

    fn initial_window(&self) -> u64 {
        self.config.initial_window
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// Configuration for the `Cubic` congestion controller
#[derive(Debug, Clone)]
pub struct CubicConfig {
    initial_window: u64,
    hystart: bool,
}

impl CubicConfig {
    /// Default limit on the amount of outstanding data in bytes.
    ///
    /// Recommended value: `min(10 * max_datagram_size, max(2 * max_datagram_size, 14720))`
    pub fn initial_window(&mut self, value: u64) -> &mut Self {
        self.initial_window = value;
        self
    }

    /// Whether the initial slow start ends by HyStart++ (RFC 9406), on a
    /// growing round trip, rather than at the first loss. Default: off.
    pub fn hystart(&mut self, on: bool) -> &mut Self {
        self.hystart = on;
        self
    }
}

impl Default for CubicConfig {
    fn default() -> Self {
        Self {
            initial_window: 14720.clamp(2 * BASE_DATAGRAM_SIZE, 10 * BASE_DATAGRAM_SIZE),
            hystart: false,
        }
    }
}

impl ControllerFactory for CubicConfig {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        Box::new(Cubic::new(self, now, current_mtu))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_convergence_reduces_w_max_without_double_reducing_window() {
        let now = Instant::now();
        let config = Arc::new(CubicConfig::default());
        let mut cubic = Cubic::new(config, now, BASE_DATAGRAM_SIZE as u16);
        let window = 8 * BASE_DATAGRAM_SIZE;

        cubic.window = window;
        cubic.ssthresh = window;
        cubic.cubic_state.w_max = 12.0 * BASE_DATAGRAM_SIZE as f64;

        cubic.on_congestion_event(now, now + Duration::from_millis(1), false, 0);

        assert_eq!(
            cubic.cubic_state.w_max,
            window as f64 * (1.0 + BETA_CUBIC) / 2.0
        );
        assert_eq!(cubic.ssthresh, (window as f64 * BETA_CUBIC) as u64);
        assert_eq!(cubic.window, cubic.ssthresh);
    }

    #[test]
    fn hystart_leaves_slow_start_when_the_round_trip_grows() {
        let start = Instant::now();
        let mut config = CubicConfig::default();
        config.hystart(true);
        let mut cubic = Cubic::new(Arc::new(config), start, BASE_DATAGRAM_SIZE as u16);
        let mut rtt = RttEstimator::new(Duration::from_millis(50));
        let mtu = BASE_DATAGRAM_SIZE;
        // Rounds of 8 batches of one acknowledgement, the last one for a
        // packet sent in the round (which ends it); 50 ms round trips for 3
        // rounds, then 80 ms (a queue building: more than 50/8 ms more).
        let mut now = start;
        let mut round = |cubic: &mut Cubic, rtt_ms: u64, now: &mut Instant| {
            let begun = *now;
            for i in 1..=N_RTT_SAMPLE {
                *now += Duration::from_millis(1);
                rtt.update(Duration::ZERO, Duration::from_millis(rtt_ms));
                let sent = if i == N_RTT_SAMPLE {
                    *now
                } else {
                    begun - Duration::from_micros(1)
                };
                cubic.on_ack(*now, sent, mtu, false, &rtt);
                cubic.on_end_acks(*now, 0, false, None);
            }
        };
        for _ in 0..3 {
            round(&mut cubic, 50, &mut now);
        }
        assert_eq!(cubic.ssthresh, u64::MAX);
        let before = cubic.window;
        round(&mut cubic, 80, &mut now);
        assert!(cubic.hystart.as_ref().unwrap().in_css());
        // In Conservative Slow Start the window grows by a quarter as fast.
        let css_start = cubic.window;
        round(&mut cubic, 80, &mut now);
        assert_eq!(cubic.window - css_start, N_RTT_SAMPLE as u64 * mtu / CSS_GROWTH_DIVISOR);
        assert!(css_start > before);
        // Its first round was the one that entered it.
        for _ in 2..CSS_ROUNDS {
            assert_eq!(cubic.ssthresh, u64::MAX);
            round(&mut cubic, 80, &mut now);
        }
        // Slow start is over at the window reached, not reduced.
        assert_eq!(cubic.ssthresh, cubic.window);
    }

    #[test]
    fn without_hystart_slow_start_ignores_the_round_trip() {
        let now = Instant::now();
        let mut cubic = Cubic::new(Arc::new(CubicConfig::default()), now, BASE_DATAGRAM_SIZE as u16);
        let mut rtt = RttEstimator::new(Duration::from_millis(50));
        for i in 0..100u64 {
            rtt.update(Duration::ZERO, Duration::from_millis(50 + i * 10));
            cubic.on_ack(now, now, BASE_DATAGRAM_SIZE, false, &rtt);
            cubic.on_end_acks(now, 0, false, None);
        }
        assert_eq!(cubic.ssthresh, u64::MAX);
    }

    #[test]
    fn congestion_avoidance_does_not_overflow_after_long_lossless_period() {
        let now = Instant::now();
        let rtt = RttEstimator::new(Duration::from_millis(100));
        let config = Arc::new(CubicConfig::default());
        let mut cubic = Cubic::new(config, now, BASE_DATAGRAM_SIZE as u16);

        // Put CUBIC directly into congestion avoidance.
        cubic.ssthresh = cubic.window;
        cubic.recovery_start_time = Some(now);
        let window = cubic.window;

        // After ten days without a congestion event, w_cubic exceeds u64::MAX.
        // Before this fix, computing the window increment overflowed.
        let later = now + Duration::from_secs(10 * 24 * 60 * 60);
        cubic.on_ack(later, later, BASE_DATAGRAM_SIZE, false, &rtt);

        assert_eq!(cubic.window, window + BASE_DATAGRAM_SIZE);
    }
}
