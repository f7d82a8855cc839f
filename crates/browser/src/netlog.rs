//! Chromium's net log (`--log-net-log`), read sans I/O: what each load of a
//! repeat view did at the handshake — which TLS handshakes over TCP resumed
//! a session, which QUIC handshakes resumed, which QUIC connections sent
//! 0-RTT and whether the server took it, and which TLS connections over TCP
//! offered TLS 1.3 early data (`--enable-features=EnableTLS13EarlyData`)
//! and whether the server took it (`SSL_HANDSHAKE_EARLY_DATA_REASON`,
//! logged when the handshake ends: BoringSSL's `ssl_early_data_reason_t`). DevTools reports none of this (its
//! `securityDetails` has no resumption, its timing no 0-RTT); the net log's
//! capture mode `Default` does, at a cost of about 1 MB per youtube load.
//!
//! The file is one JSON document written as it goes: a first line
//! `{"constants":{…},`, then `"events": [`, then one event per line (each
//! ending in a comma), and `]}` only when Chromium exits cleanly. Lines are
//! read one at a time, so a log cut short (Chromium killed, a write still
//! buffered) gives what it holds; a line that does not parse is skipped.
//!
//! The loads are told apart by Chromium's own marker:
//! `QUIC_SESSION_POOL_CLOSE_ALL_SESSIONS`, logged when
//! `chrome.benchmarking.closeConnections()` (`Browser::close_connections`)
//! closes every connection, also when there was no QUIC session to close.

use serde_json::Value;
use std::collections::HashMap;

/// The net log's file name in the profile.
pub const FILE: &str = "netlog.json";

/// The handshakes of one load.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Handshakes {
    /// TLS handshakes over TCP that completed (`SSL_CONNECT` with a result).
    pub tls: usize,
    /// Of those, the ones that resumed a session (`is_resumed`).
    pub tls_resumed: usize,
    /// Of those, the TLS 1.2 ones (an abbreviated handshake: one round trip
    /// fewer; TLS 1.3's resumption takes as many as its full handshake).
    pub tls12_resumed: usize,
    /// QUIC handshakes that completed (`QUIC_SESSION_CRYPTO_HANDSHAKE_COMPLETE`).
    pub quic: usize,
    /// Of those, the ones that resumed a session: those that sent 0-RTT
    /// (only a resumed session can), and those where Chromium verified no
    /// certificate (`QUIC_SESSION_CERTIFICATE_VERIFIED` absent: the server
    /// sent none). Before sending 0-RTT Chromium verifies the certificate
    /// it cached, so that event alone does not tell a full handshake.
    pub quic_resumed: usize,
    /// QUIC connections that sent 0-RTT (`QUIC_SESSION_ZERO_RTT_STATE` other
    /// than `NotAttempted`).
    pub zero_rtt_attempted: usize,
    /// Of those, the ones whose 0-RTT the server accepted (`AttemptedAndSucceeded`).
    pub zero_rtt_accepted: usize,
    /// TLS connections over TCP whose ClientHello offered early data
    /// (`SSL_HANDSHAKE_EARLY_DATA_REASON` other than [`NOT_OFFERED`]).
    pub tls_early_data: usize,
    /// Of those, the ones the server accepted (`ssl_early_data_accepted`, 2).
    pub tls_early_data_accepted: usize,
}

/// BoringSSL's `ssl_early_data_reason_t` values (include/openssl/ssl.h)
/// for a ClientHello that offered no early data: unknown (0), disabled
/// (1), no session offered (5), a session that allows none (7), Channel ID
/// (10). Every other reason is an offer: accepted (2), or rejected by the
/// server (a version, ALPN, ALPS or ticket age mismatch, no resumption, a
/// HelloRetryRequest, declined).
pub const NOT_OFFERED: [u64; 5] = [0, 1, 5, 7, 10];

/// `ssl_early_data_accepted`.
pub const ACCEPTED: u64 = 2;

/// The names of the event types this module reads, by their numbers in the
/// log's constants (they differ between Chromium versions).
struct Types {
    ssl_connect: Option<u64>,
    quic_session: Option<u64>,
    handshake_complete: Option<u64>,
    certificate_verified: Option<u64>,
    zero_rtt: Option<u64>,
    close_all: Option<u64>,
    early_data_reason: Option<u64>,
}

