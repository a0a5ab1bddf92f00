//! Sitesim's Slurm model (`slurm_model`) against a real Slurm given the same configuration
//! and usage. `scripts/ci/slurm-priority.sh` puts the one-node cluster of
//! `scripts/ci/start-slurm.sh` into a known state (usage of several users in several accounts,
//! pending jobs behind running ones that fill the node) and records sshare, sprio, the
//! association manager and the jobs right after a priority calculation; `tests/fixtures/slurm-model/real` holds one such
//! capture (Slurm 22.05.8). The tests rebuild the association tree from it and compare:
//!
//! - fair-share (Fair Tree): NormShares, EffectvUsage, NormUsage, LevelFS and FairShare of every
//!   association, from sshare's usage (whole CPU-seconds: sshare truncates) and from the
//!   association manager's (two decimals), with tolerances derived from that rounding;
//! - usage: decay and charging between two consecutive calculations;
//! - every pending job's factors (age, fair-share, job size, partition, QOS) and priority,
//!   normalised and weighted, as sprio shows them, and the priority scontrol shows.
//!
//! Known differences are asserted as such: an exclusive job's job-size factor counts its node's
//! CPUs, which a model given only the request (sbatch -n) cannot know.
//!
//! A live test runs the script on the local cluster and compares the fresh capture the same way.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::fs;
use std::path::{Path, PathBuf};

use slurm_model::fairshare::{ShareRow, decay_per_second};
use slurm_model::priority::{Factors, age, job_size, priority};
use slurm_model::{AssocTree, Shares, SlurmConfig, Weights};

use crate::common::workspace;

fn fixture() -> PathBuf {
    workspace().join("tests/fixtures/slurm-model/real")
}

// ---- reading a capture --------------------------------------------------------------------

pub(crate) fn text(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(name))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()))
}

/// A number as Slurm prints it (`inf` for no usage).
pub(crate) fn number(field: &str, what: &str) -> f64 {
    field
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{what}: {field:?} is not a number"))
}

fn optional(field: &str, what: &str) -> Option<f64> {
    (!field.trim().is_empty()).then(|| number(field, what))
}

/// Seconds since the epoch of `YYYY-MM-DDTHH:MM:SS` in UTC (the script sets TZ=UTC and
/// SLURM_TIME_FORMAT=standard); `None` for Slurm's `Unknown`, `None` or `N/A`.
pub(crate) fn epoch(stamp: &str) -> Option<i64> {
    let (date, time) = stamp.trim().split_once('T')?;
    let d: Vec<i64> = date
        .split('-')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let t: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    if d.len() != 3 || t.len() != 3 {
        return None;
    }
    // days from the civil date (Howard Hinnant's algorithm)
    let (y, m, day) = (if d[1] <= 2 { d[0] - 1 } else { d[0] }, d[1], d[2]);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + t[0] * 3600 + t[1] * 60 + t[2])
}

/// Seconds of a Slurm duration: `[D-]HH:MM:SS`, `MM:SS` or minutes.
pub(crate) fn duration(value: &str) -> i64 {
    let value = value.trim();
    let (days, rest) = match value.split_once('-') {
        Some((d, rest)) => (number(d, value) as i64, rest),
        None => (0, value),
    };
    let parts: Vec<i64> = rest.split(':').map(|p| number(p, value) as i64).collect();
    let seconds = match parts.as_slice() {
        [h, m, s] => h * 3600 + m * 60 + s,
        [m, s] => m * 60 + s,
        [m] => m * 60,
        _ => panic!("{value:?} is not a Slurm duration"),
    };
    days * 86_400 + seconds
}

/// `Key=Value` words of one `scontrol` record; a word without `=` continues the value before.
fn key_values(line: &str) -> HashMap<String, String> {
    let mut map = HashMap::new();
    let mut last: Option<String> = None;
    for word in line.split_whitespace() {
        match word.split_once('=') {
            Some((key, value)) if !key.is_empty() => {
                map.insert(key.to_string(), value.to_string());
                last = Some(key.to_string());
            }
            _ => {
                if let Some(v) = last.as_ref().and_then(|key| map.get_mut(key)) {
                    v.push(' ');
                    v.push_str(word);
                }
            }
        }
    }
    map
}

/// One row of `sshare -a -l -P`.
#[derive(Debug, Clone)]
struct SshareRow {
    /// Depth below root: sshare indents Account one space per level.
    depth: usize,
    account: String,
    user: Option<String>,
    /// `None` for root.
    shares: Option<Shares>,
    norm_shares: f64,
    raw_usage: f64,
    norm_usage: Option<f64>,
    effective_usage: f64,
    fair_share: Option<f64>,
    level_fs: Option<f64>,
}

