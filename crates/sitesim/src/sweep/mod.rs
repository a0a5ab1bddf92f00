//! `sitesim sweep`: a grid of site-level runs or trace replays (schedulers x parameters x seeds;
//! scenario's `sweep` module says what a run is), run in parallel here or as a Slurm job array,
//! with a results table of means, confidence intervals and paired differences.
//!
//! Layout of the results directory:
//!
//! ```text
//! OUT/sweep.toml      the sweep file, and OUT/site.toml the population file it starts from
//!                     (a replay sweep has none)
//! OUT/runs/*.json     one file per finished run (written atomically: a file is a finished run)
//! OUT/results.csv     the table (mean, 95 % CI, paired differences against the baseline)
//! OUT/slurm/          sbatch scripts, manifests of the runs they were given, task logs
//! ```
//!
//! A sweep that stopped part-way (killed, a failed Slurm task) is completed by running the same
//! command again: runs with a result file are not redone.

mod headline;
mod slurm;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::SweepArgs;
use crate::output::OutputDir;
use crate::say;
use scenario::sweep::execute;
use scenario::sweep::plan::{Plan, Run};
use scenario::sweep::results;

/// Runs the command.
pub fn run(args: &SweepArgs) -> anyhow::Result<()> {
    tracing::info!("reading {}", args.sweep.display());
    let plan = Plan::load(&args.sweep)?;
    tracing::info!(
        "{} runs; results in {}",
        plan.runs.len(),
        args.out
            .clone()
            .unwrap_or_else(|| default_out(&args.sweep))
            .display()
    );
    let out = args.out.clone().unwrap_or_else(|| default_out(&args.sweep));
    let model = Arc::new(scenario::models::default_model()?);
    if let Some(manifest) = &args.worker {
        let task = args.task.context("--worker needs --task")?;
        return worker(&plan, &out, manifest, task, args.chunk, &model);
    }
    if !args.merge {
        // Every configuration is checked before anything is written or run.
        tracing::info!("checking {} configurations", plan.points());
        execute::check(&plan, &model)?;
    }
    prepare(&plan, &out)?;
    if args.merge {
        return merge(&plan, &out);
    }
    if args.slurm {
        return slurm::submit(&plan, &out, args);
    }
    local(&plan, &out, args.jobs.map(usize::from), &model)?;
    merge(&plan, &out)
}

/// `results/<sweep file name without .toml>`.
fn default_out(sweep: &Path) -> PathBuf {
    let stem = sweep
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sweep".into());
    PathBuf::from("results").join(stem)
}

/// Creates the results directory and records the sweep; refuses a directory that holds the
/// results of a different sweep.
fn prepare(plan: &Plan, out: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out.join("runs"))
        .with_context(|| format!("cannot create {}", out.display()))?;
    let mut record = OutputDir::create(out)?;
    // A replay sweep's sweep.toml holds everything; a site sweep also records its site.
    let records: &[(&str, &String)] = if plan.is_replay() {
        &[("sweep.toml", &plan.text)]
    } else {
        &[("sweep.toml", &plan.text), ("site.toml", &plan.site_text)]
    };
    for &(name, text) in records {
        let path = out.join(name);
        match std::fs::read_to_string(&path) {
            Ok(existing) if &existing == text => {}
            Ok(_) => anyhow::bail!(
                "{} holds the results of a different sweep ({} differs); use another --out",
                out.display(),
                path.display()
            ),
            Err(_) => record.write(name, text.as_bytes())?,
        }
    }
    record.commit()?;
    Ok(())
}

/// Runs still without a result.
pub fn missing<'p>(plan: &'p Plan, out: &Path) -> Vec<&'p Run> {
    plan.runs
        .iter()
        .filter(|run| results::read_result(out, run).is_none())
        .collect()
}

/// Simulates one run and writes its result file.
fn execute(
    plan: &Plan,
    out: &Path,
    run: &Run,
    model: &Arc<usermodel::Model>,
) -> anyhow::Result<()> {
    tracing::debug!("run {}: starting", run.id);
    let result = execute::execute(plan, run, model)?;
    let mut dir = OutputDir::create(&out.join("runs"))?;
    dir.write_json(&run.file, &result)?;
    dir.commit()?;
    Ok(())
}

