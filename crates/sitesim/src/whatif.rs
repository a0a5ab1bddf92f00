//! `sitesim whatif`: the what-if report, one self-contained HTML page comparing two slurm.conf
//! files on a site's accounting (the work is `scenario::whatif`).

use std::io::IsTerminal as _;

use crate::cli::WhatifArgs;
use crate::say;

/// Runs the command.
pub fn run(args: &WhatifArgs) -> anyhow::Result<()> {
    let [current, proposed] = args.slurm_conf.as_slice() else {
        anyhow::bail!(
            "--slurm-conf is given {} time(s); give it exactly twice: first the current slurm.conf, then the proposed one",
            args.slurm_conf.len()
        );
    };
    // refused before the work, and again when the page is placed
    scenario::whatif::check_output(&args.out, args.force)?;
    let inputs = scenario::whatif::Inputs {
        sacct: args.sacct.clone(),
        assoc: args.assoc.clone(),
        qos: args.qos.clone(),
        current: current.clone(),
        proposed: proposed.clone(),
        seeds: args.seeds,
        weeks: args.weeks,
        users: args.users,
        processors: args.processors,
        trace_values: args.input.values.clone(),
    };
    // a bar of the run pairs on a terminal (2 x seeds: the replays', then the closed loop's)
    let bar = if std::io::stderr().is_terminal() && !tracing::enabled!(tracing::Level::DEBUG) {
        indicatif::ProgressBar::new(2 * u64::from(args.seeds))
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut log = |line: &str| {
        tracing::info!("{line}");
        bar.set_message(line.to_string());
        bar.inc(1);
    };
    let report = scenario::whatif::compare(&inputs, &mut log);
    bar.finish_and_clear();
    let report = report?;
    scenario::whatif::write_page(&args.out, &report.html(), args.force)?;
    for line in report.verdict() {
        say!("{line}")?;
    }
    say!("wrote {}", args.out.display())?;
    Ok(())
}