fn read_sshare(dir: &Path) -> Vec<SshareRow> {
    let text = text(dir, "sshare.txt");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('|').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("sshare.txt has no column {name}: {header:?}"))
    };
    let (account, user, raw_shares, norm_shares) = (
        col("Account"),
        col("User"),
        col("RawShares"),
        col("NormShares"),
    );
    let (raw_usage, norm_usage, effective, fair_share, level_fs) = (
        col("RawUsage"),
        col("NormUsage"),
        col("EffectvUsage"),
        col("FairShare"),
        col("LevelFS"),
    );
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split('|').collect();
            let what = format!("sshare.txt: {line}");
            let name = f[account];
            SshareRow {
                depth: name.len() - name.trim_start().len(),
                account: name.trim().to_string(),
                user: (!f[user].is_empty()).then(|| f[user].to_string()),
                shares: match f[raw_shares] {
                    "" => None,
                    "parent" => Some(Shares::Parent),
                    n => Some(Shares::Raw(number(n, &what) as u32)),
                },
                norm_shares: number(f[norm_shares], &what),
                raw_usage: number(f[raw_usage], &what),
                norm_usage: optional(f[norm_usage], &what),
                effective_usage: number(f[effective], &what),
                fair_share: optional(f[fair_share], &what),
                level_fs: optional(f[level_fs], &what),
            }
        })
        .collect()
}

/// Raw usage by (account, user) from `scontrol show assoc_mgr flags=assoc`
/// (`UsageRaw/Norm/Efctv=`, two decimals); the user is "" for an account.
fn read_assoc_mgr(dir: &Path, name: &str) -> HashMap<(String, String), f64> {
    let mut usage = HashMap::new();
    let mut current: Option<(String, String)> = None;
    for line in text(dir, name).lines() {
        let line = line.trim();
        if line.starts_with("ClusterName=") {
            let kv = key_values(line);
            let user = kv.get("UserName").cloned().unwrap_or_default();
            let user = user.split('(').next().unwrap_or_default().to_string();
            current = Some((kv.get("Account").cloned().unwrap_or_default(), user));
        } else if let Some(values) = line.strip_prefix("UsageRaw/Norm/Efctv=") {
            let raw = values.split('/').next().unwrap_or_default();
            if let Some(key) = current.take() {
                usage.insert(key, number(raw, &format!("{name}: {line}")));
            }
        }
    }
    assert!(!usage.is_empty(), "{name}: no association records");
    usage
}

/// One row of `sprio -h -o '%i|%r|%u|%Y|%A|%F|%J|%P|%Q|%a|%f|%j|%p|%q'`.
#[derive(Debug, Clone)]
struct SprioRow {
    job: u64,
    partition: String,
    user: String,
    priority: i64,
    /// Weighted factors as printed (`%.0f`): age, fair-share, job size, partition, QOS.
    weighted: [String; 5],
    /// Normalised factors (`%.7lf`), same order.
    normalised: [f64; 5],
}

fn read_sprio(dir: &Path) -> Vec<SprioRow> {
    text(dir, "sprio.txt")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split('|').map(str::trim).collect();
            assert_eq!(f.len(), 14, "sprio.txt: {line}");
            let what = format!("sprio.txt: {line}");
            SprioRow {
                job: number(f[0], &what) as u64,
                partition: f[1].to_string(),
                user: f[2].to_string(),
                priority: number(f[3], &what) as i64,
                weighted: [4, 5, 6, 7, 8].map(|i| f[i].to_string()),
                normalised: [9, 10, 11, 12, 13].map(|i| number(f[i], &what)),
            }
        })
        .collect()
}

/// One line of submitted.txt.
#[derive(Debug, Clone)]
struct Submitted {
    job: u64,
    phase: String,
    user: String,
    account: String,
    cpus: u32,
    extra: String,
}

/// Everything a capture holds.
struct Capture {
    dir: PathBuf,
    config: HashMap<String, String>,
    times: HashMap<String, String>,
    sshare: Vec<SshareRow>,
    usage: HashMap<(String, String), f64>,
    usage_previous: HashMap<(String, String), f64>,
    sprio: Vec<SprioRow>,
    jobs: HashMap<u64, HashMap<String, String>>,
    submitted: Vec<Submitted>,
    /// PriorityJobFactor by partition.
    partitions: HashMap<String, u32>,
    /// Priority by QOS.
    qos: HashMap<String, u32>,
    nodes: u32,
    cpus: u32,
}

