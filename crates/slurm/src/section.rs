//! The Slurm model's configuration as files give it: the `[scheduler.slurm]` table of a
//! population or replay file ([`SlurmSection`], every key optional, times in seconds), applied
//! on top of a rule's own configuration, and the rules' parameters ([`SlurmParams`]: the
//! section, under the key `slurm`). Reading a real `slurm.conf` into a section is the front
//! end's (`config::slurm`): this crate does no I/O.

use std::collections::BTreeMap;
use std::sync::Arc;

use cluster::{BadValue, PartParams};
use serde::{Deserialize, Serialize};

use crate::{
    Account, FairShareAlgorithm, Partition, Qos, Selector, Shares, SlurmConfig, TresLimit,
};

/// The Slurm rules' parameters: `[scheduler.slurm]`, applied on top of the rule's own
/// configuration (Slurm's defaults for `slurm`, the documentation's example site for
/// `slurm-site`) when the scheduler is composed.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SlurmParams {
    /// `[scheduler.slurm]` (with a `slurm_conf`'s lines under it, merged by the front end).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slurm: Option<SlurmSection>,
    /// The configuration the rule runs with, resolved by [`PartParams::check`].
    #[serde(skip)]
    #[schemars(skip)]
    resolved: Option<Arc<SlurmConfig>>,
}

impl PartialEq for SlurmParams {
    /// The same section (the resolved configuration follows from it and the part).
    fn eq(&self, other: &SlurmParams) -> bool {
        self.slurm == other.slurm
    }
}

impl PartParams for SlurmParams {
    /// A Slurm scheduler's label is its name alone.
    fn labelled() -> &'static [&'static str] {
        &[]
    }

    /// A whole section: left out of the site written back when not given.
    const SHOWN_WHEN_NOT_GIVEN: bool = false;

    fn check(&mut self, part: &str) -> Result<(), BadValue> {
        let base = SlurmParams::base(part);
        let config = match &self.slurm {
            Some(section) => section.apply(base).map_err(|e| BadValue::new(e, &[]))?,
            None => base,
        };
        self.resolved = Some(Arc::new(config));
        Ok(())
    }
}

impl SlurmParams {
    /// The configuration of the rule named `part` before any key is given: the documented
    /// example site for `slurm-site`, Slurm's defaults otherwise.
    pub fn base(part: &str) -> SlurmConfig {
        if part == crate::parts::SLURM_SITE.name {
            SlurmConfig::documented_site()
        } else {
            SlurmConfig::default()
        }
    }

    /// The configuration the rule named `part` runs with.
    pub fn config(&self, part: &str) -> SlurmConfig {
        match &self.resolved {
            Some(config) => SlurmConfig::clone(config),
            None => SlurmParams::base(part),
        }
    }
}

