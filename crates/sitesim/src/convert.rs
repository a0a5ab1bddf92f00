//! `sitesim convert`: a Slurm accounting dump to SWF with its id tables and association tree
//! (the work is `scenario::trace`).

use crate::cli::ConvertArgs;
use crate::output::OutputDir;
use crate::say;

/// The files a conversion writes (an earlier conversion in `--out` is refused without
/// `--force`).
const FILES: [&str; 9] = [
    "trace.swf",
    "users.csv",
    "accounts.csv",
    "partitions.csv",
    "qos.csv",
    "associations.csv",
    "slurm-tree.toml",
    "conversion.csv",
    scenario::requests::FILE,
];

/// Runs the command.
pub fn run(args: &ConvertArgs) -> anyhow::Result<()> {
    // read with the resources requests.csv keeps
    let input =
        scenario::requests::conversion_options(&config::options::trace_input(&args.input.values)?);
    let earlier: Vec<&str> = FILES
        .iter()
        .copied()
        .filter(|f| args.out.join(f).exists())
        .collect();
    if !earlier.is_empty() && !args.force {
        anyhow::bail!(
            "{} already holds a conversion ({}); give --force to replace it, or another --out",
            args.out.display(),
            earlier.join(", ")
        );
    }
    // Opened once and told from its first line, so a pipe works.
    let scenario::trace::Opened::Sacct(trace) = scenario::trace::open(&args.dump, &input)? else {
        anyhow::bail!(
            "{}: not a sacct --parsable2 dump (its first line is not a header row starting with JobID|); give --format sacct to read it as one",
            args.dump.display()
        );
    };
    let files = scenario::trace::conversion_files(&trace, args.assoc.as_deref())?;
    let mut out = OutputDir::create(&args.out)?;
    for (name, bytes) in &files {
        out.write(name, bytes)?;
    }
    let report = &trace.log.report;
    say!(
        "{}: {} lines read, {} jobs kept, machine of at least {} processors (the log's peak)",
        args.dump.display(),
        report.lines,
        report.jobs,
        trace.converted.processors
    )?;
    for line in report.lines() {
        say!("{line}")?;
    }
    crate::output::commit_and_list(out)?;
    Ok(())
}
