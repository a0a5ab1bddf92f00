//! The Slurm model's configuration: the slurm.conf values it models, with Slurm's defaults
//! (Slurm 26.05.3, `src/common/read_config.c:_validate_and_set_defaults`,
//! `src/plugins/sched/backfill/backfill.c:_load_config`, `src/slurmctld/job_scheduler.c`).
//! Times are seconds (slurm.conf gives some in minutes; the importer converts).

use std::collections::BTreeMap;

use cluster::Time;

/// Which fair-share algorithm ranks the associations (`PriorityFlags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FairShareAlgorithm {
    /// Fair Tree, Slurm's default since 19.05.
    #[default]
    FairTree,
    /// Classic fair-share (`PriorityFlags=NO_FAIR_TREE`).
    Classic,
    /// Classic with depth-oblivious effective usage (`PriorityFlags=DEPTH_OBLIVIOUS`).
    DepthOblivious,
}

impl FairShareAlgorithm {
    /// Every algorithm with its name (`fair_tree`, `classic`, `depth_oblivious`).
    pub const ALL: [(FairShareAlgorithm, &'static str); 3] = [
        (FairShareAlgorithm::FairTree, "fair_tree"),
        (FairShareAlgorithm::Classic, "classic"),
        (FairShareAlgorithm::DepthOblivious, "depth_oblivious"),
    ];

    /// The algorithm's name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(a, _)| *a == self)
            .map_or("fair_tree", |(_, n)| n)
    }

    /// The algorithm called `name`.
    pub fn from_name(name: &str) -> Option<FairShareAlgorithm> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(a, _)| *a)
    }
}

/// Which jobs a partition or QOS takes: those of the listed groups (the jobs' group ids) or
/// SWF numbers (a trace's partition number for a partition, its queue number for a QOS); with
/// neither list, every job.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selector {
    /// Group ids.
    pub groups: Vec<i64>,
    /// SWF partition numbers (partitions) or queue numbers (QOS).
    pub swf_numbers: Vec<i64>,
}

impl Selector {
    /// Whether a job of `group` with SWF number `number` is selected.
    pub fn selects(&self, group: i64, number: i64) -> bool {
        (self.groups.is_empty() && self.swf_numbers.is_empty())
            || self.groups.contains(&group)
            || self.swf_numbers.contains(&number)
    }
}

/// A partition (`PartitionName=`): a set of processors, counted, with a time limit and a
/// priority. Partitions may overlap; each counts the processors its own running jobs hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Partition {
    /// Its name.
    pub name: String,
    /// The processors of its set (`None`: the whole machine); its running jobs hold at most
    /// these.
    pub processors: Option<u32>,
    /// `MaxTime`, seconds (`None`: unlimited): a job with a longer time limit goes to another
    /// partition that takes it, if there is one.
    pub max_time: Option<Time>,
    /// `PriorityJobFactor` (1): its partition factor is this over the largest.
    pub priority_job_factor: u16,
    /// `PriorityTier` (1): jobs of a higher tier come first in the queue, whatever their
    /// priority.
    pub priority_tier: u16,
    /// The jobs it takes.
    pub jobs: Selector,
    /// Its `TRESBillingWeights` (`None`: the site's, [`SlurmConfig::billing_weights`]).
    pub billing_weights: Option<crate::billing::BillingWeights>,
}

impl Partition {
    /// A partition of the whole machine, Slurm's defaults, taking every job.
    pub fn whole_machine(name: &str) -> Partition {
        Partition {
            name: name.to_string(),
            processors: None,
            max_time: None,
            priority_job_factor: 1,
            priority_tier: 1,
            jobs: Selector::default(),
            billing_weights: None,
        }
    }
}

