//! Per-run result files and the results table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use metrics::{MEASURES, MeasureInput, SeedStats, paired};
use serde::{Deserialize, Serialize};

use super::plan::{Plan, Run};
use crate::error::{Result, ScenarioError, invalid};
use crate::run::SiteRun;

/// What a finished run leaves behind (`runs/<file>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The run's id.
    pub run: String,
    /// The axis labels.
    pub labels: Vec<String>,
    /// The seed.
    pub seed: u64,
    /// Every measure of the catalogue by name; `null` where undefined (no job of a class, say).
    pub metrics: BTreeMap<String, Option<f64>>,
}

/// Every measure of the catalogue ([`metrics::MEASURES`]) of a finished run.
pub fn measure(run: &Run, r: &SiteRun) -> RunResult {
    let input = MeasureInput {
        summary: &r.summary,
        closed_loop: Some(&r.closed),
        users: r.user_groups.len(),
    };
    RunResult {
        run: run.id.clone(),
        labels: run.labels.clone(),
        seed: run.seed,
        metrics: MEASURES
            .iter()
            .map(|m| {
                let v = m.value(&input);
                (m.name.to_string(), v.is_finite().then_some(v))
            })
            .collect(),
    }
}

/// Where a run's result goes.
pub fn result_path(dir: &Path, run: &Run) -> PathBuf {
    dir.join("runs").join(&run.file)
}

/// Reads a run's result if it is there and complete.
pub fn read_result(dir: &Path, run: &Run) -> Option<RunResult> {
    let text = std::fs::read_to_string(result_path(dir, run)).ok()?;
    let result: RunResult = serde_json::from_str(&text).ok()?;
    (result.run == run.id).then_some(result)
}

/// One row of results.csv.
struct Row {
    point: usize,
    metric: &'static str,
    stats: SeedStats,
    difference: Option<(SeedStats, SeedStats)>,
}

/// The results table: for every configuration and measure, the mean and 95 % confidence interval
/// over the seeds and, against the baseline on the same seeds, the paired difference (absolute
/// and relative). Fails if a run has no result.
pub fn table(plan: &Plan, dir: &Path) -> Result<String> {
    let mut results: BTreeMap<(usize, u64), RunResult> = BTreeMap::new();
    let mut missing = Vec::new();
    for run in &plan.runs {
        match read_result(dir, run) {
            Some(r) => {
                results.insert((run.point, run.seed), r);
            }
            None => missing.push(run.id.as_str()),
        }
    }
    if !missing.is_empty() {
        return Err(invalid!(
            "{} of {} runs have no result in {} (first: {}); run the sweep again to complete it",
            missing.len(),
            plan.runs.len(),
            dir.join("runs").display(),
            missing[0]
        ));
    }
    let values = |point: usize, metric: &str| -> Vec<f64> {
        plan.seeds
            .iter()
            .map(|&seed| {
                results
                    .get(&(point, seed))
                    .and_then(|r| r.metrics.get(metric).copied().flatten())
                    .unwrap_or(f64::NAN)
            })
            .collect()
    };
    let mut rows = Vec::new();
    for point in 0..plan.points() {
        let baseline_point = plan.baseline.as_ref().and_then(|(axis, label)| {
            let other = plan.point_with(point, *axis, label)?;
            (other != point).then_some(other)
        });
        for metric in MEASURES.iter().map(|m| m.name) {
            let mine = values(point, metric);
            rows.push(Row {
                point,
                metric,
                stats: SeedStats::of(&mine),
                difference: baseline_point.map(|b| paired(&mine, &values(b, metric))),
            });
        }
    }

    let mut header: Vec<&str> = plan.axes.iter().map(|a| a.name.as_str()).collect();
    header.extend([
        "metric",
        "n",
        "mean",
        "std",
        "ci95_low",
        "ci95_high",
        "diff_mean",
        "diff_ci95_low",
        "diff_ci95_high",
        "rel_diff_mean",
        "rel_diff_ci95_low",
        "rel_diff_ci95_high",
        "q025",
        "median",
        "q975",
    ]);
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record(&header).map_err(table_error)?;
    for row in rows {
        let mut record = plan.labels(row.point);
        let s = row.stats;
        record.push(row.metric.to_string());
        record.push(s.n.to_string());
        record.extend([s.mean, s.std, s.ci95_low, s.ci95_high].map(num));
        match row.difference {
            Some((d, r)) => record.extend(
                [
                    d.mean,
                    d.ci95_low,
                    d.ci95_high,
                    r.mean,
                    r.ci95_low,
                    r.ci95_high,
                ]
                .map(num),
            ),
            None => record.extend(std::iter::repeat_n(String::new(), 6)),
        }
        record.extend([s.q025, s.median, s.q975].map(num));
        csv.write_record(&record).map_err(table_error)?;
    }
    let bytes = csv
        .into_inner()
        .map_err(|e| invalid!("writing the results table: {e}"))?;
    String::from_utf8(bytes).map_err(|e| invalid!("the results table is not UTF-8: {e}"))
}

fn table_error(e: csv::Error) -> ScenarioError {
    invalid!("writing the results table: {e}")
}

/// Shortest exact text of a number; empty for NaN.
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}
