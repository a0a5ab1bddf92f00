//! The `[power]` table: what the machine's nodes draw, the facility's PUE, and the carbon
//! intensity and price series a run is metered against (crate `power` does the arithmetic).
//!
//! A site file holds the table itself or names a file holding it (`power = "power.toml"`); a
//! replay takes such a file (`--power FILE`, a sweep's `[replay] power`). Series files are
//! relative to the file that names them. On a machine of processors the table's node keys
//! describe its one node type (`cores` per node: the machine's `node_processors` when left out);
//! on a machine of node types (`[[nodes]]`, a slurm.conf's nodes) `[power.types.NAME]` gives a
//! type its own values, and the table's keys are the default of the others.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use power::{NodePower, Quantity, Series, Transition};
use serde::{Deserialize, Serialize};

use crate::error::{Result, invalid};

/// How the jobs are charged.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum JobCharge {
    /// Every job by the model: its share of its nodes' idle power plus its busy cores, GPUs and
    /// memory.
    #[default]
    Model,
    /// A job whose trace logged its energy (sacct's `ConsumedEnergyRaw`) is charged that;
    /// the others by the model. With every node value 0, the run's energy is the logged sum.
    Logged,
}

/// One node type's power values (`[power]` itself, or `[power.types.NAME]`).
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodePowerSection {
    /// Cores per node, on a machine of processors (default: `node_processors`); a node type's
    /// own cores on a machine of node types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    /// Power of a node that is on with nothing running, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_w: Option<f64>,
    /// Power of a node with every core busy (and no GPU), W: each busy core adds
    /// (busy_w - idle_w) / cores. Give this or `core_w`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_w: Option<f64>,
    /// Power each busy core adds, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_w: Option<f64>,
    /// Power each busy GPU adds, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_w: Option<f64>,
    /// Power each GiB of memory held adds, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_w_per_gib: Option<f64>,
    /// Power of a node that is off, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_w: Option<f64>,
    /// Time to boot a node, seconds (Slurm's `ResumeTimeout` bounds it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_s: Option<i64>,
    /// Power while booting, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_w: Option<f64>,
    /// Time to shut a node down, seconds (Slurm's `SuspendTimeout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shutdown_s: Option<i64>,
    /// Power while shutting down, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shutdown_w: Option<f64>,
}

/// The machine's power, the facility's PUE, the carbon-intensity and price series a run is
/// metered against, and the power policies (docs/guide/power.md). A site file holds the table,
/// or names a file holding it (`power = "power.toml"`). The node values sit in the table itself
/// (next section).
// Read through `RawPowerSection`, its node values through `NodePowerSection`, which refuses
// unknown keys (serde's `deny_unknown_fields` does not combine with `flatten`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
pub struct PowerSection {
    /// Power usage effectiveness: facility power over IT power (at least 1; default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pue: Option<f64>,
    /// Carbon intensity: a CSV of `time_s` (or `time`, RFC 3339) and `gco2_per_kwh` (or
    /// another unit its header names), relative to this file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carbon: Option<PathBuf>,
    /// Electricity price: a CSV of `time_s` (or `time`) and `CURRENCY_per_kwh` (or `_per_mwh`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<PathBuf>,
    /// The date-time of simulated second 0 (RFC 3339), for series whose times are date-times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,
    /// The series repeat after their last step (each file is one period: a day, a week).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<bool>,
    /// How jobs are charged: `model` (default) or `logged`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<JobCharge>,
    /// A cap on the machine's IT power, kW: a job starts only if the machine's power stays at
    /// or under it (the power-cap guard). Give this or `cap`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_kw: Option<f64>,
    /// A cap that follows a schedule: a CSV of `time_s` (or `time`) and `kw` (or `w`, `mw`);
    /// each value holds until the next row, the last to the end of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<PathBuf>,
    /// Carbon-aware delay of flexible jobs (needs `carbon`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<DelaySection>,
    /// Idle nodes power down after this many seconds with no job (Slurm's `SuspendTime`); a
    /// job given a node that is off waits while it boots (`boot_s`). Default: nodes stay on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend_time_s: Option<i64>,
    /// The node values of a machine of processors, and the default of every node type
    /// (documented in a section of their own).
    #[serde(flatten)]
    #[schemars(skip)]
    pub node: NodePowerSection,
    /// Node types' own values, by the type's name (`[[nodes]] name`, a slurm.conf's node
    /// list).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub types: BTreeMap<String, NodePowerSection>,
}

