//! Population files: the site (machine, calendar), the scheduler, the run, and the user groups.
//!
//! ```toml
//! [site]
//! processors = 2048
//! start = "2024-01-01T00:00:00"   # time 0 of the run; a Monday 00:00 by default
//!
//! [scheduler]
//! policy = "easy"                 # any name `sitesim schedulers` lists
//! alpha = 6000                    # creasy only
//! # dynp_lower = 7200, dynp_upper = 9000 (dynp); quality = "artww" (dynp-simple, dynp-advanced)
//!
//! [run]
//! weeks = 26
//! seed = 1
//! warmup_days = 0                 # measure from this day on
//! measure = "submitted"           # or "started", "ended": which jobs submitted in the weeks count
//!
//! [[groups]]
//! name = "users"
//! users = 250                     # every other key of a group: see users::GroupConfig
//! ```
//!
//! Unknown keys are errors; so are values out of range, named by their key.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};
use users::{Calendar, Group, GroupConfig};

use crate::choices::{JobSizesChoice, SelectionChoice};
use crate::error::{Result, ensure, invalid};
use crate::limits;

/// The default site: the paper's experiment (`configs/paper.toml`, embedded at build time).
pub const DEFAULT_SITE: &str = include_str!("../sites/paper.toml");

fn default_start() -> String {
    "2024-01-01T00:00:00".to_string()
}
fn default_weeks() -> u32 {
    26
}
fn default_seed() -> u64 {
    1
}

/// `[site]`: the machine (its processors, nodes and memory bandwidth) and the calendar the
/// run starts on.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SiteSection {
    /// Processors in the machine (with `[[nodes]]`: their cores, which it may leave out).
    #[serde(default)]
    pub processors: u32,
    /// Calendar time of the run's time 0, `YYYY-MM-DDTHH:MM:SS` (local wall clock, no DST).
    #[serde(default = "default_start")]
    pub start: String,
    /// Processors per node: a machine of nodes whose jobs get specific processors (paper 001;
    /// default: processors are only counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_processors: Option<u32>,
    /// How a job's processors are chosen on a machine of nodes (default `first-fit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<SelectionChoice>,
    /// Memory bandwidth of a node, MB/s (default 6000), for groups with a `bandwidth_mix`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_bandwidth: Option<f64>,
    /// What to do with jobs a group's fitted model draws wider than the machine: `reject`
    /// (the default: refuse the site), `clip` or `scale` (see [`JobSizesChoice`]).
    #[serde(default, skip_serializing_if = "JobSizesChoice::is_reject")]
    pub job_sizes: JobSizesChoice,
}

fn default_policy() -> String {
    "easy".to_string()
}

/// `[scheduler]`: a preset (`policy`) and/or the parts that replace the preset's (`order`,
/// `backfill`, `predictor`), and the parameters of the parts: every other key, read by the part
/// that declares it (`alpha` by the `creasy` order; `sitesim reference` lists them all), an
/// error for a scheduler none of whose parts takes it.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
pub struct SchedulerSection {
    /// The preset: a name of `schedulers::REGISTRY`'s presets (an alias is read as the policy's name);
    /// `easy` when left out.
    #[serde(deserialize_with = "policy_name", default = "default_policy")]
    pub policy: String,
    /// The queue order (a name of `schedulers::REGISTRY`'s orders), replacing the preset's.
    #[serde(default)]
    pub order: Option<String>,
    /// The backfilling rule (a name of `schedulers::REGISTRY`'s rules), replacing the preset's.
    #[serde(default)]
    pub backfill: Option<String>,
    /// The runtime predictor (a name of `schedulers::REGISTRY`'s predictors), replacing the
    /// preset's.
    #[serde(default)]
    pub predictor: Option<String>,
    /// A real `slurm.conf` whose scheduling lines configure the Slurm model (schedulers
    /// `slurm`, `slurm-site`; read as `sitesim import-slurm-conf` reads it); relative to the
    /// current directory.
    #[serde(default)]
    pub slurm_conf: Option<std::path::PathBuf>,
    /// A replay of a sacct dump under the Slurm model: the site's association tree
    /// (`sacctmgr --parsable2 show assoc`; its accounts' shares and users' shares), relative to
    /// the current directory.
    #[serde(default)]
    pub slurm_assoc: Option<std::path::PathBuf>,
    /// A replay of a sacct dump under the Slurm model: the site's QOS (`sacctmgr --parsable2
    /// show qos`; priority, usage factor, limits), each taking the dump's jobs of its name.
    #[serde(default)]
    pub slurm_qos: Option<std::path::PathBuf>,
    /// The Slurm model's parameters (schedulers `slurm`, `slurm-site`), on top of
    /// `slurm_conf`'s.
    #[serde(default)]
    pub slurm: Option<crate::slurm::SlurmSection>,
    /// The parts' parameters, by key (`alpha = 1500`): each part's own serde struct reads its
    /// keys when the scheduler is composed ([`cluster::PartParams`]).
    #[serde(flatten)]
    #[schemars(skip)]
    pub params: cluster::ParamValues,
}

impl Default for SchedulerSection {
    fn default() -> Self {
        SchedulerSection {
            policy: default_policy(),
            order: None,
            backfill: None,
            predictor: None,
            slurm_conf: None,
            slurm_assoc: None,
            slurm_qos: None,
            slurm: None,
            params: cluster::ParamValues::new(),
        }
    }
}

