//! The `[replay]` table of a replay sweep: every run replays a trace, with the options of
//! `sitesim replay` written as keys (the long option's name with `_` for `-`: `load_factor`,
//! `estimates`, `estimate_f`, `node_processors`, `selection`, `first_jobs`, `warmup`, ...; the
//! scheduler as the population file's `[scheduler]` table). A key left out takes the command's
//! default. The sweep's seed is the replay's `--seed` (estimate models, bandwidth demands,
//! input shaking and abandonment draw from it), so it is not a key.
//!
//! ```toml
//! seeds = [1]
//! [replay]
//! trace = "../../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz"   # relative to the sweep file
//! scheduler = { policy = "easy" }
//! load_factor = 0.8
//!
//! [[axes]]
//! name = "trace"
//! key = "trace"
//! values = ["../../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz", "../../shared/traces/CTC-SP2-1996-3.1-cln.swf.gz"]
//! ```

use std::path::{Path, PathBuf};

use cluster::SchedulerSpec;
use serde::{Deserialize, Serialize};

use crate::choices::{
    EstimateChoice, FormatChoice, RequeuedChoice, SelectionChoice, UnitChoice, WaitFromChoice,
    WarmupChoice,
};
use crate::error::{Result, invalid};
use crate::estimates::EstimateOptions;
use crate::machine::MachineOptions;
use crate::replay::ReplayOptions;
use crate::site::SchedulerSection;
use crate::trace::TraceOptions;

/// The `[replay]` table, as read (every key optional but `trace`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
struct ReplayTable {
    trace: Option<PathBuf>,
    format: FormatChoice,
    tz: Option<String>,
    site_tz: Option<String>,
    wait_from: WaitFromChoice,
    requeued: RequeuedChoice,
    processor_unit: UnitChoice,
    since: Option<String>,
    until: Option<String>,
    scheduler: SchedulerSection,
    processors: Option<u32>,
    first_jobs: Option<usize>,
    load_factor: f64,
    estimates: EstimateChoice,
    estimate_f: Option<f64>,
    estimate_phi: Option<f64>,
    estimate_max: Option<i64>,
    estimate_max_share: Option<f64>,
    /// `[[SECONDS, SHARE], ...]`, the command's `--estimate-mode SECONDS:SHARE`.
    estimate_modes: Vec<(i64, f64)>,
    node_processors: Option<u32>,
    resources: Option<String>,
    selection: SelectionChoice,
    bandwidth_mix: Option<String>,
    bandwidth_demands: String,
    node_bandwidth: f64,
    node_penalty: String,
    placement: Option<SelectionChoice>,
    node_offset: u32,
    warmup: WarmupChoice,
    fairness: bool,
    feedback: bool,
    feedback_abandon: bool,
    shake: bool,
    /// A file holding a `[power]` table, relative to the sweep file.
    power: Option<PathBuf>,
    /// A file of outages (`start` and `[[outages]]`), relative to the sweep file.
    outages: Option<PathBuf>,
    /// Slurm's node events, relative to the sweep file.
    events: Option<PathBuf>,
    /// Slurm's reservations, relative to the sweep file.
    reservations: Option<PathBuf>,
}

impl Default for ReplayTable {
    /// The defaults of `sitesim replay`'s options.
    fn default() -> ReplayTable {
        let machine = MachineOptions::default();
        let estimates = EstimateOptions::default();
        let input = TraceOptions::default();
        ReplayTable {
            trace: None,
            format: input.format,
            tz: input.tz,
            site_tz: input.site_tz,
            wait_from: input.wait_from,
            requeued: input.requeued,
            processor_unit: input.processor_unit,
            since: input.since,
            until: input.until,
            scheduler: SchedulerSection::default(),
            processors: None,
            first_jobs: None,
            load_factor: 1.0,
            estimates: estimates.estimates,
            estimate_f: estimates.estimate_f,
            estimate_phi: estimates.estimate_phi,
            estimate_max: estimates.estimate_max,
            estimate_max_share: estimates.estimate_max_share,
            estimate_modes: estimates.estimate_modes,
            node_processors: machine.node_processors,
            resources: machine.resources,
            selection: machine.selection,
            bandwidth_mix: machine.bandwidth_mix,
            bandwidth_demands: machine.bandwidth_demands,
            node_bandwidth: machine.node_bandwidth,
            node_penalty: machine.node_penalty,
            placement: machine.placement,
            node_offset: machine.node_offset,
            warmup: WarmupChoice::default(),
            fairness: false,
            feedback: false,
            feedback_abandon: false,
            shake: false,
            power: None,
            outages: None,
            events: None,
            reservations: None,
        }
    }
}

