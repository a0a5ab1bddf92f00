//! A fitted model: the distributions a simulated user draws from, with the files they are
//! stored in (the directories of `models/`).

use crate::ModelError;
use crate::continuation::{self, ContinueBin};
use crate::ecdf::Ecdf;

/// Day names for `weekly.csv`, Monday first.
pub const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// User runtime estimates given the runtime: for each runtime class (powers of two of seconds),
/// the empirical distribution of the estimates users gave jobs of that class. Estimates below the
/// runtime occur as in the traces: such jobs are killed at their estimate. Stored as `estimate.csv`.
///
/// (Not to be confused with `users::estimate::EstimateModel`, the parametric estimate models a
/// group can choose instead of this fitted one.)
#[derive(Debug, Clone, PartialEq)]
pub struct EstimatesByRuntime {
    /// (first runtime, last runtime, estimates) per class, ascending, seconds.
    pub classes: Vec<(i64, i64, Ecdf)>,
}

impl EstimatesByRuntime {
    /// The runtime class of `runtime` seconds: [0, 0], [1, 1], [2, 3], [4, 7], ...
    pub fn class_bounds(runtime: i64) -> (i64, i64) {
        if runtime <= 0 {
            return (0, 0);
        }
        let bits = 63 - runtime.leading_zeros();
        let lo = 1i64 << bits;
        (lo, 2 * lo - 1)
    }

    /// The estimate distribution for a job of `runtime` seconds: its class, else the nearest.
    pub fn for_runtime(&self, runtime: i64) -> &Ecdf {
        let (lo, _) = Self::class_bounds(runtime);
        let index = self.classes.partition_point(|(from, _, _)| *from < lo);
        let nearest = if index == self.classes.len() {
            index - 1
        } else if self.classes[index].0 == lo || index == 0 {
            index
        } else {
            // Between two stored classes: take the closer in log scale.
            let below = self.classes[index - 1].1.max(1) as f64;
            let above = self.classes[index].0.max(1) as f64;
            let r = runtime.max(1) as f64;
            if (r / below).ln() <= (above / r).ln() {
                index - 1
            } else {
                index
            }
        };
        &self.classes[nearest].2
    }

    /// The CSV text of `estimate.csv`: `runtime_from_s,runtime_to_s,estimate_s,cumulative`, one
    /// distribution per class.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("runtime_from_s,runtime_to_s,estimate_s,cumulative\n");
        for (lo, hi, e) in &self.classes {
            for (v, c) in e.values().iter().zip(e.cumulative()) {
                out.push_str(&format!("{lo},{hi},{v},{c:.9}\n"));
            }
        }
        out
    }

    /// Parses what [`EstimatesByRuntime::to_csv`] wrote; `name` labels errors.
    pub fn from_csv(name: &str, text: &str) -> Result<EstimatesByRuntime, ModelError> {
        let rows = crate::csvtext::rows(name, text, 4)?;
        let mut classes = Vec::new();
        let mut current: Option<(i64, i64, Vec<i64>, Vec<f64>)> = None;
        for row in rows.iter() {
            let (lo, hi) = (row.int(0)?, row.int(1)?);
            if current.as_ref().is_some_and(|c| (c.0, c.1) != (lo, hi)) {
                if let Some(done) = current.take() {
                    classes.push(finish_class(name, done)?);
                }
            }
            let entry = current.get_or_insert((lo, hi, Vec::new(), Vec::new()));
            entry.2.push(row.int(2)?);
            entry.3.push(row.float(3)?);
        }
        if let Some(done) = current {
            classes.push(finish_class(name, done)?);
        }
        if classes.is_empty() {
            return Err(ModelError::Invalid {
                file: name.into(),
                reason: "no runtime classes".into(),
            });
        }
        Ok(EstimatesByRuntime { classes })
    }
}

fn finish_class(
    name: &str,
    (lo, hi, values, cumulative): (i64, i64, Vec<i64>, Vec<f64>),
) -> Result<(i64, i64, Ecdf), ModelError> {
    Ecdf::from_points(values, cumulative)
        .map(|e| (lo, hi, e))
        .map_err(|reason| ModelError::Invalid {
            file: name.into(),
            reason: format!("runtime class {lo}-{hi} s: {reason}"),
        })
}