/// Written back (a run's summary.json, a sweep's site.toml) in a fixed order: `policy`, every
/// registered part's plain parameter (`null` when not given, so the summary says which were
/// left at their defaults), the parts, then `slurm_conf` and the sections.
impl Serialize for SchedulerSection {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let keys = schedulers::REGISTRY.param_keys_shown();
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("policy", &self.policy)?;
        for (key, _) in keys.iter().filter(|(_, shown)| *shown) {
            map.serialize_entry(key, &self.params.get(*key))?;
        }
        for (key, value) in [
            ("order", &self.order),
            ("backfill", &self.backfill),
            ("predictor", &self.predictor),
        ] {
            if let Some(value) = value {
                map.serialize_entry(key, value)?;
            }
        }
        for (key, path) in [
            ("slurm_conf", &self.slurm_conf),
            ("slurm_assoc", &self.slurm_assoc),
            ("slurm_qos", &self.slurm_qos),
        ] {
            if let Some(path) = path {
                map.serialize_entry(key, path)?;
            }
        }
        // Keys no part shows when left out, and keys no part takes (refused when composed).
        for (key, value) in &self.params {
            if !keys.iter().any(|(k, shown)| k == key && *shown) {
                map.serialize_entry(key, value)?;
            }
        }
        if let Some(section) = &self.slurm {
            map.serialize_entry("slurm", section)?;
        }
        map.end()
    }
}

impl SchedulerSection {
    /// The preset and parts this section names.
    pub fn composition(&self) -> cluster::Composition<'_> {
        cluster::Composition {
            policy: Some(&self.policy),
            order: self.order.as_deref(),
            backfill: self.backfill.as_deref(),
            predictor: self.predictor.as_deref(),
        }
    }

    /// The scheduler this section names; a parameter none of its parts takes is an error. The
    /// Slurm rules read `[scheduler.slurm]` as their parameter `slurm`, with `slurm_conf`'s
    /// lines under it (the file is read here: the model does no I/O). `slurm_assoc` and
    /// `slurm_qos` apply only to a replay of a sacct dump ([`SchedulerSection::spec_for_dump`]).
    pub fn spec(&self) -> Result<cluster::SchedulerSpec> {
        if let Some(key) = self.dump_only_key() {
            return Err(invalid!(
                "scheduler.{key} applies only to a replay of a Slurm accounting dump (sacct), whose users, accounts and QOS it names"
            ));
        }
        self.spec_with(None)
    }

    /// `slurm_assoc` or `slurm_qos`, if given: keys only a replay of a dump takes.
    pub fn dump_only_key(&self) -> Option<&'static str> {
        if self.slurm_assoc.is_some() {
            Some("slurm_assoc")
        } else if self.slurm_qos.is_some() {
            Some("slurm_qos")
        } else {
            None
        }
    }

    /// The scheduler of a replay of a sacct dump ([`SchedulerSection::spec`] otherwise): under
    /// the Slurm model, the site's tree and QOS of `accounting` (read from `slurm_assoc` and
    /// `slurm_qos`) come between slurm.conf's keys and `[scheduler.slurm]`'s own, and each
    /// partition that selects no jobs of its own takes the dump's jobs of its name (the dump's
    /// partition numbers follow `accounting`'s first names).
    pub fn spec_for_dump(
        &self,
        accounting: &crate::accounting::SiteAccounting,
    ) -> Result<cluster::SchedulerSpec> {
        self.spec_with(Some(accounting))
    }

    fn spec_with(
        &self,
        accounting: Option<&crate::accounting::SiteAccounting>,
    ) -> Result<cluster::SchedulerSpec> {
        let compose = |given: &cluster::ParamValues| {
            schedulers::REGISTRY
                .compose(self.composition(), given)
                .map_err(|e| match e {
                    cluster::PolicyError::UnknownParam { key, .. } => {
                        let mut known = vec![
                            "policy",
                            "order",
                            "backfill",
                            "predictor",
                            "slurm_conf",
                            "slurm_assoc",
                            "slurm_qos",
                            SLURM_KEY,
                        ];
                        for param in schedulers::REGISTRY.param_keys() {
                            if !known.contains(&param) {
                                known.push(param);
                            }
                        }
                        invalid!("unknown key scheduler.{key}; known: {}", known.join(", "))
                    }
                    e => invalid!("{}", crate::naming::policy_error(&e)),
                })
        };
        let mut given = self.params.clone();
        if self.slurm.is_none() && self.slurm_conf.is_none() && self.dump_only_key().is_none() {
            return compose(&given);
        }
        // Slurm's keys only for a Slurm rule (named as the user wrote them)
        let spec = compose(&given)?;
        if let Some(key) = self.dump_only_key()
            && !spec.backfill().takes(SLURM_KEY)
        {
            return Err(invalid!(
                "scheduler.{key}: the association tree and QOS configure the Slurm schedulers (slurm, slurm-site); this one is {}",
                spec.label()
            ));
        }
        if !spec.backfill().takes(SLURM_KEY) && self.slurm.is_none() {
            // A slurm.conf alone: its nodes are a replay's machine, whatever the scheduler.
            return Ok(spec);
        }
        if !spec.backfill().takes(SLURM_KEY) {
            let takers: Vec<&str> = schedulers::REGISTRY
                .policies()
                .filter(|p| p.takes(SLURM_KEY))
                .map(|p| p.name)
                .collect();
            return Err(invalid!(
                "scheduler.slurm: its keys apply only to the Slurm schedulers ({}); this one is {}",
                takers.join(", "),
                spec.label()
            ));
        }
        let mut section = match &self.slurm_conf {
            Some(path) => crate::slurm::import_slurm_conf_file(path)?.section,
            None => crate::slurm::SlurmSection::default(),
        };
        if let Some(accounting) = accounting {
            section = section.merged(&crate::slurm::SlurmSection {
                tree: accounting.tree.clone(),
                user_shares: accounting.user_shares.clone(),
                members: accounting.members.clone(),
                qos: accounting.qos.clone(),
                ..Default::default()
            });
        }
        if let Some(own) = &self.slurm {
            section = section.merged(own);
        }
        if let (Some(accounting), Some(partitions)) = (accounting, section.partitions.as_mut()) {
            // a partition that selects none of its own takes the dump's jobs of its name
            for partition in partitions
                .iter_mut()
                .filter(|p| p.groups.is_none() && p.swf_partitions.is_none())
            {
                if let Some(i) = (accounting.first_names.partitions.iter())
                    .position(|name| *name == partition.name)
                {
                    partition.swf_partitions = Some(vec![i as i64 + 1]);
                }
            }
        }
        let value =
            toml::Value::try_from(&section).map_err(|e| invalid!("scheduler.slurm: {e}"))?;
        given.insert(SLURM_KEY.to_string(), value);
        compose(&given)
    }
}

