//! Scale-out on Slurm: the missing runs of a sweep as job arrays.
//!
//! `sitesim sweep SWEEP --out OUT --slurm` lists the runs still without a result in a manifest
//! (a line per run: its index and id), writes sbatch scripts whose array task `i` runs lines
//! `[i * chunk, (i + 1) * chunk)` of it (by calling this binary in worker mode), and submits
//! them (or, with `--dry-run`, only writes them). A cluster takes arrays of at most
//! `MaxArraySize` tasks (1001 by default), so the tasks are split into as many arrays as that
//! needs, each script adding its offset to the task number. Each task appends its results to
//! a file of its own, so tasks never share output. When the arrays are done, `--merge` builds
//! the table; if tasks failed, the same `--slurm` command submits what is still missing. The
//! binary, the sweep file and OUT must be on a file system the compute nodes see.

use std::fmt::Write as _;
use std::process::Command;

use anyhow::Context;

use crate::cli::SweepArgs;
use crate::output::OutputDir;
use crate::say;
use crate::shell::quote;
use sweep::plan::{Plan, Run};
use sweep::runner::{self, Directory};

/// Slurm's default `MaxArraySize`: array indexes run from 0 to 1000.
pub const DEFAULT_MAX_ARRAY_SIZE: usize = 1001;

/// A manifest line's run: `INDEX<tab>ID` (the id must be that run's), or an id alone (manifests
/// written before the index was).
pub fn manifest_run(plan: &Plan, line: &str) -> anyhow::Result<Run> {
    let line = line.trim_end_matches(['\r', '\n']);
    match line.split_once('\t') {
        Some((index, id)) => {
            let run = index
                .trim()
                .parse::<usize>()
                .ok()
                .and_then(|k| plan.run(k))
                .with_context(|| format!("{index:?} is not a run number of this sweep"))?;
            anyhow::ensure!(
                run.id == id,
                "run {index} of this sweep is {}, not {id}",
                run.id
            );
            Ok(run)
        }
        None => plan
            .runs()
            .find(|r| r.id == line)
            .with_context(|| format!("run {line} is not in the sweep")),
    }
}

/// The cluster's `MaxArraySize` from `scontrol show config`; `None` when it cannot be read.
fn cluster_max_array_size() -> Option<usize> {
    let output = Command::new("scontrol")
        .args(["show", "config"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    parse_max_array_size(&String::from_utf8_lossy(&output.stdout))
}

/// `MaxArraySize` from the text of `scontrol show config` (`MaxArraySize = 1001`).
fn parse_max_array_size(config: &str) -> Option<usize> {
    config.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "MaxArraySize").then(|| value.trim().parse().ok())?
    })
}

/// Runs per task when none is given: the fewest that put `runs` into one array of at most
/// `max_array_size` tasks, so a big sweep is as many tasks as the cluster takes at once (a
/// million runs of 2 ms each are 1000 tasks of 1000 runs, not 100,000 tasks of 10) and a small
/// one is a task per run.
pub fn chunk_for(runs: usize, max_array_size: usize) -> usize {
    runs.div_ceil(max_array_size.max(1)).max(1)
}

/// The arrays `tasks` tasks make on a cluster taking arrays of at most `max_array_size` tasks:
/// each array's first task number and its number of tasks.
pub fn split_arrays(tasks: usize, max_array_size: usize) -> Vec<(usize, usize)> {
    let size = max_array_size.max(1);
    (0..tasks)
        .step_by(size)
        .map(|first| (first, size.min(tasks - first)))
        .collect()
}

