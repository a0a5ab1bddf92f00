//! A plain replay simulates while its trace is read (`scenario::replay`'s streamed path) and
//! writes its outputs as it goes (a `Simulation` with outputs): the same records and the same
//! bytes as a replay of the trace read whole, for a trace in order, one out of order (replayed
//! whole after the streamed attempt), and one that breaks part-way (the same error, nothing
//! written).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use std::path::{Path, PathBuf};

use cluster::SchedulerSpec;
use config::replay::ReplayOptions;
use scenario::output::write_jobs_csv;
use scenario::replay::ReplayRun;
use scenario::store::MemoryStore;

/// A replay, its records (as a [`scenario::sink::Kept`] sink kept them) and jobs.csv's bytes.
struct Replayed {
    run: ReplayRun,
    records: Vec<metrics::JobRecord>,
    jobs_csv: Vec<u8>,
}

/// Replays `options` under `scheduler`, writing its default outputs and keeping the records.
fn simulate_replay(scheduler: SchedulerSpec, options: &ReplayOptions) -> config::Result<Replayed> {
    let mut store = MemoryStore::new();
    let (kept, handle) = scenario::sink::Kept::new();
    let executed = scenario::Simulation::replay(scheduler, options.clone())
        .outputs(&scenario::output::formats(&[]), &mut store)
        .sink(Box::new(kept))
        .execute()?;
    let records = handle.lock().unwrap().take().unwrap().records;
    let jobs_csv = store
        .into_files()
        .into_iter()
        .find(|(name, _)| name == "jobs.csv")
        .map(|(_, bytes)| bytes)
        .unwrap_or_default();
    match executed.outcome {
        scenario::Outcome::Replay(run) => Ok(Replayed {
            run: *run,
            records,
            jobs_csv,
        }),
        scenario::Outcome::Site(_) => unreachable!("a replay"),
    }
}

fn options(trace: &Path, first_jobs: Option<usize>) -> ReplayOptions {
    ReplayOptions {
        first_jobs,
        ..ReplayOptions::new(trace)
    }
}

fn easy() -> SchedulerSpec {
    schedulers::REGISTRY
        .spec("easy", &Default::default())
        .unwrap()
}

/// A trace of `n` jobs on 16 processors: varied sizes, runtimes and estimates, every seventh
/// job stopped at its limit (status 0, runtime = requested time), submitted at `submit(i)`.
fn trace(dir: &Path, name: &str, n: i64, submit: impl Fn(i64) -> i64) -> PathBuf {
    let mut text = String::from("; MaxProcs: 16\n");
    for i in 1..=n {
        let runtime = 30 + (i * 37) % 900;
        let estimate = if i % 7 == 0 { runtime } else { runtime * 2 };
        let status = if i % 7 == 0 { 0 } else { 1 };
        let size = 1 + (i * 5) % 16;
        text.push_str(&format!(
            "{i} {} 0 {runtime} {size} -1 -1 {size} {estimate} -1 {status} {} 1 -1 1 -1 -1 -1\n",
            submit(i),
            1 + i % 4
        ));
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The streamed replay against the whole-trace one (`first_jobs` beyond the trace's length
/// keeps every job but reads the trace whole first).
fn same_as_whole(path: &Path) {
    let whole = simulate_replay(easy(), &options(path, Some(usize::MAX))).unwrap();
    let streamed = simulate_replay(easy(), &options(path, None)).unwrap();
    assert_eq!(streamed.records, whole.records);
    assert_eq!(streamed.run.input, whole.run.input);
    assert_eq!(streamed.run.jobs, whole.records.len());
    assert_eq!(
        format!("{:?}", streamed.run.summary()),
        format!("{:?}", whole.run.summary())
    );
    assert!(
        whole.records.iter().any(|r| r.killed),
        "jobs stopped at their limit"
    );
    let mut expected = Vec::new();
    write_jobs_csv(&whole.records, None, &mut expected).unwrap();
    assert_eq!(
        String::from_utf8(streamed.jobs_csv).unwrap(),
        String::from_utf8(expected).unwrap()
    );
}

#[test]
fn a_trace_in_order_streams_to_the_same_run() {
    let dir = tempfile::tempdir().unwrap();
    // More jobs than one chunk sent between the threads, with a busy machine.
    same_as_whole(&trace(dir.path(), "ordered.swf", 30_000, |i| i * 20));
}

#[test]
fn a_trace_out_of_order_is_replayed_whole() {
    let dir = tempfile::tempdir().unwrap();
    // Late in the file, a job submitted before ones already read.
    same_as_whole(&trace(dir.path(), "unordered.swf", 20_000, |i| {
        if i == 15_000 { 100 } else { i * 20 }
    }));
}

#[test]
fn a_trace_far_out_of_order_early_is_replayed_whole_and_late_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    // Job 90,000 belongs first: further back than the window of 65,536 jobs, while the first
    // jobs are still staged: the streamed attempt is abandoned and the trace replayed whole.
    same_as_whole(&trace(dir.path(), "early.swf", 100_000, |i| {
        if i == 90_000 { 100 } else { i * 20 }
    }));
    // The same disorder once 65,536 jobs were replayed for good: refused, naming the job,
    // and no file left in the output directory (the records written so far were in temporary
    // files, removed as a failed command's are).
    let path = trace(dir.path(), "late.swf", 200_000, |i| {
        if i == 150_000 { 100 } else { i * 20 }
    });
    let out = dir.path().join("out");
    let e = {
        let mut store = scenario::store::OutputDir::create(&out).unwrap();
        scenario::Simulation::replay(easy(), options(&path, None))
            .outputs(&scenario::output::formats(&[]), &mut store)
            .execute()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert!(
        e.contains(
            "late.swf: job 150000 (submit 100) is out of submission order by more than 65536 jobs"
        ),
        "{e}"
    );
    assert!(!out.exists(), "a failed replay left its output directory");
    // Read whole (as --first-jobs does), it replays.
    assert!(simulate_replay(easy(), &options(&path, Some(usize::MAX))).is_ok());
}

#[test]
fn a_trace_that_breaks_part_way_fails_the_same_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = trace(dir.path(), "broken.swf", 20_000, |i| i * 20);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("20001 400020 0 ten 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n");
    std::fs::write(&path, text).unwrap();
    let whole = simulate_replay(easy(), &options(&path, Some(usize::MAX)))
        .err()
        .unwrap()
        .to_string();
    // The store's files are written only by a replay that succeeds (a failed command never
    // commits them); here: the same error, and no bytes reached the store's jobs.csv.
    let mut store = MemoryStore::new();
    let streamed = scenario::Simulation::replay(easy(), options(&path, None))
        .outputs(&scenario::output::formats(&[]), &mut store)
        .execute()
        .err()
        .unwrap()
        .to_string();
    assert_eq!(streamed, whole);
    assert!(streamed.contains("broken.swf:20002"), "{streamed}");
    let written: usize = store.into_files().iter().map(|(_, b)| b.len()).sum();
    assert_eq!(written, 0, "{written} bytes written");
}
