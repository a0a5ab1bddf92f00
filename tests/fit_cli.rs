//! End-to-end tests of `sitesim fit` and `sitesim models`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use crate::common;

use std::fs;

use common::{
    assert_fails, files_below, scratch, shared, sitesim, sitesim_in, stderr, stdout, trace,
    workspace, write_file,
};

/// The command recorded in models/PROVENANCE.md (after `cargo run --release -p sitesim --`).
fn provenance_command() -> Vec<String> {
    let text = fs::read_to_string(workspace().join("models/PROVENANCE.md")).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("cargo run --release -p sitesim -- "))
        .expect("PROVENANCE.md records the command");
    line.split_whitespace().map(String::from).collect()
}

#[test]
fn models_are_reproduced_byte_for_byte_by_the_recorded_command() {
    // Lay out a checkout with ../shared beside it, run the recorded command there, and compare
    // every file with the committed models/.
    let root = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(shared(), root.path().join("shared")).unwrap();
    let checkout = root.path().join("checkout");
    fs::create_dir(&checkout).unwrap();
    let args = provenance_command();
    assert_eq!(args.first().map(String::as_str), Some("fit"));
    assert!(
        args.windows(2).any(|w| w[0] == "--out" && w[1] == "models"),
        "{args:?}"
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = sitesim_in(&checkout, &args);
    assert!(result.status.success(), "{}", stderr(&result));

    let committed = workspace().join("models");
    let fresh = checkout.join("models");
    let committed_files = files_below(&committed);
    assert_eq!(
        committed_files,
        files_below(&fresh),
        "the set of files differs"
    );
    for file in committed_files {
        let a = fs::read(committed.join(&file)).unwrap();
        let b = fs::read(fresh.join(&file)).unwrap();
        assert!(a == b, "models/{} differs from a fresh fit", file.display());
    }
}

#[test]
fn fit_prints_the_scalars_beside_the_paper_and_draws_figures() {
    let (_dir, out) = scratch();
    let plots = out.with_file_name("plots");
    let result = sitesim(&[
        "fit",
        &trace("KTH-SP2-1996-2.1-cln.swf.gz"),
        "--out",
        out.to_str().unwrap(),
        "--plot",
        plots.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    let table = stdout(&result);
    assert!(
        table.contains("KTH-SP2-1996-2.1-cln") && table.contains("paper (section III)"),
        "{table}"
    );
    // The skipped job is reported, naming the trace.
    assert!(
        stderr(&result).contains("KTH-SP2-1996-2.1-cln.swf.gz: 1 of 28476 jobs left out"),
        "{}",
        stderr(&result)
    );
    for name in [
        "summary.toml",
        "PROVENANCE.md",
        "README.md",
        "combined/think_short.csv",
        "traces/KTH-SP2-1996-2.1-cln/continue.csv",
    ] {
        assert!(out.join(name).is_file(), "{name} missing");
    }
    let summary: toml::Value =
        toml::from_str(&fs::read_to_string(out.join("summary.toml")).unwrap()).unwrap();
    let a = summary["combined"]["continue_a"].as_float().unwrap();
    assert!(a > 0.5 && a < 1.0, "{a}");
    let count = |extension: &str| {
        fs::read_dir(&plots)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == extension)
            })
            .count()
    };
    // each figure as PNG, SVG and PDF, with the CSV it was drawn from
    for extension in ["png", "svg", "pdf", "csv"] {
        assert_eq!(count(extension), 11, "{extension}");
    }
    assert!(table.contains("drew 11 figures into"), "{table}");
    let csv = fs::read_to_string(plots.join("fig3_continue.csv")).unwrap();
    assert!(csv.starts_with("series,x,y\n"), "{csv}");
    assert!(
        csv.contains("paper: 0.8 / (0.05 r + 1)"),
        "the reference curve's points"
    );
}

#[test]
fn a_trace_without_users_is_an_error_naming_it() {
    // The Lublin model's synthetic log has user -1 on every job.
    assert_fails(
        &["fit", &trace("lublin_256.swf.gz")],
        "lublin_256.swf.gz: none of its 10000 jobs has a user ID",
    );
}

