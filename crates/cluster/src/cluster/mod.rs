use std::collections::{BTreeMap, HashMap};

use crate::profile::Profile;
use crate::{Backfilling, JobId, JobRequest, Scheduler, Time};

/// A job the scheduler started during a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Started {
    /// The job.
    pub id: JobId,
    /// Start time in seconds (the pass's `now`).
    pub start: Time,
    /// When the job is killed if still running: start + user estimate.
    pub kill_time: Time,
    /// True when the job jumped ahead of a blocked, higher-priority job.
    pub backfilled: bool,
}

/// The reservation EASY made during a pass for the first job that did not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reservation {
    /// The reserved job (the highest-priority waiting job).
    pub job: JobId,
    /// The earliest time its processors are expected to be free, by the estimates of the running
    /// jobs.
    pub shadow_time: Time,
    /// Processors free at the shadow time beyond the reserved job's size, after backfilling.
    pub extra_processors: u32,
}

/// Errors from a caller that breaks the cluster's contract.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClusterError {
    /// The job needs more processors than the machine has (or none at all).
    #[error("job {id:?} needs {processors} processors; the machine has {machine}")]
    BadSize {
        /// The job.
        id: JobId,
        /// Its size.
        processors: u32,
        /// The machine's size.
        machine: u32,
    },
    /// The job's estimate is negative.
    #[error("job {id:?} has a negative runtime estimate ({estimate} s)")]
    NegativeEstimate {
        /// The job.
        id: JobId,
        /// Its estimate.
        estimate: Time,
    },
    /// `finish` named a job that is not running.
    #[error("job {0:?} finished but it is not running")]
    NotRunning(JobId),
}

/// A machine of identical processors with a waiting queue and a scheduler.
#[derive(Debug)]
pub struct Cluster {
    processors: u32,
    free: u32,
    scheduler: Scheduler,
    /// Waiting jobs: in arrival order for arrival-order policies, else sorted at every pass.
    queue: Vec<JobRequest>,
    running: Running,
    started: Vec<Started>,
    reservation: Option<Reservation>,
    /// Scratch for one pass: which queue entries start now.
    starting: Vec<bool>,
    /// Conservative backfilling: the planned start of every waiting job that has one.
    planned: HashMap<JobId, Time>,
    /// Whether a job finished since the last pass: its processors may have come back before
    /// its estimate said, so conservative reservations may move earlier.
    finished_since_pass: bool,
}

/// Running jobs indexed by expected end (start + estimate, then id): the order in which EASY
/// assumes their processors come back.
#[derive(Debug, Default)]
struct Running {
    by_expected_end: BTreeMap<(Time, JobId), u32>,
    expected_end: HashMap<JobId, Time>,
}

impl Cluster {
    /// An idle machine of `processors` processors run by `scheduler`.
    pub fn new(processors: u32, scheduler: Scheduler) -> Cluster {
        Cluster {
            processors,
            free: processors,
            scheduler,
            queue: Vec::new(),
            running: Running::default(),
            started: Vec::new(),
            reservation: None,
            starting: Vec::new(),
            planned: HashMap::new(),
            finished_since_pass: false,
        }
    }

    /// The machine's processor count.
    pub fn processors(&self) -> u32 {
        self.processors
    }

    /// Processors not allocated to a running job.
    pub fn free_processors(&self) -> u32 {
        self.free
    }

    /// The waiting jobs: after a pass, in the order that pass used (highest priority first).
    pub fn queue(&self) -> &[JobRequest] {
        &self.queue
    }

    /// Number of jobs waiting.
    pub fn waiting(&self) -> usize {
        self.queue.len()
    }

    /// Number of jobs running.
    pub fn running(&self) -> usize {
        self.running.expected_end.len()
    }

