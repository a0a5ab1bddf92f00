//! `sitesim replay`: open-loop replay of an SWF trace (the work is `scenario::replay`).

use std::time::Instant;

use metrics::JobRecord;
use scenario::output::RunOutput;
use scenario::replay::{ReplayOptions, simulate_replay};

use crate::cli::ReplayArgs;
use crate::console;
use crate::output::OutputDir;
use crate::report;
use crate::say;

impl ReplayArgs {
    /// The library's replay options.
    pub fn options(&self) -> ReplayOptions {
        ReplayOptions {
            trace: self.trace.clone(),
            processors: self.processors,
            first_jobs: self.first_jobs,
            load_factor: self.load_factor,
            estimates: self.estimates.options(),
            machine: self.machine.options(),
            warmup: self.warmup,
            fairness: self.fairness,
        }
    }
}

/// Runs the command.
pub fn run(args: &ReplayArgs) -> anyhow::Result<()> {
    let spec = crate::cli::spec(&args.scheduler, &args.params)?;
    let clock = Instant::now();
    let replay = simulate_replay(spec, &args.options())?;
    tracing::info!(seconds = clock.elapsed().as_secs_f64(), "simulated");

    // The per-job table is written while the summary is computed.
    let mut out = args.out.as_deref().map(OutputDir::create).transpose()?;
    let (summary, written) = std::thread::scope(|scope| {
        let writer = out
            .as_mut()
            .map(|out| scope.spawn(|| write_jobs(out, &replay.records)));
        let summary = replay.summary();
        let written = writer.map(|w| w.join());
        (summary, written)
    });
    match written {
        Some(Ok(result)) => result?,
        Some(Err(_)) => anyhow::bail!("writing jobs.csv failed unexpectedly"),
        None => {}
    }
    tracing::info!(seconds = clock.elapsed().as_secs_f64(), "summarized");

    let mut table = report::summary_table(&replay.title(), &summary);
    if let Some(usage) = &replay.policy_usage {
        table.push('\n');
        table.push_str(&usage.table());
    }
    console::say(&table)?;

    if let Some(mut out) = out {
        let summary_json = scenario::output::render_json(&replay.report(&summary))?;
        let view = RunOutput {
            records: &replay.records,
            sessions: None,
            batches: None,
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
        batches: None,
        summary_json: "",
    };
    out.write_format(&scenario::output::JobsCsv, &view)
}
