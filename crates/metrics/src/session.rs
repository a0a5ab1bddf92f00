//! Sessions and batches of simulated users and the closed loop's own measures: throughput, session
//! length, and what the users' continue decisions saw.

use serde::Serialize;

use crate::{JobRecord, Time, Window};

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionEnd {
    /// The user took a break after a batch (the continue trial failed).
    Abort,
    /// The user's activity window closed (night, weekend).
    Cycle,
    /// The simulated period ended with the session open.
    EndOfRun,
}

impl SessionEnd {
    /// The label used in sessions.csv.
    pub fn label(self) -> &'static str {
        match self {
            SessionEnd::Abort => "abort",
            SessionEnd::Cycle => "cycle",
            SessionEnd::EndOfRun => "end_of_run",
        }
    }
}

/// One session of one user: consecutive batches separated by short think times.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionRecord {
    /// The user's number, from 1 (its index in the population + 1; the trace's user id in a
    /// replay with feedback), as in jobs.csv and the SWF export.
    pub user: u32,
    /// The user's group name.
    pub group: String,
    /// The session's number among the user's sessions, from 1.
    pub session: u32,
    /// Jobs submitted in it.
    pub jobs: u32,
    /// When its first job was submitted, seconds.
    pub start: Time,
    /// When it ended, seconds: the end of the batch after which the user left, the moment the
    /// activity window was found closed, or the end of the run.
    pub end: Time,
    /// Why it ended.
    pub ended_by: SessionEnd,
}

/// What a user did when a batch was complete (after the end of the batch's last job).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchDecision {
    /// The user stays in its session: the next batch after a think time (Shmueli's trial
    /// succeeded, or a kind without a trial such as Schlagkamp's, which always continues).
    Continue,
    /// The continue trial failed: the session ends (by abort) and the user takes a break.
    Break,
    /// No trial: the user's activity window had closed when the batch ended, so its session
    /// ended by the cycle and it sleeps until the window opens.
    Cycle,
    /// No trial: the batch ended at or after the horizon, when users start no more batches (the
    /// session stays open and ends with the run).
    End,
}

impl BatchDecision {
    /// The label used in batches.csv.
    pub fn label(self) -> &'static str {
        match self {
            BatchDecision::Continue => "continue",
            BatchDecision::Break => "break",
            BatchDecision::Cycle => "cycle",
            BatchDecision::End => "end",
        }
    }
}

/// One completed batch of one user, and the decision its end led to (paper 000, section
/// III-B.1: the decision follows the end of the batch's last job, the deciding job).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchRecord {
    /// The user's number, from 1 (its index in the population + 1), as in jobs.csv and the SWF
    /// export.
    pub user: u32,
    /// The user's group name.
    pub group: String,
    /// The session the batch belongs to (the number of [`SessionRecord::session`]).
    pub session: u32,
    /// The batch's number within its session, from 1.
    pub batch: u32,
    /// Jobs of the batch that were submitted (jobs due after the horizon are never submitted).
    pub jobs: u32,
    /// The deciding job: the batch's job that ended last.
    pub job_id: i64,
    /// When the deciding job ended, seconds: the moment of the decision.
    pub end: Time,
    /// The deciding job's wait (start - submit), seconds.
    pub wait: Time,
    /// The deciding job's runtime as it ran (end - start), seconds.
    pub runtime: Time,
    /// The deciding job's response (end - submit = wait + runtime), seconds.
    pub response: Time,
    /// The continue probability the user's trial used; `None` when no trial was made (the
    /// window had closed, the run had ended, or the kind has no trial).
    pub continue_probability: Option<f64>,
    /// What the user did.
    pub decision: BatchDecision,
}

