//! Carrying out a sweep's runs, the same for every front end: [`check`] every configuration
//! before anything runs, [`execute`] one run into its [`RunResult`] (writing the sweep's
//! `outputs` into the run's store if it has one), and [`run_missing`] the runs without a
//! result, longest first, on a number of threads; a [`ResultStore`] keeps the results: a
//! results directory ([`Directory`], the command line: a row per finished run in a file per
//! process or array task, so an interrupted sweep is resumed by running it again) or memory
//! ([`Memory`]).

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use config::{Result, ScenarioError, invalid};
use scenario::progress::StopFlag;
use scenario::store::{OutputDir, Store};
use scenario::{Outcome, Simulation};

use super::parts::{self, PartWriter};
use super::plan::{Plan, Run};
use super::results::{self, ResultRows, RowsInMemory, RunResult};
use metrics::MEASURES;

/// Checks every configuration of `plan` as its first seed's run would start (a site's users and
/// machine; a replay's scheduler, options and that its trace is a readable file), so that a bad
/// value stops the sweep before any run. `default_model` is what `models = "embedded"` means.
pub fn check(plan: &Plan, default_model: &Arc<usermodel::Model>) -> Result<()> {
    for point in 0..plan.points() {
        let checked = if plan.is_replay() {
            plan.replay(point, plan.seeds[0]).and_then(|(_, options)| {
                options.check().map_err(|e| e.within("replay"))?;
                std::fs::File::open(&options.trace)
                    .map(|_| ())
                    .map_err(|e| {
                        invalid!("replay.trace: cannot read {}: {e}", options.trace.display())
                    })
            })
        } else {
            plan.site(point, plan.seeds[0])
                .and_then(|site| scenario::run::check(&site, default_model))
        };
        checked.map_err(|e| e.within(format!("configuration {}", plan.describe(point))))?;
    }
    Ok(())
}

/// Simulates `run` (a site run, measured as it goes, with its headroom when the sweep asks; or
/// a replay) and measures it; the sweep's `outputs` go into `outputs` when given. Errors name
/// the run.
pub fn execute(
    plan: &Plan,
    run: &Run,
    default_model: &Arc<usermodel::Model>,
    outputs: Option<&mut dyn Store>,
    stop: Option<&AtomicBool>,
) -> Result<RunResult> {
    let within = |e: ScenarioError| e.within(format!("run {}", run.id));
    let mut simulation = if plan.is_replay() {
        let (scheduler, options) = plan.replay(run.point, run.seed)?;
        Simulation::replay(scheduler, options)
    } else {
        let site = plan.site(run.point, run.seed)?;
        Simulation::site(site, Arc::clone(default_model)).headroom(plan.headroom)
    };
    if let Some(store) = outputs {
        simulation = simulation.outputs(&plan.outputs, store);
    }
    let mut stopping = stop.map(StopFlag);
    if let Some(stopping) = stopping.as_mut() {
        simulation = simulation.progress(stopping);
    }
    let executed = simulation.execute().map_err(within)?;
    Ok(match &executed.outcome {
        Outcome::Site(site) => results::measure(run, site),
        Outcome::Replay(replay) => results::measure_replay(run, replay, &replay.summary()),
    })
}

/// Where a sweep's results are kept.
pub trait ResultStore: Sync {
    /// Whether `run` has its result already (a resumed sweep does not run it again).
    fn has(&self, run: &Run) -> bool;
    /// Runs `run` with `execute` (given the store for the run's output files when `outputs`:
    /// the sweep writes some) and keeps its result; nothing is kept when it fails.
    fn keep(
        &self,
        run: &Run,
        outputs: bool,
        execute: &mut dyn FnMut(Option<&mut dyn Store>) -> Result<RunResult>,
    ) -> Result<()>;
    /// Every run's values, for the tables; an error naming the first run without a result.
    fn rows(&self, plan: &Plan) -> Result<Box<dyn ResultRows + '_>>;
}