/// The Slurm rules' parameter key ([`slurm_model::SlurmParams`]): `[scheduler.slurm]`.
const SLURM_KEY: &str = "slurm";

/// The name of the policy `name` names (itself, or the policy an alias stands for).
fn canonical_policy(name: &str) -> Option<&'static str> {
    schedulers::REGISTRY
        .find_policy(name)
        .map(|policy| policy.name)
}

/// Reads `policy = "NAME"`: a registered policy's name or alias, stored as its name; anything
/// else is refused with the accepted names, as for an unknown enum variant.
fn policy_name<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let name = String::deserialize(deserializer)?;
    match canonical_policy(&name) {
        Some(policy) => Ok(policy.to_string()),
        None => {
            let accepted: Vec<String> = schedulers::REGISTRY
                .policies()
                .flat_map(|p| p.aliases.iter().chain(std::iter::once(&p.name)))
                .map(|name| format!("`{name}`"))
                .collect();
            Err(serde::de::Error::custom(format!(
                "unknown variant `{name}`, expected one of {}",
                accepted.join(", ")
            )))
        }
    }
}

/// `[run]`: how long the run lasts, its seed, and which jobs are measured.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    /// Simulated weeks.
    #[serde(default = "default_weeks")]
    pub weeks: u32,
    /// The run's random seed.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Days at the start left out of the measurements.
    #[serde(default)]
    pub warmup_days: u32,
    /// Which of the jobs submitted in the measured weeks count: `submitted` (all; the
    /// simulation runs on until they end), `started` (those started by the end of the last
    /// week) or `ended` (those ended by then, as if the simulation stopped there).
    #[serde(default, skip_serializing_if = "metrics::Counted::is_submitted")]
    pub measure: metrics::Counted,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            weeks: default_weeks(),
            seed: default_seed(),
            warmup_days: 0,
            measure: metrics::Counted::Submitted,
        }
    }
}

/// A whole population file.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SiteFile {
    /// The machine and calendar.
    pub site: SiteSection,
    /// The scheduler.
    #[serde(default)]
    pub scheduler: SchedulerSection,
    /// The run.
    #[serde(default)]
    pub run: RunSection,
    /// A machine of node types: its kinds of node (it replaces `site.processors`, which may be
    /// left out or must equal the nodes' cores).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<crate::nodes::NodesSection>,
    /// The rules of the partitions `[[nodes]]` name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<crate::nodes::PartitionsSection>,
    /// The machine's power, and the carbon intensity and price series it is metered against
    /// (`[power]`, or the file holding it): [`crate::power`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<crate::power::PowerChoice>,
    /// Maintenance windows and drains (`[[outages]]`): [`crate::outages`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outages: Vec<crate::outages::OutageSection>,
    /// Nodes that fail at random and are repaired (`[failures]`): [`crate::failures`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures: Option<crate::failures::FailureSection>,
    /// The user groups.
    #[serde(deserialize_with = "users::config::deserialize_groups")]
    pub groups: Vec<GroupConfig>,
}

/// A site file with the directory its relative paths are resolved against.
#[derive(Debug, Clone)]
pub struct Site {
    /// The parsed file.
    pub file: SiteFile,
    /// Where it came from (a path, or "the default site").
    pub origin: String,
    /// The directory `models` paths are relative to (none for the embedded default).
    pub base: Option<PathBuf>,
}

impl Site {
    /// The text and directory of the population file at `path`, or of the embedded default.
    pub fn source(path: Option<&Path>) -> Result<(String, String, Option<PathBuf>)> {
        match path {
            Some(p) => {
                let origin = p.display().to_string();
                let text =
                    crate::files::read_text(p, crate::files::MAX_TEXT_BYTES, "population file")?;
                Ok((text, origin, p.parent().map(Path::to_path_buf)))
            }
            None => Ok((
                DEFAULT_SITE.to_string(),
                "the default site (configs/paper.toml)".to_string(),
                None,
            )),
        }
    }

