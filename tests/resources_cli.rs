//! A machine's resources besides processors (`replay --resources`): a sacct dump's jobs ask for
//! them in `ReqTRES`, a job starts only when every resource it asks for is free, a job asking
//! for more than the machine has is rejected, jobs.csv has a column for each, and the rules
//! that plan with processor counts are refused such a machine.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{assert_fails, column, scratch, sitesim, stderr, table, trace};

/// GPUs the test machine has.
const GPUS: i64 = 2;

/// KTH-SP2's first `jobs` jobs as a sacct dump whose every third job asks for one or two GPUs
/// (`gres/gpu` in `ReqTRES`), and job 31 (line 32) for three.
fn dump_with_gpus(dir: &Path, jobs: usize) -> PathBuf {
    let kth = swf::Trace::read(trace("KTH-SP2-1996-2.1-cln.swf.gz")).unwrap();
    let start = kth.header.unix_start_time().unwrap_or(0);
    let records: Vec<swf::Record> = kth.records.into_iter().take(jobs).collect();
    let mut plain = Vec::new();
    sacct::write_dump(&records, start, &mut plain).unwrap();
    let text = String::from_utf8(plain).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let tres = header.split('|').position(|c| c == "ReqTRES").unwrap();
    let mut out = format!("{header}\n");
    for (n, line) in lines.enumerate() {
        let mut fields: Vec<String> = line.split('|').map(str::to_string).collect();
        if n % 3 == 0 {
            let gpus = if n == 30 { 3 } else { 1 + (n / 3) % 2 };
            let list = &mut fields[tres];
            if !list.is_empty() {
                list.push(',');
            }
            list.push_str(&format!("gres/gpu={gpus}"));
        }
        out.push_str(&fields.join("|"));
        out.push('\n');
    }
    let path = dir.join("gpus.sacct");
    fs::write(&path, out).unwrap();
    path
}

fn replay(dump: &Path, out: &Path, extra: &[&str]) {
    let mut args = vec![
        "replay",
        dump.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ];
    args.extend_from_slice(extra);
    let run = sitesim(&args);
    assert!(run.status.success(), "{}", stderr(&run));
}

#[test]
fn jobs_wait_for_gpus_and_jobs_csv_shows_them() {
    let (dir, _) = scratch();
    let dump = dump_with_gpus(dir.path(), 600);
    let with = dir.path().join("with");
    let without = dir.path().join("without");
    replay(
        &dump,
        &with,
        &["--resources", "gres/gpu=2", "--backfill", "easy"],
    );
    replay(&dump, &without, &["--backfill", "easy"]);

    let (header, rows) = table(&with.join("jobs.csv"));
    let gpu = column(&header, "gres/gpu");
    assert_eq!(gpu, column(&header, "bounded_slowdown") + 1, "{header:?}");
    let (start, end) = (column(&header, "start"), column(&header, "end"));
    // the job asking for three GPUs is rejected, the others are all here
    assert_eq!(rows.len(), 599);
    let summary = fs::read_to_string(with.join("summary.json")).unwrap();
    assert!(summary.contains("\"rejected_too_wide\": 1"), "{summary}");
    // at no instant do the running jobs hold more GPUs than the machine has
    let mut events: Vec<(i64, i64)> = Vec::new();
    for row in &rows {
        let gpus: i64 = row[gpu].parse().unwrap();
        let (s, e): (i64, i64) = (row[start].parse().unwrap(), row[end].parse().unwrap());
        if gpus > 0 && e > s {
            events.push((s, gpus));
            events.push((e, -gpus));
        }
    }
    events.sort(); // ends (negative) before starts at the same instant
    let mut held = 0;
    for (_, change) in &events {
        held += change;
        assert!(held <= GPUS, "{held} GPUs held on a machine of {GPUS}");
    }
    assert!(rows.iter().any(|r| r[gpu] == "2"));
    // the GPUs are what some jobs waited for: the schedule differs from the processors' alone
    let (plain_header, plain_rows) = table(&without.join("jobs.csv"));
    assert!(!plain_header.iter().any(|c| c == "gres/gpu"));
    let waits = |header: &[String], rows: &[Vec<String>]| -> i64 {
        let wait = column(header, "wait");
        rows.iter().map(|r| r[wait].parse::<i64>().unwrap()).sum()
    };
    assert!(waits(&header, &rows) > waits(&plain_header, &plain_rows));
}

#[test]
fn a_machine_of_other_resources_is_checked() {
    let (dir, _) = scratch();
    let dump = dump_with_gpus(dir.path(), 60);
    let dump = dump.to_str().unwrap();
    assert_fails(
        &[
            "replay",
            dump,
            "--resources",
            "gres/gpu=2",
            "--backfill",
            "conservative",
        ],
        "plans with processor counts only",
    );
    for (resources, expected) in [
        (
            "gres/gpu=0",
            "the count of gres/gpu must be a whole number from 1",
        ),
        ("gres/gpu", "is not NAME=COUNT"),
        ("a=1,b=1,c=1,d=1,e=1", "at most 4 kinds"),
        ("gres/gpu=1,gres/gpu=2", "gres/gpu is given twice"),
    ] {
        assert_fails(&["replay", dump, "--resources", resources], expected);
    }
    let bad = dir.path().join("bad.sacct");
    let text = fs::read_to_string(dump)
        .unwrap()
        .replacen("gres/gpu=1", "gres/gpu=one", 1);
    fs::write(&bad, text).unwrap();
    // (assert_fails also checks that no output directory is left behind)
    let message = assert_fails(
        &["replay", bad.to_str().unwrap(), "--resources", "gres/gpu=2"],
        "a whole number of gres/gpu",
    );
    assert!(message.contains("ReqTRES"), "{message}");
}
