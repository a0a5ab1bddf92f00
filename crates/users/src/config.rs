//! A user group as the population file describes it (`[[groups]]`), and its checked parameters.
//!
//! A group's table has the keys every kind shares (the group's name and size, its estimate model,
//! its memory-bandwidth demands, and `kind`) and the keys of its kind ([`crate::kinds`]). Once
//! `kind` is read, the other keys are parsed by the kind's own configuration, which refuses keys
//! it does not know: a key of another kind is an error whatever its value, and the error names
//! the group and the key.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use crate::Time;
use crate::estimate::{self, ModalParams};
use crate::kinds::shmueli::ShmueliConfig;
use crate::kinds::{self, AnyKindConfig, KINDS, Kind, KindConfig, Prefix, UserFactory};

/// Where a job's runtime estimate (its kill time) comes from (`estimates` in a group).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Estimates {
    /// Drawn from the fitted estimate model: the estimates users gave jobs of the same runtime
    /// class (powers of two) in the traces. Most are far above the runtime; some are below it
    /// and those jobs are killed.
    #[default]
    Fitted,
    /// The exact runtime (perfect estimates).
    Exact,
    /// The random f-model: uniform in [r, (f + 1) r] (`estimate_f`), truncated at
    /// `estimate_max` (Tsafrir's thesis, sections 3.8 and 5.2).
    F,
    /// The deterministic f-model: (f + 1) r, truncated at `estimate_max`.
    #[serde(rename = "f-deterministic")]
    FDeterministic,
    /// The Phi-model (thesis, section 1.2.2): the runtime with probability `estimate_phi`, else
    /// r / u (u uniform in (0, 1]; times 10 below 90 s), truncated at `estimate_max`.
    Phi,
    /// Tsafrir's modal model (thesis, chapter 5) with E_max = `estimate_max`, optionally its share
    /// (`estimate_max_share`) and known modes (`estimate_modes`), for `estimate_jobs` jobs.
    Modal,
}

/// The keys every group has, whatever its kind, in the order they are echoed (around the kind's
/// own keys: see [`GroupConfig`]'s `Serialize`).
pub const COMMON_KEYS: [&str; 14] = [
    "name",
    "users",
    "estimates",
    "estimate_f",
    "estimate_phi",
    "estimate_max",
    "estimate_max_share",
    "estimate_modes",
    "estimate_jobs",
    "kind",
    "bandwidth_mix",
    "bandwidth_demands",
    "resources",
    "accounts",
];

/// One `[[groups]]` table of a population file: the keys every kind shares, and the kind with its
/// own keys. Every parameter defaults to the value of the kind's paper.
#[derive(Debug, Clone, schemars::JsonSchema)]
pub struct GroupConfig {
    /// The group's name (sessions.csv, summaries).
    pub name: String,
    /// How many users it has.
    pub users: u32,
    /// Where runtime estimates come from (default: the kind's, `fitted` for `shmueli` groups,
    /// `exact` for `schlagkamp` groups).
    pub estimates: Option<Estimates>,
    /// The f of the f-models (`estimates = "f"` or `"f-deterministic"`).
    pub estimate_f: Option<f64>,
    /// The Phi of the Phi-model.
    pub estimate_phi: Option<f64>,
    /// E_max, seconds: the largest estimate users may give (f, Phi and modal models; default
    /// 64800, 18 h, "typically around 18h" in Tsafrir's thesis, section 5.6).
    pub estimate_max: Option<i64>,
    /// The modal model's share of jobs that use E_max (default: the model's own, about 21 %).
    pub estimate_max_share: Option<f64>,
    /// The modal model's known modes: `[[seconds, share], ...]`.
    pub estimate_modes: Option<Vec<(i64, f64)>>,
    /// The modal model's N, the workload size it sets the number of distinct estimates by
    /// (default 100000).
    pub estimate_jobs: Option<u64>,
    /// Memory-bandwidth demand mix (paper 001): the shares of high, medium and low demand jobs,
    /// summing to 1 (`[0.8, 0.1, 0.1]` is the paper's HIGH). Needs a machine of nodes
    /// (`site.node_processors`). Default: no demand.
    pub bandwidth_mix: Option<Vec<f64>>,
    /// Memory bandwidth a process of a low, medium and high demand job uses, MB/s (default
    /// `[500, 1000, 2000]`).
    pub bandwidth_demands: Option<Vec<u32>>,
    /// On a machine of `[[nodes]]`: the resource mix its jobs ask for (GPUs, memory per CPU,
    /// partitions), a `resources.csv` that `sitesim fit` wrote from a sacct dump with TRES
    /// (a path relative to the population file). Default: CPUs only, in the default partition.
    pub resources: Option<String>,
    /// Under the Slurm model with a site tree (`[[scheduler.slurm.tree]]`, e.g. the
    /// slurm-tree.toml `sitesim convert --assoc` writes): the tree accounts its users are dealt
    /// over, `"tree"` (every account that takes a group) or a list of account names. Each user
    /// runs all its jobs under one account, in proportion to the accounts' members
    /// (`[[scheduler.slurm.members]]`; evenly without members), and the simulated users replace
    /// the tree's members (the dump's users) as the associations there from the start. Default:
    /// none (the group's jobs carry its position, 1, 2, ..., as the group id a tree account may
    /// take).
    pub accounts: Option<AccountsChoice>,
    /// The user model (`kind`, default `shmueli`) with its own keys.
    #[schemars(with = "String", extend("default" = "shmueli"))]
    pub kind: Box<dyn AnyKindConfig>,
}