impl Types {
    fn of(constants: &Value) -> Types {
        let t = |name: &str| constants["logEventTypes"][name].as_u64();
        Types {
            ssl_connect: t("SSL_CONNECT"),
            quic_session: t("QUIC_SESSION"),
            handshake_complete: t("QUIC_SESSION_CRYPTO_HANDSHAKE_COMPLETE"),
            certificate_verified: t("QUIC_SESSION_CERTIFICATE_VERIFIED"),
            zero_rtt: t("QUIC_SESSION_ZERO_RTT_STATE"),
            close_all: t("QUIC_SESSION_POOL_CLOSE_ALL_SESSIONS"),
            early_data_reason: t("SSL_HANDSHAKE_EARLY_DATA_REASON"),
        }
    }
}

/// What one QUIC session did, as its events say.
#[derive(Default)]
struct Session {
    /// The load it belongs to (the markers logged before it began).
    load: usize,
    complete: bool,
    verified: bool,
    zero_rtt: Option<String>,
}

const PHASE_END: u64 = 2;

/// The handshakes of each load in `log`, in order: one entry for each load
/// the markers separate (`chrome.benchmarking.closeConnections()` before
/// each later load), so a repeat view's log gives two. A log without
/// constants (not a net log) gives none.
pub fn handshakes(log: &str) -> Vec<Handshakes> {
    let mut lines = log.lines();
    let Some(constants) = lines.next().and_then(constants) else {
        return Vec::new();
    };
    let types = Types::of(&constants);
    let mut loads = vec![Handshakes::default()];
    let mut sessions: HashMap<u64, Session> = HashMap::new();
    for line in lines {
        let line = line.trim().trim_end_matches(',');
        if !line.starts_with('{') {
            continue;
        }
        let Ok(e) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let kind = e["type"].as_u64();
        let source = e["source"]["id"].as_u64().unwrap_or(u64::MAX);
        let current = loads.len() - 1;
        if kind.is_none() {
            continue;
        }
        if kind == types.close_all {
            loads.push(Handshakes::default());
        } else if kind == types.early_data_reason {
            if let Some(reason) = e["params"]["early_data_reason"].as_u64() {
                let offered = !NOT_OFFERED.contains(&reason);
                loads[current].tls_early_data += usize::from(offered);
                loads[current].tls_early_data_accepted += usize::from(reason == ACCEPTED);
            }
        } else if kind == types.ssl_connect && e["phase"].as_u64() == Some(PHASE_END) {
            // A failed handshake ends with net_error and no is_resumed.
            if let Some(resumed) = e["params"]["is_resumed"].as_bool() {
                let tls12 = e["params"]["version"].as_str() == Some("TLS 1.2");
                loads[current].tls += 1;
                loads[current].tls_resumed += usize::from(resumed);
                loads[current].tls12_resumed += usize::from(resumed && tls12);
            }
        } else if kind == types.quic_session
            || kind == types.handshake_complete
            || kind == types.certificate_verified
            || kind == types.zero_rtt
        {
            let s = sessions.entry(source).or_insert_with(|| Session {
                load: current,
                ..Session::default()
            });
            if kind == types.handshake_complete {
                s.complete = true;
            } else if kind == types.certificate_verified {
                s.verified = true;
            } else if kind == types.zero_rtt {
                s.zero_rtt = e["params"]["state"].as_str().map(String::from);
            }
        }
    }
    for s in sessions.values() {
        let h = &mut loads[s.load];
        let zero_rtt = !matches!(s.zero_rtt.as_deref(), None | Some("NotAttempted"));
        if s.complete {
            h.quic += 1;
            h.quic_resumed += usize::from(!s.verified || zero_rtt);
        }
        match s.zero_rtt.as_deref() {
            None | Some("NotAttempted") => {}
            Some(state) => {
                h.zero_rtt_attempted += 1;
                h.zero_rtt_accepted += usize::from(state == "AttemptedAndSucceeded");
            }
        }
    }
    loads
}

