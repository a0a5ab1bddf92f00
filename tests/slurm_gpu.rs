//! Sitesim's Slurm model on a machine of node types against a real Slurm with GPUs.
//!
//! `tests/fixtures/slurm-gpu/run1` and `run2` are two runs of the same plan of 150 jobs (102
//! CPU jobs, 48 GPU jobs, memory requests, three QOS of which one is limited to three GPUs by
//! `GrpTRES`, two partitions over one node of 16 CPUs, 64000 MB and 4 a100) on Slurm 22.05
//! (`scripts/ci/slurm-gpu-workload.sh`). Each is replayed through the path of `sitesim replay`
//! (a `[replay]` table) under the Slurm model with the capture's own slurm.conf (its node, its
//! partitions, its priority weights), the association tree `sitesim convert --assoc` writes
//! from the capture's sacctmgr table, and the capture's QOS (priority, `GrpTRES`,
//! `MaxTRESPerUser`, `MaxJobsPerUser`) selecting the jobs of their name. The schedule is
//! compared job by job with what Slurm did (start times relative to the first submission; the
//! median and 90th percentile of |start difference|; the share of job pairs Slurm started at
//! different seconds that the model starts in the same order; the mean wait), beside real
//! Slurm against itself (run1 against run2, jobs matched by their place in the plan) and EASY
//! on the same node. Printed with `--nocapture`; the figures are in docs/guide/nodes.md. A
//! live test runs the script's short plan on the machine's Slurm and replays that capture.
//!
//! What the replay does not have: the association limit of the capture (account `biology`
//! with `GrpTRES=gres/gpu=1`; the model has QOS limits only), Slurm's lag between a job's end
//! and the next start (about a second), and the sub-account `theory` ranked as Fair Tree ranks
//! it when it has no usage yet.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::common::{scratch, sitesim, stderr, workspace};

/// One job of a capture's sacct.txt.
#[derive(Debug, Clone)]
struct Captured {
    id: u64,
    /// Its place in the plan (JobName `gwl-N`).
    position: u32,
    /// Seconds since the first submission.
    submit: i64,
    start: i64,
}

/// Seconds since the epoch of sacct's `YYYY-MM-DDTHH:MM:SS` (the capture sets TZ=UTC).
fn epoch(stamp: &str) -> i64 {
    crate::slurm_model::epoch(stamp).unwrap_or_else(|| panic!("{stamp}: not a time"))
}