    /// The embedded default site.
    pub fn default_site() -> Result<Site> {
        let file = parse(DEFAULT_SITE, "the default site (configs/paper.toml)")?;
        Ok(Site {
            file,
            origin: "the default site (configs/paper.toml)".into(),
            base: None,
        })
    }

    /// Reads a population file.
    pub fn load(path: &Path) -> Result<Site> {
        let origin = path.display().to_string();
        let text = crate::files::read_text(path, crate::files::MAX_TEXT_BYTES, "population file")?;
        let base = path.parent().map(Path::to_path_buf);
        let mut file = parse(&text, &origin)?;
        if file.groups.iter().any(|g| g.models() != "embedded") {
            // Read again with the model directories' fitted parameters filled in.
            let mut value: toml::Value =
                toml::from_str(&text).map_err(|e| invalid!("{origin}: {e}"))?;
            fill_fitted_parameters(&mut value, base.as_deref(), &origin)?;
            file = value
                .try_into()
                .map_err(|e: toml::de::Error| invalid!("{origin}: {e}"))?;
        }
        Ok(Site { file, origin, base })
    }

    /// A site from population-file text (a population file given inline, as the Python
    /// package allows); `origin` names it in errors and `base` is where relative `models` paths
    /// start.
    pub fn from_text(text: &str, origin: &str, base: Option<PathBuf>) -> Result<Site> {
        Ok(Site {
            file: parse(text, origin)?,
            origin: origin.to_string(),
            base,
        })
    }

    /// A site from population-file text with values replaced at key paths (`scheduler`,
    /// `groups.0.users`, `run.seed`): how a sweep builds each of its runs. Errors name `origin`
    /// and the key.
    pub fn with_overrides(
        text: &str,
        origin: &str,
        base: Option<PathBuf>,
        overrides: &[(String, toml::Value)],
    ) -> Result<Site> {
        let mut value: toml::Value = toml::from_str(text).map_err(|e| invalid!("{origin}: {e}"))?;
        for (key, replacement) in overrides {
            set_path(&mut value, key, replacement.clone())
                .map_err(|e| invalid!("{origin}: {key}: {e}"))?;
        }
        fill_fitted_parameters(&mut value, base.as_deref(), origin)?;
        let file: SiteFile = value
            .try_into()
            .map_err(|e: toml::de::Error| invalid!("{origin} with {}: {e}", describe(overrides)))?;
        Ok(Site {
            file,
            origin: origin.to_string(),
            base,
        })
    }

    /// Checks the values that are not the groups' and returns the calendar.
    pub fn calendar(&self) -> Result<Calendar> {
        let start = NaiveDateTime::parse_from_str(&self.file.site.start, "%Y-%m-%dT%H:%M:%S")
            .map_err(|_| {
                invalid!(
                    "{}: site.start = {:?}: expected a date and time like 2024-01-01T00:00:00",
                    self.origin,
                    self.file.site.start
                )
            })?;
        Ok(Calendar::starting_at(start))
    }

    /// The site's `[[outages]]` expanded over its run's weeks. On a machine of counted
    /// processors an outage's `nodes` count processors (`all`, a count, a share); on a machine
    /// of node types (`[[nodes]]`) they are its nodes, by name (`gpu[1-2]`) or all of them; a
    /// machine of processor maps (`node_processors`) does not take outages yet. Errors name
    /// the file and the key.
    pub fn outages(&self) -> Result<Vec<crate::outages::Outage>> {
        let sections = &self.file.outages;
        if sections.is_empty() {
            return Ok(Vec::new());
        }
        if self.file.site.node_processors.is_some() {
            return Err(invalid!(
                "{}: outages: outages are kept on a machine of counted processors (`site.processors`) or of node types (`[[nodes]]`); a machine of processor maps (`site.node_processors`) does not take them yet",
                self.origin
            ));
        }
        self.calendar()?; // names a bad start
        let start = NaiveDateTime::parse_from_str(&self.file.site.start, "%Y-%m-%dT%H:%M:%S")
            .unwrap_or_default();
        let node_names: Option<Vec<String>> = self
            .node_machine()?
            .map(|m| m.nodes.into_iter().map(|(name, _)| name).collect());
        let machine = match &node_names {
            Some(names) => crate::outages::OutageMachine {
                nodes: names.len() as u32,
                names: Some(names),
            },
            None => crate::outages::OutageMachine {
                nodes: self.file.site.processors,
                names: None,
            },
        };
        let horizon = i64::from(self.file.run.weeks) * users::cycle::WEEK;
        // a reservation's members are population groups, whose jobs carry their place from 1
        let group_id = |name: &str| {
            let place = (self.file.groups.iter())
                .position(|g| g.name == name)
                .ok_or_else(|| {
                    let names: Vec<&str> =
                        self.file.groups.iter().map(|g| g.name.as_str()).collect();
                    format!("no group of this name (groups: {})", names.join(", "))
                })?;
            if self.file.groups[place].accounts.is_some() {
                return Err(
                    "its jobs carry the Slurm accounts its `accounts` deals them, not the group: name a group without `accounts`"
                        .to_string(),
                );
            }
            Ok(place as i64 + 1)
        };
        crate::outages::expand(sections, machine, start, horizon, &group_id)
            .map_err(|e| invalid!("{}: {e}", self.origin))
    }

