//! Empirical distributions of whole-number values (seconds, processors, counts).

use crate::ModelError;

/// Probability resolution of a stored distribution: a value is kept where the cumulative
/// probability crosses each 1/2000 step, so the stored distribution is within 1/2000 of the data
/// (Kolmogorov-Smirnov distance) and every value holding more than 1/2000 of the mass is exact.
pub const MAX_POINTS: usize = 2000;

/// Value resolution of a stored distribution: a value is also kept when it lies more than this
/// fraction above (or below) the last kept value, so every dropped value is within 1 % of the
/// value it is sampled as. Without this, a heavy tail would collapse onto its largest value (one
/// batch of 2502 jobs drawn 1 in 2000 times instead of 1 in 200,000) and means would be wrong.
pub const VALUE_RESOLUTION: f64 = 0.01;

/// An empirical cumulative distribution: ascending distinct values, each with the probability
/// of a sample being at most that value. The last cumulative probability is 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Ecdf {
    values: Vec<i64>,
    cumulative: Vec<f64>,
}

/// Whether `a` and `b` differ by more than [`VALUE_RESOLUTION`] of the larger magnitude.
fn far_apart(a: i64, b: i64) -> bool {
    let scale = a.unsigned_abs().max(b.unsigned_abs()) as f64;
    a.abs_diff(b) as f64 > VALUE_RESOLUTION * scale
}

impl Ecdf {
    /// The distribution of weighted samples, reduced to the values where the cumulative
    /// probability crosses a 1/`max_points` step or the value moved by more than
    /// [`VALUE_RESOLUTION`] since the last kept value. `None` when there are no samples (or no
    /// positive weight).
    pub fn from_weighted(
        samples: impl IntoIterator<Item = (i64, f64)>,
        max_points: usize,
    ) -> Option<Ecdf> {
        let mut samples: Vec<(i64, f64)> = samples.into_iter().filter(|&(_, w)| w > 0.0).collect();
        if samples.is_empty() {
            return None;
        }
        samples.sort_by_key(|&(v, _)| v);
        // Merge equal values (summing in sorted order keeps the result deterministic).
        let mut merged: Vec<(i64, f64)> = Vec::new();
        for (value, weight) in samples {
            match merged.last_mut() {
                Some(last) if last.0 == value => last.1 += weight,
                _ => merged.push((value, weight)),
            }
        }
        let total: f64 = merged.iter().map(|&(_, w)| w).sum();
        let steps = max_points.max(1) as f64;
        let mut values = Vec::new();
        let mut cumulative = Vec::new();
        let mut running = 0.0;
        let mut last_step = 0.0;
        let mut last_value: Option<i64> = None;
        for (i, &(value, weight)) in merged.iter().enumerate() {
            running += weight;
            let c = running / total;
            let step = (c * steps).floor();
            // Keep this value if the next one is too far from the last kept value (or, before the
            // first keep, from the smallest value): dropped values are then sampled as a kept value
            // at most 1 % above them.
            let reference = last_value.unwrap_or(merged[0].0);
            let moves_on = merged
                .get(i + 1)
                .is_none_or(|&(next, _)| far_apart(reference, next));
            if i + 1 == merged.len() {
                values.push(value);
                cumulative.push(1.0);
            } else if step > last_step || moves_on {
                values.push(value);
                cumulative.push(c);
                last_step = last_step.max(step);
                last_value = Some(value);
            }
        }
        Some(Ecdf { values, cumulative })
    }

    /// The distribution of equally weighted samples.
    pub fn from_values(samples: &[i64], max_points: usize) -> Option<Ecdf> {
        Ecdf::from_weighted(samples.iter().map(|&v| (v, 1.0)), max_points)
    }

    /// Builds a distribution from stored points, checking that values ascend strictly and that
    /// cumulative probabilities are non-decreasing in (0, 1] and end at 1.
    pub fn from_points(values: Vec<i64>, cumulative: Vec<f64>) -> Result<Ecdf, String> {
        if values.is_empty() || values.len() != cumulative.len() {
            return Err("a distribution needs at least one (value, cumulative) point".into());
        }
        if let Some(w) = values.windows(2).find(|w| w[0] >= w[1]) {
            return Err(format!(
                "values must ascend strictly ({} then {})",
                w[0], w[1]
            ));
        }
        if cumulative
            .iter()
            .any(|c| !(c.is_finite() && *c > 0.0 && *c <= 1.0 + 1e-9))
        {
            return Err("cumulative probabilities must lie in (0, 1]".into());
        }
        if let Some(w) = cumulative.windows(2).find(|w| w[0] > w[1]) {
            return Err(format!(
                "cumulative probabilities must not decrease ({} then {})",
                w[0], w[1]
            ));
        }
        let last = cumulative[cumulative.len() - 1];
        if (last - 1.0).abs() > 1e-6 {
            return Err(format!(
                "the last cumulative probability must be 1, not {last}"
            ));
        }
        Ok(Ecdf { values, cumulative })
    }

    /// The stored values, ascending.
    pub fn values(&self) -> &[i64] {
        &self.values
    }

    /// The cumulative probability at each stored value.
    pub fn cumulative(&self) -> &[f64] {
        &self.cumulative
    }

    /// The smallest value whose cumulative probability reaches `p` (inverse CDF; `p` in [0, 1]).
    /// With `p` uniform on [0, 1) this samples the distribution.
    pub fn quantile(&self, p: f64) -> i64 {
        let index = self.cumulative.partition_point(|&c| c < p);
        self.values[index.min(self.values.len() - 1)]
    }

    /// The probability of a sample being at most `value`.
    pub fn cdf(&self, value: i64) -> f64 {
        let index = self.values.partition_point(|&v| v <= value);
        if index == 0 {
            0.0
        } else {
            self.cumulative[index - 1]
        }
    }

