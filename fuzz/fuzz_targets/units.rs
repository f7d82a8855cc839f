//! libFuzzer target: arbitrary text into every unit parser that experiment
//! files, site files and the command line reach (durations, sizes, rates,
//! loss models, queues), and each canonical form back through its parser.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(d) = link::units::parse_duration(s) {
        let text = link::units::format_duration(d);
        assert!(
            link::units::parse_duration(&text).is_ok(),
            "{s:?} → {text:?}"
        );
    }
    let _ = link::units::parse_bytes(s);
    if let Ok(r) = s.parse::<link::Bitrate>() {
        let text = r.to_string();
        assert!(text.parse::<link::Bitrate>().is_ok(), "{s:?} → {text:?}");
    }
    if let Ok(l) = s.parse::<link::LossModel>() {
        let text = l.to_string();
        assert!(text.parse::<link::LossModel>().is_ok(), "{s:?} → {text:?}");
    }
    if let Ok(q) = s.parse::<link::QueueSpec>() {
        let text = q.to_string();
        assert!(text.parse::<link::QueueSpec>().is_ok(), "{s:?} → {text:?}");
    }
    for f in results::experiment::FIELDS {
        let _ = results::experiment::canonical(f.kind, s);
    }
});