/// A quality of service (`sacctmgr add qos`): a priority, a usage factor and limits that hold
/// a job until they allow it.
#[derive(Debug, Clone, PartialEq)]
pub struct Qos {
    /// Its name.
    pub name: String,
    /// `Priority` (0): its QOS factor is this over the largest.
    pub priority: u32,
    /// `UsageFactor` (1): the usage its jobs are charged is multiplied by this.
    pub usage_factor: f64,
    /// `MaxJobsPerUser`: running jobs per user (`None`: no limit; reason
    /// `QOSMaxJobsPerUserLimit`).
    pub max_jobs_per_user: Option<u32>,
    /// `MaxSubmitJobsPerUser`: pending and running jobs per user (`None`: no limit). Slurm
    /// refuses a submission past it; here the job waits held (reason
    /// `QOSMaxSubmitJobPerUserLimit`) until one of the user's jobs ends, as a user who
    /// submits again would.
    pub max_submit_per_user: Option<u32>,
    /// `GrpTRES=cpu=N`: processors all its running jobs hold together (`None`: no limit;
    /// reason `QOSGrpCpuLimit`).
    pub grp_cpus: Option<u32>,
    /// `GrpTRES`'s memory and GPUs (`mem=`, `gres/gpu=`): what all its running jobs hold
    /// together (reasons `QOSGrpMemLimit`, `QOSGrpGRES`); its CPUs are [`Qos::grp_cpus`].
    pub grp_tres: TresLimit,
    /// `MaxTRESPerUser`: what one user's running jobs in it hold together (reasons
    /// `QOSMaxCpuPerUserLimit`, `QOSMaxMemoryPerUser`, `QOSMaxGRESPerUser`).
    pub max_tres_per_user: TresLimit,
    /// `MaxTRESPerJob`: what one job may hold; a larger job never starts (reasons
    /// `QOSMaxCpuPerJobLimit`, `QOSMaxMemoryPerJob`, `QOSMaxGRESPerJob`).
    pub max_tres_per_job: TresLimit,
    /// The jobs it takes.
    pub jobs: Selector,
}

impl Qos {
    /// Slurm's `normal` QOS: priority 0, no limits, taking every job.
    pub fn normal() -> Qos {
        Qos {
            name: "normal".to_string(),
            priority: 0,
            usage_factor: 1.0,
            max_jobs_per_user: None,
            max_submit_per_user: None,
            grp_cpus: None,
            grp_tres: TresLimit::default(),
            max_tres_per_user: TresLimit::default(),
            max_tres_per_job: TresLimit::default(),
            jobs: Selector::default(),
        }
    }
}

/// A QOS limit on trackable resources (`GrpTRES`, `MaxTRESPerUser`, `MaxTRESPerJob`): CPUs,
/// memory (MiB) and GPUs (`gres/gpu`), each `None` for no limit. Slurm's syntax:
/// `cpu=8,mem=64G,gres/gpu=3` ([`TresLimit::parse`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TresLimit {
    /// CPUs.
    pub cpus: Option<u64>,
    /// Memory, MiB.
    pub memory: Option<u64>,
    /// GPUs of any type.
    pub gpus: Option<u64>,
}

impl TresLimit {
    /// Reads Slurm's TRES list (`sacctmgr modify qos ... set GrpTRES=cpu=8,gres/gpu=3`):
    /// `cpu`, `mem` (a count of MiB, or with a unit `M`, `G`, `T`) and `gres/gpu` (also
    /// `gres/gpu:TYPE`, counted as GPUs of any type); `-1` clears a limit, as sacctmgr takes
    /// it. Any other TRES is an error naming it: the model tracks only these.
    pub fn parse(text: &str) -> Result<TresLimit, String> {
        let mut limit = TresLimit::default();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (name, value) = item.split_once('=').ok_or_else(|| {
                format!("`{item}`: expected NAME=COUNT (cpu=8, mem=64G, gres/gpu=3)")
            })?;
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim();
            let amount = if value == "-1" {
                None
            } else if name == "mem" {
                Some(memory_mib(value).ok_or_else(|| {
                    format!("`{item}`: memory is a count of MiB or a number with M, G or T")
                })?)
            } else {
                Some(
                    value
                        .parse::<u64>()
                        .map_err(|_| format!("`{item}`: {value} is not a whole count"))?,
                )
            };
            match name.as_str() {
                "cpu" => limit.cpus = amount,
                "mem" => limit.memory = amount,
                n if n == "gres/gpu" || n.starts_with("gres/gpu:") => limit.gpus = amount,
                _ => {
                    return Err(format!(
                        "`{item}`: the model limits cpu, mem and gres/gpu only"
                    ));
                }
            }
        }
        Ok(limit)
    }

    /// Whether no amount is limited.
    pub fn is_none(&self) -> bool {
        *self == TresLimit::default()
    }

    /// The first amount of `cpus`, `memory` (MiB) and `gpus` over its limit: 0 CPUs, 1
    /// memory, 2 GPUs.
    pub fn exceeded(&self, cpus: u64, memory: u64, gpus: u64) -> Option<usize> {
        [(self.cpus, cpus), (self.memory, memory), (self.gpus, gpus)]
            .into_iter()
            .position(|(limit, amount)| limit.is_some_and(|l| amount > l))
    }
}

