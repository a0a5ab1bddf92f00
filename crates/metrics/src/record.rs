use serde::Serialize;

use crate::{Job, Time};

/// Jobs shorter than this many seconds are treated as this long in the bounded slowdown
/// (Tsafrir's thesis, section 2.4; the field's common 10 s threshold).
pub const BOUNDED_SLOWDOWN_THRESHOLD: Time = 10;

/// What happened to one job. Times are whole seconds since the run's epoch.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobRecord {
    /// The job as its input made it (its id, owner, submit time, resources, estimate, ...),
    /// read through the record as if its fields were the record's ([`std::ops::Deref`]): a
    /// record's `processors` are the job's. Its `runtime` is the true runtime the input gave;
    /// what it ran is [`JobRecord::runtime`] (end - start; less when it was killed).
    pub job: Job,
    /// When it started.
    pub start: Time,
    /// When it ended: normally, or killed at start + estimate.
    pub end: Time,
    /// True when it was killed because it reached its estimate before finishing.
    pub killed: bool,
    /// How accurate the scheduler's runtime prediction was over the job's life, in [0, 1]
    /// (Tsafrir's thesis, section 4.1: runtime / prediction or prediction / runtime, weighted by
    /// how long each prediction was in effect). With user estimates: runtime / estimate.
    pub prediction_accuracy: f64,
    /// How often the scheduler corrected the job's prediction after it expired.
    pub prediction_corrections: u32,
    /// True when no waiting job had a shorter true runtime at the moment this job was chosen to
    /// start (Tsafrir's "SJFness", thesis section 3.5, is the share of such jobs).
    pub shortest_waiting: bool,
    /// The job's fair start time (Sabin & Sadayappan, thesis section 3.7), when computed: its
    /// start under conservative backfilling with exact runtimes that turns into strict FCFS the
    /// moment the job arrives.
    pub fair_start: Option<Time>,
    /// Seconds its run was stretched by sharing a node's memory bandwidth (paper 001; 0 without
    /// the sharing model). Included in end - start.
    pub penalty: Time,
    /// True when the job would have ended by its estimate but sharing stretched it past it, so
    /// it was killed there.
    pub killed_by_sharing: bool,
    /// Where it ran, seen by the sharing model (paper 001's diagnostics; `None` without it).
    pub neighbourhood: Option<Neighbourhood>,
    /// What the scheduler's backfilling rule recorded of it as it started (the Slurm model:
    /// its priority and factors, account, partition, QOS and wait by pending reason; `None`
    /// under rules that record nothing), written by the outputs with the rule's columns. Boxed:
    /// most rules record nothing, and records are many.
    pub annotation: Option<Box<job::Annotation>>,
    /// What node failures did to it (`None` when none struck it, and in every run without
    /// failures).
    pub failed: Option<Failed>,
}

/// What node failures did to one job: the runs they cut short, and whether it was lost
/// (ended by the failure) or requeued each time (Slurm's `JobRequeue=1`, its default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Failed {
    /// Runs a node failure cut short (its last run too, when lost).
    pub runs: u32,
    /// Seconds those runs had run when they were cut short (work lost: times the job's
    /// processors, processor-seconds).
    pub lost_seconds: Time,
    /// True when the last failure ended the job for good (not requeued): its record's end is
    /// that failure's time.
    pub lost: bool,
}

/// The nodes a job ran on and who shared them, over its unstretched run (the interval the
/// sharing model penalizes; diagnostics, not the paper's).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Neighbourhood {
    /// Distinct nodes it ran on.
    pub nodes: u32,
    /// Distinct other jobs that ran on one of its nodes during its run.
    pub neighbours: u32,
    /// Mean over its process-seconds of the share of the node's processors that were busy
    /// (its own included), in [0, 1]; a node counts as k processors.
    pub busy: f64,
    /// Share of its process-seconds spent on a node with all k processors busy, in [0, 1].
    pub full: f64,
}

/// The runtime classes of Shmueli & Feitelson (2009), section IV-B (Fig. 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeClass {
    /// Runtime up to 1 minute.
    Short,
    /// Runtime over 1 and up to 10 minutes.
    Medium,
    /// Runtime over 10 minutes.
    Long,
}

