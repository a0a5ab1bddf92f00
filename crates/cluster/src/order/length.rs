use super::QueueOrder;
use crate::JobRequest;
use crate::view::View;

/// Shortest job first: the job with the smallest user estimate has the highest priority (ties:
/// arrival). One of the three orders of Streit's CCS, each with conservative backfilling (paper
/// 002, section 3.1).
#[derive(Debug, Clone, Copy, Default)]
pub struct ShortestFirst;

impl QueueOrder for ShortestFirst {
    fn name(&self) -> String {
        "sjf".to_string()
    }

    fn priority(&self, job: &JobRequest, _view: &View<'_>) -> f64 {
        -(job.estimate as f64)
    }
}

/// Longest job first: the job with the largest user estimate has the highest priority (ties:
/// arrival). Paper 002, section 3.1.
#[derive(Debug, Clone, Copy, Default)]
pub struct LongestFirst;

impl QueueOrder for LongestFirst {
    fn name(&self) -> String {
        "ljf".to_string()
    }

    fn priority(&self, job: &JobRequest, _view: &View<'_>) -> f64 {
        job.estimate as f64
    }
}
