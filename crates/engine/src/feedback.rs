//! Replay with feedback (Zakay & Feitelson, "Preserving user behavior characteristics in
//! trace-based simulation of parallel job scheduling", MASCOTS 2014; the same idea as Batmen's
//! "replay with feedback" users for Batsim).
//!
//! The trace's users keep their sessions, batches and think times, but a batch that depended on
//! earlier work is submitted its logged think time after the *simulated* end of that work instead
//! of at its logged time, so a scheduler that ends jobs sooner gets the next ones sooner and
//! throughput becomes a measure of the scheduler, as in the closed loop (paper 000, section IV-B).
//! The structure (which jobs form a user's sessions and batches) comes from the caller; scenario
//! derives it with `fit::sessions::split`, the analysis behind the user models.
//!
//! The rules, all times in seconds:
//!
//! * **Batch k >= 2 of a session** depends on the whole previous batch: job j of it is submitted
//!   at E + d_j, where E is the simulated end of the previous batch's last-ending job and d_j =
//!   (logged submit of j) - (logged end of the previous batch) >= 0. For the batch's first job,
//!   d_j is the logged think time; for the others it also holds their logged gaps inside the
//!   batch. Waiting for the whole batch is the analysis' own definition: a think time is measured
//!   from the latest end of the user's earlier work (paper 000, section III-A), and the job that
//!   ended last is the one the user reacted to.
//! * **The first batch of a session**: job j is submitted at S + (logged submit of j - logged
//!   start of the session), where S is the session's start. The user's first session starts at
//!   its logged time (our reading of Zakay & Feitelson, whose abstract keeps the dependencies,
//!   sessions and think times between batches: a session's first job depends on no earlier job,
//!   so it is not moved).
//! * **A later session** starts at S = max(logged start, E_prev + m), where E_prev is the
//!   simulated end of the user's previous session (its last-ending job) and m the shortest break
//!   ([`FeedbackOptions::min_break`]; scenario uses the analysis' session threshold plus one
//!   second, 20 min + 1 s, the shortest pause that still separates sessions). So a session
//!   starts at its logged time whenever the user's previous session is over by then (our rule, not
//!   the paper's: whether a user comes back is taken to depend on their day, not on the
//!   scheduler), and otherwise as soon as the user could have begun a new session: one user's
//!   sessions never overlap, and analysing the simulated workload again finds the same sessions.
//!   A delay is absorbed by the next long break (overnight, say) instead of being carried
//!   through the rest of the trace, as keeping the whole logged break would do. With the logged
//!   schedule (every simulated end as logged) every rule gives the logged submit times back (a
//!   logged break is longer than the threshold by definition): the logged schedule is a fixed
//!   point.
//! * **Jobs outside the structure** (unknown user or unknown wait: their end cannot be known) are
//!   submitted at their logged times.
//! * **Abandonment** ([`Abandon`], optional): after each batch but a session's last, the user
//!   continues with probability a / (b r + 1), r the response time of the batch's last-ending job
//!   in minutes (paper 000, section III-B.1, eq. 1); otherwise the rest of the session's jobs are
//!   dropped and the session ends (by abort) at that batch's end. Each user draws from its own
//!   stream (`users::rng`, seed and user id), so schedulers compared with the same seed give each
//!   user the same sequence of uniform draws.
//!
//! Jobs due at the same instant are submitted in (logged submit, job number, trace order) order,
//! as [`crate::Replay`] submits them.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use metrics::{JobRecord, SessionEnd, SessionRecord};
use rand::Rng;
use rand_pcg::Pcg64;
use serde::Serialize;

use crate::{Job, Time, Workload};

/// One job of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedbackJob {
    /// The job, with its logged submit time.
    pub spec: Job,
    /// Seconds after its batch's release: in a session's first batch, its logged submit minus
    /// the session's logged start; in a later batch, its logged submit minus the logged end of
    /// the previous batch (its think time). Never negative.
    pub delay: Time,
}

/// One logged session of one user: batches of jobs, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedbackSession {
    /// The user (SWF field 12).
    pub user: i64,
    /// Its batches, in order; each non-empty, and the first batch's first job is the session's
    /// first (logged) submission.
    pub batches: Vec<Vec<FeedbackJob>>,
}

impl FeedbackSession {
    /// The logged submit time of its first job, seconds.
    pub fn logged_start(&self) -> Time {
        self.batches
            .first()
            .and_then(|b| b.first())
            .map_or(0, |j| j.spec.submit)
    }
}

/// How sessions follow each other and whether users abandon them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FeedbackOptions {
    /// The shortest pause between the simulated end of a user's session and the start of their
    /// next one, seconds (a session never starts before its logged time either).
    pub min_break: Time,
    /// Users abandon sessions after a batch (`None`: never).
    pub abandon: Option<Abandon>,
}