/// The scheduler and replay options of one run: `table` (the `[replay]` table with the run's
/// axis values set, or a front end's options gathered as such a table), a relative `trace`
/// taken from `dir` (the sweep file's directory), and `seed`. `origin` names the sweep file in
/// errors (`None`: the options came from a front end, whose messages name the options its
/// way). The trace is not read here.
pub fn replay_of(
    table: toml::Value,
    dir: &Path,
    seed: u64,
    origin: Option<&str>,
) -> Result<(SchedulerSpec, ReplayOptions)> {
    let table: ReplayTable = table
        .try_into()
        .map_err(|e: toml::de::Error| match origin {
            Some(origin) => invalid!("{origin}: replay: {e}"),
            None => invalid!("{e}"),
        })?;
    let trace = table.trace.clone().ok_or_else(|| match origin {
        Some(origin) => invalid!("{origin}: replay: no trace; give replay.trace (an SWF file or a sacct dump, plain or gzip, relative to the sweep file) or an axis with key = \"trace\""),
        None => invalid!("no trace to replay"),
    })?;
    let reading = TraceOptions {
        format: table.format,
        tz: table.tz.clone(),
        site_tz: table.site_tz.clone(),
        wait_from: table.wait_from,
        requeued: table.requeued,
        processor_unit: table.processor_unit,
        since: table.since.clone(),
        until: table.until.clone(),
        ..TraceOptions::default()
    };
    let accounting =
        dump_accounting(&table, &dir.join(&trace), &reading).map_err(|e| match origin {
            Some(origin) => invalid!("{origin}: replay: {e}"),
            None => e,
        })?;
    let scheduler = match &accounting {
        Some(accounting) => table.scheduler.spec_for_dump(accounting),
        None => table.scheduler.spec(),
    }
    .map_err(|e| match origin {
        Some(origin) => invalid!("{origin}: replay.scheduler: {e}"),
        None => e,
    })?;
    if let Some(accounting) = &accounting {
        for limit in &accounting.not_modelled {
            tracing::warn!("{limit}: a QOS limit the Slurm model does not apply (left out)");
        }
    }
    // A slurm.conf's nodes are the machine of every scheduler that schedules resources besides
    // processors (none, the EASY family and conservative), and of the Slurm model when they schedule more
    // than CPUs (GPUs, or memory as a consumable resource); on CPUs alone the Slurm model
    // counts its partitions' CPUs, as it always has.
    let nodes = match &table.scheduler.slurm_conf {
        Some(path) if scheduler.backfill().takes("slurm") => {
            let machine = crate::slurm::import_slurm_conf_file(path)?.machine;
            match machine {
                Some(m) if !m.resources()?.is_empty() => {
                    if table.resources.is_some() {
                        return Err(invalid!(
                            "{}: the Slurm model on the nodes of {} plans their CPUs, memory and GPUs only; licences and other machine-wide resources are not modelled under it",
                            crate::naming::key("resources"),
                            path.display()
                        ));
                    }
                    Some(m)
                }
                _ => None,
            }
        }
        Some(path) if !scheduler.backfill().takes("slurm") => {
            let machine = crate::slurm::import_slurm_conf_file(path)?.machine;
            if machine.is_none() {
                return Err(invalid!(
                    "{}: {} defines no nodes (no NodeName line), and under a scheduler other than Slurm's a slurm.conf gives only the machine: its other keys apply only to the Slurm schedulers (slurm, slurm-site)",
                    crate::naming::key_value("scheduler", scheduler.label()),
                    path.display()
                ));
            }
            let rule = scheduler.build().backfill;
            if machine.is_some() && !rule.schedules_nodes() {
                return Err(invalid!(
                    "{}: the {} backfilling rule plans with processor counts and cannot run the machine of node types of {} (none, the EASY family, conservative and the Slurm model can)",
                    crate::naming::key_value("scheduler", scheduler.label()),
                    rule.name(),
                    path.display()
                ));
            }
            machine
        }
        _ => None,
    };
    let mut resources = match &table.resources {
        Some(text) => {
            let (kinds, amounts) = crate::machine::resources(text)?;
            (kinds.names().iter().cloned())
                .zip(amounts.amounts().iter().copied())
                .collect()
        }
        None => Vec::new(),
    };
    let mut processors = table.processors;
    if let Some(machine) = &nodes {
        let conf = table
            .scheduler
            .slurm_conf
            .as_ref()
            .map_or_else(String::new, |p| p.display().to_string());
        let mut kinds = machine.resources()?;
        if let Some((name, _)) = resources
            .iter()
            .find(|(name, _)| kinds.iter().any(|(k, _)| k == name))
        {
            return Err(invalid!(
                "{}: {name} comes from the nodes of {conf}; give only resources the nodes do not hold (licences)",
                crate::naming::key("resources")
            ));
        }
        if table.processors.is_some() || table.node_processors.is_some() {
            return Err(invalid!(
                "{} and {} do not apply: the machine is the nodes of {conf}",
                crate::naming::key("processors"),
                crate::naming::key("node_processors")
            ));
        }
        let cpus = machine
            .nodes
            .iter()
            .map(|&(_, t)| u64::from(machine.types[t].cpus))
            .sum::<u64>();
        processors = Some(u32::try_from(cpus).map_err(|_| {
            invalid!(
                "{conf}: {cpus} CPUs in all: more than {} is not modelled",
                u32::MAX
            )
        })?);
        kinds.append(&mut resources);
        resources = kinds;
    }
    let options = ReplayOptions {
        trace: dir.join(trace),
        input: TraceOptions {
            format: table.format,
            tz: table.tz,
            site_tz: table.site_tz,
            wait_from: table.wait_from,
            requeued: table.requeued,
            processor_unit: table.processor_unit,
            since: table.since,
            until: table.until,
            resources,
            nodes: nodes.as_ref().map(crate::nodes::NodeMachine::names),
            first_names: accounting.map(|a| a.first_names).unwrap_or_default(),
        },
        processors,
        first_jobs: table.first_jobs,
        load_factor: table.load_factor,
        estimates: EstimateOptions {
            estimates: table.estimates,
            estimate_f: table.estimate_f,
            estimate_phi: table.estimate_phi,
            estimate_max: table.estimate_max,
            estimate_max_share: table.estimate_max_share,
            estimate_modes: table.estimate_modes,
            seed,
        },
        machine: MachineOptions {
            node_processors: table.node_processors,
            resources: table.resources,
            selection: table.selection,
            bandwidth_mix: table.bandwidth_mix,
            bandwidth_demands: table.bandwidth_demands,
            node_bandwidth: table.node_bandwidth,
            node_penalty: table.node_penalty,
            placement: table.placement,
            node_offset: table.node_offset,
            nodes,
        },
        warmup: table.warmup,
        fairness: table.fairness,
        feedback: table.feedback,
        feedback_abandon: table.feedback_abandon,
        shake: table.shake,
        power: table.power.map(|p| dir.join(p)),
        outages: table.outages.map(|p| dir.join(p)),
        events: table.events.map(|p| dir.join(p)),
        reservations: table.reservations.map(|p| dir.join(p)),
    };
    Ok((scheduler, options))
}

