//! `spdylab shell`: run a program behind an emulated link.

use crate::link_args::LinkArgs;
use crate::{signals, Failure};
use clap::Args;
use netns::{Side, Testbed};
use serde_json::json;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

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
    /// Command run (with sh -c) in the server namespace before CMD; killed after CMD ends
    #[arg(long, value_name = "CMD")]
    pub server_cmd: Option<String>,
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

/// How long `--server-cmd` gets to start listening.
const SERVER_START: Duration = Duration::from_secs(10);

pub fn run(args: ShellArgs) -> Result<i32, Failure> {
    let spec = args.link.testbed_spec(args.shards as usize)?;
    let mut observers: Vec<Box<dyn link::Observer>> = Vec::new();
    if let Some(path) = &args.pcap {
        observers.push(Box::new(
            netns::pcap::PcapWriter::create(path).map_err(|e| Failure::Usage(e.to_string()))?,
        ));
    }
    signals::catch();
    let testbed = Testbed::start_observed(spec, observers)?;
    let started = Instant::now();

    let mut server = match &args.server_cmd {
        Some(cmd) => Some(start_server(&testbed, cmd)?),
        None => None,
    };
    let argv = if args.cmd.is_empty() {
        vec![std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into())]
    } else {
        args.cmd.clone()
    };
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]);
    testbed.confine(Side::Client, &mut command);
    let mut child = command
        .spawn()
        .map_err(|e| Failure::Setup(format!("cannot run {}: {e}", argv[0]).into()))?;
    let code = signals::wait_forwarding(&mut child);

    if let Some(server) = &mut server {
        let _ = server.kill();
        let _ = server.wait();
    }
    let duration = started.elapsed();
    let cpu = testbed.emulator_cpu();
    let link_spec = testbed.spec().clone();
    let stats = testbed.shutdown()?;
    if let Some(path) = &args.stats {
        let doc = json!({
            "schema": 1,
            "testbed": link_spec,
            "duration_s": duration.as_secs_f64(),
            "emulator_cpu_s": cpu.as_secs_f64(),
            "link": stats,
        });
        std::fs::write(path, format!("{doc:#}\n"))
            .map_err(|e| Failure::Setup(format!("--stats {}: {e}", path.display()).into()))?;
    }
    Ok(code)
}

fn start_server(testbed: &Testbed, cmd: &str) -> Result<Child, Failure> {
    let mut command = Command::new("/bin/sh");
    command.args(["-c", cmd]);
    testbed.confine(Side::Server, &mut command);
    let mut child = command
        .spawn()
        .map_err(|e| Failure::Setup(format!("--server-cmd: {e}").into()))?;
    let deadline = Instant::now() + SERVER_START;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Failure::Setup(
                format!("--server-cmd '{cmd}' ended ({status}) before it listened").into(),
            ));
        }
        if testbed.wait_for_listener(Side::Server, Duration::from_millis(50)) {
            return Ok(child);
        }
    }
    eprintln!(
        "spdylab: --server-cmd '{cmd}' opened no socket within {}s; going on anyway",
        SERVER_START.as_secs()
    );
    Ok(child)
}
