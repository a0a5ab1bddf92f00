//! What a run of a sweep measured, and the tables made of every run's: results.csv (per
//! configuration and measure: mean, interval, quantiles, paired differences against the
//! baseline) and runs.csv (per run and measure). Both are written a configuration or a block of
//! runs at a time, so a sweep of a million runs is tabulated in bounded memory.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use config::{Result, ScenarioError, invalid};
use metrics::{MEASURES, MeasureInput, SeedStats, paired};
use scenario::replay::ReplayRun;
use scenario::run::SiteRun;
use scenario::tables::COLUMNS;
use serde::Deserialize;

use super::plan::{Plan, Run};
use metrics::Summary;

/// What a finished run measured: every measure of the catalogue ([`metrics::MEASURES`]) in
/// catalogue order, NaN where undefined (no job of a class, say; an infinite value is undefined
/// too). 127 numbers, about 1 KB: a million results fit in a file of about 2 GB.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The run's index in sweep order ([`Run::index`]).
    pub index: usize,
    /// One value per measure of [`metrics::MEASURES`], in its order; NaN where undefined.
    pub values: Vec<f64>,
}

impl RunResult {
    /// The value of the measure named `name`; `None` where undefined or not a measure.
    pub fn get(&self, name: &str) -> Option<f64> {
        let k = MEASURES.iter().position(|m| m.name == name)?;
        self.values.get(k).copied().filter(|v| !v.is_nan())
    }
}

/// Every measure of the catalogue ([`metrics::MEASURES`]) of a finished site run.
pub fn measure(run: &Run, r: &SiteRun) -> RunResult {
    let policy_usage = r.policy_usage.as_ref().map(|p| p.measured());
    let slurm = r.slurm.as_ref().map(|s| s.measured());
    let power = r.measured_power();
    measured(
        run,
        &MeasureInput {
            summary: &r.summary,
            closed_loop: Some(&r.closed),
            users: r.user_groups.len(),
            policy_usage: policy_usage.as_ref(),
            slurm: slurm.as_ref(),
            power: power.as_ref(),
        },
    )
}

/// Every measure of a finished replay whose jobs' summary is `summary`: the closed-loop measures
/// only with feedback (per user: the trace's users that have a job).
pub fn measure_replay(run: &Run, r: &ReplayRun, summary: &Summary) -> RunResult {
    let policy_usage = r.policy_usage.as_ref().map(|p| p.measured());
    let slurm = r.slurm.as_ref().map(|s| s.measured());
    let users = r.feedback_users;
    let power = r.measured_power();
    measured(
        run,
        &MeasureInput {
            summary,
            closed_loop: r.feedback.as_ref().map(|f| &f.closed),
            users,
            policy_usage: policy_usage.as_ref(),
            slurm: slurm.as_ref(),
            power: power.as_ref(),
        },
    )
}

fn measured(run: &Run, input: &MeasureInput) -> RunResult {
    RunResult {
        index: run.index,
        values: MEASURES
            .iter()
            .map(|m| {
                let v = m.value(input);
                if v.is_finite() { v } else { f64::NAN }
            })
            .collect(),
    }
}

/// A result file of the earlier layout, one JSON file per run (`runs/<run>.json`): read so that
/// a results directory written by an earlier version is completed and tabulated, never written.
#[derive(Deserialize)]
struct OneRunFile {
    /// The run's id.
    run: String,
    /// Every measure by name; `null` where undefined.
    metrics: BTreeMap<String, Option<f64>>,
}

/// Reads `run`'s result from a file of the earlier one-file-per-run layout, if it is there and
/// complete (measures it lacks are undefined).
pub(crate) fn read_one_run_file(dir: &Path, run: &Run) -> Option<RunResult> {
    let text = std::fs::read_to_string(dir.join("runs").join(&run.file)).ok()?;
    let file: OneRunFile = serde_json::from_str(&text).ok()?;
    (file.run == run.id).then(|| RunResult {
        index: run.index,
        values: MEASURES
            .iter()
            .map(|m| {
                file.metrics
                    .get(m.name)
                    .copied()
                    .flatten()
                    .unwrap_or(f64::NAN)
            })
            .collect(),
    })
}

/// Every run's values, for the tables: read a block of runs at a time, in sweep order.
pub trait ResultRows {
    /// Reads the values of runs `first..first + count` into `into` (cleared first): `count`
    /// rows of [`MEASURES`]`.len()` values, NaN where undefined.
    fn read(&mut self, first: usize, count: usize, into: &mut Vec<f64>) -> Result<()>;
}

/// Every run's values in memory, run-major (a store small enough to hold them).
#[derive(Debug, Clone, Default)]
pub struct RowsInMemory {
    /// `values[k * MEASURES.len() + m]`: run `k`'s measure `m`.
    pub values: Vec<f64>,
}

impl ResultRows for RowsInMemory {
    fn read(&mut self, first: usize, count: usize, into: &mut Vec<f64>) -> Result<()> {
        let width = MEASURES.len();
        let rows = self
            .values
            .get(first * width..(first + count) * width)
            .ok_or_else(|| invalid!("runs {first}..{} have no values", first + count))?;
        into.clear();
        into.extend_from_slice(rows);
        Ok(())
    }
}