/// `[scheduler.slurm]`: the Slurm model's parameters (schedulers `slurm` and `slurm-site`).
/// Each key left out keeps the scheduler's value: Slurm's defaults for `slurm`, the
/// multifactor documentation's example site for `slurm-site`. Times are seconds (slurm.conf
/// gives several in minutes: `sitesim import-slurm-conf` converts them).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlurmSection {
    /// `TRESBillingWeights` (none: a job bills its CPUs), Slurm's syntax
    /// (`CPU=1.0,Mem=0.25G,GRES/gpu=2.0`): usage is charged at a job's billing per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tres_billing_weights: Option<String>,
    /// How the billing adds the weighted TRES: `sum` (the default), `max_tres` (the largest
    /// node TRES plus the others: `PriorityFlags=MAX_TRES`) or `max_tres_gres` (and the GRES
    /// added: `MAX_TRES_GRES`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing: Option<String>,
    /// `PriorityWeightTRES` (none), Slurm's syntax (`CPU=1000,Mem=2000,GRES/gpu=3000`): each
    /// TRES a job asks for over its partition's total, times its weight, adds to its priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_weight_tres: Option<String>,
    /// `PriorityWeightAge` (Slurm's default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_age: Option<u32>,
    /// `PriorityWeightFairshare` (0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_fairshare: Option<u32>,
    /// `PriorityWeightJobSize` (0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_job_size: Option<u32>,
    /// `PriorityWeightPartition` (0): times the partition factor, `PriorityJobFactor` over the
    /// largest (1 with one partition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_partition: Option<u32>,
    /// `PriorityWeightQOS` (0): times the QOS factor, its priority over the largest (0 when
    /// every QOS has priority 0, as the default `normal` has).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_qos: Option<u32>,
    /// `PriorityWeightAssoc` (0; associations carry no priority, so the factor is 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_assoc: Option<u32>,
    /// `PriorityMaxAge`: the wait at which the age factor reaches 1, seconds (7 days).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_age: Option<i64>,
    /// `PriorityFavorSmall` (false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub favor_small: Option<bool>,
    /// `PriorityFlags=SMALL_RELATIVE_TO_TIME` (false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub small_relative_to_time: Option<bool>,
    /// The fair-share algorithm: `fair_tree` (Slurm's default), `classic`
    /// (`PriorityFlags=NO_FAIR_TREE`) or `depth_oblivious`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairshare: Option<String>,
    /// `FairShareDampeningFactor` (1; classic fair-share only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dampening: Option<u16>,
    /// `PriorityDecayHalfLife`, seconds (7 days; 0: no decay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decay_half_life: Option<i64>,
    /// `PriorityCalcPeriod`, seconds (300; at least 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calc_period: Option<i64>,
    /// `OverTimeLimit`: how long a job may run past its time limit, seconds (0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_time_limit: Option<i64>,
    /// Processors per node, for the job-size factor's node terms (a node per processor
    /// unless given; a replay on nodes uses its `node_processors`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_per_node: Option<u32>,
    /// `default_queue_depth`: the jobs an event-triggered main-loop run examines (100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_queue_depth: Option<u32>,
    /// `sched_interval`: the period of the main loop's full runs, seconds (60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_interval: Option<i64>,
    /// `batch_sched_delay`: the least time between main-loop runs a submission triggers,
    /// seconds (3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_sched_delay: Option<i64>,
    /// `bf_interval`: seconds between backfill cycles (30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bf_interval: Option<i64>,
    /// `bf_resolution`: the grid of backfill's reservations, seconds (60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bf_resolution: Option<i64>,
    /// `bf_window`: how far ahead backfill reserves, seconds (86400; slurm.conf gives minutes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bf_window: Option<i64>,
    /// `bf_max_job_test`: the jobs a backfill cycle tests (500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bf_max_job_test: Option<u32>,
    /// `bf_max_job_part`: the jobs per partition a backfill cycle examines (0: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bf_max_job_part: Option<u32>,
    /// `bf_max_job_user`: the jobs per user a backfill cycle examines (0: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bf_max_job_user: Option<u32>,
    /// `bf_min_prio_reserve`: jobs below this priority may start but never reserve (0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bf_min_prio_reserve: Option<u32>,
    /// The derived association tree: `groups` (an account per group, the SWF group or the
    /// population group, its users under it; the default) or `none` (every user directly
    /// under root). Each has one share unless `group_shares` or `user_shares` say otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accounts: Option<String>,
    /// The shares (sacctmgr's `fairshare=`) of the derived tree's group accounts, by group id
    /// (jobs.csv's and the SWF's group: a population group's position from 1, or the trace's
    /// group id), e.g. `{ "1" = 10, "2" = 1 }`; an account not listed has one share, and the
    /// listed ones exist from the start. Needs `accounts = "groups"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_shares: Option<BTreeMap<String, u32>>,
    /// The shares of users' associations, by user id (jobs.csv's user), e.g. `{ "7" = 4 }`;
    /// a user not listed has one share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_shares: Option<BTreeMap<String, u32>>,
    /// `AccountingStorageEnforce` holds `limits`: a job's last partial period (since the last
    /// priority calculation) is charged when it ends (false: only the calculations charge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enforce_limits: Option<bool>,
    /// How often shares.csv samples the association tree (sshare's columns), seconds: at the
    /// first priority calculation at or after each multiple (86400, a day; `calc_period` or
    /// less: every calculation). It changes no schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares_every: Option<i64>,
    /// The partitions (`[[scheduler.slurm.partitions]]`), in order: a job goes to the first
    /// that selects it (any, when none selects it) and takes its processors and time limit;
    /// when none does, it never starts: held for good, as Slurm leaves it pending (reason
    /// `PartitionConfig` or `PartitionTimeLimit`; summary.json's `slurm.never_started`).
    /// Without any, one partition of the whole machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<Vec<PartitionSection>>,
    /// The site's own accounts (`[[scheduler.slurm.tree]]`), parents first: the users of the
    /// listed groups run under them (other groups as `accounts` says). `sitesim convert
    /// --assoc` writes them from a sacctmgr dump.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<Vec<AccountSection>>,
    /// The QOS (`[[scheduler.slurm.qos]]`), in order: a job goes to the first that selects it,
    /// else the first. Without any, Slurm's `normal` (priority 0, no limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qos: Option<Vec<QosSection>>,
    /// Users' associations that exist from the start, as in a site's database (`sacctmgr add
    /// user NAME account=ACCOUNT fairshare=N`; `[[scheduler.slurm.members]]`, in order), each
    /// with its own shares. Without them a user's association is added with its first job, so
    /// until then Fair Tree ranks, and the shares divide among, fewer users than Slurm's.
    /// `sitesim replay --assoc` and `sitesim convert --assoc` write them from a sacctmgr dump.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members: Option<Vec<MemberSection>>,
}