/// Runs the missing runs here, `jobs` at a time, with a progress bar on a terminal.
fn local(
    plan: &Plan,
    out: &Path,
    jobs: Option<usize>,
    model: &Arc<usermodel::Model>,
) -> anyhow::Result<()> {
    let todo = missing(plan, out);
    let threads =
        jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    say!(
        "sweep: {} runs ({} configurations x {} seeds); {} already done, {} to run on {} threads",
        plan.runs.len(),
        plan.points(),
        plan.seeds.len(),
        plan.runs.len() - todo.len(),
        todo.len(),
        threads
    )?;
    if todo.is_empty() {
        return Ok(());
    }
    let clock = Instant::now();
    let bar = ProgressBar::new(todo.len() as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {pos}/{len} runs, {elapsed_precise} elapsed, about {eta} left",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let threads = threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    // Longest runs first, each thread taking the next run as it finishes one: the last runs
    // are the shortest, so the threads finish together (rather than one thread running a long
    // run alone at the end).
    let order = longest_first(plan, &todo);
    let next = AtomicUsize::new(0);
    let outcome: Vec<Mutex<Option<anyhow::Result<()>>>> =
        todo.iter().map(|_| Mutex::new(None)).collect();
    pool.scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|_| {
                while let Some(&k) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let result = execute(plan, out, todo[k], model);
                    bar.inc(1);
                    if let Ok(mut slot) = outcome[k].lock() {
                        *slot = Some(result);
                    }
                }
            });
        }
    });
    bar.finish_and_clear();
    let failures: Vec<String> = outcome
        .into_iter()
        .filter_map(|slot| match slot.into_inner() {
            Ok(Some(Ok(()))) => None,
            Ok(Some(Err(e))) => Some(format!("{e:#}")),
            Ok(None) | Err(_) => Some("a run did not finish (a thread panicked)".to_string()),
        })
        .collect();
    if let Some(first) = failures.first() {
        anyhow::bail!(
            "{} runs failed (the others are kept; rerun to retry): {first}",
            failures.len()
        );
    }
    say!(
        "sweep: {} runs in {:.1} s",
        todo.len(),
        clock.elapsed().as_secs_f64()
    )?;
    Ok(())
}

/// The indexes of `todo` in the order to run them: by decreasing cost, estimated as the site's
/// users times its weeks (the simulated jobs grow with both), or a replay's trace file size,
/// ties in sweep order. A run whose site or trace cannot be read counts as cheap; running it
/// reports the error.
fn longest_first(plan: &Plan, todo: &[&Run]) -> Vec<usize> {
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

/// A Slurm array task: the runs of lines [task * chunk, (task + 1) * chunk) of the manifest.
fn worker(
    plan: &Plan,
    out: &Path,
    manifest: &Path,
    task: usize,
    chunk: usize,
    model: &Arc<usermodel::Model>,
) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(manifest)
        .with_context(|| format!("cannot read {}", manifest.display()))?;
    let ids: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let chunk = chunk.max(1);
    let start = task.saturating_mul(chunk).min(ids.len());
    let end = start.saturating_add(chunk).min(ids.len());
    for id in &ids[start..end] {
        let run = plan
            .runs
            .iter()
            .find(|r| r.id == *id)
            .with_context(|| format!("{}: run {id} is not in the sweep", manifest.display()))?;
        if results::read_result(out, run).is_some() {
            continue;
        }
        execute(plan, out, run, model)?;
        say!("done {id}")?;
    }
    Ok(())
}

/// Builds results.csv from the run results and prints the headline measures.
fn merge(plan: &Plan, out: &Path) -> anyhow::Result<()> {
    let csv = results::table(plan, out)?;
    let mut dir = OutputDir::create(out)?;
    dir.write("results.csv", csv.as_bytes())?;
    crate::output::commit_and_list(dir)?;
    crate::console::say(&headline::headline(plan, &csv)?)
}