/// The models of one trace, or of several combined.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Every think time, negative ones included (Fig. 2), seconds.
    pub think_time: Ecdf,
    /// Short think times in [0, threshold], seconds (Fig. 4a): used when a session continues.
    pub think_short: Ecdf,
    /// Breaks in (threshold, max break], seconds (Fig. 4b): used when a session is aborted.
    pub think_break: Ecdf,
    /// Response time -> continue fraction (Fig. 3).
    pub continuation: Vec<ContinueBin>,
    /// Job sizes, processors (Fig. 5a).
    pub size: Ecdf,
    /// Job runtimes, seconds (Fig. 5b).
    pub runtime: Ecdf,
    /// How many consecutive jobs of a user share a size (Fig. 6a).
    pub size_repetition: Ecdf,
    /// Jobs per batch (Fig. 6b).
    pub batch_width: Ecdf,
    /// Seconds between submissions inside a batch (none if no trace has batches of two or more).
    pub batch_gap: Option<Ecdf>,
    /// Jobs per session.
    pub session_length: Ecdf,
    /// Runtime estimates given the runtime (none if no trace has estimates).
    pub estimate: Option<EstimatesByRuntime>,
    /// Fraction of submissions per local hour (Fig. 8a), when the traces have calendars.
    pub daily: Option<[f64; 24]>,
    /// Fraction of submissions per day of week, Monday first (Fig. 8b).
    pub weekly: Option<[f64; 7]>,
}

/// The files of a model, in the order they are written: (file name, what it holds).
pub const MODEL_FILES: [(&str, &str); 13] = [
    (
        "think_time.csv",
        "every think time in seconds, negative ones included (Fig. 2): `seconds,cumulative`",
    ),
    (
        "think_short.csv",
        "think times in [0, threshold] seconds, drawn when a session continues (Fig. 4a): `seconds,cumulative`",
    ),
    (
        "think_break.csv",
        "breaks in (threshold, max break] seconds, drawn when a session is aborted (Fig. 4b): `seconds,cumulative`",
    ),
    (
        "continue.csv",
        "response time classes of batch-closing jobs and the fraction followed by a short think time (Fig. 3): `response_from_min,response_to_min,mean_response_min,closing_jobs,weight,continued_fraction`",
    ),
    ("size.csv", "job sizes (Fig. 5a): `processors,cumulative`"),
    (
        "runtime.csv",
        "job runtimes (Fig. 5b): `seconds,cumulative`",
    ),
    (
        "size_repetition.csv",
        "runs of consecutive jobs of one user with equal size (Fig. 6a): `jobs,cumulative`",
    ),
    (
        "batch_width.csv",
        "jobs per batch (Fig. 6b): `jobs,cumulative`",
    ),
    (
        "batch_gap.csv",
        "seconds between consecutive submissions inside a batch: `seconds,cumulative`",
    ),
    ("session_length.csv", "jobs per session: `jobs,cumulative`"),
    (
        "estimate.csv",
        "user runtime estimates per runtime class (powers of two): `runtime_from_s,runtime_to_s,estimate_s,cumulative`, one distribution per class",
    ),
    (
        "daily.csv",
        "fraction of submissions per local hour (Fig. 8a): `hour,fraction`",
    ),
    (
        "weekly.csv",
        "fraction of submissions per day of the week (Fig. 8b): `day,fraction`",
    ),
];

impl Model {
    /// The model's files: (name, contents), in [`MODEL_FILES`] order; absent parts are omitted.
    pub fn files(&self) -> Vec<(&'static str, String)> {
        let mut files = vec![
            ("think_time.csv", self.think_time.to_csv("seconds")),
            ("think_short.csv", self.think_short.to_csv("seconds")),
            ("think_break.csv", self.think_break.to_csv("seconds")),
            ("continue.csv", continuation::to_csv(&self.continuation)),
            ("size.csv", self.size.to_csv("processors")),
            ("runtime.csv", self.runtime.to_csv("seconds")),
            ("size_repetition.csv", self.size_repetition.to_csv("jobs")),
            ("batch_width.csv", self.batch_width.to_csv("jobs")),
        ];
        if let Some(gap) = &self.batch_gap {
            files.push(("batch_gap.csv", gap.to_csv("seconds")));
        }
        files.push(("session_length.csv", self.session_length.to_csv("jobs")));
        if let Some(estimate) = &self.estimate {
            files.push(("estimate.csv", estimate.to_csv()));
        }
        if let Some(daily) = &self.daily {
            let mut text = String::from("hour,fraction\n");
            for (hour, f) in daily.iter().enumerate() {
                text.push_str(&format!("{hour},{f:.9}\n"));
            }
            files.push(("daily.csv", text));
        }
        if let Some(weekly) = &self.weekly {
            let mut text = String::from("day,fraction\n");
            for (day, f) in WEEKDAYS.iter().zip(weekly) {
                text.push_str(&format!("{day},{f:.9}\n"));
            }
            files.push(("weekly.csv", text));
        }
        files
    }