/// A user's association in an account ([`SlurmSection::members`]): the user's jobs of that
/// group run under it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberSection {
    /// The user id (jobs.csv's and the SWF's user).
    pub user: i64,
    /// The group id (jobs.csv's and the SWF's group) whose account it is under: the account of
    /// the tree that takes the group, else the group's derived account.
    pub group: i64,
    /// Its shares among its account's children (`fairshare=`; 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares: Option<u32>,
}

/// One partition (`PartitionName=`): its processors (counted, as a set that may overlap
/// others), `MaxTime`, `PriorityJobFactor`, `PriorityTier` and the jobs it takes.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PartitionSection {
    /// Its name (jobs.csv's `partition`).
    pub name: String,
    /// The processors of its set (the whole machine if left out); its running jobs hold at
    /// most these, and a wider job goes to a later partition that takes it; if none does, it
    /// never starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processors: Option<u32>,
    /// `MaxTime`, seconds (unlimited if left out): a job with a longer time limit goes to a
    /// later partition that takes it; if none does, it never starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time: Option<i64>,
    /// `PriorityJobFactor` (1): the partition factor is this over the largest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_job_factor: Option<u16>,
    /// `PriorityTier` (1): jobs of a higher tier come first, whatever their priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_tier: Option<u16>,
    /// The group ids whose jobs it takes (jobs.csv's and the SWF's group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<i64>>,
    /// The SWF partition numbers (field 16) whose jobs it takes; with neither list, every
    /// job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swf_partitions: Option<Vec<i64>>,
    /// `TRESBillingWeights` of its own (`CPU=1.0,Mem=0.25G,GRES/gpu=2.0`): its jobs' usage is
    /// charged by this list instead of the site's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tres_billing_weights: Option<String>,
}

/// One account of the site's own tree (`sacctmgr add account NAME parent=PARENT
/// fairshare=N`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountSection {
    /// Its name (jobs.csv's `account`; not `root`).
    pub name: String,
    /// Its parent account, listed before it (root if left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Its shares among its siblings (`fairshare=`; 1), a whole number or `"parent"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares: Option<SharesValue>,
    /// The groups (jobs.csv's and the SWF's group ids) whose users run under it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<i64>>,
}