/// Users who abandon a session after a batch (paper 000, section III-B.1): they continue with
/// probability `a / (b r + 1)`, r in minutes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Abandon {
    /// `a` of the continue probability (the paper's 0.8).
    pub a: f64,
    /// `b`, per minute (the paper's 0.05).
    pub b: f64,
    /// The seed of every user's decision stream.
    pub seed: u64,
}

/// What a feedback replay did, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FeedbackCounts {
    /// Sessions in the structure.
    pub sessions: u64,
    /// Batches in them.
    pub batches: u64,
    /// Jobs submitted after the simulated end of an earlier batch (batches after a session's
    /// first).
    pub dependent_jobs: u64,
    /// Jobs of session-starting batches.
    pub session_start_jobs: u64,
    /// Jobs outside the structure, submitted at their logged times.
    pub independent_jobs: u64,
    /// Sessions that started later than logged (their user's previous session ran late).
    pub delayed_sessions: u64,
    /// Sessions the user abandoned after a batch.
    pub abandoned_sessions: u64,
    /// Jobs never submitted because their session was abandoned.
    pub dropped_jobs: u64,
}

/// Where a pending submission comes from.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// A job outside the structure.
    Independent(Job),
    /// Job `job` of batch `batch` of session `session`.
    Session {
        session: usize,
        batch: usize,
        job: usize,
    },
}

/// A session as it runs.
#[derive(Debug)]
struct SessionState {
    logged: FeedbackSession,
    /// The user's next session, if any.
    next: Option<usize>,
    /// The session's number among its user's, from 1.
    number: u32,
    /// The batch released last.
    batch: usize,
    /// Its jobs not yet ended.
    outstanding: usize,
    /// The latest simulated end of its ended jobs, and the response of the job that ended then.
    batch_end: Time,
    closing_response: Time,
    /// First simulated submission, jobs submitted, latest simulated end.
    start: Option<Time>,
    submitted: u32,
    end: Time,
    abandoned: bool,
}

/// A trace's sessions as a [`Workload`] (see the module's documentation for the rules).
#[derive(Debug)]
pub struct FeedbackReplay {
    sessions: Vec<SessionState>,
    /// The logged order of each slot: (logged submit, job number, position).
    slots: Vec<Slot>,
    /// Per session, per batch, per job: its slot's index (its rank in the logged order).
    ranks: Vec<Vec<Vec<usize>>>,
    /// Due submissions: (time, logged rank).
    pending: BinaryHeap<Reverse<(Time, usize)>>,
    /// Sessions of the submitted jobs still running, by (job number, simulated submit).
    running: HashMap<(i64, Time), Vec<usize>>,
    options: FeedbackOptions,
    decisions: HashMap<i64, Pcg64>,
    counts: FeedbackCounts,
}

impl FeedbackReplay {
    /// A replay of `sessions` (each user's in order) and of `independent` jobs (submitted at
    /// their logged times). A session with no batch, or an empty batch, is left out.
    pub fn new(
        sessions: Vec<FeedbackSession>,
        independent: Vec<Job>,
        options: FeedbackOptions,
    ) -> FeedbackReplay {
        let sessions: Vec<FeedbackSession> = sessions
            .into_iter()
            .filter(|s| !s.batches.is_empty() && s.batches.iter().all(|b| !b.is_empty()))
            .collect();
        // The logged order of every job: (submit, job number, position given).
        let mut keyed: Vec<(Time, i64, Slot)> = independent
            .iter()
            .map(|&spec| (spec.submit, spec.job_id, Slot::Independent(spec)))
            .collect();
        for (s, session) in sessions.iter().enumerate() {
            for (b, batch) in session.batches.iter().enumerate() {
                for (j, job) in batch.iter().enumerate() {
                    keyed.push((
                        job.spec.submit,
                        job.spec.job_id,
                        Slot::Session {
                            session: s,
                            batch: b,
                            job: j,
                        },
                    ));
                }
            }
        }
        // Stable: equal (submit, number) keep the order given.
        keyed.sort_by_key(|&(submit, number, _)| (submit, number));
        let mut ranks: Vec<Vec<Vec<usize>>> = sessions
            .iter()
            .map(|s| s.batches.iter().map(|b| vec![0; b.len()]).collect())
            .collect();
        let mut pending = BinaryHeap::new();
        for (rank, &(submit, _, slot)) in keyed.iter().enumerate() {
            match slot {
                Slot::Independent(_) => pending.push(Reverse((submit, rank))),
                Slot::Session {
                    session,
                    batch,
                    job,
                } => ranks[session][batch][job] = rank,
            }
        }
        let slots = keyed.into_iter().map(|(_, _, slot)| slot).collect();

        let mut counts = FeedbackCounts {
            sessions: sessions.len() as u64,
            independent_jobs: independent.len() as u64,
            ..FeedbackCounts::default()
        };
        let mut last_of_user: HashMap<i64, usize> = HashMap::new();
        let mut numbers: HashMap<i64, u32> = HashMap::new();
        let mut states: Vec<SessionState> = Vec::with_capacity(sessions.len());
        let mut first_sessions = Vec::new();
        for (s, logged) in sessions.into_iter().enumerate() {
            counts.batches += logged.batches.len() as u64;
            counts.session_start_jobs += logged.batches[0].len() as u64;
            counts.dependent_jobs += logged.batches[1..]
                .iter()
                .map(|b| b.len() as u64)
                .sum::<u64>();
            match last_of_user.insert(logged.user, s) {
                Some(previous) => states[previous].next = Some(s),
                None => first_sessions.push(s),
            }
            let number = numbers.entry(logged.user).or_insert(0);
            *number += 1;
            states.push(SessionState {
                logged,
                next: None,
                number: *number,
                batch: 0,
                outstanding: 0,
                batch_end: Time::MIN,
                closing_response: 0,
                start: None,
                submitted: 0,
                end: Time::MIN,
                abandoned: false,
            });
        }
        let mut replay = FeedbackReplay {
            sessions: states,
            slots,
            ranks,
            pending,
            running: HashMap::new(),
            options,
            decisions: HashMap::new(),
            counts,
        };
        for s in first_sessions {
            let start = replay.sessions[s].logged.logged_start();
            replay.release(s, 0, start);
        }
        replay
    }

