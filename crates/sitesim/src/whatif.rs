//! `sitesim whatif`: the what-if report, one self-contained HTML page comparing two slurm.conf
//! files on a site's accounting (the work is `scenario::whatif`).

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
        trace_values: args.input.values.clone(),
    };
    let mut log = |line: &str| tracing::info!("{line}");
    let report = scenario::whatif::compare(&inputs, &mut log)?;
    scenario::whatif::write_page(&args.out, &report.html(), args.force)?;
    for line in report.verdict() {
        say!("{line}")?;
    }
    say!("wrote {}", args.out.display())?;
    Ok(())
}
