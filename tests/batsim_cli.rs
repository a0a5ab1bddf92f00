//! End-to-end tests of the Batsim-style jobs file (`--batsim-jobs`, issue 18): Batsim's column
//! names as evalys's `JobSet.from_csv` reads them, and allocations that give every job its size
//! and never share a processor between jobs running at the same time; `sitesim plot-run`, the
//! figures of one run or replay.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use crate::common;

use std::path::Path;

use common::{scratch, sitesim, stderr, trace};

/// Batsim's jobs columns, as evalys's JobSet documents them (`JobSet.columns`: job_id,
/// workload_name, submission_time, requested_number_of_resources, requested_time, success,
/// starting_time, execution_time, finish_time, waiting_time, turnaround_time, stretch,
/// allocated_resources) plus Batsim's final_state, consumed_energy and metadata.
const COLUMNS: [&str; 16] = [
    "job_id",
    "workload_name",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
];

struct Job {
    size: u32,
    start: i64,
    finish: i64,
    held: Vec<(u32, u32)>,
}

/// Reads batsim_jobs.csv, checking its header and each row's own consistency.
fn read(path: &Path) -> Vec<Job> {
    let mut reader = csv::Reader::from_path(path).expect("batsim_jobs.csv exists");
    let header: Vec<String> = reader
        .headers()
        .expect("a header")
        .iter()
        .map(String::from)
        .collect();
    assert_eq!(header, COLUMNS);
    let mut jobs = Vec::new();
    for row in reader.records() {
        let row = row.expect("a row");
        let int = |i: usize| row[i].parse::<i64>().expect("a whole number");
        let (submit, start, exec, finish, wait, turn) =
            (int(2), int(7), int(8), int(9), int(10), int(11));
        assert_eq!(start + exec, finish);
        assert_eq!(submit + wait, start);
        assert_eq!(submit + turn, finish);
        assert!(matches!(
            (&row[5], &row[6]),
            ("1", "COMPLETED_SUCCESSFULLY") | ("0", "COMPLETED_WALLTIME_REACHED")
        ));
        let held: Vec<(u32, u32)> = row[13]
            .split(' ')
            .map(|part| match part.split_once('-') {
                Some((a, b)) => (a.parse().expect("id"), b.parse().expect("id")),
                None => {
                    let a = part.parse().expect("id");
                    (a, a)
                }
            })
            .collect();
        assert!(held.windows(2).all(|w| w[0].1 + 1 < w[1].0), "{}", &row[13]);
        jobs.push(Job {
            size: u32::try_from(int(3)).expect("a size"),
            start,
            finish,
            held,
        });
    }
    jobs
}

/// Every job holds its size; no processor is held by two jobs at once; ids stay below `machine`.
fn check_allocations(jobs: &[Job], machine: u32) {
    assert!(!jobs.is_empty());
    // (time, 0 = end before 1 = start, job)
    let mut events = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        let held: u32 = j.held.iter().map(|(a, b)| b - a + 1).sum();
        assert_eq!(held, j.size);
        assert!(j.held.iter().all(|&(_, b)| b < machine));
        if j.finish > j.start {
            events.push((j.start, 1, i));
            events.push((j.finish, 0, i));
        }
    }
    events.sort_unstable();
    let mut owner: Vec<Option<usize>> = vec![None; machine as usize];
    for (_, kind, i) in events {
        for &(a, b) in &jobs[i].held {
            for p in a..=b {
                let slot = &mut owner[p as usize];
                if kind == 1 {
                    assert_eq!(*slot, None, "processor {p} held twice (job row {i})");
                    *slot = Some(i);
                } else {
                    *slot = None;
                }
            }
        }
    }
}

