//! The machine model of paper 001 (Guim, Corbalan & Labarta): nodes, First Fit or First
//! Continuous processor selection, and jobs with memory-bandwidth demands whose runtimes stretch
//! on oversubscribed nodes. [`MachineSpec::check`] is the one validator of a replay's machine
//! options and a population file's; messages name the options by key (each front end says them
//! its way) or the file's keys.

use cluster::{Extra, Nodes, Selection};
use engine::{Job, MemoryBandwidth, OverNodes};
use job::ResourceKinds;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use users::BandwidthMix;

use crate::choices::SelectionChoice;
use crate::error::{Result, ensure, invalid};
use crate::naming::key_value;

/// The machine options of a replay (`--node-processors`, `--selection`, `--bandwidth-mix`,
/// `--bandwidth-demands`, `--node-bandwidth`).
#[derive(Debug, Clone, PartialEq)]
pub struct MachineOptions {
    /// Processors per node (`None`: processors are only counted).
    pub node_processors: Option<u32>,
    /// The machine's resources besides processors and their amounts, `NAME=COUNT,...` by
    /// their TRES names (`None`: processors only); see [`resources`].
    pub resources: Option<String>,
    /// How a job's processors are chosen (needs nodes).
    pub selection: SelectionChoice,
    /// Shares of high, medium and low demand jobs: `high`, `med`, `low` or `HIGH,MEDIUM,LOW`.
    pub bandwidth_mix: Option<String>,
    /// Memory bandwidth per process of low, medium and high demand jobs, MB/s: `LOW,MEDIUM,HIGH`.
    pub bandwidth_demands: String,
    /// Memory bandwidth of a node, MB/s.
    pub node_bandwidth: f64,
    /// How a job's penalties on its nodes combine: `max` (the paper's) or `process-mean`.
    pub node_penalty: String,
    /// Place jobs by this policy while the scheduler decides by `selection` (an experiment;
    /// `None`: place by `selection`, the paper's).
    pub placement: Option<SelectionChoice>,
    /// Processor p is on node (p + offset) / k for the sharing model (0: the default).
    pub node_offset: u32,
    /// A machine of node types (a slurm.conf's nodes): jobs fit node by node, on their
    /// partition's nodes (`None`: processors, and resources only counted).
    pub nodes: Option<crate::nodes::NodeMachine>,
}

impl Default for MachineOptions {
    fn default() -> Self {
        MachineOptions {
            node_processors: None,
            resources: None,
            selection: SelectionChoice::FirstFit,
            bandwidth_mix: None,
            bandwidth_demands: "500,1000,2000".to_string(),
            node_bandwidth: DEFAULT_NODE_BANDWIDTH,
            node_penalty: "max".to_string(),
            placement: None,
            node_offset: 0,
            nodes: None,
        }
    }
}

/// The machine a replay runs on, resolved from the options.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// Nodes and selection (`None`: processors only counted).
    pub nodes: Option<Nodes>,
    /// The sharing model, when jobs got demands.
    pub sharing: Option<MemoryBandwidth>,
    /// The placement, when it differs from the selection ([`cluster::Cluster::place_by`]).
    pub placement: Option<Selection>,
    /// For reports: "nodes of 4, first-continuous, HIGH mix (0.8/0.1/0.1 of 2000/1000/500 MB/s) on
    /// 6000 MB/s".
    pub description: Option<String>,
    /// The resources besides processors, by name, and the machine's amounts of them (no kind
    /// and [`Extra::NONE`] on a machine of processors only).
    pub extra: (ResourceKinds, Extra),
}

/// The most of one resource a machine may have (as of processors).
pub const MAX_RESOURCE_AMOUNT: u32 = crate::limits::MAX_PROCESSORS;

