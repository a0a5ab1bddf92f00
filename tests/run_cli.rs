//! End-to-end tests of `sitesim run` and `sitesim validate`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use crate::common;

use std::fs;
use std::path::Path;

use common::{assert_fails, scratch, sitesim, stderr, stdout, workspace, write_file};

fn run_into(out: &Path, extra: &[&str]) -> std::process::Output {
    let swf = out.join("workload.swf");
    let mut args = vec![
        "run",
        "--out",
        out.to_str().unwrap(),
        "--swf",
        swf.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    sitesim(&args)
}

#[test]
fn the_default_site_runs_and_the_same_seed_gives_the_same_bytes() {
    let (dir, first) = scratch();
    let second = dir.path().join("second");
    for out in [&first, &second] {
        let result = run_into(out, &["--users", "250", "--weeks", "26"]);
        assert!(result.status.success(), "{}", stderr(&result));
        let table = stdout(&result);
        assert!(
            table.contains("250 users") && table.contains("jobs/hour submitted"),
            "{table}"
        );
    }
    for name in ["jobs.csv", "sessions.csv", "summary.json", "workload.swf"] {
        let a = fs::read(first.join(name)).unwrap();
        assert!(!a.is_empty(), "{name} is empty");
        assert!(
            a == fs::read(second.join(name)).unwrap(),
            "{name} differs between two runs with the same seed"
        );
    }
    // Another seed is another run.
    let third = dir.path().join("third");
    assert!(
        run_into(&third, &["--users", "250", "--weeks", "26", "--seed", "2"])
            .status
            .success()
    );
    assert_ne!(
        fs::read(first.join("jobs.csv")).unwrap(),
        fs::read(third.join("jobs.csv")).unwrap()
    );
}

#[test]
fn outputs_hold_throughput_sessions_and_a_replayable_workload() {
    let (dir, out) = scratch();
    let result = run_into(
        &out,
        &[
            "--users",
            "30",
            "--weeks",
            "2",
            "--scheduler",
            "creasy",
            "--alpha",
            "3000",
        ],
    );
    assert!(result.status.success(), "{}", stderr(&result));

    let summary: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["scheduler"], "creasy-3000");
    assert_eq!(summary["users"], 30);
    let throughput = summary["closed_loop"]["submitted_per_hour"]
        .as_f64()
        .unwrap();
    assert!(throughput > 0.0);
    assert!(
        summary["closed_loop"]["mean_session_jobs"]
            .as_f64()
            .unwrap()
            >= 1.0
    );
    assert!(summary["summary"]["classes"].as_array().unwrap().len() == 3);

    let sessions = fs::read_to_string(out.join("sessions.csv")).unwrap();
    let mut lines = sessions.lines();
    assert_eq!(
        lines.next(),
        Some("user,group,session,jobs,start,end,ended_by")
    );
    let ended: Vec<&str> = lines.map(|l| l.rsplit(',').next().unwrap()).collect();
    assert!(
        ended
            .iter()
            .all(|e| ["abort", "cycle", "end_of_run"].contains(e))
    );
    assert!(ended.contains(&"abort") && ended.contains(&"cycle"));

    let jobs = fs::read_to_string(out.join("jobs.csv")).unwrap();
    let submitted = jobs.lines().count() - 1;
    // The generated workload replays: same jobs, and the header names the machine.
    let swf = fs::read_to_string(out.join("workload.swf")).unwrap();
    assert!(swf.contains("; MaxProcs: 3968"), "{}", &swf[..400]);
    let replay_out = dir.path().join("replay");
    let replayed = sitesim(&[
        "replay",
        out.join("workload.swf").to_str().unwrap(),
        "--out",
        replay_out.to_str().unwrap(),
    ]);
    assert!(replayed.status.success(), "{}", stderr(&replayed));
    let replay_jobs = fs::read_to_string(replay_out.join("jobs.csv")).unwrap();
    assert_eq!(replay_jobs.lines().count() - 1, submitted);
    // Fields 17 and 18: every batch after a user's first depends on a job, with its think time.
    let with_preceding = swf
        .lines()
        .filter(|l| !l.starts_with(';'))
        .filter(|l| l.split_whitespace().nth(16) != Some("-1"))
        .count();
    assert!(with_preceding > 0 && with_preceding < submitted);
}