/// How a flexible job's start is chosen against the carbon intensity.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum DelayPolicy {
    /// Hold while the intensity is above `threshold` gCO2/kWh.
    #[default]
    Threshold,
    /// Hold while the intensity is above the `percentile`-th percentile of the coming
    /// `window_h` hours (time-weighted), computed at submission.
    Percentile,
    /// CATS's best window: start at the time within `max_delay_h` whose mean intensity over
    /// the job's estimate is least.
    BestWindow,
    /// The control: hold each flexible job a delay drawn uniformly from 0 to `max_delay_h`,
    /// whatever the intensity, so that a study sees what delaying alone does.
    Random,
}

/// A share of flexible jobs: one for every job, or by population group name.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum FlexibleShare {
    /// The same share of every job.
    All(f64),
    /// By group name (site runs); groups not named have none.
    ByGroup(BTreeMap<String, f64>),
}

/// `[power.delay]`: carbon-aware delay of flexible jobs.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DelaySection {
    /// How the start is chosen (default `threshold`).
    #[serde(default)]
    pub policy: DelayPolicy,
    /// gCO2/kWh, for `threshold`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Percent (0-100), for `percentile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentile: Option<f64>,
    /// Hours looked ahead, for `percentile` (default 24).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_h: Option<f64>,
    /// The longest a job is held, hours.
    pub max_delay_h: f64,
    /// The share of jobs that are flexible (a number, or by group name in a site).
    pub flexible: FlexibleShare,
}

/// `[power]` as read: the table's own keys, and the rest for [`NodePowerSection`].
#[derive(Deserialize)]
struct RawPowerSection {
    pue: Option<f64>,
    carbon: Option<PathBuf>,
    price: Option<PathBuf>,
    epoch: Option<String>,
    repeat: Option<bool>,
    jobs: Option<JobCharge>,
    cap_kw: Option<f64>,
    cap: Option<PathBuf>,
    delay: Option<DelaySection>,
    suspend_time_s: Option<i64>,
    #[serde(default)]
    types: BTreeMap<String, NodePowerSection>,
    #[serde(flatten)]
    rest: toml::Table,
}

impl<'de> Deserialize<'de> for PowerSection {
    fn deserialize<D: serde::Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<PowerSection, D::Error> {
        RawPowerSection::deserialize(d)?
            .try_into()
            .map_err(serde::de::Error::custom)
    }
}

impl TryFrom<RawPowerSection> for PowerSection {
    type Error = String;

    fn try_from(raw: RawPowerSection) -> std::result::Result<PowerSection, String> {
        let node = NodePowerSection::deserialize(toml::Value::Table(raw.rest))
            .map_err(|e| format!("in [power]: {}", e.message()))?;
        Ok(PowerSection {
            pue: raw.pue,
            carbon: raw.carbon,
            price: raw.price,
            epoch: raw.epoch,
            repeat: raw.repeat,
            jobs: raw.jobs,
            cap_kw: raw.cap_kw,
            cap: raw.cap,
            delay: raw.delay,
            suspend_time_s: raw.suspend_time_s,
            node,
            types: raw.types,
        })
    }
}

/// A site file's `power`: the table, or the file that holds it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum PowerChoice {
    /// A file holding a `[power]` table, relative to the site file.
    File(PathBuf),
    /// The table itself.
    Table(Box<PowerSection>),
}

/// A `[power]` table with the directory its series paths start from and its origin.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerInput {
    /// The table.
    pub section: PowerSection,
    /// Where it was read from, for messages.
    pub origin: String,
    /// The directory relative series paths start from.
    pub base: Option<PathBuf>,
}

/// A file holding a `[power]` table (or only its keys).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PowerFile {
    power: PowerSection,
}