impl Capture {
    fn read(dir: &Path) -> Capture {
        let config = text(dir, "config.txt")
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        let times = text(dir, "times.txt")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let jobs = text(dir, "jobs.txt")
            .lines()
            .filter(|l| l.starts_with("JobId="))
            .map(|l| {
                let kv = key_values(l);
                (number(&kv["JobId"], l) as u64, kv)
            })
            .collect();
        let submitted = text(dir, "submitted.txt")
            .lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let f: Vec<&str> = l.split('|').collect();
                Submitted {
                    job: number(f[0], l) as u64,
                    phase: f[1].to_string(),
                    user: f[2].to_string(),
                    account: f[3].to_string(),
                    cpus: number(f[6], l) as u32,
                    extra: f.get(8).copied().unwrap_or_default().to_string(),
                }
            })
            .collect();
        let partitions = text(dir, "partitions.txt")
            .split("PartitionName=")
            .skip(1)
            .map(|block| {
                let name = block
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string();
                let kv = key_values(block);
                let factor = kv
                    .get("PriorityJobFactor")
                    .map_or(1, |v| number(v, "PriorityJobFactor") as u32);
                (name, factor)
            })
            .collect();
        let qos = text(dir, "qos.txt")
            .lines()
            .skip(1)
            .filter_map(|l| {
                let f: Vec<&str> = l.split('|').collect();
                Some((f.first()?.to_string(), number(f.get(1)?, l) as u32))
            })
            .collect();
        let node_text = text(dir, "node.txt");
        let node_blocks: Vec<HashMap<String, String>> = node_text
            .split("NodeName=")
            .skip(1)
            .map(key_values)
            .collect();
        // cluster_cpus: each node's effective CPUs (22.05: CPUEfctv; older: CPUTot)
        let cpus = node_blocks
            .iter()
            .map(|kv| {
                let v = kv.get("CPUEfctv").or_else(|| kv.get("CPUTot"));
                number(v.map_or("", String::as_str), "node.txt CPUs") as u32
            })
            .sum();
        Capture {
            dir: dir.to_path_buf(),
            config,
            times,
            sshare: read_sshare(dir),
            usage: read_assoc_mgr(dir, "assoc_mgr.txt"),
            usage_previous: read_assoc_mgr(dir, "assoc_mgr-previous.txt"),
            sprio: read_sprio(dir),
            jobs,
            submitted,
            partitions,
            qos,
            nodes: node_blocks.len() as u32,
            cpus,
        }
    }

    fn time_f(&self, key: &str) -> f64 {
        number(
            self.times
                .get(key)
                .unwrap_or_else(|| panic!("times.txt has no {key}")),
            key,
        )
    }

    fn time(&self, key: &str) -> i64 {
        number(
            self.times
                .get(key)
                .unwrap_or_else(|| panic!("times.txt has no {key}")),
            key,
        ) as i64
    }

    fn setting(&self, key: &str) -> &str {
        self.config
            .get(key)
            .unwrap_or_else(|| panic!("config.txt has no {key}"))
    }

    /// Sitesim's configuration for what slurmctld ran with.
    fn slurm_config(&self) -> SlurmConfig {
        let weight = |key: &str| number(self.setting(key), key) as u32;
        let flags = self.setting("PriorityFlags");
        assert!(
            !flags.contains("NO_FAIR_TREE") && !flags.contains("DEPTH_OBLIVIOUS"),
            "these tests compare Fair Tree; PriorityFlags = {flags}"
        );
        SlurmConfig {
            weights: Weights {
                age: weight("PriorityWeightAge"),
                fairshare: weight("PriorityWeightFairShare"),
                job_size: weight("PriorityWeightJobSize"),
                partition: weight("PriorityWeightPartition"),
                qos: weight("PriorityWeightQOS"),
                assoc: weight("PriorityWeightAssoc"),
            },
            max_age: duration(self.setting("PriorityMaxAge")),
            favor_small: self.setting("PriorityFavorSmall") == "Yes",
            small_relative_to_time: flags.contains("SMALL_RELATIVE_TO_TIME"),
            decay_half_life: duration(self.setting("PriorityDecayHalfLife")),
            calc_period: duration(self.setting("PriorityCalcPeriod")),
            cpus_per_node: Some(self.cpus / self.nodes.max(1)),
            ..SlurmConfig::default()
        }
    }
}

// ---- comparing ------------------------------------------------------------------------------

/// Comparisons of sitesim's values with Slurm's: every failure is listed at the end, with the
/// largest difference of each kind.
#[derive(Default)]
struct Checks {
    failures: Vec<String>,
    /// Per kind: the largest |difference|, its tolerance then, and the number compared.
    largest: BTreeMap<String, (f64, f64, usize)>,
}

