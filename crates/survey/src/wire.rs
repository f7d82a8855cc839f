//! The bytes `survey` reads and writes by hand, sans I/O: the first HTTP/2
//! frames a server sends after the preface (its SETTINGS and connection
//! WINDOW_UPDATE), an HTTP/3 control stream's SETTINGS, an HTTP/1.1 response
//! head, `Alt-Svc`'s h3 entries and a certificate's subject alternative names.
//! Hand-read because the crates we use do not expose the peer's settings (the
//! `h2` crate keeps them inside; quinn the transport parameters) — only the
//! fields named here are read, every other byte is skipped by its length.

use std::net::IpAddr;

/// The client connection preface of HTTP/2 (RFC 9113 §3.4).
pub const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

const H2_SETTINGS: u8 = 0x4;
const H2_PING: u8 = 0x6;
const H2_GOAWAY: u8 = 0x7;
const H2_WINDOW_UPDATE: u8 = 0x8;
const H2_ACK: u8 = 0x1;

/// What the client sends to open an HTTP/2 connection for the survey: the
/// preface (unless after an Upgrade, where it is still sent: RFC 9113 §3.2),
/// an empty SETTINGS and a PING whose ACK marks the end of what the server
/// sent first.
pub fn h2_opening() -> Vec<u8> {
    let mut out = H2_PREFACE.to_vec();
    out.extend_from_slice(&h2_frame(H2_SETTINGS, 0, 0, &[]));
    out.extend_from_slice(&h2_frame(H2_PING, 0, 0, b"spdylab!"));
    out
}

/// A SETTINGS ACK and a GOAWAY(NO_ERROR): a polite end.
pub fn h2_closing() -> Vec<u8> {
    let mut out = h2_frame(H2_SETTINGS, H2_ACK, 0, &[]);
    out.extend_from_slice(&h2_frame(H2_GOAWAY, 0, 0, &[0; 8]));
    out
}

fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let n = payload.len() as u32;
    let mut f = vec![(n >> 16) as u8, (n >> 8) as u8, n as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// An HTTP/2 or SPDY/3.1 server's first word: its limits as it sent them.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Settings {
    /// SETTINGS_MAX_CONCURRENT_STREAMS (None: not sent, i.e. unlimited).
    pub max_concurrent_streams: Option<u64>,
    /// SETTINGS_INITIAL_WINDOW_SIZE, each stream's (None: not sent, the
    /// protocol's default applies: 65 535 B for h2, 65 536 B for SPDY/3.1).
    pub initial_window: Option<u64>,
    /// The connection's window after the server's first WINDOW_UPDATE on
    /// stream 0 (None: none came before our PING's answer; the default applies).
    pub connection_window: Option<u64>,
    /// Every setting as sent, `(id, value)`, in order.
    pub all: Vec<(u64, u64)>,
    /// h3: the server's QUIC transport parameters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicParams>,
}

/// A QUIC server's integer transport parameters (RFC 9000 §18.2), with the
/// RFC's default where it sent none.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct QuicParams {
    /// Milliseconds (0: no idle timeout).
    pub max_idle_timeout: u64,
    pub max_udp_payload_size: u64,
    /// The connection's flow-control window: how much a client may send in all.
    pub initial_max_data: u64,
    /// Per stream, on streams the server opens.
    pub initial_max_stream_data_bidi_local: u64,
    /// Per stream, on streams the client opens (h3's requests): h2's
    /// SETTINGS_INITIAL_WINDOW_SIZE counterpart.
    pub initial_max_stream_data_bidi_remote: u64,
    pub initial_max_stream_data_uni: u64,
    /// Request streams a client may open at once: h2's MAX_CONCURRENT_STREAMS counterpart.
    pub initial_max_streams_bidi: u64,
    pub initial_max_streams_uni: u64,
    pub ack_delay_exponent: u64,
    /// Milliseconds.
    pub max_ack_delay: u64,
    pub active_connection_id_limit: u64,
}

