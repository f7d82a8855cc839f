//! `shell`: any program behind an emulated link. A [`Shell`] is a running
//! testbed (optionally recording the client's packets as pcap) with an
//! optional server command in the server namespace; the caller spawns its
//! command in the client namespace, waits for it as it likes (the CLI passes
//! signals on), and [`Shell::finish`] tears everything down and reports the
//! link's counters. The server command is stopped, not killed: every process
//! of it gets SIGTERM and [`netns::STOP_GRACE`] to exit (flushing what it
//! buffered, as iperf3 -s its report) before the rest is killed.

use crate::trial::TestbedSpec;
use link::LinkStats;
use netns::{Side, Testbed};
use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long a server command gets to start listening.
pub const SERVER_START: Duration = Duration::from_secs(10);

/// One shell, as asked.
#[derive(Debug, Clone)]
pub struct ShellRequest {
    pub testbed: TestbedSpec,
    /// Write the packets as the client sees them to this file (pcap).
    pub pcap: Option<PathBuf>,
    /// Run with `sh -c` in the server namespace before the command; stopped
    /// at the end (see [`Shell::finish`]).
    pub server_cmd: Option<String>,
    /// Where the server command's stdout and stderr go: this file, or our
    /// stderr — never the command's stdout, which stays the command's alone.
    pub server_log: Option<PathBuf>,
}

/// Why a shell did not start or end cleanly.
#[derive(Debug)]
pub enum ShellError {
    /// The pcap file cannot be created (bad input; the error names `--pcap` and the file).
    Pcap(io::Error),
    /// The server log file cannot be created (bad input).
    ServerLog { path: PathBuf, error: io::Error },
    /// Starting or stopping the testbed.
    Testbed(io::Error),
    /// The server command cannot be started.
    ServerCmd(io::Error),
    /// The server command ended before it listened.
    ServerEnded { cmd: String, status: ExitStatus },
    /// The command cannot be started.
    Spawn { program: String, error: io::Error },
    /// The `--stats` file cannot be written (after the command ran).
    Stats(PathBuf, io::Error),
}

impl ShellError {
    /// Whether the input was at fault (else the machine).
    pub fn is_usage(&self) -> bool {
        matches!(self, ShellError::Pcap(_) | ShellError::ServerLog { .. })
    }
}

impl fmt::Display for ShellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShellError::Pcap(e) => write!(f, "{e}"),
            ShellError::ServerLog { path, error } => {
                write!(f, "--server-log {}: {error}", path.display())
            }
            ShellError::Testbed(e) => write!(f, "{e}"),
            ShellError::ServerCmd(e) => write!(f, "--server-cmd: {e}"),
            ShellError::ServerEnded { cmd, status } => {
                write!(
                    f,
                    "--server-cmd '{cmd}' ended ({status}) before it listened"
                )
            }
            ShellError::Spawn { program, error } => write!(f, "cannot run {program}: {error}"),
            ShellError::Stats(path, e) => write!(f, "--stats {}: {e}", path.display()),
        }
    }
}

impl std::error::Error for ShellError {}

/// A running shell's testbed and server.
pub struct Shell {
    testbed: Testbed,
    server: Option<Child>,
    server_silent: bool,
    started: Instant,
}

/// What a shell measured, at its end.
#[derive(Debug, Clone)]
pub struct ShellReport {
    pub testbed: TestbedSpec,
    /// From the testbed's start to the end of the command and the server.
    pub duration: Duration,
    /// CPU time the link emulator spent.
    pub emulator_cpu: Duration,
    pub link: LinkStats,
}

impl ShellReport {
    /// `spdylab shell --stats FILE`: schema 1, the testbed, the duration,
    /// the emulator's CPU time and the link's counters.
    pub fn document(&self) -> serde_json::Value {
        serde_json::json!({
            "schema": 1,
            "testbed": self.testbed,
            "duration_s": self.duration.as_secs_f64(),
            "emulator_cpu_s": self.emulator_cpu.as_secs_f64(),
            "link": self.link,
        })
    }

    /// Writes `document` to `path` (pretty, with a newline); the error names `--stats`.
    pub fn write(&self, path: &Path) -> Result<(), ShellError> {
        std::fs::write(path, format!("{:#}\n", self.document()))
            .map_err(|e| ShellError::Stats(path.to_path_buf(), e))
    }
}