impl PartialEq for GroupConfig {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.users == other.users
            && self.estimates == other.estimates
            && self.estimate_f == other.estimate_f
            && self.estimate_phi == other.estimate_phi
            && self.estimate_max == other.estimate_max
            && self.estimate_max_share == other.estimate_max_share
            && self.estimate_modes == other.estimate_modes
            && self.estimate_jobs == other.estimate_jobs
            && self.bandwidth_mix == other.bandwidth_mix
            && self.bandwidth_demands == other.bandwidth_demands
            && self.resources == other.resources
            && self.accounts == other.accounts
            && self.kind.same_as(other.kind.as_ref())
    }
}

/// The tree accounts a group's users are dealt over (`accounts` in a group).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum AccountsChoice {
    /// `"tree"`: every account of the site's tree that takes a group.
    Word(String),
    /// These accounts of the site's tree, by name.
    Names(Vec<String>),
}

/// A parameter value out of range, named by its key path (`groups[1].day_probability`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key} = {value}: {problem}")]
pub struct ConfigError {
    /// The key path.
    pub key: String,
    /// The value as given.
    pub value: String,
    /// What is wrong with it.
    pub problem: String,
}

/// The checked parameters of a group, in simulation units (seconds).
#[derive(Debug, Clone)]
pub struct GroupParams {
    /// Estimate source.
    pub estimates: EstimateSpec,
    /// The user model's checked parameters: they build each user's behaviour.
    pub kind: Arc<dyn UserFactory>,
    /// The jobs' memory-bandwidth demands, if the group has them.
    pub bandwidth: Option<BandwidthMix>,
    /// What its jobs ask of a machine of node types besides processors, if it has a mix (set
    /// by whoever knows the machine: the site's `[[nodes]]` and the group's `resources`).
    pub resources: Option<std::sync::Arc<crate::resources::ResourceMix>>,
    /// The group id each of its users' jobs carry, by the user's place in the group (set by
    /// whoever knows the site's Slurm tree: the accounts the group's `accounts` deals its users
    /// over); none: the group's position from 1.
    pub job_groups: Option<std::sync::Arc<[i64]>>,
}

impl GroupParams {
    /// Parameters of a group of `kind` with fitted estimates and no bandwidth demands.
    pub fn new(kind: impl UserFactory + 'static) -> GroupParams {
        GroupParams {
            estimates: EstimateSpec::Fitted,
            kind: Arc::new(kind),
            bandwidth: None,
            resources: None,
            job_groups: None,
        }
    }
}

/// How a group's jobs use memory bandwidth (paper 001, section V-A): each job is high, medium or
/// low demand with these probabilities, and each of its processes uses that class's bandwidth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandwidthMix {
    /// Probabilities of high, medium and low demand.
    pub shares: [f64; 3],
    /// MB/s per process of low, medium and high demand jobs.
    pub demands: [u32; 3],
}

impl BandwidthMix {
    /// Checks the shares (high, medium, low: probabilities summing to 1); `demands` are MB/s per
    /// process of low, medium and high demand jobs.
    pub fn new(shares: [f64; 3], demands: [u32; 3]) -> Result<BandwidthMix, String> {
        check_distribution(&shares)?;
        Ok(BandwidthMix { shares, demands })
    }

    /// The first demand above a node's `capacity` (MB/s), if any: a process cannot use more than
    /// its node has.
    pub fn above_capacity(&self, capacity: f64) -> Option<u32> {
        self.demands
            .iter()
            .copied()
            .find(|&d| f64::from(d) > capacity)
    }

    /// The demand (MB/s per process) for a uniform draw `u` in [0, 1).
    pub fn demand(&self, u: f64) -> u32 {
        let [high, medium, _] = self.shares;
        if u < high {
            self.demands[2]
        } else if u < high + medium {
            self.demands[1]
        } else {
            self.demands[0]
        }
    }
}

/// A checked estimate model of a group (see [`Estimates`]); the modal model's modes are drawn
/// when the population is built, from the run's seed.
#[derive(Debug, Clone, PartialEq)]
pub enum EstimateSpec {
    /// From the fitted model.
    Fitted,
    /// Any other model.
    Model(EstimateModelSpec),
}

