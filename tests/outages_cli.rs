//! Outages end to end: a site's `[[outages]]` in `sitesim run` (a weekly maintenance window
//! that no job's run reaches into, a drain), what summary.json reports of them, and bad
//! outages named with the file and the key, leaving no summary behind.

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

#[test]
fn no_job_runs_in_a_weekly_maintenance_window() {
    let (dir, _) = scratch();
    let config = site(dir.path(), WEEKLY);
    for scheduler in ["fcfs", "easy", "slurm"] {
        let out = dir.path().join(format!("out-{scheduler}"));
        let run = sitesim(&[
            "run",
            "--config",
            &config,
            "--scheduler",
            scheduler,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
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
    assert_eq!(header, ["name", "kind", "from", "to", "processors"]);
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
    let cases: [(&str, &str, &str); 7] = [
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
