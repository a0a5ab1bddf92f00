//! The model's registered parts: its two backfilling rules (Slurm's defaults, and the
//! multifactor documentation's example site) and the presets over them, as one set of parts
//! ([`PARTS`]) that the workspace's registry (`schedulers::REGISTRY`) lists after cluster's.

use cluster::policy::{Parts, RulePart};
use cluster::{Params, Part, Policy, SchedulerSpec, order, predict};

use crate::{SlurmConfig, SlurmParams, SlurmRule};

/// Slurm's model with Slurm's defaults.
pub static SLURM: RulePart = Part {
    name: "slurm",
    help: "Slurm: multifactor priority and fair-share recomputed every PriorityCalcPeriod, the main loop, Slurm's backfill (conservative of limited depth, periodic, on a grid); Slurm's defaults",
    params: Params::of::<SlurmParams>(),
    build: |p| Box::new(SlurmRule::new(p.get::<SlurmParams>().config(SLURM.name))),
};

/// Slurm's model with the example configuration of Slurm's multifactor documentation.
pub static SLURM_SITE: RulePart = Part {
    name: "slurm-site",
    help: "Slurm, configured as the multifactor documentation's example site (weights age 1000, fair-share 10000, job size 1000, partition 1000; 14-day half-life and maximum age)",
    params: Params::of::<SlurmParams>(),
    build: |p| {
        Box::new(SlurmRule::new(
            p.get::<SlurmParams>().config(SLURM_SITE.name),
        ))
    },
};

/// The model's presets, after cluster's in `sitesim schedulers` and `--help`.
pub static POLICIES: &[Policy] = &[
    Policy {
        name: "slurm",
        aliases: &[],
        help: "Slurm's multifactor priority, fair-share and backfill, with Slurm's defaults (all priority weights 0: arrival order)",
        order: &order::FCFS,
        backfill: &SLURM,
        predictor: &predict::ESTIMATE,
    },
    Policy {
        name: "slurm-site",
        aliases: &[],
        help: "Slurm as the multifactor documentation's example site: fair-share weight 10000, age, job size and partition 1000",
        order: &order::FCFS,
        backfill: &SLURM_SITE,
        predictor: &predict::ESTIMATE,
    },
];

/// The model's parts: its presets and its two rules (no order or predictor of its own).
pub static PARTS: Parts = Parts {
    policies: POLICIES,
    orders: &[],
    rules: &[&SLURM, &SLURM_SITE],
    predictors: &[],
};

impl SlurmRule {
    /// The model, when it is `cluster`'s rule ([`cluster::Cluster::rule_as`]): its priorities,
    /// usage and shares, for the reports that read them.
    pub fn of(cluster: &cluster::Cluster) -> Option<&SlurmRule> {
        cluster.rule_as()
    }

    /// The configuration `spec`'s rule is built with, when its rule is the Slurm model (the
    /// rule's default, or the one given in its parameters).
    pub fn config_of(spec: &SchedulerSpec) -> Option<SlurmConfig> {
        let rule = spec.build_rule();
        let slurm = rule.as_any()?.downcast_ref::<SlurmRule>()?;
        Some(slurm.config().clone())
    }
}