/// A machine's resources besides processors from `NAME=COUNT,...` (the option `resources`):
/// each a TRES name as Slurm writes it (`gres/gpu`, `gres/gpu:a100`, `license/matlab`), given
/// once, with a whole count from 1 to [`MAX_RESOURCE_AMOUNT`]; at most
/// [`job::MAX_EXTRA_KINDS`] of them.
pub fn resources(text: &str) -> Result<(ResourceKinds, Extra)> {
    let wrong =
        |problem: String| invalid!("{}: {problem}", key_value("resources", format!("{text:?}")));
    let mut kinds = ResourceKinds::none();
    let mut extra = Extra::NONE;
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let Some((name, count)) = item.split_once('=') else {
            return Err(wrong(format!(
                "{item:?} is not NAME=COUNT (gres/gpu=16, say)"
            )));
        };
        let name = name.trim();
        if kinds.index(name).is_some() {
            return Err(wrong(format!("{name} is given twice")));
        }
        let count = count
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|c| (1..=MAX_RESOURCE_AMOUNT).contains(c))
            .ok_or_else(|| {
                wrong(format!(
                    "the count of {name} must be a whole number from 1 to {MAX_RESOURCE_AMOUNT}"
                ))
            })?;
        let index = kinds.index_or_add(name).map_err(|e| wrong(e.to_string()))?;
        extra = extra.with(index, count);
    }
    if kinds.is_empty() {
        return Err(wrong("give at least one NAME=COUNT".to_string()));
    }
    Ok((kinds, extra))
}

/// Shares of high, medium and low demand jobs (paper 001, section V-A), by name or as three
/// numbers (checked by [`BandwidthMix::new`]).
fn mix(text: &str) -> Result<[f64; 3]> {
    let named = match text.to_ascii_lowercase().as_str() {
        "high" => Some([0.8, 0.1, 0.1]),
        "med" | "medium" => Some([0.5, 0.1, 0.4]),
        "low" => Some([0.1, 0.1, 0.8]),
        _ => None,
    };
    if let Some(m) = named {
        return Ok(m);
    }
    let values = numbers(text, "bandwidth_mix")?;
    values.as_slice().try_into().map_err(|_| {
        invalid!(
            "{}: give high, med, low or three shares HIGH,MEDIUM,LOW",
            key_value("bandwidth_mix", format!("{text:?}"))
        )
    })
}

fn numbers(text: &str, option: &str) -> Result<Vec<f64>> {
    text.split(',')
        .map(|v| {
            v.trim().parse::<f64>().map_err(|_| {
                invalid!(
                    "{}: {v:?} is not a number",
                    key_value(option, format!("{text:?}"))
                )
            })
        })
        .collect()
}

/// A node's memory bandwidth when none is given, MB/s (paper 001's machine).
pub const DEFAULT_NODE_BANDWIDTH: f64 = 6000.0;

/// How a machine's keys are named in its messages: the options of a replay (named by each
/// front end), or a population file's keys (`site.node_processors = 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MachineKeys {
    /// A replay's options.
    Options,
    /// A population file's `[site]` keys.
    SiteFile,
}

impl MachineKeys {
    /// `key` (`node_processors`) in this naming.
    fn key(self, key: &str) -> String {
        match self {
            MachineKeys::Options => crate::naming::key(key),
            MachineKeys::SiteFile => format!("site.{key}"),
        }
    }

    /// `key` set to `value` in this naming.
    fn value(self, key: &str, value: impl std::fmt::Display) -> String {
        match self {
            MachineKeys::Options => key_value(key, value),
            MachineKeys::SiteFile => format!("site.{key} = {value}"),
        }
    }
}

/// A machine as asked for, before it is checked: what a replay's options and a population
/// file's `[site]` and groups say alike. [`MachineSpec::check`] is the one validator of both.
#[derive(Debug, Clone)]
pub struct MachineSpec {
    /// How messages name the keys.
    pub keys: MachineKeys,
    /// Processors per node (`None`: processors are only counted).
    pub node_processors: Option<u32>,
    /// How a job's processors are chosen (needs nodes); `None`: not given (First Fit).
    pub selection: Option<SelectionChoice>,
    /// Memory bandwidth of a node, MB/s; `None`: not given ([`DEFAULT_NODE_BANDWIDTH`]).
    pub node_bandwidth: Option<f64>,
    /// Place jobs by this policy while the scheduler decides by `selection`.
    pub placement: Option<SelectionChoice>,
    /// Processor p is on node (p + offset) / k for the sharing model.
    pub node_offset: u32,
    /// How a job's penalties on its nodes combine.
    pub over_nodes: OverNodes,
    /// The bandwidth mixes: (how messages name the mix, how they name its demands, the mix).
    pub mixes: Vec<(String, String, BandwidthMix)>,
}

/// A checked machine: its nodes and sharing model.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedMachine {
    /// Nodes and selection (`None`: processors only counted).
    pub nodes: Option<Nodes>,
    /// The sharing model, when some jobs have demands.
    pub sharing: Option<MemoryBandwidth>,
    /// The placement, when it differs from the selection.
    pub placement: Option<Selection>,
    /// The node's memory bandwidth, MB/s.
    pub capacity: f64,
}