impl Checks {
    fn close(&mut self, kind: &str, what: &str, ours: f64, slurm: f64, tolerance: f64) {
        let diff = if ours == slurm {
            0.0 // infinities included
        } else {
            (ours - slurm).abs()
        };
        let entry = self
            .largest
            .entry(kind.to_string())
            .or_insert((0.0, 0.0, 0));
        entry.2 += 1;
        if diff >= entry.0 {
            entry.0 = diff;
            entry.1 = tolerance;
        }
        if diff.is_nan() || diff > tolerance {
            self.failures.push(format!(
                "{kind} of {what}: sitesim {ours}, Slurm {slurm} (|diff| {diff:.3e} > {tolerance:.3e})"
            ));
        }
    }

    fn equal<T: PartialEq + Debug>(&mut self, kind: &str, what: &str, ours: T, slurm: T) {
        let entry = self
            .largest
            .entry(kind.to_string())
            .or_insert((0.0, 0.0, 0));
        entry.2 += 1;
        if ours != slurm {
            entry.0 = f64::NAN;
            self.failures.push(format!(
                "{kind} of {what}: sitesim {ours:?}, Slurm {slurm:?}"
            ));
        }
    }

    fn finish(self, title: &str) {
        eprintln!("{title}: largest |sitesim - Slurm| (tolerance), values compared");
        for (kind, (diff, tolerance, n)) in &self.largest {
            eprintln!("  {kind:<34} {diff:.3e} ({tolerance:.1e}) n={n}");
        }
        assert!(
            self.failures.is_empty(),
            "{title}: {} difference(s):\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
    }
}

/// Which usage the tree is rebuilt from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Usage {
    /// sshare's RawUsage: truncated to whole CPU-seconds (`(uint64_t) usage_raw`).
    Sshare,
    /// The association manager's UsageRaw: rounded to two decimals (`%.2Lf`).
    AssocMgr,
}

impl Usage {
    /// The largest error of one user's usage as read: [0, 1) for truncation, ±0.005 for
    /// rounding to two decimals.
    fn error(self) -> f64 {
        match self {
            Usage::Sshare => 1.0,
            Usage::AssocMgr => 0.005,
        }
    }
}

/// The tree of sshare's rows (pre-order, depth from the indentation), each user charged with
/// `usage(account, user)`; the tree index of each row.
fn tree_of(capture: &Capture, usage: impl Fn(&str, &str) -> f64) -> (AssocTree, Vec<usize>) {
    let mut tree = AssocTree::new();
    let mut indices = Vec::new();
    // the account at each depth on the way down
    let mut path: Vec<usize> = Vec::new();
    for row in &capture.sshare {
        if row.depth == 0 {
            assert!(
                row.user.is_none() && row.account == "root",
                "first row: {row:?}"
            );
            path = vec![AssocTree::ROOT];
            indices.push(AssocTree::ROOT);
            continue;
        }
        path.truncate(row.depth);
        let parent = *path
            .last()
            .unwrap_or_else(|| panic!("sshare row without an account above it: {row:?}"));
        let shares = row
            .shares
            .unwrap_or_else(|| panic!("no RawShares: {row:?}"));
        let index = match &row.user {
            Some(user) => {
                assert_eq!(
                    tree.name(parent),
                    row.account,
                    "user row under another account"
                );
                let i = tree.add_user(parent, user, shares);
                tree.charge(i, usage(&row.account, user));
                i
            }
            None => {
                let i = tree.add_account(parent, &row.account, shares);
                path.push(i);
                i
            }
        };
        indices.push(index);
    }
    (tree, indices)
}

/// An association's usage in the association manager's records (`user` "" for an account).
fn recorded(usage: &HashMap<(String, String), f64>, account: &str, user: &str) -> f64 {
    *usage
        .get(&(account.to_string(), user.to_string()))
        .unwrap_or_else(|| panic!("the association manager has no {account}/{user}"))
}

/// The tree with each user's usage from `source`.
fn tree_from(capture: &Capture, source: Usage) -> (AssocTree, Vec<usize>) {
    match source {
        Usage::Sshare => tree_of(capture, |account, user| {
            capture
                .sshare
                .iter()
                .find(|r| r.account == account && r.user.as_deref() == Some(user))
                .map_or(0.0, |r| r.raw_usage)
        }),
        Usage::AssocMgr => tree_of(capture, |account, user| {
            recorded(&capture.usage, account, user)
        }),
    }
}