#[test]
fn validate_stays_within_its_documented_bounds_on_the_default_site() {
    let result = sitesim(&["validate"]);
    let text = stdout(&result);
    assert!(result.status.success(), "{text}\n{}", stderr(&result));
    for name in [
        "think time within a session",
        "break",
        "job size",
        "runtime",
        "size repetition",
        "batch width",
        "daily profile",
        "weekly profile",
    ] {
        assert!(text.contains(name), "{name} not compared:\n{text}");
    }
    assert!(!text.contains("OVER"), "{text}");
}

#[test]
fn the_mixed_site_runs_both_groups() {
    let (_dir, out) = scratch();
    let config = workspace().join("configs/mixed.toml");
    let result = sitesim(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--weeks",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    let sessions = fs::read_to_string(out.join("sessions.csv")).unwrap();
    assert!(sessions.contains(",interactive,") && sessions.contains(",night-batch,"));
}

/// A population file with one group; `site` and `group` add lines to their tables.
fn population(dir: &Path, name: &str, site: &str, group: &str) -> String {
    let text = format!(
        "[site]\nprocessors = 3968\n{site}\n\n[[groups]]\nname = \"g\"\nusers = 5\n{group}\n"
    );
    write_file(dir, name, text.as_bytes())
}

#[test]
fn bad_population_files_are_errors_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = population(dir.path(), "unknown.toml", "", "day_probabilty = 0.5");
    assert_fails(
        &["run", "--config", &unknown],
        "unknown field `day_probabilty`",
    );
    let negative = write_file(
        dir.path(),
        "negative.toml",
        b"[site]\nprocessors = 3968\n[[groups]]\nname = \"g\"\nusers = -5\n",
    );
    let message = assert_fails(&["run", "--config", &negative], "negative.toml");
    assert!(message.contains("users = -5"), "{message}");
    let probability = population(
        dir.path(),
        "probability.toml",
        "",
        "weekday_probability = 1.2",
    );
    assert_fails(
        &["run", "--config", &probability],
        "groups[0].weekday_probability = 1.2: a probability must lie in [0, 1]",
    );
    let zero = write_file(
        dir.path(),
        "zero.toml",
        b"[site]\nprocessors = 0\n[[groups]]\nname = \"g\"\nusers = 5\n",
    );
    assert_fails(
        &["run", "--config", &zero],
        "site.processors = 0: the machine needs at least one processor",
    );
    let small = write_file(
        dir.path(),
        "small.toml",
        b"[site]\nprocessors = 1000\n[[groups]]\nname = \"g\"\nusers = 5\n",
    );
    assert_fails(
        &["run", "--config", &small],
        "its model has jobs of 1152 processors, but the machine has 1000",
    );
    let top = population(dir.path(), "top.toml", "colour = \"blue\"", "");
    assert_fails(&["run", "--config", &top], "unknown field `colour`");
    let models = population(dir.path(), "models.toml", "", "models = \"no/such/dir\"");
    assert_fails(
        &["run", "--config", &models],
        "groups[0].models = \"no/such/dir\"",
    );
    // a user kind's own key is pointed at, not its group's `[[groups]]` line
    let kind_key = write_file(
        dir.path(),
        "kind_key.toml",
        b"[site]\nprocessors = 3968\n[[groups]]\nname = \"a\"\nusers = 5\n[[groups]]\nname = \"g\"\nusers = 5\nweekday_probability = \"x\"\n",
    );
    let message = assert_fails(
        &["run", "--config", &kind_key],
        "TOML parse error at line 9, column 23",
    );
    assert!(
        message.contains("9 | weekday_probability = \"x\"\n  |                       ^^^\n"),
        "{message}"
    );
    assert!(
        message.contains("groups[1].weekday_probability = \"x\""),
        "{message}"
    );
    // estimate_jobs sets how many distinct estimates the modal model draws: 10^12 aborted on
    // allocation
    let estimate_jobs = write_file(
        dir.path(),
        "estimate_jobs.toml",
        b"[site]\nprocessors = 3968\n[[groups]]\nname = \"g\"\nusers = 5\nestimates = \"modal\"\nestimate_jobs = 1000000000000\n",
    );
    assert_fails(
        &["run", "--config", &estimate_jobs],
        "groups[0].estimate_jobs = 1000000000000: must be 1 to 20000000 jobs",
    );
    // a name with a line break made the run's own --swf unreadable by `sitesim replay`
    let newline = write_file(
        dir.path(),
        "newline.toml",
        b"[site]\nprocessors = 3968\n[[groups]]\nname = \"day\\nusers\"\nusers = 5\n",
    );
    assert_fails(
        &["run", "--config", &newline],
        "groups[0].name = \"day\\nusers\": a group's name must be one line",
    );
}