    /// Reads a model from its files; `read(name)` gives a file's text or `None` if absent.
    /// `label` (a directory, "embedded") prefixes file names in errors.
    pub fn from_files(
        label: &str,
        read: impl Fn(&str) -> Option<String>,
    ) -> Result<Model, ModelError> {
        let name = |file: &str| format!("{label}/{file}");
        let required =
            |file: &str| read(file).ok_or_else(|| ModelError::Missing { file: name(file) });
        let ecdf = |file: &str| -> Result<Ecdf, ModelError> {
            Ecdf::from_csv(&name(file), &required(file)?)
        };
        let optional = |file: &str| {
            read(file)
                .map(|text| Ecdf::from_csv(&name(file), &text))
                .transpose()
        };
        Ok(Model {
            think_time: ecdf("think_time.csv")?,
            think_short: ecdf("think_short.csv")?,
            think_break: ecdf("think_break.csv")?,
            continuation: continuation::from_csv(
                &name("continue.csv"),
                &required("continue.csv")?,
            )?,
            size: ecdf("size.csv")?,
            runtime: ecdf("runtime.csv")?,
            size_repetition: ecdf("size_repetition.csv")?,
            batch_width: ecdf("batch_width.csv")?,
            batch_gap: optional("batch_gap.csv")?,
            session_length: ecdf("session_length.csv")?,
            estimate: read("estimate.csv")
                .map(|text| EstimatesByRuntime::from_csv(&name("estimate.csv"), &text))
                .transpose()?,
            daily: read("daily.csv")
                .map(|text| fractions::<24>(&name("daily.csv"), &text))
                .transpose()?,
            weekly: read("weekly.csv")
                .map(|text| fractions::<7>(&name("weekly.csv"), &text))
                .transpose()?,
        })
    }
}

fn fractions<const N: usize>(name: &str, text: &str) -> Result<[f64; N], ModelError> {
    let rows = crate::csvtext::rows(name, text, 2)?;
    if rows.len() != N {
        return Err(ModelError::Invalid {
            file: name.into(),
            reason: format!("expected {N} rows, found {}", rows.len()),
        });
    }
    let mut out = [0.0; N];
    for (slot, row) in out.iter_mut().zip(rows.iter()) {
        *slot = row.float(1)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_classes_are_powers_of_two() {
        assert_eq!(EstimatesByRuntime::class_bounds(0), (0, 0));
        assert_eq!(EstimatesByRuntime::class_bounds(1), (1, 1));
        assert_eq!(EstimatesByRuntime::class_bounds(3), (2, 3));
        assert_eq!(EstimatesByRuntime::class_bounds(4), (4, 7));
        assert_eq!(EstimatesByRuntime::class_bounds(3600), (2048, 4095));
    }

    #[test]
    fn missing_classes_fall_back_to_the_nearest() {
        let e = |v| Ecdf::from_values(&[v], 10).unwrap();
        let model = EstimatesByRuntime {
            classes: vec![(4, 7, e(10)), (1024, 2047, e(2000))],
        };
        assert_eq!(model.for_runtime(5).median(), 10);
        assert_eq!(model.for_runtime(0).median(), 10);
        assert_eq!(model.for_runtime(40).median(), 10); // log-closer to 7 than to 1024
        assert_eq!(model.for_runtime(600).median(), 2000);
        assert_eq!(model.for_runtime(1 << 20).median(), 2000);
        let text = model.to_csv();
        assert_eq!(
            EstimatesByRuntime::from_csv("estimate.csv", &text).unwrap(),
            model
        );
    }
}
