//! Outages end to end: a site's `[[outages]]` in `sitesim run` (a weekly maintenance window
//! that no job's run reaches into, a drain, a reservation for a group), a replayed dump's
//! reservation for its users, what summary.json reports of them, and bad outages named with
//! the file and the key, leaving no summary behind.

use std::path::Path;

use crate::common::{assert_fails, column, scratch, sitesim, stderr, table, trace, write_file};

/// The default site's machine and calendar (a Monday start), 40 users for two weeks, with
/// `outages` appended.
fn site(dir: &Path, outages: &str) -> String {
    let text = format!(
        "[site]\nprocessors = 3968\nstart = \"2024-01-01T00:00:00\"\n\n[run]\nweeks = 2\nseed = 3\n\n[[groups]]\nname = \"users\"\nusers = 40\n\n{outages}"
    );
    write_file(dir, "site.toml", text.as_bytes())
}

const WEEKLY: &str =
    "[[outages]]\nname = \"weekly\"\nevery = \"tuesday\"\nfrom = \"08:00\"\nto = \"16:00\"\n";

/// Tuesday 08:00-16:00 of the run's two weeks, seconds.
fn windows() -> [(i64, i64); 2] {
    let tuesday = 86_400;
    [0, 1].map(|week| {
        let day = tuesday + week * 604_800;
        (day + 8 * 3600, day + 16 * 3600)
    })
}

/// A summary's mean wait, seconds.
fn mean_wait(summary: &serde_json::Value) -> f64 {
    summary["summary"]["wait_seconds"]["mean"].as_f64().unwrap()
}

/// Checks an outage's `cost` against the summaries of the run `with` it and the run `without`
/// it: the mean wait without it and the wait it added, exactly.
fn assert_wait_cost(
    cost: &serde_json::Value,
    with: &serde_json::Value,
    without: &serde_json::Value,
) {
    assert_eq!(
        cost["wait_mean_without_s"].as_f64(),
        Some(mean_wait(without))
    );
    assert_eq!(
        cost["wait_added_s"].as_f64(),
        Some(mean_wait(with) - mean_wait(without))
    );
}