    /// The site's `[failures]`, checked against its machine (one of counted processors, or of
    /// node types: its nodes fail one by one). Errors name the file and the key.
    pub fn failures(&self) -> Result<Option<crate::failures::NodeFailures>> {
        let Some(section) = &self.file.failures else {
            return Ok(None);
        };
        if self.file.site.node_processors.is_some() {
            return Err(invalid!(
                "{}: failures: node failures are modelled on a machine of counted processors (`site.processors`) or of node types (`[[nodes]]`); a machine of processor maps (`site.node_processors`) does not take them yet",
                self.origin
            ));
        }
        let resolved = if self.file.nodes.is_empty() {
            section.resolve(self.file.site.processors)
        } else {
            let nodes = self.file.nodes.iter().map(|n| n.count).sum::<u32>();
            section.resolve_on_nodes(nodes)
        };
        resolved
            .map(Some)
            .map_err(|e| invalid!("{}: {e}", self.origin))
    }

    /// The Unix time of the run's time 0 (the start read as UTC), for SWF headers.
    pub fn unix_start(&self) -> i64 {
        NaiveDateTime::parse_from_str(&self.file.site.start, "%Y-%m-%dT%H:%M:%S")
            .map(|t| t.and_utc().timestamp())
            .unwrap_or(0)
    }

    /// Group `index`'s resource mix, from the resources.csv at `path` (relative to the
    /// population file), on `machine`: its partitions and GPU types by name, numbered as the
    /// machine numbers them.
    fn resource_mix(
        &self,
        index: usize,
        path: &str,
        machine: Option<&crate::nodes::NodeMachine>,
    ) -> Result<users::resources::ResourceMix> {
        let origin = &self.origin;
        let key = format!("groups[{index}].resources = {path:?}");
        let Some(machine) = machine else {
            return Err(invalid!(
                "{origin}: {key}: a resource mix needs a machine of [[nodes]] (their memory and GPUs)"
            ));
        };
        let file = match &self.base {
            Some(base) => base.join(path),
            None => PathBuf::from(path),
        };
        let text = crate::files::read_text(&file, crate::files::MAX_TEXT_BYTES, "resource mix")
            .map_err(|e| invalid!("{origin}: {key}: {e}"))?;
        let name = file.display().to_string();
        let rows = usermodel::resources::read_resources(text.as_bytes(), &name)
            .map_err(|e| invalid!("{origin}: {key}: {e}"))?;
        let partitions = machine.partition_names();
        let gpu_types = machine.gpu_types();
        let partition = |line: usize, p: &str| -> Result<i64> {
            if p.is_empty() {
                return Ok(-1);
            }
            partitions
                .iter()
                .position(|x| x == p)
                .map(|k| k as i64 + 1)
                .ok_or_else(|| {
                    invalid!(
                        "{origin}: {key}: {name}, line {line}: partition {p:?} is not one of the [[nodes]]' partitions ({})",
                        partitions.join(", ")
                    )
                })
        };
        let mut profiles = Vec::new();
        for (k, row) in rows.iter().enumerate() {
            let line = k + 2;
            if row.jobs == 0 {
                continue;
            }
            let gpu_type = if row.gpu_type.is_empty() {
                0
            } else {
                let t = gpu_types.iter().position(|t| *t == row.gpu_type).ok_or_else(|| {
                    invalid!(
                        "{origin}: {key}: {name}, line {line}: GPU type {:?} is not one of the [[nodes]]' ({})",
                        row.gpu_type,
                        if gpu_types.is_empty() { "they have none".to_string() } else { gpu_types.join(", ") }
                    )
                })?;
                u8::try_from(t + 1).unwrap_or(u8::MAX)
            };
            profiles.push(users::resources::ResourceProfile {
                weight: row.jobs as f64,
                gpu_share: row.gpu_share,
                cpus_per_gpu: row.cpus_per_gpu.unwrap_or(1.0),
                memory_per_cpu: row.memory_per_cpu_mib,
                cpu_partition: partition(line, &row.cpu_partition)?,
                gpu_partition: partition(line, &row.gpu_partition)?,
                gpu_type,
            });
        }
        let kinds: Vec<String> = machine.resources()?.into_iter().map(|(k, _)| k).collect();
        let spec = machine.pool_spec(&kinds);
        users::resources::ResourceMix::new(profiles, spec.memory_kind, spec.gpu_kind)
            .map_err(|e| invalid!("{origin}: {key}: {e}"))
    }

    /// The machine of node types its `[[nodes]]` describe (`None` without them).
    pub fn node_machine(&self) -> Result<Option<crate::nodes::NodeMachine>> {
        crate::nodes::NodeMachine::of_site(&self.file.nodes, &self.file.partitions, &self.origin)
    }

    /// How the groups with `accounts` deal their users over the Slurm tree's accounts
    /// ([`crate::tree_accounts`]); `None` when no group has `accounts`.
    pub fn account_plan(&self) -> Result<Option<crate::tree_accounts::AccountPlan>> {
        let groups: Vec<(&str, u32, Option<&users::config::AccountsChoice>)> = (self.file.groups)
            .iter()
            .map(|g| (g.name.as_str(), g.users, g.accounts.as_ref()))
            .collect();
        crate::tree_accounts::plan(&groups, self.file.scheduler.slurm.as_ref(), &self.origin)
    }

