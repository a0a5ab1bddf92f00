//! Building a model ([`usermodel::Model`]) from the samples of one or more traces.

use usermodel::{Ecdf, EstimatesByRuntime, MAX_POINTS, Model};

use crate::Weighting;
use crate::continuation;
use crate::sessions::{Closing, TraceSamples};

/// Points kept per runtime class in the estimate model.
const ESTIMATE_POINTS: usize = 200;

/// The estimate model of weighted `(runtime, estimate, weight)` samples: one distribution per
/// runtime class; `None` without samples.
fn estimates_by_runtime(samples: &[(i64, i64, f64)]) -> Option<EstimatesByRuntime> {
    let mut by_class: std::collections::BTreeMap<(i64, i64), Vec<(i64, f64)>> = Default::default();
    for &(runtime, estimate, w) in samples {
        by_class
            .entry(EstimatesByRuntime::class_bounds(runtime))
            .or_default()
            .push((estimate, w));
    }
    let classes: Vec<(i64, i64, Ecdf)> = by_class
        .into_iter()
        .filter_map(|((lo, hi), s)| Ecdf::from_weighted(s, ESTIMATE_POINTS).map(|e| (lo, hi, e)))
        .collect();
    (!classes.is_empty()).then_some(EstimatesByRuntime { classes })
}

/// Samples of one trace with the weight each of them gets in a model.
pub(crate) struct Weighted<'a> {
    pub samples: &'a TraceSamples,
    /// Weight per sample of each kind = this / number of samples of that kind (traces
    /// weighting), or 1 (jobs weighting).
    pub weighting: Weighting,
}

impl Weighted<'_> {
    fn weight(&self, count: usize) -> f64 {
        match self.weighting {
            Weighting::Traces if count > 0 => 1.0 / count as f64,
            Weighting::Traces => 0.0,
            Weighting::Jobs => 1.0,
        }
    }

    fn values<'s>(
        &'s self,
        pick: impl Fn(&'s TraceSamples) -> &'s [i64],
    ) -> impl Iterator<Item = (i64, f64)> + 's {
        let values = pick(self.samples);
        let w = self.weight(values.len());
        values.iter().map(move |&v| (v, w))
    }
}

/// Builds a model from the samples of one or more traces. `label` names them in errors.
pub(crate) fn build(parts: &[Weighted<'_>], label: &str) -> Result<Model, crate::FitError> {
    let ecdf = |what: &'static str,
                pick: &dyn Fn(&TraceSamples) -> &[i64]|
     -> Result<Ecdf, crate::FitError> {
        Ecdf::from_weighted(parts.iter().flat_map(|p| p.values(pick)), MAX_POINTS).ok_or_else(
            || crate::FitError::EmptyDistribution {
                traces: label.to_string(),
                what,
            },
        )
    };
    let optional = |pick: &dyn Fn(&TraceSamples) -> &[i64]| {
        Ecdf::from_weighted(parts.iter().flat_map(|p| p.values(pick)), MAX_POINTS)
    };
    let continuation = continuation::table(parts.iter().flat_map(|p| {
        let w = p.weight(p.samples.closings.len());
        p.samples.closings.iter().map(
            move |&Closing {
                      response,
                      continued,
                  }| (response, continued, w),
        )
    }));
    if continuation.is_empty() {
        return Err(crate::FitError::EmptyDistribution {
            traces: label.to_string(),
            what: "batch-closing jobs followed by another job of their user",
        });
    }
    let estimates: Vec<(i64, i64, f64)> = parts
        .iter()
        .flat_map(|p| {
            let w = p.weight(p.samples.estimates.len());
            p.samples.estimates.iter().map(move |&(r, e)| (r, e, w))
        })
        .collect();
    let (daily, weekly) = profiles(parts);
    Ok(Model {
        think_time: ecdf("think times", &|s| &s.think_all)?,
        think_short: ecdf("think times within the session threshold", &|s| {
            &s.think_short
        })?,
        think_break: ecdf(
            "breaks between the session threshold and the longest break",
            &|s| &s.breaks,
        )?,
        continuation,
        size: ecdf("job sizes", &|s| &s.sizes)?,
        runtime: ecdf("job runtimes", &|s| &s.runtimes)?,
        size_repetition: ecdf("size repetitions", &|s| &s.repetitions)?,
        batch_width: ecdf("batch widths", &|s| &s.batch_widths)?,
        batch_gap: optional(&|s| &s.batch_gaps),
        session_length: ecdf("session lengths", &|s| &s.session_lengths)?,
        estimate: estimates_by_runtime(&estimates),
        daily,
        weekly,
    })
}

/// The least-squares fit of the continue probability through a model's continue table (paper
/// 000, eq. 1); `None` for an empty table.
pub fn continue_fit(model: &Model) -> Option<usermodel::ContinueFit> {
    continuation::fit(&model.continuation)
}

/// Daily and weekly submission fractions: per trace, then averaged (traces weighting) or pooled
/// (jobs weighting) over the traces that have a calendar.
fn profiles(parts: &[Weighted<'_>]) -> (Option<[f64; 24]>, Option<[f64; 7]>) {
    let located: Vec<&Weighted<'_>> = parts.iter().filter(|p| p.samples.located > 0).collect();
    if located.is_empty() {
        return (None, None);
    }
    let mut daily = [0.0; 24];
    let mut weekly = [0.0; 7];
    let mut total = 0.0;
    for p in located {
        let w = match p.weighting {
            Weighting::Traces => 1.0 / p.samples.located as f64,
            Weighting::Jobs => 1.0,
        };
        for (d, &n) in daily.iter_mut().zip(&p.samples.hourly) {
            *d += w * n as f64;
        }
        for (d, &n) in weekly.iter_mut().zip(&p.samples.weekly) {
            *d += w * n as f64;
        }
        total += w * p.samples.located as f64;
    }
    daily.iter_mut().for_each(|d| *d /= total);
    weekly.iter_mut().for_each(|d| *d /= total);
    (Some(daily), Some(weekly))
}