/// The number of user associations at or below each association (how many read usages its
/// usage sums).
fn leaves(tree: &AssocTree) -> Vec<f64> {
    let mut count = vec![0.0; tree.len()];
    for i in 0..tree.len() {
        if tree.is_user(i) {
            let mut at = Some(i);
            while let Some(a) = at {
                count[a] += 1.0;
                at = tree.parent(a);
            }
        }
    }
    count
}

/// The fair-share parent (`fs_assoc_ptr`): the nearest ancestor whose shares are not `parent`.
fn fs_parent(tree: &AssocTree, index: usize) -> usize {
    let mut at = tree.parent(index);
    while let Some(p) = at {
        if p == AssocTree::ROOT || tree.shares(p) != Shares::Parent {
            return p;
        }
        at = tree.parent(p);
    }
    AssocTree::ROOT
}

/// Fair Tree from `source`'s usage against sshare's columns. sshare prints `%f` (6 decimals,
/// ±5e-7); a usage-derived column also carries the error of the usage read: with `u` an
/// association's usage, `p` its fair-share parent's, `L` the number of users summed in each and
/// `e` the error of one user's usage, `|Δ(u/p)| <= (L_u + (u/p) L_p) e / p`.
fn check_fair_share(capture: &Capture, source: Usage, checks: &mut Checks) -> Vec<ShareRow> {
    let (tree, indices) = tree_from(capture, source);
    let rows = tree.fair_tree();
    let leaves = leaves(&tree);
    let print = 1e-6;
    let e = source.error();
    let tag = |kind: &str| format!("{kind} ({source:?})");
    for (row, &i) in capture.sshare.iter().zip(&indices) {
        let what = format!("{}/{}", row.account, row.user.as_deref().unwrap_or(""));
        // usage read against the account rows' own: an account's usage is its users' sum
        let read = match source {
            Usage::Sshare => row.raw_usage,
            Usage::AssocMgr => recorded(
                &capture.usage,
                &row.account,
                row.user.as_deref().unwrap_or(""),
            ),
        };
        checks.close(
            &tag("RawUsage = users' sum"),
            &what,
            tree.usage(i),
            read,
            leaves[i] * e + 0.005,
        );
        if source == Usage::Sshare && row.shares.is_some_and(|s| s != Shares::Parent) {
            // a usage below 1 is printed as 0 but is not 0 to Fair Tree: it would have to be
            // read elsewhere (LevelFS is inf exactly when there is no usage)
            let hidden = row.raw_usage == 0.0 && row.level_fs.is_some_and(f64::is_finite);
            checks.equal(&tag("no usage hidden by truncation"), &what, false, hidden);
        }
        if i == AssocTree::ROOT {
            continue;
        }
        let ours = rows[i];
        let p = tree.usage(fs_parent(&tree, i));
        let u_bound = if p > 0.0 {
            (leaves[i] + ours.effective_usage * leaves[fs_parent(&tree, i)]) * e / p
        } else {
            0.0
        };
        checks.close(
            &tag("NormShares"),
            &what,
            ours.norm_shares,
            row.norm_shares,
            print,
        );
        checks.close(
            &tag("EffectvUsage"),
            &what,
            ours.effective_usage,
            row.effective_usage,
            print + u_bound,
        );
        if let Some(norm) = row.norm_usage {
            let root = tree.usage(AssocTree::ROOT);
            let bound = if root > 0.0 {
                (leaves[i] + ours.norm_usage * leaves[AssocTree::ROOT]) * e / root
            } else {
                0.0
            };
            checks.close(
                &tag("NormUsage"),
                &what,
                ours.norm_usage,
                norm,
                print + bound,
            );
        }
        match (ours.level_fs, row.level_fs) {
            (Some(lf), Some(slurm)) => {
                // LF = S / U: its relative error is U's
                let relative = if ours.effective_usage > 0.0 {
                    u_bound / ours.effective_usage
                } else {
                    0.0
                };
                let tolerance = print + lf.abs() * relative * 1.01;
                checks.close(&tag("LevelFS"), &what, lf, slurm, tolerance);
            }
            (ours, slurm) => checks.equal(&tag("LevelFS shown"), &what, ours, slurm),
        }
        match (ours.fair_share, row.fair_share) {
            (Some(f), Some(slurm)) => checks.close(&tag("FairShare"), &what, f, slurm, print),
            (ours, slurm) => checks.equal(
                &tag("FairShare shown"),
                &what,
                ours.is_some(),
                slurm.is_some(),
            ),
        }
    }
    rows
}

