//! The agent's decisions as a queue order: the cluster's rule orders the queue by it at every
//! pass of an episode, so both action modes run the scheduler's own backfilling code.

use cluster::{JobRequest, QueueOrder, View};

/// A queue order whose priorities are set from outside between passes: the agent's score of
/// each job of the window (score mode), or `+inf` for the job it picked and must reserve (pick
/// mode). Every other job has priority `-inf`, and equal priorities fall back to arrival order
/// (submit, then id), as for every order. With no score set the queue is therefore in arrival
/// order: the passes the agent does not decide are FCFS passes of the rule.
#[derive(Debug, Default)]
pub struct ScoreOrder {
    /// (job id, priority), sorted by id.
    scores: Vec<(u32, f64)>,
}

impl ScoreOrder {
    /// Sets the priorities of the next passes: `(job id, priority)` pairs, any order; every other
    /// job gets `-inf`.
    pub fn set(&mut self, scores: impl IntoIterator<Item = (u32, f64)>) {
        self.scores.clear();
        self.scores.extend(scores);
        self.scores.sort_unstable_by_key(|&(id, _)| id);
    }

    /// Back to arrival order.
    pub fn clear(&mut self) {
        self.scores.clear();
    }
}

impl QueueOrder for ScoreOrder {
    fn name(&self) -> String {
        "agent".to_string()
    }

    fn priority(&self, job: &JobRequest, _view: &View<'_>) -> f64 {
        match self.scores.binary_search_by_key(&job.id.0, |&(id, _)| id) {
            Ok(i) => self.scores[i].1,
            Err(_) => f64::NEG_INFINITY,
        }
    }

    fn priorities(&self, jobs: &[JobRequest], view: &View<'_>, out: &mut Vec<f64>) {
        if self.scores.is_empty() {
            out.extend(std::iter::repeat_n(f64::NEG_INFINITY, jobs.len()));
        } else {
            out.extend(jobs.iter().map(|job| self.priority(job, view)));
        }
    }

    fn arrival_order_now(&self) -> bool {
        self.scores.is_empty()
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cluster::JobId;

    fn job(id: u32) -> JobRequest {
        JobRequest {
            array_task: Default::default(),
            reservation: Default::default(),
            shape: Default::default(),
            id: JobId(id),
            submit: 0,
            processors: 1,
            estimate: 10,
            user: -1,
            group: -1,
            partition: -1,
            queue: -1,
            extra: cluster::Extra::NONE,
        }
    }

    #[test]
    fn unscored_jobs_come_last_and_scores_are_read_back() {
        let idle = cluster::view::Idle::default();
        let view = idle.view(0, cluster::Resources::processors(8));
        let mut order = ScoreOrder::default();
        assert_eq!(order.priority(&job(3), &view), f64::NEG_INFINITY);
        order.set([(7, 0.5), (3, -0.25)]);
        assert_eq!(order.priority(&job(3), &view), -0.25);
        assert_eq!(order.priority(&job(7), &view), 0.5);
        assert_eq!(order.priority(&job(5), &view), f64::NEG_INFINITY);
        let mut out = Vec::new();
        order.priorities(&[job(7), job(5)], &view, &mut out);
        assert_eq!(out, vec![0.5, f64::NEG_INFINITY]);
        order.clear();
        assert_eq!(order.priority(&job(7), &view), f64::NEG_INFINITY);
    }
}