#[test]
fn command_line_overrides_are_checked() {
    let config = workspace().join("configs/mixed.toml");
    assert_fails(
        &["run", "--config", config.to_str().unwrap(), "--users", "10"],
        "--users needs a population with one group",
    );
    assert_fails(&["run", "--processors", "0"], "site.processors = 0");
    assert_fails(
        &["run", "--alpha", "100"],
        "--alpha applies only to --scheduler creasy",
    );
    assert_fails(
        &["run", "--config", "/no/such/site.toml"],
        "/no/such/site.toml: cannot read",
    );
}

#[test]
fn a_closed_stdout_does_not_stop_the_run() {
    // As in `sitesim run --out OUT | head -1`: the reader goes away before the table is printed.
    let (_dir, out) = scratch();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sitesim"))
        .args([
            "run",
            "--users",
            "20",
            "--weeks",
            "1",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut message = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut message).unwrap();
    assert!(status.success(), "{message}");
    assert!(!message.contains("panicked"), "{message}");
    assert!(out.join("jobs.csv").is_file() && out.join("summary.json").is_file());
}

#[test]
fn schlagkamps_setup_runs_one_job_at_a_time_in_working_hours() {
    let (_dir, out) = scratch();
    let config = workspace().join("configs/schlagkamp.toml");
    let result = sitesim(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--processors",
        "128",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    let jobs = fs::read_to_string(out.join("jobs.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(jobs.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    // user -> (submit, end, response) of its jobs
    let mut by_user: std::collections::BTreeMap<String, Vec<(i64, i64, i64)>> = Default::default();
    for row in rows.records() {
        let row = row.unwrap();
        let get = |name: &str| row[col(name)].parse::<i64>().unwrap();
        assert!(get("processors") <= 128, "capped at the machine");
        assert_eq!(get("estimate"), get("runtime"), "exact runtimes");
        // Submitted on a weekday (time 0 is a Monday) between 09:00 and 17:00.
        let submit = get("submit");
        let (day, second) = (submit / 86_400, submit % 86_400);
        assert!(
            day % 7 < 5 && (9 * 3600..17 * 3600).contains(&second),
            "{submit}"
        );
        by_user
            .entry(row[col("user")].to_string())
            .or_default()
            .push((submit, get("end"), get("response")));
    }
    assert!(by_user.len() > 1);
    for jobs in by_user.values_mut() {
        jobs.sort_unstable();
        for pair in jobs.windows(2) {
            let (_, end, response) = pair[0];
            let next = pair[1].0;
            // One job at a time: the next comes after the last ended, at least the lin think
            // time 0.4826 r + 1779 s later (more when delayed to the next working day).
            let think = (0.4826 * response as f64 + 1779.0).round() as i64;
            assert!(next >= end + think, "{pair:?}");
            // Exactly then if that is in the same working day's hours (eq. 8: from the end of
            // the last job, r its response in seconds); else at 09:00 of a later weekday.
            let due = end + think;
            if due / 86_400 == end / 86_400 && due % 86_400 < 17 * 3600 {
                assert_eq!(next, due, "{pair:?}");
            } else if next != due {
                assert_eq!(next % 86_400, 9 * 3600, "{pair:?}");
            }
        }
    }
    // The paper's metrics (section 3), recomputed from jobs.csv: ART the mean response, AWT
    // the mean wait, ASD the mean of response / runtime (not bounded), AWRT the response
    // weighted by processors x runtime, WL the processor-seconds processed.
    let mut rows = csv::Reader::from_reader(jobs.as_bytes());
    let (mut n, mut response, mut wait, mut slowdown) = (0.0, 0.0, 0.0, 0.0);
    let (mut area, mut weighted) = (0.0, 0.0);
    for row in rows.records() {
        let row = row.unwrap();
        let get = |name: &str| row[col(name)].parse::<f64>().unwrap();
        let (r, p, m) = (get("response"), get("runtime"), get("processors"));
        n += 1.0;
        response += r;
        wait += get("wait");
        slowdown += r / p;
        area += p * m;
        weighted += p * m * r;
    }
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let s = &summary["summary"];
    for (name, got, want) in [
        ("ART", &s["response_seconds"]["mean"], response / n),
        ("AWT", &s["wait_seconds"]["mean"], wait / n),
        ("ASD", &s["slowdown"]["mean"], slowdown / n),
        ("AWRT", &s["awrt_seconds"], weighted / area),
    ] {
        let got = got.as_f64().unwrap();
        assert!(
            (got - want).abs() <= 1e-9 * want,
            "{name}: {got} against {want}"
        );
    }
    let sessions = fs::read_to_string(out.join("sessions.csv")).unwrap();
    assert!(
        !sessions.contains(",abort"),
        "Schlagkamp users never take a break"
    );
}

/// Under c120 a user's submissions in one working day (09:00-17:00) are at least 2 h + the
/// response apart: at most 4 a day, whatever the load. So p_a = 0.5 (25 working days a user in
/// expectation over 10 weeks) caps the processed workload at 10 x 25 x 4 jobs; docs/science/schlagkamp.md uses
/// this to show that Fig. 9's c120 workload cannot come from p_a = 0.5.
#[test]
fn schlagkamps_c120_users_submit_at_most_four_jobs_a_working_day() {
    let (dir, out) = scratch();
    let base = fs::read_to_string(workspace().join("configs/schlagkamp.toml")).unwrap();
    let text = base
        .replace("think = \"lin\"", "think = \"c120\"")
        .replace("policy = \"easy\"", "policy = \"fcfs\"");
    let config = write_file(dir.path(), "c120.toml", text.as_bytes());
    let result = sitesim(&["run", "--config", &config, "--out", out.to_str().unwrap()]);
    assert!(result.status.success(), "{}", stderr(&result));
    let jobs = fs::read_to_string(out.join("jobs.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(jobs.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut per_day: std::collections::BTreeMap<(String, i64), u32> = Default::default();
    for row in rows.records() {
        let row = row.unwrap();
        let submit: i64 = row[col("submit")].parse().unwrap();
        *per_day
            .entry((row[col("user")].to_string(), submit / 86_400))
            .or_default() += 1;
    }
    let most = per_day.values().copied().max().unwrap();
    assert!((2..=4).contains(&most), "{most}");
}

/// Runs configs/schlagkamp.toml (FCFS, 128 cores, p_a = 1) with `extra` appended to its group;
/// returns each user's jobs as (submit, end, response), in submission order.
fn schlagkamp_jobs(extra: &str) -> Vec<Vec<(i64, i64, i64)>> {
    let (dir, out) = scratch();
    let base = fs::read_to_string(workspace().join("configs/schlagkamp.toml")).unwrap();
    let text = format!(
        "{}\n{extra}\n",
        base.replace("activity_ratio = 0.5", "activity_ratio = 1.0")
            .replace("policy = \"easy\"", "policy = \"fcfs\"")
            .replace("processors = 1024", "processors = 128")
    );
    let config = write_file(dir.path(), "site.toml", text.as_bytes());
    let result = sitesim(&["run", "--config", &config, "--out", out.to_str().unwrap()]);
    assert!(result.status.success(), "{}", stderr(&result));
    let (header, rows) = common::table(&out.join("jobs.csv"));
    let col = |name: &str| common::column(&header, name);
    let mut by_user: std::collections::BTreeMap<&str, Vec<(i64, i64, i64)>> = Default::default();
    for row in &rows {
        let get = |name: &str| row[col(name)].parse::<i64>().unwrap();
        by_user.entry(row[col("user")].as_str()).or_default().push((
            get("submit"),
            get("end"),
            get("response"),
        ));
    }
    let mut users: Vec<_> = by_user.into_values().collect();
    for jobs in &mut users {
        jobs.sort_unstable();
    }
    users
}

/// Eq. 8 read at the moment a job is submitted: the response a user knows is that of the last of
/// its jobs that had ended by then. With one job at a time that is always the job just before
/// it, the job whose end started the think time (default `think_response = "just_ended"`), under
/// every think-time switch: so the literal reading is the default, not a new one.
#[test]
fn schlagkamps_last_job_ended_at_a_submission_is_the_previous_one() {
    for extra in [
        "",
        "think_from = \"submit\"",
        "think_across_days = \"carry\"",
        "think_response = \"known_at_submit\"",
    ] {
        let users = schlagkamp_jobs(extra);
        assert!(users.len() > 1 && users.iter().all(|jobs| jobs.len() > 50));
        for jobs in &users {
            for (k, &(submit, _, _)) in jobs.iter().enumerate().skip(1) {
                // The user's jobs that had ended by this submission, the last of them.
                let last_ended = jobs
                    .iter()
                    .enumerate()
                    .filter(|(_, j)| j.1 <= submit)
                    .max_by_key(|(_, j)| j.1)
                    .map(|(i, _)| i);
                assert_eq!(last_ended, Some(k - 1), "{extra}: job {k} of {jobs:?}");
                // and none was still running (none of its earlier jobs ended after it).
                assert!(jobs[..k].iter().all(|j| j.1 <= submit), "{extra}");
            }
        }
    }
}

/// `think_response = "known_at_submit"`: the think time after a job uses the response the user
/// knew when it submitted that job, the previous job's (0 for a user's first job), so
/// tt = round(0.4826 r_prev + 1779) after the job's end within the working day, else the next
/// working day's 09:00.
#[test]
fn schlagkamps_think_response_known_at_submit_lags_one_job() {
    let users = schlagkamp_jobs("think_response = \"known_at_submit\"");
    let (mut exact, mut lagged_differs) = (0, 0);
    for jobs in &users {
        for k in 0..jobs.len() - 1 {
            let (_, end, response) = jobs[k];
            let known = if k == 0 { 0 } else { jobs[k - 1].2 };
            let think = (0.4826 * known as f64 + 1779.0).round() as i64;
            let next = jobs[k + 1].0;
            let due = end + think;
            // Time 0 is a Monday: a weekday's working hours.
            if due / 86_400 == end / 86_400
                && (end / 86_400) % 7 < 5
                && (9 * 3600..17 * 3600).contains(&(end % 86_400))
                && due % 86_400 < 17 * 3600
            {
                assert_eq!(next, due, "job {k} of {jobs:?}");
                exact += 1;
                let own = (0.4826 * response as f64 + 1779.0).round() as i64;
                lagged_differs += usize::from(own != think);
            } else {
                assert!(
                    next > end && next % 86_400 == 9 * 3600,
                    "job {k} of {jobs:?}"
                );
            }
        }
    }
    // Most think times fall within the day and most differ from the default's.
    assert!(
        exact > 500 && lagged_differs > exact / 2,
        "{exact} {lagged_differs}"
    );
    assert_ne!(users, schlagkamp_jobs(""), "the reading changes the run");
    let (dir, _out) = scratch();
    let bad = population(
        dir.path(),
        "bad.toml",
        "",
        "kind = \"schlagkamp\"\nthink_response = \"previous\"",
    );
    let message = assert_fails(&["run", "--config", &bad], "think_response");
    assert!(
        message.contains("just_ended") && message.contains("known_at_submit"),
        "{message}"
    );
}

/// `run.measure` picks which jobs submitted in the simulated weeks are measured: all
/// (`submitted`, the default: the simulation runs on until they end), those started by the
/// horizon (`started`) or those ended by it (`ended`). Schlagkamp's users working every day until
/// 23:59 on a small machine leave jobs waiting and running at the horizon.
#[test]
fn run_measure_counts_the_jobs_submitted_started_or_ended_by_the_horizon() {
    let (dir, out) = scratch();
    let base = fs::read_to_string(workspace().join("configs/schlagkamp.toml")).unwrap();
    let base = base
        .replace("activity_ratio = 0.5", "activity_ratio = 1.0")
        .replace("work_end = \"17:00\"", "work_end = \"23:59\"")
        .replace(
            "day_weights = [0.2, 0.2, 0.2, 0.2, 0.2, 0.0, 0.0]",
            "day_weights = [0.1, 0.1, 0.1, 0.1, 0.2, 0.2, 0.2]",
        )
        .replace("weeks = 10", "weeks = 1");
    let horizon: i64 = 7 * 86_400;
    let mut seen = Vec::new();
    for measure in ["", "submitted", "started", "ended"] {
        let text = if measure.is_empty() {
            base.clone()
        } else {
            base.replace("weeks = 1", &format!("weeks = 1\nmeasure = \"{measure}\""))
        };
        let config = write_file(dir.path(), &format!("m{measure}.toml"), text.as_bytes());
        let out = out.join(if measure.is_empty() {
            "default"
        } else {
            measure
        });
        let result = sitesim(&[
            "run",
            "--config",
            &config,
            "--processors",
            "16",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(result.status.success(), "{}", stderr(&result));
        let jobs = fs::read_to_string(out.join("jobs.csv")).unwrap();
        let mut rows = csv::Reader::from_reader(jobs.as_bytes());
        let header = rows.headers().unwrap().clone();
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        let (mut kept, mut response) = (0u64, 0.0);
        for row in rows.records() {
            let row = row.unwrap();
            let get = |name: &str| row[col(name)].parse::<i64>().unwrap();
            assert!(
                get("submit") < horizon,
                "no job is submitted after the horizon"
            );
            let counts = match measure {
                "started" => get("start") < horizon,
                "ended" => get("end") <= horizon,
                _ => true,
            };
            if counts {
                kept += 1;
                response += get("response") as f64;
            }
        }
        let text = fs::read_to_string(out.join("summary.json")).unwrap();
        let summary: serde_json::Value = serde_json::from_str(&text).unwrap();
        let s = &summary["summary"];
        assert_eq!(s["jobs_measured"].as_u64().unwrap(), kept, "{measure}");
        let art = s["response_seconds"]["mean"].as_f64().unwrap();
        assert!(
            (art - response / kept as f64).abs() < 1e-6 * art,
            "{measure}"
        );
        // The default is left out of summary.json, which stays as it was.
        assert_eq!(
            text.contains("\"counted\"") || text.contains("\"measure\""),
            matches!(measure, "started" | "ended"),
            "{measure}"
        );
        seen.push((kept, s["processed_work"].as_f64().unwrap(), jobs));
    }
    // The same simulation each time; fewer jobs measured, the same work inside the weeks.
    assert!(
        seen.iter()
            .all(|(_, work, jobs)| *work == seen[0].1 && *jobs == seen[0].2)
    );
    let kept: Vec<u64> = seen.iter().map(|s| s.0).collect();
    assert!(
        kept[0] == kept[1] && kept[1] > kept[2] && kept[2] > kept[3],
        "{kept:?}"
    );
    let bad = base.replace("weeks = 1", "weeks = 1\nmeasure = \"finished\"");
    let config = write_file(dir.path(), "bad.toml", bad.as_bytes());
    let message = assert_fails(&["run", "--config", &config], "finished");
    assert!(message.contains("ended"), "{message}");
}

#[test]
fn bad_model_parameters_are_errors_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let weights = population(
        dir.path(),
        "weights.toml",
        "",
        "kind = \"schlagkamp\"\nday_weights = [0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0]",
    );
    assert_fails(
        &["run", "--config", &weights],
        "groups[0].day_weights = [0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0]: the probabilities sum to 1.5, not 1",
    );
    let rate = population(
        dir.path(),
        "rate.toml",
        "",
        "kind = \"schlagkamp\"\nthink_slope = -1.0",
    );
    assert_fails(
        &["run", "--config", &rate],
        "groups[0].think_slope = -1: must be a finite number >= 0",
    );
    let f = population(dir.path(), "f.toml", "", "estimates = \"f\"");
    assert_fails(
        &["run", "--config", &f],
        "groups[0].estimates = \"f\": needs estimate_f",
    );
}

#[test]
fn a_site_can_run_on_nodes_with_memory_bandwidth_sharing() {
    let dir = tempfile::tempdir().unwrap();
    let (_out_dir, out) = scratch();
    let nodes = "node_processors = 4\nselection = \"first-continuous\"\nnode_bandwidth = 6000";
    let mix = "bandwidth_mix = [0.8, 0.1, 0.1]\nestimates = \"f-deterministic\"\nestimate_f = 1.0";
    let site = population(dir.path(), "nodes.toml", nodes, mix);
    let result = sitesim(&[
        "run",
        "--config",
        &site,
        "--weeks",
        "2",
        "--scheduler",
        "easy-sjf",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    let printed = stdout(&result);
    assert!(
        printed.contains("jobs stretched by memory-bandwidth sharing"),
        "{printed}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(
        summary["summary"]["penalized_runtime_percent"]
            .as_f64()
            .unwrap()
            > 1.0
    );

    let no_nodes = population(
        dir.path(),
        "no-nodes.toml",
        "",
        "bandwidth_mix = [0.8, 0.1, 0.1]",
    );
    assert_fails(
        &["run", "--config", &no_nodes],
        "groups[0].bandwidth_mix needs a machine of nodes (site.node_processors)",
    );
    let over = population(
        dir.path(),
        "over.toml",
        "node_processors = 4\nnode_bandwidth = 1500",
        "bandwidth_mix = [0.8, 0.1, 0.1]",
    );
    assert_fails(
        &["run", "--config", &over],
        "groups[0].bandwidth_demands: 2000 MB/s per process is above a node's capacity (site.node_bandwidth = 1500)",
    );
    let shares = population(
        dir.path(),
        "shares.toml",
        "node_processors = 4",
        "bandwidth_mix = [0.8, 0.8, 0.1]",
    );
    assert_fails(
        &["run", "--config", &shares],
        "groups[0].bandwidth_mix = [0.8, 0.8, 0.1]: the probabilities sum to 1.7, not 1",
    );
}

#[test]
fn headroom_is_printed_and_written() {
    let (_dir, out) = scratch();
    let done = sitesim(&[
        "run",
        "--users",
        "60",
        "--weeks",
        "2",
        "--processors",
        "1152",
        "--scheduler",
        "creasy",
        "--headroom",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(done.status.success(), "{}", stderr(&done));
    let printed = stdout(&done);
    assert!(printed.contains("headroom "), "{printed}");
    assert!(printed.contains("capture"), "{printed}");
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let h = &summary["closed_loop"]["headroom"];
    let actual = summary["closed_loop"]["submitted_per_hour"]
        .as_f64()
        .unwrap();
    let uncontended = h["uncontended_submitted_per_hour"].as_f64().unwrap();
    let easy = h["easy_submitted_per_hour"].as_f64().unwrap();
    assert!(uncontended >= actual && uncontended >= easy, "{h}");
    let headroom = h["headroom"].as_f64().unwrap();
    assert!(
        (headroom - (uncontended / actual - 1.0)).abs() < 1e-12,
        "{h}"
    );
    // Without the flag, summary.json has no headroom.
    let (_dir2, plain) = scratch();
    let done = run_into(&plain, &["--users", "20", "--weeks", "1"]);
    assert!(done.status.success(), "{}", stderr(&done));
    let summary = fs::read_to_string(plain.join("summary.json")).unwrap();
    assert!(!summary.contains("headroom"));
}

#[test]
fn bad_feedback_models_are_errors_naming_the_file_group_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "feedback = \"queue\"",
            "groups[0].feedback = \"queue\": unknown variant `queue`, expected one of `response`, `wait`, `slowdown`",
        ),
        // A key of another feedback model, even at its default value.
        (
            "feedback_b = 0.05",
            "groups[0].feedback_b = 0.05: applies to feedback = \"wait\" or \"slowdown\" only (this group has feedback = \"response\", whose parameters are continue_a and continue_b)",
        ),
        (
            "feedback = \"response\"\nfeedback_a = 0.8",
            "groups[0].feedback_a = 0.8: applies to feedback = \"wait\" or \"slowdown\" only",
        ),
        (
            "feedback = \"wait\"\ncontinue_b = 0.05",
            "groups[0].continue_b = 0.05: applies to feedback = \"response\" (the default) only (this group has feedback = \"wait\", whose parameters are feedback_a and feedback_b)",
        ),
        (
            "feedback = \"wait\"\nfeedback_a = 1.5",
            "groups[0].feedback_a = 1.5: a probability must lie in [0, 1]",
        ),
        (
            "feedback = \"slowdown\"\nfeedback_b = -0.5",
            "groups[0].feedback_b = -0.5: must be a finite number >= 0 (dimensionless)",
        ),
        (
            "feedback = \"wait\"\nfeedback_b = nan",
            "groups[0].feedback_b = NaN: must be a finite number >= 0 (per minute)",
        ),
        (
            "feedback = \"slowdown\"\nfeedback_a = \"high\"",
            "groups[0].feedback_a = \"high\": invalid type",
        ),
    ];
    for (i, (group, wanted)) in cases.into_iter().enumerate() {
        let name = format!("feedback{i}.toml");
        let file = population(dir.path(), &name, "", group);
        let message = assert_fails(&["run", "--config", &file], wanted);
        assert!(message.contains(&name), "{message}");
    }
}

#[test]
fn batches_csv_holds_each_batch_and_its_decision() {
    let (dir, out) = scratch();
    let config = population(
        dir.path(),
        "wait.toml",
        "",
        "feedback = \"wait\"\nfeedback_b = 0.1",
    );
    let result = sitesim(&[
        "run",
        "--config",
        &config,
        "--users",
        "40",
        "--weeks",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    assert!(stdout(&result).contains("of deciding jobs waited"));
    let text = fs::read_to_string(out.join("batches.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "user,group,session,batch,jobs,job_id,end,wait,runtime,response,continue_probability,decision"
        )
    );
    let mut jobs = 0;
    let mut decisions = std::collections::BTreeSet::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 12, "{line}");
        jobs += f[4].parse::<usize>().unwrap();
        let wait: f64 = f[7].parse().unwrap();
        // The wait model: p = a / (b w + 1), w in minutes, a = 0.8 by default.
        match f[11] {
            "continue" | "break" => {
                let p: f64 = f[10].parse().unwrap();
                assert!(
                    (p - 0.8 / (0.1 * wait / 60.0 + 1.0)).abs() < 1e-12,
                    "{line}"
                );
            }
            "cycle" | "end" => assert_eq!(f[10], "", "{line}"),
            other => panic!("decision {other:?}"),
        }
        decisions.insert(f[11].to_string());
    }
    assert!(
        decisions.contains("continue")
            && decisions.contains("break")
            && decisions.contains("cycle")
    );
    // Every job ends, so every job is in a completed batch.
    let submitted = fs::read_to_string(out.join("jobs.csv"))
        .unwrap()
        .lines()
        .count()
        - 1;
    assert_eq!(jobs, submitted);
    let summary: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("summary.json")).unwrap()).unwrap();
    let groups = &summary["site"]["groups"][0];
    assert_eq!(
        (groups["feedback"].as_str(), groups["feedback_b"].as_f64()),
        (Some("wait"), Some(0.1))
    );
    assert!(
        summary["closed_loop"]["mean_continue_probability"]
            .as_f64()
            .unwrap()
            <= 0.8
    );
}
