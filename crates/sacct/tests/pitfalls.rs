//! Every known pitfall of sacct dumps, one hand-made fixture each (tests/fixtures/sacct, which
//! its README describes), read and converted.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use std::path::PathBuf;

use sacct::{Clock, Reason, Requeued, SacctLog, SacctOptions, State, Unit, WaitFrom};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/sacct")
        .join(name)
}

fn read(name: &str) -> SacctLog {
    sacct::read(&fixture(name), &SacctOptions::default()).unwrap()
}

fn read_with(name: &str, options: SacctOptions) -> SacctLog {
    sacct::read(&fixture(name), &options).unwrap()
}

fn error(name: &str) -> String {
    sacct::read(&fixture(name), &SacctOptions::default())
        .unwrap_err()
        .to_string()
}

/// 2024-01-08T09:00:00Z and friends, as Unix seconds.
fn utc(text: &str) -> i64 {
    sacct::values::parse_time(text)
        .unwrap()
        .unwrap()
        .and_utc()
        .timestamp()
}

#[test]
fn job_steps_are_not_jobs() {
    let log = read("steps.txt");
    assert_eq!(log.report.lines, 5);
    assert_eq!(log.jobs.len(), 2);
    assert_eq!(log.report.get(Reason::Step), 3);
    assert_eq!(log.jobs[0].id, 100);
    assert_eq!(log.jobs[0].elapsed, Some(1800));
}

#[test]
fn array_tasks_keep_their_array_and_grouped_ranges_are_counted() {
    let log = read("arrays.txt");
    assert_eq!(log.jobs.len(), 3);
    let ids: Vec<u64> = log.jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, [201, 202, 203]);
    assert!(log.jobs.iter().all(|j| j.array.map(|a| a.0) == Some(200)));
    assert_eq!(log.jobs[2].array, Some((200, 3)));
    assert_eq!(log.report.get(Reason::ArrayRange), 1);
    assert_eq!(sacct::arrays(&log).len(), 3);
}

#[test]
fn requeued_jobs_keep_the_last_run_with_the_chosen_submit() {
    let log = read("requeue.txt");
    let job = log.jobs.iter().find(|j| j.id == 300).unwrap();
    assert_eq!(
        job.submit,
        utc("2024-01-08T11:00:00"),
        "the first submit by default"
    );
    assert_eq!(job.start, Some(utc("2024-01-08T11:07:01")));
    assert_eq!(job.restarts, 1);
    assert_eq!(log.report.get(Reason::RequeuedRun), 1);
    assert_eq!(log.report.get(Reason::RequeuedFirstSubmit), 1);
    let last = read_with(
        "requeue.txt",
        SacctOptions {
            requeued: Requeued::LastSubmit,
            ..SacctOptions::default()
        },
    );
    let job = last.jobs.iter().find(|j| j.id == 300).unwrap();
    assert_eq!(job.submit, utc("2024-01-08T11:05:01"));
}

#[test]
fn a_requeue_without_duplicates_is_reported_and_recycled_ids_renumbered() {
    let log = read("requeue.txt");
    // 301 has Restarts = 1 and no earlier run: reported, kept as is. But this dump has an
    // earlier run of 300, so it was made with --duplicates: 301's earlier runs would be there.
    assert!(log.jobs.iter().any(|j| j.id == 301));
    // 302 twice, both completed, weeks apart: two jobs, the later renumbered.
    assert_eq!(log.report.get(Reason::RecycledId), 1);
    let carol = log
        .names
        .users
        .iter()
        .find(|(_, n)| *n == "dave")
        .unwrap()
        .0;
    let dave_job = log.jobs.iter().find(|j| j.user == carol).unwrap();
    assert_eq!(dave_job.id, 303, "the largest id plus one");
    assert_eq!(log.jobs.len(), 4);
    let only_301 = sacct::read_from(
        std::fs::read_to_string(fixture("requeue.txt"))
            .unwrap()
            .lines()
            .enumerate()
            .filter(|(i, _)| *i == 0 || *i == 3)
            .map(|(_, l)| format!("{l}\n"))
            .collect::<String>()
            .as_bytes(),
        "only-301".into(),
        &SacctOptions::default(),
    )
    .unwrap();
    assert_eq!(only_301.report.get(Reason::RequeuedWithoutDuplicates), 1);
}