/// The parameters of a non-fitted estimate model.
#[derive(Debug, Clone, PartialEq)]
pub enum EstimateModelSpec {
    /// The runtime.
    Exact,
    /// The f-model, truncated at `max`.
    F {
        /// f >= 0.
        f: f64,
        /// Deterministic or random.
        deterministic: bool,
        /// E_max, seconds.
        max: Time,
    },
    /// The Phi-model.
    Phi {
        /// Phi in [0, 1].
        phi: f64,
        /// E_max, seconds.
        max: Time,
    },
    /// The modal model.
    Modal(ModalParams),
}

impl EstimateModelSpec {
    /// The model; the modal model's modes are drawn from `rng`.
    pub fn build<R: rand::Rng + ?Sized>(
        &self,
        rng: &mut R,
    ) -> Result<estimate::EstimateModel, estimate::EstimateError> {
        use estimate::EstimateModel;
        Ok(match self {
            EstimateModelSpec::Exact => EstimateModel::Exact,
            &EstimateModelSpec::F {
                f,
                deterministic,
                max,
            } => EstimateModel::F {
                f,
                deterministic,
                max: Some(max),
            },
            &EstimateModelSpec::Phi { phi, max } => EstimateModel::Phi { phi, max },
            EstimateModelSpec::Modal(params) => {
                EstimateModel::Modal(estimate::Modes::generate(params, rng)?)
            }
        })
    }
}

impl GroupConfig {
    /// A `shmueli` group of `users` users with every parameter at its default (the paper's
    /// values).
    pub fn new(name: &str, users: u32) -> GroupConfig {
        GroupConfig::of_kind(name, users, ShmueliConfig::default())
    }

    /// A group of `users` users of the kind `config` configures, with the common keys at their
    /// defaults.
    pub fn of_kind<C: KindConfig>(name: &str, users: u32, config: C) -> GroupConfig {
        GroupConfig {
            name: name.to_string(),
            users,
            estimates: None,
            estimate_f: None,
            estimate_phi: None,
            estimate_max: None,
            estimate_max_share: None,
            estimate_modes: None,
            estimate_jobs: None,
            bandwidth_mix: None,
            bandwidth_demands: None,
            resources: None,
            accounts: None,
            kind: Box::new(config),
        }
    }

    /// The fitted model the group draws from: `embedded` (the models/combined the binary was
    /// built with) or a model directory relative to the population file.
    pub fn models(&self) -> &str {
        self.kind.models()
    }

    /// Checks the values; `prefix` is the group's key path (`groups[0]`).
    pub fn params(&self, prefix: &str) -> Result<GroupParams, ConfigError> {
        let error = |key: &str, value: String, problem: &str| ConfigError {
            key: format!("{prefix}.{key}"),
            value,
            problem: problem.to_string(),
        };
        if self.name.trim().is_empty() {
            return Err(error(
                "name",
                format!("{:?}", self.name),
                "a group needs a name",
            ));
        }
        // names go into one-line places: CSV fields, the SWF header's comment lines
        if self.name.chars().any(char::is_control) {
            return Err(error(
                "name",
                format!("{:?}", self.name),
                "a group's name must be one line of printable characters (no line break, tab or other control character)",
            ));
        }
        let kind = self.kind.check(&Prefix(prefix))?;
        let estimates = self.estimate_spec(&error)?;
        let bandwidth = match &self.bandwidth_mix {
            None => {
                if let Some(d) = &self.bandwidth_demands {
                    return Err(error(
                        "bandwidth_demands",
                        format!("{d:?}"),
                        "needs bandwidth_mix",
                    ));
                }
                None
            }
            Some(mix) => {
                let text = format!("{mix:?}");
                let shares: [f64; 3] = mix.as_slice().try_into().map_err(|_| {
                    error(
                        "bandwidth_mix",
                        text.clone(),
                        "give the shares of high, medium and low demand jobs",
                    )
                })?;
                let demands = match &self.bandwidth_demands {
                    None => [500, 1000, 2000],
                    Some(d) => d.as_slice().try_into().map_err(|_| {
                        error(
                            "bandwidth_demands",
                            format!("{d:?}"),
                            "give the MB/s per process of low, medium and high demand jobs",
                        )
                    })?,
                };
                Some(
                    BandwidthMix::new(shares, demands)
                        .map_err(|p| error("bandwidth_mix", text, &p))?,
                )
            }
        };
        Ok(GroupParams {
            estimates,
            kind,
            bandwidth,
            resources: None,
            job_groups: None,
        })
    }

