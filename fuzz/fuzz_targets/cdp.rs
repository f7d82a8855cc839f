//! libFuzzer target: arbitrary bytes as what Chromium writes on its DevTools
//! pipe (NUL-ended JSON messages), read by `cdp::Pipe`; the events read go to
//! a `Recorder`, which then makes its page load for every protocol. Never a
//! panic.
#![no_main]

use browser::cdp::Pipe;
use browser::Recorder;
use libfuzzer_sys::fuzz_target;
use proto::Protocol;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

fuzz_target!(|data: &[u8]| {
    // A pipe holds 64 KiB: longer inputs would block the write.
    if data.len() > 60_000 {
        return;
    }
    let (from, mut to_us) = std::io::pipe().unwrap();
    to_us.write_all(data).unwrap();
    drop(to_us);
    let sink = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .unwrap();
    let mut pipe = Pipe::new(OwnedFd::from(sink), OwnedFd::from(from));
    let mut rec = Recorder::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while let Ok(Some((method, params))) = pipe.next_event(deadline) {
        rec.on_event(&method, &params);
    }
    let _ = rec.loaded();
    for p in [
        Protocol::Http,
        Protocol::Https,
        Protocol::Spdy3,
        Protocol::H2,
    ] {
        let load = rec.finish(p);
        assert!(load.entries.len() <= data.len());
    }
});