/// The error for a table asked of a sweep with runs still to do.
fn incomplete(plan: &Plan, missing: &[usize], place: &str) -> ScenarioError {
    let first = missing
        .first()
        .and_then(|&k| plan.run(k))
        .map_or_else(String::new, |r| r.id);
    invalid!(
        "{} of {} runs have no result in {place} (first: {first}); run the sweep again to complete it",
        missing.len(),
        plan.run_count(),
    )
}

/// The files that record a sweep in its directory (`sweep.toml`, and `site.toml` for a site
/// sweep): each name, its text, and its text in `out` if it is there. A recorded file whose
/// text differs is refused: the directory holds another sweep.
fn recorded<'p>(
    plan: &'p Plan,
    out: &Path,
) -> Result<Vec<(&'static str, &'p String, Option<String>)>> {
    let records: &[(&str, &String)] = if plan.is_replay() {
        &[("sweep.toml", &plan.text)]
    } else {
        &[("sweep.toml", &plan.text), ("site.toml", &plan.site_text)]
    };
    let mut found = Vec::new();
    for &(name, text) in records {
        let path = out.join(name);
        let existing = std::fs::read_to_string(&path).ok();
        if existing.as_ref().is_some_and(|existing| existing != text) {
            return Err(invalid!(
                "{} holds the results of a different sweep ({} differs); use another --out",
                out.display(),
                path.display()
            ));
        }
        found.push((name, text, existing));
    }
    Ok(found)
}

/// A results directory: `OUT/runs/results-*.csv`, a row per finished run in a file per process
/// or Slurm array task ([`super::parts`]), and, with `outputs`, `OUT/runs/<run>/` holding each
/// run's files. A directory written by an earlier version (`OUT/runs/<run>.json`, a file per
/// run) is read too.
#[derive(Debug)]
pub struct Directory {
    out: PathBuf,
    /// Whether each run (by index) has a result.
    done: Mutex<Vec<bool>>,
    /// The file this process appends to: made at the first result (`None`: not yet).
    writer: Mutex<Option<PartWriter>>,
    /// The measures its rows hold, by index in [`MEASURES`] ([`Plan::tabulated`]).
    columns: Vec<usize>,
    /// A Slurm array task's own file name (`None`: a new file for this process).
    task_file: Option<String>,
}

impl Directory {
    /// The results directory `out`, created, recording the sweep (`sweep.toml` and, for a site
    /// sweep, `site.toml`), with the runs that have results found; a directory that holds the
    /// results of a different sweep is refused.
    pub fn prepare(plan: &Plan, out: &Path) -> Result<Directory> {
        std::fs::create_dir_all(out.join("runs")).map_err(|source| ScenarioError::Io {
            what: format!("cannot create {}", out.display()),
            source,
        })?;
        let mut record = OutputDir::create(out)?;
        for (name, text, existing) in recorded(plan, out)? {
            if existing.is_none() {
                record.write(name, text.as_bytes())?;
            }
        }
        record.commit()?;
        Directory::scan(plan, out)
    }

    /// The results directory `out` of an earlier run of this sweep, as it is: nothing is
    /// written (`sweep --merge`, which must not leave a directory behind that looks like a
    /// sweep when it fails). A directory that holds no sweep, or another one, is refused.
    pub fn existing(plan: &Plan, out: &Path) -> Result<Directory> {
        for (name, _, existing) in recorded(plan, out)? {
            if existing.is_none() {
                return Err(invalid!(
                    "{} holds no results of this sweep (no {name}): run the sweep first (with --slurm, wait for its arrays), then --merge",
                    out.display()
                ));
            }
        }
        Directory::scan(plan, out)
    }

    /// The directory with the runs that have results found.
    fn scan(plan: &Plan, out: &Path) -> Result<Directory> {
        let mut done = vec![false; plan.run_count()];
        for file in parts::files(&out.join("runs"))? {
            parts::read(plan, &file, false, &mut |k, _| done[k] = true)?;
        }
        for_each_one_run_file(plan, out, &mut |result| done[result.index] = true);
        Ok(Directory {
            out: out.to_path_buf(),
            done: Mutex::new(done),
            writer: Mutex::new(None),
            columns: plan.tabulated(),
            task_file: None,
        })
    }