#[test]
fn local_times_follow_the_zone_and_daylight_saving_is_reported() {
    let utc_log = read("timezone.txt");
    assert_eq!(
        utc_log.jobs.len(),
        3,
        "read as UTC only 401's start precedes its submit"
    );
    assert_eq!(utc_log.report.get(Reason::NegativeWait), 1);
    let berlin = read_with(
        "timezone.txt",
        SacctOptions {
            clock: Clock::named("Europe/Berlin").unwrap(),
            ..SacctOptions::default()
        },
    );
    // 2024-03-31T02:30 does not exist in Berlin: 402 dropped; 02:10 and 02:50 of 2024-10-27
    // happen twice: read as the earlier, 401 starts before its submit: dropped, reported.
    assert_eq!(berlin.report.get(Reason::NonexistentLocalTime), 1);
    assert!(berlin.report.get(Reason::AmbiguousLocalTime) >= 2);
    assert_eq!(berlin.report.get(Reason::NegativeWait), 1);
    let summer = berlin.jobs.iter().find(|j| j.id == 403).unwrap();
    assert_eq!(summer.submit, utc("2024-07-01T10:00:00"), "CEST is UTC+2");
    assert!(berlin.jobs.iter().all(|j| j.start.unwrap() >= j.submit));
}

#[test]
fn unknown_and_none_times() {
    let log = read("unknown_times.txt");
    // 500, 501 cancelled before they started (Unknown / None start): kept without a runtime;
    // 502 running and 503 pending at the dump: dropped; 505 failed to boot: kept, no runtime.
    assert_eq!(log.report.get(Reason::CancelledBeforeStart), 2);
    assert_eq!(log.report.get(Reason::NotEnded), 2);
    assert_eq!(log.report.get(Reason::EndedBeforeStart), 1);
    let ids: Vec<u64> = log.jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, [500, 501, 504, 505]);
    let cancelled = &log.jobs[0];
    assert_eq!(cancelled.state, State::Cancelled);
    assert_eq!(cancelled.start, None);
    assert_eq!(cancelled.elapsed, None);
    assert_eq!(cancelled.end, Some(utc("2024-01-09T08:45:00")));
    let converted = sacct::convert(&log, Unit::Cpus);
    let record = &converted.records[0];
    assert_eq!(record.status, 5);
    assert_eq!(
        record.run_time, -1,
        "no runtime: replay and fit leave it out"
    );
    assert_eq!(
        record.wait_time,
        45 * 60,
        "how long it waited before it was cancelled"
    );
}

#[test]
fn time_limits_in_every_form() {
    let log = read("limits.txt");
    let limits: Vec<Option<i64>> = log.jobs.iter().map(|j| j.time_limit).collect();
    assert_eq!(
        limits,
        [None, None, Some(1800), Some(2 * 86_400), Some(60)],
        "Partition_Limit, UNLIMITED, 30 min, 2 days, 1 min (TimelimitRaw is minutes)"
    );
    assert_eq!(log.report.get(Reason::NoTimeLimit), 2);
    assert_eq!(log.jobs[4].state, State::Timeout);
    let text = read("limits_text.txt");
    let limits: Vec<Option<i64>> = text.jobs.iter().map(|j| j.time_limit).collect();
    assert_eq!(
        limits,
        [Some(45 * 60 + 30), Some(36 * 3600), Some(7200), None],
        "MM:SS, D-HH:MM:SS, HH:MM:SS, Partition_Limit"
    );
    let swf = sacct::convert(&log, Unit::Cpus);
    assert_eq!(swf.records[0].requested_time, -1);
    assert_eq!(swf.records[2].requested_time, 1800);
}

#[test]
fn allocated_and_requested_cpus_and_the_unit() {
    let log = read("cpus.txt");
    assert_eq!(log.report.get(Reason::MoreCpusThanRequested), 1);
    let cpus = sacct::convert(&log, Unit::Cpus);
    assert_eq!(cpus.records[0].allocated_processors, 32);
    assert_eq!(cpus.records[0].requested_processors, 1);
    assert_eq!(cpus.records[1].allocated_processors, 64);
    // 700 (32) and 701 (64) overlap from 08:10 to 08:40; 702 starts at 08:50 with 700 still on
    assert_eq!(cpus.processors, 96);
    let nodes = sacct::convert(&log, Unit::Nodes);
    assert_eq!(nodes.records[1].allocated_processors, 2);
    assert_eq!(nodes.records[1].requested_processors, 2);
    assert_eq!(nodes.processors, 3);
    // memory per requested CPU, KB: 2G for 1 CPU (TRES), 2G per CPU (ReqMem 2Gc), 32000M per node
    // over 16 CPUs
    assert_eq!(cpus.records[0].requested_memory, 2.0 * 1024.0 * 1024.0);
    assert_eq!(cpus.records[1].requested_memory, 2.0 * 1024.0 * 1024.0);
    assert_eq!(cpus.records[2].requested_memory, 32000.0 * 1024.0 / 16.0);
}

