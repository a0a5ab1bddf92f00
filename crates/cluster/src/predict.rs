//! System-generated runtime predictions and their correction (Tsafrir's thesis, chapter 4).
//!
//! The user estimate keeps one role only: the kill time. Everything the scheduler plans with
//! (shadow times, "ends by the shadow time", SJBF's order) uses the prediction instead.

use rustc_hash::FxHashMap as HashMap;

use crate::policy::{Part, PredictorPart};
use crate::{JobId, Time};

/// Where a job's planning runtime comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Predictor {
    /// The user estimate (classic backfilling: prediction and kill time are one value).
    #[default]
    UserEstimate,
    /// Section 4.2.1: the mean runtime of the user's two most recently submitted jobs that have
    /// already terminated; the user estimate when there are not two such jobs, and never more
    /// than the estimate (the job is killed there anyway).
    RecentUserRuntimes,
    /// The job's actual runtime, capped at its estimate: perfect predictions, the reference
    /// Tsafrir compares system-generated predictions with (an oracle no real scheduler has).
    /// The engine hands the runtime over at submission
    /// ([`crate::Cluster::submit_with_runtime`]); the queue order still never sees it.
    Exact,
}

/// The user estimate as the prediction.
pub static ESTIMATE: PredictorPart = Part {
    name: "estimate",
    help: "the user's runtime estimate (classic backfilling)",
    params: crate::params::Params::NONE,
    build: Predictor::UserEstimate,
};

/// Tsafrir's per-user prediction (thesis, section 4.2.1).
pub static USER_LAST_TWO: PredictorPart = Part {
    name: "user-last-two",
    help: "the mean runtime of the user's two latest terminated jobs, capped at the estimate and corrected when it expires (Tsafrir)",
    params: crate::params::Params::NONE,
    build: Predictor::RecentUserRuntimes,
};

/// Perfect predictions: the actual runtime.
pub static EXACT: PredictorPart = Part {
    name: "exact",
    help: "the job's actual runtime capped at its estimate: an oracle, for reference runs",
    params: crate::params::Params::NONE,
    build: Predictor::Exact,
};

/// Every predictor `--predictor` and `[scheduler] predictor` can name. Only rules that plan
/// with predictions (EASY and EASY-SJBF) take one other than `estimate`. A new predictor: a
/// variant of [`Predictor`], its prediction in [`crate::Cluster::submit`], and one entry here.
pub static PREDICTORS: &[&PredictorPart] = &[&ESTIMATE, &USER_LAST_TWO, &EXACT];

/// The prediction of [`Predictor::Exact`] for a job that runs `runtime` seconds with user
/// estimate `estimate`: the runtime, never more than the estimate (the job is killed there)
/// and never negative.
pub fn exact_prediction(runtime: Time, estimate: Time) -> Time {
    runtime.min(estimate).max(0)
}

/// The per-user history of [`Predictor::RecentUserRuntimes`]: for each user the two terminated
/// jobs with the latest submission (submit, id) and their runtimes.
#[derive(Debug, Default)]
pub(crate) struct History {
    recent: HashMap<i64, [Option<Finished>; 2]>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Finished {
    submit: Time,
    id: JobId,
    runtime: Time,
}

impl History {
    /// Records a terminated job of `user`.
    pub(crate) fn record(&mut self, user: i64, submit: Time, id: JobId, runtime: Time) {
        let new = Finished {
            submit,
            id,
            runtime,
        };
        let slots = self.recent.entry(user).or_default();
        // slots[0] is the more recent of the two.
        *slots = match *slots {
            [None, _] => [Some(new), None],
            [Some(a), _] if new > a => [Some(new), Some(a)],
            [Some(a), None] => [Some(a), Some(new)],
            [Some(a), Some(b)] if new > b => [Some(a), Some(new)],
            unchanged => unchanged,
        };
    }

    /// The runtimes of `user`'s two most recently submitted jobs that ended, most recent first,
    /// seconds.
    pub(crate) fn recent_runtimes(&self, user: i64) -> impl Iterator<Item = Time> + '_ {
        self.recent
            .get(&user)
            .into_iter()
            .flatten()
            .flatten()
            .map(|finished| finished.runtime)
    }

    /// The prediction for a new job of `user` with user estimate `estimate` (seconds): the mean
    /// of the two recent runtimes (rounded to the nearest second, at least 1 s), capped at the
    /// estimate; the estimate itself without two terminated jobs.
    pub(crate) fn predict(&self, user: i64, estimate: Time) -> Time {
        match self.recent.get(&user) {
            Some([Some(a), Some(b)]) => ((a.runtime + b.runtime + 1) / 2).max(1).min(estimate),
            _ => estimate,
        }
    }
}

