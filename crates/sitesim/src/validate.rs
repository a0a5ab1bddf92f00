//! `sitesim validate`: simulate a site and compare each group's generated workload with its
//! model (the comparison is `scenario::validate`).

use std::sync::Arc;

use anyhow::Context;
use scenario::Simulation;
use scenario::sink::Kept;
use scenario::validate::{MODEL_KIND, compare, compare_mix, skipped};

use crate::cli::ValidateArgs;
use crate::say;

pub fn run(args: &ValidateArgs) -> anyhow::Result<()> {
    let site = crate::run::site(&args.values)?;
    let default_model = Arc::new(config::models::default_model()?);
    tracing::info!("{}: simulating the site", site.origin);
    let mut progress = crate::progress::Progress::new("simulating");
    let mut tick = |t| progress.tick(t);
    // The whole generated workload is compared, so it is kept.
    let (kept, handle) = Kept::new();
    let executed = Simulation::site(site, default_model)
        .progress(&mut tick)
        .sink(Box::new(kept))
        .execute()?;
    progress.finish();
    let result = executed
        .site()
        .context("a site run gave no site-run measures")?;
    let workload = handle
        .lock()
        .ok()
        .and_then(|mut kept| kept.take())
        .context("the run's workload was not kept")?;
    tracing::info!("comparing the generated workload with the models");
    for (group, kind) in skipped(result) {
        say!(
            "group {group:?}: kind {kind} draws from its own parameters, not from a fitted model; not compared"
        )?;
    }
    let compared = compare(result, &workload);
    anyhow::ensure!(
        !compared.is_empty(),
        "nothing to validate: validate compares groups of kind \"{MODEL_KIND}\" with their fitted models, and this site has none"
    );
    let mut over = 0;
    for (group, distances) in compared {
        say!(
            "group {group:?}: generated workload against its model (Kolmogorov-Smirnov distance)"
        )?;
        say!(
            "  {:<30}{:>10}{:>10}{:>8}",
            "distribution",
            "samples",
            "distance",
            "bound"
        )?;
        for d in &distances {
            if d.samples == 0 {
                say!("  {:<30}{:>10}{:>10}{:>8}  no samples", d.name, 0, "-", "-")?;
                continue;
            }
            let verdict = if d.distance <= d.bound { "ok" } else { "OVER" };
            over += usize::from(d.distance > d.bound);
            say!(
                "  {:<30}{:>10}{:>10.4}{:>8.2}  {verdict}",
                d.name,
                d.samples,
                d.distance,
                d.bound
            )?;
        }
    }
    for (group, distances) in compare_mix(result, &workload) {
        say!(
            "group {group:?}: its jobs' resources against its resource mix (absolute difference; memory relative)"
        )?;
        say!(
            "  {:<30}{:>10}{:>10}{:>8}",
            "measure",
            "samples",
            "distance",
            "bound"
        )?;
        for d in &distances {
            let verdict = if d.distance <= d.bound { "ok" } else { "OVER" };
            over += usize::from(d.distance > d.bound);
            say!(
                "  {:<30}{:>10}{:>10.4}{:>8.3}  {verdict}",
                d.name,
                d.samples,
                d.distance,
                d.bound
            )?;
        }
    }
    anyhow::ensure!(over == 0, "{over} distribution(s) beyond their bound");
    Ok(())
}