impl std::fmt::Display for TresLimit {
    /// Slurm's syntax, `cpu=8,mem=65536M,gres/gpu=3` (empty for no limit).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let items: Vec<String> = [
            self.cpus.map(|c| format!("cpu={c}")),
            self.memory.map(|m| format!("mem={m}M")),
            self.gpus.map(|g| format!("gres/gpu={g}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        f.write_str(&items.join(","))
    }
}

/// A memory amount as sacctmgr reads it: MiB without a unit, else `M`, `G` or `T`.
fn memory_mib(text: &str) -> Option<u64> {
    let (number, scale) = match text.as_bytes().last()?.to_ascii_uppercase() {
        b'M' => (&text[..text.len() - 1], 1),
        b'G' => (&text[..text.len() - 1], 1 << 10),
        b'T' => (&text[..text.len() - 1], 1 << 20),
        _ => (text, 1),
    };
    number.parse::<u64>().ok()?.checked_mul(scale)
}

/// An account of the site's own tree (`sacctmgr add account NAME parent=PARENT
/// fairshare=N`): the users of the listed groups run under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// Its name (not `root`).
    pub name: String,
    /// Its parent account, listed before it (`None`: root).
    pub parent: Option<String>,
    /// Its shares among its siblings (`fairshare=parent`: [`crate::Shares::Parent`]).
    pub shares: crate::Shares,
    /// The groups (jobs' group ids) whose users run under it.
    pub groups: Vec<i64>,
}

/// A user's association that exists from the start, as a site's database holds it before the
/// user's first job: the user's jobs of `group` run under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    /// The user id.
    pub user: i64,
    /// The group id: the account of the tree that takes it, else its derived account.
    pub group: i64,
    /// Its shares among its account's children.
    pub shares: u32,
}

/// The weights of the priority factors (`PriorityWeight*`); Slurm's default is 0 for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Weights {
    /// `PriorityWeightAge`.
    pub age: u32,
    /// `PriorityWeightFairshare`.
    pub fairshare: u32,
    /// `PriorityWeightJobSize`.
    pub job_size: u32,
    /// `PriorityWeightPartition`.
    pub partition: u32,
    /// `PriorityWeightQOS`.
    pub qos: u32,
    /// `PriorityWeightAssoc`.
    pub assoc: u32,
}

