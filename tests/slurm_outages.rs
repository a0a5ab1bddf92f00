//! A real Slurm meeting a maintenance reservation and a drain, against sitesim's replay of what
//! it logged. `scripts/ci/slurm-outages.sh` runs a small queue on the one-node cluster of
//! `scripts/ci/start-slurm.sh` while the node has a MAINT reservation and is drained for 30 s,
//! and records sacct, `sacctmgr show events` (with TRES) and `sacctmgr show reservation`;
//! `tests/fixtures/slurm-outages/capture-*` hold two such captures of Slurm 22.05.
//!
//! The replay is the one-line path: `sitesim replay sacct.txt --scheduler slurm --slurm-conf
//! slurm.conf --events events.txt --reservations reservations.txt --tz UTC`. The captured
//! slurm.conf gives the priority weights. Each capture is replayed twice: on the machine of node
//! types the captured slurm.conf describes (its node with GPUs and memory, the reservation and
//! the drain kept on the named node), and on a machine of counted processors (a copy without
//! the node's GPUs and memory, which no job of the workload asks for).
//!
//! Checked on each capture: Slurm itself ran no job in the reservation and started none while
//! the node was drained (the capture is what it claims); sitesim's replay neither; and sitesim's
//! start times against Slurm's, beside Slurm's against itself (the two captures), printed.
//! Every replayed start is within `TOLERANCE` of Slurm's. That is Slurm's own noise: it starts
//! the jobs waiting for a reservation's end at its next backfill cycle, whose phase no log
//! records (0 to 26 s after the end in six runs of the script); the model's cycle, with no
//! earlier one to keep the phase of, runs a second after the end.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{live_slurm_capture, scratch, sitesim, stderr, workspace};
use crate::slurm_model::{epoch, slurm_unusable, text};

/// How far, in seconds, a replayed start may be from Slurm's: its `bf_interval` (30 s, the
/// default, which CI's cluster keeps), the phase of its backfill cycles.
const TOLERANCE: i64 = 30;

fn captures() -> Vec<PathBuf> {
    let root = workspace().join("tests/fixtures/slurm-outages");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("capture-"))
        })
        .collect();
    dirs.sort();
    dirs
}

/// One job as Slurm ran it: (submit, start, end), seconds since the epoch.
type Ran = BTreeMap<u64, (i64, i64, i64)>;

/// The jobs of a capture's sacct.txt, by job id.
fn slurm_jobs(dir: &Path) -> Ran {
    let text = text(dir, "sacct.txt");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('|').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (id, submit, start, end) = (col("JobIDRaw"), col("Submit"), col("Start"), col("End"));
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            let t = |k: usize| epoch(f[k]).unwrap_or_else(|| panic!("{l}: no time in {}", f[k]));
            (f[id].parse().unwrap(), (t(submit), t(start), t(end)))
        })
        .collect()
}

/// The capture's outages, seconds since the epoch: the reservation and the drain.
fn outages(dir: &Path) -> ((i64, i64), (i64, i64)) {
    let times: BTreeMap<String, i64> = text(dir, "times.txt")
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
        .collect();
    (
        (times["reservation_start"], times["reservation_end"]),
        (times["drain_start"], times["drain_end"]),
    )
}

