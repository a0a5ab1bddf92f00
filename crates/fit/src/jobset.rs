//! Streit's synthetic job sets (paper 002, section 4): a trace analysed into a Weibull
//! distribution of inter-arrival times and a probability matrix of (width, estimated runtime,
//! actual runtime), from which open-loop job sets of any size are generated; a shrinking factor
//! divides the load's time scale (section 5: "decrease the average interarrival time").
//!
//! The matrix holds every (width, estimate, runtime) combination that occurs in the trace with
//! its frequency (the empirical joint distribution: a cell per combination, so no binning decides
//! anything), and a job draws one cell. The Weibull distribution
//! F(x) = 1 - exp(-(x / beta)^alpha) is fitted by maximum likelihood. Inter-arrival times are
//! whole seconds in a trace, and a zero (jobs submitted in the same second) has no likelihood
//! under a Weibull: zeros count as half a second, the middle of their one-second bin.

use rand::Rng;
use rand_distr::{Distribution, Weibull};
use statrs::function::gamma::gamma;

/// A job of a job set: submit time (seconds), width (processors), the user's estimate and the
/// actual runtime (seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SetJob {
    /// Submit time, seconds.
    pub submit: i64,
    /// Processors.
    pub processors: u32,
    /// The user's runtime estimate, seconds.
    pub estimate: i64,
    /// The actual runtime, seconds.
    pub runtime: i64,
}

/// The analysis of a trace: the Weibull inter-arrival distribution and the job matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSetModel {
    /// Weibull shape alpha.
    pub alpha: f64,
    /// Weibull scale beta, seconds.
    pub beta: f64,
    /// Mean of the trace's inter-arrival times, seconds.
    pub mean_interarrival: f64,
    /// (width, estimate, runtime) cells with their job counts, sorted.
    pub cells: Vec<((u32, i64, i64), u64)>,
    /// Cumulative counts of `cells`, for drawing.
    cumulative: Vec<u64>,
}

/// Why a trace cannot be analysed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobSetError {
    /// Fewer than two jobs: no inter-arrival time.
    #[error("a job set model needs at least two jobs, the trace has {0}")]
    TooFewJobs(usize),
    /// Every job arrived at the same second.
    #[error("all jobs arrive at the same time: no inter-arrival distribution to fit")]
    NoSpread,
    /// The Weibull to generate with has a shape or scale that is not a number > 0.
    #[error("the Weibull's alpha and beta must be numbers > 0: {0}")]
    Weibull(rand_distr::WeibullError),
}

