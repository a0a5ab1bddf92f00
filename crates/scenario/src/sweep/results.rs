//! Per-run result files and the results table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use metrics::{MEASURES, MeasureInput, SeedStats, paired};
use serde::{Deserialize, Serialize};

use super::plan::{Plan, Run};
use crate::error::{Result, ScenarioError, invalid};
use crate::replay::ReplayRun;
use crate::run::SiteRun;
use metrics::Summary;

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

/// Every measure of the catalogue ([`metrics::MEASURES`]) of a finished site run.
pub fn measure(run: &Run, r: &SiteRun) -> RunResult {
    let policy_usage = r.policy_usage.as_ref().map(|p| p.measured());
    measured(
        run,
        &MeasureInput {
            summary: &r.summary,
            closed_loop: Some(&r.closed),
            users: r.user_groups.len(),
            policy_usage: policy_usage.as_ref(),
        },
    )
}

/// Every measure of a finished replay whose jobs' summary is `summary`: the closed-loop measures
/// only with feedback (per user: the trace's users that have a job).
pub fn measure_replay(run: &Run, r: &ReplayRun, summary: &Summary) -> RunResult {
    let policy_usage = r.policy_usage.as_ref().map(|p| p.measured());
    let users = match &r.feedback {
        Some(_) => {
            let mut users: Vec<i64> = r.records.iter().map(|j| j.user).collect();
            users.sort_unstable();
            users.dedup();
            users.len()
        }
        None => 0,
    };
    measured(
        run,
        &MeasureInput {
            summary,
            closed_loop: r.feedback.as_ref().map(|f| &f.closed),
            users,
            policy_usage: policy_usage.as_ref(),
        },
    )
}

fn measured(run: &Run, input: &MeasureInput) -> RunResult {
    RunResult {
        run: run.id.clone(),
        labels: run.labels.clone(),
        seed: run.seed,
        metrics: MEASURES
            .iter()
            .map(|m| {
                let v = m.value(input);
                (m.name.to_string(), v.is_finite().then_some(v))
            })
            .collect(),
    }
}

/// The columns of results.csv after the axes' (an axis may not take one of these names).
pub const COLUMNS: [&str; 16] = [
    "metric",
    "unit",
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
];

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
    unit: &'static str,
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
    table_of(plan, &results)
}

/// The results table of [`table`] from results in memory, by (configuration, seed); a run
/// without a result counts as undefined (NaN) in every measure.
pub fn table_of(plan: &Plan, results: &BTreeMap<(usize, u64), RunResult>) -> Result<String> {
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
        for measure in MEASURES {
            let metric = measure.name;
            let mine = values(point, metric);
            rows.push(Row {
                point,
                metric,
                unit: measure.unit.name(),
                stats: SeedStats::of(&mine),
                difference: baseline_point.map(|b| paired(&mine, &values(b, metric))),
            });
        }
    }

    let mut header: Vec<&str> = plan.axes.iter().map(|a| a.name.as_str()).collect();
    header.extend(COLUMNS);
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record(&header).map_err(table_error)?;
    for row in rows {
        let mut record = plan.labels(row.point);
        let s = row.stats;
        record.push(row.metric.to_string());
        record.push(row.unit.to_string());
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

#[cfg(test)]
mod tests {
    use super::*;

    const SWEEP: &str = r#"
        seeds = [1, 2, 3]
        baseline = "easy"
        [[axes]]
        name = "scheduler"
        key = "scheduler"
        values = [{ policy = "easy" }, { policy = "creasy", alpha = 1500 }]
    "#;

    /// A plan whose runs' results are written by hand: `value(point, seed)` for every measure.
    fn plan_with_results(value: impl Fn(usize, u64) -> f64) -> (tempfile::TempDir, Plan) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sweep.toml");
        std::fs::write(&path, SWEEP).unwrap();
        let plan = Plan::load(&path).unwrap();
        std::fs::create_dir_all(dir.path().join("runs")).unwrap();
        for run in &plan.runs {
            let result = RunResult {
                run: run.id.clone(),
                labels: run.labels.clone(),
                seed: run.seed,
                metrics: MEASURES
                    .iter()
                    .map(|m| (m.name.to_string(), Some(value(run.point, run.seed))))
                    .collect(),
            };
            let text = serde_json::to_string(&result).unwrap();
            std::fs::write(result_path(dir.path(), run), text).unwrap();
            assert_eq!(read_result(dir.path(), run), Some(result));
        }
        (dir, plan)
    }

    #[test]
    fn the_table_has_a_row_per_point_and_measure_with_paired_differences() {
        // easy: 10, 20, 30 over the seeds; creasy: 1 more on each seed.
        let (dir, plan) = plan_with_results(|point, seed| 10.0 * seed as f64 + point as f64);
        let csv = table(&plan, dir.path()).unwrap();
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let headers = reader.headers().unwrap().clone();
        let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), 2 * MEASURES.len());
        let row = |scheduler: &str, metric: &str| {
            rows.iter()
                .find(|r| &r[0] == scheduler && &r[column("metric")] == metric)
                .unwrap()
                .clone()
        };
        let easy = row("easy", "utilization");
        assert_eq!(&easy[column("n")], "3");
        assert_eq!(&easy[column("mean")], "20");
        assert_eq!(&easy[column("median")], "20");
        assert_eq!(
            &easy[column("diff_mean")],
            "",
            "the baseline has no difference"
        );
        let creasy = row("creasy-1500", "utilization");
        assert_eq!(&creasy[column("mean")], "21");
        // Paired: the difference is exactly 1 on every seed, so its interval is [1, 1].
        assert_eq!(&creasy[column("diff_mean")], "1");
        assert_eq!(&creasy[column("diff_ci95_low")], "1");
        assert_eq!(&creasy[column("diff_ci95_high")], "1");
    }

    #[test]
    fn a_missing_run_is_an_error_naming_it() {
        let (dir, plan) = plan_with_results(|_, _| 1.0);
        std::fs::remove_file(result_path(dir.path(), &plan.runs[4])).unwrap();
        let err = table(&plan, dir.path()).unwrap_err().to_string();
        assert!(err.contains("1 of 6 runs have no result"), "{err}");
        assert!(err.contains(&plan.runs[4].id), "{err}");
    }
}
