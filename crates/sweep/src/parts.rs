//! A results directory's result files: `OUT/runs/results-*.csv`, one row per finished run
//! (its id, configuration index, seed and every measure of the catalogue by name). A sweep
//! writes one such file per process (`results-N.csv`) or per Slurm array task
//! (`results-task-M-T.csv`), never one per run: a million runs make a handful of files, which a
//! cluster file system handles as easily as ten.
//!
//! A row is written in one piece after the run's output files are complete, so a complete row
//! is a finished run. A process killed while writing leaves at most a partial last line, without
//! its newline: readers skip it, and a task that goes on with its file cuts it off first.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use config::{Result, ScenarioError, invalid};
use metrics::MEASURES;

use super::plan::{Plan, Run};
use super::results::RunResult;

/// The result files' names begin with this and end with `.csv`.
pub const PREFIX: &str = "results-";

/// The columns before the measures: the run's id, its configuration (grid point) and its seed.
const KEY_COLUMNS: [&str; 3] = ["run", "point", "seed"];

fn io(what: String) -> impl FnOnce(std::io::Error) -> ScenarioError {
    move |source| ScenarioError::Io { what, source }
}

/// Appends rows to one result file.
#[derive(Debug)]
pub struct PartWriter {
    file: File,
    path: PathBuf,
    /// Whether the header is still to be written (the file is empty).
    needs_header: bool,
    /// The measures written, by index in [`MEASURES`] ([`Plan::tabulated`]).
    columns: Vec<usize>,
}

impl PartWriter {
    /// A new result file for this process in `runs`: `results-N.csv`, N the first number no
    /// file has (created exclusively, so processes sharing the directory never share a file),
    /// with the measures `columns` (indices in [`MEASURES`]: [`Plan::tabulated`]).
    pub fn create_new(runs: &Path, columns: Vec<usize>) -> Result<PartWriter> {
        for n in 1u64.. {
            let path = runs.join(format!("{PREFIX}{n}.csv"));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    return Ok(PartWriter {
                        file,
                        path,
                        needs_header: true,
                        columns,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io(format!("cannot create {}", path.display()))(e)),
            }
        }
        Err(invalid!("{}: no free result file name", runs.display()))
    }

    /// The result file named `name` in `runs` (a Slurm array task's own), opened to append; a
    /// partial last row (the task was killed while writing it) is cut off first. `columns` as
    /// for [`PartWriter::create_new`].
    pub fn open(runs: &Path, name: &str, columns: Vec<usize>) -> Result<PartWriter> {
        let path = runs.join(name);
        let what = || format!("cannot open {}", path.display());
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io(what()))?;
        let complete = complete_length(&mut file).map_err(io(what()))?;
        file.set_len(complete).map_err(io(what()))?;
        file.seek(SeekFrom::End(0)).map_err(io(what()))?;
        Ok(PartWriter {
            file,
            path,
            needs_header: complete == 0,
            columns,
        })
    }

    /// Appends `run`'s row, in one write.
    pub fn append(&mut self, run: &Run, result: &RunResult) -> Result<()> {
        let fail = |e| scenario::output::csv_error("a result row", e);
        let mut w = csv::Writer::from_writer(Vec::with_capacity(2048));
        if self.needs_header {
            let mut header: Vec<&str> = KEY_COLUMNS.to_vec();
            header.extend(
                self.columns
                    .iter()
                    .filter_map(|&k| MEASURES.get(k))
                    .map(|m| m.name),
            );
            w.write_record(&header).map_err(fail)?;
        }
        let mut floats = ryu::Buffer::new();
        w.write_field(&run.id).map_err(fail)?;
        w.write_field(run.point.to_string()).map_err(fail)?;
        w.write_field(run.seed.to_string()).map_err(fail)?;
        for value in self
            .columns
            .iter()
            .map(|&k| result.values.get(k).copied().unwrap_or(f64::NAN))
        {
            let text = if value.is_nan() {
                ""
            } else {
                floats.format(value)
            };
            w.write_field(text).map_err(fail)?;
        }
        w.write_record(None::<&[u8]>).map_err(fail)?;
        let bytes = w
            .into_inner()
            .map_err(|e| scenario::output::io_error("a result row", e.into_error()))?;
        let what = || format!("cannot write {}", self.path.display());
        self.file.write_all(&bytes).map_err(io(what()))?;
        self.file.flush().map_err(io(what()))?;
        self.needs_header = false;
        Ok(())
    }
}