    /// The results directory `out` as a Slurm array task sees it (prepared by the submission):
    /// its results go to its own file, `task_file`, and the runs already in that file (a task
    /// run again) count as done.
    pub fn for_task(plan: &Plan, out: &Path, task_file: &str) -> Result<Directory> {
        let runs = out.join("runs");
        let mut done = vec![false; plan.run_count()];
        let path = runs.join(task_file);
        if path.exists() {
            parts::read(plan, &path, false, &mut |k, _| done[k] = true)?;
        }
        Ok(Directory {
            out: out.to_path_buf(),
            done: Mutex::new(done),
            writer: Mutex::new(None),
            columns: plan.tabulated(),
            task_file: Some(task_file.to_string()),
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.out
    }
}

/// Visits each result in a file of the earlier one-file-per-run layout (`runs/<run>.json`), if
/// the directory has any.
fn for_each_one_run_file(plan: &Plan, out: &Path, visit: &mut dyn FnMut(RunResult)) {
    let runs = out.join("runs");
    let any = std::fs::read_dir(&runs).is_ok_and(|mut entries| {
        entries.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "json")))
    });
    if any {
        for run in plan.runs() {
            if let Some(result) = results::read_one_run_file(out, &run) {
                visit(result);
            }
        }
    }
}

impl ResultStore for Directory {
    fn has(&self, run: &Run) -> bool {
        self.done
            .lock()
            .is_ok_and(|d| d.get(run.index).copied().unwrap_or(false))
    }

    fn keep(
        &self,
        run: &Run,
        outputs: bool,
        execute: &mut dyn FnMut(Option<&mut dyn Store>) -> Result<RunResult>,
    ) -> Result<()> {
        let runs = self.out.join("runs");
        let stem = run.file.strip_suffix(".json").unwrap_or(&run.file);
        let mut files = match outputs {
            true => Some(OutputDir::create(&runs.join(stem))?),
            false => None,
        };
        let result = execute(files.as_mut().map(|f| f as &mut dyn Store))?;
        // The run's files first: a result row is a finished run, its files complete.
        if let Some(files) = files {
            files.commit()?;
        }
        let poisoned = || invalid!("the sweep's result file was poisoned by a failed run");
        let mut writer = self.writer.lock().map_err(|_| poisoned())?;
        if writer.is_none() {
            *writer = Some(match &self.task_file {
                Some(name) => PartWriter::open(&runs, name, self.columns.clone())?,
                None => PartWriter::create_new(&runs, self.columns.clone())?,
            });
        }
        if let Some(w) = writer.as_mut() {
            w.append(run, &result)?;
        }
        drop(writer);
        if let Some(flag) = self.done.lock().map_err(|_| poisoned())?.get_mut(run.index) {
            *flag = true;
        }
        Ok(())
    }

    fn rows(&self, plan: &Plan) -> Result<Box<dyn ResultRows + '_>> {
        let width = MEASURES.len();
        let total = plan.run_count();
        let what = |w: &str| format!("{w} the sweep's scratch table in {}", self.out.display());
        // An unnamed file (gone when closed, even if the process is killed), one row of
        // values per run at its index.
        let mut scratch = tempfile::tempfile_in(&self.out).map_err(|source| ScenarioError::Io {
            what: what("cannot create"),
            source,
        })?;
        let mut found = vec![false; total];
        let mut failed: Option<std::io::Error> = None;
        let mut bytes = Vec::with_capacity(width * 8);
        let mut store = |k: usize, values: &[f64], found: &mut Vec<bool>| {
            if found[k] || failed.is_some() {
                return; // the first row of a run counts
            }
            found[k] = true;
            bytes.clear();
            for v in values {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
            let written = scratch
                .seek(SeekFrom::Start((k * width * 8) as u64))
                .and_then(|_| scratch.write_all(&bytes));
            if let Err(e) = written {
                failed = Some(e);
            }
        };
        for file in parts::files(&self.out.join("runs"))? {
            parts::read(plan, &file, true, &mut |k, values| {
                store(k, values, &mut found)
            })?;
        }
        for_each_one_run_file(plan, &self.out, &mut |r| {
            store(r.index, &r.values, &mut found)
        });
        if let Some(source) = failed {
            return Err(ScenarioError::Io {
                what: what("cannot write"),
                source,
            });
        }
        let missing: Vec<usize> = (0..total).filter(|&k| !found[k]).collect();
        if !missing.is_empty() {
            let place = self.out.join("runs").display().to_string();
            return Err(incomplete(plan, &missing, &place));
        }
        Ok(Box::new(FileRows {
            file: scratch,
            bytes: Vec::new(),
        }))
    }
}