/// Runs read at a time when the tables are made (about 4 MB of values).
const BLOCK: usize = 4096;

/// Values held at most, per side (a configuration's runs and its baseline's), while a
/// configuration's rows of results.csv are made: 8 M numbers, 64 MB. A configuration with
/// more seeds than fit is tabulated a few measures at a time.
const VALUES_AT_ONCE: usize = 8 << 20;

/// Measures `columns` of runs `first..first + count`, one vector per measure.
fn columns_of(
    rows: &mut dyn ResultRows,
    first: usize,
    count: usize,
    columns: std::ops::Range<usize>,
) -> Result<Vec<Vec<f64>>> {
    let width = MEASURES.len();
    let mut out: Vec<Vec<f64>> = columns.clone().map(|_| Vec::with_capacity(count)).collect();
    let mut block = Vec::new();
    let mut done = 0;
    while done < count {
        let n = BLOCK.min(count - done);
        rows.read(first + done, n, &mut block)?;
        for row in block.chunks_exact(width) {
            for (column, values) in columns.clone().zip(out.iter_mut()) {
                values.push(row[column]);
            }
        }
        done += n;
    }
    Ok(out)
}

/// One row of results.csv.
struct Row {
    metric: &'static str,
    unit: &'static str,
    stats: SeedStats,
    difference: Option<(SeedStats, SeedStats)>,
}