impl RuntimeClass {
    /// All classes, shortest first.
    pub const ALL: [RuntimeClass; 3] = [
        RuntimeClass::Short,
        RuntimeClass::Medium,
        RuntimeClass::Long,
    ];

    /// The class of a job that ran `runtime` seconds.
    pub fn of(runtime: Time) -> RuntimeClass {
        if runtime <= 60 {
            RuntimeClass::Short
        } else if runtime <= 600 {
            RuntimeClass::Medium
        } else {
            RuntimeClass::Long
        }
    }

    /// A label for tables: `<=1min`, `1-10min`, `>10min`.
    pub fn label(self) -> &'static str {
        match self {
            RuntimeClass::Short => "<=1min",
            RuntimeClass::Medium => "1-10min",
            RuntimeClass::Long => ">10min",
        }
    }
}

impl std::ops::Deref for JobRecord {
    type Target = Job;

    fn deref(&self) -> &Job {
        &self.job
    }
}

impl std::ops::DerefMut for JobRecord {
    fn deref_mut(&mut self) -> &mut Job {
        &mut self.job
    }
}

impl JobRecord {
    /// Seconds it actually ran (end - start; at most its estimate).
    pub fn runtime(&self) -> Time {
        self.end - self.start
    }

    /// Seconds from submit to start.
    pub fn wait(&self) -> Time {
        self.start - self.submit
    }

    /// Seconds from submit to end.
    pub fn response(&self) -> Time {
        self.end - self.submit
    }

    /// Response time over runtime; a zero runtime counts as 1 s so the ratio is defined.
    pub fn slowdown(&self) -> f64 {
        self.response() as f64 / self.runtime().max(1) as f64
    }

    /// `max(1, response / max(10 s, runtime))` (Tsafrir's thesis, section 2.4).
    pub fn bounded_slowdown(&self) -> f64 {
        let denominator = self.runtime().max(BOUNDED_SLOWDOWN_THRESHOLD) as f64;
        (self.response() as f64 / denominator).max(1.0)
    }

    /// How long the job started after its fair start time, seconds (0 when not later, `None`
    /// when the fair start was not computed).
    pub fn unfair_delay(&self) -> Option<Time> {
        self.fair_start.map(|fair| (self.start - fair).max(0))
    }

    /// Processor-seconds it consumed.
    pub fn work(&self) -> f64 {
        f64::from(self.processors) * self.runtime() as f64
    }

    /// Its runtime class.
    pub fn class(&self) -> RuntimeClass {
        RuntimeClass::of(self.runtime())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(submit: Time, start: Time, end: Time) -> JobRecord {
        JobRecord {
            job: crate::Job {
                job_id: 1,
                user: 1,
                submit,
                processors: 4,
                estimate: 1000,
                ..crate::Job::default()
            },
            start,
            end,
            killed: false,
            ..JobRecord::default()
        }
    }

    #[test]
    fn per_job_measures() {
        let r = record(100, 400, 500);
        assert_eq!((r.wait(), r.response(), r.runtime()), (300, 400, 100));
        assert_eq!(r.slowdown(), 4.0);
        assert_eq!(r.bounded_slowdown(), 4.0);
        assert_eq!(r.work(), 400.0);
    }

    #[test]
    fn bounded_slowdown_uses_ten_seconds_for_short_jobs() {
        // 2 s job after 38 s of waiting: response 40 over max(10, 2) = 4.
        assert_eq!(record(0, 38, 40).bounded_slowdown(), 4.0);
        // Never below 1.
        assert_eq!(record(0, 0, 3).bounded_slowdown(), 1.0);
        // Zero runtime: slowdown uses 1 s.
        assert_eq!(record(0, 5, 5).slowdown(), 5.0);
    }

    #[test]
    fn class_boundaries() {
        assert_eq!(RuntimeClass::of(60), RuntimeClass::Short);
        assert_eq!(RuntimeClass::of(61), RuntimeClass::Medium);
        assert_eq!(RuntimeClass::of(600), RuntimeClass::Medium);
        assert_eq!(RuntimeClass::of(601), RuntimeClass::Long);
    }
}
