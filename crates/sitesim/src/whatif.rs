//! `sitesim whatif`: the what-if report, one self-contained HTML page comparing two slurm.conf
//! files on a site's accounting (the work is `scenario::whatif`).

use std::io::IsTerminal as _;

use crate::cli::WhatifArgs;
use crate::say;

/// Runs the command.
pub fn run(args: &WhatifArgs) -> anyhow::Result<()> {
    let (current, proposed) =
        scenario::whatif::current_and_proposed(&args.slurm_conf, "--slurm-conf")?;
    // refused before the work, and again when the page is placed
    scenario::whatif::check_output(&args.out, args.force)?;
    let inputs = scenario::whatif::Inputs {
        sacct: args.sacct.clone(),
        assoc: args.assoc.clone(),
        qos: args.qos.clone(),
        current,
        proposed,
        seeds: args.seeds,
        weeks: args.weeks,
        users: args.users,
        processors: args.processors,
        trace_values: args.input.values.clone(),
    };
    // a bar of the run pairs (the replays', then the closed loop's) on a terminal
    let bar = if std::io::stderr().is_terminal() && !tracing::enabled!(tracing::Level::DEBUG) {
        indicatif::ProgressBar::new(2 * u64::from(args.seeds))
    } else {
        indicatif::ProgressBar::hidden()
    };
    let report = scenario::whatif::compare(&inputs, &mut |line: &str| {
        tracing::info!("{line}");
        bar.set_message(line.to_string());
        bar.inc(1);
    });
    bar.finish_and_clear();
    let report = report?;
    scenario::whatif::write_page(&args.out, &report.html(), args.force)?;
    for line in report.verdict() {
        say!("{line}")?;
    }
    say!("wrote {}", args.out.display())
}
