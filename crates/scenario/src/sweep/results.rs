//! Per-run result files and the results table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use metrics::{MEASURES, MeasureInput, SeedStats, paired};
use serde::{Deserialize, Serialize};

use super::plan::{Plan, Run};
use crate::error::{Result, ScenarioError, invalid};
use crate::replay::ReplayRun;
use crate::run::SiteRun;
use crate::tables::TableReader;
use metrics::Summary;

/// What a finished run leaves behind (`runs/<file>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The run's id.
    pub run: String,
    /// The axis labels.
    pub labels: Vec<String>,
    /// Each axis's value by the axis's name (absent from run files written before it was).
    #[serde(default)]
    pub axes: BTreeMap<String, String>,
    /// The seed.
    pub seed: u64,
    /// Every measure of the catalogue by name; `null` where undefined (no job of a class, say).
    pub metrics: BTreeMap<String, Option<f64>>,
}

/// Every measure of the catalogue ([`metrics::MEASURES`]) of a finished site run.
pub fn measure(run: &Run, r: &SiteRun) -> RunResult {
    let policy_usage = r.policy_usage.as_ref().map(|p| p.measured());
    let slurm = r.slurm.as_ref().map(|s| s.measured());
    measured(
        run,
        &MeasureInput {
            summary: &r.summary,
            closed_loop: Some(&r.closed),
            users: r.user_groups.len(),
            policy_usage: policy_usage.as_ref(),
            slurm: slurm.as_ref(),
        },
    )
}

/// Every measure of a finished replay whose jobs' summary is `summary`: the closed-loop measures
/// only with feedback (per user: the trace's users that have a job).
pub fn measure_replay(run: &Run, r: &ReplayRun, summary: &Summary) -> RunResult {
    let policy_usage = r.policy_usage.as_ref().map(|p| p.measured());
    let slurm = r.slurm.as_ref().map(|s| s.measured());
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
            slurm: slurm.as_ref(),
        },
    )
}