#[test]
fn an_endless_file_is_refused_not_read_into_memory() {
    // /dev/zero has no line breaks: refused at its first overlong line (it used to be read
    // whole, to be hashed, before it was parsed)
    assert_fails(&["fit", "/dev/zero"], "/dev/zero:1: a line longer than");
}

#[test]
fn a_trace_without_runtimes_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (1..=3)
        .map(|i| format!("{i} {i}0 0 -1 4 -1 -1 4 60 -1 1 7 1 -1 -1 -1 -1 -1\n"))
        .collect();
    let path = write_file(dir.path(), "noruntime.swf", lines.as_bytes());
    assert_fails(
        &["fit", &path],
        "noruntime.swf: none of its 3 jobs has a known runtime",
    );
}

#[test]
fn an_unreadable_trace_is_an_error_naming_it() {
    assert_fails(
        &["fit", &trace("KTH-SP2-1996-2.1-cln.swf.gz"), "/no/such.swf"],
        "/no/such.swf: cannot open: No such file or directory",
    );
}

#[test]
fn thresholds_are_checked() {
    assert_fails(
        &[
            "fit",
            &trace("KTH-SP2-1996-2.1-cln.swf.gz"),
            "--max-break",
            "600",
        ],
        "--max-break (600 s) must exceed --session-threshold (1200 s)",
    );
}

#[test]
fn models_shows_the_embedded_default() {
    let result = sitesim(&["models"]);
    assert!(result.status.success(), "{}", stderr(&result));
    let text = stdout(&result);
    assert!(
        text.contains("embedded default") && text.contains("continue probability"),
        "{text}"
    );
    let result = sitesim(&["models", "--dir", "/no/such/dir"]);
    assert!(!result.status.success());
    assert!(
        stderr(&result).contains("/no/such/dir/think_time.csv: missing"),
        "{}",
        stderr(&result)
    );
}

/// SDSC-SP2 (an SWF whose header names the site's zone, US/Pacific) written as a sacct dump
/// with its times in `zone` (`None`: UTC, as the docs ask a dump to be made), into `path`.
fn sdsc_sp2_as_dump(path: &std::path::Path, zone: Option<chrono_tz::Tz>) {
    use std::io::Write;
    let swf = swf::Trace::read(shared().join("traces/SDSC-SP2-1998-4.2-cln.swf.gz")).unwrap();
    let origin = swf.header.unix_start_time().unwrap();
    let time = |t: i64| {
        let utc = chrono::DateTime::from_timestamp(t, 0).unwrap();
        let text = match zone {
            Some(tz) => utc.with_timezone(&tz).naive_local(),
            None => utc.naive_utc(),
        };
        text.format("%Y-%m-%dT%H:%M:%S").to_string()
    };
    let mut out = std::io::BufWriter::new(fs::File::create(path).unwrap());
    writeln!(out, "JobID|JobIDRaw|User|Account|Partition|QOS|Submit|Eligible|Start|End|ElapsedRaw|TimelimitRaw|Timelimit|NCPUS|NNodes|ReqCPUS|ReqNodes|ReqMem|ReqTRES|AllocTRES|State|Restarts|Priority|Flags|Reason|SubmitLine").unwrap();
    for r in &swf.records {
        if r.run_time < 0 || r.wait_time < 0 || r.allocated_processors <= 0 || r.user_id < 0 {
            continue;
        }
        let submit = origin + r.submit_time;
        let start = submit + r.wait_time;
        let end = start + r.run_time;
        let limit = (r.requested_time.max(r.run_time).max(60) + 59) / 60;
        let cpus = r.allocated_processors;
        writeln!(
            out,
            "{id}|{id}|u{user}|g{group}|batch|normal|{submit}|{submit}|{start}|{end}|{elapsed}|{limit}|{limit}|{cpus}|1|{cpus}|1|0|cpu={cpus}|cpu={cpus}|COMPLETED|0|1|SchedMain|None|sbatch job.sh",
            id = r.job_number,
            user = r.user_id,
            group = r.group_id.max(0),
            submit = time(submit),
            start = time(start),
            end = time(end),
            elapsed = r.run_time,
        )
        .unwrap();
    }
}

