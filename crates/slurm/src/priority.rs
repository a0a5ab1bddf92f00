//! Slurm's multifactor job priority (`priority/multifactor`), from
//! `src/plugins/priority/multifactor/priority_multifactor.c` (slurm-26-05-3-1):
//! `set_priority_factors` (each factor in [0, 1]) and `_get_priority_internal` (their weighted
//! sum, clamped at 1 and truncated once to an unsigned 32-bit integer).

use super::config::SlurmConfig;
use cluster::Time;

/// A job's priority factors, each in [0, 1] (what `sprio -n` shows).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Factors {
    /// Age: the wait since the job became eligible over `PriorityMaxAge`, at most 1.
    pub age: f64,
    /// The association factor (0: associations carry no priority here).
    pub assoc: f64,
    /// Fair-share: the owner's association's factor at the last calculation.
    pub fairshare: f64,
    /// Job size.
    pub job_size: f64,
    /// Partition: its `PriorityJobFactor` over the largest.
    pub partition: f64,
    /// QOS: its priority over the largest.
    pub qos: f64,
    /// The TRES factor, already weighted (`PriorityWeightTRES`; 0 without it): the sum over
    /// the weighted TRES of the job's amount over its partition's, times the weight.
    pub tres: f64,
}

/// The age factor (`set_priority_factors`, L2105-2120): the seconds since `accrue` (the job's
/// eligible time) over `max_age`, 1 from `max_age` on; 0 before `accrue`.
pub fn age(now: Time, accrue: Time, max_age: Time) -> f64 {
    let waited = (now - accrue).max(0);
    if waited < max_age {
        waited as f64 / max_age as f64
    } else {
        1.0
    }
}

/// The job-size factor (`set_priority_factors`, L2127-2196) of a job of `processors` CPUs and
/// a time limit of `limit` seconds on a machine of `machine` CPUs. The node terms use
/// [`SlurmConfig::cpus_per_node`] (a node per CPU when unset); the time limit is counted in
/// whole minutes, rounded up, as Slurm stores it. Clamped to [0, 1].
pub fn job_size(config: &SlurmConfig, processors: u32, limit: Time, machine: u32) -> f64 {
    let per_node = config.cpus_per_node.unwrap_or(1).max(1);
    let cluster_cpus = f64::from(machine.max(1));
    let cluster_nodes = f64::from((machine / per_node).max(1));
    let nodes = f64::from(processors.div_ceil(per_node));
    let cpus = f64::from(processors);
    let factor = if config.small_relative_to_time {
        let minutes = (limit.max(1) as f64 / 60.0).ceil();
        let size = (nodes * cluster_cpus / cluster_nodes).max(cpus) / minutes / cluster_cpus;
        if config.favor_small { 1.0 - size } else { size }
    } else if config.favor_small {
        let node_term = if cluster_nodes > nodes {
            (cluster_nodes - nodes) / cluster_nodes
        } else {
            0.0
        };
        if processors > 0 {
            (node_term + (cluster_cpus - cpus) / cluster_cpus) / 2.0
        } else {
            node_term
        }
    } else {
        let node_term = nodes / cluster_nodes;
        if processors > 0 {
            (node_term + cpus / cluster_cpus) / 2.0
        } else {
            node_term
        }
    };
    factor.clamp(0.0, 1.0)
}

/// The job priority (`_get_priority_internal`, L598-633): each factor times its weight, summed
/// as doubles in Slurm's order (age, association, fair-share, job size, partition, QOS), at
/// least 1 (0 is for held jobs), truncated once and capped at 2^32 - 1.
pub fn priority(config: &SlurmConfig, factors: &Factors) -> u32 {
    let w = &config.weights;
    let sum = factors.age * f64::from(w.age)
        + factors.assoc * f64::from(w.assoc)
        + factors.fairshare * f64::from(w.fairshare)
        + factors.job_size * f64::from(w.job_size)
        + factors.partition * f64::from(w.partition)
        + factors.qos * f64::from(w.qos)
        + factors.tres;
    let sum = sum.max(1.0);
    if sum >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        sum as u32 // truncation toward zero, as Slurm's cast
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn age_grows_to_one_at_the_maximum_age() {
        assert_eq!(age(100, 100, 1000), 0.0);
        assert_eq!(age(600, 100, 1000), 0.5);
        assert_eq!(age(1100, 100, 1000), 1.0);
        assert_eq!(age(5000, 100, 1000), 1.0);
        assert_eq!(age(50, 100, 1000), 0.0);
    }

    /// The job-size formulas of `set_priority_factors` on a 100-node machine of 4 CPUs each.
    #[test]
    fn job_size_follows_slurms_formulas() {
        let mut config = SlurmConfig {
            cpus_per_node: Some(4),
            ..SlurmConfig::default()
        };
        // favour large: (n/N + c/C) / 2 = (10/100 + 40/400) / 2
        assert!((job_size(&config, 40, 3600, 400) - 0.1).abs() < 1e-12);
        // a job of 2 CPUs still takes a node: (1/100 + 2/400) / 2
        assert!((job_size(&config, 2, 3600, 400) - 0.0075).abs() < 1e-12);
        config.favor_small = true;
        // ((N-n)/N + (C-c)/C) / 2 = (0.9 + 0.9) / 2
        assert!((job_size(&config, 40, 3600, 400) - 0.9).abs() < 1e-12);
        config.small_relative_to_time = true;
        // 1 - max(n C / N, c) / minutes / C = 1 - 40 / 60 / 400
        assert!((job_size(&config, 40, 3600, 400) - (1.0 - 40.0 / 60.0 / 400.0)).abs() < 1e-12);
        config.favor_small = false;
        assert!((job_size(&config, 40, 3600, 400) - 40.0 / 60.0 / 400.0).abs() < 1e-12);
        // a limit of 30 s counts as one minute
        assert!((job_size(&config, 400, 30, 400) - 1.0).abs() < 1e-12);
    }

    /// Weighted factors are summed and truncated once, never below 1.
    #[test]
    fn priority_truncates_the_weighted_sum_once() {
        let config = SlurmConfig::documented_site();
        let factors = Factors {
            age: 0.00049,       // 0.49
            fairshare: 0.00005, // 0.5
            job_size: 0.0,
            partition: 1.0, // 1000
            ..Factors::default()
        };
        // 0.49 + 0.5 + 1000 = 1000.99 -> 1000 (rounding each term would give 1001)
        assert_eq!(priority(&config, &factors), 1000);
        assert_eq!(priority(&SlurmConfig::default(), &factors), 1);
        let all = Factors {
            age: 1.0,
            assoc: 1.0,
            fairshare: 1.0,
            job_size: 1.0,
            partition: 1.0,
            qos: 1.0,
            tres: 0.0,
        };
        let mut heavy = SlurmConfig::default();
        heavy.weights.age = u32::MAX;
        heavy.weights.fairshare = u32::MAX;
        assert_eq!(priority(&heavy, &all), u32::MAX);
    }
}
