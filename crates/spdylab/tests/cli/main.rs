//! spdylab's integration tests, one binary: each module was once a binary of
//! its own, and linking 25 of them was much of CI's time. They drive the
//! `spdylab` binary (and real servers, Chromium, Slurm) on real namespaces;
//! `common` is the support they share. Tests run in parallel threads as they
//! did inside each file; those that must not overlap hold a lock of `common`.
//! `tests/peers.rs` stays a binary of its own: it counts the real servers'
//! processes system-wide, which any other test starting nginx would disturb.

#[allow(dead_code)]
mod common;

mod bench;
mod calibrate;
mod chromium;
mod compare;
mod cross_traffic;
mod crosscheck;
mod diff;
mod durability;
mod era;
mod explain;
mod h3;
mod har_import;
mod hostile;
mod hostile_h3;
mod k8s;
mod layout;
mod link_flags;
mod load;
mod makefile;
mod paper;
mod priorities;
mod probe;
mod push;
mod record;
mod repeat_model;
mod repeat_view;
mod replay_peers;
mod report_filmstrip;
mod report_why;
mod rootless;
mod scripts;
mod secrets;
mod serve;
mod shell;
mod slurm;
mod spdy_interop;
mod sweep;