/// sitesim's replay of the capture: each job's (start, end), seconds since the epoch.
/// sitesim's replay of the capture in `dir`: on the machine of node types its slurm.conf
/// describes, or (`counted`) on a machine of counted processors.
fn replay(dir: &Path, counted: bool) -> BTreeMap<u64, (i64, i64)> {
    let (scratch_dir, _) = scratch();
    let conf = scratch_dir.path().join("slurm.conf");
    let captured = text(dir, "slurm.conf");
    let counted_conf: String = captured
        .lines()
        .map(|line| {
            if line.starts_with("NodeName=") {
                line.split(' ')
                    .filter(|w| !w.starts_with("Gres=") && !w.starts_with("RealMemory="))
                    .collect::<Vec<_>>()
                    .join(" ")
            } else if line.starts_with("SelectTypeParameters=") {
                "SelectTypeParameters=CR_Core".to_string()
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&conf, if counted { counted_conf } else { captured }).unwrap();
    let out = scratch_dir.path().join("out");
    let path = |name: &str| dir.join(name).display().to_string();
    let run = sitesim(&[
        "replay",
        &path("sacct.txt"),
        "--scheduler",
        "slurm",
        "--slurm-conf",
        conf.to_str().unwrap(),
        "--events",
        &path("events.txt"),
        "--reservations",
        &path("reservations.txt"),
        "--tz",
        "UTC",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    // both outages were read, and each took the node's two CPUs
    let listed = summary["outages"]["outages"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    // the machine is the one asked for: nodes.csv on a machine of node types alone
    assert_eq!(out.join("nodes.csv").exists(), !counted);
    let (header, rows) = crate::common::table(&out.join("jobs.csv"));
    let col = |name: &str| crate::common::column(&header, name);
    let (id, start, end) = (col("job_id"), col("start"), col("end"));
    let origin = slurm_jobs(dir).values().map(|j| j.0).min().unwrap();
    rows.iter()
        .map(|r| {
            let t = |k: usize| r[k].parse::<i64>().unwrap() + origin;
            (r[id].parse().unwrap(), (t(start), t(end)))
        })
        .collect()
}

/// The drain as sacctmgr recorded it: from when the node was drained and idle (a drain asked
/// for while jobs run begins when they end) to its resume, seconds since the epoch.
fn recorded_drain(dir: &Path) -> (i64, i64) {
    let events = text(dir, "events.txt");
    let row: Vec<&str> = events
        .lines()
        .find(|l| l.contains("|DRAIN|"))
        .unwrap_or_else(|| panic!("{}: no DRAIN event", dir.display()))
        .split('|')
        .collect();
    (epoch(row[2]).unwrap(), epoch(row[3]).unwrap())
}

/// Asserts that no job of `runs` ((start, end) by id) ran in the reservation or started while
/// the node was drained; `who` names the schedule. Slurm's schedule is held to the drain as
/// the script asked for it; the replay, which knows only the recorded drain, to that.
fn assert_outside(who: &str, runs: &BTreeMap<u64, (i64, i64)>, dir: &Path) {
    let ((resv_from, resv_to), asked) = outages(dir);
    let (drain_from, drain_to) = if who == "Slurm" {
        asked
    } else {
        recorded_drain(dir)
    };
    for (id, &(start, end)) in runs {
        assert!(
            !(start < resv_to && end > resv_from && end > start),
            "{who}: job {id} ran [{start}, {end}) in the reservation [{resv_from}, {resv_to})"
        );
        assert!(
            !(drain_from <= start && start < drain_to),
            "{who}: job {id} started at {start}, in the drain [{drain_from}, {drain_to})"
        );
    }
}

/// Median and largest absolute difference of two schedules' starts, seconds.
fn differences(a: &BTreeMap<u64, (i64, i64)>, b: &[i64]) -> (i64, i64) {
    let mut d: Vec<i64> = a.values().zip(b).map(|(x, y)| (x.0 - y).abs()).collect();
    d.sort_unstable();
    (d[d.len() / 2], *d.last().unwrap())
}

/// Slurm's runs of the capture in `dir` against sitesim's replay (`counted`: on a machine of
/// counted processors, else of node types), both checked outside the outages: the replay's
/// runs and Slurm's starts.
fn compare(dir: &Path, counted: bool) -> (BTreeMap<u64, (i64, i64)>, Vec<i64>) {
    let slurm = slurm_jobs(dir);
    let slurm_runs: BTreeMap<u64, (i64, i64)> =
        slurm.iter().map(|(&id, j)| (id, (j.1, j.2))).collect();
    assert_outside("Slurm", &slurm_runs, dir);
    let replayed = replay(dir, counted);
    assert_eq!(replayed.len(), slurm.len());
    assert_outside("sitesim", &replayed, dir);
    let origin = slurm.values().map(|j| j.0).min().unwrap();
    let machine = if counted {
        "counted processors"
    } else {
        "node types"
    };
    println!(
        "{} on a machine of {machine}: job, Slurm's start, sitesim's (s from the first submission)",
        dir.display()
    );
    for ((id, s), r) in slurm_runs.iter().zip(replayed.values()) {
        println!("  {id:>6} {:>5} {:>5}", s.0 - origin, r.0 - origin);
    }
    let starts: Vec<i64> = slurm_runs.values().map(|r| r.0).collect();
    (replayed, starts)
}

#[test]
fn the_committed_captures_are_replayed_outside_their_outages_near_slurms_starts() {
    let dirs = captures();
    assert!(dirs.len() >= 2, "two captures: {dirs:?}");
    let mut relative = Vec::new();
    for dir in &dirs {
        let mut starts = Vec::new();
        for counted in [false, true] {
            let replayed;
            (replayed, starts) = compare(dir, counted);
            let (median, most) = differences(&replayed, &starts);
            println!("  sitesim against Slurm: median {median} s, largest {most} s");
            assert!(
                most <= TOLERANCE,
                "{} (counted: {counted}): a start {most} s from Slurm's",
                dir.display()
            );
        }
        let first = slurm_jobs(dir).values().map(|j| j.0).min().unwrap();
        relative.push(starts.iter().map(|s| s - first).collect::<Vec<_>>());
    }
    // Slurm against itself: the same workload's starts, from each capture's first submission
    let mut d: Vec<i64> = relative[0]
        .iter()
        .zip(&relative[1])
        .map(|(a, b)| (a - b).abs())
        .collect();
    d.sort_unstable();
    println!(
        "Slurm against itself: median {} s, largest {} s",
        d[d.len() / 2],
        d.last().unwrap()
    );
}

#[test]
fn a_live_slurm_meets_the_outages_as_the_replay_does() {
    let Some((_lock, dir)) = live_slurm_capture("slurm-outages.sh", slurm_unusable()) else {
        return;
    };
    for counted in [false, true] {
        let (replayed, starts) = compare(dir.path(), counted);
        let (median, most) = differences(&replayed, &starts);
        println!("live: sitesim against Slurm: median {median} s, largest {most} s");
        assert!(
            most <= TOLERANCE,
            "(counted: {counted}) a start {most} s from Slurm's"
        );
    }
}
