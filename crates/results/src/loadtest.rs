//! A load test's records (`spdylab load`): one [`Second`] a line of
//! load.jsonl, and the figures seed 000 reports derived from them (maximum
//! pages/s, response time at given user counts, where errors start and where
//! the SLA breaks, the server's CPU and memory), with their summary.csv.

use crate::files::LOAD_FILE;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::time::Duration;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PageTimes {
    /// Pages timed: complete ones and those that timed out.
    #[serde(default)]
    pub n: u64,
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

/// One second of a load.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Second {
    pub schema: u32,
    pub protocol: String,
    pub server: String,
    /// Seconds since the start (the end of this second).
    pub t: u64,
    pub users: u32,
    /// Pages complete in this second (errors excluded).
    pub pages: u64,
    /// Pages that ended in an error in this second.
    pub errors: u64,
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Resources complete.
    pub requests: u64,
    /// Body bytes received (of every page that ended in this second).
    pub bytes: u64,
    /// Response time of the pages that ended in this second, complete or
    /// timed out (at their time-out), ms.
    pub page_ms: PageTimes,
    /// Users in the middle of a page at the end of the second.
    pub pages_in_flight: u64,
    pub connections_opened: u64,
    pub retries: u64,
    pub server_cpu_pct_machine: f64,
    pub server_cpu_pct_core: f64,
    pub server_rss_mb: f64,
    pub server_pss_mb: f64,
    /// The machine's idle CPU (every process, /proc/stat), %.
    pub machine_idle_pct: f64,
    pub busy_workers: Option<u32>,
    pub idle_workers: Option<u32>,
    pub generator_cpu_pct_core: f64,
    /// The link emulator's thread (in this process, apart from both).
    pub emulator_cpu_pct_core: f64,
    /// Connections the client holds (all users).
    pub client_connections: u64,
    /// Established TCP connections on the server's ports 80 and 443, and the
    /// distinct client addresses among them (the server namespace's /proc/net/tcp).
    pub server_connections: u64,
    pub client_addresses: u64,
}

/// Reads DIR/load.jsonl; a bad line is an error naming the file and line.
pub fn read_seconds(dir: &Path) -> io::Result<Vec<Second>> {
    let path = dir.join(LOAD_FILE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}:{}: {e}", path.display(), i + 1),
                )
            })
        })
        .collect()
}

/// The seed's derived figures for one protocol.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Derived {
    pub protocol: String,
    pub server: String,
    pub max_pages_per_s: u64,
    /// (users, mean page time in ms) at each asked user count (None: no page there).
    pub rt_at: Vec<(u32, Option<f64>)>,
    pub first_error_users: Option<u32>,
    /// Users where the mean page time (over 5 s) first exceeds the SLA.
    pub sla_broken_users: Option<u32>,
    pub sla_ms: f64,
    /// At `cpu_at` users: the server's CPU idle (100 - its % of the machine),
    /// the machine's idle, the server's RSS.
    pub cpu_at: u32,
    pub server_cpu_idle_pct: Option<f64>,
    pub machine_idle_pct: Option<f64>,
    pub server_rss_mb: Option<f64>,
    /// PSS: a process tree's shared pages counted once.
    pub server_pss_mb: Option<f64>,
    pub max_busy_workers: Option<u32>,
    pub generator_cpu_max_pct_core: f64,
    pub pages: u64,
    pub errors: u64,
}

/// Seconds whose user count is within [n, n + max(1, 2 % of n)].
fn near(seconds: &[&Second], n: u32) -> Vec<usize> {
    let w = (n / 50).max(1);
    let idx: Vec<usize> = (0..seconds.len())
        .filter(|&i| seconds[i].users >= n && seconds[i].users <= n + w)
        .collect();
    if idx.is_empty() {
        // The nearest second at or above n.
        (0..seconds.len())
            .find(|&i| seconds[i].users >= n)
            .into_iter()
            .collect()
    } else {
        idx
    }
}