/// Decay and charging between the two calculations: every usage of the calculation before,
/// decayed by `d^Δ` (`d = 1 - 0.693 / half-life`), plus `Δ · d^Δ · CPUs` for each job running
/// through both calculations, on its association and every ancestor (the model's charge, see
/// `slurm_model`); against the usage at the last calculation. Both usages are read to two
/// decimals: ±0.005 per user summed, twice, and the association's own figure once more.
fn check_decay(capture: &Capture, checks: &mut Checks) {
    let config = capture.slurm_config();
    let running = |key: &str| {
        let list = capture.times.get(key).cloned().unwrap_or_default();
        list.split(',')
            .filter(|j| !j.is_empty())
            .map(|j| number(j, key) as u64)
            .collect::<Vec<_>>()
    };
    let jobs = running("running_at_calc");
    assert_eq!(
        running("running_at_calc_previous"),
        jobs,
        "the same jobs run at both calculations (none ends between them)"
    );
    assert!(!jobs.is_empty(), "jobs run between the two calculations");
    let previous = capture.time("calc_previous");
    let delta = capture.time("calc") - previous;
    assert!(delta > 0);

    // the tree with the usage of the calculation before
    let (mut tree, indices) = tree_of(capture, |account, user| {
        recorded(&capture.usage_previous, account, user)
    });
    let d = decay_per_second(config.decay_half_life as f64);
    let factor = d.powf(delta as f64);
    tree.decay(factor);
    let mut charged = Vec::new();
    for job in jobs {
        let started = epoch(&capture.jobs[&job]["StartTime"]).unwrap_or(i64::MAX);
        assert!(
            started < previous,
            "job {job} started before the first calculation"
        );
        let info = capture
            .submitted
            .iter()
            .find(|s| s.job == job)
            .unwrap_or_else(|| panic!("running job {job} is not in submitted.txt"));
        let assoc = capture
            .sshare
            .iter()
            .zip(&indices)
            .find(|(r, _)| r.account == info.account && r.user.as_deref() == Some(&info.user))
            .map(|(_, &i)| i)
            .unwrap_or_else(|| panic!("no association {}/{}", info.account, info.user));
        let charge = delta as f64 * factor * f64::from(info.cpus);
        tree.charge(assoc, charge);
        charged.push(format!(
            "job {job} ({}/{}) {charge:.4}",
            info.account, info.user
        ));
    }
    let leaves = leaves(&tree);
    for (row, &i) in capture.sshare.iter().zip(&indices) {
        let user = row.user.as_deref().unwrap_or("");
        let what = format!("{}/{user}", row.account);
        checks.close(
            "usage after decay and charge",
            &what,
            tree.usage(i),
            recorded(&capture.usage, &row.account, user),
            leaves[i] * 0.005 * (1.0 + factor) + 0.005 + 1e-9,
        );
    }
    eprintln!(
        "decay over {delta} s: d^Δ = {factor:.9} (half-life {} s); charged: {}",
        config.decay_half_life,
        charged.join(", ")
    );
}

/// sprio's weighted column: `%.0f` of factor × weight.
fn weighted(factor: f64, weight: u32) -> String {
    format!("{:.0}", factor * f64::from(weight))
}

