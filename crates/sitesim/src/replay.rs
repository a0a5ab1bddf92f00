//! `sitesim replay`: replay of an SWF trace, open-loop or with feedback (the work is
//! `scenario::replay`).

use std::time::Instant;

use anyhow::Context;
use scenario::Simulation;
use scenario::replay::FeedbackRun;

use crate::cli::ReplayArgs;
use crate::console;
use crate::output::OutputDir;
use crate::progress::Progress;
use crate::report;
use crate::say;

/// Runs the command.
pub fn run(args: &ReplayArgs) -> anyhow::Result<()> {
    let (spec, options) = config::options::replay(&args.values)?;
    let clock = Instant::now();
    tracing::info!(
        "replaying {} under {}",
        options.trace.display(),
        spec.label()
    );
    // Outputs are written while it runs, into temporary files placed together once all are.
    let mut out = args
        .path("out")
        .as_deref()
        .map(|dir| OutputDir::for_outputs(dir, args.switch("force")))
        .transpose()?;
    let requested: &[&str] = if args.switch("batsim_jobs") {
        &["batsim_jobs.csv"]
    } else {
        &[]
    };
    let formats = scenario::output::formats(requested);
    let mut progress = Progress::new("replaying");
    let mut tick = |t| progress.tick(t);
    let mut simulation = Simulation::replay(spec, options)
        .progress(&mut tick)
        .measure_options(&args.values)?;
    if let Some(out) = out.as_mut() {
        simulation = simulation.outputs(&formats, out);
    }
    let executed = simulation.execute()?;
    progress.finish();
    tracing::info!(seconds = clock.elapsed().as_secs_f64(), "simulated");
    let replay = executed
        .replay()
        .context("a replay gave no replay measures")?;
    let summary = replay.summary();
    tracing::info!(seconds = clock.elapsed().as_secs_f64(), "summarized");
    tracing::debug!(jobs = replay.jobs, "measured");

    let mut table = format!("{}\n", replay.title());
    for (reason, text) in &replay.conversion {
        let label = if reason == "lines" { "input" } else { "" };
        table.push_str(&format!("  {label:<12} {text}\n"));
    }
    // A dump's machine size is its peak use unless given: say so where the size is read.
    if !replay.conversion.is_empty()
        && replay.options.processors.is_none()
        && replay.nodes.is_none()
    {
        table.push_str(&format!(
            "  {:<12} {} processors: the most the trace's jobs held at once, a guess (a sacct dump or GPU trace does not record the machine's size); --processors sets it\n",
            "machine", replay.processors
        ));
    }
    if let Some(requests) = &replay.requests {
        table.push_str(&format!(
            "  {:<12} each job's resources and shape from {requests} (written beside the trace by sitesim convert)\n",
            "requests"
        ));
    }
    if let Some(feedback) = &replay.feedback {
        table.push_str(&feedback_lines(feedback));
    }
    if let Some(line) = replay.slurm.as_ref().and_then(|s| s.never_started_line()) {
        table.push_str(&line);
    }
    table.push_str(&replay.outage_lines());
    if let Some(nodes) = &replay.nodes {
        table.push_str(&format!("  {:<12} {}\n", "nodes", nodes.machine));
        if let Some(line) = nodes.held_line() {
            table.push_str(&line);
        }
    }
    let policy_usage = replay.policy_usage.as_ref().map(|p| p.measured());
    let slurm = replay.slurm.as_ref().map(|s| s.measured());
    let power = replay.measured_power();
    table.push_str(&report::summary_table(&metrics::MeasureInput {
        summary: &summary,
        closed_loop: replay.feedback.as_ref().map(|f| &f.closed),
        users: replay.feedback_users,
        policy_usage: policy_usage.as_ref(),
        slurm: slurm.as_ref(),
        power: power.as_ref(),
    }));
    if let Some(usage) = &replay.policy_usage {
        table.push('\n');
        table.push_str(&usage.table());
    }
    console::say(&table)?;

    match out {
        Some(out) => crate::output::commit_and_list(out)?,
        None => say!("(no --out given: nothing written)")?,
    }
    tracing::info!(seconds = clock.elapsed().as_secs_f64(), "done");
    Ok(())
}

/// Throughput and sessions of a replay with feedback, as `run` prints them.
fn feedback_lines(f: &FeedbackRun) -> String {
    let c = &f.closed;
    let n = &f.counts;
    let mut t = format!(
        "  throughput   {:.2} jobs/hour submitted, {:.2} completed (logged submit period)\n",
        c.submitted_per_hour, c.completed_per_hour
    );
    t.push_str(&format!(
        "  sessions     {} sessions, {:.2} jobs per session (median {}); {} delayed by their user's previous session\n",
        c.sessions, c.mean_session_jobs, c.median_session_jobs, n.delayed_sessions
    ));
    t.push_str(&format!(
        "  feedback     {} jobs after an earlier batch, {} starting sessions, {} outside sessions (no user or wait)\n",
        n.dependent_jobs, n.session_start_jobs, n.independent_jobs
    ));
    if let Some((a, b)) = f.abandon {
        t.push_str(&format!(
            "  abandonment  p = {a} / ({b} r + 1): {} sessions abandoned, {} jobs dropped\n",
            n.abandoned_sessions, n.dropped_jobs
        ));
    }
    t
}
