//! `sitesim synth`: Streit's synthetic job sets (paper 002, section 4) from a trace.

use anyhow::Context;
use engine::Replay;
use fit::jobset::{JobSetModel, SetJob};
use rand::SeedableRng;
use rand_pcg::Pcg64;

use crate::cli::SynthArgs;
use crate::say;

/// Runs the command.
pub fn run(args: &SynthArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.jobs > 0, "--jobs 0: generate at least one job");
    anyhow::ensure!(
        args.shrink.is_finite() && args.shrink > 0.0,
        "--shrink must be a number > 0, got {}",
        args.shrink
    );
    tracing::info!("reading {}", args.trace.display());
    let replay = Replay::read(&args.trace, args.processors)?;
    tracing::info!(jobs = replay.jobs.len(), "fitting Streit's job-set model");
    let jobs: Vec<SetJob> = replay
        .jobs
        .iter()
        .map(|j| SetJob {
            submit: j.submit,
            processors: j.processors,
            estimate: j.estimate,
            runtime: j.runtime,
        })
        .collect();
    let mut model = JobSetModel::fit(&jobs).with_context(|| args.trace.display().to_string())?;
    let fitted = (model.alpha, model.beta);
    if let Some(text) = &args.weibull {
        let parts: Vec<&str> = text.split(',').collect();
        let values: Vec<f64> = parts.iter().filter_map(|p| p.trim().parse().ok()).collect();
        anyhow::ensure!(
            parts.len() == 2
                && values.len() == 2
                && values.iter().all(|v| v.is_finite() && *v > 0.0),
            "--weibull {text:?}: give ALPHA,BETA, two numbers > 0 (BETA in seconds)"
        );
        (model.alpha, model.beta) = (values[0], values[1]);
    }
    let mut rng = Pcg64::seed_from_u64(args.seed);
    let set = model.generate(args.jobs, args.shrink, &mut rng);

    let mut header = swf::Header::new();
    header.push_field("Version", "2.2");
    header.push_field("Computer", "sitesim synthetic job set");
    header.push_field("Installation", args.trace.display());
    header.push_field(
        "Note",
        format!(
            "Streit's job-set model: Weibull inter-arrival alpha {:.4}, beta {:.2} s; {} (width, estimate, runtime) cells; shrinking factor {}; seed {}; sitesim {}",
            model.alpha,
            model.beta,
            model.cells.len(),
            args.shrink,
            args.seed,
            env!("CARGO_PKG_VERSION")
        ),
    );
    header.push_field("MaxJobs", set.len());
    header.push_field("MaxRecords", set.len());
    header.push_field("MaxNodes", replay.processors);
    header.push_field("MaxProcs", replay.processors);
    let records: Vec<swf::Record> = set
        .iter()
        .enumerate()
        .map(|(i, j)| swf::Record {
            job_number: i as i64 + 1,
            submit_time: j.submit,
            run_time: j.runtime,
            allocated_processors: i64::from(j.processors),
            requested_processors: i64::from(j.processors),
            requested_time: j.estimate,
            status: 1,
            ..swf::Record::default()
        })
        .collect();
    let mut out = crate::output::OutputDir::detached();
    out.write_path(&args.out, |w| {
        scenario::output::write_swf(&header, &records, w)
            .map_err(|e| std::io::Error::other(e.to_string()))
    })?;
    out.commit()?;
    say!(
        "{}: {} jobs analysed; inter-arrival times fit Weibull alpha = {:.4}, beta = {:.2} s; the trace's mean {:.1} s; {} (width, estimate, runtime) cells",
        args.trace.display(),
        jobs.len(),
        fitted.0,
        fitted.1,
        model.mean_interarrival,
        model.cells.len()
    )?;
    say!(
        "generating with Weibull alpha = {:.4}, beta = {:.2} s (mean {:.1} s){}",
        model.alpha,
        model.beta,
        model.weibull_mean(),
        if args.weibull.is_some() {
            ", as given"
        } else {
            ""
        }
    )?;
    say!(
        "wrote {} ({} jobs over {:.1} days, shrinking factor {})",
        args.out.display(),
        set.len(),
        set.last().map_or(0, |j| j.submit) as f64 / 86_400.0,
        args.shrink
    )?;
    Ok(())
}
