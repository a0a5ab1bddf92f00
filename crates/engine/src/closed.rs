//! The closed loop: simulated users submit jobs and react to their ends (paper 000, sections
//! III-IV). The loop is [`crate::simulate`]'s; this adapter only translates between the
//! population and the engine, so replay and site-level simulation share every line of
//! scheduling code.

use metrics::JobRecord;
use users::{Completion, Population, Submission};

use crate::{JobSpec, Time, Workload};

/// A [`Population`] seen as a [`Workload`]. Keeps every submission, in order, for the SWF
/// output of the generated workload.
pub struct ClosedLoop<'a> {
    population: &'a mut Population,
    due: Vec<Submission>,
    submitted: Vec<Submission>,
}

impl<'a> ClosedLoop<'a> {
    /// Drives `population`.
    pub fn new(population: &'a mut Population) -> ClosedLoop<'a> {
        ClosedLoop {
            population,
            due: Vec::new(),
            submitted: Vec::new(),
        }
    }

    /// Every submission of the run, in submission order (the order of the engine's records).
    pub fn into_submissions(self) -> Vec<Submission> {
        self.submitted
    }
}

impl Workload for ClosedLoop<'_> {
    fn next_arrival(&self) -> Option<Time> {
        self.population.next_submission()
    }

    fn arrivals(&mut self, now: Time, out: &mut Vec<JobSpec>) {
        self.due.clear();
        self.population.take_submissions(now, &mut self.due);
        for s in &self.due {
            out.push(JobSpec {
                job_id: s.job_id,
                // Outputs number users from 1 (the SWF's rule): the index + 1.
                user: i64::from(s.user) + 1,
                submit: s.submit,
                processors: s.processors,
                estimate: s.estimate,
                runtime: s.runtime,
                bandwidth: s.bandwidth,
            });
        }
        self.submitted.extend_from_slice(&self.due);
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
        });
    }
}

/// What a closed-loop run produced.
#[derive(Debug, Clone)]
pub struct ClosedRun {
    /// One record per job, in submission order.
    pub records: Vec<JobRecord>,
    /// Every session, by user and session number.
    pub sessions: Vec<metrics::SessionRecord>,
    /// Every completed batch and the decision its end led to, by user, session and batch number.
    pub batches: Vec<metrics::BatchRecord>,
    /// Every submission, in submission order (`records[i]` is `submissions[i]`'s job).
    pub submissions: Vec<Submission>,
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
    mut population: Population,
    observer: &mut O,
    options: &crate::SimOptions,
) -> Result<ClosedRun, crate::EngineError> {
    let mut workload = ClosedLoop::new(&mut population);
    let records = crate::simulate_with(cluster, &mut workload, observer, options)?;
    let submissions = workload.into_submissions();
    let batches = population.take_batches();
    let sessions = population.finish();
    Ok(ClosedRun {
        records,
        sessions,
        batches,
        submissions,
    })
}
