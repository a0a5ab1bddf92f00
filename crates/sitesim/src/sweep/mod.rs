//! `sitesim sweep`: a grid of site-level runs or trace replays (schedulers x parameters x seeds;
//! scenario's `sweep` module says what a run is), run in parallel here or as a Slurm job array,
//! with a results table of means, confidence intervals and paired differences.
//!
//! Layout of the results directory:
//!
//! ```text
//! OUT/sweep.toml      the sweep file, and OUT/site.toml the population file it starts from
//!                     (a replay sweep has none)
//! OUT/runs/results-*.csv  a row per finished run, in a file per process or Slurm array task
//!                     (a complete row is a finished run; a million runs make a handful of files)
//! OUT/runs/*/         with `outputs = [...]`: each run's output files
//! OUT/results.csv     the table (mean, 95 % CI, paired differences against the baseline)
//! OUT/runs.csv        with --per-seed, the per-seed table: a row per run and measure (axes by
//!                     name, seed, value)
//! OUT/slurm/          sbatch scripts, manifests of the runs they were given, task logs
//! ```
//!
//! A sweep that stopped part-way (killed, a failed Slurm task) is completed by running the same
//! command again: runs with a result file are not redone.

mod headline;
mod slurm;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::SweepArgs;
use crate::output::OutputDir;
use crate::say;
use scenario::store::Store as _;
use sweep::plan::Plan;
use sweep::runner::{self, Directory, ResultStore};

/// Runs the command.
pub fn run(args: &SweepArgs) -> anyhow::Result<()> {
    tracing::info!("reading {}", args.sweep.display());
    let plan = Plan::load(&args.sweep)?;
    let out = args.out.clone().unwrap_or_else(|| default_out(&args.sweep));
    tracing::info!("{} runs; results in {}", plan.run_count(), out.display());
    let model = Arc::new(config::models::default_model()?);
    if let Some(manifest) = &args.worker {
        let task = args.task.context("--worker needs --task")?;
        let chunk = args.chunk.context("--worker needs --chunk")?;
        let chunk = usize::try_from(chunk).context("--chunk is too large")?;
        return worker(&plan, &out, manifest, task, chunk, &model);
    }
    if !args.merge {
        // Every configuration is checked before anything is written or run.
        tracing::info!("checking {} configurations", plan.points());
        runner::check(&plan, &model)?;
    }
    if args.merge {
        return merge(&plan, &Directory::existing(&plan, &out)?, args.per_seed);
    }
    let store = Directory::prepare(&plan, &out)?;
    if args.slurm {
        return slurm::submit(&plan, &store, args);
    }
    local(&plan, &store, args.jobs.map(usize::from), &model)?;
    merge(&plan, &store, args.per_seed)
}

/// `results/<sweep file name without .toml>`.
fn default_out(sweep: &Path) -> PathBuf {
    let stem = sweep
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sweep".into());
    PathBuf::from("results").join(stem)
}

/// Runs the missing runs here, `jobs` at a time, with a progress bar on a terminal.
fn local(
    plan: &Plan,
    store: &Directory,
    jobs: Option<usize>,
    model: &Arc<usermodel::Model>,
) -> anyhow::Result<()> {
    let todo = runner::missing(plan, store).len();
    let threads = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, todo.max(1));
    say!(
        "sweep: {} runs ({} configurations x {} seeds); {} already done, {} to run on {} threads",
        plan.run_count(),
        plan.points(),
        plan.seeds.len(),
        plan.run_count() - todo,
        todo,
        threads
    )?;
    if todo == 0 {
        return Ok(());
    }
    let clock = Instant::now();
    let bar = ProgressBar::new(todo as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {pos}/{len} runs, {elapsed_precise} elapsed, about {eta} left",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let ran = runner::run_missing(plan, store, model, threads, &|| bar.inc(1), None);
    bar.finish_and_clear();
    let ran = ran?;
    say!(
        "sweep: {} runs in {:.1} s",
        ran.runs,
        clock.elapsed().as_secs_f64()
    )?;
    Ok(())
}

/// A Slurm array task: the runs of lines [task * chunk, (task + 1) * chunk) of the manifest
/// (each line a run's index and id), its results in a file of its own.
fn worker(
    plan: &Plan,
    out: &Path,
    manifest: &Path,
    task: usize,
    chunk: usize,
    model: &Arc<usermodel::Model>,
) -> anyhow::Result<()> {
    let text = config::files::read_text(
        manifest,
        config::files::MAX_MANIFEST_BYTES,
        "sweep manifest",
    )?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let chunk = chunk.max(1);
    let start = task.saturating_mul(chunk).min(lines.len());
    let end = start.saturating_add(chunk).min(lines.len());
    let stem = manifest
        .file_stem()
        .map_or_else(|| "manifest".into(), |s| s.to_string_lossy().into_owned());
    let store = Directory::for_task(plan, out, &format!("results-task-{stem}-{task}.csv"))?;
    for (number, line) in lines.iter().enumerate().take(end).skip(start) {
        let run = slurm::manifest_run(plan, line)
            .with_context(|| format!("{}: line {}: {line:?}", manifest.display(), number + 1))?;
        if store.has(&run) {
            continue;
        }
        store.keep(&run, !plan.outputs.is_empty(), &mut |outputs| {
            runner::execute(plan, &run, model, outputs, None)
        })?;
        say!("done {}", run.id)?;
    }
    Ok(())
}

/// Tables of at most this many configurations are printed in full; a bigger sweep's headline
/// shows its first ones (results.csv has them all).
const HEADLINE_POINTS: usize = 200;

/// Builds results.csv, and with `per_seed` runs.csv, from the runs' results (each written as
/// it is made, so a million runs need no more memory than ten) and prints the headline
/// measures.
fn merge(plan: &Plan, store: &Directory, per_seed: bool) -> anyhow::Result<()> {
    let mut dir = OutputDir::create(store.path())?;
    {
        let mut table = dir.create("results.csv")?;
        sweep::results::write_table(plan, store.rows(plan)?.as_mut(), &mut table)?;
        if per_seed {
            let mut runs = dir.create("runs.csv")?;
            sweep::results::write_per_seed_table(plan, store.rows(plan)?.as_mut(), &mut runs)?;
        }
    }
    crate::output::commit_and_list(dir)?;
    // The headline's configurations: the first rows of the table just written.
    let shown = plan.points().min(HEADLINE_POINTS);
    let head = sweep::results::table_head(
        &store.path().join("results.csv"),
        shown * plan.tabulated().len(),
    )?;
    let mut text = headline::headline(plan, &head)?;
    if shown < plan.points() {
        text.push_str(&format!(
            "(the first {shown} of {} configurations; results.csv has them all)\n",
            plan.points()
        ));
    }
    crate::console::say(&text)
}