impl MachineSpec {
    /// Checks the machine: options that need nodes without nodes, a node without processors,
    /// a bandwidth that is no positive number, a placement First Continuous cannot make, an
    /// offset without sharing, demands above a node's bandwidth.
    pub fn check(&self) -> Result<CheckedMachine> {
        let keys = self.keys;
        let needs_nodes = |what: String| {
            invalid!(
                "{what} needs a machine of nodes ({})",
                keys.key("node_processors")
            )
        };
        let Some(k) = self.node_processors else {
            if let Some((name, _, _)) = self.mixes.first() {
                return Err(needs_nodes(name.clone()));
            }
            if self
                .selection
                .is_some_and(|s| keys == MachineKeys::SiteFile || s != SelectionChoice::FirstFit)
            {
                return Err(needs_nodes(keys.key("selection")));
            }
            if self.node_bandwidth.is_some() && keys == MachineKeys::SiteFile {
                return Err(needs_nodes(keys.key("node_bandwidth")));
            }
            if self.placement.is_some() {
                return Err(needs_nodes(keys.key("placement")));
            }
            return Ok(CheckedMachine {
                nodes: None,
                sharing: None,
                placement: None,
                capacity: self.node_bandwidth.unwrap_or(DEFAULT_NODE_BANDWIDTH),
            });
        };
        ensure!(
            k > 0,
            "{}: a node needs at least one processor",
            keys.value("node_processors", 0)
        );
        let selection = self.selection.unwrap_or_default();
        ensure!(
            !(self.placement == Some(SelectionChoice::FirstContinuous)
                && selection == SelectionChoice::FirstFit),
            "{} needs {} (a run must exist)",
            keys.value("placement", "first-continuous"),
            keys.value("selection", "first-continuous")
        );
        let capacity = self.node_bandwidth.unwrap_or(DEFAULT_NODE_BANDWIDTH);
        ensure!(
            capacity.is_finite() && capacity > 0.0,
            "{}: a node's memory bandwidth must be a number > 0 (MB/s)",
            keys.value("node_bandwidth", capacity)
        );
        if self.mixes.is_empty() {
            ensure!(
                self.node_offset == 0,
                "{} is for the sharing model: it needs {}",
                keys.key("node_offset"),
                keys.key("bandwidth_mix")
            );
        }
        for (_, demands, mix) in &self.mixes {
            if let Some(d) = mix.above_capacity(capacity) {
                return Err(invalid!(
                    "{demands}: {d} MB/s per process is above a node's capacity ({})",
                    keys.value("node_bandwidth", capacity)
                ));
            }
        }
        Ok(CheckedMachine {
            nodes: Some(Nodes {
                processors_per_node: k,
                selection: selection.selection(),
            }),
            sharing: (!self.mixes.is_empty()).then_some(MemoryBandwidth {
                processors_per_node: k,
                node_capacity: capacity,
                over_nodes: self.over_nodes,
                node_offset: self.node_offset,
            }),
            placement: self.placement.map(|p| p.selection()),
            capacity,
        })
    }
}