/// Every pending job's factors and priority against sprio's (normalised to 7 decimals,
/// weighted to units) and scontrol's priority. The factors are computed at the calculation's
/// time (`calc` in times.txt: slurmctld's `priority_last_decay_ran`), from the job's accrue time
/// (age), its association's Fair Tree factor (`rows`, from the association manager's usage),
/// its CPUs on the cluster's (job size), its partition's PriorityJobFactor over the largest
/// and its QOS's priority over the largest.
fn check_priorities(capture: &Capture, rows: &[ShareRow], checks: &mut Checks) {
    let config = capture.slurm_config();
    let w = config.weights;
    let calc = capture.time("calc");
    let (_, indices) = tree_from(capture, Usage::AssocMgr);
    let assoc_of = |account: &str, user: &str| {
        capture
            .sshare
            .iter()
            .zip(&indices)
            .find(|(r, _)| r.account == account && r.user.as_deref() == Some(user))
            .map(|(_, &i)| i)
            .unwrap_or_else(|| panic!("no association {account}/{user}"))
    };
    let max_part = capture
        .partitions
        .values()
        .copied()
        .max()
        .unwrap_or(1)
        .max(1);
    let max_qos = capture.qos.values().copied().max().unwrap_or(0);
    let pending: Vec<&Submitted> = capture
        .submitted
        .iter()
        .filter(|s| s.phase == "pending")
        .collect();
    assert!(!pending.is_empty());
    let mut shown = 0;
    for job in &pending {
        let info = &capture.jobs[&job.job];
        let what = format!("job {} ({} {})", job.job, job.user, job.extra);
        if job.extra.contains("--hold") {
            // held: priority 0, never in sprio
            checks.equal(
                "held job: priority 0",
                &what,
                "0",
                info["Priority"].as_str(),
            );
            let in_sprio = capture.sprio.iter().any(|r| r.job == job.job);
            checks.equal("held job: not in sprio", &what, false, in_sprio);
            continue;
        }
        let Some(row) = capture.sprio.iter().find(|r| r.job == job.job) else {
            checks
                .failures
                .push(format!("{what}: pending but not in sprio"));
            continue;
        };
        shown += 1;
        checks.equal("user", &what, job.user.as_str(), row.user.as_str());
        let partition = info["Partition"].as_str();
        checks.equal("partition", &what, partition, row.partition.as_str());
        let accrue = epoch(&info["AccrueTime"]);
        // without accrue limits the age counts from the eligible time itself (begin_time), set
        // at the first scheduler pass after it; not from that pass
        checks.equal(
            "accrue time = eligible time",
            &what,
            accrue,
            epoch(&info["EligibleTime"]),
        );
        let limit = duration(&info["TimeLimit"]);
        // Slurm's job size counts the job's `total_cpus`, which the backfill's will-run test
        // sets for a pending job: the request (sbatch -n), or for an exclusive job every CPU
        // of the node (scontrol still shows the request as NumCPUs)
        let exclusive = job.extra.contains("--exclusive");
        let cpus = if exclusive {
            capture.cpus / capture.nodes.max(1)
        } else {
            job.cpus
        };
        checks.equal(
            "NumCPUs = request",
            &what,
            job.cpus.to_string(),
            info["NumCPUs"].clone(),
        );
        let qos = info["QOS"].as_str();
        let assoc = assoc_of(&info["Account"], &job.user);
        checks.equal(
            "account",
            &what,
            job.account.as_str(),
            info["Account"].as_str(),
        );
        let factors = Factors {
            age: accrue.map_or(0.0, |a| age(calc, a, config.max_age)),
            assoc: 0.0,
            fairshare: rows[assoc].fair_share.unwrap_or(0.0),
            job_size: job_size(&config, cpus, limit, capture.cpus),
            partition: f64::from(capture.partitions[partition]) / f64::from(max_part),
            qos: if max_qos > 0 {
                f64::from(capture.qos[qos]) / f64::from(max_qos)
            } else {
                0.0
            },
            tres: 0.0,
        };
        if exclusive {
            // a known difference: from the request alone (what sitesim's jobs carry) the job
            // size is that of -n CPUs, not Slurm's
            let requested = job_size(&config, job.cpus, limit, capture.cpus);
            eprintln!(
                "{what}: Slurm's job size counts the node's {cpus} CPUs ({:.7}); from -n {}: {requested:.7}",
                factors.job_size, job.cpus
            );
            checks.equal(
                "exclusive: the request's job size is not Slurm's",
                &what,
                true,
                (requested - row.normalised[2]).abs() > 1e-7,
            );
        }
        let ours = [
            (factors.age, w.age, "age"),
            (factors.fairshare, w.fairshare, "fair-share"),
            (factors.job_size, w.job_size, "job size"),
            (factors.partition, w.partition, "partition"),
            (factors.qos, w.qos, "QOS"),
        ];
        for (k, (factor, weight, name)) in ours.into_iter().enumerate() {
            checks.close(
                &format!("{name} factor (sprio -n)"),
                &what,
                factor,
                row.normalised[k],
                1e-7,
            );
            checks.equal(
                &format!("{name} weighted (sprio)"),
                &what,
                weighted(factor, weight),
                row.weighted[k].clone(),
            );
        }
        // the capture's own clock: sprio shows the calculation's age, not the capture's
        if let Some(a) = accrue {
            let at = capture.time_f("capture_start");
            let late = at - calc as f64;
            checks.close(
                "age at the capture time (tolerance: its lag)",
                &what,
                age(at as i64, a, config.max_age),
                row.normalised[0],
                (late + 1.0) / config.max_age as f64,
            );
        }
        let ours = priority(&config, &factors);
        checks.equal("priority (sprio %Y)", &what, i64::from(ours), row.priority);
        checks.equal(
            "priority (scontrol)",
            &what,
            ours.to_string(),
            info["Priority"].clone(),
        );
        // the fair-share factor sprio used is the one sshare shows
        let sshare_fs = capture
            .sshare
            .iter()
            .find(|r| r.account == info["Account"] && r.user.as_deref() == Some(&job.user))
            .and_then(|r| r.fair_share);
        checks.close(
            "sshare FairShare = sprio's",
            &what,
            sshare_fs.unwrap_or(f64::NAN),
            row.normalised[1],
            1e-6,
        );
    }
    // sprio -w: the weights slurmctld uses are the configuration's
    let weights = text(&capture.dir, "sprio-weights.txt");
    let row = weights
        .lines()
        .find(|l| l.starts_with("Weights"))
        .unwrap_or_else(|| panic!("sprio-weights.txt has no Weights row"));
    let f: Vec<&str> = row.split('|').collect();
    let printed: Vec<String> = f
        .get(4..9)
        .unwrap_or_default()
        .iter()
        .map(|s| s.trim().to_string())
        .collect();
    let ours: Vec<String> = [w.age, w.fairshare, w.job_size, w.partition, w.qos]
        .iter()
        .map(u32::to_string)
        .collect();
    checks.equal("weights (sprio -w)", "configuration", ours, printed);
    checks.equal(
        "pending jobs in sprio",
        "capture",
        pending
            .iter()
            .filter(|j| !j.extra.contains("--hold"))
            .count(),
        shown,
    );
}