#[test]
fn a_pipe_in_the_last_field_is_kept_and_in_another_field_named() {
    let log = read("pipe.txt");
    assert_eq!(log.jobs.len(), 2);
    assert_eq!(log.jobs[1].dependency, Some(800));
    let swf = sacct::convert(&log, Unit::Cpus);
    assert_eq!(swf.records[1].preceding_job, 800);
    let e = error("pipe_in_middle.txt");
    assert!(e.contains("pipe_in_middle.txt:3:"), "{e}");
    assert!(e.contains("put it last in --format"), "{e}");
}

#[test]
fn the_wait_starts_at_submit_or_eligible() {
    let log = read("eligible.txt");
    assert_eq!(log.report.get(Reason::EligibleAfterSubmit), 1);
    let submit = sacct::convert(&log, Unit::Cpus);
    let first = submit.records.iter().find(|r| r.job_number == 900).unwrap();
    assert_eq!(first.wait_time, 2 * 3600 + 300);
    let eligible = read_with(
        "eligible.txt",
        SacctOptions {
            wait_from: WaitFrom::Eligible,
            ..SacctOptions::default()
        },
    );
    let converted = sacct::convert(&eligible, Unit::Cpus);
    let first = converted
        .records
        .iter()
        .find(|r| r.job_number == 900)
        .unwrap();
    assert_eq!(first.wait_time, 300);
    // from eligible, 901 (08:30) comes before 900 (10:00)
    assert_eq!(converted.records[0].job_number, 901);
}

#[test]
fn the_window_keeps_jobs_submitted_inside_it() {
    let log = read_with(
        "window.txt",
        SacctOptions {
            since: Some(utc("2024-02-01T00:00:00")),
            until: Some(utc("2024-02-02T00:00:00")),
            ..SacctOptions::default()
        },
    );
    let ids: Vec<u64> = log.jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, [1001, 1002]);
    assert_eq!(log.report.get(Reason::OutsideWindow), 2);
}

#[test]
fn heterogeneous_components_are_one_job_and_revoked_siblings_dropped() {
    let log = read("hetjob.txt");
    assert_eq!(log.jobs.len(), 1);
    let job = &log.jobs[0];
    assert_eq!(job.id, 1100);
    assert_eq!(job.cpus, 20);
    assert_eq!(job.het_components, 2);
    assert_eq!(log.report.get(Reason::HetComponent), 1);
    assert_eq!(log.report.get(Reason::Revoked), 1);
}

#[test]
fn bad_input_names_file_line_and_field() {
    let e = error("bad_header.txt");
    assert!(
        e.contains("bad_header.txt:1:") && e.contains("header"),
        "{e}"
    );
    let e = error("noheader.txt");
    assert!(
        e.contains("noheader.txt:1:") && e.contains("--noheader"),
        "{e}"
    );
    let e = error("too_few_fields.txt");
    assert!(
        e.contains("too_few_fields.txt:3: 10 fields, the header has 26"),
        "{e}"
    );
    let e = error("impossible_time.txt");
    assert!(
        e.contains("impossible_time.txt:3: field Submit: \"2024-02-30T08:00:00\""),
        "{e}"
    );
    let e = error("unknown_state.txt");
    assert!(
        e.contains("unknown_state.txt:3: field State: \"VAPORIZED\""),
        "{e}"
    );
    let e = sacct::read(&fixture("missing.txt"), &SacctOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.txt: cannot open"), "{e}");
}

#[test]
fn the_conversion_round_trips_through_swf() {
    for name in [
        "steps.txt",
        "arrays.txt",
        "requeue.txt",
        "unknown_times.txt",
        "limits.txt",
        "cpus.txt",
        "pipe.txt",
        "eligible.txt",
        "hetjob.txt",
    ] {
        let converted = sacct::convert(&read(name), Unit::Cpus);
        let mut first = swf::SwfWriter::new(Vec::new(), &converted.header).unwrap();
        for r in &converted.records {
            first.write_record(r).unwrap();
        }
        let bytes = first.finish().unwrap();
        let back = swf::SwfReader::new(&bytes[..], name).unwrap();
        let header = back.header().clone();
        let records: Vec<swf::Record> = back.map(Result::unwrap).collect();
        assert_eq!(records, converted.records, "{name}");
        let mut second = swf::SwfWriter::new(Vec::new(), &header).unwrap();
        for r in &records {
            second.write_record(r).unwrap();
        }
        assert_eq!(
            second.finish().unwrap(),
            bytes,
            "{name}: SWF -> SWF is the identity"
        );
    }
}

#[test]
fn a_file_without_line_breaks_is_refused_not_read_whole() {
    let zeros = std::io::Read::take(std::io::repeat(0), 4 * sacct::MAX_LINE_BYTES as u64);
    let e = sacct::read_from(
        std::io::BufReader::new(zeros),
        "zeros".into(),
        &SacctOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("zeros:1: a line longer than"), "{e}");
}
