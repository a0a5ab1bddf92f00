//! The job-submission model's attribute sampling (paper 000, section III-B.2).

use fit::Model;
use rand::Rng;
use rand_pcg::Pcg64;

use crate::Time;
use crate::config::Estimates;

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
/// The estimate model ([`Estimates::Fitted`], the default): given the drawn runtime, the estimate
/// is drawn from the estimates users gave jobs of the same runtime class (powers of two of
/// seconds) in the traces; estimates below the runtime occur as often as there, and such jobs are
/// killed at their estimate. A model without estimates, or [`Estimates::Exact`], gives the
/// runtime itself.
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
        estimates: Estimates,
        rng: &mut Pcg64,
    ) -> JobAttributes {
        match self.current {
            Some(attributes) if self.left > 0 => {
                self.left -= 1;
                attributes
            }
            _ => {
                let attributes = draw(model, estimates, rng);
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

fn draw(model: &Model, source: Estimates, rng: &mut Pcg64) -> JobAttributes {
    let processors = u32::try_from(model.size.quantile(rng.random()).max(1)).unwrap_or(u32::MAX);
    let runtime = model.runtime.quantile(rng.random()).max(0);
    // The estimate is drawn in both cases, so the random stream (and the jobs that follow) does
    // not depend on the choice.
    let fitted = model
        .estimate
        .as_ref()
        .map(|e| e.for_runtime(runtime).quantile(rng.random()).max(1));
    let estimate = match (source, fitted) {
        (Estimates::Fitted, Some(e)) => e,
        _ => runtime,
    };
    JobAttributes {
        processors,
        runtime,
        estimate,
    }
}