/// An account's shares: a whole number, or `"parent"`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum SharesValue {
    /// A number of shares.
    Count(u32),
    /// `"parent"`.
    Word(String),
}

impl AccountSection {
    pub(crate) fn account(&self, index: usize) -> Result<Account, String> {
        let shares = match &self.shares {
            None => Shares::Raw(1),
            Some(SharesValue::Count(n)) => Shares::Raw(*n),
            Some(SharesValue::Word(w)) if w == "parent" => Shares::Parent,
            Some(SharesValue::Word(w)) => {
                return Err(format!(
                    "scheduler.slurm.tree[{index}].shares = \"{w}\": expected a whole number or \"parent\""
                ));
            }
        };
        Ok(Account {
            name: self.name.clone(),
            parent: self.parent.clone().filter(|p| p != "root"),
            shares,
            groups: self.groups.clone().unwrap_or_default(),
        })
    }
}

/// One QOS: its priority, usage factor, limits and the jobs it takes.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QosSection {
    /// Its name (jobs.csv's `qos`).
    pub name: String,
    /// `Priority` (0): the QOS factor is this over the largest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u32>,
    /// `UsageFactor` (1): its jobs' usage is charged times this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_factor: Option<f64>,
    /// `MaxJobsPerUser`: running jobs per user (no limit if left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_jobs_per_user: Option<u32>,
    /// `MaxSubmitJobsPerUser`: pending and running jobs per user; past it a job waits held
    /// until one of the user's jobs ends (Slurm refuses the submission).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_submit_per_user: Option<u32>,
    /// `GrpTRES=cpu=N`: processors its running jobs hold together; a wider job never starts
    /// (held for good, as Slurm holds it with reason `QOSGrpCpuLimit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grp_cpus: Option<u32>,
    /// `GrpTRES`: what its running jobs hold together, in Slurm's syntax
    /// (`cpu=8,mem=64G,gres/gpu=3`); a job larger than it never starts. Its `cpu` is
    /// `grp_cpus`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grp_tres: Option<String>,
    /// `MaxTRESPerUser`: what one user's running jobs in it hold together (`gres/gpu=2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tres_per_user: Option<String>,
    /// `MaxTRESPerJob`: what one job may hold; a larger job never starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tres_per_job: Option<String>,
    /// The group ids whose jobs it takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<i64>>,
    /// The SWF queue numbers (field 15) whose jobs it takes; with neither list, every job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swf_queues: Option<Vec<i64>>,
}

impl PartitionSection {
    /// The partition; `key` (`scheduler.slurm.partitions[i]`) names it in errors.
    pub(crate) fn partition(&self, key: &str) -> Result<Partition, String> {
        let billing_weights = (self.tres_billing_weights.as_deref())
            .map(|text| {
                crate::billing::BillingWeights::parse(text)
                    .map_err(|e| format!("{key}.tres_billing_weights = \"{text}\": {e}"))
            })
            .transpose()?;
        Ok(Partition {
            billing_weights,
            name: self.name.clone(),
            processors: self.processors,
            max_time: self.max_time,
            priority_job_factor: self.priority_job_factor.unwrap_or(1),
            priority_tier: self.priority_tier.unwrap_or(1),
            jobs: Selector {
                groups: self.groups.clone().unwrap_or_default(),
                swf_numbers: self.swf_partitions.clone().unwrap_or_default(),
            },
        })
    }
}