/// The Slurm model's parameters. [`SlurmConfig::default`] is Slurm's own defaults;
/// [`SlurmConfig::documented_site`] the example configuration of Slurm's multifactor
/// documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmConfig {
    /// The priority factors' weights.
    pub weights: Weights,
    /// `TRESBillingWeights` (none: a job bills its CPUs): a running job's usage is charged
    /// at its billing per second instead of its CPUs ([`crate::billing::billing`]); a
    /// partition's own list replaces it for its jobs.
    pub billing_weights: crate::billing::BillingWeights,
    /// `PriorityFlags=MAX_TRES` / `MAX_TRES_GRES`: how the billing adds the weighted TRES.
    pub billing_mode: crate::billing::BillingMode,
    /// `PriorityWeightTRES` (none): a job's TRES factor, each TRES it asks for over its
    /// partition's total times its weight ([`crate::billing::tres_priority`]), added to its
    /// priority.
    pub weight_tres: crate::billing::PriorityWeightsTres,
    /// `PriorityMaxAge`: the wait at which the age factor reaches 1, seconds (7 days).
    pub max_age: Time,
    /// `PriorityFavorSmall`: the job-size factor favours small jobs (no).
    pub favor_small: bool,
    /// `PriorityFlags=SMALL_RELATIVE_TO_TIME`: job size relative to the time limit (no).
    pub small_relative_to_time: bool,
    /// The fair-share algorithm (Fair Tree).
    pub fairshare: FairShareAlgorithm,
    /// `FairShareDampeningFactor` (1; classic only).
    pub dampening: u16,
    /// `PriorityDecayHalfLife`, seconds (7 days; 0: no decay).
    pub decay_half_life: Time,
    /// `PriorityCalcPeriod`: how often usage is decayed and charged, fair-share recomputed and
    /// priorities recalculated, seconds (5 minutes).
    pub calc_period: Time,
    /// `OverTimeLimit`: how long a job may run past its time limit, seconds (0).
    pub over_time_limit: Time,
    /// Processors per node, for the job-size factor's node terms (`None`: a node per
    /// processor, so the node and CPU terms agree).
    pub cpus_per_node: Option<u32>,
    /// `default_queue_depth`: the jobs an event-triggered main-loop run examines (100; it
    /// examines one more, as Slurm's `job_depth++ > depth` does).
    pub default_queue_depth: u32,
    /// `sched_interval`: how often the main loop runs over the whole queue, seconds (60).
    pub sched_interval: Time,
    /// `batch_sched_delay`: how long after the previous main-loop run a submission's run may
    /// come, seconds (3).
    pub batch_sched_delay: Time,
    /// `bf_interval`: the time between backfill cycles, seconds (30).
    pub bf_interval: Time,
    /// `bf_resolution`: the grid of backfill reservations, seconds (60).
    pub bf_resolution: Time,
    /// `bf_window`: how far ahead backfill reserves, seconds (1440 minutes).
    pub bf_window: Time,
    /// `bf_max_job_test`: the jobs one backfill cycle tests (500).
    pub bf_max_job_test: u32,
    /// `bf_max_job_user`: the jobs per user one backfill cycle examines (0: no limit).
    pub bf_max_job_user: u32,
    /// `bf_max_job_part`: the jobs per partition one backfill cycle examines (0: no limit).
    pub bf_max_job_part: u32,
    /// `bf_min_prio_reserve`: jobs below this priority may start but never reserve (0).
    pub bf_min_prio_reserve: u32,
    /// How the derived association tree is built: an account per group under root, each with
    /// one share, its users under it with one share each (true, the default); or every user
    /// directly under root with one share (false).
    pub accounts_from_groups: bool,
    /// The shares (sacctmgr's `fairshare=`) of the derived tree's accounts, by group id; an
    /// account not listed has one. Listed accounts exist from the start, as a site's
    /// associations do, so they count in their level's shares before their first job.
    pub group_shares: BTreeMap<i64, u32>,
    /// The shares of users' associations, by user id; a user not listed has one.
    pub user_shares: BTreeMap<i64, u32>,
    /// Users' associations that exist from the start, in order ([`Member`]).
    pub members: Vec<Member>,
    /// `AccountingStorageEnforce` holds `limits` (or `safe`): then a job's last partial
    /// period is charged when it ends (`acct_policy.c`); without it (the default) only the
    /// priority calculations charge running jobs, so a job shorter than a calculation period
    /// that starts and ends between two of them leaves no usage.
    pub enforce_limits: bool,
    /// How often shares.csv samples the association tree's fair-share columns, seconds: at
    /// the first priority calculation at or after each multiple (one day; the calculation
    /// period or less samples every calculation). Not a Slurm setting: it decides only what
    /// is recorded ([`crate::SlurmRule::sample_shares`]).
    pub shares_every: Time,
    /// The site's own accounts, parents first: the users of their groups run under them; the
    /// other groups follow `accounts_from_groups`.
    pub accounts: Vec<Account>,
    /// The partitions, in order (empty: one partition of the whole machine). A job goes to
    /// the first that selects it and takes it (its processors and `MaxTime`); failing that,
    /// the first that selects it and holds its processors; failing that, the first that holds
    /// its processors.
    pub partitions: Vec<Partition>,
    /// The QOS, in order (empty: one, `normal`). A job goes to the first that selects it, or
    /// to the first.
    pub qos: Vec<Qos>,
}

