use super::QueueOrder;
use crate::JobRequest;
use crate::view::View;

/// First come, first served: the job that arrived first has the highest priority.
#[derive(Debug, Clone, Copy, Default)]
pub struct Arrival;

impl QueueOrder for Arrival {
    fn name(&self) -> String {
        "arrival".to_string()
    }

    fn priority(&self, job: &JobRequest, _view: &View<'_>) -> f64 {
        -(job.submit as f64)
    }

    fn is_arrival_order(&self) -> bool {
        true
    }
}
