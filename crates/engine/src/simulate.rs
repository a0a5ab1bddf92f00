use std::cmp::Reverse;
use std::collections::BinaryHeap;

use cluster::{Cluster, ClusterError, JobId, JobRequest, Reservation, Started};
use metrics::JobRecord;

use crate::Time;

/// A job as the workload creates it: what the scheduler will be told, plus its true runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobSpec {
    /// The id reported in the results (the SWF job number in replay).
    pub job_id: i64,
    /// The owner (-1 when unknown).
    pub user: i64,
    /// Submit time, seconds.
    pub submit: Time,
    /// Processors needed.
    pub processors: u32,
    /// The user's runtime estimate, seconds: the scheduler plans with it and kills the job there.
    pub estimate: Time,
    /// The true runtime, seconds (unknown to the scheduler).
    pub runtime: Time,
}

/// Where jobs come from: a trace (open loop) or simulated users (closed loop).
pub trait Workload {
    /// The time of the next submission, if one is pending. Never earlier than the current time.
    fn next_arrival(&self) -> Option<Time>;

    /// Appends to `out` every job submitted at `now` (each with `submit == now`).
    fn arrivals(&mut self, now: Time, out: &mut Vec<JobSpec>);

    /// A job ended at `now` (the closed loop's feedback). Called before that instant's
    /// submissions are taken, so a reaction with zero think time is submitted at `now`.
    fn job_ended(&mut self, _record: &JobRecord, _now: Time) {}
}

/// Sees every scheduling pass; used by tests and diagnostics. `()` observes nothing.
pub trait Observer {
    /// Called after each scheduling pass with the jobs it started and the reservation it made.
    fn after_pass(&mut self, _now: Time, _started: &[Started], _reservation: Option<Reservation>) {}
}

impl Observer for () {}

/// The simulation could not go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The cluster refused a job (too wide for the machine, negative estimate).
    #[error("job {job_id}: {source}")]
    Cluster {
        /// The job's reported id.
        job_id: i64,
        /// Why.
        source: ClusterError,
    },
    /// The workload produced a submission in the past or with a submit time other than now.
    #[error("job {job_id} submitted at {submit} s, but the simulation is at {now} s")]
    TimeTravel {
        /// The job's reported id.
        job_id: i64,
        /// Its submit time.
        submit: Time,
        /// The simulation time.
        now: Time,
    },
    /// The workload's next arrival lies before the current time.
    #[error("the workload's next arrival ({next} s) lies before the current time ({now} s)")]
    ArrivalInPast {
        /// The arrival time.
        next: Time,
        /// The simulation time.
        now: Time,
    },
    /// Jobs were left waiting with nothing running (a scheduler bug; never expected).
    #[error("{waiting} jobs were left waiting with nothing running")]
    Stuck {
        /// How many.
        waiting: usize,
    },
    /// More than 2^32 jobs in one simulation.
    #[error("more than 4294967295 jobs in one simulation")]
    TooManyJobs,
    /// A job has a negative runtime.
    #[error("job {job_id} has a negative runtime ({runtime} s)")]
    NegativeRuntime {
        /// The job's reported id.
        job_id: i64,
        /// Its runtime.
        runtime: Time,
    },
}

/// A pending end: (time, creation sequence, job). Ordered so the heap pops the earliest, and at
/// equal times the one created first.
type EndEvent = Reverse<(Time, u64, JobId)>;

/// Runs the workload on the cluster until no event is left. Returns one record per job, in
/// submission order.
pub fn simulate<W: Workload + ?Sized, O: Observer + ?Sized>(
    cluster: &mut Cluster,
    workload: &mut W,
    observer: &mut O,
) -> Result<Vec<JobRecord>, EngineError> {
    let mut jobs: Vec<JobSpec> = Vec::new();
    let mut records: Vec<Option<JobRecord>> = Vec::new();
    let mut ends: BinaryHeap<EndEvent> = BinaryHeap::new();
    let mut end_sequence: u64 = 0;
    let mut arrived: Vec<JobSpec> = Vec::new();
    let mut now = Time::MIN;

    loop {
        let next_end = ends.peek().map(|Reverse((t, _, _))| *t);
        let next = match (next_end, workload.next_arrival()) {
            (None, None) => break,
            (Some(a), Some(b)) => a.min(b),
            (Some(t), None) | (None, Some(t)) => t,
        };
        if next < now {
            return Err(EngineError::ArrivalInPast { next, now });
        }
        now = next;

        // 1. Jobs ending now, in the order their end events were created.
        while let Some(&Reverse((t, _, id))) = ends.peek() {
            if t != now {
                break;
            }
            ends.pop();
            let index = id.0 as usize;
            let spec = jobs[index];
            cluster.finish(id).map_err(|source| EngineError::Cluster {
                job_id: spec.job_id,
                source,
            })?;
            if let Some(record) = records[index] {
                workload.job_ended(&record, now);
            }
        }

        // 2. Submissions at now.
        while workload.next_arrival() == Some(now) {
            arrived.clear();
            workload.arrivals(now, &mut arrived);
            if arrived.is_empty() {
                break;
            }
            for spec in arrived.drain(..) {
                submit(cluster, &mut jobs, &mut records, spec, now)?;
            }
        }

        // 3. One scheduling pass.
        cluster.schedule(now);
        let started = cluster.last_started();
        for s in started {
            let index = s.id.0 as usize;
            let spec = jobs[index];
            let end = (s.start + spec.runtime).min(s.kill_time);
            records[index] = Some(JobRecord {
                job_id: spec.job_id,
                user: spec.user,
                submit: spec.submit,
                start: s.start,
                end,
                processors: spec.processors,
                estimate: spec.estimate,
                killed: spec.runtime > spec.estimate,
            });
            ends.push(Reverse((end, end_sequence, s.id)));
            end_sequence += 1;
        }
        observer.after_pass(now, started, cluster.last_reservation());
    }

    // With nothing running, the head of a non-empty queue always fits (jobs wider than the
    // machine are refused at submit), so the queue is empty here; checked all the same.
    if cluster.waiting() > 0 {
        return Err(EngineError::Stuck {
            waiting: cluster.waiting(),
        });
    }
    Ok(records.into_iter().flatten().collect())
}

fn submit(
    cluster: &mut Cluster,
    jobs: &mut Vec<JobSpec>,
    records: &mut Vec<Option<JobRecord>>,
    spec: JobSpec,
    now: Time,
) -> Result<(), EngineError> {
    if spec.submit != now {
        return Err(EngineError::TimeTravel {
            job_id: spec.job_id,
            submit: spec.submit,
            now,
        });
    }
    if spec.runtime < 0 {
        return Err(EngineError::NegativeRuntime {
            job_id: spec.job_id,
            runtime: spec.runtime,
        });
    }
    let id = JobId(u32::try_from(jobs.len()).map_err(|_| EngineError::TooManyJobs)?);
    cluster
        .submit(JobRequest {
            id,
            submit: spec.submit,
            processors: spec.processors,
            estimate: spec.estimate,
        })
        .map_err(|source| EngineError::Cluster {
            job_id: spec.job_id,
            source,
        })?;
    jobs.push(spec);
    records.push(None);
    Ok(())
}
