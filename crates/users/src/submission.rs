//! The job-submission model's attribute sampling (paper 000, section III-B.2).

use rand::Rng;
use rand_pcg::Pcg64;
use usermodel::Model;

use crate::Time;
use crate::estimate::EstimateModel;

/// What a job asks for and how long it really runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobAttributes {
    /// Processors.
    pub processors: u32,
    /// True runtime, seconds.
    pub runtime: Time,
    /// The user's estimate, seconds: the job is killed there if it runs longer.
    pub estimate: Time,
}

/// Two-level sampling: the top level draws a job's size, runtime and estimate; the bottom level
/// repeats them a number of times drawn from the size-repetition distribution (users submit the
/// same job over and over). Size and runtime are drawn independently, as in the paper.
///
/// The estimate: with no `estimates` model (`estimates = "fitted"`, the default), given the drawn
/// runtime, the estimate is drawn from the estimates users gave jobs of the same runtime class
/// (powers of two of seconds) in the traces; estimates below the runtime occur as often as there,
/// and such jobs are killed at their estimate; a fitted model without estimates gives the runtime
/// itself. Otherwise the [`EstimateModel`] gives it, from the user's estimate stream.
#[derive(Debug, Default)]
pub struct JobSource {
    current: Option<JobAttributes>,
    left: i64,
}

impl JobSource {
    /// The next job's attributes.
    pub fn next(
        &mut self,
        model: &Model,
        repeat: bool,
        estimates: Option<&EstimateModel>,
        rng: &mut Pcg64,
        estimates_rng: &mut Pcg64,
    ) -> JobAttributes {
        match self.current {
            Some(attributes) if self.left > 0 => {
                self.left -= 1;
                attributes
            }
            _ => {
                let attributes = draw(model, estimates, rng, estimates_rng);
                self.current = Some(attributes);
                let repetitions = if repeat {
                    model.size_repetition.quantile(rng.random()).max(1)
                } else {
                    1
                };
                self.left = repetitions - 1;
                attributes
            }
        }
    }
}

fn draw(
    model: &Model,
    estimates: Option<&EstimateModel>,
    rng: &mut Pcg64,
    estimates_rng: &mut Pcg64,
) -> JobAttributes {
    let processors = u32::try_from(model.size.quantile(rng.random()).max(1)).unwrap_or(u32::MAX);
    let runtime = model.runtime.quantile(rng.random()).max(0);
    // The fitted estimate is drawn in every case, so the job stream (and the jobs that follow)
    // does not depend on the estimate model; other models draw from their own stream.
    let fitted = model
        .estimate
        .as_ref()
        .map(|e| e.for_runtime(runtime).quantile(rng.random()).max(1));
    let estimate = match (estimates, fitted) {
        (Some(m), _) => m.for_runtime(runtime, estimates_rng),
        (None, Some(e)) => e,
        (None, None) => runtime,
    };
    JobAttributes {
        processors,
        runtime,
        estimate,
    }
}