/// Throughput and session length over a measurement window (paper 000, section IV-B).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClosedLoopSummary {
    /// The window, seconds.
    pub window: Window,
    /// Jobs submitted in the window per hour.
    pub submitted_per_hour: f64,
    /// Jobs that ended in the window per hour.
    pub completed_per_hour: f64,
    /// Sessions that started in the window.
    pub sessions: u64,
    /// Mean jobs per session (those sessions).
    pub mean_session_jobs: f64,
    /// Median jobs per session.
    pub median_session_jobs: f64,
    /// Sessions that ended with a break after a batch.
    pub ended_by_abort: u64,
    /// Sessions that ended because the activity window closed.
    pub ended_by_cycle: u64,
    /// Sessions still open at the end of the run.
    pub ended_by_end_of_run: u64,
    /// Of the batches decided in the window (their deciding job ended in it), the share whose
    /// deciding job waited (wait > 0); NaN without such batches.
    pub deciding_jobs_waited_share: f64,
    /// The mean continue probability of the batches decided in the window with a continue trial
    /// (section III-B.1); NaN without such batches.
    pub mean_continue_probability: f64,
    /// What the same users reach on an uncontended machine, when measured (`run --headroom`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headroom: Option<Headroom>,
}

/// How much any scheduler could raise a closed loop's throughput: the throughput the same users
/// (same seed, so the same draws) reach when no job waits, against this run's and EASY's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Headroom {
    /// Jobs submitted per hour on an uncontended machine (nothing waits).
    pub uncontended_submitted_per_hour: f64,
    /// Jobs submitted per hour under EASY on the site's machine.
    pub easy_submitted_per_hour: f64,
    /// uncontended / this run's throughput - 1: the relative gain no scheduler can exceed on
    /// average over seeds (0 when nothing waited). On one seed a scheduler can exceed it
    /// (negative headroom): once one decision differs, a user's later draws (continue trials,
    /// think times, breaks) fall at other moments and the runs diverge, so the uncontended run
    /// bounds the mean, not each seed.
    pub headroom: f64,
    /// (this run's throughput - EASY's) / (uncontended - EASY's): the share of EASY's headroom
    /// this scheduler captured (0 for EASY itself; NaN when EASY's room, uncontended - EASY's,
    /// is not positive; above 1 on a seed where the run beats the uncontended one). Over seeds,
    /// the ratio of summed differences is steadier than the mean of these per-seed shares when
    /// the room is small (`scripts/shmueli-headroom.py` gives both).
    pub capture: f64,
}

impl Headroom {
    /// From the three throughputs (jobs submitted per hour).
    pub fn new(actual: f64, easy: f64, uncontended: f64) -> Headroom {
        let headroom = if actual > 0.0 {
            uncontended / actual - 1.0
        } else {
            f64::NAN
        };
        let room = uncontended - easy;
        let capture = if room > 0.0 {
            (actual - easy) / room
        } else {
            f64::NAN
        };
        Headroom {
            uncontended_submitted_per_hour: uncontended,
            easy_submitted_per_hour: easy,
            headroom,
            capture,
        }
    }
}

impl ClosedLoopSummary {
    /// Measures jobs, sessions and batches over `window`: jobs by their submit (or end) time,
    /// sessions by their start, batches by their decision time (the deciding job's end). The
    /// continue probabilities are summed in (user, session, batch) order, whatever the order of
    /// `batches`.
    pub fn compute(
        records: &[JobRecord],
        sessions: &[SessionRecord],
        batches: &[BatchRecord],
        window: Window,
    ) -> ClosedLoopSummary {
        let mut builder = ClosedLoopBuilder::new(window);
        for r in records {
            builder.job(r);
        }
        for s in sessions {
            builder.session(s);
        }
        for b in batches {
            builder.batch(b);
        }
        builder.finish()
    }
}

/// A [`ClosedLoopSummary`] of jobs, sessions and batches handed in one at a time, in any order,
/// without keeping them: per session in the window its length (4 bytes), per batch decided in
/// it with a continue trial its key and probability (16 bytes). Gives the same numbers, bit for
/// bit, as [`ClosedLoopSummary::compute`].
#[derive(Debug, Clone)]
pub struct ClosedLoopBuilder {
    window: Window,
    submitted: u64,
    completed: u64,
    /// Jobs of each session that started in the window.
    lengths: Vec<u32>,
    ended_by: [u64; 3],
    decided: u64,
    waited: u64,
    /// The continue probabilities of the batches decided in the window, by user, with their
    /// (session, batch) numbers.
    probabilities: std::collections::BTreeMap<u32, Vec<(u32, u32, f64)>>,
}

