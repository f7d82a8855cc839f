//! The one reader of /proc for CPU and memory (through the `procfs` crate):
//! a process tree (a real server and every descendant), this process's threads
//! by name (the built-in server, the load generator), and the whole machine.
//! bench and loadtest both measure through it.

use procfs::process::{all_processes, Process};
use procfs::{ticks_per_second, CurrentSI, KernelStats};

/// What a process tree has used so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TreeUsage {
    /// CPU seconds (user + system) of the live processes of the tree.
    pub cpu_s: f64,
    /// CPU seconds their reaped children left (cutime + cstime).
    pub reaped_cpu_s: f64,
    /// Resident and proportional set sizes, summed over the tree, kB.
    pub rss_kb: u64,
    pub pss_kb: u64,
}

fn ticks() -> f64 {
    match ticks_per_second() {
        0 => 100.0,
        t => t as f64,
    }
}

/// RSS and PSS of a process, kB (its smaps_rollup; zeros if unreadable).
fn memory_kb(p: &Process) -> (u64, u64) {
    let Ok(rollup) = p.smaps_rollup() else {
        return (0, 0);
    };
    let field = |k: &str| -> u64 {
        rollup
            .memory_map_rollup
            .0
            .iter()
            .filter_map(|m| m.extension.map.get(k))
            .sum::<u64>()
            / 1024
    };
    (field("Rss"), field("Pss"))
}

/// `root` and all its descendants, each with its process and stat; None if
/// `root` is not there.
fn tree_of(root: u32) -> Option<Vec<(Process, procfs::process::Stat)>> {
    let procs: Vec<(u32, u32, Process, procfs::process::Stat)> = all_processes()
        .ok()?
        .flatten()
        .filter_map(|p| {
            let stat = p.stat().ok()?;
            Some((stat.pid as u32, stat.ppid as u32, p, stat))
        })
        .collect();
    procs.iter().find(|p| p.0 == root)?;
    let mut pids = vec![root];
    let mut i = 0;
    while i < pids.len() {
        let parent = pids[i];
        pids.extend(procs.iter().filter(|q| q.1 == parent).map(|q| q.0));
        i += 1;
    }
    Some(
        procs
            .into_iter()
            .filter(|q| pids.contains(&q.0))
            .map(|(_, _, p, stat)| (p, stat))
            .collect(),
    )
}

/// CPU seconds (user + system) the live processes of `root`'s tree have
/// used; None if `root` is not there. Lighter than [`tree`]: no memory.
pub fn tree_cpu_s(root: u32) -> Option<f64> {
    let tick = ticks();
    Some(
        tree_of(root)?
            .iter()
            .map(|(_, stat)| (stat.utime + stat.stime) as f64 / tick)
            .sum(),
    )
}

/// The usage of `root` and all its descendants; None if `root` is not there.
pub fn tree(root: u32) -> Option<TreeUsage> {
    let mut usage = TreeUsage::default();
    let tick = ticks();
    for (p, stat) in tree_of(root)? {
        usage.cpu_s += (stat.utime + stat.stime) as f64 / tick;
        usage.reaped_cpu_s += (stat.cutime + stat.cstime).max(0) as f64 / tick;
        let (rss, pss) = memory_kb(&p);
        usage.rss_kb += rss;
        usage.pss_kb += pss;
    }
    Some(usage)
}

/// CPU seconds of this process's threads named `name` (their schedstat).
pub fn threads_cpu(name: &str) -> f64 {
    let Ok(me) = Process::myself() else {
        return 0.0;
    };
    let Ok(tasks) = me.tasks() else {
        return 0.0;
    };
    tasks
        .flatten()
        .filter(|t| t.stat().is_ok_and(|s| s.comm == name))
        .filter_map(|t| t.schedstat().ok())
        .map(|s| s.sum_exec_runtime as f64 / 1e9)
        .sum()
}

/// RSS and PSS of this process, kB.
pub fn own_memory_kb() -> (u64, u64) {
    Process::myself().map_or((0, 0), |p| memory_kb(&p))
}

/// (busy, total) jiffies of the whole machine since boot: user, nice,
/// system, irq, softirq and steal over those and idle and iowait; (0, 0)
/// where /proc/stat cannot be read.
pub fn machine_jiffies() -> (u64, u64) {
    let Ok(k) = KernelStats::current() else {
        return (0, 0);
    };
    let c = k.total;
    let opt = |v: Option<u64>| v.unwrap_or(0);
    let total = c.user
        + c.nice
        + c.system
        + c.idle
        + opt(c.iowait)
        + opt(c.irq)
        + opt(c.softirq)
        + opt(c.steal);
    let idle = c.idle + opt(c.iowait);
    (total - idle.min(total), total)
}