    /// The estimate model and its keys; keys of other models are refused.
    fn estimate_spec(
        &self,
        error: &dyn Fn(&str, String, &str) -> ConfigError,
    ) -> Result<EstimateSpec, ConfigError> {
        let model = self
            .estimates
            .unwrap_or_else(|| self.kind.default_estimates());
        let uses = |key: &str| match key {
            "estimate_f" => matches!(model, Estimates::F | Estimates::FDeterministic),
            "estimate_phi" => model == Estimates::Phi,
            "estimate_max" => {
                matches!(
                    model,
                    Estimates::F | Estimates::FDeterministic | Estimates::Phi | Estimates::Modal
                )
            }
            _ => model == Estimates::Modal,
        };
        let given = [
            ("estimate_f", self.estimate_f.map(|v| v.to_string())),
            ("estimate_phi", self.estimate_phi.map(|v| v.to_string())),
            ("estimate_max", self.estimate_max.map(|v| v.to_string())),
            (
                "estimate_max_share",
                self.estimate_max_share.map(|v| v.to_string()),
            ),
            (
                "estimate_modes",
                self.estimate_modes.as_ref().map(|v| format!("{v:?}")),
            ),
            ("estimate_jobs", self.estimate_jobs.map(|v| v.to_string())),
        ];
        for (key, value) in given {
            if let Some(value) = value.filter(|_| !uses(key)) {
                return Err(error(
                    key,
                    value,
                    &format!("does not apply to estimates = {:?}", model_name(model)),
                ));
            }
        }
        let max = self.estimate_max.unwrap_or(DEFAULT_ESTIMATE_MAX);
        if max < 60 {
            return Err(error(
                "estimate_max",
                max.to_string(),
                "E_max must be at least 60 seconds",
            ));
        }
        let required = |key: &str, v: Option<f64>| {
            v.ok_or_else(|| {
                error(
                    "estimates",
                    format!("{:?}", model_name(model)),
                    &format!("needs {key}"),
                )
            })
        };
        let spec = match model {
            Estimates::Fitted => return Ok(EstimateSpec::Fitted),
            Estimates::Exact => EstimateModelSpec::Exact,
            Estimates::F | Estimates::FDeterministic => {
                let f = required("estimate_f", self.estimate_f)?;
                let f = estimate::check_f(f)
                    .map_err(|e| error("estimate_f", f.to_string(), &e.to_string()))?;
                EstimateModelSpec::F {
                    f,
                    deterministic: model == Estimates::FDeterministic,
                    max,
                }
            }
            Estimates::Phi => {
                let phi = required("estimate_phi", self.estimate_phi)?;
                let phi = estimate::check_phi(phi)
                    .map_err(|e| error("estimate_phi", phi.to_string(), &e.to_string()))?;
                EstimateModelSpec::Phi { phi, max }
            }
            Estimates::Modal => {
                let mut given: Vec<(Time, f64)> = self.estimate_modes.clone().unwrap_or_default();
                if let Some(share) = self.estimate_max_share {
                    if given.iter().any(|&(t, _)| t == max) {
                        return Err(error(
                            "estimate_max_share",
                            share.to_string(),
                            "E_max's share is also given in estimate_modes",
                        ));
                    }
                    given.push((max, share));
                }
                // K, the distinct estimates drawn, grows with N (about N / 800 past Table 5.3's
                // 250,000 jobs): N is bounded by the most jobs a replay takes
                const MAX_ESTIMATE_JOBS: u64 = 20_000_000;
                if let Some(n) = self
                    .estimate_jobs
                    .filter(|n| !(1..=MAX_ESTIMATE_JOBS).contains(n))
                {
                    return Err(error(
                        "estimate_jobs",
                        n.to_string(),
                        &format!("must be 1 to {MAX_ESTIMATE_JOBS} jobs"),
                    ));
                }
                let params = ModalParams {
                    jobs: self.estimate_jobs.unwrap_or(100_000) as usize,
                    max,
                    given,
                };
                // Checked now (the modes are drawn when the population is built).
                estimate::Modes::generate(&params, &mut rand_pcg::Pcg64::new(0, 1)).map_err(
                    |e| {
                        error(
                            "estimate_modes",
                            format!("{:?}", self.estimate_modes.clone().unwrap_or_default()),
                            &e.to_string(),
                        )
                    },
                )?;
                EstimateModelSpec::Modal(params)
            }
        };
        Ok(EstimateSpec::Model(spec))
    }
}

/// Echoes the group: `name`, `users`, the kind's keys (with their defaults; `null` for optional
/// keys not given), the estimate keys, `kind`, the bandwidth keys.
impl Serialize for GroupConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let values = self.kind.values();
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("name", &self.name)?;
        map.serialize_entry("users", &self.users)?;
        for key in self.kind.keys() {
            map.serialize_entry(key, &values.get(*key))?;
        }
        map.serialize_entry("estimates", &self.estimates)?;
        map.serialize_entry("estimate_f", &self.estimate_f)?;
        map.serialize_entry("estimate_phi", &self.estimate_phi)?;
        map.serialize_entry("estimate_max", &self.estimate_max)?;
        map.serialize_entry("estimate_max_share", &self.estimate_max_share)?;
        map.serialize_entry("estimate_modes", &self.estimate_modes)?;
        map.serialize_entry("estimate_jobs", &self.estimate_jobs)?;
        map.serialize_entry("kind", self.kind.name())?;
        map.serialize_entry("bandwidth_mix", &self.bandwidth_mix)?;
        map.serialize_entry("bandwidth_demands", &self.bandwidth_demands)?;
        if let Some(resources) = &self.resources {
            map.serialize_entry("resources", resources)?;
        }
        if let Some(accounts) = &self.accounts {
            map.serialize_entry("accounts", accounts)?;
        }
        map.end()
    }
}