impl Default for QuicParams {
    /// RFC 9000 §18.2's defaults (those of parameters not sent).
    fn default() -> Self {
        QuicParams {
            max_idle_timeout: 0,
            max_udp_payload_size: 65_527,
            initial_max_data: 0,
            initial_max_stream_data_bidi_local: 0,
            initial_max_stream_data_bidi_remote: 0,
            initial_max_stream_data_uni: 0,
            initial_max_streams_bidi: 0,
            initial_max_streams_uni: 0,
            ack_delay_exponent: 3,
            max_ack_delay: 25,
            active_connection_id_limit: 2,
        }
    }
}

/// Decodes transport parameters as encoded in TLS's quic_transport_parameters
/// extension (RFC 9000 §18: id, length, value, each id a varint; the integer
/// ones' values are varints). Parameters that are not integers (connection
/// IDs, tokens, a preferred address) and unknown ones are skipped; a
/// truncated or inconsistent encoding is an error.
pub fn quic_transport_parameters(mut buf: &[u8]) -> Result<QuicParams, String> {
    let mut p = QuicParams::default();
    while !buf.is_empty() {
        let (id, a) = proto::varint::decode(buf).ok_or("a truncated parameter id")?;
        let (len, b) = proto::varint::decode(&buf[a..]).ok_or("a truncated parameter length")?;
        let value = buf
            .get(a + b..a + b + len as usize)
            .ok_or_else(|| format!("parameter {id:#x}: {len} bytes announced, fewer sent"))?;
        buf = &buf[a + b + len as usize..];
        let slot = match id {
            0x01 => &mut p.max_idle_timeout,
            0x03 => &mut p.max_udp_payload_size,
            0x04 => &mut p.initial_max_data,
            0x05 => &mut p.initial_max_stream_data_bidi_local,
            0x06 => &mut p.initial_max_stream_data_bidi_remote,
            0x07 => &mut p.initial_max_stream_data_uni,
            0x08 => &mut p.initial_max_streams_bidi,
            0x09 => &mut p.initial_max_streams_uni,
            0x0a => &mut p.ack_delay_exponent,
            0x0b => &mut p.max_ack_delay,
            0x0e => &mut p.active_connection_id_limit,
            _ => continue,
        };
        match proto::varint::decode(value) {
            Some((v, n)) if n == value.len() => *slot = v,
            _ => return Err(format!("parameter {id:#x}: not one varint")),
        }
    }
    Ok(p)
}

/// Reads the HTTP/2 frames a server sent, up to the ACK of our PING.
#[derive(Debug, Default)]
pub struct H2Reader {
    buf: Vec<u8>,
    settings: Option<Settings>,
    window_update: Option<u64>,
    done: bool,
    goaway: Option<u32>,
}

/// How an HTTP/2 read ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum H2Seen {
    /// More bytes needed.
    More,
    /// The PING's ACK came: everything the server sent first is in.
    Done,
    /// A GOAWAY with this error code.
    GoAway(u32),
    /// The first bytes are no HTTP/2 frame header (e.g. "HTTP/1.1 400").
    NotH2,
}

