//! Streit's synthetic job sets (paper 002, section 4) from a trace (`sitesim synth`): fit the
//! job-set model (`fit::jobset`: Weibull inter-arrival times and the matrix of width, estimate
//! and runtime) to a trace's jobs, read as a replay reads them, and generate a job set of any
//! size as SWF.

use std::path::PathBuf;

use config::naming::key_value;
use config::{Result, ensure, invalid};
use fit::jobset::{JobSetModel, SetJob};
use rand::SeedableRng;
use rand_pcg::Pcg64;

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthOptions {
    /// The trace to analyse (SWF, plain or gzip-compressed).
    pub trace: PathBuf,
    /// Number of jobs to generate (Streit: 10,000).
    pub jobs: usize,
    /// Every inter-arrival time is multiplied by it (below 1 raises the load).
    pub shrink: f64,
    /// The random seed.
    pub seed: u64,
    /// Machine size written to the header (default: the trace's).
    pub processors: Option<u32>,
    /// A Weibull inter-arrival distribution `ALPHA,BETA` (BETA in seconds) instead of the
    /// fitted one.
    pub weibull: Option<String>,
}

/// A generated job set and what was fitted.
#[derive(Debug, Clone)]
pub struct JobSet {
    /// The SWF header (the model, the shrinking factor, the seed).
    pub header: swf::Header,
    /// The jobs, numbered from 1.
    pub records: Vec<swf::Record>,
    /// Jobs of the trace analysed.
    pub analysed: usize,
    /// The fitted Weibull (alpha, beta in seconds).
    pub fitted: (f64, f64),
    /// The Weibull generated with (alpha, beta): the fitted one or the one given.
    pub used: (f64, f64),
    /// The Weibull's mean inter-arrival time, seconds.
    pub used_mean: f64,
    /// The trace's mean inter-arrival time, seconds.
    pub trace_mean: f64,
    /// (width, estimate, runtime) cells of the model.
    pub cells: usize,
}

/// Fits the model to the trace and generates the job set.
pub fn synthesize(options: &SynthOptions) -> Result<JobSet> {
    ensure!(
        options.jobs > 0,
        "{}: generate at least one job",
        key_value("jobs", 0)
    );
    ensure!(
        options.shrink.is_finite() && options.shrink > 0.0,
        "{} must be a number > 0, got {}",
        config::naming::key("shrink"),
        options.shrink
    );
    let weibull = options
        .weibull
        .as_deref()
        .map(|text| {
            let parts: Vec<&str> = text.split(',').collect();
            let values: Vec<f64> = parts.iter().filter_map(|p| p.trim().parse().ok()).collect();
            match values[..] {
                [alpha, beta]
                    if parts.len() == 2 && values.iter().all(|v| v.is_finite() && *v > 0.0) =>
                {
                    Ok((alpha, beta))
                }
                _ => Err(invalid!(
                    "{}: give ALPHA,BETA, two numbers > 0 (BETA in seconds)",
                    key_value("weibull", format!("{text:?}"))
                )),
            }
        })
        .transpose()?;
    tracing::info!("reading {}", options.trace.display());
    let replay = engine::Replay::read(&options.trace, options.processors)?;
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
    let mut model =
        JobSetModel::fit(&jobs).map_err(|e| invalid!("{}: {e}", options.trace.display()))?;
    let fitted = (model.alpha, model.beta);
    if let Some((alpha, beta)) = weibull {
        (model.alpha, model.beta) = (alpha, beta);
    }
    let mut rng = Pcg64::seed_from_u64(options.seed);
    let set = model
        .generate(options.jobs, options.shrink, &mut rng)
        .map_err(|e| invalid!("{}: {e}", options.trace.display()))?;
    let mut header = swf::Header::new();
    header.push_field("Version", "2.2");
    header.push_field("Computer", "sitesim synthetic job set");
    header.push_field("Installation", options.trace.display());
    header.push_field(
        "Note",
        format!(
            "Streit's job-set model: Weibull inter-arrival alpha {:.4}, beta {:.2} s; {} (width, estimate, runtime) cells; shrinking factor {}; seed {}; sitesim {}",
            model.alpha,
            model.beta,
            model.cells.len(),
            options.shrink,
            options.seed,
            env!("CARGO_PKG_VERSION")
        ),
    );
    header.push_field("MaxJobs", set.len());
    header.push_field("MaxRecords", set.len());
    header.push_field("MaxNodes", replay.processors);
    header.push_field("MaxProcs", replay.processors);
    let records = set
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
    Ok(JobSet {
        header,
        records,
        analysed: jobs.len(),
        fitted,
        used: (model.alpha, model.beta),
        used_mean: model.weibull_mean(),
        trace_mean: model.mean_interarrival,
        cells: model.cells.len(),
    })
}
