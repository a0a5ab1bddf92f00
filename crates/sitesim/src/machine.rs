//! `replay --node-processors ... --bandwidth-mix ...`: the machine model of paper 001 (Guim,
//! Corbalan & Labarta): nodes, First Fit or First Continuous processor selection, and jobs with
//! memory-bandwidth demands whose runtimes stretch on oversubscribed nodes.

use cluster::{Nodes, Selection};
use engine::{JobSpec, MemoryBandwidth};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::cli::{MachineArgs, SelectionName};

/// The machine a replay runs on, resolved from the options.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// Nodes and selection (`None`: processors only counted).
    pub nodes: Option<Nodes>,
    /// The sharing model, when jobs got demands.
    pub sharing: Option<MemoryBandwidth>,
    /// For reports: "nodes of 4, first-continuous, HIGH mix (0.8/0.1/0.1 of 2000/1000/500 MB/s) on
    /// 6000 MB/s".
    pub description: Option<String>,
}

/// Shares of high, medium and low demand jobs (paper 001, section V-A).
fn mix(text: &str) -> anyhow::Result<[f64; 3]> {
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
    let shares: [f64; 3] = values.as_slice().try_into().map_err(|_| {
        anyhow::anyhow!(
            "--bandwidth-mix {text:?}: give high, med, low or three shares HIGH,MEDIUM,LOW"
        )
    })?;
    anyhow::ensure!(
        shares.iter().all(|s| (0.0..=1.0).contains(s)),
        "--bandwidth-mix {text:?}: each share must lie in [0, 1]"
    );
    let sum: f64 = shares.iter().sum();
    anyhow::ensure!(
        (sum - 1.0).abs() < 1e-6,
        "--bandwidth-mix {text:?}: the shares sum to {sum}, not 1"
    );
    Ok(shares)
}

fn numbers(text: &str, flag: &str) -> anyhow::Result<Vec<f64>> {
    text.split(',')
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .map_err(|_| anyhow::anyhow!("{flag} {text:?}: {v:?} is not a number"))
        })
        .collect()
}

/// Resolves the options and, with a bandwidth mix, gives every job its demand: high with the
/// first share's probability, medium with the second's, else low, drawn from `seed`'s stream.
pub fn apply(args: &MachineArgs, seed: u64, jobs: &mut [JobSpec]) -> anyhow::Result<Machine> {
    let Some(k) = args.node_processors else {
        anyhow::ensure!(
            args.bandwidth_mix.is_none(),
            "--bandwidth-mix needs a machine of nodes (--node-processors)"
        );
        anyhow::ensure!(
            args.selection == SelectionName::FirstFit,
            "--selection needs a machine of nodes (--node-processors)"
        );
        return Ok(Machine {
            nodes: None,
            sharing: None,
            description: None,
        });
    };
    anyhow::ensure!(
        k > 0,
        "--node-processors 0: a node needs at least one processor"
    );
    let selection = match args.selection {
        SelectionName::FirstFit => Selection::FirstFit,
        SelectionName::FirstContinuous => Selection::FirstContinuous,
    };
    let nodes = Nodes {
        processors_per_node: k,
        selection,
    };
    let selection_name = match args.selection {
        SelectionName::FirstFit => "first fit",
        SelectionName::FirstContinuous => "first continuous",
    };
    let Some(mix_text) = &args.bandwidth_mix else {
        return Ok(Machine {
            nodes: Some(nodes),
            sharing: None,
            description: Some(format!("nodes of {k}, {selection_name}")),
        });
    };
    let shares = mix(mix_text)?;
    let demands = numbers(&args.bandwidth_demands, "--bandwidth-demands")?;
    let [low, medium, high]: [f64; 3] = demands.as_slice().try_into().map_err(|_| {
        anyhow::anyhow!(
            "--bandwidth-demands {:?}: give three demands LOW,MEDIUM,HIGH in MB/s",
            args.bandwidth_demands
        )
    })?;
    let capacity = args.node_bandwidth;
    anyhow::ensure!(
        capacity.is_finite() && capacity > 0.0,
        "--node-bandwidth {capacity}: a node's memory bandwidth must be a number > 0 (MB/s)"
    );
    for (name, d) in [("low", low), ("medium", medium), ("high", high)] {
        anyhow::ensure!(
            d.is_finite() && d >= 0.0 && d.fract() == 0.0,
            "--bandwidth-demands: the {name} demand {d} must be a whole number of MB/s >= 0"
        );
        anyhow::ensure!(
            d <= capacity,
            "--bandwidth-demands: the {name} demand of {d} MB/s per process is above a node's capacity of {capacity} MB/s"
        );
    }
    let mut rng = Pcg64::seed_from_u64(seed ^ 0x6261_6e64_7769_6474);
    for job in jobs.iter_mut() {
        let u: f64 = rng.random();
        let demand = if u < shares[0] {
            high
        } else if u < shares[0] + shares[1] {
            medium
        } else {
            low
        };
        job.bandwidth = demand as u32;
    }
    Ok(Machine {
        nodes: Some(nodes),
        sharing: Some(MemoryBandwidth {
            processors_per_node: k,
            node_capacity: capacity,
        }),
        description: Some(format!(
            "nodes of {k}, {selection_name}, bandwidth mix {:.2}/{:.2}/{:.2} of {high}/{medium}/{low} MB/s per process on {capacity} MB/s nodes",
            shares[0], shares[1], shares[2]
        )),
    })
}
