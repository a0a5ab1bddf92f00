use super::QueueOrder;
use crate::params::{BadValue, PartParams};
use crate::view::View;
use crate::{JobRequest, Time};

/// The `creasy` order's parameters (keys of `[scheduler]`, flags of `run` and `replay`).
#[derive(
    Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(default, deny_unknown_fields)]
pub struct CreasyParams {
    /// Weight of criticality against seniority: a finite number >= 0 (the paper uses 1500 to
    /// 6000). Default 6000, the paper's strongest setting (section IV-B).
    pub alpha: f64,
}

impl Default for CreasyParams {
    fn default() -> Self {
        CreasyParams { alpha: 6000.0 }
    }
}

impl PartParams for CreasyParams {
    fn check(&mut self, _part: &str) -> Result<(), BadValue> {
        if self.alpha.is_finite() && self.alpha >= 0.0 {
            Ok(())
        } else {
            Err(BadValue::new(
                format!("alpha must be a finite number >= 0, got {}", self.alpha),
                &["alpha"],
            ))
        }
    }
}

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

impl Creasy {
    /// Seconds as minutes, as the priority computes them (`seconds as f64 / 60.0`).
    #[inline]
    pub(crate) fn minutes(seconds: Time) -> f64 {
        seconds as f64 / 60.0
    }

    /// The priority's last step: `alpha * criticality(estimated_response) + waited`, in
    /// minutes. [`QueueOrder::priority`] and [`Creasy::upper_bound`] both end here, so a bound
    /// is the same floating-point expression as the priorities it bounds.
    #[inline]
    fn combine(&self, estimated_response: f64, waited: f64) -> f64 {
        self.alpha * Self::criticality(estimated_response) + waited
    }

    /// Whether [`Creasy::upper_bound`] and [`Creasy::lower_bound`] hold: `alpha` is finite and
    /// not negative (the fields are public, so any value may come). The cluster searches the
    /// priority order through the bounds only then, and sorts the queue otherwise.
    pub(crate) fn has_bounds(&self) -> bool {
        self.alpha.is_finite() && self.alpha >= 0.0
    }

    /// A priority no job can exceed whose wait is at most `most_waited` minutes (as
    /// [`Creasy::minutes`] computes it from seconds) and whose estimated response, as the
    /// priority computes it (fl(w + e)), is at least `least_response` (not negative; see
    /// [`Creasy::least_response`]).
    ///
    /// Why it is exact, not approximate: with round-to-nearest, x <= y implies fl(x) <= fl(y),
    /// so each step of the priority is monotone in its inputs. d = fl(fl(0.05 r) + 1) >= 1 grows
    /// with the estimated response r, fl(d d) too, so criticality fl(0.04 / fl(d d)) does not
    /// grow, nor (alpha >= 0) does fl(alpha c); then fl(fl(alpha c) + w) is at most the same
    /// sum with the largest criticality and `most_waited`. Requires [`Creasy::has_bounds`].
    #[inline]
    pub(crate) fn upper_bound(&self, least_response: f64, most_waited: f64) -> f64 {
        self.combine(least_response, most_waited)
    }

    /// A lower bound of the estimated response fl(w + e) of every job that waited at least
    /// `least_waited` minutes and whose estimate is at least `least_estimate` minutes (both as
    /// [`Creasy::minutes`] computes them): fl(least_waited + least_estimate), by monotonicity.
    #[inline]
    pub(crate) fn least_response(least_waited: f64, least_estimate: f64) -> f64 {
        least_waited + least_estimate
    }

    /// The most criticality can add to the priority of a job that waited at least
    /// `least_waited` seconds, whatever its estimate: fl(alpha criticality(that wait)), since
    /// the estimated response is at least the wait ([`Creasy::upper_bound`]'s monotonicity);
    /// at a wait of 0, fl(alpha 0.04). Requires [`Creasy::has_bounds`].
    pub(crate) fn most_criticality(&self, least_waited: Time) -> f64 {
        self.alpha * Self::criticality(Self::minutes(least_waited))
    }

    /// The longest wait, in seconds, at which a job whose criticality adds at most `bonus`
    /// ([`Creasy::most_criticality`]) has a priority below `p`, whatever its estimate: every
    /// job with a shorter or equal wait then has one too (-1 if none has). A range of such jobs
    /// is then ruled out by comparing integers, without [`Creasy::upper_bound`]'s divisions.
    ///
    /// Why it is exact: the priority is fl(fl(alpha c) + w) <= fl(bonus + w) by monotonicity,
    /// which grows with the wait in seconds; the answer is a wait at which that expression is
    /// below `p`, checked with the expression itself.
    pub(crate) fn wait_below(bonus: f64, p: f64) -> Time {
        // Turns false at about (p - bonus) minutes (`as` rounds toward zero: the second after).
        last_wait_where(
            |seconds| bonus + Self::minutes(seconds) < p,
            (p - bonus) * 60.0 + 1.0,
        )
        .unwrap_or(-1)
    }

    /// The shortest wait, in seconds, from which every job has a priority above `p`, by
    /// [`Creasy::lower_bound`] (`None` if no wait is long enough). Exact in the same way as
    /// [`Creasy::wait_below`]: the minutes of a wait grow with the seconds, and the answer is
    /// checked with the expression itself.
    pub(crate) fn seniority_above(p: f64) -> Option<Time> {
        first_wait_where(
            |seconds| Self::lower_bound(Self::minutes(seconds)) > p,
            p * 60.0 + 1.0,
        )
    }

