//! `sitesim synth`: Streit's synthetic job sets (paper 002, section 4) from a trace (the work
//! is `scenario::synth`).

use scenario::synth::{SynthOptions, synthesize};

use crate::cli::SynthArgs;
use crate::say;

/// Runs the command.
pub fn run(args: &SynthArgs) -> anyhow::Result<()> {
    let set = synthesize(&SynthOptions {
        trace: args.trace.clone(),
        jobs: args.count,
        shrink: args.shrink,
        seed: args.seed,
        processors: args.processors,
        weibull: args.weibull.clone(),
    })?;
    let mut out = crate::output::OutputDir::detached();
    out.write_path(&args.swf, |w| {
        scenario::output::write_swf(&set.header, &set.records, w)
            .map_err(|e| std::io::Error::other(e.to_string()))
    })?;
    out.commit()?;
    say!(
        "{}: {} jobs analysed; inter-arrival times fit Weibull alpha = {:.4}, beta = {:.2} s; the trace's mean {:.1} s; {} (width, estimate, runtime) cells",
        args.trace.display(),
        set.analysed,
        set.fitted.0,
        set.fitted.1,
        set.trace_mean,
        set.cells
    )?;
    say!(
        "generating with Weibull alpha = {:.4}, beta = {:.2} s (mean {:.1} s){}",
        set.used.0,
        set.used.1,
        set.used_mean,
        if args.weibull.is_some() {
            ", as given"
        } else {
            ""
        }
    )?;
    say!(
        "wrote {} ({} jobs over {:.1} days, shrinking factor {})",
        args.swf.display(),
        set.records.len(),
        set.records.last().map_or(0, |j| j.submit_time) as f64 / 86_400.0,
        args.shrink
    )?;
    Ok(())
}