#[test]
fn a_replay_writes_batsim_jobs_with_disjoint_allocations() {
    let (_dir, out) = scratch();
    let o = out.display().to_string();
    let kth = trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let r = sitesim(&[
        "replay",
        &kth,
        "--first-jobs",
        "3000",
        "--out",
        &o,
        "--batsim-jobs",
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let jobs = read(&out.join("batsim_jobs.csv"));
    assert_eq!(jobs.len(), 3000);
    check_allocations(&jobs, 100);

    // without the flag, the directory is what it always was
    let (_dir2, plain) = scratch();
    let p = plain.display().to_string();
    let r = sitesim(&["replay", &kth, "--first-jobs", "300", "--out", &p]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(!plain.join("batsim_jobs.csv").exists());
    assert!(plain.join("jobs.csv").exists());
}

#[test]
fn a_run_writes_batsim_jobs_with_disjoint_allocations() {
    let (_dir, out) = scratch();
    let o = out.display().to_string();
    let r = sitesim(&[
        "run",
        "--users",
        "40",
        "--weeks",
        "2",
        "--processors",
        "64",
        "--job-sizes",
        "clip",
        "--out",
        &o,
        "--batsim-jobs",
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let jobs = read(&out.join("batsim_jobs.csv"));
    let rows = csv::Reader::from_path(out.join("jobs.csv"))
        .expect("jobs.csv")
        .records()
        .count();
    assert_eq!(jobs.len(), rows);
    check_allocations(&jobs, 64);
}

#[test]
fn on_nodes_the_file_shows_the_clusters_placement() {
    // First Continuous places every job on one run of consecutive processors; the ids assigned
    // after the run (lowest free first) would split some of them
    let (_dir, out) = scratch();
    let o = out.display().to_string();
    let ctc = trace("CTC-SP2-1996-3.1-cln.swf.gz");
    let r = sitesim(&[
        "replay",
        &ctc,
        "--scheduler",
        "easy-sjf",
        "--node-processors",
        "4",
        "--selection",
        "first-continuous",
        "--bandwidth-mix",
        "0.5,0.1,0.4",
        "--first-jobs",
        "3000",
        "--out",
        &o,
        "--batsim-jobs",
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let jobs = read(&out.join("batsim_jobs.csv"));
    assert_eq!(jobs.len(), 3000);
    check_allocations(&jobs, 512);
    assert!(jobs.iter().all(|j| j.held.len() == 1));
    // plot-run draws the Gantt chart on those processors
    let r = sitesim(&["plot-run", &o]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(out.join("figures/gantt.png").exists());
}

#[test]
fn a_run_on_nodes_shows_the_clusters_placement() {
    // A site run on nodes of 4 processors: First Continuous gives every job one run of
    // consecutive processors; under First Fit the file shows the cluster's own (split) choice,
    // which replaying the run's SWF on the same machine reproduces processor for processor.
    for selection in ["first-continuous", "first-fit"] {
        let (dir, out) = scratch();
        let o = out.display().to_string();
        let swf = dir.path().join("run.swf").display().to_string();
        let r = sitesim(&[
            "run",
            "--users",
            "40",
            "--weeks",
            "2",
            "--node-processors",
            "4",
            "--selection",
            selection,
            "--out",
            &o,
            "--batsim-jobs",
            "--swf",
            &swf,
        ]);
        assert!(r.status.success(), "{}", stderr(&r));
        let jobs = read(&out.join("batsim_jobs.csv"));
        check_allocations(&jobs, 3968);
        let split = jobs.iter().filter(|j| j.held.len() > 1).count();
        if selection == "first-continuous" {
            assert_eq!(split, 0, "First Continuous split a job");
        } else {
            assert!(
                split > 0,
                "First Fit never split a job: not the cluster's placement?"
            );
        }
        let replayed = dir.path().join("replayed");
        let r = sitesim(&[
            "replay",
            &swf,
            "--node-processors",
            "4",
            "--selection",
            selection,
            "--out",
            &replayed.display().to_string(),
            "--batsim-jobs",
        ]);
        assert!(r.status.success(), "{}", stderr(&r));
        let again = read(&replayed.join("batsim_jobs.csv"));
        assert_eq!(again.len(), jobs.len());
        for (a, b) in jobs.iter().zip(&again) {
            assert_eq!((a.start, &a.held), (b.start, &b.held));
        }
    }
}

#[test]
fn batsim_jobs_needs_an_output_directory() {
    let kth = trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let r = sitesim(&["replay", &kth, "--first-jobs", "10", "--batsim-jobs"]);
    assert!(!r.status.success());
    assert!(stderr(&r).contains("--out"), "{}", stderr(&r));
}

#[test]
fn plot_run_draws_the_figures_of_a_replay_and_a_run() {
    let (dir, out) = scratch();
    let o = out.display().to_string();
    let kth = trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let r = sitesim(&["replay", &kth, "--first-jobs", "1000", "--out", &o]);
    assert!(r.status.success(), "{}", stderr(&r));
    let r = sitesim(&["plot-run", &o, "--from", "10", "--days", "2"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let stems = ["utilization", "queue", "gantt", "wait_cdf", "response_cdf"];
    for stem in stems {
        for extension in ["png", "svg", "pdf", "csv"] {
            let path = out.join("figures").join(format!("{stem}.{extension}"));
            let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            assert!(size > 100, "{} missing or empty", path.display());
            assert!(common::stdout(&r).contains(&path.display().to_string()));
        }
        let pdf = std::fs::read(out.join("figures").join(format!("{stem}.pdf"))).unwrap();
        assert!(pdf.starts_with(b"%PDF"), "{stem}.pdf is no PDF");
    }
    let svg = std::fs::read_to_string(out.join("figures/gantt.svg")).unwrap_or_default();
    assert!(svg.contains("days 10 to 12"), "the window is in the title");
    assert!(
        svg.contains("colour: runtime class"),
        "the Gantt chart has no key"
    );
    let csv = std::fs::read_to_string(out.join("figures/gantt.csv")).unwrap_or_default();
    assert!(
        csv.starts_with("job,start_day,end_day,first_processor,last_processor,runtime_class\n"),
        "{csv}"
    );

    let run = dir.path().join("run");
    let figures = dir.path().join("run-figures");
    let (run_s, figures_s) = (run.display().to_string(), figures.display().to_string());
    let r = sitesim(&["run", "--users", "30", "--weeks", "1", "--out", &run_s]);
    assert!(r.status.success(), "{}", stderr(&r));
    let r = sitesim(&["plot-run", &run_s, "--out", &figures_s, "--dpi", "300"]);
    assert!(r.status.success(), "{}", stderr(&r));
    for stem in stems {
        // 300 dpi: twice the 960 x 640 pixels of the default 150
        let png = std::fs::read(figures.join(format!("{stem}.png"))).unwrap_or_default();
        assert!(png.len() > 24, "{stem}.png");
        let width = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
        assert_eq!(width, 1920, "{stem}.png at 300 dpi");
    }
    let r = sitesim(&["plot-run", &run_s, "--out", &figures_s, "--dpi", "0"]);
    assert!(!r.status.success());
    assert!(stderr(&r).contains("--dpi"), "{}", stderr(&r));

    // the same folder again: refused (naming it and --force) and left as it was, unless --force
    let before = std::fs::read(figures.join("gantt.svg")).unwrap();
    let r = sitesim(&["plot-run", &run_s, "--out", &figures_s, "--width", "page"]);
    assert!(!r.status.success());
    assert!(
        stderr(&r).contains(&format!("{figures_s} already holds figures"))
            && stderr(&r).contains("--force"),
        "{}",
        stderr(&r)
    );
    assert_eq!(std::fs::read(figures.join("gantt.svg")).unwrap(), before);
    let r = sitesim(&[
        "plot-run", &run_s, "--out", &figures_s, "--width", "page", "--force",
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let svg = std::fs::read_to_string(figures.join("gantt.svg")).unwrap();
    assert!(svg.starts_with("<svg width=\"1020\""), "{}", &svg[..60]);
    let r = sitesim(&["plot-run", &run_s, "--out", &figures_s, "--width", "letter"]);
    assert!(!r.status.success());
    assert!(
        stderr(&r).contains("--width \"letter\" is neither a number of inches nor a preset; the presets are column (3.3 in), page (6.8 in)"),
        "{}",
        stderr(&r)
    );

    // a directory without jobs.csv is an error naming the file
    let r = sitesim(&["plot-run", &figures_s]);
    assert!(!r.status.success());
    assert!(stderr(&r).contains("jobs.csv"), "{}", stderr(&r));
}

#[test]
fn plot_run_finishes_on_a_whole_trace_longer_than_two_to_the_24_seconds() {
    // KTH-SP2 spans 11 months (about 2.9e7 s > 2^24 s): the binned figures once never ended.
    let (_dir, out) = scratch();
    let o = out.display().to_string();
    let kth = trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let r = sitesim(&["replay", &kth, "--out", &o]);
    assert!(r.status.success(), "{}", stderr(&r));
    let r = sitesim(&["plot-run", &o]);
    assert!(r.status.success(), "{}", stderr(&r));
    let svg = std::fs::read_to_string(out.join("figures/utilization.svg")).unwrap_or_default();
    // 11 months: the default bin is a day (at most 400 bins; a whole day: no aliasing)
    assert!(svg.contains("mean over 1 d bins"), "utilization title");
    let r = sitesim(&[
        "plot-run",
        &o,
        "--bin",
        "86400",
        "--out",
        &format!("{o}/daily"),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let svg = std::fs::read_to_string(out.join("daily/queue.svg")).unwrap_or_default();
    assert!(svg.contains("mean over 1 d bins"), "queue title");
    // a bad option is refused before anything is drawn
    let r = sitesim(&[
        "plot-run",
        &o,
        "--days",
        "NaN",
        "--out",
        &format!("{o}/nan"),
    ]);
    assert!(!r.status.success());
    assert!(!out.join("nan").join("utilization.png").exists());
}
