//! The closed loop: simulated users submit jobs and react to their ends (paper 000, sections
//! III-IV). The loop is [`crate::simulate`]'s; this adapter only translates between the
//! population and the engine, so replay and site-level simulation share every line of
//! scheduling code.

use std::collections::VecDeque;

use metrics::{BatchRecord, JobRecord, SessionRecord};
use users::{Completion, Population, Submission};

use crate::{Job, Time, Workload};

/// A [`Population`] seen as a [`Workload`]. Keeps the submissions whose records the engine has
/// not handed out yet, in order, so each record is paired with its submission (the SWF output
/// of the generated workload and jobs.csv's group and session need them). It owns the
/// population, so that a resumable simulation (the Gymnasium environment) can hold both.
pub struct ClosedLoop {
    population: Population,
    due: Vec<Submission>,
    submitted: VecDeque<Submission>,
}

impl ClosedLoop {
    /// Drives `population`.
    pub fn new(population: Population) -> ClosedLoop {
        ClosedLoop {
            population,
            due: Vec::new(),
            submitted: VecDeque::new(),
        }
    }

    /// The population it drives.
    pub fn population(&self) -> &Population {
        &self.population
    }

    /// The population it drives, mutable (to collect its finished sessions and batches).
    pub fn population_mut(&mut self) -> &mut Population {
        &mut self.population
    }

    /// The oldest submission whose record has not been paired yet: the next record handed out
    /// is its job's (records come in submission order).
    pub fn pair_next(&mut self) -> Option<Submission> {
        self.submitted.pop_front()
    }

    /// The submission of the job whose record has id `job_id`: the oldest unpaired one with
    /// that id. The submissions before it are dropped: they are those of jobs the scheduler
    /// holds for good, which have no record ([`cluster::Cluster::is_held`]).
    pub fn pair(&mut self, job_id: i64) -> Option<Submission> {
        while let Some(submission) = self.submitted.pop_front() {
            if submission.job_id == job_id {
                return Some(submission);
            }
        }
        None
    }

    /// The population, once the simulation is over.
    pub fn into_population(self) -> Population {
        self.population
    }
}

impl Workload for ClosedLoop {
    fn next_arrival(&self) -> Option<Time> {
        self.population.next_submission()
    }

    fn arrivals(&mut self, now: Time, out: &mut Vec<Job>) {
        self.due.clear();
        self.population.take_submissions(now, &mut self.due);
        for s in &self.due {
            out.push(Job {
                array_task: Default::default(),
                reservation: Default::default(),
                shape: s.request.shape,
                job_id: s.job_id,
                // Outputs number users from 1 (the SWF's rule): the index + 1.
                user: i64::from(s.user) + 1,
                group: s.group,
                submit: s.submit,
                processors: s.processors,
                estimate: s.estimate,
                runtime: s.runtime,
                bandwidth: s.bandwidth,
                partition: s.request.partition,
                queue: -1,
                extra: s.request.extra,
            });
        }
        self.submitted.extend(self.due.iter().copied());
    }

    fn job_ended(&mut self, record: &JobRecord, _now: Time) {
        let Ok(user) = u32::try_from(record.user - 1) else {
            return;
        };
        self.population.job_ended(&Completion {
            job_id: record.job_id,
            user,
            submit: record.submit,
            start: record.start,
            end: record.end,
            lost: record.failed.is_some_and(|f| f.lost).then_some(
                users::submission::JobAttributes {
                    processors: record.processors,
                    runtime: record.job.runtime,
                    estimate: record.estimate,
                },
            ),
        });
    }
}

/// What a closed-loop run produced.
#[derive(Debug, Clone, Default)]
pub struct ClosedRun {
    /// One record per job, in submission order.
    pub records: Vec<JobRecord>,
    /// Every session, by user and session number.
    pub sessions: Vec<metrics::SessionRecord>,
    /// Every completed batch and the decision its end led to, by user, session and batch number.
    pub batches: Vec<metrics::BatchRecord>,
    /// Every submission of a job that has a record, in submission order (`records[i]` is
    /// `submissions[i]`'s job; a job the scheduler holds for good has neither).
    pub submissions: Vec<Submission>,
}

/// Receives a closed-loop run's results as they become final ([`run_population_into`]).
pub trait ClosedSink {
    /// A job's final record with its submission, in submission order.
    fn job(&mut self, record: JobRecord, submission: &Submission);
    /// A session that ended: in the order they end, so each user's sessions come in session
    /// order.
    fn session(&mut self, session: SessionRecord);
    /// A completed batch and the decision after it: in the order they complete, so each user's
    /// batches come in (session, batch) order.
    fn batch(&mut self, batch: BatchRecord);
}

/// Collects a whole run, as [`run_population_with`] returns it.
#[derive(Default)]
struct Collect {
    run: ClosedRun,
}

impl ClosedSink for Collect {
    fn job(&mut self, record: JobRecord, submission: &Submission) {
        self.run.records.push(record);
        self.run.submissions.push(*submission);
    }
    fn session(&mut self, session: SessionRecord) {
        self.run.sessions.push(session);
    }
    fn batch(&mut self, batch: BatchRecord) {
        self.run.batches.push(batch);
    }
}

/// Runs `population` on `cluster` until the users stopped (at their horizon) and every job ended.
pub fn run_population<O: crate::Observer + ?Sized>(
    cluster: &mut cluster::Cluster,
    population: Population,
    observer: &mut O,
) -> Result<ClosedRun, crate::EngineError> {
    run_population_with(cluster, population, observer, &crate::SimOptions::default())
}

/// [`run_population`] with options (the memory-bandwidth sharing model).
pub fn run_population_with<O: crate::Observer + ?Sized>(
    cluster: &mut cluster::Cluster,
    population: Population,
    observer: &mut O,
    options: &crate::SimOptions,
) -> Result<ClosedRun, crate::EngineError> {
    let mut collect = Collect::default();
    run_population_into(cluster, population, observer, options, &mut collect)?;
    let mut run = collect.run;
    run.sessions.sort_by_key(|s| (s.user, s.session));
    run.batches.sort_by_key(|b| (b.user, b.session, b.batch));
    Ok(run)
}

/// How many records between two collections of the users' finished sessions and batches.
const DRAIN_EVERY: u32 = 1024;

/// [`run_population_with`], handing every job, session and batch to `sink` as it becomes final
/// (jobs in submission order), so nothing of the run needs to be kept.
pub fn run_population_into<O: crate::Observer + ?Sized>(
    cluster: &mut cluster::Cluster,
    population: Population,
    observer: &mut O,
    options: &crate::SimOptions,
    sink: &mut dyn ClosedSink,
) -> Result<(), crate::EngineError> {
    let mut workload = ClosedLoop::new(population);
    let mut sessions = Vec::new();
    let mut batches = Vec::new();
    let mut since_drain = 0u32;
    let mut drain = |population: &mut Population, sink: &mut dyn ClosedSink| {
        population.drain_records(&mut sessions, &mut batches);
        for batch in batches.drain(..) {
            sink.batch(batch);
        }
        for session in sessions.drain(..) {
            sink.session(session);
        }
    };
    crate::simulate_into(
        cluster,
        &mut workload,
        observer,
        options,
        &mut |w, record| {
            if let Some(submission) = w.pair(record.job_id) {
                sink.job(record, &submission);
            }
            since_drain += 1;
            if since_drain == DRAIN_EVERY {
                since_drain = 0;
                drain(w.population_mut(), sink);
            }
        },
    )?;
    let mut population = workload.into_population();
    drain(&mut population, sink);
    for session in population.finish() {
        sink.session(session);
    }
    Ok(())
}