impl PowerInput {
    /// Reads the `[power]` table of the TOML file at `path`.
    pub fn load(path: &Path) -> Result<PowerInput> {
        let origin = path.display().to_string();
        let text = crate::files::read_text(path, crate::files::MAX_TEXT_BYTES, "power file")?;
        let file: PowerFile = toml::from_str(&text).map_err(|e| invalid!("{origin}: {e}"))?;
        Ok(PowerInput {
            section: file.power,
            origin,
            base: path.parent().map(Path::to_path_buf),
        })
    }

    /// A site file's `power` (`origin` and `base`: the site file's).
    pub fn of_site(choice: &PowerChoice, origin: &str, base: Option<&Path>) -> Result<PowerInput> {
        match choice {
            PowerChoice::File(path) => {
                let path = match base {
                    Some(base) if path.is_relative() => base.join(path),
                    _ => path.clone(),
                };
                PowerInput::load(&path)
            }
            PowerChoice::Table(section) => Ok(PowerInput {
                section: (**section).clone(),
                origin: origin.to_string(),
                base: base.map(Path::to_path_buf),
            }),
        }
    }
}

/// The machine the power values are resolved against.
#[derive(Debug, Clone, Copy)]
pub enum PowerMachine<'a> {
    /// A machine of `processors` processors, of nodes of `node_processors` when known.
    Processors {
        /// Its processors.
        processors: u32,
        /// Processors per node, when the run has nodes.
        node_processors: Option<u32>,
    },
    /// A machine of node types.
    Nodes(&'a crate::nodes::NodeMachine),
}

/// A `[power]` table resolved against the run's machine: what the meter needs.
#[derive(Debug, Clone)]
pub struct PowerSetup {
    /// Facility power over IT power.
    pub pue: f64,
    /// Carbon intensity, gCO2/kWh.
    pub carbon: Option<Arc<Series>>,
    /// Electricity price per kWh.
    pub price: Option<Arc<Series>>,
    /// How jobs are charged.
    pub jobs: JobCharge,
    /// The node type of a machine of processors, or each node type's by its index in the
    /// machine's types.
    pub types: Vec<NodePower>,
    /// The machine's idle power with every node on, W.
    pub idle_w: f64,
    /// The IT power cap, W: constant, or a schedule of `Quantity::Cap` (`None`: no cap).
    pub cap: Option<Cap>,
    /// Carbon-aware delay of flexible jobs.
    pub delay: Option<Delay>,
    /// Idle nodes power down after this many seconds (`None`: they stay on).
    pub suspend_after: Option<job::Time>,
    /// Each node's type index and cores, for power saving (a machine of processors: nodes of
    /// the one type's cores, the last holding the rest).
    pub nodes: Vec<(usize, u32)>,
    /// One line on the model, for reports.
    pub description: String,
}

/// A power cap on IT power.
#[derive(Debug, Clone)]
pub enum Cap {
    /// The same cap all the time, W.
    Constant(f64),
    /// A schedule of caps, W.
    Schedule(Arc<Series>),
}

impl Cap {
    /// The most it ever allows, W.
    pub fn max_w(&self) -> f64 {
        match self {
            Cap::Constant(w) => *w,
            Cap::Schedule(s) => s.max_value(),
        }
    }
}

/// `[power.delay]` resolved: times in seconds, shares by group index.
#[derive(Debug, Clone)]
pub struct Delay {
    /// How the start is chosen.
    pub policy: DelayPolicy,
    /// gCO2/kWh (`threshold`).
    pub threshold: f64,
    /// Percent (`percentile`).
    pub percentile: f64,
    /// Seconds looked ahead (`percentile`).
    pub window: job::Time,
    /// The longest hold, seconds.
    pub max_delay: job::Time,
    /// The flexible share of every job (`None`: by group).
    pub share: Option<f64>,
    /// The flexible share by group name (site runs).
    pub by_group: BTreeMap<String, f64>,
    /// The carbon intensity it reads.
    pub carbon: Arc<Series>,
}

impl PowerInput {
    /// The key `name` of the table, as messages name it.
    fn key(&self, name: &str) -> String {
        format!("{}: `power.{name}`", self.origin)
    }