/// Resolves a replay's machine options and, with a bandwidth mix, gives every job its demand:
/// high with the first share's probability, medium with the second's, else low, drawn from
/// `seed`'s stream.
pub fn apply(args: &MachineOptions, seed: u64, jobs: &mut [Job]) -> Result<Machine> {
    let over_nodes = match args.node_penalty.as_str() {
        "max" => OverNodes::Max,
        "process-mean" => OverNodes::ProcessMean,
        other => {
            return Err(invalid!(
                "{}: give max (the paper's) or process-mean",
                key_value("node_penalty", format!("{other:?}"))
            ));
        }
    };
    let mix = match &args.bandwidth_mix {
        None => None,
        Some(mix_text) => {
            let demands = numbers(&args.bandwidth_demands, "bandwidth_demands")?;
            let demands: [u32; 3] = match demands.as_slice() {
                &[low, medium, high]
                    if [low, medium, high].iter().all(|d| {
                        d.is_finite() && *d >= 0.0 && d.fract() == 0.0 && *d <= f64::from(u32::MAX)
                    }) =>
                {
                    [low as u32, medium as u32, high as u32]
                }
                _ => {
                    return Err(invalid!(
                        "{}: give three whole numbers LOW,MEDIUM,HIGH of MB/s per process",
                        key_value("bandwidth_demands", format!("{:?}", args.bandwidth_demands))
                    ));
                }
            };
            let shares = mix(mix_text)?;
            Some(BandwidthMix::new(shares, demands).map_err(|problem| {
                invalid!(
                    "{}: {problem}",
                    key_value("bandwidth_mix", format!("{mix_text:?}"))
                )
            })?)
        }
    };
    let spec = MachineSpec {
        keys: MachineKeys::Options,
        node_processors: args.node_processors,
        selection: Some(args.selection),
        node_bandwidth: Some(args.node_bandwidth),
        placement: args.placement,
        node_offset: args.node_offset,
        over_nodes,
        mixes: mix
            .map(|m| {
                (
                    crate::naming::key("bandwidth_mix"),
                    crate::naming::key("bandwidth_demands"),
                    m,
                )
            })
            .into_iter()
            .collect(),
    };
    let checked = spec.check()?;
    let extra = match &args.resources {
        Some(text) => resources(text)?,
        None => (ResourceKinds::none(), Extra::NONE),
    };
    let Some(nodes) = checked.nodes else {
        return Ok(Machine {
            nodes: None,
            sharing: None,
            placement: None,
            description: None,
            extra,
        });
    };
    let k = nodes.processors_per_node;
    let selection_name = match args.placement {
        Some(p) => format!("{} deciding, {} placing", args.selection.words(), p.words()),
        None => args.selection.words().to_string(),
    };
    let Some(mix) = mix else {
        return Ok(Machine {
            nodes: Some(nodes),
            sharing: None,
            placement: checked.placement,
            description: Some(format!("nodes of {k}, {selection_name}")),
            extra,
        });
    };
    let capacity = checked.capacity;
    let offset = match args.node_offset {
        0 => String::new(),
        o => format!(" (processor p on node (p + {o}) / {k})"),
    };
    let mut rng = Pcg64::seed_from_u64(seed ^ 0x6261_6e64_7769_6474);
    for job in jobs.iter_mut() {
        job.bandwidth = mix.demand(rng.random());
    }
    let [high, medium, low] = mix.shares;
    let [low_demand, medium_demand, high_demand] = mix.demands;
    Ok(Machine {
        nodes: Some(nodes),
        sharing: checked.sharing,
        placement: checked.placement,
        description: Some(format!(
            "nodes of {k}{offset}, {selection_name}, bandwidth mix {high:.2}/{medium:.2}/{low:.2} of {high_demand}/{medium_demand}/{low_demand} MB/s per process on {capacity} MB/s nodes"
        )),
        extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> MachineOptions {
        MachineOptions {
            node_processors: Some(4),
            selection: SelectionChoice::FirstContinuous,
            bandwidth_mix: Some("high".to_string()),
            ..MachineOptions::default()
        }
    }

    #[test]
    fn placement_and_offset_reach_the_machine_and_default_to_none() {
        let machine = apply(&options(), 1, &mut []).unwrap();
        assert_eq!(machine.placement, None);
        assert_eq!(machine.sharing.map(|s| s.node_offset), Some(0));
        let args = MachineOptions {
            placement: Some(SelectionChoice::FirstFit),
            node_offset: 2,
            ..options()
        };
        let machine = apply(&args, 1, &mut []).unwrap();
        assert_eq!(machine.placement, Some(Selection::FirstFit));
        assert_eq!(machine.sharing.map(|s| s.node_offset), Some(2));
        let text = machine.description.unwrap();
        assert!(
            text.contains("first continuous deciding, first fit placing"),
            "{text}"
        );
        assert!(text.contains("(p + 2) / 4"), "{text}");
    }

    #[test]
    fn placement_and_offset_are_refused_where_they_cannot_work() {
        let refused = |args: MachineOptions| apply(&args, 1, &mut []).unwrap_err().to_string();
        let e = refused(MachineOptions {
            selection: SelectionChoice::FirstFit,
            placement: Some(SelectionChoice::FirstContinuous),
            ..options()
        });
        assert!(e.contains("placement = first-continuous"), "{e}");
        let e = refused(MachineOptions {
            node_processors: None,
            selection: SelectionChoice::FirstFit,
            bandwidth_mix: None,
            placement: Some(SelectionChoice::FirstFit),
            ..options()
        });
        assert!(e.contains("placement needs a machine of nodes"), "{e}");
        let e = refused(MachineOptions {
            bandwidth_mix: None,
            node_offset: 1,
            ..options()
        });
        assert!(e.contains("node_offset is for the sharing model"), "{e}");
    }
}