impl H2Reader {
    /// Feeds bytes; says whether the read is over.
    pub fn feed(&mut self, bytes: &[u8]) -> H2Seen {
        self.buf.extend_from_slice(bytes);
        loop {
            if self.done {
                return H2Seen::Done;
            }
            if let Some(code) = self.goaway {
                return H2Seen::GoAway(code);
            }
            if self.buf.len() < 9 {
                return H2Seen::More;
            }
            let len = (usize::from(self.buf[0]) << 16)
                | (usize::from(self.buf[1]) << 8)
                | usize::from(self.buf[2]);
            let (kind, flags) = (self.buf[3], self.buf[4]);
            // A server's first frame must be SETTINGS (RFC 9113 §3.4).
            if self.settings.is_none() && (kind != H2_SETTINGS || flags & H2_ACK != 0) {
                return H2Seen::NotH2;
            }
            if self.buf.len() < 9 + len {
                return H2Seen::More;
            }
            let stream = u32::from_be_bytes([self.buf[5], self.buf[6], self.buf[7], self.buf[8]])
                & 0x7fff_ffff;
            let payload: Vec<u8> = self.buf[9..9 + len].to_vec();
            self.buf.drain(..9 + len);
            match kind {
                H2_SETTINGS if flags & H2_ACK == 0 && self.settings.is_none() => {
                    let mut s = Settings::default();
                    for e in payload.chunks_exact(6) {
                        let id = u64::from(u16::from_be_bytes([e[0], e[1]]));
                        let v = u64::from(u32::from_be_bytes([e[2], e[3], e[4], e[5]]));
                        match id {
                            0x3 => s.max_concurrent_streams = Some(v),
                            0x4 => s.initial_window = Some(v),
                            _ => {}
                        }
                        s.all.push((id, v));
                    }
                    self.settings = Some(s);
                }
                H2_WINDOW_UPDATE if stream == 0 && payload.len() == 4 => {
                    let inc = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]])
                        & 0x7fff_ffff;
                    *self.window_update.get_or_insert(0) += u64::from(inc);
                }
                H2_PING if flags & H2_ACK != 0 => self.done = true,
                H2_GOAWAY if payload.len() >= 8 => {
                    self.goaway = Some(u32::from_be_bytes([
                        payload[4], payload[5], payload[6], payload[7],
                    ]));
                }
                _ => {}
            }
        }
    }

    /// The server's settings (with the connection window) once SETTINGS came.
    pub fn settings(&self) -> Option<Settings> {
        let mut s = self.settings.clone()?;
        s.connection_window = self.window_update.map(|inc| 65_535 + inc);
        Some(s)
    }
}

/// The status line and the headers of an HTTP/1.x response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// "HTTP/1.1 200 OK".
    pub status_line: String,
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

impl Head {
    /// The first header named `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The response head in `buf`: Ok(None) while it is incomplete; Err when the
/// bytes are not HTTP/1.x (a short, printable description of what came).
pub fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, String> {
    if buf.len() >= 5 && !buf.starts_with(b"HTTP/") {
        return Err(describe_bytes(buf));
    }
    if buf.len() < 5 && !b"HTTP/".starts_with(buf) {
        return Err(describe_bytes(buf));
    }
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&buf[..end]);
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or_default().trim().to_string();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("a malformed status line {status_line:?}"))?;
    let headers = lines
        .filter_map(|l| {
            let (n, v) = l.split_once(':')?;
            Some((n.trim().to_string(), v.trim().to_string()))
        })
        .collect();
    Ok(Some((
        Head {
            status_line,
            status,
            headers,
        },
        end + 4,
    )))
}

/// What the first bytes of something that is not what we asked for look like.
pub fn describe_bytes(buf: &[u8]) -> String {
    let n = buf.len().min(24);
    if buf[..n]
        .iter()
        .all(|b| b.is_ascii_graphic() || *b == b' ' || *b == b'\r' || *b == b'\n')
    {
        let line = String::from_utf8_lossy(&buf[..n]);
        format!("{:?}", line.lines().next().unwrap_or_default())
    } else if buf.first() == Some(&0x15) || buf.first() == Some(&0x16) {
        "TLS records (a TLS port?)".into()
    } else if buf.len() >= 9 && buf[3] == H2_SETTINGS {
        "HTTP/2 frames".into()
    } else {
        let hex: Vec<String> = buf[..n.min(8)].iter().map(|b| format!("{b:02x}")).collect();
        format!("bytes {}", hex.join(" "))
    }
}