    /// The median (the 0.5 quantile).
    pub fn median(&self) -> i64 {
        self.quantile(0.5)
    }

    /// The mean.
    pub fn mean(&self) -> f64 {
        let mut previous = 0.0;
        let mut mean = 0.0;
        for (&v, &c) in self.values.iter().zip(&self.cumulative) {
            mean += v as f64 * (c - previous);
            previous = c;
        }
        mean
    }

    /// The largest distance between this distribution and `other` (Kolmogorov-Smirnov).
    pub fn ks_distance(&self, other: &Ecdf) -> f64 {
        self.values
            .iter()
            .chain(other.values.iter())
            .map(|&v| (self.cdf(v) - other.cdf(v)).abs())
            .fold(0.0, f64::max)
    }

    /// CSV text: the header `value_column,cumulative`, then one row per point.
    pub fn to_csv(&self, value_column: &str) -> String {
        let mut out = format!("{value_column},cumulative\n");
        for (v, c) in self.values.iter().zip(&self.cumulative) {
            out.push_str(&format!("{v},{c:.9}\n"));
        }
        out
    }

    /// Parses what [`Ecdf::to_csv`] wrote; `name` labels errors.
    pub fn from_csv(name: &str, text: &str) -> Result<Ecdf, ModelError> {
        let rows = crate::csvtext::rows(name, text, 2)?;
        let mut values = Vec::with_capacity(rows.len());
        let mut cumulative = Vec::with_capacity(rows.len());
        for row in rows.iter() {
            values.push(row.int(0)?);
            cumulative.push(row.float(1)?);
        }
        Ecdf::from_points(values, cumulative).map_err(|reason| ModelError::Invalid {
            file: name.to_string(),
            reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cumulative_probabilities_of_known_samples() {
        let e = Ecdf::from_values(&[3, 1, 2, 2], MAX_POINTS).unwrap();
        assert_eq!(e.values(), [1, 2, 3]);
        assert_eq!(e.cumulative(), [0.25, 0.75, 1.0]);
        assert_eq!(e.quantile(0.0), 1);
        assert_eq!(e.quantile(0.25), 1);
        assert_eq!(e.quantile(0.26), 2);
        assert_eq!(e.quantile(1.0), 3);
        assert_eq!(e.cdf(0), 0.0);
        assert_eq!(e.cdf(2), 0.75);
        assert_eq!(e.median(), 2);
        assert_eq!(e.mean(), 2.0);
    }

    #[test]
    fn weights_mix_distributions() {
        // Two traces weighted equally: {0} with 1 sample and {10} with 3 samples.
        let samples = [(0, 1.0), (10, 1.0 / 3.0), (10, 1.0 / 3.0), (10, 1.0 / 3.0)];
        let e = Ecdf::from_weighted(samples, MAX_POINTS).unwrap();
        assert_eq!(e.values(), [0, 10]);
        assert!((e.cumulative()[0] - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_heavy_tail_keeps_its_values_and_its_mean() {
        // 100,000 batches of 1 job, 10 of 100 jobs, 1 of 10,000 jobs.
        let mut samples = vec![1; 100_000];
        samples.extend([100; 10]);
        samples.push(10_000);
        let e = Ecdf::from_values(&samples, MAX_POINTS).unwrap();
        assert_eq!(e.values(), [1, 100, 10_000]);
        let exact = samples.iter().sum::<i64>() as f64 / samples.len() as f64;
        assert!((e.mean() - exact).abs() < 1e-9, "{} vs {exact}", e.mean());
        // Dense values are kept within 1 %.
        let dense: Vec<i64> = (1..=100_000).collect();
        let e = Ecdf::from_values(&dense, 100).unwrap();
        assert!(e.values().len() < 1400, "{}", e.values().len());
        for (i, v) in e.values().iter().enumerate().skip(1) {
            let previous = e.values()[i - 1];
            assert!(*v - previous <= 1 + v / 100, "{previous} -> {v}");
        }
        assert!((e.mean() - 50_000.5).abs() / 50_000.5 < 0.01);
    }

    #[test]
    fn reduction_stays_within_one_step() {
        let samples: Vec<i64> = (0..100_000).map(|i| (i * 7919) % 50_000).collect();
        let full = Ecdf::from_values(&samples, usize::MAX).unwrap();
        let reduced = Ecdf::from_values(&samples, 100).unwrap();
        // 100 probability steps plus 1 %-spaced values over 0..50,000 (about 1,100).
        assert!(
            reduced.values().len() <= 101 + 1100,
            "{}",
            reduced.values().len()
        );
        assert!(full.ks_distance(&reduced) <= 0.01 + 1e-12);
        assert_eq!(reduced.cumulative().last(), Some(&1.0));
    }

    #[test]
    fn csv_round_trip_and_validation() {
        let e = Ecdf::from_values(&[5, 1, 5, 9], MAX_POINTS).unwrap();
        let text = e.to_csv("seconds");
        assert_eq!(
            text,
            "seconds,cumulative\n1,0.250000000\n5,0.750000000\n9,1.000000000\n"
        );
        assert_eq!(Ecdf::from_csv("x.csv", &text).unwrap(), e);
        let bad = "seconds,cumulative\n5,0.5\n1,1.0\n";
        let err = Ecdf::from_csv("x.csv", bad).unwrap_err().to_string();
        assert!(err.contains("x.csv") && err.contains("ascend"), "{err}");
        assert!(Ecdf::from_csv("x.csv", "seconds,cumulative\n1,0.5\n").is_err());
        assert!(Ecdf::from_values(&[], 10).is_none());
    }
}
