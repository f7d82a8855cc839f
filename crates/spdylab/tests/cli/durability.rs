//! Nothing lost, nothing twice: a campaign killed with SIGKILL at 20 seeded
//! moments (with torn last lines planted between runs) ends, after its final
//! rerun, with exactly one whole record per Trial; a line corrupted in the
//! middle is refused with file:line and the file left as it was; a full disk
//! (a small tmpfs) stops the sweep with an error naming the file, and the same
//! command resumes once there is room. The experiment file is named neither
//! `experiment.toml` nor sets `name`, and runs from another working directory.
//! And `compare` on SIGINT prints, and keeps with `--out`, what it finished.

use crate::common;

use crate::common::{command, TempDir};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const PROTOCOLS: [&str; 2] = ["http", "h2"];
const QUEUES: [&str; 3] = ["64p", "128p", "256p"];
const REPS: usize = 6;
const TRIALS: usize = PROTOCOLS.len() * QUEUES.len() * REPS;

fn experiment(reps: usize) -> String {
    format!(
        "# no name: the campaign is named after this file\n\
         sites = \"icons\"\n\
         protocols = [\"http\", \"h2\"]\n\
         reps = {reps}\n\
         warmup = 0\n\
         [link]\n\
         rtt = \"20ms\"\n\
         rate = \"8mbit\"\n\
         queue = [\"64p\", \"128p\", \"256p\"]\n"
    )
}

/// A deterministic generator (xorshift64*), so that the kill moments repeat.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D) % n.max(1)
    }
}

/// What probes.jsonl holds: its whole lines parsed, whether it ends in a cut
/// line, and the lines that are not records (number, text).
struct Records {
    records: Vec<Value>,
    torn_tail: bool,
    bad: Vec<(usize, String)>,
}

fn read_records(dir: &Path) -> Records {
    let bytes = std::fs::read(dir.join("probes.jsonl")).unwrap_or_default();
    let torn_tail = !bytes.is_empty() && !bytes.ends_with(b"\n");
    let mut records = Vec::new();
    let mut bad = Vec::new();
    let whole = bytes.len() - bytes.iter().rev().take_while(|&&b| b != b'\n').count();
    for (i, line) in bytes[..whole].split_inclusive(|&b| b == b'\n').enumerate() {
        match serde_json::from_slice::<Value>(&line[..line.len() - 1]) {
            Ok(v) if v["trial"].is_string() => records.push(v),
            _ => bad.push((i + 1, String::from_utf8_lossy(line).into_owned())),
        }
    }
    Records {
        records,
        torn_tail,
        bad,
    }
}

/// (records per Trial key, Trials of the campaign missing).
fn tally(records: &[Value], reps: usize) -> (HashMap<String, usize>, Vec<String>) {
    let mut per: HashMap<String, usize> = HashMap::new();
    let mut have = BTreeSet::new();
    for r in records {
        let key = r["trial"].as_str().unwrap().to_string();
        let (q, p, rep) = (
            r["point"]["queue"].as_str().unwrap_or("?").to_string(),
            r["protocol"].as_str().unwrap_or("?").to_string(),
            r["rep"].as_u64().unwrap_or(u64::MAX),
        );
        assert!(
            key.contains(&format!("queue={q} "))
                && key.ends_with(&format!("protocol={p} rep={rep}")),
            "a record whose key and fields disagree: {r}"
        );
        have.insert((q, p, rep));
        *per.entry(key).or_default() += 1;
    }
    let mut missing = Vec::new();
    for q in QUEUES {
        for p in PROTOCOLS {
            for rep in 0..reps as u64 {
                if !have.contains(&(q.to_string(), p.to_string(), rep)) {
                    missing.push(format!("queue={q} {p} rep {rep}"));
                }
            }
        }
    }
    (per, missing)
}