/// The ports of the `h3` entries of an `Alt-Svc` value that point at the same
/// host (`h3=":443"`); entries naming another host are left out (the survey
/// probes only the address it was given).
pub fn alt_svc_h3_ports(value: &str) -> Vec<u16> {
    value
        .split(',')
        .filter_map(|entry| {
            let first = entry.split(';').next()?.trim();
            let (proto, authority) = first.split_once('=')?;
            if proto.trim() != "h3" {
                return None;
            }
            let authority = authority.trim().trim_matches('"');
            let (host, port) = authority.rsplit_once(':')?;
            if !host.is_empty() {
                return None;
            }
            port.parse().ok()
        })
        .collect()
}

/// How an HTTP/3 control stream read ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum H3Control {
    /// More bytes needed.
    More,
    /// Not a control stream (another unidirectional stream type: QPACK's, a push).
    Other(u64),
    /// The first frame, SETTINGS: `(id, value)` pairs.
    Settings(Vec<(u64, u64)>),
    /// The first frame is not SETTINGS (a protocol error on the server's part).
    NotSettings(u64),
}

/// Reads the start of a server's unidirectional stream: type 0x00 (control),
/// then its first frame, which must be SETTINGS (0x04) (RFC 9114 §6.2.1, §7.2.4).
pub fn h3_control(buf: &[u8]) -> H3Control {
    let Some((kind, n)) = proto::varint::decode(buf) else {
        return H3Control::More;
    };
    if kind != 0 {
        return H3Control::Other(kind);
    }
    let rest = &buf[n..];
    let Some((frame, a)) = proto::varint::decode(rest) else {
        return H3Control::More;
    };
    if frame != 0x4 {
        return H3Control::NotSettings(frame);
    }
    let Some((len, b)) = proto::varint::decode(&rest[a..]) else {
        return H3Control::More;
    };
    let body = &rest[a + b..];
    if (body.len() as u64) < len {
        return H3Control::More;
    }
    let mut body = &body[..len as usize];
    let mut pairs = Vec::new();
    while let (Some((id, i)), true) = (proto::varint::decode(body), !body.is_empty()) {
        let Some((v, j)) = proto::varint::decode(&body[i..]) else {
            break;
        };
        pairs.push((id, v));
        body = &body[i + j..];
    }
    H3Control::Settings(pairs)
}

/// The names of an HTTP/3 setting we know.
pub fn h3_setting_name(id: u64) -> Option<&'static str> {
    Some(match id {
        0x1 => "QPACK_MAX_TABLE_CAPACITY",
        0x6 => "MAX_FIELD_SECTION_SIZE",
        0x7 => "QPACK_BLOCKED_STREAMS",
        0x8 => "ENABLE_CONNECT_PROTOCOL",
        0x33 => "H3_DATAGRAM",
        _ => return None,
    })
}

/// A name in a certificate's subject alternative names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AltName {
    Dns(String),
    Ip(IpAddr),
}

impl std::fmt::Display for AltName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AltName::Dns(n) => f.write_str(n),
            AltName::Ip(a) => write!(f, "{a}"),
        }
    }
}

/// One DER element at the start of `buf`: (tag, contents, total length).
fn der(buf: &[u8]) -> Option<(u8, &[u8], usize)> {
    let tag = *buf.first()?;
    let first = *buf.get(1)? as usize;
    let (len, head) = if first < 0x80 {
        (first, 2)
    } else {
        let n = first & 0x7f;
        if n == 0 || n > 4 || buf.len() < 2 + n {
            return None;
        }
        let len = buf[2..2 + n]
            .iter()
            .fold(0usize, |a, b| (a << 8) | *b as usize);
        (len, 2 + n)
    };
    let contents = buf.get(head..head.checked_add(len)?)?;
    Some((tag, contents, head + len))
}