/// The daytime share (8:00-18:00) and the zone `fit --out DIR` recorded for its one trace.
fn day_share_and_zone(dir: &std::path::Path) -> (f64, String) {
    let summary: toml::Value =
        toml::from_str(&fs::read_to_string(dir.join("summary.toml")).unwrap()).unwrap();
    let traces = summary["traces"].as_table().unwrap();
    assert_eq!(traces.len(), 1, "{traces:?}");
    let trace = traces.values().next().unwrap();
    (
        trace["day_fraction"].as_float().unwrap(),
        trace["zone"].as_str().unwrap().to_string(),
    )
}

#[test]
fn a_dump_fits_its_daily_cycle_in_the_sites_zone() {
    let (keep, _) = scratch();
    let dir = keep.path();
    let utc_dump = dir.join("sdsc-utc.sacct");
    let local_dump = dir.join("sdsc-local.sacct");
    sdsc_sp2_as_dump(&utc_dump, None);
    sdsc_sp2_as_dump(&local_dump, Some(chrono_tz::America::Los_Angeles));
    let fit = |name: &str, args: &[&str]| {
        let out = dir.join(name);
        let out_text = out.display().to_string();
        let mut words = vec!["-q", "fit"];
        words.extend_from_slice(args);
        words.extend_from_slice(&["--out", &out_text]);
        let result = sitesim(&words);
        assert!(result.status.success(), "{}", stderr(&result));
        day_share_and_zone(&out)
    };
    let swf = trace("SDSC-SP2-1998-4.2-cln.swf.gz");
    let (from_swf, zone) = fit("swf", &[&swf]);
    assert_eq!(zone, "US/Pacific");
    let utc = utc_dump.display().to_string();
    let local = local_dump.display().to_string();
    // a dump made with TZ=UTC, the site's zone given
    let (site, zone) = fit("site", &[&utc, "--site-tz", "America/Los_Angeles"]);
    assert_eq!(zone, "America/Los_Angeles");
    // a dump made in the site's local time, read in it
    let (read_local, zone) = fit("local", &[&local, "--tz", "America/Los_Angeles"]);
    assert_eq!(zone, "America/Los_Angeles");
    // the same UTC dump without the site's zone: its cycle in UTC hours
    let (in_utc, zone) = fit("utc", &[&utc]);
    assert_eq!(zone, "UTC");
    for (what, share) in [("--site-tz", site), ("--tz", read_local)] {
        assert!(
            (share - from_swf).abs() <= 0.01,
            "{what}: daytime share {share} against the SWF's {from_swf}"
        );
    }
    assert!(
        (in_utc - from_swf).abs() > 0.1,
        "in UTC hours {in_utc}, the SWF {from_swf}"
    );
    // an SWF's own zone replaced
    let (_, zone) = fit("swf-utc", &[&swf, "--site-tz", "UTC"]);
    assert_eq!(zone, "UTC");
    // a zone that is none
    assert_fails(
        &["fit", &utc, "--site-tz", "Mars/Olympus"],
        "--site-tz \"Mars/Olympus\" is not a time zone",
    );
}

#[test]
fn fit_refuses_a_folder_that_holds_models_unless_forced() {
    let (keep, _) = scratch();
    let dir = keep.path();
    let kth = trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let out = dir.join("models").display().to_string();
    let first = sitesim(&["-q", "fit", &kth, "--out", &out]);
    assert!(first.status.success(), "{}", stderr(&first));
    let before = fs::read(dir.join("models/summary.toml")).unwrap();
    let refused = |args: &[&str], expected: &str| {
        let result = sitesim(args);
        let message = stderr(&result);
        assert!(!result.status.success(), "{args:?} succeeded");
        assert!(message.contains(expected), "{message}");
        assert!(message.contains("--force"), "{message}");
    };
    refused(&["fit", &kth, "--out", &out], "already holds fitted models");
    let again = sitesim(&["-q", "fit", &kth, "--out", &out, "--force"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(fs::read(dir.join("models/summary.toml")).unwrap(), before);
    // figures, too
    let plots = dir.join("figures").display().to_string();
    let drawn = sitesim(&["-q", "fit", &kth, "--plot", &plots]);
    assert!(drawn.status.success(), "{}", stderr(&drawn));
    refused(&["fit", &kth, "--plot", &plots], "already holds");
    let redrawn = sitesim(&["-q", "fit", &kth, "--plot", &plots, "--force"]);
    assert!(redrawn.status.success(), "{}", stderr(&redrawn));
}