/// For a replay of a sacct dump (the format given, or told from the file's first line): the
/// site's accounting ([`crate::accounting::SiteAccounting`]) of `scheduler.slurm_assoc` and
/// `scheduler.slurm_qos`, with the partitions of `scheduler.slurm_conf` (in the file's order) as
/// the dump's first partition names, so that the Slurm model's partitions, accounts and QOS
/// take the dump's jobs of their names. Under a Slurm rule, what the files do not give comes
/// from the dump itself (read once more, with `input`'s options, for its names): without a tree
/// file, its accounts under root and its users, one share each, as Slurm's own accounts; without
/// a QOS file, its QOS with Slurm's defaults (priority 0, usage factor 1, no limits); a dump
/// that is not a file (a pipe, read once) is not read for them. `None` for an SWF trace, which
/// the tree and QOS files cannot apply to (an error if they are given). A trace that cannot be
/// opened is left to the reader to report.
fn dump_accounting(
    table: &ReplayTable,
    trace: &Path,
    input: &TraceOptions,
) -> Result<Option<crate::accounting::SiteAccounting>> {
    // A pipe (`/dev/stdin`) is read once, by the replay: neither told apart nor read here.
    let file = std::fs::metadata(trace).is_ok_and(|m| m.is_file());
    let format = match table.format {
        FormatChoice::Auto if file => swf::Input::open(trace)
            .ok()
            .and_then(|mut input| crate::trace::resolve(FormatChoice::Auto, &mut input).ok())
            .unwrap_or(FormatChoice::Swf),
        format => format,
    };
    let dump = !matches!(format, FormatChoice::Swf | FormatChoice::Auto);
    let scheduler = &table.scheduler;
    if !dump && !file && scheduler.dump_only_key().is_some() {
        return Err(invalid!(
            "{}: not a file, so not told apart from SWF before it is read: give --format sacct with the association tree and QOS files",
            trace.display()
        ));
    }
    if !dump {
        if let Some(key) = scheduler.dump_only_key() {
            return Err(invalid!(
                "scheduler.{key}: {} is not a Slurm accounting dump (sacct); the association tree and QOS files name a dump's users, accounts and QOS",
                trace.display()
            ));
        }
        return Ok(None);
    }
    let partitions: Vec<String> = match &scheduler.slurm_conf {
        Some(path) => {
            let imported = crate::slurm::import_slurm_conf_file(path)?;
            match (&imported.machine, &imported.section.partitions) {
                (Some(machine), _) => machine.partition_names(),
                (None, Some(partitions)) => partitions.iter().map(|p| p.name.clone()).collect(),
                (None, None) => Vec::new(),
            }
        }
        None => Vec::new(),
    };
    let mut accounting = crate::accounting::SiteAccounting::read(
        scheduler.slurm_assoc.as_deref(),
        scheduler.slurm_qos.as_deref(),
        &partitions,
    )?;
    let slurm_rule = schedulers::REGISTRY
        .compose(scheduler.composition(), &cluster::ParamValues::new())
        .is_ok_and(|spec| spec.backfill().takes("slurm"));
    if slurm_rule && file && (accounting.tree.is_none() || accounting.qos.is_none()) {
        let options = TraceOptions {
            nodes: None,
            first_names: Default::default(),
            format,
            ..input.clone()
        };
        options.sacct_options()?;
        // An unreadable dump is the replay's to report, with its own options.
        let log = swf::Input::open(trace)
            .ok()
            .and_then(|input| crate::trace::read_log(input, format, &options).ok());
        if let Some(log) = log {
            accounting.add_dump_defaults(&log)?;
        }
    }
    Ok(Some(accounting))
}