    /// Resolves the table against `machine`: reads its series, checks every value.
    pub fn resolve(&self, machine: PowerMachine<'_>) -> Result<PowerSetup> {
        let s = &self.section;
        let pue = s.pue.unwrap_or(1.0);
        if !(pue.is_finite() && pue >= 1.0) {
            return Err(invalid!(
                "{}: {pue} is not a PUE (facility power over IT power: at least 1)",
                self.key("pue")
            ));
        }
        let epoch = s
            .epoch
            .as_deref()
            .map(|text| {
                chrono::DateTime::parse_from_rfc3339(text)
                    .map(|t| t.timestamp())
                    .map_err(|e| {
                        invalid!(
                            "{}: {text:?} is not an RFC 3339 date-time ({e})",
                            self.key("epoch")
                        )
                    })
            })
            .transpose()?;
        let repeat = s.repeat.unwrap_or(false);
        let series = |path: &Option<PathBuf>, quantity: Quantity| -> Result<Option<Arc<Series>>> {
            let Some(path) = path else {
                return Ok(None);
            };
            let path = match &self.base {
                Some(base) if path.is_relative() => base.join(path),
                _ => path.clone(),
            };
            let text = crate::files::read_text(&path, crate::files::MAX_TEXT_BYTES, "series")?;
            Series::parse(quantity, &path.display().to_string(), &text, epoch, repeat)
                .map(|s| Some(Arc::new(s)))
                .map_err(|e| invalid!("{e}"))
        };
        let carbon = series(&s.carbon, Quantity::Carbon)?;
        let price = series(&s.price, Quantity::Price)?;
        let (types, idle_w, description, node_list) = match machine {
            PowerMachine::Processors {
                processors,
                node_processors,
            } => {
                if let Some(name) = s.types.keys().next() {
                    return Err(invalid!(
                        "{}: the machine is {processors} processors, not of node types; give the node values in `[power]` itself",
                        self.key(&format!("types.{name}"))
                    ));
                }
                let cores = s.node.cores.or(node_processors).ok_or_else(|| {
                    invalid!(
                        "{}: a machine of processors needs its node size for the idle power: give `power.cores` (processors per node) or `node_processors`",
                        self.key("cores")
                    )
                })?;
                let node = self.node(&s.node, &NodePowerSection::default(), cores, "")?;
                // The idle power of whole and partial nodes alike: per core.
                let idle_w = node.idle_w * processors as f64 / cores.max(1) as f64;
                (
                    vec![node],
                    idle_w,
                    format!("{processors} processors in nodes of {cores}"),
                    power::processor_nodes(processors, cores),
                )
            }
            PowerMachine::Nodes(nodes) => {
                for name in s.types.keys() {
                    if !nodes.types.iter().any(|t| &t.name == name) {
                        let known: Vec<&str> =
                            nodes.types.iter().map(|t| t.name.as_str()).collect();
                        return Err(invalid!(
                            "{}: the machine has no node type {name:?} (its types: {})",
                            self.key(&format!("types.{name}")),
                            known.join(", ")
                        ));
                    }
                }
                let mut types = Vec::new();
                for t in &nodes.types {
                    let own = s.types.get(&t.name).cloned().unwrap_or_default();
                    if let Some(cores) = own.cores.filter(|&c| c != t.cpus) {
                        return Err(invalid!(
                            "{}: type {} has {} cores, not {cores} (leave `cores` out: a node type's own are used)",
                            self.key(&format!("types.{}.cores", t.name)),
                            t.name,
                            t.cpus
                        ));
                    }
                    types.push(self.node(&own, &s.node, t.cpus, &format!("types.{}.", t.name))?);
                }
                let idle_w = nodes
                    .nodes
                    .iter()
                    .map(|&(_, kind)| types[kind].idle_w)
                    .sum();
                let node_list = (nodes.nodes.iter())
                    .map(|&(_, kind)| (kind, nodes.types[kind].cpus))
                    .collect();
                (
                    types,
                    idle_w,
                    format!("{} nodes of {} types", nodes.nodes.len(), nodes.types.len()),
                    node_list,
                )
            }
        };
        let cap = match (s.cap_kw, &s.cap) {
            (Some(_), Some(_)) => {
                return Err(invalid!(
                    "{}: give `cap_kw` (a constant cap) or `cap` (a schedule), not both",
                    self.key("cap")
                ));
            }
            (Some(kw), None) => Some(Cap::Constant(kw * 1e3)),
            (None, Some(_)) => series(&s.cap, Quantity::Cap)?.map(Cap::Schedule),
            (None, None) => None,
        };
        if let Some(cap) = &cap {
            let below = match cap {
                Cap::Constant(w) => (!(w.is_finite() && *w >= idle_w)).then_some((*w, None)),
                Cap::Schedule(series) => series
                    .steps()
                    .find(|&(_, w)| w < idle_w)
                    .map(|(t, w)| (w, Some(t))),
            };
            if let Some((w, at)) = below {
                let when = at.map_or(String::new(), |t| format!(" from {t} s"));
                return Err(invalid!(
                    "{}: a cap of {} kW{when} is below the machine's idle power ({} kW): with every node on, no cap under it can hold (the guard counts the power above idle with every node on, whether or not idle nodes power down)",
                    self.key(if s.cap.is_some() { "cap" } else { "cap_kw" }),
                    w / 1e3,
                    idle_w / 1e3
                ));
            }
        }
        let delay = match &s.delay {
            None => None,
            Some(d) => {
                let Some(carbon) = carbon.clone() else {
                    return Err(invalid!(
                        "{}: a carbon-aware delay reads the carbon intensity: give `power.carbon`",
                        self.key("delay")
                    ));
                };
                let hours = |h: f64, name: &str| -> Result<job::Time> {
                    if h.is_finite() && h >= 0.0 {
                        Ok((h * 3600.0).round() as job::Time)
                    } else {
                        Err(invalid!(
                            "{}: {h} is not a number of hours at least 0",
                            self.key(&format!("delay.{name}"))
                        ))
                    }
                };
                let share_ok = |v: f64| v.is_finite() && (0.0..=1.0).contains(&v);
                let (share, by_group) = match &d.flexible {
                    FlexibleShare::All(v) => (Some(*v), BTreeMap::new()),
                    FlexibleShare::ByGroup(m) => (None, m.clone()),
                };
                for v in share.iter().chain(by_group.values()) {
                    if !share_ok(*v) {
                        return Err(invalid!(
                            "{}: {v} is not a share from 0 to 1",
                            self.key("delay.flexible")
                        ));
                    }
                }
                let threshold = match (d.policy, d.threshold) {
                    (DelayPolicy::Threshold, None) => {
                        return Err(invalid!(
                            "{}: the threshold policy needs a threshold, gCO2/kWh",
                            self.key("delay.threshold")
                        ));
                    }
                    (_, t) => t.unwrap_or(f64::INFINITY),
                };
                let percentile = match (d.policy, d.percentile) {
                    (DelayPolicy::Percentile, None) => {
                        return Err(invalid!(
                            "{}: the percentile policy needs a percentile from 0 to 100",
                            self.key("delay.percentile")
                        ));
                    }
                    (_, p) => p.unwrap_or(100.0),
                };
                if !(0.0..=100.0).contains(&percentile) {
                    return Err(invalid!(
                        "{}: {percentile} is not a percentile from 0 to 100",
                        self.key("delay.percentile")
                    ));
                }
                Some(Delay {
                    policy: d.policy,
                    threshold,
                    percentile,
                    window: hours(d.window_h.unwrap_or(24.0), "window_h")?,
                    max_delay: hours(d.max_delay_h, "max_delay_h")?,
                    share,
                    by_group,
                    carbon,
                })
            }
        };
        let suspend_after = match s.suspend_time_s {
            Some(t) if t < 0 => {
                return Err(invalid!(
                    "{}: {t} is not a number of seconds at least 0",
                    self.key("suspend_time_s")
                ));
            }
            t => t,
        };
        Ok(PowerSetup {
            pue,
            carbon,
            price,
            jobs: s.jobs.unwrap_or_default(),
            types,
            idle_w,
            cap,
            delay,
            suspend_after,
            nodes: node_list,
            description,
        })
    }

