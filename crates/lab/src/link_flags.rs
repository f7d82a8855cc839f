//! The LINK flags of the command line (`--rtt`, `--delay-down`, …, `--seed`)
//! as given, and their mapping into `trial::LinkChoice` and a `TestbedSpec`:
//! delivery traces read from their files, errors naming the flag (`--rtt`,
//! `--trace-down`), never an experiment file's key. The CLI parses the values
//! (`link::units`) and fills a `LinkFlags`; what the flags mean is decided
//! here and in `LinkChoice::testbed_spec`. A field is None when its flag was
//! not given, so that "given" means given; the defaults are the LinkChoice's.

use crate::trial::{LinkChoice, TestbedSpec};
use crate::Error;
use link::Trace;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The LINK flags as given: the values parsed, the trace files not yet read.
pub type LinkFlags = LinkChoice<PathBuf>;

impl LinkFlags {
    /// The link these flags choose (traces read), or an error naming the flag.
    pub fn choice(&self) -> Result<LinkChoice, Error> {
        self.clone()
            .map_traces(|field, path| read_trace(&flag(field), &path))
    }

    /// The testbed these flags describe, or a one-line error naming the flag(s).
    pub fn testbed_spec(&self, shards: usize) -> Result<TestbedSpec, Error> {
        testbed_spec(&self.choice()?, shards)
    }

    /// Refuses `--cross-traffic` for a command that runs none (only page
    /// loads do: compare, crosscheck, sweep, paper).
    pub fn refuse_cross_traffic(&self, command: &str) -> Result<(), Error> {
        match &self.cross {
            Some(c) if !c.is_empty() => Err(Error::Usage(format!(
                "--cross-traffic {c}: `spdylab {command}` runs no cross traffic (compare, crosscheck and sweep do)"
            ))),
            _ => Ok(()),
        }
    }
}

/// `--profile`: a named network in our spelling or WebPageTest's
/// (`link::profile`); an error lists the names.
pub fn profile(name: &str) -> Result<&'static link::Profile, String> {
    link::profile(name).ok_or_else(|| {
        format!(
            "no profile '{name}': one of {} (or WebPageTest's spelling: 3GFast, Cable, LTE, ...)",
            link::PROFILE_NAMES.join(", ")
        )
    })
}

/// A choice's testbed, or a one-line error naming the flag(s).
pub fn testbed_spec(choice: &LinkChoice, shards: usize) -> Result<TestbedSpec, Error> {
    choice
        .testbed_spec(shards, &flag)
        .map_err(|e| Error::Usage(e.to_string()))
}

/// The flag of a LinkChoice field: `delay_down` → `--delay-down`.
pub fn flag(field: &str) -> String {
    format!("--{}", field.replace('_', "-"))
}

/// The delivery trace at `path` (Mahimahi format); an error names `flag`
/// and the file.
pub fn read_trace(flag: &str, path: &Path) -> Result<Arc<Trace>, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Usage(format!("{flag} {}: {e}", path.display())))?;
    let trace = Trace::parse(&path.display().to_string(), &text)
        .map_err(|e| Error::Usage(format!("{flag} {e}")))?;
    Ok(Arc::new(trace))
}

/// The flags' mapping, flag by flag, without a testbed: each flag alone and
/// all thirteen together land where the testbed reads them (the testbed's
/// JSON, as the commands print it). The CLI's own test checks that each
/// flag fills its field; tests/cli/link_flags.rs then checks on real
/// testbeds that every command passes its flags on.
#[cfg(test)]
mod tests {
    use super::*;
    use link::Bitrate;
    use serde_json::{json, Value};
    use std::time::Duration;

    fn ms(n: u64) -> Option<Duration> {
        Some(Duration::from_millis(n))
    }

    fn mbit(n: u64) -> Option<Bitrate> {
        Some(format!("{n}mbit").parse().unwrap())
    }

    /// The testbed of `flags`, as JSON; or the error.
    fn testbed(flags: LinkFlags) -> Result<Value, String> {
        let spec = flags.testbed_spec(1).map_err(|e| e.to_string())?;
        Ok(serde_json::to_value(spec).unwrap())
    }

    fn check(flags: LinkFlags, want: &[(&str, Value)]) {
        let t = testbed(flags.clone()).unwrap_or_else(|e| panic!("{flags:?}: {e}"));
        for (pointer, value) in want {
            let got = t.pointer(pointer);
            match value {
                Value::Bool(true) => assert!(got.is_some(), "{flags:?}: no {pointer} in {t}"),
                v => assert_eq!(got, Some(v), "{flags:?}: {pointer} in {t}"),
            }
        }
    }