impl QosSection {
    /// The QOS; `key` (`scheduler.slurm.qos[i]`) names it in errors.
    pub(crate) fn qos(&self, key: &str) -> Result<Qos, String> {
        let limit = |name: &str, text: &Option<String>| {
            text.as_deref()
                .map_or(Ok(TresLimit::default()), TresLimit::parse)
                .map_err(|e| format!("{key}.{name} = \"{}\": {e}", text.as_deref().unwrap_or("")))
        };
        let mut grp_tres = limit("grp_tres", &self.grp_tres)?;
        let grp_cpus = match (self.grp_cpus, grp_tres.cpus.take()) {
            (Some(cpus), _) => Some(cpus),
            (None, Some(cpus)) => Some(u32::try_from(cpus).map_err(|_| {
                format!("{key}.grp_tres: cpu={cpus} is more CPUs than the model counts")
            })?),
            (None, None) => None,
        };
        Ok(Qos {
            name: self.name.clone(),
            priority: self.priority.unwrap_or(0),
            usage_factor: self.usage_factor.unwrap_or(1.0),
            max_jobs_per_user: self.max_jobs_per_user,
            max_submit_per_user: self.max_submit_per_user,
            grp_cpus,
            grp_tres,
            max_tres_per_user: limit("max_tres_per_user", &self.max_tres_per_user)?,
            max_tres_per_job: limit("max_tres_per_job", &self.max_tres_per_job)?,
            jobs: Selector {
                groups: self.groups.clone().unwrap_or_default(),
                swf_numbers: self.swf_queues.clone().unwrap_or_default(),
            },
        })
    }
}

