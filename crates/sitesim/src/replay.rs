//! `sitesim replay`: open-loop replay of an SWF trace.

use std::time::Instant;

use anyhow::Context;
use cluster::Cluster;
use engine::Replay;
use metrics::{JobRecord, Summary, SummaryOptions};
use serde::Serialize;

use crate::cli::ReplayArgs;
use crate::console;
use crate::output::OutputDir;
use crate::report;
use crate::say;
use scenario::output::RunOutput;

/// What `summary.json` holds for a replay.
#[derive(Serialize)]
struct ReplayReport<'a> {
    tool: &'static str,
    version: &'static str,
    command: &'static str,
    trace: String,
    scheduler: String,
    load_factor: f64,
    /// The estimate model that replaced the trace's estimates, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    estimates: Option<String>,
    /// The machine of nodes and the sharing model, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    machine: Option<String>,
    /// Only the first N jobs were replayed.
    #[serde(skip_serializing_if = "Option::is_none")]
    first_jobs: Option<usize>,
    summary: &'a Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    policy_usage: Option<scenario::policy_usage::PolicyUsageReport>,
}

/// Runs the command.
pub fn run(args: &ReplayArgs) -> anyhow::Result<()> {
    let spec = crate::cli::spec(&args.scheduler, &args.params)?;
    anyhow::ensure!(
        args.load_factor.is_finite() && args.load_factor > 0.0,
        "--load-factor must be a number > 0, got {}",
        args.load_factor
    );
    let clock = Instant::now();
    let mut replay = Replay::read(&args.trace, args.processors)?;
    if let Some(n) = args.first_jobs {
        anyhow::ensure!(n > 0, "--first-jobs 0: replay at least one job");
        replay.jobs.truncate(n);
    }
    replay.scale_arrivals(args.load_factor);
    let estimates = scenario::estimates::apply(&args.estimates.options(), &mut replay.jobs)?;
    let machine = scenario::machine::apply(
        &args.machine.options(),
        args.estimates.seed,
        &mut replay.jobs,
    )?;
    tracing::info!(
        jobs = replay.jobs.len(),
        processors = replay.processors,
        seconds = clock.elapsed().as_secs_f64(),
        "trace read"
    );
    let processors = replay.processors;
    let input = replay.input;
    let mut cluster = match machine.nodes {
        None => Cluster::new(processors, spec.build()),
        Some(nodes) => Cluster::with_nodes(processors, spec.build(), nodes)
            .with_context(|| format!("--scheduler {}", spec.label()))?,
    };
    let options = engine::SimOptions {
        sharing: machine.sharing,
    };
    let mut records = engine::simulate_with(&mut cluster, &mut replay, &mut (), &options)
        .with_context(|| format!("replay of {} failed", args.trace.display()))?;
    tracing::info!(seconds = clock.elapsed().as_secs_f64(), "simulated");
    if args.fairness {
        engine::add_fair_start_times(processors, &mut records)
            .context("the fair-start simulation failed")?;
        tracing::info!(seconds = clock.elapsed().as_secs_f64(), "fair start times");
    }
    let policy_usage = cluster
        .policy_usage()
        .map(scenario::policy_usage::PolicyUsageReport::new);
    let options = SummaryOptions {
        processors,
        warmup: args.warmup.warmup(),
    };

    // The per-job table is written while the summary is computed.
    let mut out = args.out.as_deref().map(OutputDir::create).transpose()?;
    let (summary, written) = std::thread::scope(|scope| {
        let writer = out
            .as_mut()
            .map(|out| scope.spawn(|| write_jobs(out, &records)));
        let summary = Summary::compute(&records, &options, input);
        let written = writer.map(|w| w.join());
        (summary, written)
    });
    match written {
        Some(Ok(result)) => result?,
        Some(Err(_)) => anyhow::bail!("writing jobs.csv failed unexpectedly"),
        None => {}
    }
    tracing::info!(seconds = clock.elapsed().as_secs_f64(), "summarized");

    let load = if args.load_factor == 1.0 {
        String::new()
    } else {
        format!(", arrival times x {}", args.load_factor)
    };
    let with_estimates = estimates
        .as_ref()
        .map_or(String::new(), |e| format!(", estimates: {e}"));
    let with_machine = machine
        .description
        .as_ref()
        .map_or(String::new(), |m| format!(", {m}"));
    let first = args
        .first_jobs
        .map_or(String::new(), |n| format!(", first {n} jobs"));
    let title = format!(
        "replay of {} under {} on {} processors{first}{with_machine}{load}{with_estimates}",
        args.trace.display(),
        spec.label(),
        processors
    );
    let mut table = report::summary_table(&title, &summary);
    if let Some(usage) = &policy_usage {
        table.push('\n');
        table.push_str(&usage.table());
    }
    console::say(&table)?;

    if let Some(mut out) = out {
        let report = ReplayReport {
            tool: "sitesim",
            version: env!("CARGO_PKG_VERSION"),
            command: "replay",
            trace: args.trace.display().to_string(),
            scheduler: spec.label(),
            load_factor: args.load_factor,
            estimates,
            machine: machine.description.clone(),
            first_jobs: args.first_jobs,
            summary: &summary,
            policy_usage,
        };
        let summary_json = scenario::output::render_json(&report)?;
        let view = RunOutput {
            records: &records,
            sessions: None,
            summary_json: &summary_json,
        };
        out.write_format(&scenario::output::SummaryJson, &view)?;
        out.commit_and_list()?;
    } else {
        say!("(no --out given: nothing written)")?;
    }
    tracing::info!(seconds = clock.elapsed().as_secs_f64(), "done");
    Ok(())
}

fn write_jobs(out: &mut OutputDir, records: &[JobRecord]) -> anyhow::Result<()> {
    let view = RunOutput {
        records,
        sessions: None,
        summary_json: "",
    };
    out.write_format(&scenario::output::JobsCsv, &view)
}
