//! The order in which sitesim's Slurm model starts jobs against the order a real Slurm started
//! them in. `scripts/ci/slurm-start-order.sh` runs a small queue to completion on the one-node
//! cluster of `scripts/ci/start-slurm.sh` (usage reset, two fillers charged at a priority
//! calculation, ten jobs of three users in two accounts queued behind them, one partition, one
//! QOS) and records sacct; `tests/fixtures/slurm-model/start-order` holds one such capture
//! (Slurm 22.05.8).
//!
//! The test rebuilds the workload as an SWF (submit times, runtimes = end - start, CPUs, time
//! limits; each account a group, each association a user) and replays it through the same path
//! as `sitesim replay` (a `[replay]` table: scheduler `slurm` with the captured `slurm.conf` and
//! the `group_shares`/`user_shares` of `[scheduler.slurm]`), then compares the start order and
//! the start times.
//!
//! The association tree. Slurm ranks fair-share over every association of the cluster (the
//! factor is rank / number of user associations), also those without jobs; sitesim's derived
//! tree (root, an account per group, its users) holds the associations of the jobs it has seen.
//! So the replay begins an hour before the capture with one job of one second per association
//! (a "ghost": it never meets a priority calculation, so it leaves no usage), and the captured
//! tree is mapped onto the derived one: an account under root is a group with its shares, a user
//! under it a user with its shares; a user directly under root (root's own) is a group of one
//! user; a sub-account without usage (theory under physics) is ghost users in its parent account
//! with its shares, which ranks the account's other users as Slurm does (a subtree without usage
//! has LevelFS infinite and is ranked before them, whatever its shape); a `FairShare=parent`
//! user without jobs is a user of no shares (it only counts). The jobs of the capture are all
//! in associations that map exactly.
//!
//! Result on the fixture: every job starts in the second Slurm started it (63 of 63 pairs in
//! Slurm's order). One agreement is by chance: Slurm started the fillers in their submission
//! second (its 1-s background tick fell in that second), and so does the model, though its
//! main loop says a submission waits for the next event run, a second later: after an idle
//! gap of at least `sched_interval` the model's periodic full run is overdue and runs at the
//! submission's own instant (and an overdue backfill cycle likewise), where Slurm's periodic
//! runs keep their own 60-s cadence whether or not there is work. The tolerance of one second
//! covers either.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{scratch, workspace};
use crate::slurm_model::{duration, epoch, number, slurm_unusable, text};

fn fixture() -> PathBuf {
    workspace().join("tests/fixtures/slurm-model/start-order")
}

/// One job of the capture: submitted.txt joined with sacct.txt.
#[derive(Debug, Clone)]
struct Job {
    id: u64,
    /// `fill` or `queue`.
    phase: String,
    user: String,
    account: String,
    cpus: u32,
    /// Time limit, seconds.
    limit: i64,
    submit: i64,
    eligible: i64,
    start: i64,
    end: i64,
}

fn read_jobs(dir: &Path) -> Vec<Job> {
    let sacct = text(dir, "sacct.txt");
    let mut lines = sacct.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('|').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("sacct.txt has no column {name}: {header:?}"))
    };
    let rows: HashMap<u64, Vec<String>> = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<String> = l.split('|').map(str::to_string).collect();
            (number(&f[col("JobIDRaw")], l) as u64, f)
        })
        .collect();
    let time = |row: &[String], name: &str| {
        epoch(&row[col(name)]).unwrap_or_else(|| panic!("sacct.txt: no {name} in {row:?}"))
    };
    text(dir, "submitted.txt")
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            let id = number(f[0], l) as u64;
            let row = rows
                .get(&id)
                .unwrap_or_else(|| panic!("job {id} of submitted.txt is not in sacct.txt"));
            assert_eq!(row[col("State")], "COMPLETED", "job {id}: {row:?}");
            assert_eq!(row[col("User")], f[2], "job {id}: user");
            assert_eq!(row[col("Account")], f[3], "job {id}: account");
            assert_eq!(row[col("NCPUS")], f[6], "job {id}: CPUs");
            Job {
                id,
                phase: f[1].to_string(),
                user: f[2].to_string(),
                account: f[3].to_string(),
                cpus: number(f[6], l) as u32,
                limit: duration(&row[col("Timelimit")]),
                submit: time(row, "Submit"),
                eligible: time(row, "Eligible"),
                start: time(row, "Start"),
                end: time(row, "End"),
            }
        })
        .collect()
}