impl Shell {
    /// Starts the testbed and the server command (waiting up to
    /// [`SERVER_START`] for it to listen).
    pub fn start(request: ShellRequest) -> Result<Shell, ShellError> {
        let mut observers: Vec<Box<dyn link::Observer>> = Vec::new();
        if let Some(path) = &request.pcap {
            let pcap = netns::pcap::PcapWriter::create(path).map_err(ShellError::Pcap)?;
            observers.push(Box::new(pcap));
        }
        let testbed =
            Testbed::start_observed(request.testbed, observers).map_err(ShellError::Testbed)?;
        let started = Instant::now();
        let mut shell = Shell {
            testbed,
            server: None,
            server_silent: false,
            started,
        };
        if let Some(cmd) = &request.server_cmd {
            let (out, err) = server_output(request.server_log.as_deref())?;
            shell.start_server(cmd, out, err)?;
        }
        Ok(shell)
    }

    fn start_server(&mut self, cmd: &str, out: Stdio, err: Stdio) -> Result<(), ShellError> {
        let mut command = Command::new("/bin/sh");
        command.args(["-c", cmd]).stdout(out).stderr(err);
        self.testbed.confine(Side::Server, &mut command);
        let mut child = command.spawn().map_err(ShellError::ServerCmd)?;
        let deadline = Instant::now() + SERVER_START;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(ShellError::ServerEnded {
                    cmd: cmd.to_string(),
                    status,
                });
            }
            if self
                .testbed
                .wait_for_listener(Side::Server, Duration::from_millis(50))
            {
                self.server = Some(child);
                return Ok(());
            }
        }
        self.server = Some(child);
        self.server_silent = true;
        Ok(())
    }

    /// The server command opened no socket within [`SERVER_START`] (it runs on).
    pub fn server_silent(&self) -> bool {
        self.server_silent
    }

    /// Starts `argv` in the client namespace.
    pub fn spawn(&self, argv: &[String]) -> Result<Child, ShellError> {
        let program = argv.first().cloned().unwrap_or_default();
        let mut command = Command::new(&program);
        command.args(argv.iter().skip(1));
        self.testbed.confine(Side::Client, &mut command);
        command
            .spawn()
            .map_err(|error| ShellError::Spawn { program, error })
    }

    /// Stops the server command, then the testbed, and reports. Every
    /// process of the server command (the `sh`, what it started) gets SIGTERM
    /// and up to [`netns::STOP_GRACE`] to exit before it is killed; this
    /// returns once none is left, so all they wrote is in their log or our
    /// stderr.
    pub fn finish(mut self) -> Result<ShellReport, ShellError> {
        if let Some(server) = &mut self.server {
            let _ = netns::stop_confined(server);
        }
        let duration = self.started.elapsed();
        let emulator_cpu = self.testbed.emulator_cpu();
        let testbed = self.testbed.spec().clone();
        let link = self.testbed.shutdown().map_err(ShellError::Testbed)?;
        Ok(ShellReport {
            testbed,
            duration,
            emulator_cpu,
            link,
        })
    }
}

/// Where the server's stdout and stderr go: `log`, or our stderr (so that
/// the command's stdout carries the command's output alone).
fn server_output(log: Option<&Path>) -> Result<(Stdio, Stdio), ShellError> {
    let (out, err) = match log {
        Some(path) => {
            let at = |error| ShellError::ServerLog {
                path: path.to_path_buf(),
                error,
            };
            let file = File::create(path).map_err(at)?;
            let copy = file.try_clone().map_err(at)?;
            (OwnedFd::from(file), OwnedFd::from(copy))
        }
        None => {
            let dup = || {
                std::io::stderr()
                    .as_fd()
                    .try_clone_to_owned()
                    .map_err(ShellError::ServerCmd)
            };
            (dup()?, dup()?)
        }
    };
    Ok((Stdio::from(out), Stdio::from(err)))
}

/// Which of these errors are bad input, a refusal or a failure to run (`crate::Error`).
impl From<ShellError> for crate::Error {
    fn from(e: ShellError) -> crate::Error {
        if e.is_usage() {
            crate::Error::Usage(e.to_string())
        } else {
            crate::Error::Setup(Box::new(e))
        }
    }
}