    /// One node type's values: `own` keys first, then `fallback`'s; `prefix` names the table.
    fn node(
        &self,
        own: &NodePowerSection,
        fallback: &NodePowerSection,
        cores: u32,
        prefix: &str,
    ) -> Result<NodePower> {
        let pick = |a: Option<f64>, b: Option<f64>| a.or(b);
        let idle_w = pick(own.idle_w, fallback.idle_w).ok_or_else(|| {
            invalid!(
                "{}: every node type needs its idle power, W",
                self.key(&format!("{prefix}idle_w"))
            )
        })?;
        let (busy, core) = match (own.busy_w, own.core_w) {
            (None, None) => (fallback.busy_w, fallback.core_w),
            pair => pair,
        };
        let mut node = match (busy, core) {
            (Some(_), Some(_)) => {
                return Err(invalid!(
                    "{}: give `busy_w` (power with every core busy) or `core_w` (power a busy core adds), not both",
                    self.key(&format!("{prefix}busy_w"))
                ));
            }
            (Some(busy_w), None) => NodePower::from_busy(cores, idle_w, busy_w),
            (None, core_w) => Ok(NodePower {
                cores,
                idle_w,
                core_w: core_w.unwrap_or(0.0),
                ..NodePower::default()
            }),
        }
        .map_err(|e| invalid!("{}: {}", self.key(&format!("{prefix}{}", e.key)), e.message))?;
        node.gpu_w = pick(own.gpu_w, fallback.gpu_w).unwrap_or(0.0);
        node.memory_w_per_gib =
            pick(own.memory_w_per_gib, fallback.memory_w_per_gib).unwrap_or(0.0);
        node.off_w = pick(own.off_w, fallback.off_w).unwrap_or(0.0);
        node.boot = Transition {
            seconds: own.boot_s.or(fallback.boot_s).unwrap_or(0),
            watts: pick(own.boot_w, fallback.boot_w).unwrap_or(0.0),
        };
        node.shutdown = Transition {
            seconds: own.shutdown_s.or(fallback.shutdown_s).unwrap_or(0),
            watts: pick(own.shutdown_w, fallback.shutdown_w).unwrap_or(0.0),
        };
        node.check()
            .map_err(|e| invalid!("{}: {}", self.key(&format!("{prefix}{}", e.key)), e.message))?;
        Ok(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(text: &str) -> PowerInput {
        let file: PowerFile = toml::from_str(text).unwrap();
        PowerInput {
            section: file.power,
            origin: "p.toml".into(),
            base: None,
        }
    }

    #[test]
    fn a_machine_of_processors_is_one_node_type() {
        let setup =
            input("[power]\ncores = 32\nidle_w = 100\nbusy_w = 420\ngpu_w = 250\npue = 1.3\n")
                .resolve(PowerMachine::Processors {
                    processors: 128,
                    node_processors: None,
                })
                .unwrap();
        assert_eq!(setup.idle_w, 400.0);
        assert_eq!(setup.types[0].core_w, 10.0);
        assert_eq!(setup.types[0].gpu_w, 250.0);
        assert_eq!(setup.pue, 1.3);
    }

    #[test]
    fn bad_values_name_their_key() {
        let machine = PowerMachine::Processors {
            processors: 64,
            node_processors: Some(32),
        };
        let err = input("[power]\nidle_w = 100\nbusy_w = 80\n")
            .resolve(machine)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("p.toml") && err.contains("power.busy_w") && err.contains("below"),
            "{err}"
        );
        let err = input("[power]\nidle_w = -5\n")
            .resolve(machine)
            .unwrap_err()
            .to_string();
        assert!(err.contains("power.idle_w"), "{err}");
        let err = input("[power]\nidle_w = 5\npue = 0.9\n")
            .resolve(machine)
            .unwrap_err()
            .to_string();
        assert!(err.contains("power.pue"), "{err}");
        let err = input("[power]\nbusy_w = 5\n")
            .resolve(machine)
            .unwrap_err()
            .to_string();
        assert!(err.contains("power.idle_w"), "{err}");
        let err = input("[power]\nidle_w = 5\n")
            .resolve(PowerMachine::Processors {
                processors: 64,
                node_processors: None,
            })
            .unwrap_err()
            .to_string();
        assert!(err.contains("power.cores"), "{err}");
        assert!(toml::from_str::<PowerFile>("[power]\nidle = 5\n").is_err());
    }
}