    /// The scheduler section the run uses: the file's, with the simulated users' associations
    /// in place of the tree's members (and no `user_shares`, which name the dump's users) when
    /// groups are dealt over the tree's accounts ([`crate::tree_accounts`]).
    pub fn scheduler_section(&self) -> Result<std::borrow::Cow<'_, SchedulerSection>> {
        let Some(plan) = self.account_plan()? else {
            return Ok(std::borrow::Cow::Borrowed(&self.file.scheduler));
        };
        let mut section = self.file.scheduler.clone();
        if let Some(slurm) = section.slurm.as_mut() {
            slurm.members = Some(plan.members);
            slurm.user_shares = None;
        }
        Ok(std::borrow::Cow::Owned(section))
    }

    /// Refuses a `[scheduler.slurm]` tree or member that takes a group no population group
    /// is: in a run, an account's users are those of the population group with the id it
    /// takes, so such an account would stay empty and its users run elsewhere, unseen (a tree
    /// `sitesim convert` wrote takes the dump's account ids: groups with `accounts` deal their
    /// users over it, and then the ids are the dump's and the members are replaced).
    fn check_tree_groups(&self) -> Result<()> {
        let Some(section) = &self.file.scheduler.slurm else {
            return Ok(());
        };
        if self.file.groups.iter().any(|g| g.accounts.is_some()) {
            return Ok(());
        }
        let count = self.file.groups.len() as i64;
        let how = format!(
            "in a run, an account's users are those of the population group with the id it takes (1 to {count} here, in the order of [[groups]]); \
             a slurm-tree.toml from `sitesim convert` takes the dump's account ids (accounts.csv) instead: give the [[groups]] `accounts = \"tree\"` to deal their users over its accounts (or a list of account names), or give each account kept `groups = [ID]` of the [[groups]] entry that stands for it, or leave the tree out"
        );
        let origin = &self.origin;
        for account in section.tree.iter().flatten() {
            if let Some(&group) = (account.groups.iter().flatten()).find(|&&g| g < 1 || g > count) {
                return Err(invalid!(
                    "{origin}: scheduler.slurm.tree: account {:?} takes group {group}, which no population group is: {how}",
                    account.name
                ));
            }
        }
        for member in section.members.iter().flatten() {
            if member.group < 1 || member.group > count {
                return Err(invalid!(
                    "{origin}: scheduler.slurm.members: user {} is in group {}, which no population group is: {how}",
                    member.user,
                    member.group
                ));
            }
        }
        Ok(())
    }

    /// Checks every value and builds the groups, loading their models (`embedded` is `default`).
    pub fn groups(&self, default: &Arc<usermodel::Model>) -> Result<Vec<Group>> {
        let origin = &self.origin;
        ensure!(
            self.file.site.processors > 0,
            "{origin}: site.processors = 0: the machine needs at least one processor"
        );
        ensure!(
            self.file.run.weeks > 0,
            "{origin}: run.weeks = 0: simulate at least one week"
        );
        ensure!(
            self.file.run.weeks <= limits::MAX_WEEKS,
            "{origin}: run.weeks = {}: at most {} weeks (10 years) can be simulated",
            self.file.run.weeks,
            limits::MAX_WEEKS
        );
        ensure!(
            self.file.site.processors <= limits::MAX_PROCESSORS,
            "{origin}: site.processors = {}: at most {} processors",
            self.file.site.processors,
            limits::MAX_PROCESSORS
        );
        ensure!(
            u64::from(self.file.run.warmup_days) < 7 * u64::from(self.file.run.weeks),
            "{origin}: run.warmup_days = {} leaves nothing to measure in {}",
            self.file.run.warmup_days,
            crate::count(self.file.run.weeks, "week")
        );
        ensure!(
            !self.file.groups.is_empty(),
            "{origin}: no [[groups]]: the site needs users"
        );
        let total: u64 = self.file.groups.iter().map(|g| u64::from(g.users)).sum();
        ensure!(
            total <= limits::MAX_USERS,
            "{origin}: {total} users in all: at most {} users can be simulated",
            limits::MAX_USERS
        );
        for (i, g) in self.file.groups.iter().enumerate() {
            if let Some(j) = self.file.groups[..i].iter().position(|h| h.name == g.name) {
                return Err(invalid!(
                    "{origin}: groups[{i}].name = {:?} is also the name of groups[{j}]: give each group its own name (outputs tell groups apart by name)",
                    g.name
                ));
            }
        }
        self.check_tree_groups()?;
        let plan = self.account_plan()?;
        let mut groups = Vec::new();
        let machine = self.node_machine()?;
        for (i, g) in self.file.groups.iter().enumerate() {
            let mut params = g
                .params(&format!("groups[{i}]"))
                .map_err(|e| invalid!("{origin}: {e}"))?;
            if let Some(path) = &g.resources {
                params.resources = Some(Arc::new(self.resource_mix(i, path, machine.as_ref())?));
            }
            params.job_groups = plan.as_ref().and_then(|p| p.job_groups[i].clone());
            let model = if g.models() == "embedded" {
                Arc::clone(default)
            } else if let Some(name) = crate::models::embedded_name(g.models()) {
                let model = crate::models::embedded_model(name).map_err(|e| {
                    invalid!("{origin}: groups[{i}].models = {:?}: {e}", g.models())
                })?;
                Arc::new(model)
            } else {
                let dir = match &self.base {
                    Some(base) => base.join(g.models()),
                    None => PathBuf::from(g.models()),
                };
                let model = crate::models::load_model(&dir).map_err(|e| {
                    invalid!("{origin}: groups[{i}].models = {:?}: {e}", g.models())
                })?;
                Arc::new(model)
            };
            let model = fit_job_sizes(model, self.file.site.job_sizes, self.file.site.processors);
            groups.push(Group {
                name: g.name.clone(),
                users: g.users,
                params,
                model,
            });
        }
        Ok(groups)
    }
}

