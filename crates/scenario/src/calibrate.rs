//! How many simulated users stand for a site: the number of users at which the site's
//! simulations reach a target utilisation or a target mean wait (`sitesim calibrate`).
//!
//! Both measures grow with the number of users (more users submit more work to the same
//! machine), so the search brackets the target by doubling or halving the site's own number
//! of users, then bisects the bracket down to one user or 1 % of it, and picks the tried number
//! whose value is nearest the target. Each number of users is measured as the mean over
//! `seeds` runs (the site's seed and the next ones: the same users at every number tried, up to
//! the users added), so the search follows the mean rather than one seed's noise. A site of
//! several groups keeps its groups' proportions (dealt by the largest remainder).
//!
//! In the closed loop, utilisation stops growing once users wait long enough to submit less:
//! a target above that ceiling cannot be reached, and the search says so with the highest value
//! it measured rather than returning the largest number tried.

use std::sync::Arc;

use config::site::Site;
use rayon::prelude::*;

use config::{Result, ScenarioError, invalid};

use crate::Simulation;

/// What the calibration aims at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// Utilisation over the measured window, a share in (0, 1).
    Utilization(f64),
    /// Mean wait of the measured jobs, seconds.
    MeanWait(f64),
}

impl Target {
    /// The target's value (a share, or seconds).
    pub fn value(self) -> f64 {
        match self {
            Target::Utilization(v) | Target::MeanWait(v) => v,
        }
    }

    /// The measure's name, as summary.json names it.
    pub fn measure(self) -> &'static str {
        match self {
            Target::Utilization(_) => "utilization",
            Target::MeanWait(_) => "wait_seconds.mean",
        }
    }

    fn check(self) -> Result<()> {
        match self {
            Target::Utilization(v) if !(v > 0.0 && v < 1.0) => Err(invalid!(
                "target utilization = {v}: expected a share between 0 and 1 (0.7 for 70 %)"
            )),
            Target::MeanWait(v) if !(v.is_finite() && v > 0.0) => Err(invalid!(
                "target mean wait = {v}: expected a number of seconds above 0"
            )),
            _ => Ok(()),
        }
    }
}

/// One number of users tried and what it gave.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Trial {
    /// Users in all.
    pub users: u32,
    /// The mean of the target's measure over the seeds.
    pub value: f64,
    /// The smallest and largest value of a seed.
    pub range: (f64, f64),
}

/// The calibration's answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Calibration {
    /// The measure aimed at (summary.json's name).
    pub measure: &'static str,
    /// Its target value.
    pub target: f64,
    /// The number of users picked: the tried number whose value is nearest the target.
    pub users: u32,
    /// The value it gave (mean over the seeds).
    pub value: f64,
    /// The users of each group at that number, in `[[groups]]` order.
    pub group_users: Vec<u32>,
    /// Every number tried, in order.
    pub trials: Vec<Trial>,
    /// The seeds each number was run with.
    pub seeds: Vec<u64>,
}

/// The largest number of users tried before giving up (the population's own limit).
const MOST_USERS: u64 = config::limits::MAX_USERS;

/// Finds the number of users at which `site` reaches `target`, measured over `seeds` seeds
/// (at least 1); `progress` hears of each number tried.
pub fn calibrate(
    site: &Site,
    default_model: &Arc<usermodel::Model>,
    target: Target,
    seeds: u32,
    progress: &mut dyn FnMut(&Trial),
) -> Result<Calibration> {
    target.check()?;
    if seeds == 0 {
        return Err(invalid!(
            "seeds = 0: measure each number of users over at least one seed"
        ));
    }
    let weights: Vec<u32> = site.file.groups.iter().map(|g| g.users).collect();
    if weights.is_empty() {
        return Err(invalid!(
            "{}: no [[groups]]: the site needs users",
            site.origin
        ));
    }
    let seed_list: Vec<u64> = (0..u64::from(seeds))
        .map(|i| site.file.run.seed.wrapping_add(i))
        .collect();
    let goal = target.value();
    let mut trials: Vec<Trial> = Vec::new();
    let mut measure = |users: u32, trials: &mut Vec<Trial>| -> Result<f64> {
        if let Some(t) = trials.iter().find(|t| t.users == users) {
            return Ok(t.value);
        }
        let values: Vec<f64> = seed_list
            .par_iter()
            .map(|&seed| {
                let mut run = scaled(site, &weights, users);
                run.file.run.seed = seed;
                let executed = Simulation::site(run, Arc::clone(default_model)).execute()?;
                let summary = &executed
                    .site()
                    .ok_or_else(|| invalid!("a site run gave no site measures"))?
                    .summary;
                Ok(match target {
                    Target::Utilization(_) => summary.utilization,
                    Target::MeanWait(_) => summary.wait_seconds.mean,
                })
            })
            .collect::<Result<_>>()?;
        let value = values.iter().sum::<f64>() / values.len() as f64;
        let range = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        let trial = Trial {
            users,
            value,
            range,
        };
        progress(&trial);
        trials.push(trial);
        Ok(value)
    };
    let start = weights.iter().map(|&w| u64::from(w)).sum::<u64>().max(1);
    let start = u32::try_from(start.min(MOST_USERS)).unwrap_or(u32::MAX);
    // Bracket: below < target <= above.
    let (mut below, mut above) = if measure(start, &mut trials)? < goal {
        let mut low = start;
        loop {
            let high = u64::from(low) * 2;
            if high > MOST_USERS {
                return Err(unreachable(
                    target,
                    &trials,
                    "the most users a run may have",
                ));
            }
            let high = high as u32;
            let before = measure(low, &mut trials)?;
            let now = measure(high, &mut trials)?;
            if now >= goal {
                break (low, high);
            }
            // Doubling the users added almost nothing: the closed loop's ceiling.
            if matches!(target, Target::Utilization(_)) && now - before < 0.002 && high >= 64 {
                return Err(unreachable(
                    target,
                    &trials,
                    "the ceiling where doubling the users no longer raises it",
                ));
            }
            low = high;
        }
    } else {
        let mut high = start;
        loop {
            if high == 1 {
                // One user already reaches it: the smallest site there is.
                break (0, 1);
            }
            let low = high / 2;
            if measure(low, &mut trials)? < goal {
                break (low, high);
            }
            high = low;
        }
    };
    while above - below > 1 && f64::from(above - below) > f64::from(above) * 0.01 {
        let middle = below + (above - below) / 2;
        if measure(middle, &mut trials)? < goal {
            below = middle;
        } else {
            above = middle;
        }
    }
    let best = trials
        .iter()
        .filter(|t| t.users == below || t.users == above)
        .min_by(|a, b| (a.value - goal).abs().total_cmp(&(b.value - goal).abs()))
        .copied()
        .ok_or_else(|| invalid!("the calibration measured nothing"))?;
    Ok(Calibration {
        measure: target.measure(),
        target: goal,
        users: best.users,
        value: best.value,
        group_users: deal(best.users, &weights),
        trials,
        seeds: seed_list,
    })
}

