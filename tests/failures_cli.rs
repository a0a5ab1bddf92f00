//! Node failures end to end: a site's `[failures]` in `sitesim run` (failures drawn from the
//! run's seed, the same under every scheduler; the jobs they kill requeued or lost, and what
//! summary.json reports of them), and bad failures named with the file and the key, leaving no
//! summary behind.

use std::path::Path;

use crate::common::{assert_fails, scratch, sitesim, stderr, write_file};

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
    let cases: [(&str, &str, &str); 5] = [
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