/// Every run's values in an unnamed scratch file, run-major (little-endian `f64`s).
struct FileRows {
    file: std::fs::File,
    bytes: Vec<u8>,
}

impl ResultRows for FileRows {
    fn read(&mut self, first: usize, count: usize, into: &mut Vec<f64>) -> Result<()> {
        let width = MEASURES.len() * 8;
        self.bytes.resize(count * width, 0);
        self.file
            .seek(SeekFrom::Start((first * width) as u64))
            .and_then(|_| self.file.read_exact(&mut self.bytes))
            .map_err(|source| ScenarioError::Io {
                what: "cannot read the sweep's scratch table".to_string(),
                source,
            })?;
        into.clear();
        into.extend(self.bytes.chunks_exact(8).map(|b| {
            let mut word = [0u8; 8];
            word.copy_from_slice(b);
            f64::from_le_bytes(word)
        }));
        Ok(())
    }
}

/// Results kept in memory (a sweep from Python without a results directory); the sweep's
/// `outputs` are not written.
#[derive(Debug, Default)]
pub struct Memory {
    done: Mutex<BTreeMap<usize, Vec<f64>>>,
}

impl ResultStore for Memory {
    fn has(&self, run: &Run) -> bool {
        self.done.lock().is_ok_and(|d| d.contains_key(&run.index))
    }

    fn keep(
        &self,
        run: &Run,
        _outputs: bool,
        execute: &mut dyn FnMut(Option<&mut dyn Store>) -> Result<RunResult>,
    ) -> Result<()> {
        let result = execute(None)?;
        let mut done = self
            .done
            .lock()
            .map_err(|_| invalid!("the sweep's results were poisoned by a failed run"))?;
        done.insert(run.index, result.values);
        Ok(())
    }

    fn rows(&self, plan: &Plan) -> Result<Box<dyn ResultRows + '_>> {
        let done = self
            .done
            .lock()
            .map_err(|_| invalid!("the sweep's results were poisoned by a failed run"))?;
        let total = plan.run_count();
        let missing: Vec<usize> = (0..total).filter(|k| !done.contains_key(k)).collect();
        if !missing.is_empty() {
            return Err(incomplete(plan, &missing, "memory"));
        }
        let values = (0..total)
            .flat_map(|k| done.get(&k).map(Vec::as_slice).unwrap_or_default())
            .copied()
            .collect();
        Ok(Box::new(RowsInMemory { values }))
    }
}

/// The runs of `plan` still without a result in `store`, by index.
pub fn missing(plan: &Plan, store: &dyn ResultStore) -> Vec<usize> {
    plan.runs()
        .filter(|run| !store.has(run))
        .map(|run| run.index)
        .collect()
}

