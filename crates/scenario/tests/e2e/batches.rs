//! A small site's batch records: the closed-loop summary's decision measures recomputed from
//! them, their consistency with the jobs and sessions, the feedback models' probabilities, and
//! batches.csv read back.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use std::sync::Arc;

use metrics::{BatchDecision, BatchRecord, SessionEnd};
use scenario::output::{BATCH_COLUMNS, write_batches_csv};
use scenario::sink::Kept;

/// A crowded machine (jobs wait), a warm-up, and three groups: the paper's users, users who
/// react to the bounded slowdown, and Schlagkamp's users (no trial).
const SITE: &str = "[site]\nprocessors = 1152\n[scheduler]\npolicy = \"easy\"\n[run]\nweeks = 2\nwarmup_days = 3\nseed = 5\n\
[[groups]]\nname = \"paper\"\nusers = 60\n\
[[groups]]\nname = \"slowdown\"\nusers = 30\nfeedback = \"slowdown\"\n\
[[groups]]\nname = \"weekly\"\nusers = 10\nkind = \"schlagkamp\"\n";

#[test]
fn the_decision_measures_are_those_of_the_batches_decided_in_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("site.toml");
    std::fs::write(&path, SITE).unwrap();
    let site =
        config::options::site(config::options::SiteSource::File(&path), &Vec::new()).unwrap();
    let model = Arc::new(config::models::default_model().unwrap());
    let (kept, handle) = Kept::new();
    let executed = scenario::Simulation::site(site, model)
        .sink(Box::new(kept))
        .execute()
        .unwrap();
    let r = executed.site().unwrap();
    let run = handle.lock().unwrap().take().unwrap();
    let batches = &run.batches;
    let c = &r.closed;

    // Recomputed from the records decided in [warm-up, horizon).
    let inside: Vec<&BatchRecord> = batches
        .iter()
        .filter(|b| b.end >= c.window.start && b.end < c.window.end)
        .collect();
    assert!(inside.len() > 100, "{} batches", inside.len());
    let waited = inside.iter().filter(|b| b.wait > 0).count() as f64 / inside.len() as f64;
    let trials: Vec<f64> = inside
        .iter()
        .filter_map(|b| b.continue_probability)
        .collect();
    let mean = trials.iter().sum::<f64>() / trials.len() as f64;
    assert!((c.deciding_jobs_waited_share - waited).abs() < 1e-12);
    assert!((c.mean_continue_probability - mean).abs() < 1e-12);
    assert!(waited > 0.0 && waited < 1.0, "{waited}");
    assert!(
        batches.iter().any(|b| b.end < c.window.start),
        "the warm-up has batches"
    );

    // Every job belongs to exactly one completed batch, and each record is its deciding job's.
    let jobs: u64 = batches.iter().map(|b| u64::from(b.jobs)).sum();
    assert_eq!(jobs, run.records.len() as u64);
    for b in batches {
        let job = run.records.iter().find(|j| j.job_id == b.job_id).unwrap();
        assert_eq!(
            (job.end, job.wait(), job.runtime(), job.response()),
            (b.end, b.wait, b.runtime, b.response)
        );
        assert_eq!(job.user, i64::from(b.user));
        let trial = matches!(b.decision, BatchDecision::Continue | BatchDecision::Break)
            && b.group != "weekly";
        assert_eq!(b.continue_probability.is_some(), trial, "{b:?}");
        let expected = match b.group.as_str() {
            "paper" => 0.8 / (0.05 * b.response as f64 / 60.0 + 1.0),
            "slowdown" => 0.8 / (0.34 * (job.bounded_slowdown() - 1.0) + 1.0),
            _ => continue,
        };
        if let Some(p) = b.continue_probability {
            assert!((p - expected).abs() < 1e-12, "{b:?}: {expected}");
        }
        if b.group == "slowdown" && b.wait == 0 {
            assert_eq!(b.continue_probability.unwrap_or(0.8), 0.8);
        }
    }
    assert!(
        batches
            .iter()
            .any(|b| b.group == "weekly" && b.decision == BatchDecision::Continue)
    );
    // Breaks close sessions by abort; a closed window, by the cycle (sessions.csv agrees).
    let count = |d: BatchDecision| batches.iter().filter(|b| b.decision == d).count();
    let ended = |e: SessionEnd| run.sessions.iter().filter(|s| s.ended_by == e).count();
    assert_eq!(count(BatchDecision::Break), ended(SessionEnd::Abort));
    assert!(count(BatchDecision::Cycle) > 0);
    assert!(count(BatchDecision::Cycle) <= ended(SessionEnd::Cycle));
    // Batch numbers run from 1 within each session.
    for pair in batches.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if (a.user, a.session) == (b.user, b.session) {
            assert_eq!(b.batch, a.batch + 1);
        } else {
            assert_eq!(b.batch, 1, "{b:?}");
        }
    }

    // batches.csv reads back to the same records.
    let mut text = Vec::new();
    write_batches_csv(batches, &mut text).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_slice());
    let headers: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(headers, BATCH_COLUMNS);
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), batches.len());
    for (row, b) in rows.iter().zip(batches) {
        let int = |i: usize| row[i].parse::<i64>().unwrap();
        let read = BatchRecord {
            user: int(0) as u32,
            group: row[1].to_string(),
            session: int(2) as u32,
            batch: int(3) as u32,
            jobs: int(4) as u32,
            job_id: int(5),
            end: int(6),
            wait: int(7),
            runtime: int(8),
            response: int(9),
            continue_probability: (!row[10].is_empty()).then(|| row[10].parse().unwrap()),
            decision: [
                BatchDecision::Continue,
                BatchDecision::Break,
                BatchDecision::Cycle,
                BatchDecision::End,
            ]
            .into_iter()
            .find(|d| d.label() == &row[11])
            .unwrap(),
        };
        assert_eq!(&read, b);
    }
}