/// One row of `sshare -a -l -P`: depth below root (sshare indents the account one space per
/// level), account, user, raw shares (`None`: `parent`), raw usage.
#[derive(Debug, Clone)]
struct Assoc {
    depth: usize,
    account: String,
    user: Option<String>,
    shares: Option<u32>,
    usage: f64,
}

fn read_tree(dir: &Path, name: &str) -> Vec<Assoc> {
    let text = text(dir, name);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('|').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("{name} is not a column of sshare: {header:?}"))
    };
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            let account = f[col("Account")];
            Assoc {
                depth: account.len() - account.trim_start().len(),
                account: account.trim().to_string(),
                user: (!f[col("User")].is_empty()).then(|| f[col("User")].to_string()),
                shares: match f[col("RawShares")] {
                    "parent" | "" => None,
                    n => Some(number(n, l) as u32),
                },
                usage: number(f[col("RawUsage")], l),
            }
        })
        .collect()
}

/// The captured association tree as sitesim's derived tree: a (group, user) per association
/// with the shares of each, and which associations map exactly (the others may not have jobs).
#[derive(Debug, Default)]
struct Mapped {
    /// (account, user) -> (group id, user id), for every association that maps exactly.
    exact: HashMap<(String, String), (i64, i64)>,
    /// Every (group, user) of the derived tree, ghosts included.
    all: Vec<(i64, i64)>,
    group_shares: BTreeMap<i64, u32>,
    user_shares: BTreeMap<i64, u32>,
    /// Slurm's user associations, sitesim's users: the fair-share factor's denominator.
    slurm_users: usize,
}

fn map_tree(tree: &[Assoc]) -> Mapped {
    let mut m = Mapped::default();
    let (mut group, mut user) = (0_i64, 0_i64);
    assert!(
        tree.first()
            .is_some_and(|r| r.depth == 0 && r.account == "root" && r.user.is_none()),
        "sshare's first row is root: {:?}",
        tree.first()
    );
    for row in tree {
        assert_eq!(row.usage, 0.0, "usage reset before the capture: {row:?}");
    }
    let mut i = 1;
    while i < tree.len() {
        let row = &tree[i];
        assert_eq!(row.depth, 1, "a row right under root: {row:?}");
        group += 1;
        let shares = row
            .shares
            .unwrap_or_else(|| panic!("FairShare=parent right under root: {row:?}"));
        m.group_shares.insert(group, shares);
        i += 1;
        if row.user.is_some() {
            // a user right under root (root's own): a group of one user
            user += 1;
            m.user_shares.insert(user, 1);
            m.all.push((group, user));
            m.slurm_users += 1;
            continue;
        }
        let account = row.account.clone();
        while i < tree.len() && tree[i].depth >= 2 {
            let child = &tree[i];
            i += 1;
            match &child.user {
                Some(name) if child.depth == 2 => {
                    user += 1;
                    m.all.push((group, user));
                    m.slurm_users += 1;
                    match child.shares {
                        Some(s) => {
                            m.user_shares.insert(user, s);
                            m.exact
                                .insert((account.clone(), name.clone()), (group, user));
                        }
                        // FairShare=parent: counted, never with jobs here
                        None => {
                            m.user_shares.insert(user, 0);
                        }
                    }
                }
                Some(_) => panic!("a user deeper than its sub-account: {child:?}"),
                None => {
                    // a sub-account: its users as ghost users of this account, its shares
                    // split among them
                    let shares = child
                        .shares
                        .unwrap_or_else(|| panic!("FairShare=parent sub-account: {child:?}"));
                    let mut users = 0;
                    while i < tree.len() && tree[i].depth > child.depth {
                        users += u32::from(tree[i].user.is_some());
                        i += 1;
                    }
                    assert!(
                        users >= 1 && shares >= users,
                        "sub-account {child:?}: {users} users for {shares} shares"
                    );
                    for k in 0..users {
                        user += 1;
                        m.all.push((group, user));
                        m.slurm_users += 1;
                        m.user_shares
                            .insert(user, if k == 0 { shares - (users - 1) } else { 1 });
                    }
                }
            }
        }
    }
    m
}

