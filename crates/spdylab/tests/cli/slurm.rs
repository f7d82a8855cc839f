//! A sweep as a real Slurm job array: a single-node cluster on localhost
//! (Debian's slurm-wlm and munge, daemons started by hand with
//! `proctrack/linuxproc`, `task/none`, no cgroups, all state in a scratch
//! directory) runs docs/slurm-array.sh as an array of 3; the merged slices must
//! hold exactly the Trials and probes of the same sweep run on one machine.

use crate::common::{ok, records, spdylab, TempDir};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const EXPERIMENT: &str = r#"
name = "slurm-array"
sites = ["twitter"]
protocols = ["https", "h2"]
reps = 1
warmup = 0
[link]
rtt = ["10ms", "20ms", "40ms"]
rate = "8mbit"
"#;

/// munged, slurmctld and slurmd of one scratch cluster; on drop (a failed
/// assertion included) its jobs are cancelled and the daemons stopped.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    daemons: Vec<Child>,
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        let munge = dir.join("munge");
        let (state, spool) = (dir.join("state"), dir.join("spool"));
        for d in [&munge, &state, &spool] {
            std::fs::create_dir_all(d).unwrap();
        }
        // munged refuses a key or socket directory others can write to.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&munge, std::fs::Permissions::from_mode(0o711)).unwrap();
        let key = munge.join("munge.key");
        run(Command::new("mungekey")
            .arg("--create")
            .arg(format!("--keyfile={}", key.display())));
        let socket = munge.join("munge.socket");
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let conf = dir.join("slurm.conf");
        let ports = netns::free_ports(2).unwrap();
        let d = |p: &str| dir.join(p).display().to_string();
        std::fs::write(
            &conf,
            format!(
                "ClusterName=spdylab\n\
                 SlurmctldHost=localhost\n\
                 SlurmctldPort={ctld}\n\
                 SlurmdPort={slurmd}\n\
                 SlurmUser=root\n\
                 SlurmdUser=root\n\
                 AuthType=auth/munge\n\
                 CredType=cred/munge\n\
                 AuthInfo=socket={socket}\n\
                 ProctrackType=proctrack/linuxproc\n\
                 TaskPlugin=task/none\n\
                 JobAcctGatherType=jobacct_gather/none\n\
                 AccountingStorageType=accounting_storage/none\n\
                 MpiDefault=none\n\
                 SelectType=select/cons_tres\n\
                 SelectTypeParameters=CR_CPU\n\
                 ReturnToService=2\n\
                 StateSaveLocation={state}\n\
                 SlurmdSpoolDir={spool}\n\
                 SlurmctldPidFile={ctld_pid}\n\
                 SlurmdPidFile={slurmd_pid}\n\
                 SlurmctldLogFile={ctld_log}\n\
                 SlurmdLogFile={slurmd_log}\n\
                 NodeName=n1 NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
                 PartitionName=lab Nodes=n1 Default=YES MaxTime=INFINITE State=UP\n",
                ctld = ports[0],
                slurmd = ports[1],
                socket = socket.display(),
                state = state.display(),
                spool = spool.display(),
                ctld_pid = d("slurmctld.pid"),
                slurmd_pid = d("slurmd.pid"),
                ctld_log = d("slurmctld.log"),
                slurmd_log = d("slurmd.log"),
            ),
        )
        .unwrap();
        let mut cluster = Cluster {
            dir: dir.to_path_buf(),
            conf: conf.clone(),
            daemons: Vec::new(),
        };
        let spawn = |c: &mut Command| {
            c.stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| {
                    panic!("{c:?}: {e} (Debian packages slurm-wlm and munge; `make deps`)")
                })
        };
        cluster.daemons.push(spawn(
            Command::new("munged")
                .args(["--foreground", "--force"])
                .arg(format!("--key-file={}", key.display()))
                .arg(format!("--socket={}", socket.display()))
                .arg(format!("--log-file={}", d("munged.log")))
                .arg(format!("--pid-file={}", d("munged.pid")))
                .arg(format!("--seed-file={}", d("munged.seed"))),
        ));
        cluster.wait_for(|| socket.exists(), "munged's socket");
        cluster.daemons.push(spawn(
            Command::new("slurmctld").arg("-D").arg("-f").arg(&conf),
        ));
        cluster.daemons.push(spawn(
            Command::new("slurmd")
                .arg("-D")
                .arg("-f")
                .arg(&conf)
                .args(["-N", "n1"]),
        ));
        cluster.wait_for(
            || {
                let o = cluster.slurm("sinfo").args(["-h", "-o", "%t"]).output();
                o.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
            },
            "node n1 idle in sinfo",
        );
        cluster
    }

    /// A Slurm client command talking to this cluster.
    fn slurm(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf).stdin(Stdio::null());
        c
    }

    fn wait_for(&self, mut done: impl FnMut() -> bool, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done() {
            assert!(
                Instant::now() < deadline,
                "no {what} after 60 s\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The daemons' logs, for failure messages.
    fn logs(&self) -> String {
        ["munged.log", "slurmctld.log", "slurmd.log"]
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(30).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                format!("--- {f} ---\n{}\n", tail.join("\n"))
            })
            .collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Jobs first (their slurmstepd outlives slurmd), then the daemons.
        let _ = self
            .slurm("scancel")
            .args(["--full", "--user=root"])
            .output();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            match self.slurm("squeue").args(["-h", "-o", "%i"]).output() {
                Ok(o) if o.status.success() && !o.stdout.is_empty() => {
                    std::thread::sleep(Duration::from_millis(200))
                }
                _ => break,
            }
        }
        for child in self.daemons.iter_mut().rev() {
            // SAFETY: kill(2) on a child of ours that has not been reaped.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        }
        for child in self.daemons.iter_mut().rev() {
            let deadline = Instant::now() + Duration::from_secs(10);
            while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn run(c: &mut Command) -> Output {
    let o = c.output().unwrap_or_else(|e| {
        panic!("{c:?}: {e} (Debian packages slurm-wlm and munge; `make deps`)")
    });
    assert!(
        o.status.success(),
        "{c:?}: {:?}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

#[test]
fn a_slurm_job_array_of_three_merges_into_the_one_machine_sweep() {
    let dir = TempDir::new("slurm");
    let exp = dir.join("exp.toml");
    std::fs::write(&exp, EXPERIMENT).unwrap();
    let exp_s = exp.display().to_string();
    let cluster = Cluster::start(&dir.join("cluster"));

    // docs/slurm-array.sh, as a user would submit it; one CPU per task so that
    // two of the three run at once on a two-core machine.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/slurm-array.sh");
    let prefix = dir.arg("fig");
    let submitted = cluster
        .slurm("sbatch")
        .args(["--array=0-2", "--wait", "--cpus-per-task=1"])
        .arg(format!("--chdir={}", dir.0.display()))
        .arg(format!("--output={}", dir.arg("task-%a.log")))
        .env("SPDYLAB", env!("CARGO_BIN_EXE_spdylab"))
        .arg(&script)
        .args([&exp_s, &prefix, "--no-calibration", "--no-har"])
        .output()
        .expect("sbatch (Debian package slurm-wlm; `make deps`)");
    let task_logs: String = (0..3)
        .map(|k| {
            let f = dir.join(format!("task-{k}.log"));
            format!(
                "--- task {k} ---\n{}\n",
                std::fs::read_to_string(f).unwrap_or_default()
            )
        })
        .collect();
    assert!(
        submitted.status.success(),
        "sbatch --wait: {:?}\n{}\n{task_logs}{}",
        submitted.status,
        String::from_utf8_lossy(&submitted.stderr),
        cluster.logs()
    );
    drop(cluster);

    let slices: Vec<String> = (1..=3).map(|i| format!("{prefix}-slice-{i}")).collect();
    for s in &slices {
        let n: usize = records(Path::new(s)).values().map(|r| r.0).sum();
        assert_eq!(n, 2, "{s}: one RTT point, two protocols\n{task_logs}");
    }
    let merged = dir.arg("merged");
    let mut args = vec!["merge"];
    args.extend(slices.iter().map(String::as_str));
    args.extend(["--out", &merged]);
    ok(&spdylab(&args));

    let whole = dir.arg("whole");
    ok(&spdylab(&[
        "sweep",
        &exp_s,
        "--out",
        &whole,
        "--no-calibration",
        "--no-har",
    ]));
    let (m, w) = (records(Path::new(&merged)), records(Path::new(&whole)));
    assert_eq!(w.len(), 3 * 2, "{w:?}");
    assert_eq!(m, w, "the merged array against the one-machine sweep");
}