fn summary(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Runs the site of `config` under `scheduler` into `dir/out-SCHEDULER`, which it returns.
fn run_site(dir: &Path, config: &str, scheduler: &str) -> std::path::PathBuf {
    let out = dir.join(format!("out-{scheduler}"));
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
    out
}

#[test]
fn no_job_runs_in_a_weekly_maintenance_window() {
    let (dir, _) = scratch();
    let config = site(dir.path(), WEEKLY);
    for scheduler in ["fcfs", "easy", "slurm"] {
        let out = run_site(dir.path(), &config, scheduler);
        let (header, rows) = table(&out.join("jobs.csv"));
        let (start, end) = (column(&header, "start"), column(&header, "end"));
        assert!(rows.len() > 100, "{scheduler}: {} jobs", rows.len());
        let mut before_a_window = 0;
        for row in &rows {
            let (s, e): (i64, i64) = (row[start].parse().unwrap(), row[end].parse().unwrap());
            for (from, to) in windows() {
                assert!(
                    !(s < to && e > from && e > s),
                    "{scheduler}: a job ran [{s}, {e}) in the window [{from}, {to})"
                );
                if e <= from && e > from - 6 * 3600 && s < e {
                    before_a_window += 1;
                }
            }
        }
        // backfilling still runs jobs that end before a window (FCFS stops at a first job
        // that would reach into it, and may leave the machine idle until the window's end)
        assert!(
            scheduler == "fcfs" || before_a_window > 0,
            "{scheduler}: no job ended in the six hours before a window"
        );
        let outages = &summary(&out)["outages"];
        // 16 hours of 336 without the machine's 3,968 processors
        let availability = outages["availability"].as_f64().unwrap();
        assert!(
            (availability - (1.0 - 16.0 / 336.0)).abs() < 1e-12,
            "{availability}"
        );
        assert_eq!(outages["processor_hours_out"].as_f64(), Some(16.0 * 3968.0));
        assert_eq!(outages["outages"][0]["periods"].as_u64(), Some(2));
    }
}

#[test]
fn a_run_without_outages_reports_none() {
    let (dir, _) = scratch();
    let config = site(dir.path(), "");
    let out = dir.path().join("out");
    let run = sitesim(&["run", "--config", &config, "--out", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(summary(&out).get("outages").is_none());
    assert!(!out.join("outages.csv").exists());
}

#[test]
fn outages_csv_lists_the_periods_and_plot_run_shades_them() {
    let (dir, _) = scratch();
    let failures = "[failures]\nnode_processors = 128\nmtbf_hours = 200\nrepair_hours = 12\n";
    let config = site(dir.path(), &format!("{WEEKLY}\n{failures}"));
    let out = dir.path().join("out");
    let run = sitesim(&["run", "--config", &config, "--out", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    let (header, rows) = table(&out.join("outages.csv"));
    assert_eq!(header, ["name", "kind", "from", "to", "processors", "node"]);
    // a machine of counted processors names no node
    assert!(rows.iter().all(|r| r[5].is_empty()), "{rows:?}");
    let maintenance: Vec<(i64, i64)> = (rows.iter())
        .filter(|r| r[1] == "maintenance")
        .map(|r| {
            assert_eq!((r[0].as_str(), r[4].as_str()), ("weekly", "3968"));
            (r[2].parse().unwrap(), r[3].parse().unwrap())
        })
        .collect();
    assert_eq!(maintenance, windows());
    let failed: Vec<&Vec<String>> = rows.iter().filter(|r| r[1] == "failure").collect();
    // every failure of the run, the warm-up's too; summary.json counts the measured window's
    let counted = summary(&out)["failures"]["failures"].as_u64().unwrap();
    assert!(failed.len() as u64 >= counted && counted > 10, "{counted}");
    assert!(failed.iter().all(|r| r[4] == "128"));
    let starts: Vec<i64> = rows.iter().map(|r| r[2].parse().unwrap()).collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "by start");
    // the figures: processors out of service under the utilization's top, the windows
    // shaded on the queue
    let figures = dir.path().join("figures");
    let plot = sitesim(&[
        "plot-run",
        out.to_str().unwrap(),
        "--out",
        figures.to_str().unwrap(),
    ]);
    assert!(plot.status.success(), "{}", stderr(&plot));
    let utilization = std::fs::read_to_string(figures.join("utilization.csv")).unwrap();
    assert!(utilization.contains("\nout of service,"), "{utilization}");
    let queue = std::fs::read_to_string(figures.join("queue.csv")).unwrap();
    assert!(queue.contains("\noutage,"), "{queue}");
}

#[test]
fn a_drain_is_reported_and_slows_the_site() {
    let (dir, _) = scratch();
    // most of the machine drained for the whole first week: jobs wait longer
    let drain = "[[outages]]\nname = \"repair\"\nkind = \"drain\"\nfrom = \"2024-01-01T00:00:00\"\nto = \"2024-01-08T00:00:00\"\nnodes = \"90%\"\n";
    let wait = |outages: &str, name: &str| -> f64 {
        let config = site(dir.path(), outages);
        let out = dir.path().join(name);
        let run = sitesim(&["run", "--config", &config, "--out", out.to_str().unwrap()]);
        assert!(run.status.success(), "{}", stderr(&run));
        mean_wait(&summary(&out))
    };
    let (open, drained) = (wait("", "open"), wait(drain, "drained"));
    assert!(
        drained > open,
        "mean wait {drained} s drained, {open} s without"
    );
}

#[test]
fn outage_costs_are_the_runs_without_each_outage() {
    let (dir, _) = scratch();
    let drain = "[[outages]]\nname = \"repair\"\nkind = \"drain\"\nfrom = \"2024-01-03T00:00:00\"\nto = \"2024-01-06T00:00:00\"\nnodes = \"90%\"\n";
    let failures = "[failures]\nnode_processors = 128\nmtbf_hours = 200\nrepair_hours = 12\n";
    let measures = |outages: &str, name: &str, extra: &[&str]| -> serde_json::Value {
        let config = site(dir.path(), outages);
        let out = dir.path().join(name);
        let mut args = vec!["run", "--config", &config, "--out", out.to_str().unwrap()];
        args.extend(extra);
        let run = sitesim(&args);
        assert!(run.status.success(), "{}", stderr(&run));
        summary(&out)
    };
    let all = format!("{drain}\n{WEEKLY}\n{failures}");
    let costed = measures(&all, "costed", &["--outage-costs"]);
    // the measure changes nothing of the run it measures
    let plain = measures(&all, "plain", &[]);
    assert_eq!(costed["summary"], plain["summary"]);
    assert!(plain["outages"]["outages"][0].get("cost").is_none());
    let throughput =
        |s: &serde_json::Value| s["closed_loop"]["submitted_per_hour"].as_f64().unwrap();
    // each cost is the run against the same site without that outage, run on its own
    for (cost, without) in [
        (
            &costed["outages"]["outages"][0]["cost"],
            format!("{WEEKLY}\n{failures}"),
        ),
        (
            &costed["outages"]["outages"][1]["cost"],
            format!("{drain}\n{failures}"),
        ),
        (&costed["failures"]["cost"], format!("{drain}\n{WEEKLY}")),
    ] {
        let other = measures(&without, "without", &["--force"]);
        assert_wait_cost(cost, &costed, &other);
        assert_eq!(
            cost["submitted_per_hour_without"].as_f64(),
            Some(throughput(&other))
        );
        // summary.json's throughputs are rounded for print: the change within 1e-12
        let change = throughput(&costed) / throughput(&other) - 1.0;
        let given = cost["throughput_change"].as_f64().unwrap();
        assert!((given - change).abs() < 1e-12, "{given} against {change}");
    }
    // the 90 % drain over three days (Wednesday to Friday) adds wait
    let drain_cost = &costed["outages"]["outages"][0]["cost"];
    assert!(
        drain_cost["wait_added_s"].as_f64().unwrap() > 0.0,
        "{drain_cost}"
    );
    // a site with nothing to cost, and a replay, are refused before they run
    let config = site(dir.path(), "");
    let out = dir.path().join("refused");
    let refused = sitesim(&[
        "run",
        "--config",
        &config,
        "--outage-costs",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("site.toml") && stderr(&refused).contains("--outage-costs"),
        "{}",
        stderr(&refused)
    );
    assert!(!out.join("summary.json").exists());
}

#[test]
fn a_replays_outage_costs_are_its_replays_without_each_outage() {
    let (dir, _) = scratch();
    let kth = trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let drain = "[[outages]]\nname = \"repair\"\nkind = \"drain\"\nfrom = \"2024-02-07T00:00:00\"\nto = \"2024-02-10T00:00:00\"\nnodes = 60\n";
    let failures = "[failures]\nnode_processors = 10\nmtbf_hours = 2000\nrepair_hours = 24\n";
    let file = |name: &str, text: &str| {
        let body = format!("start = \"2024-01-01T00:00:00\"\n\n{text}");
        write_file(dir.path(), name, body.as_bytes())
    };
    let replay = |name: &str, extra: &[&str]| -> serde_json::Value {
        let out = dir.path().join(name);
        let mut args = vec![
            "replay",
            &kth,
            "--scheduler",
            "easy",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        let run = sitesim(&args);
        assert!(run.status.success(), "{}", stderr(&run));
        summary(&out)
    };
    let all = file("all.toml", &format!("{WEEKLY}\n{drain}\n{failures}"));
    let costed = replay("costed", &["--outages", &all, "--outage-costs"]);
    assert_eq!(
        costed["summary"],
        replay("plain", &["--outages", &all])["summary"],
        "the measure changes nothing of the replay it measures"
    );
    let cases = [
        (
            &costed["outages"]["outages"][0]["cost"],
            format!("{drain}\n{failures}"),
        ),
        (
            &costed["outages"]["outages"][1]["cost"],
            format!("{WEEKLY}\n{failures}"),
        ),
        (&costed["failures"]["cost"], format!("{WEEKLY}\n{drain}")),
    ];
    for (i, (cost, without)) in cases.into_iter().enumerate() {
        let name = format!("without-{i}");
        let other = file(&format!("{name}.toml"), &without);
        let other = replay(&name, &["--outages", &other]);
        assert_wait_cost(cost, &costed, &other);
        // the same jobs either way: no closed-loop measures
        assert!(cost.get("throughput_change").is_none(), "{cost}");
    }
    // 60 of KTH's 100 processors drained for three days (Wednesday to Friday) add wait
    let drain_cost = &costed["outages"]["outages"][1]["cost"];
    assert!(
        drain_cost["wait_added_s"].as_f64().unwrap() > 0.0,
        "{drain_cost}"
    );
    // a replay without outages is refused before it runs
    assert_fails(
        &["replay", &kth, "--outage-costs"],
        "--outage-costs measures what a replay's outages cost",
    );
}

#[test]
fn bad_outages_are_named_and_leave_no_summary() {
    let (dir, _) = scratch();
    let cases: [(&str, &str, &str); 10] = [
        (
            "[[outages]]\nname = \"c\"\nkind = \"reservation\"\nfrom = \"2024-01-03T08:00:00\"\nto = \"2024-01-03T10:00:00\"\n",
            "",
            "outages[0].groups: a reservation needs its members",
        ),
        (
            "[[outages]]\nname = \"c\"\nkind = \"reservation\"\nfrom = \"2024-01-03T08:00:00\"\nto = \"2024-01-03T10:00:00\"\ngroups = [\"students\"]\n",
            "",
            "outages[0].groups: \"students\": no group of this name (groups: users)",
        ),
        (
            "[[outages]]\nname = \"m\"\nfrom = \"2024-01-03T08:00:00\"\nto = \"2024-01-03T10:00:00\"\ngroups = [\"users\"]\n",
            "",
            "outages[0].groups: only a reservation",
        ),
        (
            "[[outages]]\nname = \"r\"\nfrom = \"2024-01-03T10:00:00\"\nto = \"2024-01-03T08:00:00\"\n",
            "",
            "outages[0].to",
        ),
        (
            "[[outages]]\nname = \"a\"\nevery = \"day\"\nfrom = \"08:00\"\nto = \"09:00\"\n[[outages]]\nname = \"b\"\nevery = \"monday\"\nfrom = \"08:30\"\nto = \"10:00\"\n",
            "",
            "outages[1].from",
        ),
        (
            "[[outages]]\nname = \"n\"\nfrom = \"2024-01-03T08:00:00\"\nto = \"2024-01-03T10:00:00\"\nnodes = \"node[1-2]\"\n",
            "",
            "outages[0].nodes",
        ),
        (
            "[[outages]]\nname = \"long\"\nfrom = \"2024-01-03T08:00:00\"\nto = \"2024-02-03T10:00:00\"\n",
            "",
            "does not lie within the run",
        ),
        (
            "[[outages]]\nname = \"d\"\nkind = \"down\"\nfrom = \"2024-01-03T08:00:00\"\nto = \"2024-01-03T10:00:00\"\n",
            "",
            "outages[0].kind",
        ),
        (
            "[[outages]]\nname = \"m\"\nfrom = \"2024-01-03T08:00:00\"\nto = \"2024-01-03T10:00:00\"\n",
            "conservative",
            "conservative backfilling rule",
        ),
        (
            "[[outages]]\nname = \"m\"\nfrom = \"2024-01-03T08:00:00\"\nto = \"2024-01-03T10:00:00\"\nnodes = 5000\n",
            "",
            "outages[0].nodes",
        ),
    ];
    for (outages, scheduler, expected) in cases {
        let config = site(dir.path(), outages);
        let mut args = vec!["run", "--config", &config];
        if !scheduler.is_empty() {
            args.extend(["--scheduler", scheduler]);
        }
        let message = assert_fails(&args, expected);
        assert!(message.contains("site.toml"), "{message}");
    }
}

/// The jobs of jobs.csv as (job id, group, submit, start, end, processors, killed).
fn jobs_of(out: &Path) -> Vec<(i64, String, i64, i64, i64, i64, bool)> {
    let (header, rows) = table(&out.join("jobs.csv"));
    let at = |name: &str| column(&header, name);
    let number = |row: &[String], name: &str| -> i64 { row[at(name)].parse().unwrap() };
    rows.iter()
        .map(|row| {
            (
                number(row, "job_id"),
                row[at("group")].clone(),
                number(row, "submit"),
                number(row, "start"),
                number(row, "end"),
                number(row, "processors"),
                row[at("killed")] == "1",
            )
        })
        .collect()
}

#[test]
fn a_groups_reservation_runs_its_jobs_alone_and_only_while_it_lasts() {
    let (dir, _) = scratch();
    // 10 course users beside the 40, and 256 processors reserved for the course every day
    // from 09:00 to 17:00
    let text = "[site]\nprocessors = 3968\nstart = \"2024-01-01T00:00:00\"\n\n[run]\nweeks = 2\nseed = 3\n\n[[groups]]\nname = \"users\"\nusers = 40\n\n[[groups]]\nname = \"course\"\nusers = 10\n\n[[outages]]\nname = \"course\"\nkind = \"reservation\"\nevery = \"day\"\nfrom = \"09:00\"\nto = \"17:00\"\nnodes = 256\ngroups = [\"course\"]\n";
    let config = write_file(dir.path(), "site.toml", text.as_bytes());
    let day = 86_400;
    let window = |t: i64| {
        let from = t.div_euclid(day) * day + 9 * 3600;
        (from <= t && t < from + 8 * 3600).then_some((from, from + 8 * 3600))
    };
    for scheduler in ["fcfs", "easy", "slurm"] {
        let out = run_site(dir.path(), &config, scheduler);
        let jobs = jobs_of(&out);
        // members: the course's jobs submitted while the reservation lasts that fit in it
        let member = |j: &(i64, String, i64, i64, i64, i64, bool)| {
            j.1 == "course" && window(j.2).is_some() && j.5 <= 256
        };
        let members: Vec<_> = jobs.iter().filter(|j| member(j)).collect();
        // a member not started by its period's end waits for the next (Slurm advances a
        // recurring reservation); after the last it runs as any job
        let inside: Vec<_> = members.iter().filter(|j| window(j.3).is_some()).collect();
        assert!(
            inside.len() > 100,
            "{scheduler}: {} members ran in it",
            inside.len()
        );
        for j in &inside {
            let (_, to) = window(j.3).unwrap();
            assert!(
                j.4 <= to,
                "{scheduler}: member {} ran past the reservation",
                j.0
            );
        }
        for j in &members {
            assert!(j.3 >= window(j.2).unwrap().0, "{scheduler}: member {}", j.0);
        }
        assert!(
            inside.iter().any(|j| j.6),
            "{scheduler}: none killed at the reservation's end"
        );
        // every other job leaves the reserved 256 processors alone while it lasts
        let others: Vec<_> = jobs
            .iter()
            .filter(|j| !(member(j) && window(j.3).is_some()))
            .collect();
        for t in jobs.iter().map(|j| j.3).filter(|&t| window(t).is_some()) {
            let load: i64 = others
                .iter()
                .filter(|j| j.3 <= t && t < j.4)
                .map(|j| j.5)
                .sum();
            assert!(load <= 3968 - 256, "{scheduler} at {t}: others hold {load}");
        }
        let summary = summary(&out);
        let line = &summary["outages"]["outages"][0];
        assert_eq!(line["kind"], "reservation");
        // what its members did with it, over the whole run: as jobs.csv tells
        let used = &line["members"];
        assert_eq!(
            used["jobs_started"].as_u64(),
            Some(inside.len() as u64),
            "{used}"
        );
        assert_eq!(
            used["jobs_released"].as_u64(),
            Some((members.len() - inside.len()) as u64),
            "{used}"
        );
        let seconds: i64 = inside.iter().map(|j| j.5 * (j.4 - j.3)).sum();
        let hours = used["processor_hours_used"].as_f64().unwrap();
        assert!((hours - seconds as f64 / 3600.0).abs() < 1e-9, "{used}");
        let held = 14.0 * 8.0 * 256.0; // 14 days of 8 hours, 256 processors
        assert!((used["share_used"].as_f64().unwrap() - hours / held).abs() < 1e-12);
        let (header, rows) = table(&out.join("outages.csv"));
        assert_eq!(rows[0][column(&header, "kind")], "reservation");
    }
}

#[test]
fn a_dumps_jobs_run_in_the_reservation_they_name() {
    let (dir, _) = scratch();
    // 4 CPUs; "course" reserves 2 of them from 10:05 to 10:35; jobs 2 and 3 ran in it
    let dump = "JobID|JobIDRaw|User|Account|Partition|QOS|Submit|Eligible|Start|End|State|ReqCPUS|NCPUS|NNodes|Timelimit|TimelimitRaw|Elapsed|ElapsedRaw|Reservation
1|1|alice|physics|debug|normal|2026-01-05T10:00:00|2026-01-05T10:00:00|2026-01-05T10:00:00|2026-01-05T10:20:00|COMPLETED|2|2|1|01:00:00|60|00:20:00|1200|
2|2|bob|chem|debug|normal|2026-01-05T10:00:10|2026-01-05T10:00:10|2026-01-05T10:05:00|2026-01-05T10:15:00|COMPLETED|2|2|1|00:20:00|20|00:10:00|600|course
3|3|bob|chem|debug|normal|2026-01-05T10:00:20|2026-01-05T10:00:20|2026-01-05T10:15:00|2026-01-05T10:25:00|COMPLETED|2|2|1|00:20:00|20|00:10:00|600|course
4|4|carol|physics|debug|normal|2026-01-05T10:00:30|2026-01-05T10:00:30|2026-01-05T10:20:00|2026-01-05T10:40:00|COMPLETED|4|4|1|00:30:00|30|00:20:00|1200|
5|5|dave|physics|debug|normal|2026-01-05T10:00:40|2026-01-05T10:00:40|2026-01-05T10:00:40|2026-01-05T10:03:00|COMPLETED|2|2|1|00:10:00|10|00:02:20|140|
";
    let reservations = "Cluster|Name|ID|TimeStart|TimeEnd|NodeName|Flags|TRES
c|course|7|2026-01-05T10:05:00|2026-01-05T10:35:00|vm|SPEC_NODES|cpu=2
";
    let dump = write_file(dir.path(), "sacct.txt", dump.as_bytes());
    let reservations = write_file(dir.path(), "resv.txt", reservations.as_bytes());
    for scheduler in ["easy", "slurm"] {
        let out = dir.path().join(format!("out-{scheduler}"));
        let run = sitesim(&[
            "replay",
            &dump,
            "--processors",
            "4",
            "--reservations",
            &reservations,
            "--tz",
            "UTC",
            "--scheduler",
            scheduler,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
        let jobs = jobs_of(&out);
        let job = |id: i64| jobs.iter().find(|j| j.0 == id).unwrap();
        // the reservation is [300, 2100) s on the replay's clock
        for id in [2, 3] {
            assert!(
                job(id).3 >= 300 && job(id).4 <= 2100,
                "{scheduler}: {:?}",
                job(id)
            );
        }
        // job 2 starts as the reservation begins, 3 when 2 has ended: the reservation's 2 CPUs
        assert_eq!((job(2).3, job(3).3), (300, job(2).4), "{scheduler}");
        // job 5 (2 CPUs, a 10-minute limit) would reach into the reservation beside job 1
        assert!(job(5).3 >= job(1).4, "{scheduler}: {:?}", job(5));
        // job 4 needs the whole machine: after the reservation
        assert!(job(4).3 >= 2100, "{scheduler}: {:?}", job(4));
        // its members used 2 x 600 s twice of its 2 x 1800 processor-seconds
        let used = &summary(&out)["outages"]["outages"][0]["members"];
        assert_eq!(used["jobs_started"].as_u64(), Some(2), "{used}");
        assert_eq!(used["jobs_released"].as_u64(), Some(0), "{used}");
        assert!(
            (used["share_used"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12,
            "{used}"
        );
    }
}

#[test]
fn drained_nodes_of_a_machine_of_node_types_start_nothing_while_drained() {
    let (dir, _) = scratch();
    let drain = "[[outages]]\nname = \"gpu-repair\"\nkind = \"drain\"\nevery = \"day\"\nfrom = \"06:00\"\nto = \"18:00\"\nnodes = \"gpu[1-2]\"\n";
    let config = crate::common::node_site(dir.path(), "site.toml", drain);
    // every day of the two weeks, 06:00-18:00
    let drains: Vec<(i64, i64)> = (0..14)
        .map(|day| (day * 86_400 + 6 * 3600, day * 86_400 + 18 * 3600))
        .collect();
    for scheduler in ["fcfs", "easy", "slurm"] {
        let out = run_site(dir.path(), &config, scheduler);
        let (oh, rows) = table(&out.join("outages.csv"));
        let listed: Vec<(i64, i64)> = (rows.iter())
            .map(|r| {
                // two nodes of 64 CPUs
                assert_eq!(r[column(&oh, "processors")], "128", "{r:?}");
                let at = |c: &str| r[column(&oh, c)].parse::<i64>().unwrap();
                (at("from"), at("to"))
            })
            .collect();
        assert_eq!(listed, drains);
        let (jh, jobs) = table(&out.join("jobs.csv"));
        let runs: std::collections::HashMap<&str, (i64, i64)> = (jobs.iter())
            .map(|r| {
                let at = |c: &str| r[column(&jh, c)].parse::<i64>().unwrap();
                (r[column(&jh, "job_id")].as_str(), (at("start"), at("end")))
            })
            .collect();
        let (nh, shares) = table(&out.join("nodes.csv"));
        let mut ran_on = 0;
        for share in &shares {
            let node = share[column(&nh, "node")].as_str();
            if node != "gpu1" && node != "gpu2" {
                continue;
            }
            let job = share[column(&nh, "job_id")].as_str();
            let (start, end) = runs[job];
            ran_on += 1;
            for &(from, to) in &drains {
                assert!(
                    !(from <= start && start < to),
                    "{scheduler}: job {job} started at {start} on {node}, drained over [{from}, {to})"
                );
            }
            assert!(end >= start);
        }
        assert!(ran_on > 0, "{scheduler}: nothing ran on the drained nodes");
        // availability: 14 half-days of 128 of the 768 CPUs out of service
        let outages = &summary(&out)["outages"];
        let expected = 1.0 - (14.0 * 12.0 * 128.0) / (14.0 * 24.0 * 768.0);
        let availability = outages["availability"].as_f64().unwrap();
        assert!(
            (availability - expected).abs() < 1e-9,
            "{availability} vs {expected}"
        );
    }
    // on a machine of node types, only drains and maintenance, of named nodes or all of them
    for (i, (outages, expected)) in [
        (
            "[[outages]]\nname = \"m\"\nkind = \"down\"\nfrom = \"2024-01-03T08:00:00\"\nto = \"2024-01-03T10:00:00\"\nnodes = \"gpu1\"\n",
            "outages[0].kind = \"down\" (\"m\"): a machine of node types takes maintenance windows and drains",
        ),
        (
            "[[outages]]\nname = \"d\"\nkind = \"drain\"\nfrom = \"2024-01-03T08:00:00\"\nto = \"2024-01-03T10:00:00\"\nnodes = 2\n",
            "outages[0].nodes (\"d\"): 2 of the 12 nodes, but which?",
        ),
        (
            "[[outages]]\nname = \"d\"\nkind = \"drain\"\nfrom = \"2024-01-03T08:00:00\"\nto = \"2024-01-03T10:00:00\"\nnodes = \"gpu9\"\n",
            "the machine has no node \"gpu9\"",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let config = crate::common::node_site(dir.path(), &format!("bad-{i}.toml"), outages);
        let message = assert_fails(&["run", "--config", &config], expected);
        assert!(message.contains(&format!("bad-{i}.toml")), "{message}");
    }
}

#[test]
fn maintenance_windows_on_nodes_of_a_machine_of_node_types_run_nothing_on_them() {
    let (dir, _) = scratch();
    // two GPU nodes every Wednesday 08:00-16:00, and the whole machine one Saturday night
    let windows = "[[outages]]\nname = \"gpu-maint\"\nevery = \"wednesday\"\nfrom = \"08:00\"\nto = \"16:00\"\nnodes = \"gpu[1-2]\"\n\n\
                   [[outages]]\nname = \"all-maint\"\nfrom = \"2024-01-06T00:00:00\"\nto = \"2024-01-06T06:00:00\"\nnodes = \"all\"\n";
    let config = crate::common::node_site(dir.path(), "site.toml", windows);
    // 2024-01-01 is a Monday: Wednesdays are days 2 and 9
    let gpu_windows: Vec<(i64, i64)> = [2i64, 9]
        .iter()
        .map(|day| (day * 86_400 + 8 * 3600, day * 86_400 + 16 * 3600))
        .collect();
    let all_window = (5 * 86_400, 5 * 86_400 + 6 * 3600);
    for scheduler in ["fcfs", "easy", "slurm"] {
        let out = run_site(dir.path(), &config, scheduler);
        let (jh, jobs) = table(&out.join("jobs.csv"));
        let runs: std::collections::HashMap<&str, (i64, i64)> = (jobs.iter())
            .map(|r| {
                let at = |c: &str| r[column(&jh, c)].parse::<i64>().unwrap();
                (r[column(&jh, "job_id")].as_str(), (at("start"), at("end")))
            })
            .collect();
        let overlaps = |(start, end): (i64, i64), (from, to): (i64, i64)| start < to && from < end;
        // nothing runs in the machine-wide window
        for (job, &run) in &runs {
            assert!(
                !overlaps(run, all_window),
                "{scheduler}: job {job} ran over {run:?}, in the window {all_window:?} of every node"
            );
        }
        let (nh, shares) = table(&out.join("nodes.csv"));
        let mut ran_on = 0;
        for share in &shares {
            let node = share[column(&nh, "node")].as_str();
            if node != "gpu1" && node != "gpu2" {
                continue;
            }
            let job = share[column(&nh, "job_id")].as_str();
            ran_on += 1;
            for &window in &gpu_windows {
                assert!(
                    !overlaps(runs[job], window),
                    "{scheduler}: job {job} ran over {:?} on {node}, in maintenance over {window:?}",
                    runs[job]
                );
            }
        }
        assert!(ran_on > 0, "{scheduler}: nothing ran on the GPU nodes");
        // availability: two 8-hour windows of 128 CPUs and one 6-hour window of all 768
        let outages = &summary(&out)["outages"];
        let expected = 1.0 - (2.0 * 8.0 * 128.0 + 6.0 * 768.0) / (14.0 * 24.0 * 768.0);
        let availability = outages["availability"].as_f64().unwrap();
        assert!(
            (availability - expected).abs() < 1e-9,
            "{scheduler}: {availability} vs {expected}"
        );
        let (_, rows) = table(&out.join("outages.csv"));
        assert_eq!(rows.len(), 3, "{scheduler}: {rows:?}");
    }
}