/// The constants of the log's first line, `{"constants":{…},`.
fn constants(line: &str) -> Option<Value> {
    let body = line
        .trim()
        .strip_prefix("{\"constants\":")?
        .trim_end_matches(',');
    let v: Value = serde_json::from_str(body).ok()?;
    v.is_object().then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONSTANTS: &str = r#"{"constants":{"logEventTypes":{"SSL_CONNECT":10,"SSL_HANDSHAKE_EARLY_DATA_REASON":11,"QUIC_SESSION":20,"QUIC_SESSION_CRYPTO_HANDSHAKE_COMPLETE":21,"QUIC_SESSION_CERTIFICATE_VERIFIED":22,"QUIC_SESSION_ZERO_RTT_STATE":23,"QUIC_SESSION_POOL_CLOSE_ALL_SESSIONS":30},"logEventPhase":{"PHASE_BEGIN":1,"PHASE_END":2,"PHASE_NONE":0}},"#;

    fn event(kind: u64, phase: u64, source: u64, params: &str) -> String {
        format!(
            r#"{{"params":{params},"phase":{phase},"source":{{"id":{source},"start_time":"1","type":1}},"time":"5","type":{kind}}},"#
        )
    }

    #[test]
    fn a_repeat_view_s_log_gives_each_load_its_handshakes() {
        let log = [
            CONSTANTS.to_string(),
            "\"events\": [".into(),
            // First load: a full TLS handshake over TCP, a failed one, a full QUIC one.
            event(10, 1, 1, "{}"),
            event(10, 2, 1, r#"{"is_resumed":false,"version":"TLS 1.3"}"#),
            event(11, 0, 1, r#"{"early_data_reason":5}"#),
            event(10, 2, 2, r#"{"net_error":-101}"#),
            event(20, 1, 3, r#"{"host":"a.test"}"#),
            event(22, 0, 3, r#"{"subjects":["a.test"]}"#),
            event(21, 0, 3, "{}"),
            event(23, 0, 3, r#"{"state":"NotAttempted"}"#),
            event(30, 0, 9, "{}"),
            // Repeat: TLS resumed; QUIC resumed with 0-RTT taken, and one rejected.
            event(10, 2, 4, r#"{"is_resumed":true,"version":"TLS 1.3"}"#),
            // Its early data taken (Chromium 156 logs the reason after the
            // handshake, a number); another's rejected (ticket age skew).
            event(11, 0, 4, r#"{"early_data_reason":2}"#),
            event(11, 0, 8, r#"{"early_data_reason":12}"#),
            event(10, 2, 7, r#"{"is_resumed":true,"version":"TLS 1.2"}"#),
            event(20, 1, 5, "{}"),
            event(22, 0, 5, "{}"),
            event(21, 0, 5, "{}"),
            event(23, 0, 5, r#"{"state":"AttemptedAndSucceeded"}"#),
            event(20, 1, 6, "{}"),
            event(22, 0, 6, "{}"),
            event(21, 0, 6, "{}"),
            event(23, 0, 6, r#"{"state":"AttemptedAndRejected"}"#),
            // Cut short mid-line, as a log of a killed Chromium ends.
            r#"{"params":{"is_resu"#.into(),
        ]
        .join("\n");
        let loads = handshakes(&log);
        assert_eq!(
            loads,
            vec![
                Handshakes {
                    tls: 1,
                    quic: 1,
                    ..Handshakes::default()
                },
                Handshakes {
                    tls: 2,
                    tls_resumed: 2,
                    tls12_resumed: 1,
                    quic: 2,
                    quic_resumed: 2,
                    zero_rtt_attempted: 2,
                    zero_rtt_accepted: 1,
                    tls_early_data: 2,
                    tls_early_data_accepted: 1,
                },
            ]
        );
    }

    #[test]
    fn what_is_not_a_net_log_gives_nothing() {
        assert!(handshakes("").is_empty());
        assert!(handshakes("not json\n{}").is_empty());
        assert!(handshakes("{\"constants\":[1],\n").is_empty());
        // Constants without the types read: one load, nothing counted.
        assert_eq!(
            handshakes("{\"constants\":{},\n{\"type\":1}"),
            vec![Handshakes::default()]
        );
    }
}