    /// Puts batch `batch` of session `session` on the pending list, released at `at`.
    fn release(&mut self, session: usize, batch: usize, at: Time) {
        let state = &mut self.sessions[session];
        state.batch = batch;
        state.outstanding = state.logged.batches[batch].len();
        state.batch_end = Time::MIN;
        for (j, job) in state.logged.batches[batch].iter().enumerate() {
            let rank = self.ranks[session][batch][j];
            self.pending
                .push(Reverse((at.saturating_add(job.delay), rank)));
        }
    }

    /// Session `session` is over at `now`: its user's next session starts.
    fn close(&mut self, session: usize, now: Time) {
        let Some(next) = self.sessions[session].next else {
            return;
        };
        let end = self.sessions[session].end.max(now);
        let logged_start = self.sessions[next].logged.logged_start();
        let start = logged_start.max(end.saturating_add(self.options.min_break));
        if start > logged_start {
            self.counts.delayed_sessions += 1;
        }
        self.release(next, 0, start);
    }

    /// Whether the user of `session` goes on after a batch whose last-ending job had `response`
    /// seconds of response time.
    fn continues(&mut self, session: usize, response: Time) -> bool {
        let Some(abandon) = self.options.abandon else {
            return true;
        };
        let user = self.sessions[session].logged.user;
        let rng = self.decisions.entry(user).or_insert_with(|| {
            let stream_user = u32::try_from(user).unwrap_or(u32::MAX);
            users::rng::stream(abandon.seed, stream_user, users::rng::Purpose::Decisions)
        });
        let minutes = response as f64 / 60.0;
        let p = abandon.a / (abandon.b * minutes + 1.0);
        rng.random::<f64>() < p
    }

    /// What the replay did so far.
    pub fn counts(&self) -> FeedbackCounts {
        self.counts
    }

    /// Every session that submitted a job, by user and session number, as the closed loop
    /// reports them: a session ends by `abort` when the user abandoned it or took the logged
    /// break before a next session, by `end_of_run` when it is the user's last. Its end is the
    /// latest simulated end of its jobs; `group` is `trace`.
    pub fn sessions(&self) -> Vec<SessionRecord> {
        let mut records: Vec<SessionRecord> = self
            .sessions
            .iter()
            .filter_map(|s| {
                let start = s.start?;
                Some(SessionRecord {
                    user: u32::try_from(s.logged.user).unwrap_or(u32::MAX),
                    group: "trace".to_string(),
                    session: s.number,
                    jobs: s.submitted,
                    start,
                    end: s.end.max(start),
                    ended_by: if s.abandoned || s.next.is_some() {
                        SessionEnd::Abort
                    } else {
                        SessionEnd::EndOfRun
                    },
                })
            })
            .collect();
        records.sort_by_key(|r| (r.user, r.session));
        records
    }
}

impl Workload for FeedbackReplay {
    fn next_arrival(&self) -> Option<Time> {
        self.pending.peek().map(|Reverse((t, _))| *t)
    }