impl Default for SlurmConfig {
    fn default() -> Self {
        SlurmConfig {
            weights: Weights::default(),
            max_age: 7 * 86_400,
            favor_small: false,
            small_relative_to_time: false,
            fairshare: FairShareAlgorithm::FairTree,
            dampening: 1,
            decay_half_life: 7 * 86_400,
            calc_period: 300,
            over_time_limit: 0,
            cpus_per_node: None,
            default_queue_depth: 100,
            sched_interval: 60,
            batch_sched_delay: 3,
            bf_interval: 30,
            bf_resolution: 60,
            bf_window: 1440 * 60,
            bf_max_job_test: 500,
            bf_max_job_user: 0,
            bf_max_job_part: 0,
            bf_min_prio_reserve: 0,
            accounts_from_groups: true,
            group_shares: BTreeMap::new(),
            user_shares: BTreeMap::new(),
            members: Vec::new(),
            enforce_limits: false,
            shares_every: 86_400,
            accounts: Vec::new(),
            partitions: Vec::new(),
            qos: Vec::new(),
            billing_weights: crate::billing::BillingWeights::default(),
            billing_mode: crate::billing::BillingMode::Sum,
            weight_tres: crate::billing::PriorityWeightsTres::default(),
        }
    }
}

impl SlurmConfig {
    /// The example configuration of Slurm's multifactor priority documentation
    /// (`doc/html/priority_multifactor.shtml`, "Configuration Example", slurm-26-05-3-1
    /// L470-494): a 14-day half-life, PriorityMaxAge 14 days, PriorityWeightAge 1000,
    /// PriorityWeightFairshare 10000, PriorityWeightJobSize 1000, PriorityWeightPartition 1000,
    /// PriorityWeightQOS 0; everything else Slurm's defaults.
    pub fn documented_site() -> SlurmConfig {
        SlurmConfig {
            weights: Weights {
                age: 1000,
                fairshare: 10_000,
                job_size: 1000,
                partition: 1000,
                qos: 0,
                assoc: 0,
            },
            max_age: 14 * 86_400,
            decay_half_life: 14 * 86_400,
            ..SlurmConfig::default()
        }
    }