impl ClosedLoopBuilder {
    /// An empty builder measuring over `window`.
    pub fn new(window: Window) -> ClosedLoopBuilder {
        ClosedLoopBuilder {
            window,
            submitted: 0,
            completed: 0,
            lengths: Vec::new(),
            ended_by: [0; 3],
            decided: 0,
            waited: 0,
            probabilities: std::collections::BTreeMap::new(),
        }
    }

    fn inside(&self, t: Time) -> bool {
        t >= self.window.start && t < self.window.end
    }

    /// Adds a job.
    pub fn job(&mut self, r: &JobRecord) {
        self.submitted += u64::from(self.inside(r.submit));
        self.completed += u64::from(self.inside(r.end));
    }

    /// Adds a job submitted at `submit` that had not started when the measurement stopped (one
    /// still waiting at the end of an episode of the Gymnasium environment): submitted, not
    /// completed.
    pub fn waiting_job(&mut self, submit: Time) {
        self.submitted += u64::from(self.inside(submit));
    }

    /// Adds a session.
    pub fn session(&mut self, s: &SessionRecord) {
        if self.inside(s.start) {
            self.lengths.push(s.jobs);
            self.ended_by[match s.ended_by {
                SessionEnd::Abort => 0,
                SessionEnd::Cycle => 1,
                SessionEnd::EndOfRun => 2,
            }] += 1;
        }
    }

    /// Adds a batch.
    pub fn batch(&mut self, b: &BatchRecord) {
        if self.inside(b.end) {
            self.decided += 1;
            self.waited += u64::from(b.wait > 0);
            if let Some(p) = b.continue_probability {
                self.probabilities
                    .entry(b.user)
                    .or_default()
                    .push((b.session, b.batch, p));
            }
        }
    }

    /// The summary of everything added.
    pub fn finish(self) -> ClosedLoopSummary {
        let window = self.window;
        let hours = (window.end - window.start) as f64 / 3600.0;
        let per_hour = |n: u64| if hours > 0.0 { n as f64 / hours } else { 0.0 };
        let mut lengths: Vec<f64> = self.lengths.iter().map(|&n| f64::from(n)).collect();
        lengths.sort_by(f64::total_cmp);
        let mean = |n: u64, sum: f64| if n == 0 { f64::NAN } else { sum / n as f64 };
        // In (user, session, batch) order (a stable sort: equal keys keep their order).
        let mut trials = 0u64;
        let probability_sum: f64 = self
            .probabilities
            .into_values()
            .flat_map(|mut of_user| {
                of_user.sort_by_key(|&(session, batch, _)| (session, batch));
                of_user
            })
            .map(|(_, _, p)| {
                trials += 1;
                p
            })
            .sum();
        ClosedLoopSummary {
            window,
            submitted_per_hour: per_hour(self.submitted),
            completed_per_hour: per_hour(self.completed),
            sessions: lengths.len() as u64,
            mean_session_jobs: mean_of(&lengths),
            median_session_jobs: median_of_sorted(&lengths),
            ended_by_abort: self.ended_by[0],
            ended_by_cycle: self.ended_by[1],
            ended_by_end_of_run: self.ended_by[2],
            deciding_jobs_waited_share: mean(self.decided, self.waited as f64),
            mean_continue_probability: mean(trials, probability_sum),
            headroom: None,
        }
    }
}