    fn arrivals(&mut self, now: Time, out: &mut Vec<Job>) {
        while let Some(&Reverse((t, rank))) = self.pending.peek() {
            if t != now {
                break;
            }
            self.pending.pop();
            let spec = match self.slots[rank] {
                Slot::Independent(spec) => spec,
                Slot::Session {
                    session,
                    batch,
                    job,
                } => {
                    let state = &mut self.sessions[session];
                    state.start.get_or_insert(now);
                    state.submitted += 1;
                    self.running
                        .entry((state.logged.batches[batch][job].spec.job_id, now))
                        .or_default()
                        .push(session);
                    state.logged.batches[batch][job].spec
                }
            };
            out.push(Job {
                submit: now,
                ..spec
            });
        }
    }

    fn job_ended(&mut self, record: &JobRecord, now: Time) {
        let key = (record.job_id, record.submit);
        let Some(owners) = self.running.get_mut(&key) else {
            return; // a job outside the structure
        };
        let Some(session) = owners.pop() else {
            return;
        };
        if owners.is_empty() {
            self.running.remove(&key);
        }
        let state = &mut self.sessions[session];
        state.outstanding = state.outstanding.saturating_sub(1);
        state.end = state.end.max(record.end);
        if record.end >= state.batch_end {
            state.batch_end = record.end;
            state.closing_response = record.end - record.submit;
        }
        if state.outstanding > 0 {
            return;
        }
        // The batch is complete: the next batch after its think times, or the session is over.
        let (batch, batches, response) = (
            state.batch,
            state.logged.batches.len(),
            state.closing_response,
        );
        if batch + 1 < batches {
            if self.continues(session, response) {
                self.release(session, batch + 1, now);
                return;
            }
            let state = &mut self.sessions[session];
            state.abandoned = true;
            self.counts.abandoned_sessions += 1;
            self.counts.dropped_jobs += state.logged.batches[batch + 1..]
                .iter()
                .map(|b| b.len() as u64)
                .sum::<u64>();
        }
        self.close(session, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cluster::{Cluster, Scheduler};

    fn spec(job_id: i64, user: i64, submit: Time, runtime: Time) -> Job {
        Job {
            array_task: Default::default(),
            reservation: Default::default(),
            shape: Default::default(),
            job_id,
            user,
            group: -1,
            submit,
            processors: 1,
            estimate: runtime,
            runtime,
            bandwidth: 0,
            partition: -1,
            queue: -1,
            extra: job::Extra::NONE,
        }
    }

    /// One user, one session of two batches of one job each: the second is submitted its think
    /// time after the simulated end of the first, which waits behind another user's long job.
    #[test]
    fn a_dependent_batch_follows_the_simulated_end() {
        let blocker = spec(1, 9, 0, 1000);
        let session = FeedbackSession {
            user: 1,
            batches: vec![
                vec![FeedbackJob {
                    spec: spec(2, 1, 10, 100),
                    delay: 0,
                }],
                vec![FeedbackJob {
                    spec: spec(3, 1, 200, 50),
                    delay: 90, // logged: job 2 ended at 110, job 3 came 90 s later
                }],
            ],
        };
        let mut replay =
            FeedbackReplay::new(vec![session], vec![blocker], FeedbackOptions::default());
        let mut cluster = Cluster::new(1, Scheduler::fcfs());
        let records = crate::simulate(&mut cluster, &mut replay, &mut ()).unwrap();
        let submits: Vec<(i64, Time)> = records.iter().map(|r| (r.job_id, r.submit)).collect();
        // Job 2 waits until 1000 and ends at 1100; job 3 comes at 1190.
        assert_eq!(submits, vec![(1, 0), (2, 10), (3, 1190)]);
        let sessions = replay.sessions();
        assert_eq!(sessions.len(), 1);
        assert_eq!(
            (sessions[0].jobs, sessions[0].start, sessions[0].end),
            (2, 10, 1240)
        );
        assert_eq!(replay.counts().dependent_jobs, 1);
    }

    /// With a = 0 every user abandons after the first batch.
    #[test]
    fn abandonment_drops_the_rest_of_the_session() {
        let session = FeedbackSession {
            user: 1,
            batches: vec![
                vec![FeedbackJob {
                    spec: spec(1, 1, 0, 10),
                    delay: 0,
                }],
                vec![FeedbackJob {
                    spec: spec(2, 1, 20, 10),
                    delay: 10,
                }],
            ],
        };
        let abandon = Abandon {
            a: 0.0,
            b: 0.05,
            seed: 1,
        };
        let options = FeedbackOptions {
            min_break: 0,
            abandon: Some(abandon),
        };
        let mut replay = FeedbackReplay::new(vec![session], Vec::new(), options);
        let mut cluster = Cluster::new(1, Scheduler::fcfs());
        let records = crate::simulate(&mut cluster, &mut replay, &mut ()).unwrap();
        assert_eq!(records.len(), 1);
        let counts = replay.counts();
        assert_eq!((counts.abandoned_sessions, counts.dropped_jobs), (1, 1));
        assert_eq!(replay.sessions()[0].ended_by, SessionEnd::Abort);
    }
}
