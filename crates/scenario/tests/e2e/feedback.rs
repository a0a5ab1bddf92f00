//! Replay with feedback (a `Simulation::replay` with `feedback`): a hand-made trace whose schedule is
//! computed by hand, and the fixed point (a trace whose logged schedule is what the scheduler
//! produces gets every job back at its logged submit time).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cluster::SchedulerSpec;
use config::replay::ReplayOptions;
use metrics::SessionEnd;
use scenario::replay::ReplayRun;

/// A replay and its records, as a [`scenario::sink::Kept`] sink kept them.
struct Replayed {
    run: ReplayRun,
    records: Vec<metrics::JobRecord>,
}

impl std::ops::Deref for Replayed {
    type Target = ReplayRun;
    fn deref(&self) -> &ReplayRun {
        &self.run
    }
}

/// Replays `options` under `scheduler`, keeping the records.
fn simulate_replay(scheduler: SchedulerSpec, options: &ReplayOptions) -> config::Result<Replayed> {
    let (kept, handle) = scenario::sink::Kept::new();
    let executed = scenario::Simulation::replay(scheduler, options.clone())
        .sink(Box::new(kept))
        .execute()?;
    let records = handle.lock().unwrap().take().unwrap().records;
    match executed.outcome {
        scenario::Outcome::Replay(run) => Ok(Replayed { run: *run, records }),
        scenario::Outcome::Site(_) => unreachable!("a replay"),
    }
}

fn options(trace: &Path, first_jobs: Option<usize>) -> ReplayOptions {
    ReplayOptions {
        first_jobs,
        feedback: true,
        ..ReplayOptions::new(trace)
    }
}

fn fcfs() -> SchedulerSpec {
    schedulers::REGISTRY
        .spec("fcfs", &Default::default())
        .unwrap()
}

fn shared_trace(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name)
}

/// An SWF job line: number, submit, wait, runtime, processors (also the estimate's owner), estimate, user.
fn line(
    number: i64,
    submit: i64,
    wait: i64,
    runtime: i64,
    procs: i64,
    est: i64,
    user: i64,
) -> String {
    format!(
        "{number} {submit} {wait} {runtime} {procs} -1 -1 {procs} {est} -1 1 {user} 1 -1 -1 -1 -1 -1\n"
    )
}