/// All the comparisons of one capture.
fn compare(dir: &Path) {
    let capture = Capture::read(dir);
    let mut checks = Checks::default();
    check_fair_share(&capture, Usage::Sshare, &mut checks);
    let rows = check_fair_share(&capture, Usage::AssocMgr, &mut checks);
    check_decay(&capture, &mut checks);
    check_priorities(&capture, &rows, &mut checks);
    checks.finish(&format!("{}", dir.display()));
}

// ---- the tests ------------------------------------------------------------------------------

#[test]
fn slurm_time_and_duration_formats_parse() {
    assert_eq!(epoch("1970-01-01T00:00:00"), Some(0));
    assert_eq!(epoch("2026-11-25T16:43:12"), Some(1_795_624_992));
    assert_eq!(epoch("2000-03-01T00:00:01"), Some(951_868_801));
    assert_eq!(epoch("Unknown"), None);
    assert_eq!(duration("7-00:00:00"), 604_800);
    assert_eq!(duration("01:00:00"), 3600);
    assert_eq!(duration("10:00"), 600);
    assert_eq!(weighted(0.5, 1), "0"); // %.0f rounds halves to even, as C's printf does
    assert_eq!(weighted(1.5, 1), "2");
}

/// Fair Tree on the captured association tree and usage gives sshare's values.
#[test]
fn fair_tree_matches_the_captured_sshare() {
    let capture = Capture::read(&fixture());
    let mut checks = Checks::default();
    check_fair_share(&capture, Usage::Sshare, &mut checks);
    check_fair_share(&capture, Usage::AssocMgr, &mut checks);
    checks.finish("fair-share, captured");
}

/// Decay and charging over one calculation period give the captured usage.
#[test]
fn usage_decays_and_is_charged_as_captured() {
    let capture = Capture::read(&fixture());
    let mut checks = Checks::default();
    check_decay(&capture, &mut checks);
    checks.finish("usage, captured");
}

/// Every captured pending job's factors and priority are sprio's.
#[test]
fn priorities_match_the_captured_sprio() {
    let capture = Capture::read(&fixture());
    let mut checks = Checks::default();
    let rows = check_fair_share(&capture, Usage::AssocMgr, &mut checks);
    check_priorities(&capture, &rows, &mut checks);
    checks.finish("priorities, captured");
}

/// Why the local Slurm cannot be used for the live comparison, if it cannot.
pub(crate) fn slurm_unusable() -> Option<String> {
    let root = std::process::Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&root.stdout).trim() != "0" {
        return Some("not root (the script adds users, resets usage and submits as them)".into());
    }
    match std::process::Command::new("sacctmgr")
        .args(["-n", "-P", "show", "cluster", "format=Cluster"])
        .output()
    {
        Ok(out) if out.status.success() && !out.stdout.is_empty() => {}
        Ok(out) => {
            return Some(format!(
                "sacctmgr show cluster failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Err(e) => return Some(format!("no sacctmgr: {e}")),
    }
    match std::process::Command::new("sprio")
        .arg("--version")
        .output()
    {
        Ok(out) if out.status.success() => None,
        _ => Some("no sprio".into()),
    }
}

/// Captures the local cluster's state with scripts/ci/slurm-priority.sh (about four minutes)
/// and compares it as the fixture is. Under CI (`SITESIM_REQUIRE_SLURM`) it must run;
/// elsewhere it is skipped without a Slurm cluster with accounting.
#[test]
fn a_live_slurm_computes_what_sitesim_computes() {
    let Some((_slurm, dir)) =
        crate::common::live_slurm_capture("slurm-priority.sh", slurm_unusable())
    else {
        return;
    };
    compare(dir.path());
}