/// The mean of `values` (NaN when there are none), summed in their order.
fn mean_of(values: &[f64]) -> f64 {
    if values.is_empty() {
        f64::NAN
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

/// The median of sorted `values` (NaN when there are none).
fn median_of_sorted(values: &[f64]) -> f64 {
    if values.is_empty() {
        f64::NAN
    } else {
        crate::summary::quantile_sorted(values, 0.5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headroom_and_capture() {
        let h = Headroom::new(110.0, 100.0, 150.0);
        assert!((h.headroom - (150.0 / 110.0 - 1.0)).abs() < 1e-12);
        assert!((h.capture - 0.2).abs() < 1e-12);
        let none = Headroom::new(100.0, 100.0, 100.0);
        assert_eq!(none.headroom, 0.0);
        assert!(none.capture.is_nan());
        assert_eq!(Headroom::new(100.0, 100.0, 120.0).capture, 0.0);
    }

    /// The bound holds on average over seeds, not per seed: a run that beats its uncontended
    /// reference (seen at 50 users on the default site) has a negative headroom and a capture
    /// above 1, and a seed where EASY equals the uncontended run has no capture.
    #[test]
    fn a_seed_can_beat_the_uncontended_run() {
        let h = Headroom::new(14.994, 14.850, 14.990);
        assert!(h.headroom < 0.0, "{h:?}");
        assert!(h.capture > 1.0, "{h:?}");
        assert!(Headroom::new(12.557, 12.549, 12.549).capture.is_nan());
    }

    fn session(start: Time, jobs: u32, ended_by: SessionEnd) -> SessionRecord {
        SessionRecord {
            user: 0,
            group: "g".into(),
            session: 1,
            jobs,
            start,
            end: start + 10,
            ended_by,
        }
    }

    fn job(submit: Time, end: Time) -> JobRecord {
        JobRecord {
            job: crate::Job {
                job_id: 1,
                user: 0,
                submit,
                processors: 1,
                estimate: 100,
                ..crate::Job::default()
            },
            start: submit,
            end,
            killed: false,
            ..JobRecord::default()
        }
    }

    #[test]
    fn throughput_and_sessions_over_the_window() {
        let window = Window {
            start: 3600,
            end: 3 * 3600,
        };
        let jobs = [
            job(0, 4000),
            job(3600, 3700),
            job(7000, 20_000),
            job(10_800, 11_000),
        ];
        let sessions = [
            session(0, 9, SessionEnd::Abort),
            session(3600, 2, SessionEnd::Abort),
            session(5000, 4, SessionEnd::Cycle),
            session(7000, 3, SessionEnd::EndOfRun),
        ];
        let s = ClosedLoopSummary::compute(&jobs, &sessions, &[], window);
        // Submitted in [1 h, 3 h): jobs at 3600 and 7000 -> 2 in 2 hours.
        assert_eq!(s.submitted_per_hour, 1.0);
        // Ended in the window: 4000 and 3700.
        assert_eq!(s.completed_per_hour, 1.0);
        assert_eq!(s.sessions, 3);
        assert_eq!(s.mean_session_jobs, 3.0);
        assert_eq!(s.median_session_jobs, 3.0);
        assert_eq!(
            (s.ended_by_abort, s.ended_by_cycle, s.ended_by_end_of_run),
            (1, 1, 1)
        );
        assert!(s.deciding_jobs_waited_share.is_nan() && s.mean_continue_probability.is_nan());
    }

    fn batch(end: Time, wait: Time, p: Option<f64>, decision: BatchDecision) -> BatchRecord {
        BatchRecord {
            user: 0,
            group: "g".into(),
            session: 1,
            batch: 1,
            jobs: 1,
            job_id: 1,
            end,
            wait,
            runtime: 60,
            response: wait + 60,
            continue_probability: p,
            decision,
        }
    }

    /// The summary as it was computed from the whole run's sorted records, before the builder.
    fn reference(
        records: &[JobRecord],
        sessions: &[SessionRecord],
        batches: &[BatchRecord],
        window: Window,
    ) -> ClosedLoopSummary {
        let hours = (window.end - window.start) as f64 / 3600.0;
        let inside = |t: Time| t >= window.start && t < window.end;
        let per_hour = |n: usize| if hours > 0.0 { n as f64 / hours } else { 0.0 };
        let measured: Vec<&SessionRecord> = sessions.iter().filter(|s| inside(s.start)).collect();
        let mut lengths: Vec<f64> = measured.iter().map(|s| f64::from(s.jobs)).collect();
        lengths.sort_by(f64::total_cmp);
        let count = |end: SessionEnd| measured.iter().filter(|s| s.ended_by == end).count() as u64;
        let decided: Vec<&BatchRecord> = batches.iter().filter(|b| inside(b.end)).collect();
        let waited = decided.iter().filter(|b| b.wait > 0).count();
        let probabilities: Vec<f64> = decided
            .iter()
            .filter_map(|b| b.continue_probability)
            .collect();
        let mean = |n: usize, sum: f64| if n == 0 { f64::NAN } else { sum / n as f64 };
        ClosedLoopSummary {
            window,
            submitted_per_hour: per_hour(records.iter().filter(|r| inside(r.submit)).count()),
            completed_per_hour: per_hour(records.iter().filter(|r| inside(r.end)).count()),
            sessions: measured.len() as u64,
            mean_session_jobs: mean_of(&lengths),
            median_session_jobs: median_of_sorted(&lengths),
            ended_by_abort: count(SessionEnd::Abort),
            ended_by_cycle: count(SessionEnd::Cycle),
            ended_by_end_of_run: count(SessionEnd::EndOfRun),
            deciding_jobs_waited_share: mean(decided.len(), waited as f64),
            mean_continue_probability: mean(probabilities.len(), probabilities.iter().sum()),
            headroom: None,
        }
    }

    proptest::proptest! {
        /// Sessions and batches handed in the order they end (each user's in order, users
        /// interleaved) give the bits of the whole run's summary over the sorted records.
        #[test]
        fn streamed_closed_loop_summary_is_bit_identical(
            batches in proptest::collection::vec(
                (0u32..6, 0i64..10_000, 0i64..50, proptest::option::of(0.0f64..1.0), 1u32..9, 0usize..3),
                0..200),
            start in 0i64..5_000,
            length in 0i64..10_000,
        ) {
            let window = Window { start, end: start + length };
            let mut numbers = [(0u32, 0u32); 6];
            let mut sessions = Vec::new();
            let mut records = Vec::new();
            let batches: Vec<BatchRecord> = batches
                .iter()
                .map(|&(user, end, wait, p, jobs, ended)| {
                    let (session, number) = &mut numbers[user as usize];
                    *number += 1;
                    if *number > 2 {
                        *session += 1;
                        *number = 1;
                        sessions.push(SessionRecord {
                            user,
                            group: "g".into(),
                            session: *session,
                            jobs,
                            start: end - 500,
                            end,
                            ended_by: [SessionEnd::Abort, SessionEnd::Cycle, SessionEnd::EndOfRun][ended],
                        });
                    }
                    records.push(job(end - 100, end));
                    BatchRecord {
                        user,
                        session: *session,
                        batch: *number,
                        ..batch(end, wait, p, BatchDecision::Continue)
                    }
                })
                .collect();
            let mut builder = ClosedLoopBuilder::new(window);
            for r in &records {
                builder.job(r);
            }
            for s in &sessions {
                builder.session(s);
            }
            for b in &batches {
                builder.batch(b);
            }
            let streamed = builder.finish();
            let mut sorted_sessions = sessions.clone();
            sorted_sessions.sort_by_key(|s| (s.user, s.session));
            let mut sorted_batches = batches.clone();
            sorted_batches.sort_by_key(|b| (b.user, b.session, b.batch));
            let whole = reference(&records, &sorted_sessions, &sorted_batches, window);
            let json = |s: &ClosedLoopSummary| serde_json::to_string(s).unwrap();
            proptest::prop_assert_eq!(json(&streamed), json(&whole));
            proptest::prop_assert_eq!(
                streamed.mean_continue_probability.to_bits(),
                whole.mean_continue_probability.to_bits()
            );
        }
    }

    #[test]
    fn batches_decided_in_the_window() {
        let window = Window {
            start: 3600,
            end: 7200,
        };
        let batches = [
            batch(0, 100, Some(0.1), BatchDecision::Break), // before the window
            batch(3600, 0, Some(0.8), BatchDecision::Continue),
            batch(4000, 30, Some(0.5), BatchDecision::Break),
            batch(5000, 10, None, BatchDecision::Cycle),
            batch(7200, 0, None, BatchDecision::End), // at the window's end: outside
        ];
        let s = ClosedLoopSummary::compute(&[], &[], &batches, window);
        // Three batches decided in the window, two of whose deciding jobs waited.
        assert_eq!(s.deciding_jobs_waited_share, 2.0 / 3.0);
        // Two of them with a trial.
        assert!((s.mean_continue_probability - 0.65).abs() < 1e-12);
        assert_eq!(BatchDecision::Cycle.label(), "cycle");
    }
}