/// The indexes of `todo` in the order to run them: by decreasing cost, estimated as the site's
/// users times its weeks (the simulated jobs grow with both), or a replay's trace file size,
/// ties in sweep order. A run whose site or trace cannot be read counts as cheap; running it
/// reports the error.
pub fn longest_first(plan: &Plan, todo: &[usize]) -> Vec<usize> {
    let cost_of_point: Vec<u64> = (0..plan.points())
        .map(|point| {
            let Some(&seed) = plan.seeds.first() else {
                return 0;
            };
            if plan.is_replay() {
                return plan
                    .replay(point, seed)
                    .ok()
                    .and_then(|(_, options)| std::fs::metadata(&options.trace).ok())
                    .map_or(0, |m| m.len());
            }
            plan.site(point, seed).ok().map_or(0, |site| {
                let users: u64 = site.file.groups.iter().map(|g| u64::from(g.users)).sum();
                users.saturating_mul(u64::from(site.file.run.weeks))
            })
        })
        .collect();
    let seeds = plan.seeds.len().max(1);
    let mut order: Vec<usize> = (0..todo.len()).collect();
    order.sort_by_key(|&k| {
        std::cmp::Reverse(cost_of_point.get(todo[k] / seeds).copied().unwrap_or(0))
    });
    order
}

/// What [`run_missing`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ran {
    /// Runs it carried out.
    pub runs: usize,
    /// Threads it used: `threads`, never more than the runs.
    pub threads: usize,
}

/// Runs every run of `plan` without a result in `store`, longest first, on `threads` threads
/// (never more than the runs), each taking the next run when it finishes one (so the threads
/// end together); `done` is called after each run. A failed run does not stop the others; the
/// error names how many failed and the first failure (the others' results are kept, so running
/// the sweep again retries only the failed ones). Setting `stop` stops the runs in progress and
/// starts no other (the sweep then fails: "interrupted").
pub fn run_missing(
    plan: &Plan,
    store: &dyn ResultStore,
    default_model: &Arc<usermodel::Model>,
    threads: usize,
    done: &(dyn Fn() + Sync),
    stop: Option<&AtomicBool>,
) -> Result<Ran> {
    let todo = missing(plan, store);
    let threads = threads.clamp(1, todo.len().max(1));
    if todo.is_empty() {
        return Ok(Ran { runs: 0, threads });
    }
    let order = longest_first(plan, &todo);
    let next = AtomicUsize::new(0);
    let failures: Mutex<Vec<(usize, ScenarioError)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(&k) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                        break;
                    }
                    let Some(run) = plan.run(todo[k]) else {
                        continue;
                    };
                    let run = &run;
                    tracing::debug!("run {}: starting", run.id);
                    let kept = store.keep(run, !plan.outputs.is_empty(), &mut |outputs| {
                        execute(plan, run, default_model, outputs, stop)
                    });
                    if let Err(e) = kept {
                        if let Ok(mut f) = failures.lock() {
                            f.push((k, e));
                        }
                    }
                    done();
                }
            });
        }
    });
    if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
        return Err(invalid!(
            "the sweep was interrupted (finished runs are kept; run it again to go on)"
        ));
    }
    let mut failures = failures.into_inner().unwrap_or_default();
    failures.sort_by_key(|(k, _)| *k);
    let count = failures.len();
    if let Some((_, first)) = failures.into_iter().next() {
        return Err(first.within(format!(
            "{count} runs failed (the others are kept; rerun to retry)"
        )));
    }
    Ok(Ran {
        runs: todo.len(),
        threads,
    })
}

/// results.csv's text from every result in `store` (a sweep small enough to hold it: the
/// command line writes the table to its file with [`results::write_table`]).
pub fn table(plan: &Plan, store: &dyn ResultStore) -> Result<String> {
    let mut bytes = Vec::new();
    results::write_table(plan, store.rows(plan)?.as_mut(), &mut bytes)?;
    String::from_utf8(bytes).map_err(|e| invalid!("the results table is not UTF-8: {e}"))
}

/// The per-seed table's text ([`results::write_per_seed_table`]) from every result in `store`.
pub fn per_seed_table(plan: &Plan, store: &dyn ResultStore) -> Result<String> {
    let mut bytes = Vec::new();
    results::write_per_seed_table(plan, store.rows(plan)?.as_mut(), &mut bytes)?;
    String::from_utf8(bytes).map_err(|e| invalid!("the per-seed table is not text: {e}"))
}
