//! `spdylab shell`: run a program behind an emulated link.

use crate::link_args::LinkArgs;
use crate::{signals, Failure};
use clap::Args;
use lab::shell::{Shell, ShellRequest, SERVER_START};
use std::path::PathBuf;

/// Run CMD in the client namespace behind an emulated link
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab shell --rtt 150ms --rate 1mbit -- ping -c 10 server
  spdylab shell --rtt 40ms --rate 8mbit --server-cmd 'iperf3 -s' -- iperf3 -c server -t 10
  spdylab shell --rtt 100ms --pcap /tmp/link.pcap -- curl http://server/

Inside, the client is 198.18.0.2 ('client') and server host i is 198.18.1.i
('server', 'server1', ...). Without CMD, an interactive shell starts.")]
pub struct ShellArgs {
    #[command(flatten)]
    pub link: LinkArgs,
    /// Server addresses to create (198.18.1.1 ... 198.18.1.N)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=254))]
    pub shards: u16,
    /// Command run (with sh -c) in the server namespace before CMD; stopped after CMD ends (SIGTERM to its every process, SIGKILL after 2 s), its output read to the end.
    /// Its output goes to stderr (or --server-log), never to CMD's stdout
    #[arg(long, value_name = "CMD")]
    pub server_cmd: Option<String>,
    /// Write --server-cmd's output (stdout and stderr) to FILE instead of stderr
    #[arg(long, value_name = "FILE", requires = "server_cmd")]
    pub server_log: Option<PathBuf>,
    /// Write the packets as the client sees them to FILE (pcap, read with tcpdump -r)
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// Write the link's counters (packets, bytes, drops, queue) as JSON to FILE at the end
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// The command and its arguments (default: $SHELL)
    #[arg(last = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

pub fn run(args: ShellArgs) -> Result<i32, Failure> {
    let link = args.link.flags();
    link.refuse_cross_traffic("shell")?;
    let spec = link.testbed_spec(args.shards as usize)?;
    signals::catch();
    let shell = Shell::start(ShellRequest {
        testbed: spec,
        pcap: args.pcap.clone(),
        server_cmd: args.server_cmd.clone(),
        server_log: args.server_log.clone(),
    })?;
    if shell.server_silent() {
        eprintln!(
            "spdylab: --server-cmd '{}' opened no socket within {}s; going on anyway",
            args.server_cmd.as_deref().unwrap_or_default(),
            SERVER_START.as_secs()
        );
    }
    let argv = if args.cmd.is_empty() {
        vec![std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into())]
    } else {
        args.cmd.clone()
    };
    let mut child = shell.spawn(&argv)?;
    let code = signals::wait_forwarding(&mut child);
    let report = shell.finish()?;
    if let Some(path) = &args.stats {
        report.write(path)?;
    }
    Ok(code)
}
