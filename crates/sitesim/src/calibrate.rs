//! `sitesim calibrate`: the number of users at which a site reaches a target utilisation or
//! mean wait (the search is `scenario::calibrate`).

use std::sync::Arc;

use anyhow::Context;
use scenario::calibrate::{Target, Trial, calibrate};

use crate::cli::CalibrateArgs;
use crate::say;

pub fn run(args: &CalibrateArgs) -> anyhow::Result<()> {
    let site = crate::run::site(&args.site.values)?;
    let default_model =
        Arc::new(config::models::default_model().context("the embedded default model is invalid")?);
    let target = match (args.utilization, args.mean_wait) {
        (Some(share), _) => Target::Utilization(share),
        (None, Some(seconds)) => Target::MeanWait(seconds),
        (None, None) => anyhow::bail!("give --utilization SHARE or --mean-wait SECONDS"),
    };
    say!(
        "{}: the number of users for {} = {} ({}, {} on {} processors; each number run with {})",
        site.origin,
        target.measure(),
        target.value(),
        site.file.scheduler.policy,
        config::count(site.file.run.weeks, "week"),
        site.file.site.processors,
        config::count(args.seeds, "seed")
    )?;
    say!("{:>8}  {:>18}  seeds' range", "users", target.measure())?;
    let mut failed = None;
    let mut heard = |t: &Trial| {
        if failed.is_none()
            && let Err(e) = say!(
                "{:>8}  {:>18.4}  {:.4} to {:.4}",
                t.users,
                t.value,
                t.range.0,
                t.range.1
            )
        {
            failed = Some(e);
        }
    };
    let found = calibrate(&site, &default_model, target, args.seeds, &mut heard)?;
    if let Some(e) = failed {
        return Err(e);
    }
    say!(
        "picked {}: {} {:.4} (target {}), mean over seeds {}",
        config::count(found.users, "user"),
        found.measure,
        found.value,
        found.target,
        found
            .seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )?;
    if site.file.groups.len() == 1 {
        say!("run it with --users {}", found.users)?;
    } else {
        for (group, users) in site.file.groups.iter().zip(&found.group_users) {
            say!("  group {:?}: users = {users}", group.name)?;
        }
        say!("run it with each group's users set so in the population file")?;
    }
    Ok(())
}
