//! Statistics across seeds: the mean of a measure over independent runs with a 95 % confidence
//! interval (Student's t), and paired differences between two schedulers run on the same seeds
//! (common random numbers make the pairs comparable, so the interval of the difference is much
//! narrower than the two intervals suggest).

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Mean and spread of one measure over seeds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SeedStats {
    /// Number of seeds (runs).
    pub n: usize,
    /// Mean over the runs.
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator); NaN for a single run.
    pub std: f64,
    /// Lower end of the 95 % confidence interval of the mean; NaN for fewer than two runs.
    pub ci95_low: f64,
    /// Upper end of the 95 % confidence interval of the mean.
    pub ci95_high: f64,
    /// The 2.5 % quantile over the runs (median-unbiased, type 8): with the 97.5 % one, the range
    /// holding the middle 95 % of the runs, as Schlagkamp reports (paper 004, Figs. 9-14).
    pub q025: f64,
    /// The median over the runs.
    pub median: f64,
    /// The 97.5 % quantile over the runs.
    pub q975: f64,
}

impl SeedStats {
    /// The statistics of `values` (NaN values are left out: a measure undefined in a run).
    pub fn of(values: &[f64]) -> SeedStats {
        let mut values: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
        values.sort_by(f64::total_cmp);
        let n = values.len();
        if n == 0 {
            return SeedStats {
                n,
                mean: f64::NAN,
                std: f64::NAN,
                ci95_low: f64::NAN,
                ci95_high: f64::NAN,
                q025: f64::NAN,
                median: f64::NAN,
                q975: f64::NAN,
            };
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let quantile = |tau| crate::summary::quantile_sorted(&values, tau);
        let (q025, median, q975) = (quantile(0.025), quantile(0.5), quantile(0.975));
        if n == 1 {
            return SeedStats {
                n,
                mean,
                std: f64::NAN,
                ci95_low: f64::NAN,
                ci95_high: f64::NAN,
                q025,
                median,
                q975,
            };
        }
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let std = variance.sqrt();
        let half = t_quantile_975(n - 1) * std / (n as f64).sqrt();
        SeedStats {
            n,
            mean,
            std,
            ci95_low: mean - half,
            ci95_high: mean + half,
            q025,
            median,
            q975,
        }
    }

    /// Half the width of the confidence interval.
    pub fn ci95_half_width(&self) -> f64 {
        (self.ci95_high - self.ci95_low) / 2.0
    }
}

/// The 97.5 % quantile of Student's t with `degrees` degrees of freedom (the two-sided 95 %
/// critical value), from statrs.
pub fn t_quantile_975(degrees: usize) -> f64 {
    match StudentsT::new(0.0, 1.0, degrees as f64) {
        Ok(t) => t.inverse_cdf(0.975),
        Err(_) => f64::NAN,
    }
}

/// Statistics of the paired differences `treatment[i] - baseline[i]` (the same seed `i`), and of
/// the relative differences `treatment[i] / baseline[i] - 1`. Pairs with a NaN, and relative
/// pairs with a zero baseline, are left out.
pub fn paired(treatment: &[f64], baseline: &[f64]) -> (SeedStats, SeedStats) {
    let pairs: Vec<(f64, f64)> = treatment
        .iter()
        .zip(baseline)
        .map(|(&t, &b)| (t, b))
        .filter(|(t, b)| !t.is_nan() && !b.is_nan())
        .collect();
    let absolute: Vec<f64> = pairs.iter().map(|(t, b)| t - b).collect();
    let relative: Vec<f64> = pairs
        .iter()
        .filter(|(_, b)| *b != 0.0)
        .map(|(t, b)| t / b - 1.0)
        .collect();
    (SeedStats::of(&absolute), SeedStats::of(&relative))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_tables() {
        // Two-sided 95 % critical values from standard t tables.
        for (df, expected) in [
            (1, 12.7062),
            (2, 4.3027),
            (4, 2.7764),
            (9, 2.2622),
            (29, 2.0452),
            (1000, 1.9623),
        ] {
            assert!(
                (t_quantile_975(df) - expected).abs() < 5e-4,
                "df {df}: {}",
                t_quantile_975(df)
            );
        }
    }

    #[test]
    fn mean_and_interval_of_known_values() {
        // 1..=10: mean 5.5, s = 3.02765, half width = 2.262157 * 3.02765 / sqrt(10) = 2.165851.
        let s = SeedStats::of(&(1..=10).map(f64::from).collect::<Vec<_>>());
        assert_eq!(s.n, 10);
        assert_eq!(s.mean, 5.5);
        assert!((s.std - 3.027_650_354).abs() < 1e-9);
        assert!(
            (s.ci95_half_width() - 2.165_851).abs() < 1e-5,
            "{}",
            s.ci95_half_width()
        );
        assert!((s.ci95_low - (5.5 - 2.165_851)).abs() < 1e-5);
    }

    #[test]
    fn quantiles_over_runs_are_type_8() {
        // 1..=100: type 8 puts the 2.5 % quantile at h = (100 + 1/3) 0.025 + 1/3 = 2.841667.
        let s = SeedStats::of(&(1..=100).rev().map(f64::from).collect::<Vec<_>>());
        assert!((s.q025 - 2.841_667).abs() < 1e-6, "{}", s.q025);
        assert_eq!(s.median, 50.5);
        assert!((s.q975 - 98.158_333).abs() < 1e-6, "{}", s.q975);
        assert_eq!(SeedStats::of(&[7.0]).median, 7.0);
    }

    #[test]
    fn degenerate_samples() {
        let one = SeedStats::of(&[4.0]);
        assert_eq!(one.mean, 4.0);
        assert!(one.std.is_nan() && one.ci95_low.is_nan());
        assert!(SeedStats::of(&[]).mean.is_nan());
        let same = SeedStats::of(&[2.0, 2.0, 2.0]);
        assert_eq!((same.ci95_low, same.ci95_high), (2.0, 2.0));
        assert_eq!(SeedStats::of(&[1.0, f64::NAN, 3.0]).n, 2);
    }

    #[test]
    fn paired_differences_cancel_the_seed_effect() {
        // Seeds vary a lot, the treatment adds exactly 1: the pairs see only the 1.
        let baseline = [10.0, 50.0, 90.0, 30.0];
        let treatment = [11.0, 51.0, 91.0, 31.0];
        let (absolute, relative) = paired(&treatment, &baseline);
        assert_eq!(absolute.mean, 1.0);
        assert_eq!(absolute.std, 0.0);
        assert!((relative.mean - (0.1 + 0.02 + 1.0 / 90.0 + 1.0 / 30.0) / 4.0).abs() < 1e-12);
        // Unpaired intervals would overlap widely.
        assert!(SeedStats::of(&treatment).ci95_low < SeedStats::of(&baseline).ci95_high);
    }
}
