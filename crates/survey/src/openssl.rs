//! `survey`'s checks that rustls cannot make, through `openssl s_client`
//! (Debian's OpenSSL 3 still has both): NPN, which SPDY-era servers
//! (nginx ≤ 1.9, mod_spdy) used before ALPN, and TLS 1.0/1.1, which need
//! `@SECLEVEL=0` to be offered at all. Without an `openssl` binary these
//! checks say "not tested". The program is killed when the check's time is up.

use super::{Found, NotTested, Outcome, Plan, Timer};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Runs `openssl s_client ARGS -connect ADDR [-servername NAME]` with stdin
/// closed (so that it ends after the handshake); NotTested if openssl is missing.
fn s_client(
    plan: &Plan,
    args: &[&str],
    timer: &Timer,
) -> Result<Result<String, String>, NotTested> {
    let openssl = netns::find_binary("openssl", "openssl")
        .map_err(|e| NotTested(format!("not tested: {e}")))?;
    let mut cmd = Command::new(openssl);
    cmd.arg("s_client")
        .args(args)
        .arg("-connect")
        .arg(plan.tls_addr.to_string());
    if plan.name.parse::<std::net::IpAddr>().is_err() {
        cmd.args(["-servername", &plan.name]);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Ok(Err(format!("openssl: {e}"))),
    };
    // Read its output on threads so that a full pipe never blocks it.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if timer.left().is_ok() => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(Err(timer.expired()));
            }
        }
    }
    let text = format!(
        "{}{}",
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default()
    );
    Ok(Ok(text))
}

/// Whether openssl says a connection was made at all (a TCP connect).
fn connected(text: &str) -> bool {
    text.contains("CONNECTED(")
}

/// Why the handshake failed, from openssl's words.
fn failure(text: &str) -> String {
    if let Some(n) = text.lines().find_map(|l| {
        let (_, n) = l.split_once("SSL alert number ")?;
        n.trim().parse::<u8>().ok()
    }) {
        let name = match n {
            40 => "handshake_failure",
            47 => "illegal_parameter",
            70 => "protocol_version",
            71 => "insufficient_security",
            80 => "internal_error",
            112 => "unrecognized_name",
            120 => "no_application_protocol",
            _ => "",
        };
        return format!("handshake failed (the server's alert {n} {name})").replace(" )", ")");
    }
    if text.contains("no protocols available") {
        return "openssl here cannot offer this version".into();
    }
    if text.contains("errno=104") || text.contains("Connection reset") {
        return "connection reset by the server".into();
    }
    if text.contains("Connection refused") || text.contains("connect:errno=111") {
        return "connection refused".into();
    }
    if !connected(text) {
        return "no connection".into();
    }
    if text.contains("wrong version number") || text.contains("packet length too long") {
        return "not TLS: the server answered something else".into();
    }
    "handshake failed".into()
}

/// The version `s_client` negotiated ("TLSv1.2"), if the handshake completed.
fn negotiated(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix("New, ")?;
        let v = rest.split(',').next()?.trim();
        (v.starts_with("TLS") || v.starts_with("SSL")).then(|| v.to_string())
    })
}

/// One TLS version alone (`-tls1` or `-tls1_1`), at security level 0.
pub fn version(plan: &Plan, flag: &str, timer: &Timer) -> Result<Outcome, NotTested> {
    let run = s_client(plan, &[flag, "-cipher", "DEFAULT:@SECLEVEL=0"], timer)?;
    let text = match run {
        Ok(t) => t,
        Err(e) => return Ok(Err(e)),
    };
    timer.answered.set(connected(&text));
    Ok(match negotiated(&text) {
        Some(v) => Ok(Found {
            detail: format!("{v} (openssl s_client)"),
            ..Found::default()
        }),
        None => Err(failure(&text)),
    })
}

/// NPN: the protocols the server advertises, and whether spdy/3.1 is one.
pub fn npn(plan: &Plan, timer: &Timer) -> Result<Outcome, NotTested> {
    let run = s_client(
        plan,
        &["-nextprotoneg", "spdy/3.1,h2,http/1.1", "-no_tls1_3"],
        timer,
    )?;
    let text = match run {
        Ok(t) => t,
        Err(e) => return Ok(Err(e)),
    };
    timer.answered.set(connected(&text));
    if negotiated(&text).is_none() {
        let why = failure(&text);
        return Ok(Err(if why.contains("protocol_version") {
            format!("NPN needs TLS 1.2: {why}")
        } else {
            why
        }));
    }
    let advertised = text.lines().find_map(|l| {
        l.strip_prefix("Protocols advertised by server:")
            .map(|p| p.trim().to_string())
    });
    Ok(match advertised {
        Some(list) if list.split(',').any(|p| p.trim() == "spdy/3.1") => Ok(Found {
            detail: format!("advertised: {list} (openssl s_client, TLS 1.2)"),
            ..Found::default()
        }),
        Some(list) => Err(format!("NPN advertises {list}")),
        None => Err("no NPN in the server's hello (TLS 1.2)".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s_client_output_is_read() {
        let ok = "CONNECTED(00000003)\n---\nNew, TLSv1.2, Cipher is ECDHE-RSA-AES256-GCM-SHA384\nProtocols advertised by server: spdy/3.1, http/1.1\n";
        assert_eq!(negotiated(ok), Some("TLSv1.2".into()));
        let refused = "CONNECTED(00000003)\n40F7:error:0A00042E:SSL routines:ssl3_read_bytes:tlsv1 alert protocol version:../ssl/record/rec_layer_s3.c:1593:SSL alert number 70\n---\nNew, (NONE), Cipher is (NONE)\n";
        assert_eq!(negotiated(refused), None);
        assert_eq!(
            failure(refused),
            "handshake failed (the server's alert 70 protocol_version)"
        );
    }
}