/// Section 4.2.2: the prediction of a job still running when its prediction `prediction`
/// (seconds since its start) has expired. Below the user estimate the new prediction is the
/// estimate ("the user was smarter than us"); from there on, the `k`-th correction beyond the
/// estimate (`k` = 1, 2, ...) adds 1 minute, then 15 * 2^(k-2) minutes (15 min, 30 min, 1 h, ...).
pub fn corrected_prediction(prediction: Time, estimate: Time, beyond_estimate: u32) -> Time {
    if prediction < estimate {
        return estimate;
    }
    let minutes: Time = match beyond_estimate {
        0 | 1 => 1,
        k => 15_i64.saturating_mul(1_i64 << (k - 2).min(40)),
    };
    prediction.saturating_add(minutes * 60)
}

/// Section 4.1's accuracy of one prediction `prediction` for a job that ran `runtime` seconds:
/// runtime / prediction when overpredicted, prediction / runtime when underpredicted, 1 when
/// exact (so over- and underprediction do not cancel out when averaged). In [0, 1].
pub fn accuracy(prediction: Time, runtime: Time) -> f64 {
    if prediction == runtime {
        1.0
    } else if prediction > runtime {
        runtime.max(0) as f64 / prediction as f64
    } else {
        prediction.max(0) as f64 / runtime as f64
    }
}

/// A job's accuracy over its life (section 4.1): the accuracy of each prediction in effect,
/// weighted by how long it was in effect between the submission and the end. `first` is
/// (submission, prediction at submission); `corrections` are (from, new prediction) in time
/// order.
pub(crate) fn weighted_accuracy(
    first: (Time, Time),
    corrections: &[(Time, Time)],
    end: Time,
    runtime: Time,
) -> f64 {
    let (submit, initial) = first;
    let life = end - submit;
    if life <= 0 || corrections.is_empty() {
        return accuracy(initial, runtime);
    }
    let mut total = 0.0;
    let mut from = submit;
    let mut prediction = initial;
    for &(until, next) in corrections.iter().chain(std::iter::once(&(end, 0))) {
        total += accuracy(prediction, runtime) * (until - from) as f64;
        (from, prediction) = (until, next);
    }
    total / life as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prediction_is_the_mean_of_the_two_most_recently_submitted_terminated_jobs() {
        let mut h = History::default();
        assert_eq!(h.predict(7, 3600), 3600, "no history: the estimate");
        h.record(7, 100, JobId(1), 600);
        assert_eq!(h.predict(7, 3600), 3600, "one job is not enough");
        h.record(7, 200, JobId(2), 1000);
        assert_eq!(h.predict(7, 3600), 800);
        assert_eq!(h.predict(7, 500), 500, "never above the estimate");
        assert_eq!(h.predict(8, 3600), 3600, "per user");
        // A job submitted earlier but ending later does not displace more recent submissions.
        h.record(7, 50, JobId(0), 10_000);
        assert_eq!(h.predict(7, 3600), 800);
        // A more recent submission replaces the older of the two.
        h.record(7, 300, JobId(3), 3000);
        assert_eq!(h.predict(7, 3600), 2000);
        // Between them: replaces the older one.
        h.record(7, 250, JobId(4), 0);
        assert_eq!(h.predict(7, 3600), 1500);
        h.record(9, 1, JobId(5), 0);
        h.record(9, 2, JobId(6), 0);
        assert_eq!(h.predict(9, 100), 1, "at least one second");
    }

    #[test]
    fn correction_goes_to_the_estimate_then_adds_1_15_30_60_minutes() {
        assert_eq!(corrected_prediction(600, 3600, 0), 3600);
        assert_eq!(corrected_prediction(3600, 3600, 1), 3660);
        assert_eq!(corrected_prediction(3660, 3600, 2), 3660 + 15 * 60);
        assert_eq!(corrected_prediction(4560, 3600, 3), 4560 + 30 * 60);
        assert_eq!(corrected_prediction(6360, 3600, 4), 6360 + 60 * 60);
    }

    #[test]
    fn accuracy_is_symmetric_in_over_and_underprediction() {
        assert_eq!(accuracy(100, 100), 1.0);
        assert_eq!(accuracy(200, 100), 0.5);
        assert_eq!(accuracy(50, 100), 0.5);
        assert_eq!(accuracy(10, 0), 0.0);
        // 100 s predicted from submit 0 until a correction to 400 s at 60; ends at 300 after
        // running 200 s: accuracy 1/2 for 60 s, 1/2 for 240 s.
        assert_eq!(weighted_accuracy((0, 100), &[(60, 400)], 300, 200), 0.5);
        // 0.5 for 100 s then 1.0 for 100 s.
        assert_eq!(weighted_accuracy((0, 100), &[(100, 200)], 200, 200), 0.75);
        assert_eq!(weighted_accuracy((0, 400), &[], 300, 200), 0.5);
    }
}