/// The model with its job sizes fitted to a machine of `processors` by `rule` (unchanged when
/// no job is wider, or under `reject`, where the population refuses such a model). Sizes map
/// one to one, so every draw is the draw it was, of another size.
fn fit_job_sizes(
    model: Arc<usermodel::Model>,
    rule: JobSizesChoice,
    processors: u32,
) -> Arc<usermodel::Model> {
    let machine = i64::from(processors.max(1));
    let widest = model.size.values().last().copied().unwrap_or(0);
    if widest <= machine || rule == JobSizesChoice::Reject {
        return model;
    }
    let resize = |v: i64| match rule {
        JobSizesChoice::Clip => v.min(machine),
        _ => ((v as f64 * machine as f64 / widest as f64).round() as i64).clamp(1, machine),
    };
    // Sizes that become equal merge: the last cumulative share of each new size is its own.
    let mut values: Vec<i64> = Vec::new();
    let mut cumulative: Vec<f64> = Vec::new();
    for (&v, &c) in model.size.values().iter().zip(model.size.cumulative()) {
        let v = resize(v);
        if values.last() == Some(&v) {
            if let Some(last) = cumulative.last_mut() {
                *last = c;
            }
        } else {
            values.push(v);
            cumulative.push(c);
        }
    }
    let mut fitted = (*model).clone();
    if let Ok(size) = usermodel::Ecdf::from_points(values, cumulative) {
        fitted.size = size;
    }
    Arc::new(fitted)
}

impl Site {
    /// The machine of nodes and the sharing model the file asks for (`site.node_processors`,
    /// `site.selection`, `site.node_bandwidth`, and the groups' `bandwidth_mix`), checked.
    pub fn machine(
        &self,
        groups: &[Group],
    ) -> Result<(Option<cluster::Nodes>, Option<engine::MemoryBandwidth>)> {
        let site = &self.file.site;
        let spec = crate::machine::MachineSpec {
            keys: crate::machine::MachineKeys::SiteFile,
            node_processors: site.node_processors,
            selection: site.selection,
            node_bandwidth: site.node_bandwidth,
            placement: None,
            node_offset: 0,
            over_nodes: engine::OverNodes::Max,
            mixes: groups
                .iter()
                .enumerate()
                .filter_map(|(i, g)| {
                    g.params.bandwidth.map(|m| {
                        (
                            format!("groups[{i}].bandwidth_mix"),
                            format!("groups[{i}].bandwidth_demands"),
                            m,
                        )
                    })
                })
                .collect(),
        };
        let checked = spec
            .check()
            .map_err(|e| invalid!("{}: {}", self.origin, e.marked()))?;
        Ok((checked.nodes, checked.sharing))
    }
}

/// `key = value, key = value` for error messages.
fn describe(overrides: &[(String, toml::Value)]) -> String {
    overrides
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Replaces the value at a dotted key path; numeric parts index arrays (`groups.0.users`).
/// Missing tables on the way are created; array elements must exist.
pub fn set_path(root: &mut toml::Value, key: &str, value: toml::Value) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    let (last, parents) = parts.split_last().ok_or("an empty key")?;
    let mut here = root;
    for part in parents {
        here = step(here, part, true)?;
    }
    match here {
        toml::Value::Table(t) => {
            t.insert((*last).to_string(), value);
            Ok(())
        }
        toml::Value::Array(a) => {
            let i: usize = last
                .parse()
                .map_err(|_| format!("{last:?} is not an index of an array"))?;
            let len = a.len();
            let slot = a
                .get_mut(i)
                .ok_or(format!("index {i} is beyond the {len} elements"))?;
            *slot = value;
            Ok(())
        }
        _ => Err(format!(
            "{last:?} is inside a value that is neither a table nor an array"
        )),
    }
}

fn step<'v>(
    here: &'v mut toml::Value,
    part: &str,
    create: bool,
) -> Result<&'v mut toml::Value, String> {
    match here {
        toml::Value::Table(t) => {
            if create && !t.contains_key(part) {
                t.insert(part.to_string(), toml::Value::Table(toml::Table::new()));
            }
            t.get_mut(part).ok_or(format!("no key {part:?}"))
        }
        toml::Value::Array(a) => {
            let i: usize = part
                .parse()
                .map_err(|_| format!("{part:?} is not an index of an array"))?;
            let len = a.len();
            a.get_mut(i)
                .ok_or(format!("index {i} is beyond the {len} elements"))
        }
        _ => Err(format!(
            "{part:?} is inside a value that is neither a table nor an array"
        )),
    }
}