/// The `[replay]` table's defaults (those of `sitesim replay`'s options), as a table: a key
/// whose default is "none" is absent.
pub fn defaults() -> toml::Table {
    toml::Table::try_from(ReplayTable::default()).unwrap_or_default()
}

/// The label of a trace path: its file name without `.gz` and `.swf`
/// (`KTH-SP2-1996-2.1-cln`).
pub fn trace_label(path: &str) -> String {
    let name = Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned());
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    name.strip_suffix(".swf").unwrap_or(name).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Value {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn keys_take_the_command_defaults() {
        let (spec, options) = replay_of(
            table(r#"trace = "t.swf""#),
            Path::new("dir"),
            7,
            Some("s.toml"),
        )
        .unwrap();
        assert_eq!(spec.label(), "easy");
        assert_eq!(options.trace, Path::new("dir").join("t.swf"));
        assert_eq!(options.load_factor, 1.0);
        assert_eq!(options.estimates.seed, 7);
        assert_eq!(options.estimates.estimates, EstimateChoice::default());
        assert_eq!(options.machine, MachineOptions::default());
        assert_eq!(options.warmup, WarmupChoice::None);
        assert!(!options.feedback && !options.shake && !options.fairness);
    }

    #[test]
    fn keys_set_the_options() {
        let (spec, options) = replay_of(
            table(
                r#"
                trace = "/abs/t.swf.gz"
                scheduler = { policy = "creasy", alpha = 6000 }
                load_factor = 0.8
                estimates = "modal"
                estimate_modes = [[7200, 0.27]]
                node_processors = 4
                selection = "first-continuous"
                warmup = "tsafrir"
                first_jobs = 100
                "#,
            ),
            Path::new("dir"),
            1,
            Some("s.toml"),
        )
        .unwrap();
        assert_eq!(spec.label(), "creasy-6000");
        assert_eq!(options.trace, Path::new("/abs/t.swf.gz"));
        assert_eq!(options.load_factor, 0.8);
        assert_eq!(options.estimates.estimates, EstimateChoice::Modal);
        assert_eq!(options.estimates.estimate_modes, vec![(7200, 0.27)]);
        assert_eq!(options.machine.node_processors, Some(4));
        assert_eq!(options.machine.selection, SelectionChoice::FirstContinuous);
        assert_eq!(options.warmup, WarmupChoice::Tsafrir);
        assert_eq!(options.first_jobs, Some(100));
    }

    #[test]
    fn mistakes_name_the_key() {
        let err = |text: &str| {
            replay_of(table(text), Path::new("."), 1, Some("s.toml"))
                .unwrap_err()
                .to_string()
        };
        assert!(err("load_factor = 2.0").contains("no trace"));
        let e = err("trace = \"t\"\nseed = 3");
        assert!(e.contains("unknown field `seed`"), "{e}");
        let e = err("trace = \"t\"\nestimates = \"guess\"");
        assert!(e.contains("guess"), "{e}");
        let e = err("trace = \"t\"\nscheduler = { policy = \"easy\", alpha = 3 }");
        assert!(e.contains("replay.scheduler"), "{e}");
    }

    #[test]
    fn trace_labels_are_file_stems() {
        assert_eq!(
            trace_label("../traces/KTH-SP2-1996-2.1-cln.swf.gz"),
            "KTH-SP2-1996-2.1-cln"
        );
        assert_eq!(trace_label("a/b.swf"), "b");
        assert_eq!(trace_label("log.txt"), "log.txt");
    }
}