/// A group's table on its own: errors name the group by its name (`group "g".key`).
impl<'de> Deserialize<'de> for GroupConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        GroupSeed { index: None }.deserialize(deserializer)
    }
}

/// `[[groups]]` of a population file (for `#[serde(deserialize_with)]`): errors name each group
/// by its index (`groups[1].key`), as the checks of [`GroupConfig::params`] do.
pub fn deserialize_groups<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<GroupConfig>, D::Error> {
    struct Groups;
    impl<'de> Visitor<'de> for Groups {
        type Value = Vec<GroupConfig>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an array of group tables")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut groups = Vec::new();
            while let Some(g) = seq.next_element_seed(GroupSeed {
                index: Some(groups.len()),
            })? {
                groups.push(g);
            }
            Ok(groups)
        }
    }
    deserializer.deserialize_seq(Groups)
}

/// Reads one group table; `index` (its place in `[[groups]]`) names it in errors.
struct GroupSeed {
    index: Option<usize>,
}

impl<'de> DeserializeSeed<'de> for GroupSeed {
    type Value = GroupConfig;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<GroupConfig, D::Error> {
        deserializer.deserialize_map(self)
    }
}

/// The value of `kind`, looked up in [`KINDS`].
struct KindName(&'static Kind);

impl<'de> Deserialize<'de> for KindName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        kinds::kind(&name).map(KindName).ok_or_else(|| {
            let known: Vec<String> = KINDS
                .iter()
                .map(|k| format!("`{}` ({})", k.name, k.help))
                .collect();
            de::Error::custom(format!(
                "unknown kind `{name}`, expected one of: {}",
                known.join("; ")
            ))
        })
    }
}

impl<'de> Visitor<'de> for GroupSeed {
    type Value = GroupConfig;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a group table")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<GroupConfig, A::Error> {
        let mut name: Option<String> = None;
        let mut users: Option<u32> = None;
        let mut kind: Option<&'static Kind> = None;
        let mut group = GroupConfig::new("", 0);
        // The kind's keys, in the order given.
        let mut rest: Vec<(String, toml::Value)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "name" => name = Some(map.next_value()?),
                "users" => users = Some(map.next_value()?),
                "kind" => kind = Some(map.next_value::<KindName>()?.0),
                "estimates" => group.estimates = Some(map.next_value()?),
                "estimate_f" => group.estimate_f = Some(map.next_value()?),
                "estimate_phi" => group.estimate_phi = Some(map.next_value()?),
                "estimate_max" => group.estimate_max = Some(map.next_value()?),
                "estimate_max_share" => group.estimate_max_share = Some(map.next_value()?),
                "estimate_modes" => group.estimate_modes = Some(map.next_value()?),
                "estimate_jobs" => group.estimate_jobs = Some(map.next_value()?),
                "bandwidth_mix" => group.bandwidth_mix = Some(map.next_value()?),
                "bandwidth_demands" => group.bandwidth_demands = Some(map.next_value()?),
                "resources" => group.resources = Some(map.next_value()?),
                "accounts" => group.accounts = Some(map.next_value()?),
                _ => rest.push((key, map.next_value()?)),
            }
        }
        group.name = name.ok_or_else(|| de::Error::missing_field("name"))?;
        group.users = users.ok_or_else(|| de::Error::missing_field("users"))?;
        let kind = kind.unwrap_or_else(kinds::default_kind);
        let prefix = match self.index {
            Some(i) => format!("groups[{i}]"),
            None => format!("group {:?}", group.name),
        };
        let keys = (kind.keys)();
        let mut table = toml::Table::new();
        for (key, value) in rest {
            if !keys.contains(&key.as_str()) {
                let problem = match KINDS.iter().find(|k| (k.keys)().contains(&key.as_str())) {
                    Some(owner) => format!("applies to kind = {:?} groups only", owner.name),
                    None => {
                        let expected: Vec<String> = COMMON_KEYS
                            .iter()
                            .chain(keys)
                            .map(|k| format!("`{k}`"))
                            .collect();
                        format!(
                            "unknown field `{key}`, expected one of {}",
                            expected.join(", ")
                        )
                    }
                };
                return Err(de::Error::custom(ConfigError {
                    key: format!("{prefix}.{key}"),
                    value: value.to_string(),
                    problem,
                }));
            }
            table.insert(key, value);
        }
        group.kind = (kind.parse)(table, &prefix).map_err(de::Error::custom)?;
        Ok(group)
    }
}

/// E_max when a group gives none: 18 hours (Tsafrir's thesis, section 5.6: "typically around
/// 18h").
pub const DEFAULT_ESTIMATE_MAX: Time = 18 * 3600;