    /// The shortest wait, in seconds, from which every job has a priority of at least `p`, by
    /// [`Creasy::lower_bound`] (`None` if no wait is long enough): a range of jobs whose
    /// oldest waited that long cannot be ruled out against `p` by [`Creasy::upper_bound`], so
    /// the search does not compute it. Exact as [`Creasy::seniority_above`].
    pub(crate) fn seniority_reaches(p: f64) -> Option<Time> {
        first_wait_where(
            |seconds| Self::lower_bound(Self::minutes(seconds)) >= p,
            p * 60.0 + 1.0,
        )
    }

    /// A priority every job that waited at least `least_waited` minutes has or exceeds:
    /// `least_waited` itself (seniority), since fl(alpha c) >= 0 (or -0) and adding it to the
    /// wait cannot round below the wait. Requires [`Creasy::has_bounds`].
    #[inline]
    pub(crate) fn lower_bound(least_waited: f64) -> f64 {
        least_waited
    }
}

/// The shortest wait in seconds (at least 0) at which `holds`, a condition that once true stays
/// true as the wait grows, is true (`None` if not even at [`Time::MAX`]). `guess` (seconds, any
/// value: `as` saturates and takes NaN to 0) is tried first, and is the answer if `holds` is
/// true there and not one second earlier; otherwise steps that double, then bisection. Every
/// step is checked with `holds` itself: a poor guess costs steps, never the answer.
fn first_wait_where(holds: impl Fn(Time) -> bool, guess: f64) -> Option<Time> {
    let guess = (guess as Time).max(0);
    if guess == 0 && holds(0) {
        return Some(0);
    }
    if guess > 0 && holds(guess) && !holds(guess - 1) {
        return Some(guess);
    }
    if holds(0) {
        return Some(0);
    }
    if !holds(Time::MAX) {
        return None;
    }
    // Invariant: !holds(below) and holds(at).
    let start = guess.clamp(1, Time::MAX - 1);
    let (mut below, mut at) = if holds(start) {
        let mut step: Time = 1;
        let mut at = start;
        loop {
            let below = at.saturating_sub(step).max(0);
            if !holds(below) {
                break (below, at);
            }
            at = below;
            step = step.saturating_mul(2);
        }
    } else {
        let mut step: Time = 1;
        let mut below = start;
        loop {
            let at = below.saturating_add(step);
            if holds(at) {
                break (below, at);
            }
            below = at;
            step = step.saturating_mul(2);
        }
    };
    while at - below > 1 {
        let middle = below + (at - below) / 2;
        if holds(middle) {
            at = middle;
        } else {
            below = middle;
        }
    }
    Some(at)
}

/// The longest wait in seconds (at least 0) at which `holds`, a condition that once false stays
/// false as the wait grows, is true (`None` if not even at 0); `guess`: where it turns false.
/// As [`first_wait_where`] finds the first wait at which it is false.
fn last_wait_where(holds: impl Fn(Time) -> bool, guess: f64) -> Option<Time> {
    match first_wait_where(|seconds| !holds(seconds), guess) {
        Some(0) => None,
        Some(first_false) => Some(first_false - 1),
        None => Some(Time::MAX),
    }
}

impl Creasy {
    /// The priority of `job` at `now` (seconds): alpha * criticality + seniority. It depends
    /// on the clock alone, which is what lets the cluster search its order (see the bounds
    /// above).
    #[inline]
    pub fn priority_at(&self, job: &JobRequest, now: Time) -> f64 {
        let waited_minutes = Self::minutes(now - job.submit);
        let estimated_response = waited_minutes + Self::minutes(job.estimate);
        self.combine(estimated_response, waited_minutes)
    }
}

impl QueueOrder for Creasy {
    fn name(&self) -> String {
        format!("creasy(alpha={})", self.alpha)
    }

    #[inline]
    fn priority(&self, job: &JobRequest, view: &View<'_>) -> f64 {
        self.priority_at(job, view.now())
    }

    fn as_creasy(&self) -> Option<Creasy> {
        Some(*self)
    }

    /// [`QueueOrder::priority`] for each job, inlined into one loop (the same arithmetic, so
    /// the same bits).
    fn priorities(&self, jobs: &[JobRequest], view: &View<'_>, out: &mut Vec<f64>) {
        let now = view.now();
        out.extend(jobs.iter().map(|job| self.priority_at(job, now)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::JobId;

    fn job(submit: Time, estimate: Time) -> JobRequest {
        JobRequest {
            array_task: Default::default(),
            reservation: Default::default(),
            shape: Default::default(),
            id: JobId(0),
            submit,
            processors: 1,
            estimate,
            user: 0,
            group: -1,
            partition: -1,
            queue: -1,
            extra: crate::Extra::NONE,
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
        let p = c.priority_at(&job(0, 600), 600);
        assert!((p - (6000.0 * 0.01 + 10.0)).abs() < 1e-9);
    }

    #[test]
    fn alpha_zero_is_waiting_time() {
        let c = Creasy { alpha: 0.0 };
        assert_eq!(c.priority_at(&job(60, 5000), 180), 2.0);
    }
}
