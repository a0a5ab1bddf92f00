use super::QueueOrder;
use crate::{JobRequest, Time};

/// CREASY's priority (Shmueli & Feitelson 2009, section IV-A, equations 3 and 4):
///
/// ```text
/// priority    = alpha * criticality + seniority
/// criticality = 0.04 / (0.05 * estimated_response + 1)^2
/// ```
///
/// with `estimated_response` = (time waited so far + user estimate) and `seniority` = time
/// waited so far, both in minutes. Criticality is the derivative (in absolute value) of the
/// continue probability `0.8 / (0.05 r + 1)` of the user model: a job whose owner is probably
/// still waiting for it is critical. Seniority grows without bound, so every job eventually
/// becomes the highest-priority job and EASY's reservation guarantees it runs (no starvation).
/// With `alpha = 0` the priority is the waiting time alone: exactly EASY's arrival order.
#[derive(Debug, Clone, Copy)]
pub struct Creasy {
    /// Weight of criticality against seniority (the paper uses 1500, 3000, 4500 and 6000).
    pub alpha: f64,
}

impl Creasy {
    /// The largest criticality a job can have (at an estimated response of 0 minutes).
    pub const MAX_CRITICALITY: f64 = 0.04;

    /// Criticality of a job expected to respond after `estimated_response_minutes` (equation 3).
    #[inline]
    pub fn criticality(estimated_response_minutes: f64) -> f64 {
        let d = 0.05 * estimated_response_minutes + 1.0;
        Self::MAX_CRITICALITY / (d * d)
    }
}

impl QueueOrder for Creasy {
    fn name(&self) -> String {
        format!("creasy(alpha={})", self.alpha)
    }

    #[inline]
    fn priority(&self, job: &JobRequest, now: Time) -> f64 {
        let waited_minutes = (now - job.submit) as f64 / 60.0;
        let estimated_response = waited_minutes + job.estimate as f64 / 60.0;
        self.alpha * Self::criticality(estimated_response) + waited_minutes
    }

    /// [`QueueOrder::priority`] for each job, inlined into one loop (the same arithmetic, so
    /// the same bits).
    fn priorities(&self, jobs: &[JobRequest], now: Time, out: &mut Vec<f64>) {
        out.extend(jobs.iter().map(|job| self.priority(job, now)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::JobId;

    fn job(submit: Time, estimate: Time) -> JobRequest {
        JobRequest {
            id: JobId(0),
            submit,
            processors: 1,
            estimate,
            user: 0,
            group: -1,
            partition: -1,
            queue: -1,
        }
    }

    #[test]
    fn criticality_matches_equation_3() {
        assert_eq!(Creasy::criticality(0.0), 0.04);
        // r = 20 min: 0.04 / (1 + 1)^2 = 0.01
        assert!((Creasy::criticality(20.0) - 0.01).abs() < 1e-15);
    }

    #[test]
    fn priority_combines_criticality_and_seniority() {
        let c = Creasy { alpha: 6000.0 };
        // waited 10 min, estimate 10 min: est. response 20 min -> criticality 0.01
        let p = c.priority(&job(0, 600), 600);
        assert!((p - (6000.0 * 0.01 + 10.0)).abs() < 1e-9);
    }

    #[test]
    fn alpha_zero_is_waiting_time() {
        let c = Creasy { alpha: 0.0 };
        assert_eq!(c.priority(&job(60, 5000), 180), 2.0);
    }
}
