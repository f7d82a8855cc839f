//! The text of a link: the one line that describes a testbed's link in
//! progress lines, tables and the commands' JSON (`"link"`).

use crate::trial::TestbedSpec;
use link::{DirectionSpec, Service};

/// One line describing a link, for progress lines and tables.
pub fn describe(spec: &TestbedSpec) -> String {
    let side = |d: &DirectionSpec| match &d.service {
        Service::Unlimited => "unlimited".to_string(),
        Service::Rate(r) => r.to_string(),
        Service::Trace(t) => format!("trace {}", t.name()),
    };
    let l = &spec.link;
    format!(
        "rtt {} (down {}, up {}), down {}, up {}, loss {}, queue {}, iw {}, cc {}",
        link::units::format_duration(l.rtt()),
        link::units::format_duration(l.down.delay),
        link::units::format_duration(l.up.delay),
        side(&l.down),
        side(&l.up),
        l.down.loss,
        l.down.queue,
        spec.iw.map_or("default".to_string(), |i| i.to_string()),
        spec.cc
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link_flags::LinkFlags;
    use std::time::Duration;

    #[test]
    fn a_link_in_one_line() {
        let spec = LinkFlags::default().testbed_spec(1).unwrap();
        assert_eq!(
            describe(&spec),
            "rtt 0ms (down 0ms, up 0ms), down unlimited, up unlimited, loss 0%, queue 256p, iw default, cc cubic"
        );
        let spec = LinkFlags {
            rtt: Some(Duration::from_millis(150)),
            down: Some("8mbit".parse().unwrap()),
            up: Some("1mbit".parse().unwrap()),
            iw: Some(4),
            ..LinkFlags::default()
        }
        .testbed_spec(1)
        .unwrap();
        let line = describe(&spec);
        assert!(
            line.starts_with("rtt 150ms (down 75ms, up 75ms), down 8"),
            "{line}"
        );
        assert!(line.ends_with(", iw 4, cc cubic"), "{line}");
    }
}
