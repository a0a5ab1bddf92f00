//! Node failures end to end: a site's `[failures]` in `sitesim run` (failures drawn from the
//! run's seed, the same under every scheduler; the jobs they kill requeued or lost, and what
//! summary.json reports of them), and bad failures named with the file and the key, leaving no
//! summary behind.

use std::path::Path;

use crate::common::{assert_fails, column, scratch, sitesim, stderr, table, write_file};

/// The default site's machine and calendar, 40 users for two weeks, with `extra` appended.
fn site(dir: &Path, name: &str, extra: &str) -> String {
    let text = format!(
        "[site]\nprocessors = 3968\nstart = \"2024-01-01T00:00:00\"\n\n[run]\nweeks = 2\nseed = 3\n\n[[groups]]\nname = \"users\"\nusers = 40\n\n{extra}"
    );
    write_file(dir, name, text.as_bytes())
}

/// 31 nodes of 128 processors failing every 200 hours each: about 52 failures in two weeks.
const FAILURES: &str = "[failures]\nnode_processors = 128\nmtbf_hours = 200\nrepair_hours = 12\n";

fn summary(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn run(config: &str, scheduler: &str, out: &Path) {
    let run = sitesim(&[
        "run",
        "--config",
        config,
        "--scheduler",
        scheduler,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
}

#[test]
fn failures_are_the_same_under_every_scheduler_and_kill_jobs() {
    let (dir, _) = scratch();
    let config = site(dir.path(), "site.toml", FAILURES);
    let mut seen = Vec::new();
    for scheduler in ["fcfs", "easy", "slurm"] {
        let out = dir.path().join(scheduler);
        run(&config, scheduler, &out);
        let failures = summary(&out)["failures"].clone();
        assert!(failures["jobs_killed"].as_u64().unwrap() > 0, "{failures}");
        assert!(failures["processor_hours_lost"].as_f64().unwrap() > 0.0);
        assert_eq!(failures["requeued"].as_bool(), Some(true));
        seen.push((
            failures["failures"].as_u64().unwrap(),
            failures["processor_hours_down"].as_f64().unwrap(),
        ));
    }
    // common random numbers: the failures and their repairs do not depend on the scheduler
    assert!(seen.iter().all(|s| *s == seen[0]), "{seen:?}");
    assert!(seen[0].0 > 20, "{seen:?}");
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_lost_jobs_are_reported() {
    let (dir, _) = scratch();
    let lost = format!("{FAILURES}requeue = false\n");
    let config = site(dir.path(), "site.toml", &lost);
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run(&config, "easy", &a);
    run(&config, "easy", &b);
    for file in ["jobs.csv", "sessions.csv", "summary.json"] {
        assert_eq!(
            std::fs::read(a.join(file)).unwrap(),
            std::fs::read(b.join(file)).unwrap(),
            "{file}"
        );
    }
    let failures = &summary(&a)["failures"];
    assert_eq!(failures["requeued"].as_bool(), Some(false));
    assert!(failures["jobs_killed"].as_u64().unwrap() > 0, "{failures}");
}

/// The small site of node types (`common::node_site`) whose nodes fail every 60 hours each;
/// a killed job is lost (so its record ends at the failure).
const NODE_FAILURES: &str = "[failures]\nmtbf_hours = 60\nrepair_hours = 6\nrequeue = false\n";

#[test]
fn a_failed_node_of_a_machine_of_node_types_kills_its_jobs_and_runs_none_until_repaired() {
    let (dir, _) = scratch();
    let config = crate::common::node_site(dir.path(), "gpu-site.toml", NODE_FAILURES);
    let mut periods_seen = None;
    for scheduler in ["fcfs", "easy", "slurm"] {
        let out = dir.path().join(scheduler);
        run(&config, scheduler, &out);
        // Every failure names its node; the same failures strike the same nodes under every
        // rule (common random numbers: the struck node depends on the nodes down only).
        let periods = std::fs::read_to_string(out.join("outages.csv")).unwrap();
        let (oh, failures) = table(&out.join("outages.csv"));
        assert!(failures.len() > 10, "{periods}");
        match &periods_seen {
            None => periods_seen = Some(periods.clone()),
            Some(seen) => assert_eq!(seen, &periods, "{scheduler}"),
        }
        let (jh, jobs) = table(&out.join("jobs.csv"));
        let (nh, shares) = table(&out.join("nodes.csv"));
        let runs: std::collections::HashMap<&str, (i64, i64, f64)> = jobs
            .iter()
            .map(|r| {
                let n = |c: &str| r[column(&jh, c)].parse::<i64>().unwrap();
                let gpus = n("gres/gpu") as f64;
                (
                    r[column(&jh, "job_id")].as_str(),
                    (n("start"), n("end"), gpus),
                )
            })
            .collect();
        let (mut killed, mut gpu_seconds) = (std::collections::BTreeSet::new(), 0.0);
        for f in &failures {
            let node = &f[column(&oh, "node")];
            let from: i64 = f[column(&oh, "from")].parse().unwrap();
            let to: i64 = f[column(&oh, "to")].parse().unwrap();
            assert!(node.starts_with("cpu") || node.starts_with("gpu"), "{f:?}");
            for share in shares.iter().filter(|s| &s[column(&nh, "node")] == node) {
                let job = share[column(&nh, "job_id")].as_str();
                let (start, end, gpus) = runs[job];
                // nothing runs on a node while it is down
                assert!(
                    end <= from || start >= to,
                    "{scheduler}: job {job} ran [{start}, {end}) on {node}, down over [{from}, {to})"
                );
                // the jobs on it when it failed were killed then (their records end there)
                if end == from && start < from && killed.insert(job) {
                    gpu_seconds += (end - start) as f64 * gpus;
                }
            }
        }
        let reported = &summary(&out)["failures"];
        assert_eq!(
            reported["jobs_killed"].as_u64(),
            Some(killed.len() as u64),
            "{reported}"
        );
        assert!(!killed.is_empty(), "{scheduler}: no job killed");
        let gpu_hours = reported["gpu_hours_lost"].as_f64().unwrap();
        assert!(
            (gpu_hours - gpu_seconds / 3600.0).abs() < 1e-6,
            "{gpu_hours} vs {}",
            gpu_seconds / 3600.0
        );
    }
}

#[test]
fn a_run_without_failures_reports_none() {
    let (dir, _) = scratch();
    let config = site(dir.path(), "site.toml", "");
    let out = dir.path().join("out");
    run(&config, "easy", &out);
    assert!(summary(&out).get("failures").is_none());
}

#[test]
fn bad_failures_are_named_and_leave_no_summary() {
    let (dir, _) = scratch();
    let cases: [(&str, &str, &str); 6] = [
        (
            "[failures]\nnode_processors = 128\nmtbf_hours = 0\nrepair_hours = 12\n",
            "",
            "failures.mtbf_hours",
        ),
        (
            "[failures]\nnode_processors = 5000\nmtbf_hours = 100\nrepair_hours = 12\n",
            "",
            "failures.node_processors",
        ),
        (
            "[failures]\nnode_processors = 128\nmtbf_hours = 100\nrepair = 12\n",
            "",
            "repair",
        ),
        (
            "[failures]\nnode_processors = 128\nmtbf_hours = 100\nrepair_hours = 12\nrequeue_delay_s = -1\n",
            "",
            "failures.requeue_delay_s",
        ),
        (FAILURES, "conservative", "conservative backfilling rule"),
        (
            "[failures]\nmtbf_hours = 100\nrepair_hours = 12\n",
            "",
            "failures.node_processors: missing",
        ),
    ];
    for (i, (failures, scheduler, expected)) in cases.iter().enumerate() {
        let config = site(dir.path(), &format!("site-{i}.toml"), failures);
        let mut args = vec!["run", "--config", &config];
        if !scheduler.is_empty() {
            args.extend(["--scheduler", scheduler]);
        }
        let message = assert_fails(&args, expected);
        assert!(message.contains(&format!("site-{i}.toml")), "{message}");
    }
}

#[test]
fn a_replay_takes_failures_from_its_outages_file_and_its_seed() {
    let (dir, _) = scratch();
    let config = site(dir.path(), "site.toml", "");
    let workload = dir.path().join("workload.swf");
    let made = sitesim(&[
        "run",
        "--config",
        &config,
        "--swf",
        workload.to_str().unwrap(),
        "--out",
        dir.path().join("made").to_str().unwrap(),
    ]);
    assert!(made.status.success(), "{}", stderr(&made));
    let outages = write_file(
        dir.path(),
        "outages.toml",
        format!("start = \"2024-01-01T00:00:00\"\n\n{FAILURES}").as_bytes(),
    );
    let replay = |seed: &str, name: &str| {
        let out = dir.path().join(name);
        let run = sitesim(&[
            "replay",
            workload.to_str().unwrap(),
            "--outages",
            &outages,
            "--seed",
            seed,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
        summary(&out)["failures"].clone()
    };
    let (a, again, other) = (replay("1", "a"), replay("1", "b"), replay("2", "c"));
    assert!(a["failures"].as_u64().unwrap() > 0, "{a}");
    assert!(a["jobs_killed"].as_u64().unwrap() > 0, "{a}");
    assert_eq!(a, again);
    assert_ne!(a["processor_hours_down"], other["processor_hours_down"]);
}