/// Checks the invariants that hold after every run, killed or not: whole
/// lines all records, none twice, each HAR named whole. Returns the records.
fn check(out: &Path, reps: usize, when: &str) -> Vec<Value> {
    let r = read_records(out);
    assert!(
        r.bad.is_empty(),
        "{when}: lines that are not records: {:?}",
        r.bad
    );
    let (per, _) = tally(&r.records, reps);
    let twice: Vec<_> = per.iter().filter(|(_, &n)| n > 1).collect();
    assert!(twice.is_empty(), "{when}: Trials recorded twice: {twice:?}");
    for rec in &r.records {
        if let Some(har) = rec["har"].as_str() {
            let text = std::fs::read_to_string(out.join(har))
                .unwrap_or_else(|e| panic!("{when}: {har}: {e}"));
            serde_json::from_str::<Value>(&text)
                .unwrap_or_else(|e| panic!("{when}: {har} is not whole: {e}"));
        }
    }
    r.records
}

/// `spdylab sweep FILE --out OUT ...` run from `cwd`.
fn sweep(cwd: &Path, file: &str, out: &Path, extra: &[&str]) -> Command {
    let out_s = out.display().to_string();
    let mut args = vec!["sweep", file, "--out", &out_s, "--no-calibration"];
    args.extend_from_slice(extra);
    let mut c = command(&args);
    c.current_dir(cwd);
    c
}