fn measured(run: &Run, input: &MeasureInput) -> RunResult {
    RunResult {
        run: run.id.clone(),
        labels: run.labels.clone(),
        axes: run
            .axes
            .iter()
            .cloned()
            .zip(run.labels.iter().cloned())
            .collect(),
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

/// The names of results.csv's columns after the axes', shared by the writer ([`table`]) and the
/// reader ([`read_results`]).
pub mod column {
    /// The measure's name (the catalogue's, [`metrics::MEASURES`]); the axes come before it.
    pub const METRIC: &str = "metric";
    /// The measure's unit.
    pub const UNIT: &str = "unit";
    /// The number of seeds.
    pub const N: &str = "n";
    /// The mean over the seeds.
    pub const MEAN: &str = "mean";
    /// The sample standard deviation over the seeds.
    pub const STD: &str = "std";
    /// The 95 % confidence interval of the mean, low end.
    pub const CI95_LOW: &str = "ci95_low";
    /// The 95 % confidence interval of the mean, high end.
    pub const CI95_HIGH: &str = "ci95_high";
    /// The mean paired difference against the baseline.
    pub const DIFF_MEAN: &str = "diff_mean";
    /// The paired difference's 95 % interval, low end.
    pub const DIFF_CI95_LOW: &str = "diff_ci95_low";
    /// The paired difference's 95 % interval, high end.
    pub const DIFF_CI95_HIGH: &str = "diff_ci95_high";
    /// The mean relative paired difference against the baseline.
    pub const REL_DIFF_MEAN: &str = "rel_diff_mean";
    /// The relative difference's 95 % interval, low end.
    pub const REL_DIFF_CI95_LOW: &str = "rel_diff_ci95_low";
    /// The relative difference's 95 % interval, high end.
    pub const REL_DIFF_CI95_HIGH: &str = "rel_diff_ci95_high";
    /// The 2.5 % quantile over the seeds.
    pub const Q025: &str = "q025";
    /// The median over the seeds.
    pub const MEDIAN: &str = "median";
    /// The 97.5 % quantile over the seeds.
    pub const Q975: &str = "q975";
}

/// The columns of results.csv after the axes' (an axis may not take one of these names).
pub const COLUMNS: [&str; 16] = [
    column::METRIC,
    column::UNIT,
    column::N,
    column::MEAN,
    column::STD,
    column::CI95_LOW,
    column::CI95_HIGH,
    column::DIFF_MEAN,
    column::DIFF_CI95_LOW,
    column::DIFF_CI95_HIGH,
    column::REL_DIFF_MEAN,
    column::REL_DIFF_CI95_LOW,
    column::REL_DIFF_CI95_HIGH,
    column::Q025,
    column::MEDIAN,
    column::Q975,
];

/// The columns of [`COLUMNS`] that tables written by earlier versions lack (the unit and the
/// quantiles came later); [`read_results`] reads such tables with these fields `None`.
const LATER_COLUMNS: [&str; 4] = [column::UNIT, column::Q025, column::MEDIAN, column::Q975];

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

/// A sweep's results.csv read back ([`read_results`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ResultsTable {
    /// Where it was read from (its path), for messages.
    pub origin: String,
    /// The axes' names: the columns before [`column::METRIC`], in order.
    pub axes: Vec<String>,
    /// The rows, in the table's order.
    pub rows: Vec<ResultRow>,
}

/// One row of results.csv ([`table`]): a configuration, one measure and its statistics over the
/// seeds. An empty field (undefined, or no baseline to differ from) reads as `None`. Each field
/// is named after its column ([`COLUMNS`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ResultRow {
    /// The configuration's label on each axis, in the order of [`ResultsTable::axes`].
    #[serde(skip)]
    pub labels: Vec<String>,
    /// The measure's name.
    pub metric: String,
    /// The measure's unit (`None` in tables written before the units).
    pub unit: Option<String>,
    /// The number of seeds.
    pub n: usize,
    /// The mean over the seeds.
    pub mean: Option<f64>,
    /// The sample standard deviation.
    pub std: Option<f64>,
    /// The mean's 95 % confidence interval, low end.
    pub ci95_low: Option<f64>,
    /// The mean's 95 % confidence interval, high end.
    pub ci95_high: Option<f64>,
    /// The mean paired difference against the baseline.
    pub diff_mean: Option<f64>,
    /// Its 95 % interval, low end.
    pub diff_ci95_low: Option<f64>,
    /// Its 95 % interval, high end.
    pub diff_ci95_high: Option<f64>,
    /// The mean relative paired difference against the baseline.
    pub rel_diff_mean: Option<f64>,
    /// Its 95 % interval, low end.
    pub rel_diff_ci95_low: Option<f64>,
    /// Its 95 % interval, high end.
    pub rel_diff_ci95_high: Option<f64>,
    /// The 2.5 % quantile over the seeds (`None` also in tables written before the quantiles).
    pub q025: Option<f64>,
    /// The median over the seeds.
    pub median: Option<f64>,
    /// The 97.5 % quantile over the seeds.
    pub q975: Option<f64>,
}

/// Reads a results table written by [`table`]: the axes, then [`COLUMNS`] (tables written by
/// earlier versions lack the unit and the quantiles, which then read as `None`).
pub fn read_results(path: &Path) -> Result<ResultsTable> {
    let what = format!("cannot read the results table {}", path.display());
    results_from(TableReader::open(path, &what)?)
}

/// [`read_results`] from `input`; `origin` names it in errors.
pub fn results_from_reader(origin: &str, input: impl std::io::Read) -> Result<ResultsTable> {
    results_from(TableReader::new(origin, input)?)
}

