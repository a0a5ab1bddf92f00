//! `sitesim validate`: simulate a site and compare each group's generated workload with its
//! model (the comparison is `scenario::validate`).

use std::sync::Arc;

use scenario::run::{Fairness, resolve, simulate};
use scenario::validate::compare;

use crate::cli::ValidateArgs;
use crate::say;

pub fn run(args: &ValidateArgs) -> anyhow::Result<()> {
    let site = resolve(args.site.config.as_deref(), &args.site.overrides())?;
    let default_model = Arc::new(scenario::models::default_model()?);
    let result = simulate(site, &default_model, Fairness::Skip)?;
    let mut over = 0;
    for (group, distances) in compare(&result) {
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
    anyhow::ensure!(over == 0, "{over} distribution(s) beyond their bound");
    Ok(())
}