    /// Checks the values Slurm itself would refuse or reset; the error names the key.
    pub fn check(&self) -> Result<(), String> {
        let positive = |key: &str, value: Time| {
            if value > 0 {
                Ok(())
            } else {
                Err(format!("{key} = {value}: must be > 0 seconds"))
            }
        };
        positive("max_age", self.max_age)?;
        positive("shares_every", self.shares_every)?;
        if self.calc_period < 60 {
            return Err(format!(
                "calc_period = {}: Slurm's PriorityCalcPeriod is at least 1 minute (60 s)",
                self.calc_period
            ));
        }
        if self.decay_half_life < 0 {
            return Err(format!(
                "decay_half_life = {}: must be >= 0 seconds (0: no decay)",
                self.decay_half_life
            ));
        }
        if self.over_time_limit < 0 {
            return Err(format!(
                "over_time_limit = {}: must be >= 0 seconds",
                self.over_time_limit
            ));
        }
        if self.dampening == 0 {
            return Err("dampening = 0: FairShareDampeningFactor is at least 1".to_string());
        }
        if self.cpus_per_node == Some(0) {
            return Err("cpus_per_node = 0: must be at least 1".to_string());
        }
        positive("sched_interval", self.sched_interval)?;
        if self.batch_sched_delay < 0 {
            return Err(format!(
                "batch_sched_delay = {}: must be >= 0 seconds",
                self.batch_sched_delay
            ));
        }
        // backfill.c:_load_config's ranges
        let within = |key: &str, value: Time, low: Time, high: Time| {
            if (low..=high).contains(&value) {
                Ok(())
            } else {
                Err(format!(
                    "{key} = {value}: Slurm accepts {low} to {high} seconds"
                ))
            }
        };
        within("bf_interval", self.bf_interval, 1, 10_800)?;
        within("bf_resolution", self.bf_resolution, 1, 3600)?;
        within("bf_window", self.bf_window, 60, 43_200 * 60)?;
        if !(1..=1_000_000).contains(&self.bf_max_job_test) {
            return Err(format!(
                "bf_max_job_test = {}: Slurm accepts 1 to 1000000",
                self.bf_max_job_test
            ));
        }
        let mut names = std::collections::BTreeSet::new();
        for (i, p) in self.partitions.iter().enumerate() {
            let key = format!("partitions[{i}]");
            if p.name.is_empty() || !names.insert(p.name.as_str()) {
                return Err(format!(
                    "{key}.name = \"{}\": a partition needs a name of its own",
                    p.name
                ));
            }
            if p.processors == Some(0) {
                return Err(format!("{key}.processors = 0: must be at least 1"));
            }
            if let Some(t) = p.max_time.filter(|&t| t <= 0) {
                return Err(format!("{key}.max_time = {t}: must be > 0 seconds"));
            }
        }
        let mut names = std::collections::BTreeSet::new();
        for (i, q) in self.qos.iter().enumerate() {
            let key = format!("qos[{i}]");
            if q.name.is_empty() || !names.insert(q.name.as_str()) {
                return Err(format!(
                    "{key}.name = \"{}\": a QOS needs a name of its own",
                    q.name
                ));
            }
            if !(q.usage_factor.is_finite() && q.usage_factor >= 0.0) {
                return Err(format!(
                    "{key}.usage_factor = {}: must be a number >= 0",
                    q.usage_factor
                ));
            }
            for (limit, value) in [
                ("max_jobs_per_user", q.max_jobs_per_user),
                ("max_submit_per_user", q.max_submit_per_user),
                ("grp_cpus", q.grp_cpus),
            ] {
                if value == Some(0) {
                    return Err(format!(
                        "{key}.{limit} = 0: must be at least 1 (leave it out for no limit)"
                    ));
                }
            }
        }
        let mut known: Vec<&str> = vec!["root"];
        let mut grouped = std::collections::BTreeMap::new();
        for (i, a) in self.accounts.iter().enumerate() {
            let key = format!("tree[{i}]");
            if a.name.is_empty() || known.contains(&a.name.as_str()) {
                return Err(format!(
                    "{key}.name = \"{}\": an account needs a name of its own (not root)",
                    a.name
                ));
            }
            if let Some(parent) = &a.parent
                && !known.contains(&parent.as_str())
            {
                return Err(format!(
                    "{key}.parent = \"{parent}\": no such account before it (list parents first)"
                ));
            }
            for &group in &a.groups {
                if let Some(other) = grouped.insert(group, a.name.as_str()) {
                    return Err(format!(
                        "{key}.groups: group {group} is already under account {other}"
                    ));
                }
                if self.group_shares.contains_key(&group) {
                    return Err(format!(
                        "{key}.groups: group {group} also has group_shares (its account is {})",
                        a.name
                    ));
                }
            }
            known.push(a.name.as_str());
        }
        if !self.accounts_from_groups && !self.group_shares.is_empty() {
            return Err(
                "group_shares: the derived tree has no group accounts with accounts = \"none\""
                    .to_string(),
            );
        }
        Ok(())
    }

    /// The partitions jobs go to: those configured, or one of the whole machine called
    /// `default`.
    pub fn effective_partitions(&self) -> Vec<Partition> {
        if self.partitions.is_empty() {
            vec![Partition::whole_machine("default")]
        } else {
            self.partitions.clone()
        }
    }

    /// The QOS jobs go to: those configured, or Slurm's `normal`.
    pub fn effective_qos(&self) -> Vec<Qos> {
        if self.qos.is_empty() {
            vec![Qos::normal()]
        } else {
            self.qos.clone()
        }
    }

    /// The partitions' names, by index ([`crate::AtStart::partition`]).
    pub fn partition_names(&self) -> Vec<String> {
        self.effective_partitions()
            .into_iter()
            .map(|p| p.name)
            .collect()
    }

    /// The QOS names, by index ([`crate::AtStart::qos`]).
    pub fn qos_names(&self) -> Vec<String> {
        self.effective_qos().into_iter().map(|q| q.name).collect()
    }

    /// The per-second usage decay factor ([`crate::fairshare::decay_per_second`]).
    pub fn decay_per_second(&self) -> f64 {
        crate::fairshare::decay_per_second(self.decay_half_life as f64)
    }
}