fn results_from<R: std::io::Read>(mut table: TableReader<R>) -> Result<ResultsTable> {
    let header = table.header().clone();
    let Some(first) = header.iter().position(|h| h == column::METRIC) else {
        return Err(table.error(
            1,
            None,
            format!(
                "no column {:?}; is this a results.csv of `sitesim sweep`?",
                column::METRIC
            ),
        ));
    };
    let required: Vec<&str> = COLUMNS
        .into_iter()
        .filter(|c| !LATER_COLUMNS.contains(c))
        .collect();
    table.require(&required)?;
    let mut rows = Vec::new();
    table.rows(first, |mut row: ResultRow, _, record, _| {
        row.labels = record.iter().take(first).map(String::from).collect();
        rows.push(row);
        Ok(())
    })?;
    Ok(ResultsTable {
        origin: table.file().to_string(),
        axes: header.iter().take(first).map(String::from).collect(),
        rows,
    })
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
                axes: BTreeMap::new(),
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

    /// A numeric column of a read row, by its name.
    fn statistic(row: &ResultRow, name: &str) -> Option<f64> {
        match name {
            column::MEAN => row.mean,
            column::STD => row.std,
            column::CI95_LOW => row.ci95_low,
            column::CI95_HIGH => row.ci95_high,
            column::DIFF_MEAN => row.diff_mean,
            column::DIFF_CI95_LOW => row.diff_ci95_low,
            column::DIFF_CI95_HIGH => row.diff_ci95_high,
            column::REL_DIFF_MEAN => row.rel_diff_mean,
            column::REL_DIFF_CI95_LOW => row.rel_diff_ci95_low,
            column::REL_DIFF_CI95_HIGH => row.rel_diff_ci95_high,
            column::Q025 => row.q025,
            column::MEDIAN => row.median,
            column::Q975 => row.q975,
            other => panic!("{other} is not a numeric column"),
        }
    }

    #[test]
    fn the_written_table_reads_back_column_by_column() {
        // Different values per seed, so every statistic is defined and differs.
        let (dir, plan) = plan_with_results(|point, seed| (seed * seed) as f64 + point as f64);
        let csv = table(&plan, dir.path()).unwrap();
        let read = results_from_reader("results.csv", csv.as_bytes()).unwrap();
        assert_eq!(read.origin, "results.csv");
        assert_eq!(read.axes, vec!["scheduler".to_string()]);
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let headers = reader.headers().unwrap().clone();
        let raw: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        assert_eq!(read.rows.len(), raw.len());
        let mut defined_differences = 0;
        for (row, record) in read.rows.iter().zip(&raw) {
            let field = |name: &str| &record[headers.iter().position(|h| h == name).unwrap()];
            assert_eq!(row.labels, vec![record[0].to_string()]);
            assert_eq!(row.metric, field(column::METRIC));
            assert_eq!(row.unit.as_deref(), Some(field(column::UNIT)));
            assert_eq!(row.n.to_string(), field(column::N));
            for name in &COLUMNS[3..] {
                let text = field(name);
                let expected = (!text.is_empty()).then(|| text.parse::<f64>().unwrap());
                assert_eq!(statistic(row, name), expected, "{} {name}", row.metric);
            }
            defined_differences += usize::from(row.rel_diff_mean.is_some());
        }
        assert!(defined_differences > 0, "no paired difference was read");
    }

    #[test]
    fn tables_written_before_units_and_quantiles_still_read() {
        let (dir, plan) = plan_with_results(|_, seed| seed as f64);
        let csv = table(&plan, dir.path()).unwrap();
        // what sweeps wrote before: no unit after the metric, no quantiles at the end
        let old: String = csv
            .lines()
            .map(|line| {
                let mut fields: Vec<&str> = line.split(',').collect();
                fields.truncate(fields.len() - 3);
                fields.remove(2);
                format!("{}\n", fields.join(","))
            })
            .collect();
        assert!(old.starts_with("scheduler,metric,n,mean,"), "{old}");
        let read = results_from_reader("old.csv", old.as_bytes()).unwrap();
        assert!(
            read.rows
                .iter()
                .all(|r| r.median.is_none() && r.unit.is_none())
        );
        assert!(read.rows.iter().all(|r| r.mean.is_some()));
    }

    #[test]
    fn the_committed_paper_table_reads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/paper/results.csv");
        let read = read_results(&path).unwrap();
        assert_eq!(read.axes, ["scheduler", "users", "weeks"]);
        assert!(read.rows.iter().any(|r| r.rel_diff_mean.is_some()));
    }

    #[test]
    fn a_bad_results_table_names_file_line_and_column() {
        let (dir, plan) = plan_with_results(|_, seed| seed as f64);
        let csv = table(&plan, dir.path()).unwrap();
        let mut lines: Vec<String> = csv.lines().map(String::from).collect();
        // line 3 of the file: the mean of the second row
        let mut fields: Vec<&str> = lines[2].split(',').collect();
        fields[4] = "many";
        lines[2] = fields.join(",");
        let broken = lines.join("\n");
        let err = results_from_reader("sweep/results.csv", broken.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("sweep/results.csv: line 3, column \"mean\": \"many\": "),
            "{err}"
        );
        let renamed = csv.replacen("ci95_low", "low", 1);
        let err = results_from_reader("r.csv", renamed.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("r.csv: line 1: no column \"ci95_low\""),
            "{err}"
        );
        let err = results_from_reader("jobs.csv", "job_id,user\n1,2\n".as_bytes())
            .unwrap_err()
            .to_string();
        assert!(err.contains("no column \"metric\""), "{err}");
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