/// Writes (and unless `--dry-run`, submits) the job arrays for the missing runs.
pub fn submit(plan: &Plan, store: &Directory, args: &SweepArgs) -> anyhow::Result<()> {
    let out = store.path();
    let todo = runner::missing(plan, store);
    if todo.is_empty() {
        say!(
            "sweep: all {} runs have results; build the table with --merge",
            plan.run_count()
        )?;
        return Ok(());
    }
    let (max_array_size, from) = match args.max_array_size {
        Some(n) => (n as usize, "--max-array-size"),
        None => match cluster_max_array_size() {
            Some(n) => (n, "the cluster's MaxArraySize"),
            None => (DEFAULT_MAX_ARRAY_SIZE, "Slurm's default MaxArraySize"),
        },
    };
    anyhow::ensure!(
        max_array_size >= 1,
        "{from} is 0: the cluster takes no job arrays"
    );
    let chunk = match args.chunk {
        Some(chunk) => usize::try_from(chunk).unwrap_or(usize::MAX),
        None => chunk_for(todo.len(), max_array_size),
    };
    let tasks = todo.len().div_ceil(chunk);
    let arrays = split_arrays(tasks, max_array_size);
    let exe = std::env::current_exe().context("cannot find the sitesim binary's path")?;
    let sweep = args
        .sweep
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", args.sweep.display()))?;
    let out = out
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", out.display()))?;
    let dir = out.join("slurm");
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| format!("cannot create {}", logs.display()))?;
    anyhow::ensure!(
        !logs.display().to_string().contains(char::is_whitespace),
        "--slurm needs a results directory without spaces in its path ({})",
        out.display()
    );
    // A new number for each submission keeps earlier manifests (and their tasks) intact.
    let number = (1..)
        .find(|n| !dir.join(format!("manifest-{n}.txt")).exists())
        .unwrap_or(1);
    let manifest = dir.join(format!("manifest-{number}.txt"));
    let mut lines = String::new();
    for run in todo.iter().filter_map(|&k| plan.run(k)) {
        let _ = writeln!(lines, "{}\t{}", run.index, run.id);
    }
    let mut files = OutputDir::create(&dir)?;
    files.write(&format!("manifest-{number}.txt"), lines.as_bytes())?;
    let mut scripts = Vec::new();
    for (part, &(first, count)) in arrays.iter().enumerate() {
        let name = match arrays.len() {
            1 => format!("sweep-{number}.sbatch"),
            _ => format!("sweep-{number}-{}.sbatch", part + 1),
        };
        let mut text = String::from("#!/bin/bash\n#SBATCH --job-name=sitesim-sweep\n");
        let _ = writeln!(text, "#SBATCH --array=0-{}", count - 1);
        text.push_str("#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n");
        let _ = writeln!(text, "#SBATCH --output={}/%A_%a.out", logs.display());
        if let Some(partition) = &args.partition {
            let _ = writeln!(text, "#SBATCH --partition={partition}");
        }
        if let Some(time) = &args.time {
            let _ = writeln!(text, "#SBATCH --time={time}");
        }
        let _ = writeln!(
            text,
            "# Written by `sitesim sweep --slurm`: {} runs of {} in {tasks} tasks of up to {chunk};\n\
             # this array is tasks {first} to {} ({} of {} arrays: {from} is {max_array_size}).\nset -euo pipefail",
            todo.len(),
            sweep.display(),
            first + count - 1,
            part + 1,
            arrays.len(),
        );
        let _ = writeln!(
            text,
            "exec {} sweep {} --out {} --worker {} --task \"$((SLURM_ARRAY_TASK_ID + {first}))\" --chunk {chunk}",
            quote(&exe.display().to_string()),
            quote(&sweep.display().to_string()),
            quote(&out.display().to_string()),
            quote(&manifest.display().to_string())
        );
        files.write(&name, text.as_bytes())?;
        scripts.push(dir.join(name));
    }
    files.commit()?;

    let listed = scripts
        .iter()
        .map(|s| s.display().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    if args.dry_run {
        say!(
            "wrote {} ({} runs in {tasks} array tasks of {chunk} runs at most, {} array{} of at most {max_array_size} tasks); submit with: {}",
            listed,
            todo.len(),
            arrays.len(),
            if arrays.len() == 1 { "" } else { "s" },
            scripts
                .iter()
                .map(|s| format!("sbatch {}", s.display()))
                .collect::<Vec<_>>()
                .join("; ")
        )?;
        return Ok(());
    }
    let mut jobs = Vec::new();
    for script in &scripts {
        let submitted = Command::new("sbatch")
            .arg("--parsable")
            .arg(script)
            .output()
            .context(
                "cannot run sbatch (is Slurm installed here? --dry-run only writes the scripts)",
            )?;
        anyhow::ensure!(
            submitted.status.success(),
            "sbatch refused {}: {}{}",
            script.display(),
            String::from_utf8_lossy(&submitted.stderr).trim(),
            match jobs.len() {
                0 => String::new(),
                n => format!(
                    " ({n} arrays were submitted before it: {})",
                    jobs.join(", ")
                ),
            }
        );
        jobs.push(
            String::from_utf8_lossy(&submitted.stdout)
                .trim()
                .to_string(),
        );
    }
    say!(
        "submitted job array{} {}: {} runs in {tasks} tasks (scripts {listed})",
        if jobs.len() == 1 { "" } else { "s" },
        jobs.join(", "),
        todo.len(),
    )?;
    say!(
        "when they are done: sitesim sweep {} --out {} --merge   (rerun with --slurm to resubmit failed runs)",
        quote(&args.sweep.display().to_string()),
        quote(&out.display().to_string())
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_respect_the_largest_size() {
        assert_eq!(split_arrays(10_000, 1001).len(), 10);
        assert!(split_arrays(10_000, 1001).iter().all(|&(_, n)| n <= 1001));
        assert_eq!(split_arrays(10_000, 1001)[9], (9009, 991));
        assert_eq!(split_arrays(3, 1001), vec![(0, 3)]);
        assert_eq!(split_arrays(4, 2), vec![(0, 2), (2, 2)]);
    }

    #[test]
    fn chunks_fit_the_runs_into_one_array() {
        // A million runs: one array of at most 1001 tasks, not 100,000 tasks of 10 runs.
        let chunk = chunk_for(1_000_000, 1001);
        assert_eq!(chunk, 1000);
        assert_eq!(split_arrays(1_000_000usize.div_ceil(chunk), 1001).len(), 1);
        // A small sweep: a task per run.
        assert_eq!(chunk_for(250, 1001), 1);
        assert_eq!(chunk_for(1001, 1001), 1);
        assert_eq!(chunk_for(1002, 1001), 2);
        // Degenerate inputs still give at least one run per task.
        assert_eq!(chunk_for(0, 1001), 1);
        assert_eq!(chunk_for(5, 0), 5);
    }

    #[test]
    fn max_array_size_is_read_from_scontrol() {
        let config = "MailProg                = /bin/mail\nMaxArraySize            = 40001\nMaxJobCount = 10000\n";
        assert_eq!(parse_max_array_size(config), Some(40001));
        assert_eq!(parse_max_array_size("MaxJobCount = 1\n"), None);
    }
}