fn run(mut c: Command) -> Output {
    c.output().expect("spdylab runs")
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Writes the experiment as `dir/exps/my campaign.toml`; the sweeps run from
/// `dir/elsewhere` and name it by a relative path.
fn setup(dir: &TempDir, reps: usize) -> (PathBuf, String) {
    std::fs::create_dir_all(dir.join("exps")).unwrap();
    std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
    std::fs::write(dir.join("exps/my campaign.toml"), experiment(reps)).unwrap();
    (
        dir.join("elsewhere"),
        "../exps/my campaign.toml".to_string(),
    )
}

#[test]
fn twenty_kills_then_one_whole_record_per_trial_and_a_corrupt_line_is_refused() {
    let dir = TempDir::new("kills");
    let (cwd, file) = setup(&dir, REPS);
    let out = dir.join("out");
    let mut rng = Rng(0x5eed_2014);
    let (mut kills, mut planted) = (0, 0);
    let hang_guard = Instant::now() + Duration::from_secs(600);
    for i in 0..20 {
        let log = dir.join(format!("run-{i}.log"));
        let mut child = sweep(&cwd, &file, &out, &["--jobs", "2"])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let ended = |child: &mut std::process::Child| {
            child.try_wait().unwrap().map(|status| {
                format!(
                    "run {i} ended before its kill ({status}): {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )
            })
        };
        // Even kills: a moment after the start (opening, testbed set-up, first
        // probes); odd ones: once the campaign reaches a drawn count of
        // records, and a moment more (mid-probe, mid-write).
        let target = if i % 2 == 0 {
            0
        } else {
            (i * TRIALS / 24 + rng.below(3) as usize).min(TRIALS - 6)
        };
        let extra = Duration::from_millis(rng.below(if i % 2 == 0 { 900 } else { 300 }));
        loop {
            if read_records(&out).records.len() >= target {
                break;
            }
            if let Some(why) = ended(&mut child) {
                panic!("{why}");
            }
            assert!(Instant::now() < hang_guard, "the campaign hangs");
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(extra);
        if let Some(why) = ended(&mut child) {
            panic!("{why}");
        }
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
        kills += 1;
        check(&out, REPS, &format!("after kill {}", i + 1));
        // A write cut short, as a kill or a crash can leave one: half of a
        // real line, whose Trial is already recorded.
        if i == 6 || i == 13 {
            let bytes = std::fs::read(out.join("probes.jsonl")).unwrap_or_default();
            let r = read_records(&out);
            if !r.torn_tail {
                if let Some(last) = r.records.last() {
                    let line = last.to_string();
                    let mut f = std::fs::OpenOptions::new()
                        .append(true)
                        .open(out.join("probes.jsonl"))
                        .unwrap();
                    use std::io::Write;
                    f.write_all(&line.as_bytes()[..line.len() / 2]).unwrap();
                    planted += 1;
                    assert!(bytes.ends_with(b"\n"));
                }
            }
        }
    }
    let before = read_records(&out);
    let final_run = run(sweep(&cwd, &file, &out, &["--jobs", "2"]));
    assert!(final_run.status.success(), "{}", text(&final_run));
    let stderr = String::from_utf8_lossy(&final_run.stderr);
    assert!(
        stderr.contains(&format!("{} finished before", before.records.len())),
        "{stderr}"
    );
    let records = check(&out, REPS, "after the final run");
    let r = read_records(&out);
    assert!(!r.torn_tail, "the file ends in a cut line");
    let (per, missing) = tally(&records, REPS);
    let duplicates = records.len() - per.len();
    eprintln!(
        "random kills: {kills} kills (SIGKILL), {planted} torn lines planted, {TRIALS} Trials, \
         {} probes recorded, {duplicates} duplicated, {} lost, {} failed; {} recorded before the final run",
        records.len(),
        missing.len(),
        records.iter().filter(|r| !r["error"].is_null()).count(),
        before.records.len()
    );
    assert_eq!(kills, 20);
    assert_eq!(duplicates, 0);
    assert!(missing.is_empty(), "lost: {missing:?}");
    assert_eq!(records.len(), TRIALS);
    // The copy of the experiment is named after the file it came from, and
    // a rerun by an absolute path, from yet another directory, resumes too.
    let copy = std::fs::read_to_string(out.join("experiment.toml")).unwrap();
    assert!(copy.contains("name = \"my campaign\""), "{copy}");
    let abs = dir.join("exps/my campaign.toml").display().to_string();
    let again = run(sweep(Path::new("/"), &abs, &out, &[]));
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains(&format!("{TRIALS} finished before")),
        "{}",
        text(&again)
    );

    // A line corrupted in the middle: refused with file:line, nothing
    // changed, nothing skipped; `report` refuses it the same way.
    let path = out.join("probes.jsonl");
    let good = std::fs::read(&path).unwrap();
    let lines: Vec<&[u8]> = good.split_inclusive(|&b| b == b'\n').collect();
    let middle = lines.len() / 2;
    for corruption in [
        &b"{\"trial\": \"site=icons\x00\x00\x00\n"[..],
        b"\xff\xfe garbage\n",
        b"\n",
    ] {
        let mut bad = Vec::new();
        for (n, l) in lines.iter().enumerate() {
            bad.extend_from_slice(if n == middle { corruption } else { l });
        }
        std::fs::write(&path, &bad).unwrap();
        let refused = run(sweep(&cwd, &file, &out, &[]));
        assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
        let msg = String::from_utf8_lossy(&refused.stderr);
        assert!(
            msg.contains(&format!("probes.jsonl:{}: not a probe record", middle + 1)),
            "{msg}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), bad, "the file was changed");
        let report = run(command(&["report", &out.display().to_string()]));
        assert_ne!(report.status.code(), Some(0), "{}", text(&report));
        assert!(
            String::from_utf8_lossy(&report.stderr)
                .contains(&format!("probes.jsonl:{}:", middle + 1)),
            "{}",
            text(&report)
        );
    }
    std::fs::write(&path, &good).unwrap();
}

/// A tmpfs mounted for the test, unmounted on drop.
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(at: PathBuf, size: &str) -> Mount {
        std::fs::create_dir_all(&at).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&at)
            .output()
            .unwrap();
        assert!(o.status.success(), "mount: {}", text(&o));
        Mount(at)
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fills the file system of `filler` to the last page, then frees `pages` pages.
fn fill_leaving(filler: &Path, pages: u64) {
    use std::io::Write;
    let mut f = std::fs::File::create(filler).unwrap();
    let chunk = vec![0u8; 4096];
    let mut len = 0u64;
    loop {
        match f.write(&chunk) {
            Ok(0) => break,
            Ok(n) => len += n as u64,
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
            Err(e) => panic!("{}: {e}", filler.display()),
        }
    }
    f.set_len(len.saturating_sub(pages * 4096)).unwrap();
}

#[test]
fn a_full_disk_stops_the_sweep_naming_the_file_and_it_resumes_with_room() {
    let dir = TempDir::new("enospc");
    let reps = 4;
    let (cwd, file) = setup(&dir, reps);
    let trials = PROTOCOLS.len() * QUEUES.len() * reps;
    let mount = Mount::tmpfs(dir.join("disk"), "512k");
    let out = mount.0.join("out");
    let filler = mount.0.join("filler");
    // Room for the experiment's copy, sites.json and one page of records.
    fill_leaving(&filler, 3);
    let full = run(sweep(&cwd, &file, &out, &["--no-har", "--jobs", "1"]));
    let msg = String::from_utf8_lossy(&full.stderr).to_string();
    assert_eq!(full.status.code(), Some(1), "{}", text(&full));
    assert!(
        msg.contains("No space left on device") && msg.contains(&out.display().to_string()),
        "{msg}"
    );
    let kept = check(&out, reps, "disk full").len();
    assert!(!read_records(&out).torn_tail, "a cut line was left");
    assert!(kept < trials, "the disk was not full: {kept} records");
    let named = msg
        .lines()
        .find(|l| l.contains("No space left"))
        .unwrap_or("")
        .to_string();

    // Still full, with HARs: refused again, the records as they were.
    let still = run(sweep(&cwd, &file, &out, &["--jobs", "1"]));
    assert_eq!(still.status.code(), Some(1), "{}", text(&still));
    assert!(
        String::from_utf8_lossy(&still.stderr).contains("No space left on device"),
        "{}",
        text(&still)
    );
    assert_eq!(check(&out, reps, "still full").len(), kept);
    assert!(!read_records(&out).torn_tail);

    // Room again (the filler deleted, the file system grown for the HARs):
    // the same command resumes and ends with one record per Trial.
    std::fs::remove_file(&filler).unwrap();
    let o = Command::new("mount")
        .args(["-o", "remount,size=32m"])
        .arg(&mount.0)
        .output()
        .unwrap();
    assert!(o.status.success(), "remount: {}", text(&o));
    let resumed = run(sweep(&cwd, &file, &out, &["--jobs", "1"]));
    assert!(resumed.status.success(), "{}", text(&resumed));
    assert!(
        String::from_utf8_lossy(&resumed.stderr).contains(&format!("{kept} finished before")),
        "{}",
        text(&resumed)
    );
    let records = check(&out, reps, "resumed");
    let (per, missing) = tally(&records, reps);
    eprintln!(
        "ENOSPC: stopped with {kept} of {trials} records kept, saying: {named}; \
         resumed to {} records, {} duplicated, {} lost",
        records.len(),
        records.len() - per.len(),
        missing.len()
    );
    assert_eq!(records.len(), trials);
    assert!(missing.is_empty(), "{missing:?}");
    drop(mount);
}

#[test]
fn compare_on_sigint_prints_and_keeps_what_it_finished() {
    let dir = TempDir::new("compare-int");
    let kept = dir.join("compare.json");
    let kept_s = kept.display().to_string();
    let mut child = command(&[
        "compare",
        "--site",
        "icons",
        "--protocols",
        "http,h2",
        "--rtt",
        "20ms",
        "--rate",
        "8mbit",
        "--reps",
        "500",
        "--warmup",
        "0",
        "--out",
        &kept_s,
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Once a few probes are in (the progress lines say so), SIGINT.
    let pid = child.id();
    let stderr = child.stderr.take().unwrap();
    let mut seen = 0;
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let mut log = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        log.push_str(&line);
        log.push('\n');
        if line.contains("PLT") {
            seen += 1;
            if seen == 4 {
                common::signal(pid, libc::SIGINT);
                break;
            }
        }
    }
    for line in lines {
        log.push_str(&line.unwrap());
        log.push('\n');
    }
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    let status = child.wait().unwrap();
    assert!(seen >= 4, "{log}");
    assert_eq!(status.code(), Some(130), "{log}");
    // The table of what finished, on stdout.
    assert!(
        stdout.contains("protocol") && stdout.contains("h2"),
        "{stdout}\n{log}"
    );
    assert!(log.contains("interrupted"), "{log}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    let probes = doc["probes"].as_array().unwrap();
    assert!(probes.len() >= 4 && probes.len() < 1000, "{doc}");
    assert_eq!(doc["interrupted"], true);
    let n: u64 = doc["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["n"].as_u64().unwrap() + s["failed"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(n as usize, probes.len(), "{doc}");
}