/// `site` with `users` users in all, dealt over its groups in proportion to their users.
pub fn scaled(site: &Site, weights: &[u32], users: u32) -> Site {
    let mut scaled = site.clone();
    for (group, count) in scaled.file.groups.iter_mut().zip(deal(users, weights)) {
        group.users = count;
    }
    scaled
}

/// `users` dealt in proportion to `weights` (evenly when all are 0).
fn deal(users: u32, weights: &[u32]) -> Vec<u32> {
    let weights: Vec<u64> = if weights.iter().all(|&w| w == 0) {
        vec![1; weights.len()]
    } else {
        weights.iter().map(|&w| u64::from(w)).collect()
    };
    config::tree_accounts::largest_remainder(u64::from(users), &weights)
        .into_iter()
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
        .collect()
}

/// The error for a target the site cannot reach, with the best it measured.
fn unreachable(target: Target, trials: &[Trial], why: &str) -> ScenarioError {
    let best = trials
        .iter()
        .max_by(|a, b| a.value.total_cmp(&b.value))
        .map_or(String::new(), |t| {
            format!(
                "; the highest measured is {:.4} with {} users",
                t.value, t.users
            )
        });
    invalid!(
        "the target {} = {} cannot be reached by adding users: it lies above {why}{best}; choose a lower target, a smaller machine (--processors) or users who submit more",
        target.measure(),
        target.value()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_are_dealt_in_the_groups_proportions() {
        assert_eq!(deal(10, &[1, 1]), vec![5, 5]);
        assert_eq!(deal(7, &[200, 50]), vec![6, 1]);
        assert_eq!(deal(3, &[0, 0, 0]), vec![1, 1, 1]);
    }

    #[test]
    fn the_default_site_is_calibrated_to_a_utilization_it_can_reach() {
        let mut site = Site::default_site().unwrap();
        site.file.run.weeks = 2;
        site.file.groups[0].users = 40;
        let model = Arc::new(config::models::default_model().unwrap());
        let mut heard = 0;
        let found = calibrate(&site, &model, Target::Utilization(0.5), 2, &mut |_| {
            heard += 1
        })
        .unwrap();
        assert_eq!(heard, found.trials.len());
        assert!((found.value - 0.5).abs() < 0.05, "{found:?}");
        // the bracket's two ends straddle the target, one user or 1 % apart
        let below = found
            .trials
            .iter()
            .filter(|t| t.value < 0.5)
            .map(|t| t.users)
            .max();
        let above = found
            .trials
            .iter()
            .filter(|t| t.value >= 0.5)
            .map(|t| t.users)
            .min();
        let (below, above) = (below.unwrap(), above.unwrap());
        assert!(
            above > below
                && (above - below <= 1
                    || f64::from(above - below) <= f64::from(above) * 0.01 + 1.0)
        );
        assert!(found.users == below || found.users == above);
        // an unreachable target is named, with the best measured
        let error = calibrate(&site, &model, Target::Utilization(0.999), 1, &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(error.contains("cannot be reached"), "{error}");
        assert!(calibrate(&site, &model, Target::Utilization(1.5), 1, &mut |_| {}).is_err());
    }
}