/// Derived figures per protocol, from the per-second records of a load.
pub fn derive(records: &[Second], at: &[u32], sla: Duration, cpu_at: u32) -> Vec<Derived> {
    let mut protocols: Vec<(String, String)> = Vec::new();
    for r in records {
        let key = (r.protocol.clone(), r.server.clone());
        if !protocols.contains(&key) {
            protocols.push(key);
        }
    }
    protocols
        .into_iter()
        .map(|(p, server)| {
            let s: Vec<&Second> = records
                .iter()
                .filter(|r| r.protocol == p && r.server == server)
                .collect();
            // Each second's mean weighs as many pages as it timed: timed-out
            // pages count (a second of nothing but timeouts is starvation,
            // not an empty second); records without `n` weigh their pages.
            let timed = |r: &Second| {
                if r.page_ms.n > 0 {
                    r.page_ms.n
                } else {
                    r.pages
                }
            };
            let weighted = |idx: &[usize]| -> Option<f64> {
                let pages: u64 = idx.iter().map(|&i| timed(s[i])).sum();
                (pages > 0).then(|| {
                    idx.iter()
                        .map(|&i| s[i].page_ms.mean * timed(s[i]) as f64)
                        .sum::<f64>()
                        / pages as f64
                })
            };
            let avg = |idx: &[usize], f: &dyn Fn(&Second) -> f64| -> Option<f64> {
                (!idx.is_empty())
                    .then(|| idx.iter().map(|&i| f(s[i])).sum::<f64>() / idx.len() as f64)
            };
            let sla_ms = sla.as_secs_f64() * 1e3;
            let sla_broken_users = (0..s.len()).find_map(|i| {
                let from = i.saturating_sub(4);
                let idx: Vec<usize> = (from..=i).collect();
                weighted(&idx)
                    .filter(|m| *m > sla_ms && i >= 4)
                    .map(|_| s[i].users)
            });
            let cpu_idx = near(&s, cpu_at);
            Derived {
                protocol: p.clone(),
                server: server.clone(),
                max_pages_per_s: s.iter().map(|r| r.pages).max().unwrap_or(0),
                rt_at: at.iter().map(|&n| (n, weighted(&near(&s, n)))).collect(),
                first_error_users: s.iter().find(|r| r.errors > 0).map(|r| r.users),
                sla_broken_users,
                sla_ms,
                cpu_at,
                server_cpu_idle_pct: avg(&cpu_idx, &|r| 100.0 - r.server_cpu_pct_machine),
                machine_idle_pct: avg(&cpu_idx, &|r| r.machine_idle_pct),
                server_rss_mb: avg(&cpu_idx, &|r| r.server_rss_mb),
                server_pss_mb: avg(&cpu_idx, &|r| r.server_pss_mb),
                max_busy_workers: s.iter().filter_map(|r| r.busy_workers).max(),
                generator_cpu_max_pct_core: s
                    .iter()
                    .map(|r| r.generator_cpu_pct_core)
                    .fold(0.0, f64::max),
                pages: s.iter().map(|r| r.pages).sum(),
                errors: s.iter().map(|r| r.errors).sum(),
            }
        })
        .collect()
}

/// `summary.csv`: one row per protocol.
pub fn summary_csv(rows: &[Derived]) -> String {
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.1}"));
    let optu = |v: Option<u32>| v.map_or(String::new(), |v| v.to_string());
    let mut s = String::from("protocol,server,max_pages_per_s");
    if let Some(r) = rows.first() {
        for (n, _) in &r.rt_at {
            s += &format!(",rt_ms_at_{n}");
        }
    }
    s += ",first_error_users,sla_ms,sla_broken_users,cpu_at_users,server_cpu_idle_pct,machine_idle_pct,server_rss_mb,server_pss_mb,max_busy_workers,generator_cpu_max_pct_core,pages,errors\n";
    for r in rows {
        s += &format!("{},{},{}", r.protocol, r.server, r.max_pages_per_s);
        for (_, v) in &r.rt_at {
            s += &format!(",{}", opt(*v));
        }
        s += &format!(
            ",{},{:.0},{},{},{},{},{},{},{},{:.1},{},{}\n",
            optu(r.first_error_users),
            r.sla_ms,
            optu(r.sla_broken_users),
            r.cpu_at,
            opt(r.server_cpu_idle_pct),
            opt(r.machine_idle_pct),
            opt(r.server_rss_mb),
            opt(r.server_pss_mb),
            optu(r.max_busy_workers),
            r.generator_cpu_max_pct_core,
            r.pages,
            r.errors
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sec(t: u64, users: u32, pages: u64, mean: f64, errors: u64) -> Second {
        Second {
            protocol: "http".into(),
            server: "apache".into(),
            t,
            users,
            pages,
            errors,
            page_ms: PageTimes {
                mean,
                ..Default::default()
            },
            server_cpu_pct_machine: 5.0,
            server_rss_mb: 50.0,
            ..Default::default()
        }
    }

    #[test]
    fn derived_figures_as_in_the_seed() {
        // Users 10, 20, … 200; the page time passes 3 s from 120 users on,
        // the first error at 150 users.
        let records: Vec<Second> = (1..=20)
            .map(|i| {
                let users = i * 10;
                let mean = if users >= 120 { 5000.0 } else { 1000.0 };
                sec(
                    i as u64,
                    users,
                    10 + i as u64,
                    mean,
                    u64::from(users >= 150),
                )
            })
            .collect();
        let d = &derive(&records, &[100, 200], Duration::from_secs(3), 100)[0];
        assert_eq!(d.max_pages_per_s, 30);
        assert_eq!(d.first_error_users, Some(150));
        assert_eq!(d.rt_at[0], (100, Some(1000.0)));
        assert_eq!(d.rt_at[1], (200, Some(5000.0)));
        // Mean over 5 s: 120..=140 at 5 s and 80..=110 at 1 s → 3.4 s at 150 users.
        assert_eq!(d.sla_broken_users, Some(140));
        assert_eq!(d.server_cpu_idle_pct, Some(95.0));
        assert_eq!(d.pages, (11..=30).sum::<u64>());
        let csv = summary_csv(std::slice::from_ref(d));
        assert!(
            csv.lines()
                .nth(1)
                .unwrap()
                .starts_with("http,apache,30,1000.0,5000.0,150,3000,140,"),
            "{csv}"
        );
    }
}