/// The priority calculations slurmctld made during the capture (calcs.txt), checked to lie
/// on one grid of `PriorityCalcPeriod`.
fn calculations(dir: &Path, period: i64) -> Vec<i64> {
    let calcs: Vec<i64> = text(dir, "calcs.txt")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| number(l, "calcs.txt") as i64)
        .collect();
    assert!(!calcs.is_empty(), "no priority calculation recorded");
    for pair in calcs.windows(2) {
        assert!(
            pair[1] > pair[0] && (pair[1] - pair[0]) % period == 0,
            "calculations {pair:?} are not on a grid of {period} s"
        );
    }
    calcs
}

/// The replay's start of every job, by job id.
struct Replayed {
    starts: HashMap<u64, i64>,
    ends: HashMap<u64, i64>,
}

/// Seconds before the first recorded calculation at which the replay begins (the ghosts'
/// submission): a whole number of calculation periods, so that the model's calculation grid
/// (from its first submission) is slurmctld's.
const LEAD: i64 = 3600;

/// Writes the capture as an SWF and replays it under the Slurm model configured by the
/// captured slurm.conf and the mapped shares; times are returned as seconds since the epoch.
fn replay(dir: &Path, jobs: &[Job], mapped: &Mapped, calcs: &[i64], period: i64) -> Replayed {
    assert_eq!(LEAD % period, 0);
    let base = calcs[0] - LEAD;
    let (scratch_dir, _) = scratch();
    let mut swf = String::from("; sitesim's replay of a captured Slurm queue\n; MaxProcs: 2\n");
    let smallest = jobs.iter().map(|j| j.id).min().unwrap_or(1);
    assert!(
        mapped.all.len() < smallest as usize,
        "ghost ids below the captured jobs'"
    );
    // one job of one second per association, ids 1.., an hour before
    for (k, &(group, user)) in mapped.all.iter().enumerate() {
        writeln!(
            swf,
            "{} 0 -1 1 1 -1 -1 1 60 -1 1 {user} {group} -1 -1 -1 -1 -1",
            k + 1
        )
        .unwrap();
    }
    for job in jobs {
        let &(group, user) = mapped
            .exact
            .get(&(job.account.clone(), job.user.clone()))
            .unwrap_or_else(|| {
                panic!(
                    "job {}: association {}/{} does not map exactly onto the derived tree",
                    job.id, job.account, job.user
                )
            });
        assert!(job.submit > base && job.end >= job.start);
        writeln!(
            swf,
            "{} {} -1 {} {} -1 -1 {} {} -1 1 {user} {group} -1 -1 -1 -1 -1",
            job.id,
            job.submit - base,
            job.end - job.start,
            job.cpus,
            job.cpus,
            job.limit
        )
        .unwrap();
    }
    let trace = scratch_dir.path().join("capture.swf");
    fs::write(&trace, &swf).unwrap();
    let ids = |shares: &BTreeMap<i64, u32>| {
        shares
            .iter()
            .map(|(id, s)| format!("\"{id}\" = {s}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let table = format!(
        "trace = {trace:?}\n\
         [scheduler]\npolicy = \"slurm\"\nslurm_conf = {conf:?}\n\
         [scheduler.slurm]\ngroup_shares = {{ {groups} }}\nuser_shares = {{ {users} }}\n",
        trace = trace.display().to_string(),
        conf = dir.join("slurm.conf").display().to_string(),
        groups = ids(&mapped.group_shares),
        users = ids(&mapped.user_shares),
    );
    let table: toml::Value = toml::from_str(&table).unwrap();
    let (spec, options) = config::replay_table::replay_of(table, Path::new(""), 1, None).unwrap();
    let (kept, handle) = scenario::sink::Kept::new();
    scenario::Simulation::replay(spec, options)
        .sink(Box::new(kept))
        .execute()
        .unwrap();
    let records = handle.lock().unwrap().take().unwrap().records;
    let mut replayed = Replayed {
        starts: HashMap::new(),
        ends: HashMap::new(),
    };
    for r in &records {
        if r.job_id as u64 >= smallest {
            replayed.starts.insert(r.job_id as u64, r.start + base);
            replayed.ends.insert(r.job_id as u64, r.end + base);
        } else {
            // a ghost: it never meets a calculation (after the first, at its submission)
            assert!(r.end < period, "ghost {} ran until {}", r.job_id, r.end);
        }
    }
    replayed
}

/// The comparison of one capture: what matched and what did not.
struct Comparison {
    /// Jobs by Slurm's start, with the model's start and the tolerance of the difference.
    rows: Vec<(Job, i64, i64)>,
    /// Pairs of jobs Slurm started at different seconds: how many the model starts in the
    /// same order, how many at the same second, which reversed.
    same_order: usize,
    tied: usize,
    reversed: Vec<(u64, u64)>,
}

/// How far the model's start of each job may be from Slurm's (by job id). The model starts a
/// job in the instant another ends and a submission's event run a second after it; slurmctld
/// learns of a job's end from slurmd's epilog message and starts the next job in that second or
/// the next (a "lag": the start one second after the last end before it), and may start a
/// submission in its own second (its 1-s background tick can fall within the second of the
/// submission). Runtimes are Slurm's end - start, so a lag is not in them: the model runs every
/// later job of that chain that much earlier. Hence |model - Slurm| <= 1 + the lags of the
/// jobs Slurm started before.
fn tolerances(jobs: &[Job]) -> HashMap<u64, i64> {
    let mut lags: Vec<(i64, i64)> = jobs
        .iter()
        .map(|j| {
            let trigger = jobs
                .iter()
                .filter(|o| o.id != j.id && o.end <= j.start && o.end >= j.submit)
                .map(|o| o.end)
                .max()
                .unwrap_or(j.submit);
            (j.start, j.start - trigger)
        })
        .collect();
    lags.sort_unstable();
    jobs.iter()
        .map(|j| {
            let before: i64 = lags
                .iter()
                .filter(|(start, _)| *start < j.start)
                .map(|(_, lag)| *lag)
                .sum();
            (j.id, 1 + before)
        })
        .collect()
}

fn compare(dir: &Path) -> Comparison {
    let config = text(dir, "config.txt");
    let period = config
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "PriorityCalcPeriod").then(|| duration(v.trim()))
        })
        .unwrap_or_else(|| panic!("config.txt has no PriorityCalcPeriod"));
    let jobs = read_jobs(dir);
    let tree = read_tree(dir, "sshare-start.txt");
    let mapped = map_tree(&tree);
    let calcs = calculations(dir, period);
    for job in &jobs {
        // without --begin or holds a job is eligible at its submission, as the model assumes
        assert_eq!(job.eligible, job.submit, "job {}: eligible", job.id);
    }
    // The model runs the main loop for a submission a second after it, slurmctld in that second
    // or the next: a queue submitted within a second of the fillers is a capture whose order
    // neither can be held to (the script waits two seconds).
    let fillers_submitted = jobs
        .iter()
        .filter(|j| j.phase == "fill")
        .map(|j| j.submit)
        .max()
        .unwrap_or(i64::MIN);
    for job in jobs.iter().filter(|j| j.phase == "queue") {
        assert!(
            job.submit >= fillers_submitted + 2,
            "job {}: queued {} s after the fillers were submitted; the capture must leave two \
             (scripts/ci/slurm-start-order.sh waits for them)",
            job.id,
            job.submit - fillers_submitted
        );
    }
    let replayed = replay(dir, &jobs, &mapped, &calcs, period);
    let tolerance = tolerances(&jobs);
    let mut rows: Vec<(Job, i64, i64)> = jobs
        .iter()
        .map(|j| (j.clone(), replayed.starts[&j.id], tolerance[&j.id]))
        .collect();
    rows.sort_by_key(|(j, _, _)| (j.start, j.id));
    let (mut same_order, mut tied, mut reversed) = (0, 0, Vec::new());
    for (a, (ja, ma, _)) in rows.iter().enumerate() {
        for (jb, mb, _) in &rows[a + 1..] {
            if ja.start == jb.start {
                continue;
            }
            match ma.cmp(mb) {
                std::cmp::Ordering::Less => same_order += 1,
                std::cmp::Ordering::Equal => tied += 1,
                std::cmp::Ordering::Greater => reversed.push((ja.id, jb.id)),
            }
        }
    }
    let first = rows.first().map_or(0, |(j, _, _)| j.submit);
    eprintln!(
        "{}: {} jobs, {} user associations in Slurm's tree; calculations at {:?} s",
        dir.display(),
        rows.len(),
        mapped.slurm_users,
        calcs.iter().map(|c| c - first).collect::<Vec<_>>()
    );
    eprintln!(
        "  (seconds from the first submission)\n  job   phase user  account   cpus limit submit   Slurm start-end   sitesim start-end   diff (tolerance)"
    );
    for (j, m, t) in &rows {
        eprintln!(
            "  {:<5} {:<5} {:<5} {:<9} {:>4} {:>5} {:>6} {:>10}-{:<6} {:>10}-{:<6} {:>+5} ({t})",
            j.id,
            j.phase,
            j.user,
            j.account,
            j.cpus,
            j.limit,
            j.submit - first,
            j.start - first,
            j.end - first,
            m - first,
            replayed.ends[&j.id] - first,
            m - j.start
        );
    }
    eprintln!(
        "  pairs Slurm started at different seconds: {same_order} in the same order in sitesim, {tied} at one second, {} reversed {reversed:?}",
        reversed.len()
    );
    Comparison {
        rows,
        same_order,
        tied,
        reversed,
    }
}