    /// The scheduler in use.
    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }

    /// The reservation made by the last [`Cluster::schedule`] pass, if it made one. A pass with
    /// no free processors makes none: nothing could start, so it returns at once.
    pub fn last_reservation(&self) -> Option<Reservation> {
        self.reservation
    }

    /// Under conservative backfilling, the start reserved for a waiting job by the last pass
    /// (a job submitted since has none yet). The reservation never moves later.
    pub fn planned_start(&self, id: JobId) -> Option<Time> {
        self.planned.get(&id).copied()
    }

    /// The jobs started by the last [`Cluster::schedule`] pass.
    pub fn last_started(&self) -> &[Started] {
        &self.started
    }

    /// Adds a job to the waiting queue. It starts at a later [`Cluster::schedule`] call.
    pub fn submit(&mut self, job: JobRequest) -> Result<(), ClusterError> {
        if job.processors == 0 || job.processors > self.processors {
            return Err(ClusterError::BadSize {
                id: job.id,
                processors: job.processors,
                machine: self.processors,
            });
        }
        if job.estimate < 0 {
            return Err(ClusterError::NegativeEstimate {
                id: job.id,
                estimate: job.estimate,
            });
        }
        if self.scheduler.order.is_arrival_order() {
            // Keep arrival order (submit, id); jobs almost always arrive in that order already.
            let key = (job.submit, job.id);
            let at = self.queue.partition_point(|q| (q.submit, q.id) <= key);
            self.queue.insert(at, job);
        } else {
            self.queue.push(job); // sorted by priority at every pass
        }
        Ok(())
    }

    /// Returns the processors of a running job that ended (normally or killed).
    pub fn finish(&mut self, id: JobId) -> Result<(), ClusterError> {
        let end = self
            .running
            .expected_end
            .remove(&id)
            .ok_or(ClusterError::NotRunning(id))?;
        let processors = self
            .running
            .by_expected_end
            .remove(&(end, id))
            .ok_or(ClusterError::NotRunning(id))?;
        self.free += processors;
        self.finished_since_pass = true;
        Ok(())
    }

    /// Runs one scheduling pass at `now` and returns the jobs it started, in start order.
    pub fn schedule(&mut self, now: Time) -> &[Started] {
        self.started.clear();
        self.reservation = None;
        // Nothing can start without free processors; conservative backfilling still gives new
        // jobs their reservations.
        let conservative = self.scheduler.backfilling == Backfilling::Conservative;
        if self.queue.is_empty() || (self.free == 0 && !conservative) {
            return &self.started;
        }
        self.sort_queue(now);
        self.starting.clear();
        self.starting.resize(self.queue.len(), false);

        if conservative {
            self.conservative_pass(now);
        } else {
            // Start jobs from the head while they fit.
            let mut head = 0;
            while head < self.queue.len() && self.queue[head].processors <= self.free {
                self.start(head, now, false);
                head += 1;
            }
            if head < self.queue.len() && self.scheduler.backfilling == Backfilling::Easy {
                self.easy_backfill(head, now);
            }
        }
        if !self.started.is_empty() {
            let mut index = 0;
            let starting = &self.starting;
            self.queue.retain(|_| {
                index += 1;
                !starting[index - 1]
            });
        }
        &self.started
    }

    /// EASY backfilling behind the blocked job at queue position `blocked` (section 2.3 of
    /// Tsafrir's thesis): reserve its shadow time, then start later jobs that fit now and either
    /// end by the shadow time or use only extra processors (the latter consume the extras).
    fn easy_backfill(&mut self, blocked: usize, now: Time) {
        let reserved = self.queue[blocked];
        let (shadow_time, mut extra) = self.running.shadow(self.free, reserved.processors);
        for candidate in blocked + 1..self.queue.len() {
            if self.free == 0 {
                break;
            }
            let job = self.queue[candidate];
            if job.processors > self.free {
                continue;
            }
            if now + job.estimate <= shadow_time {
                self.start(candidate, now, true);
            } else if job.processors <= extra {
                extra -= job.processors;
                self.start(candidate, now, true);
            }
        }
        self.reservation = Some(Reservation {
            job: reserved.id,
            shadow_time,
            extra_processors: extra,
        });
    }

    /// Conservative backfilling: the profile of free processors from the running jobs (by their
    /// estimates) and the waiting jobs' reservations; if a job finished since the last pass
    /// (possibly before its estimate), every waiting job in queue order is re-placed at its
    /// earliest slot with all other reservations held (compression: its old slot is still free,
    /// so it never moves later); jobs without a reservation get their earliest slot; the jobs
    /// whose slot is now start.
    fn conservative_pass(&mut self, now: Time) {
        let compress = std::mem::take(&mut self.finished_since_pass);
        let releases = self
            .running
            .by_expected_end
            .iter()
            .map(|(&(end, _), &processors)| (end, processors));
        let reserved = self.queue.iter().filter_map(|job| {
            let start = *self.planned.get(&job.id)?;
            Some((start, start + held(job), job.processors))
        });
        let mut profile = Profile::new(now, self.free, releases, reserved);
        for index in 0..self.queue.len() {
            let job = self.queue[index];
            let length = held(&job);
            let start = match self.planned.get(&job.id) {
                Some(&old) if compress || old < now => {
                    profile.release(old, old + length, job.processors);
                    let new = profile.earliest_fit(now, job.processors, length);
                    debug_assert!(new <= old, "compression moved {:?} later", job.id);
                    new.min(old)
                }
                Some(_) => continue,
                None => profile.earliest_fit(now, job.processors, length),
            };
            profile.reserve(start, start + length, job.processors);
            self.planned.insert(job.id, start);
        }
        let mut blocked = false;
        for index in 0..self.queue.len() {
            let id = self.queue[index].id;
            if self.planned.get(&id) == Some(&now) {
                self.planned.remove(&id);
                self.start(index, now, blocked);
            } else {
                blocked = true;
            }
        }
    }

    fn start(&mut self, index: usize, now: Time, backfilled: bool) {
        let job = self.queue[index];
        self.starting[index] = true;
        self.free -= job.processors;
        let kill_time = now + job.estimate;
        self.running
            .by_expected_end
            .insert((kill_time, job.id), job.processors);
        self.running.expected_end.insert(job.id, kill_time);
        self.started.push(Started {
            id: job.id,
            start: now,
            kill_time,
            backfilled,
        });
    }

    /// Puts the queue in priority order for this pass: highest priority first, ties by arrival.
    fn sort_queue(&mut self, now: Time) {
        let order = &self.scheduler.order;
        if order.is_arrival_order() {
            return; // `submit` keeps it sorted by arrival
        }
        self.queue.sort_by_cached_key(|job| {
            (
                std::cmp::Reverse(total_order_key(order.priority(job, now))),
                job.submit,
                job.id,
            )
        });
    }
}

/// How long a job holds its processors in the profile: its estimate, and at least one second so
/// that jobs estimated at zero seconds still need their processors at the instant they start.
fn held(job: &JobRequest) -> Time {
    job.estimate.max(1)
}

/// An integer whose order is `f64::total_cmp`'s order, so priorities can be sort keys.
fn total_order_key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

impl Running {
    /// The shadow time and extra processors for a job of `needed` processors when `free` are
    /// free now: release running jobs in order of (start + estimate, id) until the free count
    /// reaches `needed`; the release time of the last one is the shadow time and whatever the
    /// count exceeds `needed` by is the extra.
    fn shadow(&self, free: u32, needed: u32) -> (Time, u32) {
        let mut available = free;
        for (&(end, _), &processors) in &self.by_expected_end {
            available += processors;
            if available >= needed {
                return (end, available - needed);
            }
        }
        // Unreachable: submit() rejects jobs wider than the machine, and all processors are free
        // once every running job is released. Never reserve in that case.
        (Time::MAX, 0)
    }
}

#[cfg(test)]
mod tests;
