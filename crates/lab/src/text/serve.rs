//! The text of `spdylab serve`: once bound, the CA certificate's file, the
//! URL and address of every host, a curl command to try, and "ready".

use crate::serve::HostAddrs;
use std::path::Path;

/// The lines printed when the server is bound (the addresses actually
/// bound: a port of 0 picks a free one), ending with "ready".
pub fn ready(site: &str, ca_path: &Path, hosts: &[HostAddrs]) -> String {
    let ca_path = ca_path.display();
    let mut lines = vec![format!("serving site '{site}' — CA certificate: {ca_path}")];
    for h in hosts {
        if let Some(a) = h.http {
            lines.push(format!("  http://{}:{}/  on {a}", h.host, a.port()));
        }
        if let Some(a) = h.https {
            lines.push(format!("  https://{}:{}/  on {a}", h.host, a.port()));
        }
    }
    if let Some((host, a)) = hosts.first().and_then(|h| Some((&h.host, h.https?))) {
        lines.push(format!(
            "try: curl --cacert {ca_path} --resolve {host}:{}:{} https://{host}:{}/",
            a.port(),
            a.ip(),
            a.port()
        ));
    }
    lines.push("ready; Ctrl-C stops the server".to_string());
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_its_urls_then_a_curl_to_try() {
        let hosts = [
            HostAddrs {
                host: "icons.spdylab.test".into(),
                http: Some("127.0.0.1:8080".parse().unwrap()),
                https: Some("127.0.0.1:8443".parse().unwrap()),
            },
            HostAddrs {
                host: "cdn.spdylab.test".into(),
                http: None,
                https: Some("127.0.0.2:8443".parse().unwrap()),
            },
        ];
        assert_eq!(
            ready("icons", Path::new("/tmp/ca.pem"), &hosts)
                .lines()
                .collect::<Vec<_>>(),
            [
                "serving site 'icons' — CA certificate: /tmp/ca.pem",
                "  http://icons.spdylab.test:8080/  on 127.0.0.1:8080",
                "  https://icons.spdylab.test:8443/  on 127.0.0.1:8443",
                "  https://cdn.spdylab.test:8443/  on 127.0.0.2:8443",
                "try: curl --cacert /tmp/ca.pem --resolve icons.spdylab.test:8443:127.0.0.1 https://icons.spdylab.test:8443/",
                "ready; Ctrl-C stops the server",
            ]
        );
        let cleartext = [HostAddrs {
            https: None,
            ..hosts[0].clone()
        }];
        let lines = ready("icons", Path::new("/tmp/ca.pem"), &cleartext);
        assert_eq!(lines.lines().count(), 3, "{lines:?}");
    }
}