/// The maximum-likelihood Weibull (alpha, beta) of positive samples `x`: alpha solves
/// sum(x^a ln x) / sum(x^a) - 1/a - mean(ln x) = 0 (increasing in a, found by bisection), and
/// beta = (mean(x^alpha))^(1/alpha). The samples are scaled by their geometric mean first, so the
/// powers stay finite.
pub fn weibull_mle(x: &[f64]) -> Option<(f64, f64)> {
    if x.len() < 2 || x.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let n = x.len() as f64;
    let mean_log = x.iter().map(|v| v.ln()).sum::<f64>() / n;
    let logs: Vec<f64> = x.iter().map(|v| v.ln() - mean_log).collect(); // ln(x / g)
    if logs.iter().all(|l| l.abs() < 1e-12) {
        return None; // all equal: the shape is unbounded
    }
    // With y = x / g: sum(y^a ln y) / sum(y^a) - 1/a = 0 (mean(ln y) = 0).
    let score = |a: f64| {
        let (mut num, mut den) = (0.0, 0.0);
        let top = logs.iter().cloned().fold(f64::MIN, f64::max);
        for &l in &logs {
            let w = (a * (l - top)).exp(); // y^a / y_max^a
            num += w * l;
            den += w;
        }
        num / den - 1.0 / a
    };
    let (mut low, mut high) = (1e-3, 1.0);
    while score(high) < 0.0 {
        high *= 2.0;
        if high > 1e4 {
            return None;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (low + high);
        if score(mid) < 0.0 {
            low = mid;
        } else {
            high = mid;
        }
    }
    let alpha = 0.5 * (low + high);
    // beta = g * (mean(y^alpha))^(1/alpha), in logs.
    let top = logs.iter().cloned().fold(f64::MIN, f64::max);
    let mean_pow = logs.iter().map(|&l| (alpha * (l - top)).exp()).sum::<f64>() / n;
    let beta = (mean_log + top + mean_pow.ln() / alpha).exp();
    Some((alpha, beta))
}

impl JobSetModel {
    /// Analyses `jobs` (any order).
    pub fn fit(jobs: &[SetJob]) -> Result<JobSetModel, JobSetError> {
        if jobs.len() < 2 {
            return Err(JobSetError::TooFewJobs(jobs.len()));
        }
        let mut submits: Vec<i64> = jobs.iter().map(|j| j.submit).collect();
        submits.sort_unstable();
        let gaps: Vec<f64> = submits
            .windows(2)
            .map(|w| ((w[1] - w[0]) as f64).max(0.5))
            .collect();
        let mean_interarrival = submits
            .windows(2)
            .map(|w| (w[1] - w[0]) as f64)
            .sum::<f64>()
            / gaps.len() as f64;
        let (alpha, beta) = weibull_mle(&gaps).ok_or(JobSetError::NoSpread)?;
        let mut counts: std::collections::BTreeMap<(u32, i64, i64), u64> = Default::default();
        for j in jobs {
            *counts
                .entry((j.processors, j.estimate, j.runtime))
                .or_default() += 1;
        }
        let cells: Vec<((u32, i64, i64), u64)> = counts.into_iter().collect();
        let cumulative = cells
            .iter()
            .scan(0, |sum, &(_, c)| {
                *sum += c;
                Some(*sum)
            })
            .collect();
        Ok(JobSetModel {
            alpha,
            beta,
            mean_interarrival,
            cells,
            cumulative,
        })
    }

    /// The Weibull's mean, beta Gamma(1 + 1/alpha), seconds (statrs's gamma function).
    pub fn weibull_mean(&self) -> f64 {
        self.beta * gamma(1.0 + 1.0 / self.alpha)
    }

    /// A job set of `jobs` jobs: the first arrives at 0, each next one a Weibull inter-arrival
    /// time (seconds; `rand_distr`'s sampler, the inverse CDF of one uniform draw) times
    /// `shrink` later (rounded to whole seconds); each draws a cell of the matrix. Fails when
    /// `alpha` or `beta` is not a number > 0.
    pub fn generate<R: Rng + ?Sized>(
        &self,
        jobs: usize,
        shrink: f64,
        rng: &mut R,
    ) -> Result<Vec<SetJob>, JobSetError> {
        let weibull = Weibull::new(self.beta, self.alpha).map_err(JobSetError::Weibull)?;
        let total = self.cumulative.last().copied().unwrap_or(0);
        let mut t = 0.0f64;
        Ok((0..jobs)
            .map(|i| {
                if i > 0 {
                    t += shrink * weibull.sample(rng);
                }
                let pick = rng.random_range(0..total.max(1));
                let cell = self.cumulative.partition_point(|&c| c <= pick);
                let ((processors, estimate, runtime), _) =
                    self.cells[cell.min(self.cells.len() - 1)];
                SetJob {
                    submit: t.round() as i64,
                    processors,
                    estimate,
                    runtime,
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    #[test]
    fn gamma_by_hand() {
        assert!((gamma(5.0) - 24.0).abs() < 1e-9);
        assert!((gamma(0.5) - std::f64::consts::PI.sqrt()).abs() < 1e-12);
        // Python 3.11 math.gamma(1 + 1 / 0.35).
        assert!((gamma(1.0 + 1.0 / 0.35) - 5.029_144_702_140_3).abs() < 1e-9);
    }

    /// A model of two cells with the Weibull (alpha, beta).
    fn model(alpha: f64, beta: f64) -> JobSetModel {
        let mut model = JobSetModel::fit(&[
            SetJob {
                submit: 0,
                processors: 1,
                estimate: 60,
                runtime: 30,
            },
            SetJob {
                submit: 100,
                processors: 2,
                estimate: 60,
                runtime: 30,
            },
            SetJob {
                submit: 250,
                processors: 2,
                estimate: 60,
                runtime: 30,
            },
        ])
        .unwrap();
        (model.alpha, model.beta) = (alpha, beta);
        model
    }

    #[test]
    fn the_sampled_inter_arrivals_have_the_weibulls_mean() {
        // Streit's CTC fit (shape 0.35: a heavy tail) and a shape above 1, seconds.
        for (alpha, beta, tolerance) in [(0.35, 60.0, 0.04), (1.5, 600.0, 0.01)] {
            let model = model(alpha, beta);
            let expected = beta * gamma(1.0 + 1.0 / alpha);
            assert!((model.weibull_mean() - expected).abs() < 1e-9 * expected);
            // Unrounded draws, from the sampler itself: a fixed seed, so deterministic.
            let weibull = Weibull::new(beta, alpha).unwrap();
            let mut rng = Pcg64::seed_from_u64(11);
            let n = 400_000;
            let mean = (0..n).map(|_| weibull.sample(&mut rng)).sum::<f64>() / n as f64;
            assert!(
                (mean / expected - 1.0).abs() < tolerance,
                "alpha {alpha}: mean {mean}, expected {expected}"
            );
            // The generated set's span: n - 1 draws, each rounded only in the sum.
            let set = model
                .generate(n, 1.0, &mut Pcg64::seed_from_u64(11))
                .unwrap();
            let span = set.last().unwrap().submit as f64 / (n - 1) as f64;
            assert!((span / expected - 1.0).abs() < tolerance, "{span}");
        }
    }

    #[test]
    fn a_weibull_without_a_positive_shape_or_scale_is_refused() {
        let mut rng = Pcg64::seed_from_u64(1);
        for (alpha, beta) in [(0.0, 60.0), (0.35, -1.0), (f64::NAN, 60.0)] {
            let error = model(alpha, beta).generate(10, 1.0, &mut rng).unwrap_err();
            assert!(matches!(error, JobSetError::Weibull(_)), "{error}");
            assert!(error.to_string().contains("must be numbers > 0"), "{error}");
        }
    }

    #[test]
    fn the_mle_recovers_a_weibull() {
        // Samples by the inverse CDF of Weibull(0.35, 60), Streit's CTC fit.
        let mut rng = Pcg64::seed_from_u64(3);
        let x: Vec<f64> = (0..40_000)
            .map(|_| 60.0 * (-(1.0 - rng.random::<f64>()).ln()).powf(1.0 / 0.35))
            .collect();
        let (alpha, beta) = weibull_mle(&x).unwrap();
        assert!((alpha - 0.35).abs() < 0.01, "{alpha}");
        assert!((beta / 60.0 - 1.0).abs() < 0.05, "{beta}");
        // The exponential distribution is Weibull with alpha = 1.
        let e: Vec<f64> = (0..40_000)
            .map(|_| -300.0 * (1.0 - rng.random::<f64>()).ln())
            .collect();
        let (alpha, beta) = weibull_mle(&e).unwrap();
        assert!(
            (alpha - 1.0).abs() < 0.02 && (beta / 300.0 - 1.0).abs() < 0.02,
            "{alpha} {beta}"
        );
        assert_eq!(weibull_mle(&[5.0, 5.0, 5.0]), None);
        assert_eq!(weibull_mle(&[5.0]), None);
    }

    #[test]
    fn generated_sets_keep_the_matrix_and_shrink_the_arrivals() {
        let trace: Vec<SetJob> = (0..1000)
            .map(|i| SetJob {
                submit: i * 100 + (i % 7) * 13,
                processors: [1, 4, 16][i as usize % 3],
                estimate: [600, 3600][i as usize % 2],
                runtime: 10 * (i % 5),
            })
            .collect();
        let model = JobSetModel::fit(&trace).unwrap();
        assert_eq!(model.cells.len(), 30); // 3 x 2 x 5 combinations (all occur)
        assert!((model.mean_interarrival - 100.0).abs() < 1.0);
        let mut rng = Pcg64::seed_from_u64(1);
        let set = model.generate(20_000, 1.0, &mut rng).unwrap();
        assert_eq!(set.len(), 20_000);
        assert!(set.windows(2).all(|w| w[0].submit <= w[1].submit));
        // Every job is a cell of the matrix, with the cells' frequencies.
        let wide = set.iter().filter(|j| j.processors == 16).count() as f64 / 20_000.0;
        assert!((wide - 1.0 / 3.0).abs() < 0.015, "{wide}");
        assert!(set.iter().all(|j| {
            model
                .cells
                .iter()
                .any(|c| c.0 == (j.processors, j.estimate, j.runtime))
        }));
        // The arrival rate follows the fitted Weibull; a shrinking factor of 0.5 halves the span.
        let span = set.last().unwrap().submit as f64;
        assert!((span / 19_999.0 / model.weibull_mean() - 1.0).abs() < 0.05);
        let half = model
            .generate(20_000, 0.5, &mut Pcg64::seed_from_u64(1))
            .unwrap();
        let ratio = half.last().unwrap().submit as f64 / span;
        assert!((ratio - 0.5).abs() < 0.001, "{ratio}");
        assert_eq!(
            JobSetModel::fit(&trace[..1]),
            Err(JobSetError::TooFewJobs(1))
        );
    }
}