/// Gives every `shmueli` group that draws from a fitted model directory (or an
/// `embedded:NAME` model) the directory's fitted parameters (`parameters.csv`) for the keys it
/// does not set: `continue_a` and `continue_b` (under the default `feedback = "response"`),
/// `day_probability` and `weekday_probability`. `models = "embedded"` keeps the paper's values.
fn fill_fitted_parameters(
    value: &mut toml::Value,
    base: Option<&Path>,
    origin: &str,
) -> Result<()> {
    let Some(groups) = value.get_mut("groups").and_then(toml::Value::as_array_mut) else {
        return Ok(());
    };
    for (i, group) in groups.iter_mut().enumerate() {
        let Some(table) = group.as_table_mut() else {
            continue;
        };
        let text = |key: &str| {
            table
                .get(key)
                .and_then(toml::Value::as_str)
                .map(str::to_string)
        };
        if text("kind").is_some_and(|k| k != "shmueli") {
            continue;
        }
        let Some(models) = text("models") else {
            continue;
        };
        let parameters = crate::models::fitted_parameters(&models, base)
            .map_err(|e| invalid!("{origin}: groups[{i}].models = {models:?}: {e}"))?;
        let Some(p) = parameters else {
            continue;
        };
        let response = text("feedback").is_none_or(|f| f == "response");
        let mut fill = |key: &str, v: Option<f64>| {
            if let Some(v) = v {
                table.entry(key).or_insert(toml::Value::Float(v));
            }
        };
        if response {
            fill("continue_a", Some(p.continue_a));
            fill("continue_b", Some(p.continue_b));
        }
        fill("day_probability", p.day_fraction);
        fill("weekday_probability", p.weekday_fraction);
    }
    Ok(())
}

fn parse(text: &str, origin: &str) -> Result<SiteFile> {
    let mut file: SiteFile = toml::from_str(text).map_err(|e| match at_group_key(text, &e) {
        Some(shown) => invalid!("{origin}: {shown}"),
        None => invalid!("{origin}: {e}"),
    })?;
    // A machine of node types: its cores are the machine's processors.
    if let Some(machine) =
        crate::nodes::NodeMachine::of_site(&file.nodes, &file.partitions, origin)?
    {
        let cores = u32::try_from(machine.cpus())
            .ok()
            .filter(|&c| c <= limits::MAX_PROCESSORS)
            .ok_or_else(|| {
                invalid!(
                    "{origin}: nodes: {} cores in all, more than {} processors",
                    machine.cpus(),
                    limits::MAX_PROCESSORS
                )
            })?;
        match file.site.processors {
            0 => file.site.processors = cores,
            given if given != cores => {
                return Err(invalid!(
                    "{origin}: site.processors = {given}, but the [[nodes]] have {cores} cores: leave it out, or make them agree"
                ));
            }
            _ => {}
        }
        if file.site.node_processors.is_some() {
            return Err(invalid!(
                "{origin}: site.node_processors (paper 001's processor map) does not apply to a machine of [[nodes]]"
            ));
        }
    }
    Ok(file)
}

/// A group's key checked after its table was read (a user kind's own keys) fails with the span
/// of the whole `[[groups]]` table: the error rendered as the toml crate renders one, pointing
/// at the key's value instead, when the message names the key (`groups[N].KEY ...`) and the key
/// is found in that table.
fn at_group_key(text: &str, error: &toml::de::Error) -> Option<String> {
    let message = error.message();
    let rest = message.strip_prefix("groups[")?;
    let (index, rest) = rest.split_once("].")?;
    let index: usize = index.parse().ok()?;
    let key: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    // only errors pointing at a `[[groups]]` header are moved
    let span = error.span()?;
    if !text.get(span.start..)?.starts_with("[[groups]]") {
        return None;
    }
    let mut seen = 0usize;
    let mut inside = false;
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            inside = trimmed.trim_end() == "[[groups]]" && {
                seen += 1;
                seen == index + 1
            };
            continue;
        }
        if !inside {
            continue;
        }
        let Some((name, value)) = trimmed.split_once('=') else {
            continue;
        };
        if name.trim() != key {
            continue;
        }
        let value = value.trim_start();
        let column = line.len() - value.len();
        let width = value
            .split('#')
            .next()
            .unwrap_or(value)
            .trim_end()
            .len()
            .max(1);
        let number = number + 1;
        let gutter = " ".repeat(number.to_string().len());
        return Some(format!(
            "TOML parse error at line {number}, column {}\n{gutter} |\n{number} | {line}\n{gutter} | {}{}\n{message}\n",
            column + 1,
            " ".repeat(column),
            "^".repeat(width)
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_values_by_path() {
        let text = "[site]\nprocessors = 64\n[[groups]]\nname = \"a\"\nusers = 3\n";
        let overrides = vec![
            ("groups.0.users".to_string(), toml::Value::Integer(50)),
            ("run.weeks".to_string(), toml::Value::Integer(2)),
            (
                "scheduler".to_string(),
                toml::Value::Table(toml::from_str("policy = \"creasy\"\nalpha = 1500").unwrap()),
            ),
        ];
        let site = Site::with_overrides(text, "t.toml", None, &overrides).unwrap();
        assert_eq!(site.file.groups[0].users, 50);
        assert_eq!(site.file.run.weeks, 2);
        assert_eq!(site.file.scheduler.policy, "creasy");
        assert_eq!(
            site.file.scheduler.params.get("alpha"),
            Some(&toml::Value::Integer(1500))
        );
        let bad = vec![("groups.3.users".to_string(), toml::Value::Integer(1))];
        let err = Site::with_overrides(text, "t.toml", None, &bad)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("groups.3.users") && err.contains("beyond"),
            "{err}"
        );
        let unknown = vec![("groups.0.user".to_string(), toml::Value::Integer(1))];
        let err = Site::with_overrides(text, "t.toml", None, &unknown)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `user`"), "{err}");
    }
}
