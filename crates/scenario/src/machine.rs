//! A replay's machine model of paper 001 (Guim, Corbalan & Labarta): nodes, First Fit or First
//! Continuous processor selection, and jobs with memory-bandwidth demands whose runtimes stretch
//! on oversubscribed nodes. Messages name the command-line flags the options come from.

use cluster::{Nodes, Selection};
use engine::{JobSpec, MemoryBandwidth, OverNodes};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use users::BandwidthMix;

use crate::choices::SelectionChoice;
use crate::error::{Result, ensure, invalid};

/// The machine options of a replay (`--node-processors`, `--selection`, `--bandwidth-mix`,
/// `--bandwidth-demands`, `--node-bandwidth`).
#[derive(Debug, Clone, PartialEq)]
pub struct MachineOptions {
    /// Processors per node (`None`: processors are only counted).
    pub node_processors: Option<u32>,
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
}

impl Default for MachineOptions {
    fn default() -> Self {
        MachineOptions {
            node_processors: None,
            selection: SelectionChoice::FirstFit,
            bandwidth_mix: None,
            bandwidth_demands: "500,1000,2000".to_string(),
            node_bandwidth: 6000.0,
            node_penalty: "max".to_string(),
            placement: None,
            node_offset: 0,
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
    let values = numbers(text, "--bandwidth-mix")?;
    values.as_slice().try_into().map_err(|_| {
        invalid!("--bandwidth-mix {text:?}: give high, med, low or three shares HIGH,MEDIUM,LOW")
    })
}

fn numbers(text: &str, flag: &str) -> Result<Vec<f64>> {
    text.split(',')
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .map_err(|_| invalid!("{flag} {text:?}: {v:?} is not a number"))
        })
        .collect()
}

/// Resolves the options and, with a bandwidth mix, gives every job its demand: high with the
/// first share's probability, medium with the second's, else low, drawn from `seed`'s stream.
pub fn apply(args: &MachineOptions, seed: u64, jobs: &mut [JobSpec]) -> Result<Machine> {
    let Some(k) = args.node_processors else {
        ensure!(
            args.bandwidth_mix.is_none(),
            "--bandwidth-mix needs a machine of nodes (--node-processors)"
        );
        ensure!(
            args.selection == SelectionChoice::FirstFit,
            "--selection needs a machine of nodes (--node-processors)"
        );
        ensure!(
            args.placement.is_none(),
            "--placement needs a machine of nodes (--node-processors)"
        );
        return Ok(Machine {
            nodes: None,
            sharing: None,
            placement: None,
            description: None,
        });
    };
    ensure!(
        k > 0,
        "--node-processors 0: a node needs at least one processor"
    );
    let nodes = Nodes {
        processors_per_node: k,
        selection: args.selection.selection(),
    };
    ensure!(
        !(args.placement == Some(SelectionChoice::FirstContinuous)
            && args.selection == SelectionChoice::FirstFit),
        "--placement first-continuous needs --selection first-continuous (a run must exist)"
    );
    let placement = args.placement.map(|p| p.selection());
    let selection_name = match args.placement {
        Some(p) => format!("{} deciding, {} placing", args.selection.words(), p.words()),
        None => args.selection.words().to_string(),
    };
    let Some(mix_text) = &args.bandwidth_mix else {
        ensure!(
            args.node_offset == 0,
            "--node-offset is for the sharing model: it needs --bandwidth-mix"
        );
        return Ok(Machine {
            nodes: Some(nodes),
            sharing: None,
            placement,
            description: Some(format!("nodes of {k}, {selection_name}")),
        });
    };
    let demands = numbers(&args.bandwidth_demands, "--bandwidth-demands")?;
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
                "--bandwidth-demands {:?}: give three whole numbers LOW,MEDIUM,HIGH of MB/s per process",
                args.bandwidth_demands
            ));
        }
    };
    let mix = BandwidthMix::new(mix(mix_text)?, demands)
        .map_err(|problem| invalid!("--bandwidth-mix {mix_text:?}: {problem}"))?;
    let capacity = args.node_bandwidth;
    ensure!(
        capacity.is_finite() && capacity > 0.0,
        "--node-bandwidth {capacity}: a node's memory bandwidth must be a number > 0 (MB/s)"
    );
    if let Some(d) = mix.above_capacity(capacity) {
        return Err(invalid!(
            "--bandwidth-demands: {d} MB/s per process is above a node's capacity of {capacity} MB/s"
        ));
    }
    let over_nodes = match args.node_penalty.as_str() {
        "max" => OverNodes::Max,
        "process-mean" => OverNodes::ProcessMean,
        other => {
            return Err(invalid!(
                "--node-penalty {other:?}: give max (the paper's) or process-mean"
            ));
        }
    };
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
        sharing: Some(MemoryBandwidth {
            processors_per_node: k,
            node_capacity: capacity,
            over_nodes,
            node_offset: args.node_offset,
        }),
        placement,
        description: Some(format!(
            "nodes of {k}{offset}, {selection_name}, bandwidth mix {high:.2}/{medium:.2}/{low:.2} of {high_demand}/{medium_demand}/{low_demand} MB/s per process on {capacity} MB/s nodes"
        )),
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
        assert!(e.contains("--placement first-continuous"), "{e}");
        let e = refused(MachineOptions {
            node_processors: None,
            selection: SelectionChoice::FirstFit,
            bandwidth_mix: None,
            placement: Some(SelectionChoice::FirstFit),
            ..options()
        });
        assert!(e.contains("--placement needs a machine of nodes"), "{e}");
        let e = refused(MachineOptions {
            bandwidth_mix: None,
            node_offset: 1,
            ..options()
        });
        assert!(e.contains("--node-offset"), "{e}");
    }
}