/// The name of an estimate model as the population file writes it.
fn model_name(model: Estimates) -> &'static str {
    match model {
        Estimates::Fitted => "fitted",
        Estimates::Exact => "exact",
        Estimates::F => "f",
        Estimates::FDeterministic => "f-deterministic",
        Estimates::Phi => "phi",
        Estimates::Modal => "modal",
    }
}

/// Probabilities: each in [0, 1], summing to 1 (within 1e-6).
pub(crate) fn check_distribution(values: &[f64]) -> Result<(), String> {
    if let Some(bad) = values.iter().find(|v| !(0.0..=1.0).contains(*v)) {
        return Err(format!("{bad} is not a probability in [0, 1]"));
    }
    let sum: f64 = values.iter().sum();
    if (sum - 1.0).abs() > 1e-6 {
        // Rounded, so that 0.8 + 0.8 + 0.1 reads 1.7.
        let shown = (sum * 1e6).round() / 1e6;
        return Err(format!("the probabilities sum to {shown}, not 1"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::schlagkamp::{SchlagkampConfig, SchlagkampParams};
    use crate::kinds::shmueli::{BatchGaps, ShmueliParams};

    fn group(extra: &str) -> Result<GroupConfig, toml::de::Error> {
        toml::from_str(&format!("name = \"g\"\nusers = 10\n{extra}"))
    }

    #[test]
    fn defaults_are_the_papers() {
        let p = group("").unwrap().params("groups[0]").unwrap();
        assert_eq!(p.estimates, EstimateSpec::Fitted);
        assert_eq!(p.kind.kind(), "shmueli");
        let p = *p.kind.downcast_ref::<ShmueliParams>().unwrap();
        assert_eq!(p, ShmueliParams::default());
        assert_eq!((p.continue_a, p.continue_b), (0.8, 0.05));
        assert_eq!((p.day_probability, p.weekday_probability), (0.7, 0.8));
        assert_eq!(
            (p.day_start, p.day_end, p.shift_minutes),
            (27_000, 63_000, 60)
        );
        assert!(p.repeat_jobs);
        assert_eq!(p.batch_gaps, BatchGaps::None);
        assert_eq!(group("").unwrap(), GroupConfig::new("g", 10));
    }

    #[test]
    fn bad_values_name_their_key() {
        let err = group("day_probability = 1.5")
            .unwrap()
            .params("groups[2]")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "groups[2].day_probability = 1.5: a probability must lie in [0, 1]"
        );
        let err = group("day_start = \"18:00\"")
            .unwrap()
            .params("groups[0]")
            .unwrap_err();
        assert!(err.to_string().starts_with("groups[0].day_end"), "{err}");
        let err = group("continue_b = -1.0")
            .unwrap()
            .params("groups[0]")
            .unwrap_err();
        assert!(err.to_string().contains("continue_b"), "{err}");
    }

    fn error_of(extra: &str) -> String {
        group(extra)
            .unwrap()
            .params("groups[1]")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn schlagkamp_groups_default_to_fig_6_and_check_their_keys() {
        let p = group("kind = \"schlagkamp\"").unwrap().params("g").unwrap();
        assert_eq!(
            p.kind.downcast_ref::<SchlagkampParams>(),
            Some(&SchlagkampParams::artificial())
        );
        assert_eq!(p.estimates, EstimateSpec::Model(EstimateModelSpec::Exact));
        let p = group("kind = \"schlagkamp\"\nthink_slope = 0\nthink_constant = 600")
            .unwrap()
            .params("g")
            .unwrap();
        let k = p.kind.downcast_ref::<SchlagkampParams>().unwrap();
        assert_eq!((k.think_slope, k.think_constant), (0.0, 600.0));
        // Only b given: m stays lin's.
        let p = group("kind = \"schlagkamp\"\nthink_constant = 600")
            .unwrap()
            .params("g")
            .unwrap();
        let k = p.kind.downcast_ref::<SchlagkampParams>().unwrap();
        assert_eq!((k.think_slope, k.think_constant), (0.4826, 600.0));
        // A preset with either coefficient is refused, naming both (one would be ignored).
        for extra in ["think_slope = 0.5", "think_constant = 600"] {
            let err = error_of(&format!("kind = \"schlagkamp\"\nthink = \"c120\"\n{extra}"));
            assert!(
                err.starts_with("groups[1].think_")
                    && err.contains("cannot be combined with think = \"c120\"")
                    && err.contains("m = 0 and b = 7200 s"),
                "{err}"
            );
        }
        for (extra, key, words) in [
            (
                "day_weights = [0.3, 0.3, 0.3, 0.3, 0.0, 0.0, 0.0]",
                "groups[1].day_weights",
                "sum to 1.2",
            ),
            ("day_weights = [1.0]", "groups[1].day_weights", "7 weights"),
            ("think_slope = -0.5", "groups[1].think_slope", ">= 0"),
            ("activity_ratio = 2.0", "groups[1].activity_ratio", "[0, 1]"),
            (
                "job_sizes = [1, 2]",
                "groups[1].size_probabilities",
                "each of the 2 job_sizes",
            ),
            (
                "job_sizes = [1, 2]\nsize_probabilities = [0.5, 0.5]\nruntime_means = [10.0, -1.0]\nruntime_sds = [1.0, 1.0]",
                "groups[1].runtime_means",
                ">= 0",
            ),
            (
                "work_start = \"18:00\"",
                "groups[1].work_end",
                "after it starts",
            ),
        ] {
            let err = error_of(&format!("kind = \"schlagkamp\"\n{extra}"));
            assert!(
                err.starts_with(key) && err.contains(words),
                "{extra}: {err}"
            );
        }
    }

    /// A group table as a population file's `[[groups]]` gives it (errors name `groups[1]`).
    fn second_group(extra: &str) -> Result<Vec<GroupConfig>, String> {
        #[derive(Debug, Deserialize)]
        struct File {
            #[serde(deserialize_with = "deserialize_groups")]
            groups: Vec<GroupConfig>,
        }
        let text = format!(
            "[[groups]]\nname = \"a\"\nusers = 1\n[[groups]]\nname = \"g\"\nusers = 10\n{extra}"
        );
        toml::from_str::<File>(&text)
            .map(|f| f.groups)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_key_of_another_kind_is_refused_even_at_its_default() {
        // Shmueli keys in a Schlagkamp group, each at the value a Shmueli group defaults to.
        for extra in [
            "continue_a = 0.8",
            "continue_b = 0.05",
            "day_start = \"07:30\"",
            "shift_minutes = 60",
            "repeat_jobs = true",
            "batch_gaps = \"none\"",
            "models = \"embedded\"",
        ] {
            let err = second_group(&format!("kind = \"schlagkamp\"\n{extra}")).unwrap_err();
            let key = extra.split(' ').next().unwrap();
            assert!(
                err.contains(&format!("groups[1].{key} = "))
                    && err.contains("applies to kind = \"shmueli\" groups only"),
                "{extra}: {err}"
            );
        }
        // Schlagkamp keys in a Shmueli group (explicit or by default), at Fig. 6's values.
        for kind in ["", "kind = \"shmueli\"\n"] {
            for extra in [
                "think = \"lin\"",
                "activity_ratio = 0.5",
                "work_start = \"09:00\"",
                "day_weights = [0.2, 0.2, 0.2, 0.2, 0.2, 0.0, 0.0]",
            ] {
                let err = second_group(&format!("{kind}{extra}")).unwrap_err();
                let key = extra.split(' ').next().unwrap();
                assert!(
                    err.contains(&format!("groups[1].{key} = "))
                        && err.contains("applies to kind = \"schlagkamp\" groups only"),
                    "{extra}: {err}"
                );
            }
        }
        // On its own, a group is named by its name.
        let err = group("kind = \"schlagkamp\"\ncontinue_a = 0.8")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("group \"g\".continue_a = 0.8: applies"),
            "{err}"
        );
    }

    #[test]
    fn kind_values_of_the_wrong_type_and_unknown_kinds_name_the_key() {
        let err = second_group("kind = \"schlagkamp\"\nactivity_ratio = \"half\"").unwrap_err();
        assert!(
            err.contains("groups[1].activity_ratio = \"half\": invalid type"),
            "{err}"
        );
        let err = second_group("shift_minutes = -5").unwrap_err();
        assert!(err.contains("groups[1].shift_minutes = -5"), "{err}");
        let err = second_group("kind = \"no-such-kind\"").unwrap_err();
        assert!(
            err.contains("unknown kind `no-such-kind`") && err.contains("`schlagkamp`"),
            "{err}"
        );
        let err = second_group("nmae = \"x\"").unwrap_err();
        assert!(
            err.contains("groups[1].nmae = \"x\": unknown field `nmae`, expected one of `name`"),
            "{err}"
        );
    }

    #[test]
    fn each_kind_round_trips_its_config() {
        let shmueli = "kind = \"shmueli\"\nmodels = \"dir\"\ncontinue_a = 0.5\ncontinue_b = 0.1\nday_probability = 0.2\nweekday_probability = 0.3\nday_start = \"08:00\"\nday_end = \"18:00\"\nshift_minutes = 30\nrepeat_jobs = false\nbatch_gaps = \"fitted\"\nestimates = \"f\"\nestimate_f = 2.0\nestimate_max = 7200\nbandwidth_mix = [0.5, 0.2, 0.3]\nbandwidth_demands = [100, 200, 300]";
        let schlagkamp = "kind = \"schlagkamp\"\nactivity_ratio = 0.7\nday_weights = [0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0]\nwork_start = \"08:00\"\nwork_end = \"12:00\"\njob_sizes = [1, 4]\nsize_probabilities = [0.25, 0.75]\nruntime_means = [60.0, 600.0]\nruntime_sds = [0.0, 60.0]\nthink_slope = 0.1\nthink_constant = 30.0\nestimates = \"modal\"\nestimate_modes = [[600, 0.2]]\nestimate_jobs = 1000";
        for (extra, kind) in [
            ("", "shmueli"),
            (shmueli, "shmueli"),
            ("kind = \"schlagkamp\"", "schlagkamp"),
            (schlagkamp, "schlagkamp"),
        ] {
            let config = group(extra).unwrap();
            assert_eq!(config.kind.name(), kind);
            let text = toml::to_string(&config).unwrap();
            let again: GroupConfig = toml::from_str(&text).unwrap();
            assert_eq!(again, config, "{text}");
            assert!(again.params("g").is_ok(), "{text}");
        }
        // Given keys are kept, the others take their defaults.
        let config = group(schlagkamp).unwrap();
        let k = config
            .kind
            .as_any()
            .downcast_ref::<SchlagkampConfig>()
            .unwrap();
        assert_eq!((k.think_slope, k.activity_ratio), (Some(0.1), Some(0.7)));
        let config = group(shmueli).unwrap();
        assert_eq!(config.models(), "dir");
        assert_eq!(GroupConfig::new("g", 1).models(), "embedded");
    }

    #[test]
    fn the_echo_lists_the_kinds_keys_between_the_common_ones() {
        let text = toml::to_string(&group("").unwrap()).unwrap();
        let keys: Vec<&str> = text.lines().filter_map(|l| l.split(" = ").next()).collect();
        assert_eq!(
            keys,
            [
                "name",
                "users",
                "models",
                "feedback",
                "day_probability",
                "weekday_probability",
                "day_start",
                "day_end",
                "shift_minutes",
                "repeat_jobs",
                "batch_gaps",
                "kind"
            ]
        );
        for kind in KINDS {
            // Every kind's keys are distinct from the common ones and from the other kinds'.
            for key in (kind.keys)() {
                assert!(!COMMON_KEYS.contains(key), "{key}");
                let owners = KINDS.iter().filter(|k| (k.keys)().contains(key)).count();
                assert_eq!(owners, 1, "{key}");
            }
        }
    }

    #[test]
    fn estimate_models_need_their_keys_and_only_theirs() {
        let p = group("estimates = \"f\"\nestimate_f = 3.0\nestimate_max = 7200")
            .unwrap()
            .params("g")
            .unwrap();
        assert_eq!(
            p.estimates,
            EstimateSpec::Model(EstimateModelSpec::F {
                f: 3.0,
                deterministic: false,
                max: 7200
            })
        );
        let p = group("estimates = \"modal\"\nestimate_max_share = 0.3")
            .unwrap()
            .params("g")
            .unwrap();
        let EstimateSpec::Model(EstimateModelSpec::Modal(m)) = p.estimates else {
            panic!("not modal")
        };
        assert_eq!(
            (m.max, m.given.clone()),
            (DEFAULT_ESTIMATE_MAX, vec![(64_800, 0.3)])
        );
        for (extra, key, words) in [
            (
                "estimates = \"f\"",
                "groups[1].estimates",
                "needs estimate_f",
            ),
            (
                "estimates = \"f\"\nestimate_f = -2.0",
                "groups[1].estimate_f",
                ">= 0",
            ),
            (
                "estimates = \"phi\"\nestimate_phi = 1.5",
                "groups[1].estimate_phi",
                "[0, 1]",
            ),
            (
                "estimates = \"modal\"\nestimate_f = 1.0",
                "groups[1].estimate_f",
                "does not apply",
            ),
            (
                "estimate_max = 7200",
                "groups[1].estimate_max",
                "does not apply",
            ),
            (
                "estimates = \"modal\"\nestimate_modes = [[600, 0.7], [1200, 0.6]]",
                "groups[1].estimate_modes",
                "at most 1",
            ),
            (
                "estimates = \"modal\"\nestimate_max = 3600\nestimate_modes = [[7200, 0.1]]",
                "groups[1].estimate_modes",
                "outside",
            ),
            (
                "estimates = \"phi\"\nestimate_phi = 0.1\nestimate_max = 10",
                "groups[1].estimate_max",
                "at least 60",
            ),
        ] {
            let err = error_of(extra);
            assert!(
                err.starts_with(key) && err.contains(words),
                "{extra}: {err}"
            );
        }
    }

    #[test]
    fn unknown_keys_and_negative_counts_are_rejected_by_the_parser() {
        let err = group("dya_probability = 0.5").unwrap_err().to_string();
        assert!(err.contains("unknown field `dya_probability`"), "{err}");
        let err = group("kind = \"schlagkamp\"\ndya_probability = 0.5")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `dya_probability`"), "{err}");
        let err = toml::from_str::<GroupConfig>("name = \"g\"\nusers = -3\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("users") || err.contains("-3"), "{err}");
    }
}
