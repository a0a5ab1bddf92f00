//! Carrying out a sweep's runs, the same for every front end: [`check`] every configuration
//! before anything runs, [`execute`] one run into its [`RunResult`] (writing the sweep's
//! `outputs` into the run's store if it has one), and [`run_missing`] the runs without a
//! result, longest first, on a number of threads; a [`ResultStore`] keeps the results: a
//! results directory ([`Directory`], the command line: a file per run, so an interrupted sweep
//! is resumed by running it again) or memory ([`Memory`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::plan::{Plan, Run};
use super::results::{self, RunResult};
use crate::error::{Result, ScenarioError, invalid};
use crate::progress::StopFlag;
use crate::store::{OutputDir, Store};
use crate::{Outcome, Simulation};

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
                .and_then(|site| crate::run::check(&site, default_model))
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
    /// Every run's result, by (configuration, seed); an error naming the first missing run.
    fn results(&self, plan: &Plan) -> Result<BTreeMap<(usize, u64), RunResult>>;
}

/// A results directory: `OUT/runs/<run>.json` per finished run (written atomically: a file is
/// a finished run) and, with `outputs`, `OUT/runs/<run>/` holding its files.
#[derive(Debug, Clone)]
pub struct Directory {
    out: PathBuf,
}

impl Directory {
    /// The results directory `out`, created, recording the sweep (`sweep.toml` and, for a site
    /// sweep, `site.toml`); a directory that holds the results of a different sweep is refused.
    pub fn prepare(plan: &Plan, out: &Path) -> Result<Directory> {
        std::fs::create_dir_all(out.join("runs")).map_err(|source| ScenarioError::Io {
            what: format!("cannot create {}", out.display()),
            source,
        })?;
        let mut record = OutputDir::create(out)?;
        let records: &[(&str, &String)] = if plan.is_replay() {
            &[("sweep.toml", &plan.text)]
        } else {
            &[("sweep.toml", &plan.text), ("site.toml", &plan.site_text)]
        };
        for &(name, text) in records {
            let path = out.join(name);
            match std::fs::read_to_string(&path) {
                Ok(existing) if &existing == text => {}
                Ok(_) => {
                    return Err(invalid!(
                        "{} holds the results of a different sweep ({} differs); use another --out",
                        out.display(),
                        path.display()
                    ));
                }
                Err(_) => record.write(name, text.as_bytes())?,
            }
        }
        record.commit()?;
        Ok(Directory::at(out))
    }

    /// The results directory `out` as it is (a Slurm task's, prepared by the submission).
    pub fn at(out: &Path) -> Directory {
        Directory {
            out: out.to_path_buf(),
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.out
    }
}

impl ResultStore for Directory {
    fn has(&self, run: &Run) -> bool {
        results::read_result(&self.out, run).is_some()
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
        let mut dir = OutputDir::create(&runs)?;
        dir.write_json(&run.file, &result)?;
        // The run's files first: a result file is a finished run, its files complete.
        if let Some(files) = files {
            files.commit()?;
        }
        dir.commit()?;
        Ok(())
    }

    fn results(&self, plan: &Plan) -> Result<BTreeMap<(usize, u64), RunResult>> {
        let mut found = BTreeMap::new();
        let mut missing = Vec::new();
        for run in &plan.runs {
            match results::read_result(&self.out, run) {
                Some(r) => {
                    found.insert((run.point, run.seed), r);
                }
                None => missing.push(run.id.as_str()),
            }
        }
        if let Some(first) = missing.first() {
            return Err(invalid!(
                "{} of {} runs have no result in {} (first: {first}); run the sweep again to complete it",
                missing.len(),
                plan.runs.len(),
                self.out.join("runs").display(),
            ));
        }
        Ok(found)
    }
}

/// Results kept in memory (a sweep from Python without a results directory); the sweep's
/// `outputs` are not written.
#[derive(Debug, Default)]
pub struct Memory {
    done: Mutex<BTreeMap<(usize, u64), RunResult>>,
}

impl ResultStore for Memory {
    fn has(&self, run: &Run) -> bool {
        self.done
            .lock()
            .is_ok_and(|d| d.contains_key(&(run.point, run.seed)))
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
        done.insert((run.point, run.seed), result);
        Ok(())
    }

    fn results(&self, _plan: &Plan) -> Result<BTreeMap<(usize, u64), RunResult>> {
        self.done
            .lock()
            .map(|d| d.clone())
            .map_err(|_| invalid!("the sweep's results were poisoned by a failed run"))
    }
}

/// The runs of `plan` still without a result in `store`.
pub fn missing<'p>(plan: &'p Plan, store: &dyn ResultStore) -> Vec<&'p Run> {
    plan.runs.iter().filter(|run| !store.has(run)).collect()
}

/// The indexes of `todo` in the order to run them: by decreasing cost, estimated as the site's
/// users times its weeks (the simulated jobs grow with both), or a replay's trace file size,
/// ties in sweep order. A run whose site or trace cannot be read counts as cheap; running it
/// reports the error.
pub fn longest_first(plan: &Plan, todo: &[&Run]) -> Vec<usize> {
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
    let mut order: Vec<usize> = (0..todo.len()).collect();
    order.sort_by_key(|&k| {
        std::cmp::Reverse(cost_of_point.get(todo[k].point).copied().unwrap_or(0))
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
                    let run = todo[k];
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

/// results.csv's text from every result in `store`.
pub fn table(plan: &Plan, store: &dyn ResultStore) -> Result<String> {
    results::table_of(plan, &store.results(plan)?)
}

/// The per-seed table of every result in `store`, long and tidy (one row per run and measure;
/// what seaborn and pandas' groupby take): the axes' labels, `seed`, `metric`, `unit` and
/// `value` (empty where undefined). Rows in sweep order, measures in catalogue order.
pub fn per_seed_table(plan: &Plan, store: &dyn ResultStore) -> Result<String> {
    let results = store.results(plan)?;
    let mut w = csv::Writer::from_writer(Vec::new());
    let fail = |e| crate::output::csv_error("the per-seed table", e);
    let mut header: Vec<&str> = plan.axes.iter().map(|a| a.name.as_str()).collect();
    header.extend(["seed", "metric", "unit", "value"]);
    w.write_record(&header).map_err(fail)?;
    let mut floats = ryu::Buffer::new();
    for run in &plan.runs {
        let Some(result) = results.get(&(run.point, run.seed)) else {
            continue;
        };
        for measure in metrics::MEASURES {
            let value = result.metrics.get(measure.name).copied().flatten();
            let mut row: Vec<String> = run.labels.clone();
            row.push(run.seed.to_string());
            row.push(measure.name.to_string());
            row.push(measure.unit.name().to_string());
            row.push(value.map_or(String::new(), |v| floats.format(v).to_string()));
            w.write_record(&row).map_err(fail)?;
        }
    }
    let bytes = w
        .into_inner()
        .map_err(|e| crate::output::io_error("the per-seed table", e.into_error()))?;
    String::from_utf8(bytes).map_err(|e| invalid!("the per-seed table is not text: {e}"))
}