// ---- the tests ------------------------------------------------------------------------------

#[test]
fn the_captured_tree_maps_onto_the_derived_one() {
    let tree = read_tree(&fixture(), "sshare-start.txt");
    let mapped = map_tree(&tree);
    // root's own user, biology (alice, dave), chemistry (bob, carol), physics (alice, bob and
    // theory's alice and carol)
    assert_eq!(mapped.slurm_users, 9);
    assert_eq!(mapped.all.len(), 9);
    assert_eq!(mapped.group_shares.values().sum::<u32>(), 1 + 30 + 40 + 60);
    for (account, user) in [
        ("physics", "alice"),
        ("physics", "bob"),
        ("chemistry", "bob"),
        ("chemistry", "carol"),
    ] {
        assert!(
            mapped
                .exact
                .contains_key(&(account.to_string(), user.to_string())),
            "{account}/{user}"
        );
    }
}

#[test]
fn the_model_starts_the_captured_queue_in_slurms_order() {
    let c = compare(&fixture());
    check(&c);
}

/// What a comparison must show: every pair of jobs Slurm started at different seconds started
/// in the same order (or in one second, within the tolerance), and every start within its
/// tolerance ([`tolerances`]).
fn check(c: &Comparison) {
    assert!(c.rows.len() >= 12, "{} jobs", c.rows.len());
    assert!(
        c.reversed.is_empty(),
        "pairs started in the other order: {:?}",
        c.reversed
    );
    for (job, model, tolerance) in &c.rows {
        assert!(
            (model - job.start).abs() <= *tolerance,
            "job {}: sitesim starts it at {model}, Slurm at {} (tolerance {tolerance} s)",
            job.id,
            job.start
        );
    }
    assert_eq!(c.same_order + c.tied + c.reversed.len(), {
        let n = c.rows.len();
        let mut distinct = 0;
        for a in 0..n {
            for b in a + 1..n {
                distinct += usize::from(c.rows[a].0.start != c.rows[b].0.start);
            }
        }
        distinct
    });
}

/// Runs scripts/ci/slurm-start-order.sh on the local cluster (about three minutes) and compares
/// the fresh capture as the fixture is. Under CI (`SITESIM_REQUIRE_SLURM`) it must run;
/// elsewhere it is skipped without a Slurm cluster with accounting.
#[test]
fn a_live_slurm_starts_jobs_in_the_order_sitesim_does() {
    let Some((_slurm, dir)) =
        crate::common::live_slurm_capture("slurm-start-order.sh", slurm_unusable())
    else {
        return;
    };
    check(&compare(dir.path()));
}