    /// A Mahimahi trace: 10 packets every 10 ms (12 Mbit/s). A file of its
    /// own per call: tests run in parallel threads, and one rewriting a
    /// shared file while another read it made the reader see it empty.
    fn trace_file() -> PathBuf {
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("lab-link-flags-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("12mbit-{n}.trace"));
        let text: String = (1..=10).map(|ms| format!("{ms}\n")).collect();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn flags() -> LinkFlags {
        LinkFlags::default()
    }

    #[test]
    fn each_flag_alone_lands_in_the_testbed() {
        let t = Some(trace_file());
        check(
            LinkFlags {
                rtt: ms(40),
                ..flags()
            },
            &[
                ("/link/down/delay", json!("20ms")),
                ("/link/up/delay", json!("20ms")),
            ],
        );
        check(
            LinkFlags {
                delay_down: ms(15),
                ..flags()
            },
            &[("/link/down/delay", json!("15ms"))],
        );
        check(
            LinkFlags {
                delay_up: ms(12),
                ..flags()
            },
            &[("/link/up/delay", json!("12ms"))],
        );
        check(
            LinkFlags {
                rate: mbit(20),
                ..flags()
            },
            &[
                ("/link/down/service/rate", json!(20_000_000)),
                ("/link/up/service/rate", json!(20_000_000)),
            ],
        );
        check(
            LinkFlags {
                down: mbit(30),
                ..flags()
            },
            &[("/link/down/service/rate", json!(30_000_000))],
        );
        check(
            LinkFlags {
                up: mbit(10),
                ..flags()
            },
            &[("/link/up/service/rate", json!(10_000_000))],
        );
        check(
            LinkFlags {
                trace_down: t.clone(),
                ..flags()
            },
            &[("/link/down/service/trace", json!(true))],
        );
        check(
            LinkFlags {
                trace_up: t,
                ..flags()
            },
            &[("/link/up/service/trace", json!(true))],
        );
        check(
            LinkFlags {
                loss: Some("5%".parse().unwrap()),
                ..flags()
            },
            &[
                ("/link/down/loss/p", json!(0.05)),
                ("/link/up/loss/p", json!(0.05)),
            ],
        );
        for queue in ["100p", "codel:5ms,100ms"] {
            check(
                LinkFlags {
                    queue: Some(queue.parse().unwrap()),
                    ..flags()
                },
                &[("/link/down/queue", json!(queue))],
            );
        }
        check(
            LinkFlags {
                iw: Some(20),
                ..flags()
            },
            &[("/iw", json!(20))],
        );
        let reno = crate::trial::congestion_control("reno");
        check(
            LinkFlags {
                cc: reno,
                ..flags()
            },
            &[("/cc", json!("reno"))],
        );
        check(
            LinkFlags {
                seed: Some(7),
                ..flags()
            },
            &[("/seed", json!(7))],
        );
    }

    /// A profile fills the rates and RTT not given; a flag given wins.
    #[test]
    fn a_profile_fills_what_was_not_given() {
        let fast = link::profile("3g-fast");
        check(
            LinkFlags {
                profile: fast,
                ..flags()
            },
            &[
                ("/link/down/service/rate", json!(1_600_000)),
                ("/link/up/service/rate", json!(768_000)),
                ("/link/down/delay", json!("75ms")),
                ("/link/up/delay", json!("75ms")),
            ],
        );
        check(
            LinkFlags {
                profile: fast,
                rtt: ms(40),
                up: mbit(2),
                ..flags()
            },
            &[
                ("/link/down/service/rate", json!(1_600_000)),
                ("/link/up/service/rate", json!(2_000_000)),
                ("/link/down/delay", json!("20ms")),
            ],
        );
        // `--rate` sets both directions: the profile's rates give way to it.
        check(
            LinkFlags {
                profile: link::profile("cable"),
                rate: mbit(3),
                ..flags()
            },
            &[
                ("/link/down/service/rate", json!(3_000_000)),
                ("/link/up/service/rate", json!(3_000_000)),
                ("/link/down/delay", json!("14ms")),
            ],
        );
    }

    #[test]
    fn all_flags_together_and_the_rtt_split() {
        let t = Some(trace_file());
        check(
            LinkFlags {
                rtt: ms(40),
                delay_down: ms(15),
                down: mbit(30),
                trace_up: t.clone(),
                loss: Some("1%".parse().unwrap()),
                queue: Some("100p".parse().unwrap()),
                iw: Some(20),
                cc: crate::trial::congestion_control("reno"),
                seed: Some(7),
                ..flags()
            },
            &[
                ("/link/down/delay", json!("15ms")),
                ("/link/up/delay", json!("25ms")),
                ("/link/down/service/rate", json!(30_000_000)),
                ("/link/up/service/trace", json!(true)),
                ("/link/down/loss/p", json!(0.01)),
                ("/link/down/queue", json!("100p")),
                ("/iw", json!(20)),
                ("/cc", json!("reno")),
                ("/seed", json!(7)),
            ],
        );
        check(
            LinkFlags {
                delay_down: ms(10),
                delay_up: ms(12),
                up: mbit(10),
                trace_down: t,
                ..flags()
            },
            &[
                ("/link/down/delay", json!("10ms")),
                ("/link/up/delay", json!("12ms")),
                ("/link/up/service/rate", json!(10_000_000)),
                ("/link/down/service/trace", json!(true)),
            ],
        );
        // No flag: no delay, no rate, the defaults.
        check(
            flags(),
            &[
                ("/link/down/delay", json!("0ms")),
                ("/cc", json!("cubic")),
                ("/seed", json!(1)),
            ],
        );
    }

    #[test]
    fn contradictions_and_bad_files_name_the_flags() {
        let e = testbed(LinkFlags {
            rtt: ms(10),
            delay_down: ms(20),
            ..flags()
        })
        .unwrap_err();
        assert!(e.contains("--delay-down") && e.contains("--rtt"), "{e}");
        let both = LinkFlags {
            rtt: ms(40),
            delay_down: ms(10),
            delay_up: ms(10),
            ..flags()
        };
        let e = testbed(both).unwrap_err();
        assert!(e.contains("--rtt") && e.contains("--delay-up"), "{e}");
        let missing = Some(PathBuf::from("/nonexistent/x.trace"));
        let e = testbed(LinkFlags {
            trace_down: missing,
            ..flags()
        })
        .unwrap_err();
        assert!(e.starts_with("--trace-down /nonexistent/x.trace: "), "{e}");
        let dir = trace_file().with_file_name("bad.trace");
        std::fs::write(&dir, "not a trace\n").unwrap();
        let e = testbed(LinkFlags {
            trace_up: Some(dir),
            ..flags()
        })
        .unwrap_err();
        assert!(e.starts_with("--trace-up "), "{e}");
        assert_eq!(flag("delay_down"), "--delay-down");
    }

    /// The testbed a link's flags make reads in one line (`TestbedSpec`'s `Display`).
    #[test]
    fn a_link_in_one_line() {
        let spec = LinkFlags::default().testbed_spec(1).unwrap();
        assert_eq!(
            spec.to_string(),
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
        let line = spec.to_string();
        assert!(
            line.starts_with("rtt 150ms (down 75ms, up 75ms), down 8"),
            "{line}"
        );
        assert!(line.ends_with(", iw 4, cc cubic"), "{line}");
    }

    /// Commands that run no cross traffic refuse `--cross-traffic` by name
    /// (exit 2 through `Error::Usage`); an empty spec, or none, is no refusal.
    #[test]
    fn a_command_without_cross_traffic_refuses_the_flag() {
        let given = LinkFlags {
            cross: Some("cubic:2".parse().unwrap()),
            ..flags()
        };
        match given.refuse_cross_traffic("bench") {
            Err(Error::Usage(m)) => assert!(
                m.starts_with("--cross-traffic cubic:2: `spdylab bench` runs no cross traffic"),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
        assert!(flags().refuse_cross_traffic("bench").is_ok());
    }

    /// `--profile` finds our names and WebPageTest's; an unknown name's
    /// error lists every profile.
    #[test]
    fn a_profile_is_found_by_either_spelling_and_an_unknown_one_lists_them() {
        assert_eq!(profile("3GFast").unwrap().name, "3g-fast");
        assert_eq!(profile("cable").unwrap().name, "cable");
        let e = profile("5g").unwrap_err();
        assert!(e.starts_with("no profile '5g': one of fios, cable,"), "{e}");
        assert!(e.contains("paper-004"), "{e}");
    }
}