/// Writes the results table to `out`: for every configuration and measure, the mean and 95 %
/// confidence interval over the seeds, the quantiles and, against the baseline on the same
/// seeds, the paired difference (absolute and relative). `rows` must hold every run. The
/// measures are those the sweep tabulates ([`Plan::tabulates`]: a power model's only when some
/// run has one).
pub fn write_table(plan: &Plan, rows: &mut dyn ResultRows, out: &mut dyn Write) -> Result<()> {
    let seeds = plan.seeds.len();
    let width = MEASURES.len();
    let tabulated: Vec<bool> = MEASURES.iter().map(|m| plan.tabulates(m)).collect();
    let at_once = (VALUES_AT_ONCE / seeds.max(1)).clamp(1, width);
    let mut header: Vec<&str> = plan.axes.iter().map(|a| a.name.as_str()).collect();
    header.extend(COLUMNS);
    let mut csv = csv::Writer::from_writer(out);
    csv.write_record(&header).map_err(table_error)?;
    for point in 0..plan.points() {
        let baseline_point = plan.baseline.as_ref().and_then(|(axis, label)| {
            let other = plan.point_with(point, *axis, label)?;
            (other != point).then_some(other)
        });
        let mut table_rows = Vec::with_capacity(width);
        for first in (0..width).step_by(at_once) {
            let columns = first..(first + at_once).min(width);
            let mine = columns_of(rows, point * seeds, seeds, columns.clone())?;
            let theirs = match baseline_point {
                Some(b) => Some(columns_of(rows, b * seeds, seeds, columns.clone())?),
                None => None,
            };
            for (j, column) in columns.enumerate() {
                let measure = &MEASURES[column];
                if !tabulated[column] {
                    continue;
                }
                table_rows.push(Row {
                    metric: measure.name,
                    unit: measure.unit.name(),
                    stats: SeedStats::of(&mine[j]),
                    difference: theirs.as_ref().map(|t| paired(&mine[j], &t[j])),
                });
            }
        }
        let labels = plan.labels(point);
        for row in table_rows {
            let mut record = labels.clone();
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
    }
    csv.flush()
        .map_err(|e| invalid!("writing the results table: {e}"))
}

/// Writes the per-seed table to `out`, long and tidy (one row per run and measure; what seaborn
/// and pandas' groupby take): the axes' labels, `seed`, `metric`, `unit` and `value` (empty
/// where undefined). Rows in sweep order, measures in catalogue order (those the sweep
/// tabulates: [`Plan::tabulates`]). `rows` must hold every run.
pub fn write_per_seed_table(
    plan: &Plan,
    rows: &mut dyn ResultRows,
    out: &mut dyn Write,
) -> Result<()> {
    let fail = |e| scenario::output::csv_error("the per-seed table", e);
    let mut w = csv::Writer::from_writer(out);
    let mut header: Vec<&str> = plan.axes.iter().map(|a| a.name.as_str()).collect();
    header.extend(["seed", "metric", "unit", "value"]);
    w.write_record(&header).map_err(fail)?;
    let mut floats = ryu::Buffer::new();
    let width = MEASURES.len();
    let tabulated: Vec<bool> = MEASURES.iter().map(|m| plan.tabulates(m)).collect();
    let total = plan.run_count();
    let mut block = Vec::new();
    let mut first = 0;
    while first < total {
        let count = BLOCK.min(total - first);
        rows.read(first, count, &mut block)?;
        for (k, values) in (first..).zip(block.chunks_exact(width)) {
            let Some(run) = plan.run(k) else { break };
            let seed = run.seed.to_string();
            for ((measure, &value), _) in (MEASURES.iter().zip(values))
                .zip(&tabulated)
                .filter(|(_, shown)| **shown)
            {
                for label in &run.labels {
                    w.write_field(label).map_err(fail)?;
                }
                w.write_field(&seed).map_err(fail)?;
                w.write_field(measure.name).map_err(fail)?;
                w.write_field(measure.unit.name()).map_err(fail)?;
                let text = if value.is_nan() {
                    ""
                } else {
                    floats.format(value)
                };
                w.write_field(text).map_err(fail)?;
                w.write_record(None::<&[u8]>).map_err(fail)?;
            }
        }
        first += count;
    }
    w.flush()
        .map_err(|e| scenario::output::io_error("the per-seed table", e))
}

/// The header and first `rows` rows of the results table at `path`, as CSV text (the headline
/// of a sweep too big to print shows its first configurations).
pub fn table_head(path: &Path, rows: usize) -> Result<String> {
    let what = format!("cannot read {}", path.display());
    let mut reader = csv::Reader::from_path(path).map_err(|e| invalid!("{what}: {e}"))?;
    let mut head = csv::Writer::from_writer(Vec::new());
    let header = reader.byte_headers().map_err(|e| invalid!("{what}: {e}"))?;
    head.write_byte_record(header).map_err(table_error)?;
    for record in reader.byte_records().take(rows) {
        let record = record.map_err(|e| invalid!("{what}: {e}"))?;
        head.write_byte_record(&record).map_err(table_error)?;
    }
    let bytes = head
        .into_inner()
        .map_err(|e| invalid!("{what}: {}", e.error()))?;
    String::from_utf8(bytes).map_err(|e| invalid!("{what}: not UTF-8: {e}"))
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
    use scenario::tables::{ResultRow, column, read_results, results_from_reader};

    const SWEEP: &str = r#"
        seeds = [1, 2, 3]
        baseline = "easy"
        [[axes]]
        name = "scheduler"
        key = "scheduler"
        values = [{ policy = "easy" }, { policy = "creasy", alpha = 1500 }]
    "#;

    /// A plan whose runs' results are written by hand into a results directory:
    /// `value(point, seed)` for every measure.
    fn plan_with_results(
        value: impl Fn(usize, u64) -> f64,
    ) -> (tempfile::TempDir, Plan, super::super::runner::Directory) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sweep.toml");
        std::fs::write(&path, SWEEP).unwrap();
        let plan = Plan::load(&path).unwrap();
        let store = super::super::runner::Directory::prepare(&plan, dir.path()).unwrap();
        for run in plan.runs() {
            use super::super::runner::ResultStore;
            let result = RunResult {
                index: run.index,
                values: vec![value(run.point, run.seed); MEASURES.len()],
            };
            store
                .keep(&run, false, &mut |_| Ok(result.clone()))
                .unwrap();
            assert!(store.has(&run));
        }
        (dir, plan, store)
    }

    fn table(plan: &Plan, store: &super::super::runner::Directory) -> Result<String> {
        super::super::runner::table(plan, store)
    }

    #[test]
    fn the_table_has_a_row_per_point_and_measure_with_paired_differences() {
        // easy: 10, 20, 30 over the seeds; creasy: 1 more on each seed.
        let (_dir, plan, store) =
            plan_with_results(|point, seed| 10.0 * seed as f64 + point as f64);
        let csv = table(&plan, &store).unwrap();
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let headers = reader.headers().unwrap().clone();
        let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        // Every measure but a power model's (no run has one).
        assert!(!plan.power);
        assert_eq!(plan.tabulated().len(), MEASURES.len() - 8);
        assert_eq!(rows.len(), 2 * plan.tabulated().len());
        assert!(!rows.iter().any(|r| &r[column("metric")] == "energy_kwh"));
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
        let (_dir, plan, store) =
            plan_with_results(|point, seed| (seed * seed) as f64 + point as f64);
        let csv = table(&plan, &store).unwrap();
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
        let (_dir, plan, store) = plan_with_results(|_, seed| seed as f64);
        let csv = table(&plan, &store).unwrap();
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
        let (_dir, plan, store) = plan_with_results(|_, seed| seed as f64);
        let csv = table(&plan, &store).unwrap();
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
        let (dir, plan, _) = plan_with_results(|_, _| 1.0);
        // Drop run 4's row from the result file.
        let file = dir.path().join("runs/results-1.csv");
        let text = std::fs::read_to_string(&file).unwrap();
        let id = plan.run(4).unwrap().id;
        let kept: String = text
            .lines()
            .filter(|l| !l.starts_with(&format!("\"{id}\"")) && !l.starts_with(&id))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(kept.lines().count(), text.lines().count() - 1);
        std::fs::write(&file, kept).unwrap();
        let store = super::super::runner::Directory::prepare(&plan, dir.path()).unwrap();
        let err = table(&plan, &store).unwrap_err().to_string();
        assert!(err.contains("1 of 6 runs have no result"), "{err}");
        assert!(err.contains(&id), "{err}");
    }
}