fn read_capture(dir: &Path) -> Vec<Captured> {
    let text = fs::read_to_string(dir.join("sacct.txt")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('|').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (id, name, submit, start) = (col("JobIDRaw"), col("JobName"), col("Submit"), col("Start"));
    let mut jobs: Vec<Captured> = lines
        .map(|line| line.splitn(header.len(), '|').collect::<Vec<_>>())
        .filter(|f| f[name].starts_with("gwl-"))
        .map(|f| Captured {
            id: f[id].parse().unwrap(),
            position: f[name]["gwl-".len()..].parse().unwrap(),
            submit: epoch(f[submit]),
            start: epoch(f[start]),
        })
        .collect();
    let first = jobs.iter().map(|j| j.submit).min().unwrap();
    for j in &mut jobs {
        j.submit -= first;
        j.start -= first;
    }
    jobs
}

/// The capture's QOS as `[[scheduler.slurm.qos]]` entries, each selecting the jobs of its
/// name by the queue number `sitesim convert` gave it (`qos.csv`).
fn qos_entries(dir: &Path, converted: &Path) -> String {
    let numbers: BTreeMap<String, i64> = fs::read_to_string(converted.join("qos.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let (id, name) = l.split_once(',').unwrap();
            (name.to_string(), id.parse().unwrap())
        })
        .collect();
    let text = fs::read_to_string(dir.join("qos.txt")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('|').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let mut out = String::new();
    for line in lines {
        let f: Vec<&str> = line.split('|').collect();
        let name = f[col("Name")];
        let Some(number) = numbers.get(name) else {
            continue; // a QOS no job used
        };
        out += &format!(
            "[[scheduler.slurm.qos]]\nname = \"{name}\"\npriority = {}\nswf_queues = [{number}]\n",
            f[col("Priority")]
        );
        for (column, key) in [
            ("GrpTRES", "grp_tres"),
            ("MaxTRESPU", "max_tres_per_user"),
            ("MaxTRES", "max_tres_per_job"),
        ] {
            if !f[col(column)].is_empty() {
                out += &format!("{key} = \"{}\"\n", f[col(column)]);
            }
        }
        if !f[col("MaxJobsPU")].is_empty() {
            out += &format!("max_jobs_per_user = {}\n", f[col("MaxJobsPU")]);
        }
    }
    out
}

/// Replays a capture under `policy` (`slurm`: with its tree and QOS) on its own slurm.conf;
/// the start of each job by id, seconds since the first submission.
fn replay(dir: &Path, policy: &str) -> BTreeMap<u64, i64> {
    let (tmp, _) = scratch();
    let converted = tmp.path().join("converted");
    let sacct = dir.join("sacct.txt").display().to_string();
    let assoc = dir.join("assoc.txt").display().to_string();
    let out = sitesim(&[
        "-q",
        "convert",
        &sacct,
        "--assoc",
        &assoc,
        "--out",
        &converted.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut table = format!(
        "trace = {sacct:?}\n[scheduler]\npolicy = \"{policy}\"\nslurm_conf = {conf:?}\n",
        conf = dir.join("slurm.conf").display().to_string()
    );
    if policy == "slurm" {
        // the tree as convert writes it, for [scheduler.slurm]
        table += &fs::read_to_string(converted.join("slurm-tree.toml")).unwrap();
        table += &qos_entries(dir, &converted);
    }
    let table: toml::Value = toml::from_str(&table).unwrap_or_else(|e| panic!("{e}\n{table}"));
    let (spec, options) = config::replay_table::replay_of(table, Path::new(""), 1, None).unwrap();
    let (kept, handle) = scenario::sink::Kept::new();
    scenario::Simulation::replay(spec, options)
        .sink(Box::new(kept))
        .execute()
        .unwrap();
    let records = handle.lock().unwrap().take().unwrap().records;
    // jobs.csv's times count from the first submission, as the capture's here
    records.iter().map(|r| (r.job_id as u64, r.start)).collect()
}

/// Per job figures of one schedule against another: median and p90 of |start difference|,
/// the share of pairs (started at different seconds by the reference) in the same order, and
/// both mean waits.
#[derive(Debug, Clone, Copy)]
struct Figures {
    median: f64,
    p90: f64,
    order: f64,
    wait: f64,
    reference_wait: f64,
}

/// `starts[i]` against `reference[i]` (`submits[i]` for the waits).
fn figures(submits: &[i64], starts: &[i64], reference: &[i64]) -> Figures {
    let n = starts.len();
    let mut diffs: Vec<f64> = (0..n)
        .map(|i| (starts[i] - reference[i]).abs() as f64)
        .collect();
    diffs.sort_by(f64::total_cmp);
    let quantile = |q: f64| {
        let at = q * (n - 1) as f64;
        let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
        diffs[lo] + (diffs[hi] - diffs[lo]) * (at - lo as f64)
    };
    let (mut same, mut pairs) = (0u64, 0u64);
    for i in 0..n {
        for j in i + 1..n {
            let r = reference[i].cmp(&reference[j]);
            if r.is_eq() {
                continue;
            }
            pairs += 1;
            same += u64::from(starts[i].cmp(&starts[j]) == r);
        }
    }
    let mean_wait = |s: &[i64]| (0..n).map(|i| (s[i] - submits[i]) as f64).sum::<f64>() / n as f64;
    Figures {
        median: quantile(0.5),
        p90: quantile(0.9),
        order: same as f64 / pairs as f64,
        wait: mean_wait(starts),
        reference_wait: mean_wait(reference),
    }
}

fn model_against(dir: &Path, policy: &str) -> Figures {
    let captured = read_capture(dir);
    let starts = replay(dir, policy);
    assert_eq!(starts.len(), captured.len(), "{policy}: every job runs");
    let submits: Vec<i64> = captured.iter().map(|j| j.submit).collect();
    let model: Vec<i64> = captured.iter().map(|j| starts[&j.id]).collect();
    let real: Vec<i64> = captured.iter().map(|j| j.start).collect();
    figures(&submits, &model, &real)
}

#[test]
fn the_slurm_model_on_the_captured_node_is_closer_to_slurm_than_easy() {
    let fixtures = workspace().join("tests/fixtures/slurm-gpu");
    let (run1, run2) = (
        read_capture(&fixtures.join("run1")),
        read_capture(&fixtures.join("run2")),
    );
    let by_position = |run: &[Captured]| -> BTreeMap<u32, Captured> {
        run.iter().map(|j| (j.position, j.clone())).collect()
    };
    let (one, two) = (by_position(&run1), by_position(&run2));
    let common: Vec<u32> = one
        .keys()
        .filter(|p| two.contains_key(p))
        .copied()
        .collect();
    assert_eq!(common.len(), 150);
    let itself = figures(
        &common.iter().map(|p| one[p].submit).collect::<Vec<_>>(),
        &common.iter().map(|p| two[p].start).collect::<Vec<_>>(),
        &common.iter().map(|p| one[p].start).collect::<Vec<_>>(),
    );
    let mut report = format!(
        "real Slurm run2 against run1: median {:.0} s, p90 {:.0} s, order {:.3}, mean wait {:.0} s vs {:.0} s\n",
        itself.median, itself.p90, itself.order, itself.wait, itself.reference_wait
    );
    let mut results = BTreeMap::new();
    for run in ["run1", "run2"] {
        for policy in ["slurm", "easy"] {
            let f = model_against(&fixtures.join(run), policy);
            report += &format!(
                "{policy} against {run}: median {:.0} s, p90 {:.0} s, order {:.3}, mean wait {:.0} s (Slurm {:.0} s)\n",
                f.median, f.p90, f.order, f.wait, f.reference_wait
            );
            results.insert((run, policy), f);
        }
    }
    println!("{report}");
    for run in ["run1", "run2"] {
        let (slurm, easy) = (results[&(run, "slurm")], results[&(run, "easy")]);
        assert!(
            slurm.order > easy.order && slurm.p90 < easy.p90,
            "{run}: the Slurm model is no closer to Slurm than EASY\n{report}"
        );
    }
}

#[test]
fn a_live_slurm_gpu_capture_replays_under_the_model() {
    // A short run of the capture script (20 jobs, about three minutes) on the machine's
    // Slurm, switched to its GPU profile and back: the script still works, and its capture
    // replays under the model on its own node with every job run.
    let Some((_lock, dir)) = crate::common::live_slurm_capture_with(
        "slurm-gpu-workload.sh",
        &["--short"],
        crate::slurm_model::slurm_unusable(),
    ) else {
        return;
    };
    let captured = read_capture(dir.path());
    assert_eq!(captured.len(), 20, "the short plan's jobs");
    let f = model_against(dir.path(), "slurm");
    println!(
        "live short capture: median {:.0} s, p90 {:.0} s, order {:.3}, mean wait {:.0} s (Slurm {:.0} s)",
        f.median, f.p90, f.order, f.wait, f.reference_wait
    );
}