/// The length of `file` up to its last newline: its complete rows.
fn complete_length(file: &mut File) -> std::io::Result<u64> {
    let length = file.seek(SeekFrom::End(0))?;
    let mut end = length;
    let mut buffer = [0u8; 4096];
    while end > 0 {
        let start = end.saturating_sub(buffer.len() as u64);
        file.seek(SeekFrom::Start(start))?;
        let chunk = &mut buffer[..(end - start) as usize];
        file.read_exact(chunk)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// The result files in `runs`, in name order.
pub fn files(runs: &Path) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(runs) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(format!("cannot list {}", runs.display()))(e)),
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(PREFIX) && n.ends_with(".csv"))
        })
        .collect();
    found.sort();
    Ok(found)
}

/// Reads every complete row of the result file `path`: for each, `visit` gets the run's index
/// and, when `values`, its measures in catalogue order (NaN where undefined or where the file,
/// written by another version, lacks the measure). Errors name the file, line and column.
pub fn read(
    plan: &Plan,
    path: &Path,
    values: bool,
    visit: &mut dyn FnMut(usize, &[f64]),
) -> Result<()> {
    let origin = path.display().to_string();
    let mut file = File::open(path).map_err(io(format!("cannot open {origin}")))?;
    let complete = complete_length(&mut file).map_err(io(format!("cannot read {origin}")))?;
    file.seek(SeekFrom::Start(0))
        .map_err(io(format!("cannot read {origin}")))?;
    let mut reader =
        csv::ReaderBuilder::new()
            .flexible(true)
            .from_reader(std::io::BufReader::with_capacity(
                1 << 16,
                file.take(complete),
            ));
    let header = reader
        .byte_headers()
        .map_err(|e| invalid!("{origin}: {e}"))?
        .clone();
    if header.is_empty() {
        return Ok(()); // created, nothing written yet
    }
    let position = |name: &str| header.iter().position(|h| h == name.as_bytes());
    let key: Vec<usize> = KEY_COLUMNS
        .iter()
        .map(|&name| {
            position(name).ok_or_else(|| {
                invalid!("{origin}: line 1: no column {name:?}; is this a sitesim result file?")
            })
        })
        .collect::<Result<_>>()?;
    let columns: Vec<Option<usize>> = MEASURES.iter().map(|m| position(m.name)).collect();
    let mut row = vec![f64::NAN; MEASURES.len()];
    let mut record = csv::ByteRecord::new();
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(invalid!("{origin}: {e}")),
        }
        let line = record.position().map_or(0, |p| p.line());
        let at = |column: usize| {
            let name = std::str::from_utf8(&header[column]).unwrap_or("?");
            format!("{origin}: line {line}, column {name:?}")
        };
        if record.len() != header.len() {
            return Err(invalid!(
                "{origin}: line {line}: {} fields where the header has {}",
                record.len(),
                header.len()
            ));
        }
        let text = |column: usize| std::str::from_utf8(&record[column]).unwrap_or("");
        let point: usize = text(key[1])
            .parse()
            .map_err(|_| invalid!("{}: not a configuration number", at(key[1])))?;
        let seed: u64 = text(key[2])
            .parse()
            .map_err(|_| invalid!("{}: not a seed", at(key[2])))?;
        let index = plan
            .index_of(point, seed)
            .filter(|&k| plan.run(k).is_some_and(|run| run.id == text(key[0])))
            .ok_or_else(|| {
                invalid!(
                    "{origin}: line {line}: run {:?} (configuration {point}, seed {seed}) is not a run of this sweep",
                    text(key[0])
                )
            })?;
        if values {
            for (value, column) in row.iter_mut().zip(&columns) {
                *value = match *column {
                    None => f64::NAN,
                    Some(c) if record[c].is_empty() => f64::NAN,
                    Some(c) => text(c)
                        .parse()
                        .map_err(|_| invalid!("{}: not a number", at(c)))?,
                };
            }
        }
        visit(index, &row);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{Directory, ResultStore, table};

    const SWEEP: &str = r#"
        seeds = { first = 1, count = 3 }
        [[axes]]
        name = "scheduler"
        key = "scheduler"
        values = [{ policy = "easy" }, { policy = "fcfs" }]
    "#;

    fn plan(dir: &Path) -> Plan {
        let path = dir.join("sweep.toml");
        std::fs::write(&path, SWEEP).unwrap();
        Plan::load(&path).unwrap()
    }

    fn result(run: &Run) -> RunResult {
        let mut values = vec![run.seed as f64 + 0.1; MEASURES.len()];
        values[3] = f64::NAN;
        RunResult {
            index: run.index,
            values,
        }
    }

    #[test]
    fn rows_read_back_exactly_and_a_partial_last_row_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path());
        let runs = dir.path().join("runs");
        std::fs::create_dir_all(&runs).unwrap();
        let mut writer = PartWriter::create_new(&runs, plan.tabulated()).unwrap();
        for run in plan.runs().take(4) {
            writer.append(&run, &result(&run)).unwrap();
        }
        // A process killed while writing run 4's row: half a line, no newline.
        let path = runs.join("results-1.csv");
        let full = std::fs::read(&path).unwrap();
        let mut partial = full.clone();
        partial.extend_from_slice(b"\"scheduler=fcfs,seed=2\",1,2,3.5,4");
        std::fs::write(&path, &partial).unwrap();
        let mut seen = Vec::new();
        read(&plan, &path, true, &mut |k, values| {
            seen.push(k);
            let expected = result(&plan.run(k).unwrap());
            // The measures the sweep tabulates read back exactly; a power model's, which it
            // does not (no run has one), have no column and read as undefined.
            let tabulated = plan.tabulated();
            for (m, (a, b)) in values.iter().zip(&expected.values).enumerate() {
                match tabulated.contains(&m) {
                    true => assert_eq!(a.to_bits(), b.to_bits()),
                    false => assert!(a.is_nan(), "{}", MEASURES[m].name),
                }
            }
        })
        .unwrap();
        assert_eq!(seen, [0, 1, 2, 3]);
        // A task going on with its file cuts the partial row off before appending.
        let mut writer = PartWriter::open(&runs, "results-1.csv", plan.tabulated()).unwrap();
        let run = plan.run(4).unwrap();
        writer.append(&run, &result(&run)).unwrap();
        let again = std::fs::read(&path).unwrap();
        assert!(again.starts_with(&full) && again.ends_with(b"\n"));
        let mut count = 0;
        read(&plan, &path, false, &mut |_, _| count += 1).unwrap();
        assert_eq!(count, 5);
        // A second process gets a file of its own.
        let second = PartWriter::create_new(&runs, plan.tabulated()).unwrap();
        assert!(second.path.ends_with("results-2.csv"));
    }

    #[test]
    fn a_damaged_row_is_named_by_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path());
        let runs = dir.path().join("runs");
        std::fs::create_dir_all(&runs).unwrap();
        let mut writer = PartWriter::create_new(&runs, plan.tabulated()).unwrap();
        for run in plan.runs().take(2) {
            writer.append(&run, &result(&run)).unwrap();
        }
        let path = runs.join("results-1.csv");
        let text = std::fs::read_to_string(&path).unwrap();
        let damaged = text.replacen("1.1,", "1.x,", 1);
        std::fs::write(&path, damaged).unwrap();
        let err = read(&plan, &path, true, &mut |_, _| {})
            .unwrap_err()
            .to_string();
        assert!(err.contains("results-1.csv: line 2, column"), "{err}");
        assert!(err.contains("not a number"), "{err}");
        let foreign = text.replace("scheduler=easy,seed=1", "scheduler=sjf,seed=1");
        std::fs::write(&path, foreign).unwrap();
        let err = read(&plan, &path, false, &mut |_, _| {})
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 2: run \"scheduler=sjf,seed=1\""),
            "{err}"
        );
    }

    #[test]
    fn a_directory_of_one_file_per_run_is_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path());
        let runs = dir.path().join("runs");
        std::fs::create_dir_all(&runs).unwrap();
        // The earlier layout: runs/<run>.json for every run but the last.
        for run in plan.runs().take(5) {
            let metrics: serde_json::Map<String, serde_json::Value> = MEASURES
                .iter()
                .map(|m| (m.name.to_string(), serde_json::json!(run.seed as f64 + 0.1)))
                .collect();
            let file = serde_json::json!({ "run": run.id, "seed": run.seed, "metrics": metrics });
            std::fs::write(runs.join(&run.file), file.to_string()).unwrap();
        }
        let store = Directory::prepare(&plan, dir.path()).unwrap();
        assert!(store.has(&plan.run(4).unwrap()));
        assert!(!store.has(&plan.run(5).unwrap()));
        let last = plan.run(5).unwrap();
        store
            .keep(&last, false, &mut |_| Ok(result(&last)))
            .unwrap();
        let csv = table(&plan, &store).unwrap();
        assert!(csv.contains("fcfs,utilization,fraction,3,2.1,"), "{csv}");
    }
}