/// The DNS names and IP addresses of a certificate's subjectAltName
/// extension (OID 2.5.29.17), in order; empty if it has none or does not parse.
pub fn subject_alt_names(cert_der: &[u8]) -> Vec<AltName> {
    const SAN_OID: &[u8] = &[0x06, 0x03, 0x55, 0x1d, 0x11];
    let mut found = Vec::new();
    // The extension is an OID followed by an optional critical flag and an OCTET STRING.
    let Some(at) = cert_der.windows(SAN_OID.len()).position(|w| w == SAN_OID) else {
        return found;
    };
    let mut rest = &cert_der[at + SAN_OID.len()..];
    if let Some((0x01, _, n)) = der(rest) {
        rest = &rest[n..];
    }
    let Some((0x04, octets, _)) = der(rest) else {
        return found;
    };
    let Some((0x30, mut names, _)) = der(octets) else {
        return found;
    };
    while let Some((tag, value, n)) = der(names) {
        match (tag, value.len()) {
            (0x82, _) => found.push(AltName::Dns(String::from_utf8_lossy(value).into_owned())),
            (0x87, 4) => found.push(AltName::Ip(IpAddr::from(
                <[u8; 4]>::try_from(value).unwrap(),
            ))),
            (0x87, 16) => found.push(AltName::Ip(IpAddr::from(
                <[u8; 16]>::try_from(value).unwrap(),
            ))),
            _ => {}
        }
        names = &names[n..];
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings_frame(entries: &[(u16, u32)]) -> Vec<u8> {
        let payload: Vec<u8> = entries
            .iter()
            .flat_map(|(id, v)| [id.to_be_bytes().to_vec(), v.to_be_bytes().to_vec()].concat())
            .collect();
        h2_frame(H2_SETTINGS, 0, 0, &payload)
    }

    #[test]
    fn h2_settings_and_the_connection_window_are_read_up_to_the_ping_ack() {
        let mut wire = settings_frame(&[(3, 100), (4, 1 << 20), (6, 8192)]);
        wire.extend(h2_frame(
            H2_WINDOW_UPDATE,
            0,
            0,
            &(1u32 << 24).to_be_bytes(),
        ));
        wire.extend(h2_frame(H2_SETTINGS, H2_ACK, 0, &[]));
        wire.extend(h2_frame(H2_PING, H2_ACK, 0, b"spdylab!"));
        let mut r = H2Reader::default();
        // Cut anywhere, the same result.
        for cut in 0..wire.len() {
            let mut r2 = H2Reader::default();
            assert_ne!(r2.feed(&wire[..cut]), H2Seen::Done);
            assert_eq!(r2.feed(&wire[cut..]), H2Seen::Done);
            assert_eq!(r2.settings().unwrap().max_concurrent_streams, Some(100));
        }
        assert_eq!(r.feed(&wire), H2Seen::Done);
        let s = r.settings().unwrap();
        assert_eq!(s.max_concurrent_streams, Some(100));
        assert_eq!(s.initial_window, Some(1 << 20));
        assert_eq!(s.connection_window, Some(65_535 + (1 << 24)));
        assert_eq!(s.all, vec![(3, 100), (4, 1 << 20), (6, 8192)]);
    }

    #[test]
    fn an_http1_answer_or_a_goaway_is_not_taken_for_settings() {
        assert_eq!(
            H2Reader::default().feed(b"HTTP/1.1 400 Bad Request\r\n\r\n"),
            H2Seen::NotH2
        );
        let mut wire = settings_frame(&[]);
        wire.extend(h2_frame(H2_GOAWAY, 0, 0, &[0, 0, 0, 0, 0, 0, 0, 1]));
        let mut r = H2Reader::default();
        assert_eq!(r.feed(&wire), H2Seen::GoAway(1));
        assert_eq!(r.settings().unwrap().max_concurrent_streams, None);
    }

    #[test]
    fn a_response_head_is_parsed_and_non_http_is_described() {
        let (head, n) = parse_head(b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nAlt-Svc: h3=\":443\"; ma=86400\r\n\r\nbody")
            .unwrap()
            .unwrap();
        assert_eq!(n, 71);
        assert_eq!(head.status, 200);
        assert_eq!(head.header("server"), Some("nginx/1.22.1"));
        assert_eq!(parse_head(b"HTTP/1.1 200 OK\r\n"), Ok(None));
        assert_eq!(parse_head(b"HT"), Ok(None));
        assert_eq!(
            parse_head(&[0x15, 3, 3, 0, 2, 2, 70]),
            Err("TLS records (a TLS port?)".into())
        );
    }

    #[test]
    fn alt_svc_h3_ports_are_those_on_the_same_host() {
        assert_eq!(
            alt_svc_h3_ports("h3=\":443\"; ma=2592000, h3-29=\":8443\", h3=\"other.example:444\""),
            vec![443]
        );
        assert!(alt_svc_h3_ports("clear").is_empty());
    }

    #[test]
    fn varints_round_trip_and_an_h3_control_stream_yields_its_settings() {
        for v in [0, 63, 64, 16_383, 16_384, (1 << 30) - 1] {
            let mut b = Vec::new();
            proto::varint::encode(&mut b, v);
            assert_eq!(proto::varint::decode(&b), Some((v, b.len())));
        }
        let mut s = vec![0x00, 0x04];
        let mut body = Vec::new();
        for (id, v) in [(0x6u64, 16_384u64), (0x1, 0), (0x33, 1)] {
            proto::varint::encode(&mut body, id);
            proto::varint::encode(&mut body, v);
        }
        proto::varint::encode(&mut s, body.len() as u64);
        s.extend(&body);
        for cut in 0..s.len() {
            assert_eq!(h3_control(&s[..cut]), H3Control::More, "cut {cut}");
        }
        assert_eq!(
            h3_control(&s),
            H3Control::Settings(vec![(0x6, 16_384), (0x1, 0), (0x33, 1)])
        );
        assert_eq!(h3_control(&[0x02]), H3Control::Other(2));
    }

    #[test]
    fn transport_parameters_decode_with_rfc_defaults_for_those_absent() {
        let mut b = Vec::new();
        for (id, v) in [
            (0x04u64, 15_728_640u64),
            (0x06, 1_250_000),
            (0x08, 100),
            (0x01, 30_000),
        ] {
            proto::varint::encode(&mut b, id);
            let mut val = Vec::new();
            proto::varint::encode(&mut val, v);
            proto::varint::encode(&mut b, val.len() as u64);
            b.extend(val);
        }
        // A non-integer parameter (stateless_reset_token, 16 bytes) is skipped.
        b.extend([0x02, 16]);
        b.extend([7u8; 16]);
        let p = quic_transport_parameters(&b).unwrap();
        assert_eq!(p.initial_max_data, 15_728_640);
        assert_eq!(p.initial_max_stream_data_bidi_remote, 1_250_000);
        assert_eq!(p.initial_max_streams_bidi, 100);
        assert_eq!(p.max_idle_timeout, 30_000);
        assert_eq!(p.max_udp_payload_size, 65_527);
        assert_eq!(p.initial_max_streams_uni, 0);
        assert!(quic_transport_parameters(&b[..b.len() - 1]).is_err());
        assert!(quic_transport_parameters(&[0x04, 0x02, 0x05, 0x05]).is_err());
    }

    #[test]
    fn subject_alt_names_of_a_testbed_certificate() {
        let ca = server::Ca::new().unwrap();
        let (pem, _) = ca
            .issue_pem(&["www.example.test".into(), "198.18.1.1".into()])
            .unwrap();
        use rustls::pki_types::{pem::PemObject, CertificateDer};
        let leaf = CertificateDer::pem_slice_iter(pem.as_bytes())
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(
            subject_alt_names(&leaf),
            vec![
                AltName::Dns("www.example.test".into()),
                AltName::Ip([198, 18, 1, 1].into())
            ]
        );
        assert!(subject_alt_names(b"not a certificate").is_empty());
    }
}
