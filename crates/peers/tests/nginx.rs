//! nginx from a generated config serves a Site's docroot byte-exact over
//! HTTP/1.1, HTTPS, HTTP/2 and h2c (checked with curl), its access log shows
//! the protocol of each request, and dropping it leaves no process or directory.

use std::process::Command;

#[test]
fn nginx_serves_a_site_over_each_protocol_and_cleans_up() {
    if peers::find_binary("nginx", "nginx").is_err() {
        panic!("nginx is not installed (Debian package `nginx`; `make deps` installs it)");
    }
    let site = site::builtin("icons", site::DEFAULT_SEED).unwrap();
    let docroot = peers::Scratch::new("test-docroot").unwrap();
    peers::write_docroot(&site, &docroot.0).unwrap();
    // A self-signed certificate is enough here: curl is told to skip verification.
    let dir = peers::Scratch::new("test-cert").unwrap();
    let (cert, key) = (dir.0.join("c.pem"), dir.0.join("k.pem"));
    let ok = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=icons.spdylab.test",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(ok.status.success());
    let p = peers::free_ports(3).unwrap();
    let ports = (p[0], p[1], p[2]);
    let nginx = peers::Nginx::start(&peers::NginxOptions {
        addresses: vec![[127, 0, 0, 1].into()],
        http_port: ports.0,
        https_port: ports.1,
        h2c_port: Some(ports.2),
        tls13_only: None,
        cert_pem: std::fs::read_to_string(&cert).unwrap(),
        key_pem: std::fs::read_to_string(&key).unwrap(),
        workers: 1,
        max_streams: 100,
        access_log: true,
        docroot: docroot.0.clone(),
    })
    .unwrap();
    let host = &site.root().host;
    let want = site.body(1);
    let path = &site.resources[1].path;
    for (scheme, port, flag, version) in [
        ("http", ports.0, "--http1.1", "HTTP/1.1"),
        ("https", ports.1, "--http1.1", "HTTP/1.1"),
        ("https", ports.1, "--http2", "HTTP/2.0"),
        ("http", ports.2, "--http2-prior-knowledge", "HTTP/2.0"),
    ] {
        let out = Command::new("curl")
            .args([
                "-sk",
                flag,
                "--resolve",
                &format!("{host}:{port}:127.0.0.1"),
            ])
            .arg(format!("{scheme}://{host}:{port}{path}"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{scheme} {flag}");
        assert_eq!(out.stdout, want, "{scheme} {flag}: byte-exact");
        let log = nginx.access_log();
        assert!(
            log.lines().last().unwrap_or("").ends_with(version),
            "{scheme} {flag}: {log}"
        );
    }
    let (pid, dir) = (nginx.pid, nginx.dir.clone());
    drop(nginx);
    assert!(!dir.exists(), "its directory is removed");
    // SAFETY: kill(pid, 0) only checks for existence.
    assert_ne!(unsafe { libc::kill(pid as i32, 0) }, 0, "nginx is gone");
}
