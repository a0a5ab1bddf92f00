//! Scale-out on Slurm: the missing runs of a sweep as one job array.
//!
//! `sitesim sweep SWEEP --out OUT --slurm` lists the runs still without a result in a manifest,
//! writes an sbatch script whose array task `i` runs lines `[i * chunk, (i + 1) * chunk)` of it
//! (by calling this binary in worker mode), and submits it (or, with `--dry-run`, only writes it).
//! Each run writes its own result file, so tasks never share output. When the array is done,
//! `--merge` builds the table; if tasks failed, the same `--slurm` command submits what is still
//! missing. The binary, the sweep file and OUT must be on a file system the compute nodes see.

use std::fmt::Write as _;
use std::process::Command;

use anyhow::Context;

use crate::cli::SweepArgs;
use crate::output::OutputDir;
use crate::say;
use crate::shell::quote;
use scenario::sweep::plan::Plan;
use scenario::sweep::runner::{self, Directory};

/// Writes (and unless `--dry-run`, submits) the job array for the missing runs.
pub fn submit(plan: &Plan, store: &Directory, args: &SweepArgs) -> anyhow::Result<()> {
    let out = store.path();
    let todo = runner::missing(plan, store);
    if todo.is_empty() {
        say!(
            "sweep: all {} runs have results; build the table with --merge",
            plan.runs.len()
        )?;
        return Ok(());
    }
    let chunk = args.chunk.max(1);
    let tasks = todo.len().div_ceil(chunk);
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
    let script = dir.join(format!("sweep-{number}.sbatch"));
    let mut ids = String::new();
    for run in &todo {
        ids.push_str(&run.id);
        ids.push('\n');
    }
    let mut text = String::from("#!/bin/bash\n#SBATCH --job-name=sitesim-sweep\n");
    let _ = writeln!(text, "#SBATCH --array=0-{}", tasks - 1);
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
        "# Written by `sitesim sweep --slurm`: {} runs of {} in {tasks} tasks of up to {chunk}.\nset -euo pipefail",
        todo.len(),
        sweep.display()
    );
    let _ = writeln!(
        text,
        "exec {} sweep {} --out {} --worker {} --task \"$SLURM_ARRAY_TASK_ID\" --chunk {chunk}",
        quote(&exe.display().to_string()),
        quote(&sweep.display().to_string()),
        quote(&out.display().to_string()),
        quote(&manifest.display().to_string())
    );
    let mut files = OutputDir::create(&dir)?;
    files.write(&format!("manifest-{number}.txt"), ids.as_bytes())?;
    files.write(&format!("sweep-{number}.sbatch"), text.as_bytes())?;
    files.commit()?;

    if args.dry_run {
        say!(
            "wrote {} ({} runs in {tasks} array tasks); submit it with: sbatch {}",
            script.display(),
            todo.len(),
            script.display()
        )?;
        return Ok(());
    }
    let submitted = Command::new("sbatch")
        .arg("--parsable")
        .arg(&script)
        .output()
        .context("cannot run sbatch (is Slurm installed here? --dry-run only writes the script)")?;
    anyhow::ensure!(
        submitted.status.success(),
        "sbatch refused {}: {}",
        script.display(),
        String::from_utf8_lossy(&submitted.stderr).trim()
    );
    let job = String::from_utf8_lossy(&submitted.stdout)
        .trim()
        .to_string();
    say!(
        "submitted job array {job}: {} runs in {tasks} tasks (script {})",
        todo.len(),
        script.display()
    )?;
    say!(
        "when it is done: sitesim sweep {} --out {} --merge   (rerun with --slurm to resubmit failed runs)",
        quote(&args.sweep.display().to_string()),
        quote(&out.display().to_string())
    )?;
    Ok(())
}