/// Two users on 4 processors, under FCFS.
///
/// User 1, session 1: batch {1, 2} (job 2 was submitted while job 1 ran; logged ends 100 and
/// 150), then job 3, 350 s after the batch's logged end. Session 2: job 4 at 10000 (a break).
/// User 2, session 1: job 5 (logged end 1010), then batch {6, 7} 90 and 95 s after it (job 7
/// came while job 6 ran); session 2: job 8, 1235 s after the logged end of job 7 (1115), just
/// above the 20-minute threshold. Job 9 has no user: it stays at its logged time.
///
/// The simulation (FCFS, 4 processors):
/// - 0: job 1 starts (4 processors), ends 100. 10: job 5 waits. 50: job 2 waits.
/// - 100: job 5 starts (ends 1100), job 2 starts (ends 200).
/// - 200: user 1's first batch is over (job 2 ended last): job 3 at 200 + 350 = 550.
/// - 300: job 9 runs to 310. 550: job 3 starts, ends 650: user 1's session 1 is over; session
///   2 keeps its logged start 10000 (> 650 + 1201).
/// - 1100: job 5 ends: job 6 at 1100 + 90 = 1190 (runs to 1200 on all 4 processors), job 7 at
///   1100 + 95 = 1195 (waits, runs 1200-1210).
/// - 1210: user 2's session 1 is over; session 2 was logged at 2350, but starts at
///   max(2350, 1210 + 20 min + 1 s) = 2411.
#[test]
fn hand_made_trace_gets_the_hand_computed_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hand.swf");
    let lines = [
        line(1, 0, 0, 100, 4, 100, 1),
        line(2, 50, 0, 100, 2, 100, 1),
        line(3, 500, 0, 100, 1, 100, 1),
        line(4, 10_000, 0, 50, 1, 50, 1),
        line(5, 10, 0, 1000, 2, 1000, 2),
        line(6, 1100, 0, 10, 4, 10, 2),
        line(7, 1105, 0, 10, 1, 10, 2),
        line(8, 2350, 0, 10, 1, 10, 2),
        line(9, 300, -1, 10, 1, 10, -1),
    ];
    std::fs::write(&path, format!("; MaxProcs: 4\n{}", lines.concat())).unwrap();
    let run = simulate_replay(fcfs(), &options(&path, None)).unwrap();
    let submits: HashMap<i64, i64> = run.records.iter().map(|r| (r.job_id, r.submit)).collect();
    let expected = [
        (1, 0),
        (2, 50),
        (3, 550),
        (4, 10_000),
        (5, 10),
        (6, 1190),
        (7, 1195),
        (8, 2411),
        (9, 300),
    ];
    assert_eq!(submits, expected.into_iter().collect());
    let ends: HashMap<i64, i64> = run.records.iter().map(|r| (r.job_id, r.end)).collect();
    assert_eq!((ends[&3], ends[&7], ends[&8]), (650, 1210, 2421));

    let feedback = run.feedback.as_ref().unwrap();
    let sessions: Vec<(u32, u32, u32, i64, i64, SessionEnd)> = feedback
        .sessions
        .iter()
        .map(|s| (s.user, s.session, s.jobs, s.start, s.end, s.ended_by))
        .collect();
    assert_eq!(
        sessions,
        vec![
            (1, 1, 3, 0, 650, SessionEnd::Abort),
            (1, 2, 1, 10_000, 10_050, SessionEnd::EndOfRun),
            (2, 1, 3, 10, 1210, SessionEnd::Abort),
            (2, 2, 1, 2411, 2421, SessionEnd::EndOfRun),
        ]
    );
    let counts = feedback.counts;
    assert_eq!(
        (
            counts.sessions,
            counts.batches,
            counts.dependent_jobs,
            counts.session_start_jobs,
            counts.independent_jobs,
            counts.delayed_sessions
        ),
        (4, 6, 3, 5, 1, 1)
    );
    // The window is the logged submit period, 0 to 10000 s (both included).
    let closed = &feedback.closed;
    assert_eq!((closed.window.start, closed.window.end), (0, 10_001));
    assert!((closed.submitted_per_hour - 9.0 / (10_001.0 / 3600.0)).abs() < 1e-12);
    assert_eq!((closed.sessions, closed.mean_session_jobs), (4, 2.0));
    // The averages and the utilization are measured over the same window: job 4 runs on to
    // 10050 and counts only its first second; before, the window ran to the last end.
    let summary = run.summary();
    assert_eq!(
        (
            summary.utilization_window.start,
            summary.utilization_window.end
        ),
        (0, 10_001)
    );
    assert_eq!(summary.jobs_measured, 9);
    let work = 4 * 100 + 2 * 100 + 100 + 1 + 2 * 1000 + 4 * 10 + 10 + 10 + 10;
    assert_eq!(summary.processed_work, f64::from(work));
    assert_eq!(summary.utilization, f64::from(work) / (4.0 * 10_001.0));

    // The same trace open-loop keeps the logged times.
    let open = simulate_replay(
        fcfs(),
        &ReplayOptions {
            feedback: false,
            ..options(&path, None)
        },
    )
    .unwrap();
    assert!(open.feedback.is_none());
    let open_submits: HashMap<i64, i64> =
        open.records.iter().map(|r| (r.job_id, r.submit)).collect();
    assert_eq!((open_submits[&3], open_submits[&8]), (500, 2350));
}

/// A trace whose logged waits are what FCFS produces is a fixed point of replay with feedback
/// under FCFS: every job is submitted at its logged time (and starts when it started).
#[test]
fn the_logged_schedule_is_a_fixed_point() {
    let original = shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz");
    let open = simulate_replay(
        fcfs(),
        &ReplayOptions {
            feedback: false,
            ..options(&original, Some(4000))
        },
    )
    .unwrap();
    // The jobs as FCFS ran them, as SWF: wait and runtime as simulated (a killed job ran to its
    // estimate), the estimate as requested time.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fcfs.swf");
    let mut header = swf::Header::new();
    header.push_field("MaxProcs", open.processors);
    let mut out = Vec::new();
    {
        let mut writer = swf::SwfWriter::new(&mut out, &header).unwrap();
        for r in &open.records {
            writer
                .write_record(&swf::Record {
                    job_number: r.job_id,
                    submit_time: r.submit,
                    wait_time: r.start - r.submit,
                    run_time: r.end - r.start,
                    allocated_processors: i64::from(r.processors),
                    requested_processors: i64::from(r.processors),
                    requested_time: r.estimate,
                    user_id: r.user,
                    ..swf::Record::default()
                })
                .unwrap();
        }
        writer.finish().unwrap();
    }
    std::fs::write(&path, out).unwrap();

    let again = simulate_replay(fcfs(), &options(&path, None)).unwrap();
    let feedback = again.feedback.as_ref().unwrap();
    // The structure has real sessions with dependent batches.
    assert!(
        feedback.counts.dependent_jobs > 500,
        "{:?}",
        feedback.counts
    );
    assert_eq!(feedback.counts.delayed_sessions, 0);
    let logged: HashMap<i64, (i64, i64)> = open
        .records
        .iter()
        .map(|r| (r.job_id, (r.submit, r.start)))
        .collect();
    assert_eq!(again.records.len(), open.records.len());
    for r in &again.records {
        assert_eq!(logged[&r.job_id], (r.submit, r.start), "job {}", r.job_id);
    }
}
