//! End-to-end tests of what `sitesim run` writes for joining and grouping (issue 18): jobs.csv's
//! `group` and `session`, one user numbering (from 1) in every file, per-group summaries, and the
//! SWF export's round trip through `sitesim replay`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use common::{column, scratch, sitesim, stderr, stdout, table, workspace};

/// Runs configs/mixed.toml (two groups) for two weeks into `out`, with the SWF export.
fn run_mixed(out: &Path) -> String {
    let config = workspace().join("configs/mixed.toml");
    let swf = out.join("workload.swf");
    let result = sitesim(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--weeks",
        "2",
        "--out",
        out.to_str().unwrap(),
        "--swf",
        swf.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    stdout(&result)
}

#[test]
fn jobs_join_sessions_on_user_and_session_with_one_user_numbering() {
    let (_dir, out) = scratch();
    let console = run_mixed(&out);

    let (jh, jobs) = table(&out.join("jobs.csv"));
    let (sh, sessions) = table(&out.join("sessions.csv"));
    let (bh, batches) = table(&out.join("batches.csv"));
    assert_eq!(&jh[..4], ["job_id", "user", "group", "session"]);
    let (ju, jg, js) = (
        column(&jh, "user"),
        column(&jh, "group"),
        column(&jh, "session"),
    );
    // Every job's (user, session) is a session of sessions.csv, of the same group, and the
    // session's job count is the number of jobs that name it.
    let mut per_session: BTreeMap<(u32, u32), (String, u32)> = BTreeMap::new();
    for j in &jobs {
        let key = (j[ju].parse().unwrap(), j[js].parse().unwrap());
        let entry = per_session.entry(key).or_insert_with(|| (j[jg].clone(), 0));
        assert_eq!(entry.0, j[jg], "a session's jobs in two groups");
        entry.1 += 1;
    }
    let (su, sg, ss, sj) = (
        column(&sh, "user"),
        column(&sh, "group"),
        column(&sh, "session"),
        column(&sh, "jobs"),
    );
    let from_sessions: BTreeMap<(u32, u32), (String, u32)> = sessions
        .iter()
        .filter(|s| s[sj] != "0")
        .map(|s| {
            (
                (s[su].parse().unwrap(), s[ss].parse().unwrap()),
                (s[sg].clone(), s[sj].parse().unwrap()),
            )
        })
        .collect();
    assert_eq!(per_session, from_sessions);

    // Users are numbered from 1 in every file, and the same users appear in all of them.
    let users = |rows: &[Vec<String>], c: usize| -> BTreeSet<u32> {
        rows.iter().map(|r| r[c].parse().unwrap()).collect()
    };
    let in_jobs = users(&jobs, ju);
    assert_eq!(in_jobs.first(), Some(&1));
    assert_eq!(users(&sessions, su), in_jobs);
    assert!(users(&batches, column(&bh, "user")).is_subset(&in_jobs));
    // The SWF: user (field 12) as in jobs.csv, group (field 13) the group's position in the
    // file from 1, named in the header.
    let swf = fs::read_to_string(out.join("workload.swf")).unwrap();
    assert!(
        swf.contains("; Note: groups (field 13): 1 = interactive, 2 = night-batch"),
        "{swf:.2000}"
    );
    let group_ids = BTreeMap::from([("interactive", "1"), ("night-batch", "2")]);
    let records: Vec<Vec<&str>> = swf
        .lines()
        .filter(|l| !l.starts_with(';'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(records.len(), jobs.len());
    for (r, j) in records.iter().zip(&jobs) {
        assert_eq!(r[0], j[0], "job number");
        assert_eq!(r[11], j[ju], "user of job {}", j[0]);
        assert_eq!(r[12], group_ids[j[jg].as_str()], "group of job {}", j[0]);
    }

    // Per-group summaries: summary.json's `groups` and the console's table.
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let groups = summary["groups"].as_array().unwrap();
    let names: Vec<&str> = groups.iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["interactive", "night-batch"]);
    let total = |path: &str| -> u64 {
        groups
            .iter()
            .map(|g| g.pointer(path).unwrap().as_u64().unwrap())
            .sum()
    };
    assert_eq!(
        total("/summary/jobs_measured"),
        summary["summary"]["jobs_measured"].as_u64().unwrap()
    );
    assert_eq!(
        total("/closed_loop/sessions"),
        summary["closed_loop"]["sessions"].as_u64().unwrap()
    );
    assert_eq!(total("/users"), summary["users"].as_u64().unwrap());
    for g in groups {
        assert!(g["summary"]["wait_seconds"]["mean"].is_number(), "{g}");
        assert!(g["closed_loop"]["submitted_per_hour"].as_f64().unwrap() > 0.0);
    }
    assert!(console.contains("jobs/hour"), "{console}");
    let rows: Vec<&str> = console
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("group "))
        .collect();
    assert!(rows.len() >= 3, "no per-group table: {console}");
    assert!(rows[1].trim_start().starts_with("interactive"), "{console}");
    assert!(rows[2].trim_start().starts_with("night-batch"), "{console}");
}

#[test]
fn a_one_group_site_has_no_group_section() {
    let (_dir, out) = scratch();
    let result = sitesim(&[
        "run",
        "--users",
        "5",
        "--weeks",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(summary.get("groups").is_none(), "{summary}");
    assert!(!stdout(&result).contains("jobs/hour  sessions"));
    let (header, jobs) = table(&out.join("jobs.csv"));
    let g = column(&header, "group");
    assert!(jobs.iter().all(|j| !j[g].is_empty()));
}

#[test]
fn replaying_the_exported_swf_reports_the_runs_killed_jobs() {
    let (dir, out) = scratch();
    run_mixed(&out);
    let replayed = dir.path().join("replayed");
    let result = sitesim(&[
        "replay",
        out.join("workload.swf").to_str().unwrap(),
        "--out",
        replayed.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    let (rh, run_jobs) = table(&out.join("jobs.csv"));
    let (ph, replay_jobs) = table(&replayed.join("jobs.csv"));
    assert_eq!(rh, ph, "run and replay write the same columns");
    let killed = |rows: &[Vec<String>]| {
        rows.iter()
            .filter(|r| r[column(&rh, "killed")] == "1")
            .count()
    };
    assert!(
        killed(&run_jobs) > 0,
        "the run killed no job: no round trip tested"
    );
    assert_eq!(killed(&replay_jobs), killed(&run_jobs));
    // The same jobs, users and schedule (the open-loop replay of a closed-loop run under the same
    // scheduler); a replay has no groups or sessions.
    let owner = [
        column(&rh, "group"),
        column(&rh, "session"),
        column(&rh, "batch"),
    ];
    for (a, b) in run_jobs.iter().zip(&replay_jobs) {
        assert!(owner.iter().all(|&c| b[c].is_empty()), "{b:?}");
        let same = |r: &Vec<String>| -> Vec<String> {
            r.iter()
                .enumerate()
                .filter(|(i, _)| !owner.contains(i))
                .map(|(_, v)| v.clone())
                .collect()
        };
        assert_eq!(same(a), same(b));
    }
    let count = |dir: &Path| -> u64 {
        let v: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
        v["summary"]["jobs_killed"].as_u64().unwrap()
    };
    assert_eq!(count(&replayed), count(&out));
}

#[test]
fn a_log_job_failed_or_cancelled_at_its_limit_replays_as_killed() {
    let (dir, out) = scratch();
    // Jobs 1-3 ran exactly their requested 100 s: failed (0), cancelled (5), completed (1); job
    // 4 failed early. Only 1 and 2 were stopped at their limit.
    let swf = common::write_file(
        dir.path(),
        "limits.swf",
        b"; MaxProcs: 4\n\
          1 0 0 100 1 -1 -1 1 100 -1 0 1 1 -1 -1 -1 -1 -1\n\
          2 0 0 100 1 -1 -1 1 100 -1 5 1 1 -1 -1 -1 -1 -1\n\
          3 0 0 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1\n\
          4 0 0 50 1 -1 -1 1 100 -1 0 1 1 -1 -1 -1 -1 -1\n",
    );
    let result = sitesim(&["replay", &swf, "--out", out.to_str().unwrap()]);
    assert!(result.status.success(), "{}", stderr(&result));
    let (h, jobs) = table(&out.join("jobs.csv"));
    let killed: Vec<&str> = jobs
        .iter()
        .map(|j| j[column(&h, "killed")].as_str())
        .collect();
    assert_eq!(killed, ["1", "1", "0", "0"]);
    // With a model's estimates the logged limit is not the job's limit: nothing is marked.
    let exact = dir.path().join("exact");
    let result = sitesim(&[
        "replay",
        &swf,
        "--estimates",
        "exact",
        "--out",
        exact.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    let (h, jobs) = table(&exact.join("jobs.csv"));
    assert!(jobs.iter().all(|j| j[column(&h, "killed")] == "0"));
}

/// The table of docs/reference/outputs.md: (file, column) -> unit.
fn documented_columns() -> BTreeMap<(String, String), String> {
    let page = fs::read_to_string(workspace().join("docs/reference/outputs.md")).unwrap();
    let mut columns = BTreeMap::new();
    for line in page.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | file | column(s) | unit | meaning |
        if cells[1].ends_with(".csv") {
            for name in cells[2].split('`').skip(1).step_by(2) {
                columns.insert(
                    (cells[1].to_string(), name.to_string()),
                    cells[3].to_string(),
                );
            }
        }
    }
    columns
}

#[test]
fn the_outputs_page_gives_every_output_column_a_unit() {
    let columns = documented_columns();
    let (_dir, out) = scratch();
    run_mixed(&out);
    let lacks = |file: &str, column: &str| {
        format!("docs/reference/outputs.md lacks {file} column {column}")
    };
    for file in ["jobs.csv", "sessions.csv", "batches.csv"] {
        let (header, _) = table(&out.join(file));
        for column in header {
            assert!(
                columns.contains_key(&(file.to_string(), column.clone())),
                "{}",
                lacks(file, &column)
            );
        }
    }
    // the Slurm model's columns and shares.csv
    let (_slurm_dir, slurm) = scratch();
    let result = sitesim(&[
        "run",
        "--users",
        "10",
        "--weeks",
        "1",
        "--scheduler",
        "slurm",
        "--out",
        slurm.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    for file in ["jobs.csv", "shares.csv"] {
        let (header, _) = table(&slurm.join(file));
        for column in header {
            assert!(
                columns.contains_key(&(file.to_string(), column.clone())),
                "{}",
                lacks(file, &column)
            );
        }
    }
    for column in scenario::tables::COLUMNS {
        assert!(
            columns.contains_key(&("results.csv".to_string(), column.to_string())),
            "{}",
            lacks("results.csv", column)
        );
    }
    for column in ["seed", "metric", "unit", "value"] {
        assert!(
            columns.contains_key(&("runs.csv".to_string(), column.to_string())),
            "{}",
            lacks("runs.csv", column)
        );
    }
}

#[test]
fn a_dynp_sweep_reports_dynps_policy_use() {
    let (dir, out) = scratch();
    let sweep = common::write_file(
        dir.path(),
        "sweep.toml",
        b"seeds = [1]\n[[axes]]\nname = \"scheduler\"\nkey = \"scheduler\"\nvalues = [{ policy = \"dynp\" }, { policy = \"easy\" }]\n[[axes]]\nname = \"users\"\nkey = \"groups.0.users\"\nvalues = [20]\n[[axes]]\nname = \"weeks\"\nkey = \"run.weeks\"\nvalues = [1]\n",
    );
    let result = sitesim(&[
        "sweep",
        &sweep,
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        "1",
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    let (h, rows) = table(&out.join("results.csv"));
    let (scheduler, metric, unit, mean) = (
        column(&h, "scheduler"),
        column(&h, "metric"),
        column(&h, "unit"),
        column(&h, "mean"),
    );
    let cell = |s: &str, m: &str| {
        rows.iter()
            .find(|r| r[scheduler] == s && r[metric] == m)
            .unwrap_or_else(|| panic!("no row {s} {m}"))
            .clone()
    };
    let decisions = cell("dynp-7200-9000", "dynp_decisions");
    assert_eq!(decisions[unit], "decisions");
    assert!(
        decisions[mean].parse::<f64>().unwrap() > 0.0,
        "{decisions:?}"
    );
    let started: f64 = ["fcfs", "sjf", "ljf"]
        .iter()
        .map(|p| {
            cell("dynp-7200-9000", &format!("dynp_jobs_{p}"))[mean]
                .parse::<f64>()
                .unwrap()
        })
        .sum();
    assert!(started > 0.0);
    assert_eq!(
        cell("easy", "dynp_decisions")[mean],
        "",
        "undefined under EASY"
    );
    assert_eq!(cell("easy", "wait_mean")[unit], "s");
}

#[test]
fn a_second_command_into_the_same_out_is_refused_or_replaces_with_force() {
    let (_dir, out) = common::scratch();
    let o = out.to_str().unwrap();
    let r = common::sitesim(&["run", "--users", "10", "--weeks", "1", "--out", o]);
    assert!(r.status.success(), "{}", common::stderr(&r));
    let kth = common::trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let replay = ["replay", kth.as_str(), "--first-jobs", "500", "--out", o];
    let r = common::sitesim(&replay);
    assert!(!r.status.success());
    let message = common::stderr(&r);
    // (a recipe's new format adds its file to the list)
    assert!(
        message.contains(
            "already holds the outputs of a run (jobs.csv, sessions.csv, batches.csv, summary.json"
        ) && message.contains("); give --force"),
        "{message}"
    );
    assert!(
        out.join("sessions.csv").exists(),
        "a refused command touches nothing"
    );
    // --force: the replay's files replace the run's, and the run's others are gone.
    let mut forced = replay.to_vec();
    forced.push("--force");
    let r = common::sitesim(&forced);
    assert!(r.status.success(), "{}", common::stderr(&r));
    assert!(out.join("jobs.csv").exists() && out.join("summary.json").exists());
    assert!(!out.join("sessions.csv").exists() && !out.join("batches.csv").exists());
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(summary.contains("\"command\": \"replay\""));
}