impl SlurmSection {
    /// `base` with this section's keys on top, checked; errors name the key as
    /// `scheduler.slurm.KEY`.
    pub fn apply(&self, base: SlurmConfig) -> Result<SlurmConfig, String> {
        let mut c = base;
        let w = &mut c.weights;
        set(&mut w.age, self.weight_age);
        set(&mut w.fairshare, self.weight_fairshare);
        set(&mut w.job_size, self.weight_job_size);
        set(&mut w.partition, self.weight_partition);
        set(&mut w.qos, self.weight_qos);
        set(&mut w.assoc, self.weight_assoc);
        set(&mut c.max_age, self.max_age);
        set(&mut c.favor_small, self.favor_small);
        set(&mut c.small_relative_to_time, self.small_relative_to_time);
        if let Some(name) = &self.fairshare {
            c.fairshare = FairShareAlgorithm::from_name(name).ok_or_else(|| {
                format!(
                    "scheduler.slurm.fairshare = \"{name}\": expected one of {}",
                    FairShareAlgorithm::ALL
                        .iter()
                        .map(|(_, n)| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
        }
        set(&mut c.dampening, self.dampening);
        set(&mut c.decay_half_life, self.decay_half_life);
        set(&mut c.calc_period, self.calc_period);
        set(&mut c.over_time_limit, self.over_time_limit);
        if self.cpus_per_node.is_some() {
            c.cpus_per_node = self.cpus_per_node;
        }
        set(&mut c.default_queue_depth, self.default_queue_depth);
        set(&mut c.sched_interval, self.sched_interval);
        set(&mut c.batch_sched_delay, self.batch_sched_delay);
        set(&mut c.bf_interval, self.bf_interval);
        set(&mut c.bf_resolution, self.bf_resolution);
        set(&mut c.bf_window, self.bf_window);
        set(&mut c.bf_max_job_test, self.bf_max_job_test);
        set(&mut c.bf_max_job_user, self.bf_max_job_user);
        set(&mut c.bf_max_job_part, self.bf_max_job_part);
        set(&mut c.bf_min_prio_reserve, self.bf_min_prio_reserve);
        set(&mut c.enforce_limits, self.enforce_limits);
        set(&mut c.shares_every, self.shares_every);
        if let Some(text) = &self.tres_billing_weights {
            c.billing_weights = crate::billing::BillingWeights::parse(text)
                .map_err(|e| format!("scheduler.slurm.tres_billing_weights = \"{text}\": {e}"))?;
        }
        if let Some(text) = &self.priority_weight_tres {
            c.weight_tres = crate::billing::PriorityWeightsTres::parse(text)
                .map_err(|e| format!("scheduler.slurm.priority_weight_tres = \"{text}\": {e}"))?;
        }
        if let Some(mode) = &self.billing {
            c.billing_mode = match mode.as_str() {
                "sum" => crate::billing::BillingMode::Sum,
                "max_tres" => crate::billing::BillingMode::MaxTres,
                "max_tres_gres" => crate::billing::BillingMode::MaxTresGres,
                other => {
                    return Err(format!(
                        "scheduler.slurm.billing = \"{other}\": expected `sum`, `max_tres` or `max_tres_gres`"
                    ));
                }
            };
        }
        if let Some(partitions) = &self.partitions {
            c.partitions = (partitions.iter().enumerate())
                .map(|(i, p)| p.partition(&format!("scheduler.slurm.partitions[{i}]")))
                .collect::<Result<_, String>>()?;
        }
        if let Some(qos) = &self.qos {
            c.qos = (qos.iter().enumerate())
                .map(|(i, q)| q.qos(&format!("scheduler.slurm.qos[{i}]")))
                .collect::<Result<_, String>>()?;
        }
        if let Some(members) = &self.members {
            c.members = members
                .iter()
                .map(|m| crate::config::Member {
                    user: m.user,
                    group: m.group,
                    shares: m.shares.unwrap_or(1),
                })
                .collect();
        }
        if let Some(tree) = &self.tree {
            c.accounts = tree
                .iter()
                .enumerate()
                .map(|(i, a)| a.account(i))
                .collect::<Result<_, String>>()?;
        }
        if let Some(accounts) = &self.accounts {
            c.accounts_from_groups = match accounts.as_str() {
                "groups" => true,
                "none" => false,
                other => {
                    return Err(format!(
                        "scheduler.slurm.accounts = \"{other}\": expected `groups` or `none`"
                    ));
                }
            };
        }
        if let Some(shares) = &self.group_shares {
            c.group_shares = shares_by_id("group_shares", "group", shares)?;
        }
        if let Some(shares) = &self.user_shares {
            c.user_shares = shares_by_id("user_shares", "user", shares)?;
        }
        c.check().map_err(|e| format!("scheduler.slurm.{e}"))?;
        Ok(c)
    }

    /// Whether no key is given.
    pub fn is_empty(&self) -> bool {
        self == &SlurmSection::default()
    }

    /// `other`'s keys on top of this section's.
    pub fn merged(&self, other: &SlurmSection) -> SlurmSection {
        macro_rules! pick {
            ($($field:ident),*) => {
                SlurmSection { $($field: other.$field.clone().or_else(|| self.$field.clone())),* }
            };
        }
        pick!(
            tres_billing_weights,
            billing,
            priority_weight_tres,
            weight_age,
            weight_fairshare,
            weight_job_size,
            weight_partition,
            weight_qos,
            weight_assoc,
            max_age,
            favor_small,
            small_relative_to_time,
            fairshare,
            dampening,
            decay_half_life,
            calc_period,
            over_time_limit,
            cpus_per_node,
            default_queue_depth,
            sched_interval,
            batch_sched_delay,
            bf_interval,
            bf_resolution,
            bf_window,
            bf_max_job_test,
            bf_max_job_user,
            bf_max_job_part,
            bf_min_prio_reserve,
            accounts,
            group_shares,
            user_shares,
            enforce_limits,
            shares_every,
            partitions,
            members,
            tree,
            qos
        )
    }
}

/// A shares table's keys read as ids; the error names the key.
fn shares_by_id(
    key: &str,
    what: &str,
    shares: &BTreeMap<String, u32>,
) -> Result<BTreeMap<i64, u32>, String> {
    shares
        .iter()
        .map(|(id, &n)| {
            id.trim().parse::<i64>().map(|id| (id, n)).map_err(|_| {
                format!("scheduler.slurm.{key}.\"{id}\": expected a {what} id (an integer)")
            })
        })
        .collect()
}

fn set<T>(target: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *target = v;
    }
}
