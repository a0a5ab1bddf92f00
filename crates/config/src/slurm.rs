//! The Slurm model's configuration as files give it: the `[scheduler.slurm]` table of a
//! population or replay file ([`SlurmSection`], every key optional, times in seconds), and the
//! importer of a real `slurm.conf` ([`import_slurm_conf`]), which reads the lines the model
//! uses into a section and reports every other key, flag and parameter it ignores.

use std::collections::BTreeMap;
use std::path::Path;

pub use slurm_model::section::{
    AccountSection, MemberSection, PartitionSection, QosSection, SharesValue, SlurmSection,
};

use serde::Serialize;
use slurm_model::SlurmConfig;

use crate::error::{Result, invalid};

/// What [`import_slurm_conf`] read, and what it left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imported {
    /// The model's keys read from the file.
    pub section: SlurmSection,
    /// Every key, flag or parameter the model does not use, with its line and why.
    pub ignored: Vec<String>,
    /// The machine its `NodeName` and `PartitionName` lines describe (`None` without nodes):
    /// the machine of node types a replay with this slurm.conf runs on, under any scheduler.
    pub machine: Option<crate::nodes::NodeMachine>,
}

/// Reads the lines of a real `slurm.conf` (`text`, named `origin` in messages) that the Slurm
/// model uses: `PriorityWeight*`, `PriorityDecayHalfLife`, `PriorityCalcPeriod`,
/// `PriorityMaxAge`, `PriorityFavorSmall`, `PriorityFlags`, `FairShareDampeningFactor`,
/// `OverTimeLimit`, the `SchedulerParameters` the model has, the nodes of `NodeName` (and
/// `NodeSet`) lines with their CPUs, and `PartitionName` lines (as partitions that select no
/// jobs, each with the CPUs of its nodes). Keys are case-insensitive, `#` starts a comment,
/// `\` continues a line, a UTF-8 byte-order mark is skipped; a key given twice is noted and
/// its last value used, as Slurm does. A value the model cannot take (a time with a field out
/// of range, a partition naming a node no `NodeName` line defines) is an error naming file,
/// line and key; every other key, flag or parameter is listed in [`Imported::ignored`] with
/// its line. `Include` needs the file's directory: [`import_slurm_conf_file`] follows it.
pub fn import_slurm_conf(text: &str, origin: &str) -> Result<Imported> {
    import(text, origin, None)
}

/// [`import_slurm_conf`] of a file's `text`, with `Include` files read relative to `dir` (the
/// directory of the file; `None`: `Include` cannot be followed).
fn import(text: &str, origin: &str, dir: Option<&Path>) -> Result<Imported> {
    let mut imported = Imported::default();
    let mut reading = Reading::default();
    let mut lines = Vec::new();
    collect_lines(&mut reading, &mut lines, text, origin, dir, true)?;
    // a single-valued key given more than once: the last is used, as Slurm does
    let mut last: BTreeMap<String, usize> = BTreeMap::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(key) = l.single_key() {
            last.insert(key, i);
        }
    }
    for (i, l) in lines.iter().enumerate() {
        if let Some(key) = l.single_key()
            && let Some(&later) = last.get(&key).filter(|&&later| later != i)
        {
            let name = l.text.split_once('=').map_or("", |(k, _)| k.trim());
            imported.ignored.push(format!(
                "{}: {name} is given again at {}; the later value is used, as Slurm does",
                l.place, lines[later].place
            ));
            continue;
        }
        read_line(
            &mut imported,
            &mut reading,
            &l.origin,
            &l.place,
            l.line,
            &l.text,
        )?;
    }
    reading.resolve_partitions(&mut imported)?;
    imported.machine = reading.machine(origin)?;
    imported.ignored.append(&mut reading.notes);
    // the model's own check, naming slurm.conf's keys
    imported
        .section
        .apply(SlurmConfig::default())
        .map_err(|e| invalid!("{origin}: {e}"))?;
    Ok(imported)
}

/// One logical line of a slurm.conf or an included file (continuations joined, the comment
/// cut).
#[derive(Debug)]
struct Line {
    /// The file, as messages name it.
    origin: String,
    /// "line N" (the slurm.conf's) or "FILE, line N" (an included file's), for the notes.
    place: String,
    line: usize,
    text: String,
}

impl Line {
    /// Its key in lower case, if the key takes one value (not in [`REPEATED_KEYS`]).
    fn single_key(&self) -> Option<String> {
        let (key, _) = self.text.split_once('=')?;
        let key = key.trim().to_ascii_lowercase();
        (!REPEATED_KEYS.contains(&key.as_str())).then_some(key)
    }
}

/// Collects one file's logical lines into `lines`, following `Include` directives where they
/// stand (`main`: the slurm.conf itself, else an included file, whose notes name it; `dir`:
/// the directory relative `Include` paths start from, `None` when the text has no file). A
/// UTF-8 byte-order mark at the start is skipped (editors on Windows write one; it would
/// otherwise be read as part of the first key).
fn collect_lines(
    reading: &mut Reading,
    lines: &mut Vec<Line>,
    text: &str,
    origin: &str,
    dir: Option<&Path>,
    main: bool,
) -> Result<()> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut logical = String::new();
    let mut first_line = 0;
    let mut own = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let content = raw.split('#').next().unwrap_or("").trim_end();
        if logical.is_empty() {
            first_line = index + 1;
        }
        if let Some(continued) = content.strip_suffix('\\') {
            logical.push_str(continued);
            logical.push(' ');
            continue;
        }
        logical.push_str(content);
        if !logical.trim().is_empty() {
            own.push((first_line, std::mem::take(&mut logical)));
        }
        logical.clear();
    }
    for (line, text) in own {
        let text = text.trim();
        if let Some(file) = include_directive(text) {
            read_include(reading, lines, origin, dir, line, file)?;
            continue;
        }
        // `Include`'s `%c` is the ClusterName given before it
        if let Some((key, value)) = text.split_once('=')
            && key.trim().eq_ignore_ascii_case("ClusterName")
        {
            reading.cluster_name = Some(value.trim().to_ascii_lowercase());
        }
        lines.push(Line {
            origin: origin.to_string(),
            place: if main {
                format!("line {line}")
            } else {
                format!("{origin}, line {line}")
            },
            line,
            text: text.to_string(),
        });
    }
    Ok(())
}

/// The file an `Include` directive names (`Include FILE`, the word in any case, then white
/// space: `parse_config.c:_parse_include_directive`), if `text` is one.
fn include_directive(text: &str) -> Option<&str> {
    let head = text.get(..7)?;
    let rest = text.get(7..)?;
    (head.eq_ignore_ascii_case("include") && rest.starts_with(char::is_whitespace))
        .then(|| rest.split_whitespace().next())
        .flatten()
}

/// Follows `Include FILE` (line `line` of `origin`): `%c` is the cluster's name, a relative
/// path is relative to the slurm.conf's directory (`get_extra_conf_path`); the included
/// file's lines are read where the directive stands.
fn read_include(
    reading: &mut Reading,
    lines: &mut Vec<Line>,
    origin: &str,
    dir: Option<&Path>,
    line: usize,
    file: &str,
) -> Result<()> {
    let at = |what: String| invalid!("{origin}, line {line}, Include {file}: {what}");
    let Some(dir) = dir else {
        return Err(at(
            "an included file can only be read when the slurm.conf is read from a file".into(),
        ));
    };
    if file.contains('*') {
        return Err(at(
            "a wildcard Include is not read; include each file by its name".into(),
        ));
    }
    let file = if file.contains("%c") {
        let name = reading
            .cluster_name
            .clone()
            .ok_or_else(|| at("`%c` needs a ClusterName line before the Include".into()))?;
        file.replace("%c", &name)
    } else {
        file.to_string()
    };
    if reading.depth >= MAX_INCLUDE_DEPTH {
        return Err(at(format!(
            "more than {MAX_INCLUDE_DEPTH} nested Includes (does a file include itself?)"
        )));
    }
    let path = dir.join(&file);
    let text = read_conf(&path).map_err(|e| at(e.to_string()))?;
    let name = path.display().to_string();
    reading.depth += 1;
    let result = collect_lines(reading, lines, &text, &name, Some(dir), false);
    reading.depth -= 1;
    result
}

/// Keys slurm.conf may give on several lines (`read_config.c`'s `S_P_ARRAY` options, and
/// `Include`); any other key given twice is noted, and its last value used, as Slurm does
/// (`parse_config.c`: "specified more than once, latest value used").
const REPEATED_KEYS: [&str; 11] = [
    "nodename",
    "partitionname",
    "nodeset",
    "downnodes",
    "slurmctldhost",
    "poweraction",
    "prolog",
    "epilog",
    "prologslurmctld",
    "epilogslurmctld",
    "include",
];

/// The deepest chain of `Include`s followed (Slurm's own limit is the stack; a file that
/// includes itself would never end).
const MAX_INCLUDE_DEPTH: usize = 16;

/// At most this many nodes in the host lists of one slurm.conf (the largest machines have a
/// few tens of thousands): a typo such as `n[1-999999999]` is an error, not an allocation.
const MAX_NODES: usize = 1 << 20;

/// A node set (`NodeSet=NAME Nodes=LIST` or `NodeSet=NAME Feature=FEATURE`).
#[derive(Debug, Clone)]
enum NodeSet {
    Nodes(String),
    Feature(String),
}

/// What the importer keeps while it reads: the nodes and node sets defined so far, the
/// partitions' node lists (resolved once every line is read, as slurmctld builds the
/// partitions after all the nodes), and the cluster's name (`Include`'s `%c`).
#[derive(Debug, Default)]
struct Reading {
    /// Each node's CPUs and features, by name.
    nodes: BTreeMap<String, (u32, Vec<String>)>,
    /// The node types (one per `NodeName` line) and each node's name and type, in order.
    machine: crate::nodes::NodeMachine,
    /// Where each node type's line is (file, line), for messages.
    type_lines: Vec<(String, usize)>,
    /// `GresTypes`, lower case.
    gres_types: Vec<String>,
    /// `SelectType=select/linear`: whole nodes for every job.
    linear: bool,
    /// `SelectTypeParameters` without `_Memory` (memory not a consumable resource).
    memory_not_scheduled: bool,
    /// Each partition's rules for the machine, in order, and whether its `Nodes` is `ALL`.
    partition_rules: Vec<(crate::nodes::PartitionSpec, bool)>,
    /// Whether some `NodeName` line gives `RealMemory`.
    memory_given: bool,
    /// Notes about the machine, for [`Imported::ignored`].
    notes: Vec<String>,
    /// `NodeName=DEFAULT`'s keys (lower case) and values.
    node_defaults: BTreeMap<String, String>,
    /// The node sets, by name.
    node_sets: BTreeMap<String, NodeSet>,
    /// Each partition's `Nodes` (partition name, list, file, line).
    partition_nodes: Vec<(String, String, String, usize)>,
    /// `ClusterName`, lower case.
    cluster_name: Option<String>,
    /// The site's `DefMemPerCPU`, MiB: the default of every partition that gives none.
    default_memory_per_cpu: Option<u32>,
    /// How many `Include`s deep the file being collected is.
    depth: usize,
}

fn read_line(
    imported: &mut Imported,
    reading: &mut Reading,
    origin: &str,
    place: &str,
    line: usize,
    text: &str,
) -> Result<()> {
    let Some((key, value)) = text.split_once('=') else {
        return Err(invalid!("{origin}, line {line}: `{text}` is not KEY=VALUE"));
    };
    let key = key.trim();
    let value = value.trim();
    let bad =
        |expected: &str| invalid!("{origin}, line {line}, {key}: `{value}` is not {expected}");
    let section = &mut imported.section;
    let whole = |v: &str| v.parse::<u32>().map_err(|_| bad("a whole number"));
    match key.to_ascii_lowercase().as_str() {
        "priorityweightage" => section.weight_age = Some(whole(value)?),
        "priorityweightfairshare" => section.weight_fairshare = Some(whole(value)?),
        "priorityweightjobsize" => section.weight_job_size = Some(whole(value)?),
        "priorityweightpartition" => section.weight_partition = Some(whole(value)?),
        "priorityweightqos" => section.weight_qos = Some(whole(value)?),
        "priorityweightassoc" => section.weight_assoc = Some(whole(value)?),
        "defmempercpu" => {
            reading.default_memory_per_cpu = Some(
                value
                    .parse()
                    .map_err(|_| bad("a whole number of megabytes"))?,
            )
        }
        "priorityweighttres" | "tresbillingweights" => {
            slurm_model::TresWeights::parse(value)
                .map_err(|e| bad(&format!("a TRES weight list ({e})")))?;
            if key.eq_ignore_ascii_case("PriorityWeightTRES") {
                section.priority_weight_tres = Some(value.to_string());
            } else {
                section.tres_billing_weights = Some(value.to_string());
            }
        }
        "prioritydecayhalflife" => {
            section.decay_half_life = Some(minutes(value).ok_or_else(|| bad(TIME))? * 60)
        }
        "prioritycalcperiod" => {
            section.calc_period = Some(minutes(value).ok_or_else(|| bad(TIME))? * 60)
        }
        "prioritymaxage" => section.max_age = Some(minutes(value).ok_or_else(|| bad(TIME))? * 60),
        "priorityfavorsmall" => {
            section.favor_small = Some(match value.to_ascii_uppercase().as_str() {
                "YES" => true,
                "NO" => false,
                _ => return Err(bad("YES or NO")),
            })
        }
        "fairsharedampeningfactor" => {
            section.dampening = Some(
                value
                    .parse()
                    .map_err(|_| bad("a whole number from 1 to 65535"))?,
            )
        }
        "overtimelimit" => {
            if value.eq_ignore_ascii_case("UNLIMITED") {
                imported.ignored.push(format!(
                    "{place}: OverTimeLimit=UNLIMITED (jobs never killed) is not modelled; 0 kept"
                ));
            } else {
                section.over_time_limit = Some(i64::from(whole(value)?) * 60);
            }
        }
        "priorityflags" => {
            for flag in value.split(',').map(str::trim).filter(|f| !f.is_empty()) {
                match flag.to_ascii_uppercase().as_str() {
                    "SMALL_RELATIVE_TO_TIME" => section.small_relative_to_time = Some(true),
                    "MAX_TRES" => {
                        if section.billing.as_deref() != Some("max_tres_gres") {
                            section.billing = Some("max_tres".to_string());
                        }
                    }
                    "MAX_TRES_GRES" => section.billing = Some("max_tres_gres".to_string()),
                    "NO_FAIR_TREE" => section.fairshare = Some("classic".to_string()),
                    "DEPTH_OBLIVIOUS" => section.fairshare = Some("depth_oblivious".to_string()),
                    "FAIR_TREE" => section.fairshare = Some("fair_tree".to_string()),
                    other => imported
                        .ignored
                        .push(format!("{place}: PriorityFlags {other} is not modelled")),
                }
            }
        }
        "schedulerparameters" => {
            for parameter in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                let (name, number) = match parameter.split_once('=') {
                    Some((n, v)) => (n.trim().to_ascii_lowercase(), Some(v.trim())),
                    None => (parameter.to_ascii_lowercase(), None),
                };
                let number = |scale: i64| -> Result<i64> {
                    number
                        .and_then(|v| v.parse::<i64>().ok())
                        .map(|n| n * scale)
                        .ok_or_else(|| {
                            invalid!(
                                "{origin}, line {line}, SchedulerParameters: `{parameter}` needs a whole number"
                            )
                        })
                };
                let count = |n: i64| -> Result<u32> {
                    u32::try_from(n).map_err(|_| {
                        invalid!(
                            "{origin}, line {line}, SchedulerParameters: `{parameter}` is out of range"
                        )
                    })
                };
                match name.as_str() {
                    "bf_interval" => section.bf_interval = Some(number(1)?),
                    "bf_resolution" => section.bf_resolution = Some(number(1)?),
                    "bf_window" => section.bf_window = Some(number(60)?),
                    "bf_max_job_test" => section.bf_max_job_test = Some(count(number(1)?)?),
                    "bf_max_job_user" => section.bf_max_job_user = Some(count(number(1)?)?),
                    "bf_max_job_part" => section.bf_max_job_part = Some(count(number(1)?)?),
                    "bf_min_prio_reserve" => section.bf_min_prio_reserve = Some(count(number(1)?)?),
                    "default_queue_depth" => section.default_queue_depth = Some(count(number(1)?)?),
                    "sched_interval" => section.sched_interval = Some(number(1)?),
                    "batch_sched_delay" => section.batch_sched_delay = Some(number(1)?),
                    _ => imported.ignored.push(format!(
                        "{place}: SchedulerParameters {parameter} is not modelled"
                    )),
                }
            }
        }
        "nodename" => read_node(imported, reading, origin, place, line, text)?,
        "nodeset" => read_node_set(reading, origin, line, text)?,
        "accountingstorageenforce" => {
            let words: Vec<String> = value
                .split(',')
                .map(|w| w.trim().to_ascii_lowercase())
                .collect();
            section.enforce_limits = Some(words.iter().any(|w| w == "limits" || w == "safe"));
            for word in words
                .iter()
                .filter(|w| !["limits", "safe", ""].contains(&w.as_str()))
            {
                imported.ignored.push(format!(
                    "{place}: AccountingStorageEnforce {word} is not modelled"
                ));
            }
        }
        "prioritytype" => {
            if !value.eq_ignore_ascii_case("priority/multifactor") {
                imported.ignored.push(format!(
                    "{place}: PriorityType={value}: the model computes multifactor priorities (with all weights 0, the order of priority/basic)"
                ));
            }
        }
        "schedulertype" => {
            if !value.eq_ignore_ascii_case("sched/backfill") {
                imported.ignored.push(format!(
                    "{place}: SchedulerType={value}: the model always backfills (sched/backfill)"
                ));
            }
        }
        "partitionname" => read_partition(imported, reading, origin, place, line, text)?,
        "grestypes" => {
            reading.gres_types = value
                .split(',')
                .map(|g| g.trim().to_ascii_lowercase())
                .filter(|g| !g.is_empty())
                .collect();
        }
        "selecttype" => {
            let v = value.to_ascii_lowercase();
            reading.linear = v == "select/linear";
            if !["select/cons_tres", "select/cons_res", "select/linear"].contains(&v.as_str()) {
                imported.ignored.push(format!(
                    "{place}: SelectType={value}: the machine is scheduled as select/cons_tres"
                ));
            }
        }
        "selecttypeparameters" => {
            let v = value.to_ascii_lowercase();
            // cons_tres's default is CR_Core_Memory (slurm.conf(5), SelectTypeParameters).
            reading.memory_not_scheduled = !v.contains("memory");
            if v.contains("cr_cpu") || v.contains("cr_socket") || v.contains("cr_board") {
                imported.ignored.push(format!(
                    "{place}: SelectTypeParameters={value}: CPUs are allocated as cores (CR_Core)"
                ));
            }
        }
        _ => imported
            .ignored
            .push(format!("{place}: {key} is not used by the model")),
    }
    Ok(())
}

/// A `NodeName=` line: its nodes, each with its CPUs (`CPUs`, else `Sockets` (or `Boards` x
/// `SocketsPerBoard`, else `Boards`) x `CoresPerSocket` x `ThreadsPerCore`, each 1 unless
/// given, as `read_config.c:_parse_nodename` infers them; `NodeName=DEFAULT` gives the
/// defaults of the lines after it) and features, for the partitions' `Nodes` and node sets.
/// The first line's CPUs are the job-size factor's node size. A node defined twice is an
/// error, as in Slurm ("Duplicated NodeName").
fn read_node(
    imported: &mut Imported,
    reading: &mut Reading,
    origin: &str,
    place: &str,
    line: usize,
    text: &str,
) -> Result<()> {
    let mut words = text.split_whitespace();
    let names = words
        .next()
        .and_then(|w| w.split_once('='))
        .map(|(_, n)| n.to_string())
        .unwrap_or_default();
    let mut keys: BTreeMap<String, String> = BTreeMap::new();
    for word in words {
        if let Some((k, v)) = word.split_once('=') {
            keys.insert(k.to_ascii_lowercase(), v.to_string());
        }
    }
    if names.eq_ignore_ascii_case("DEFAULT") {
        reading.node_defaults.extend(keys);
        return Ok(());
    }
    let get = |k: &str| keys.get(k).or_else(|| reading.node_defaults.get(k));
    let number = |k: &str, name: &str| -> Result<Option<u32>> {
        match get(k) {
            None => Ok(None),
            Some(v) => v.parse::<u32>().ok().filter(|n| *n > 0).map(Some).ok_or_else(|| {
                invalid!(
                    "{origin}, line {line}, NodeName={names} {name}: `{v}` is not a whole number > 0"
                )
            }),
        }
    };
    let cpus = match number("cpus", "CPUs")?.or(number("procs", "Procs")?) {
        Some(cpus) => cpus,
        None => {
            let boards = number("boards", "Boards")?.unwrap_or(1);
            let sockets = match (
                number("sockets", "Sockets")?,
                number("socketsperboard", "SocketsPerBoard")?,
            ) {
                (_, Some(per_board)) => boards.saturating_mul(per_board),
                (Some(sockets), None) => sockets,
                (None, None) => boards,
            };
            let cores = number("corespersocket", "CoresPerSocket")?.unwrap_or(1);
            let threads = number("threadspercore", "ThreadsPerCore")?.unwrap_or(1);
            if sockets == 1 && cores == 1 && threads == 1 {
                imported.ignored.push(format!(
                    "{place}: NodeName={names} gives neither CPUs nor Sockets, CoresPerSocket or ThreadsPerCore: 1 CPU per node, as Slurm assumes"
                ));
            }
            sockets.saturating_mul(cores).saturating_mul(threads)
        }
    };
    let features: Vec<String> = get("feature")
        .or_else(|| get("features"))
        .map(|f| f.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    // RealMemory: MiB, 1 by default (slurm.conf(5)).
    let memory = number("realmemory", "RealMemory")?;
    reading.memory_given |= memory.is_some();
    let memory = memory.unwrap_or(1);
    let weight = match get("weight") {
        None => 1,
        Some(v) => v.parse::<u32>().map_err(|_| {
            invalid!("{origin}, line {line}, NodeName={names} Weight: `{v}` is not a whole number")
        })?,
    };
    let (gpus, gpu_type) = match get("gres") {
        None => (0, None),
        Some(gres) => node_gpus(gres, imported, place)
            .map_err(|e| invalid!("{origin}, line {line}, NodeName={names} Gres: `{gres}` {e}"))?,
    };
    if names.eq_ignore_ascii_case("ALL") {
        return Err(invalid!(
            "{origin}, line {line}, NodeName: `ALL` is a reserved word, not a node name"
        ));
    }
    let hosts = hostlist(&names).map_err(|e| {
        invalid!("{origin}, line {line}, NodeName: `{names}` is not a node list ({e})")
    })?;
    let type_index = reading.machine.types.len();
    reading.machine.types.push(crate::nodes::NodeTypeSpec {
        name: names.clone(),
        cpus,
        memory,
        gpus,
        gpu_type,
        features: features.clone(),
        weight,
    });
    reading.type_lines.push((origin.to_string(), line));
    for host in hosts {
        reading.machine.nodes.push((host.clone(), type_index));
        if reading.nodes.len() >= MAX_NODES {
            return Err(invalid!(
                "{origin}, line {line}, NodeName: more than {MAX_NODES} nodes"
            ));
        }
        if reading
            .nodes
            .insert(host.clone(), (cpus, features.clone()))
            .is_some()
        {
            return Err(invalid!(
                "{origin}, line {line}, NodeName: node {host} is defined twice (Slurm refuses: \"Duplicated NodeName\")"
            ));
        }
    }
    let section = &mut imported.section;
    match section.cpus_per_node {
        Some(first) if first != cpus => imported.ignored.push(format!(
            "{place}: nodes of {cpus} CPUs beside nodes of {first} CPUs: the job-size factor assumes one node size (the first); the partitions count each node's own"
        )),
        Some(_) => {}
        None => section.cpus_per_node = Some(cpus),
    }
    Ok(())
}

/// A `NodeSet=` line: a name for the nodes of a list (`Nodes=`) or of a feature (`Feature=`),
/// which a partition's `Nodes` may name.
fn read_node_set(reading: &mut Reading, origin: &str, line: usize, text: &str) -> Result<()> {
    let mut words = text.split_whitespace();
    let name = words
        .next()
        .and_then(|w| w.split_once('='))
        .map(|(_, n)| n.to_string())
        .unwrap_or_default();
    let mut set = None;
    for (key, value) in words.filter_map(|w| w.split_once('=')) {
        match key.to_ascii_lowercase().as_str() {
            "nodes" => set = Some(NodeSet::Nodes(value.to_string())),
            "feature" | "features" => set = Some(NodeSet::Feature(value.to_string())),
            _ => {}
        }
    }
    let set = set.ok_or_else(|| {
        invalid!("{origin}, line {line}, NodeSet={name}: needs Nodes= or Feature=")
    })?;
    reading.node_sets.insert(name, set);
    Ok(())
}

impl Reading {
    /// Gives each partition with a `Nodes` list the CPUs of its nodes, now that every node is
    /// defined. A name no `NodeName` line (or `NodeSet`) defines is an error, as slurmctld
    /// refuses such a partition (`slurmctld/read_config.c:_build_part_bitmaps`: "Invalid node
    /// names in partition").
    fn resolve_partitions(&mut self, imported: &mut Imported) -> Result<()> {
        let mut resolved: Vec<(String, Vec<usize>)> = Vec::new();
        for (partition, list, origin, line) in &self.partition_nodes {
            let at = |what: String| {
                invalid!("{origin}, line {line}, PartitionName={partition} Nodes: {what}")
            };
            let mut nodes = std::collections::BTreeSet::new();
            let names = hostlist(list).map_err(|e| at(format!("`{list}` ({e})")))?;
            for name in names {
                if self.nodes.contains_key(&name) {
                    nodes.insert(name);
                    continue;
                }
                match self.node_sets.get(&name) {
                    Some(NodeSet::Nodes(set)) => {
                        for host in
                            hostlist(set).map_err(|e| at(format!("node set {name} ({e})")))?
                        {
                            if !self.nodes.contains_key(&host) {
                                return Err(at(format!(
                                    "node {host} of node set {name} is defined by no NodeName line (slurmctld refuses the partition: \"Invalid node names in partition\")"
                                )));
                            }
                            nodes.insert(host);
                        }
                    }
                    Some(NodeSet::Feature(feature)) => {
                        nodes.extend(
                            (self.nodes.iter())
                                .filter(|(_, (_, f))| f.iter().any(|f| f == feature))
                                .map(|(n, _)| n.clone()),
                        );
                    }
                    None => {
                        return Err(at(format!(
                            "node {name} is defined by no NodeName line (slurmctld refuses the partition: \"Invalid node names in partition\")"
                        )));
                    }
                }
            }
            if nodes.is_empty() {
                return Err(at("no nodes: no job could ever run in it".to_string()));
            }
            if let Some((rules, _)) = self
                .partition_rules
                .iter()
                .find(|(p, _)| &p.name == partition)
            {
                let index: BTreeMap<&str, usize> = (self.machine.nodes.iter().enumerate())
                    .map(|(i, (n, _))| (n.as_str(), i))
                    .collect();
                let mut members: Vec<usize> = nodes
                    .iter()
                    .filter_map(|n| index.get(n.as_str()).copied())
                    .collect();
                members.sort_unstable();
                resolved.push((rules.name.clone(), members));
            }
            let cpus = nodes
                .iter()
                .filter_map(|n| self.nodes.get(n))
                .fold(0u32, |sum, (cpus, _)| sum.saturating_add(*cpus));
            let partitions = imported.section.partitions.get_or_insert_with(Vec::new);
            if let Some(p) = partitions.iter_mut().find(|p| &p.name == partition) {
                p.processors = Some(cpus);
            }
        }
        for (name, members) in resolved {
            if let Some((rules, _)) = self
                .partition_rules
                .iter_mut()
                .find(|(p, _)| p.name == name)
            {
                rules.nodes = members;
            }
        }
        Ok(())
    }

    /// The machine of node types the lines describe (`None` without a `NodeName` line): its
    /// types and nodes, its partitions (a partition with `Nodes=ALL` has every node; one
    /// without `Nodes` is left out, noted), memory scheduled unless `SelectTypeParameters`
    /// leaves it out or no line gives `RealMemory` (noted), whole nodes for every partition
    /// under `select/linear`. A node with GPUs where `GresTypes` lacks `gpu` is an error, as
    /// slurmctld refuses it.
    fn machine(&mut self, origin: &str) -> Result<Option<crate::nodes::NodeMachine>> {
        if self.machine.nodes.is_empty() {
            return Ok(None);
        }
        let mut machine = std::mem::take(&mut self.machine);
        for (t, (file, line)) in machine.types.iter().zip(&self.type_lines) {
            if t.gpus > 0 && !self.gres_types.iter().any(|g| g == "gpu") {
                return Err(invalid!(
                    "{file}, line {line}, NodeName={} Gres: GPUs, but GresTypes does not list gpu (slurmctld refuses a GRES that GresTypes lacks)",
                    t.name
                ));
            }
        }
        machine.memory_scheduled = !self.memory_not_scheduled && self.memory_given;
        if !self.memory_not_scheduled && !self.memory_given {
            self.notes.push(format!(
                "{origin}: no NodeName line gives RealMemory: memory is not scheduled"
            ));
        }
        for (mut rules, all) in std::mem::take(&mut self.partition_rules) {
            if all {
                rules.nodes = (0..machine.nodes.len()).collect();
            }
            if rules.nodes.is_empty() {
                self.notes.push(format!(
                    "{origin}: PartitionName={} has no Nodes: left out of the machine",
                    rules.name
                ));
                continue;
            }
            rules.exclusive |= self.linear;
            if rules.default_memory_per_cpu == 0 {
                rules.default_memory_per_cpu = self.default_memory_per_cpu.unwrap_or(0);
            }
            machine.partitions.push(rules);
        }
        machine.check(origin)?;
        Ok(Some(machine))
    }
}

/// A `PartitionName=` line: its name, `Nodes` (the CPUs of its nodes, summed once every
/// `NodeName` line is read: [`Reading::resolve_partitions`]), `MaxTime`,
/// `PriorityJobFactor` (or the older `Priority`), `PriorityTier` and `Default`; every other
/// key is listed as ignored. The partitions select no jobs: a job goes to the first that takes
/// it (the `Default=YES` partition first), as if submitted to all of them.
fn read_partition(
    imported: &mut Imported,
    reading: &mut Reading,
    origin: &str,
    place: &str,
    line: usize,
    text: &str,
) -> Result<()> {
    let mut words = text.split_whitespace();
    let name = words
        .next()
        .and_then(|w| w.split_once('='))
        .map(|(_, n)| n.to_string())
        .unwrap_or_default();
    if name.eq_ignore_ascii_case("DEFAULT") {
        imported.ignored.push(format!(
            "{place}: PartitionName=DEFAULT (defaults for later partitions) is not read"
        ));
        return Ok(());
    }
    let mut partition = PartitionSection {
        name: name.clone(),
        ..PartitionSection::default()
    };
    let mut default = false;
    let mut rules = crate::nodes::PartitionSpec {
        name: name.clone(),
        ..Default::default()
    };
    for word in words {
        let Some((key, value)) = word.split_once('=') else {
            imported.ignored.push(format!(
                "{place}: PartitionName={name}: `{word}` is not KEY=VALUE"
            ));
            continue;
        };
        let bad = |expected: &str| {
            invalid!(
                "{origin}, line {line}, PartitionName={name} {key}: `{value}` is not {expected}"
            )
        };
        match key.to_ascii_lowercase().as_str() {
            "nodes" => {
                if !value.eq_ignore_ascii_case("ALL") {
                    hostlist(value).map_err(|e| bad(&format!("a node list ({e})")))?;
                    reading.partition_nodes.push((
                        name.clone(),
                        value.to_string(),
                        origin.to_string(),
                        line,
                    ));
                }
            }
            "maxtime" => {
                if !value.eq_ignore_ascii_case("UNLIMITED")
                    && !value.eq_ignore_ascii_case("INFINITE")
                {
                    let m = minutes(value).ok_or_else(|| bad(&format!("{TIME} or UNLIMITED")))?;
                    partition.max_time = Some(m * 60);
                }
            }
            "priorityjobfactor" | "priority" => {
                partition.priority_job_factor = Some(
                    value
                        .parse()
                        .map_err(|_| bad("a whole number from 0 to 65535"))?,
                )
            }
            "prioritytier" => {
                partition.priority_tier = Some(
                    value
                        .parse()
                        .map_err(|_| bad("a whole number from 0 to 65535"))?,
                )
            }
            "default" => default = value.eq_ignore_ascii_case("YES"),
            "oversubscribe" | "shared" => {
                let v = value.to_ascii_uppercase();
                rules.exclusive = v == "EXCLUSIVE";
                if v != "EXCLUSIVE" && v != "NO" {
                    imported.ignored.push(format!(
                        "{place}: PartitionName={name} OverSubscribe={value}: jobs share cores only as Slurm's OverSubscribe=NO lets them (not modelled)"
                    ));
                }
            }
            "maxnodes" => {
                if !value.eq_ignore_ascii_case("UNLIMITED") {
                    rules.max_nodes = value
                        .parse()
                        .map_err(|_| bad("a whole number or UNLIMITED"))?;
                }
            }
            "tresbillingweights" => {
                slurm_model::TresWeights::parse(value)
                    .map_err(|e| bad(&format!("a TRES weight list ({e})")))?;
                partition.tres_billing_weights = Some(value.to_string());
            }
            "defmempercpu" => {
                rules.default_memory_per_cpu = value
                    .parse()
                    .map_err(|_| bad("a whole number of megabytes"))?;
            }
            "maxmempercpu" | "defcpupergpu" | "defmempernode" | "maxmempernode"
            | "defmempergpu" => {
                imported.ignored.push(format!(
                    "{place}: PartitionName={name} {key}={value}: every input gives each job's CPUs and memory, so this default or limit does not apply (not modelled)"
                ));
            }
            _ => imported.ignored.push(format!(
                "{place}: PartitionName={name} {key} is not modelled"
            )),
        }
    }
    rules.default = default;
    let all = text.split_whitespace().skip(1).any(|w| {
        w.split_once('=')
            .is_some_and(|(k, v)| k.eq_ignore_ascii_case("nodes") && v.eq_ignore_ascii_case("ALL"))
    });
    reading.partition_rules.retain(|(p, _)| p.name != name);
    reading.partition_rules.push((rules, all));
    let partitions = imported.section.partitions.get_or_insert_with(Vec::new);
    if default {
        partitions.insert(0, partition);
    } else {
        partitions.push(partition);
    }
    Ok(())
}

/// The GPUs of a node's `Gres=` (`gpu:a100:8`, `gpu:4`, `gpu:a100:4(S:0-1)`, with other GRES
/// beside them noted as not modelled): their count and type. GPUs of two types on one node
/// are refused (one type per node is modelled).
fn node_gpus(
    gres: &str,
    imported: &mut Imported,
    place: &str,
) -> std::result::Result<(u32, Option<String>), String> {
    let mut found: Option<(u32, Option<String>)> = None;
    for item in gres.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        // A socket or core binding in parentheses says where the devices are: not modelled.
        let item = item.split('(').next().unwrap_or(item);
        let parts: Vec<&str> = item.split(':').collect();
        if !parts[0].eq_ignore_ascii_case("gpu") {
            imported.ignored.push(format!(
                "{place}: Gres {item}: only GPUs are modelled among GRES"
            ));
            continue;
        }
        let (kind, count) = match parts.as_slice() {
            [_, count] => (None, *count),
            [_, kind, count] => (Some(kind.to_string()), *count),
            _ => return Err("is not gpu:COUNT or gpu:TYPE:COUNT".to_string()),
        };
        let count = count
            .parse::<u32>()
            .map_err(|_| format!("has `{count}` where a whole number of GPUs goes"))?;
        match &found {
            Some((_, other)) if *other != kind => {
                return Err(
                    "names GPUs of two types on one node: one type per node is modelled"
                        .to_string(),
                );
            }
            Some((n, _)) => found = Some((n.saturating_add(count), kind)),
            None => found = Some((count, kind)),
        }
    }
    Ok(found.unwrap_or((0, None)))
}

/// The host names of a Slurm host list (`node[01-10,12],login1`, `rack[1-2]n[1-4]`): each
/// bracket holds numbers and ranges, whose numbers keep the width of the range's first
/// (`hostlist.c`'s zero padding); an item of several brackets is every combination. An error
/// says what is malformed, or that the list names more than [`MAX_NODES`] hosts.
pub(crate) fn hostlist(list: &str) -> std::result::Result<Vec<String>, String> {
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut item = String::new();
    for c in list.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err("unbalanced brackets".to_string());
        }
        item.push(c);
    }
    if depth != 0 {
        return Err("unbalanced brackets".to_string());
    }
    items.push(item);
    let mut names = Vec::new();
    for item in items.iter().filter(|i| !i.is_empty()) {
        let mut partial = vec![String::new()];
        let mut rest = item.as_str();
        while let Some(open) = rest.find('[') {
            let close = rest
                .find(']')
                .filter(|&c| c > open)
                .ok_or("unbalanced brackets")?;
            let numbers = host_numbers(&rest[open + 1..close])?;
            let prefix = &rest[..open];
            if partial.len().saturating_mul(numbers.len()) > MAX_NODES {
                return Err(format!("more than {MAX_NODES} hosts"));
            }
            let longest = partial.iter().map(String::len).max().unwrap_or(0)
                + prefix.len()
                + numbers.iter().map(String::len).max().unwrap_or(0);
            if longest.saturating_mul(partial.len() * numbers.len()) > MAX_NODES * 64 {
                return Err("host names too long".to_string());
            }
            partial = partial
                .iter()
                .flat_map(|p| numbers.iter().map(move |n| format!("{p}{prefix}{n}")))
                .collect();
            rest = &rest[close + 1..];
        }
        if rest.contains(']') {
            return Err("unbalanced brackets".to_string());
        }
        names.extend(partial.into_iter().map(|p| p + rest));
        if names.len() > MAX_NODES {
            return Err(format!("more than {MAX_NODES} hosts"));
        }
    }
    Ok(names)
}

/// The numbers of a host list's bracket (`01-04,07`), as text of the first number's width.
fn host_numbers(inside: &str) -> std::result::Result<Vec<String>, String> {
    let mut numbers = Vec::new();
    for range in inside.split(',') {
        let (first, last) = range.split_once('-').unwrap_or((range, range));
        // at most 20 digits: a u64, with its zero padding
        let digits =
            |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(first) || !digits(last) {
            return Err(format!("`{range}` is not a number or a range of numbers"));
        }
        let (a, b) = match (first.parse::<u64>(), last.parse::<u64>()) {
            (Ok(a), Ok(b)) if a <= b => (a, b),
            _ => return Err(format!("`{range}` is not an ascending range")),
        };
        if b - a >= MAX_NODES as u64 || numbers.len() + (b - a) as usize >= MAX_NODES {
            return Err(format!("more than {MAX_NODES} hosts"));
        }
        let width = first.len();
        numbers.extend((a..=b).map(|n| format!("{n:0width$}")));
    }
    Ok(numbers)
}

/// What a slurm.conf time value must look like (the error's wording).
const TIME: &str = "a time (minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes or days-hours:minutes:seconds; hours 0-23 after days, minutes and seconds 0-59 after a larger unit)";

/// Slurm's time string (`time_str2mins`): `minutes`, `minutes:seconds`,
/// `hours:minutes:seconds`, `days-hours`, `days-hours:minutes`, `days-hours:minutes:seconds`,
/// in whole minutes (seconds rounded up). A field after a larger unit must be in its range
/// (hours 0-23 after days, minutes and seconds 0-59 after a larger unit): Slurm's own parser
/// (`parse_time.c:time_str2secs`) does not check them and reads `1-99:99:99` as 5 days 4:40:39,
/// which is a typo rather than a setting, so it is refused.
fn minutes(text: &str) -> Option<i64> {
    let (days, rest) = match text.split_once('-') {
        Some((d, rest)) => (d.trim().parse::<i64>().ok()?, Some(rest)),
        None => (0, None),
    };
    let number = |s: &str| s.trim().parse::<i64>().ok().filter(|n| *n >= 0);
    // a field after a larger unit, within its range
    let below = |s: &str, limit: i64| number(s).filter(|n| *n < limit);
    let (hours, mins, secs) = match rest {
        Some(rest) => {
            let parts: Vec<&str> = rest.split(':').collect();
            match parts.as_slice() {
                [h] => (below(h, 24)?, 0, 0),
                [h, m] => (below(h, 24)?, below(m, 60)?, 0),
                [h, m, s] => (below(h, 24)?, below(m, 60)?, below(s, 60)?),
                _ => return None,
            }
        }
        None => {
            let parts: Vec<&str> = text.split(':').collect();
            match parts.as_slice() {
                [m] => (0, number(m)?, 0),
                [m, s] => (0, number(m)?, below(s, 60)?),
                [h, m, s] => (number(h)?, below(m, 60)?, below(s, 60)?),
                _ => return None,
            }
        }
    };
    if days < 0 {
        return None;
    }
    Some(days * 1440 + hours * 60 + mins + (secs + 59) / 60)
}

impl Imported {
    /// The `[scheduler]` table of a population file that runs the imported configuration:
    /// scheduler `slurm` (whose defaults are Slurm's, as for every key slurm.conf leaves out)
    /// with the keys read, and the ignored lines as comments.
    pub fn scheduler_toml(&self, origin: &str) -> Result<String> {
        #[derive(Serialize)]
        struct Scheduler<'a> {
            policy: &'static str,
            slurm: &'a SlurmSection,
        }
        #[derive(Serialize)]
        struct File<'a> {
            scheduler: Scheduler<'a>,
        }
        let body = toml::to_string(&File {
            scheduler: Scheduler {
                policy: "slurm",
                slurm: &self.section,
            },
        })
        .map_err(|e| invalid!("cannot write the imported configuration: {e}"))?;
        let mut text = format!(
            "# The Slurm model configured from {origin} by `sitesim import-slurm-conf`.\n\
             # Times are seconds. Keys not given keep Slurm's defaults.\n"
        );
        if !self.ignored.is_empty() {
            text.push_str("# Not modelled, left out:\n");
            for line in &self.ignored {
                text.push_str(&format!("#   {line}\n"));
            }
        }
        text.push_str(&body);
        Ok(text)
    }
}

/// Reads a slurm.conf file with [`import_slurm_conf`], following its `Include` directives
/// (relative paths from the file's directory, as Slurm's are from slurm.conf's).
pub fn import_slurm_conf_file(path: &Path) -> Result<Imported> {
    let text = read_conf(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    import(&text, &path.display().to_string(), Some(dir))
}

/// A configuration file's text; an error names the file.
fn read_conf(path: &Path) -> Result<String> {
    use std::io::Read;
    /// A slurm.conf is a few kilobytes; anything this large is not one (`/dev/zero`).
    const LIMIT: u64 = 16 << 20;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(LIMIT + 1).read_to_string(&mut text))
        .map_err(|e| invalid!("{}: cannot read it: {e}", path.display()))?;
    if text.len() as u64 > LIMIT {
        return Err(invalid!(
            "{}: larger than {} MiB, not a slurm.conf",
            path.display(),
            LIMIT >> 20
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONF: &str = "\
# a site
ClusterName=site
PriorityType=priority/multifactor
PriorityDecayHalfLife=14-0
PriorityCalcPeriod=5
PriorityMaxAge=7-0
PriorityWeightAge=1000
PriorityWeightFairshare=10000 # fair-share counts most
priorityweightjobsize=1000
PriorityFlags=SMALL_RELATIVE_TO_TIME,ACCRUE_ALWAYS
SchedulerParameters=bf_interval=60,bf_window=2880,bf_max_job_test=100,\\
  bf_continue,default_queue_depth=50
NodeName=n[001-100] CPUs=48 RealMemory=190000
PartitionName=batch Nodes=ALL Default=YES MaxTime=2-0
AccountingStorageEnforce=associations,limits
PartitionName=debug Nodes=n[001-004],n010 MaxTime=30 PriorityTier=2 PriorityJobFactor=10 OverSubscribe=NO
";

    #[test]
    fn gpu_nodes_memory_features_and_partitions_make_the_machine() {
        let conf = "\
GresTypes=gpu
SelectTypeParameters=CR_Core_Memory
NodeName=DEFAULT RealMemory=64000
NodeName=c[01-02] CPUs=8 Features=cpu,ib
NodeName=g[01-04] Sockets=2 CoresPerSocket=8 RealMemory=256000 Gres=gpu:a100:4(S:0-1) Weight=10
PartitionName=cpu Nodes=c[01-02] Default=YES DefMemPerCPU=2000
PartitionName=gpu Nodes=g[01-04] OverSubscribe=EXCLUSIVE MaxNodes=2
PartitionName=empty
";
        let imported = import_slurm_conf(conf, "slurm.conf").unwrap();
        let machine = imported.machine.unwrap();
        assert_eq!(machine.nodes.len(), 6);
        let g = &machine.types[1];
        assert_eq!((g.cpus, g.memory, g.gpus), (16, 256000, 4));
        assert_eq!((g.gpu_type.as_deref(), g.weight), (Some("a100"), 10));
        assert_eq!(machine.types[0].memory, 64000); // NodeName=DEFAULT
        assert_eq!(machine.features(), ["cpu", "ib"]);
        assert_eq!(machine.gpu_types(), ["a100"]);
        let cpu = &machine.partitions[0];
        assert_eq!(
            (cpu.nodes.as_slice(), cpu.default_memory_per_cpu),
            (&[0, 1][..], 2000)
        );
        let gpu = &machine.partitions[1];
        assert!(gpu.exclusive && gpu.max_nodes == 2 && gpu.nodes == [2, 3, 4, 5]);
        assert_eq!(machine.partitions.len(), 2); // `empty` has no nodes: left out, noted
        assert!(
            imported
                .ignored
                .iter()
                .any(|l| l.contains("PartitionName=empty has no Nodes"))
        );
        let kinds = machine.resources().unwrap();
        assert_eq!(
            kinds,
            [("mem".to_string(), 1_152_000), ("gres/gpu".to_string(), 16)]
        );

        // What slurmctld refuses, or the model cannot take, names the line.
        for (text, expected) in [
            (
                "NodeName=g1 CPUs=4 Gres=gpu:2\n",
                "line 1, NodeName=g1 Gres: GPUs, but GresTypes does not list gpu",
            ),
            (
                "GresTypes=gpu\nNodeName=g1 CPUs=4 Gres=gpu:a100:2,gpu:v100:2\n",
                "line 2, NodeName=g1 Gres: `gpu:a100:2,gpu:v100:2` names GPUs of two types",
            ),
            (
                "GresTypes=gpu\nNodeName=g1 CPUs=4 Gres=gpu:a100:x\n",
                "line 2, NodeName=g1 Gres: `gpu:a100:x` has `x` where a whole number of GPUs goes",
            ),
            (
                "NodeName=g[01-x] CPUs=4\n",
                "line 1, NodeName: `g[01-x]` is not a node list",
            ),
            (
                "NodeName=g1 CPUs=4\nPartitionName=p Nodes=g2\n",
                "line 2, PartitionName=p Nodes: node g2 is defined by no NodeName line",
            ),
        ] {
            let error = import_slurm_conf(text, "slurm.conf")
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{error}\n  expected: {expected}");
        }
    }

    #[test]
    fn a_slurm_conf_reads_into_the_model_and_says_what_it_left_out() {
        let imported = import_slurm_conf(CONF, "slurm.conf").unwrap();
        let s = &imported.section;
        assert_eq!(s.decay_half_life, Some(14 * 86400));
        assert_eq!(s.calc_period, Some(300));
        assert_eq!(s.max_age, Some(7 * 86400));
        assert_eq!(
            (s.weight_age, s.weight_fairshare, s.weight_job_size),
            (Some(1000), Some(10000), Some(1000))
        );
        assert_eq!(s.small_relative_to_time, Some(true));
        assert_eq!(s.bf_interval, Some(60));
        assert_eq!(s.bf_window, Some(2880 * 60));
        assert_eq!(s.bf_max_job_test, Some(100));
        assert_eq!(s.default_queue_depth, Some(50));
        assert_eq!(s.cpus_per_node, Some(48));
        assert_eq!(s.enforce_limits, Some(true));
        let ignored = imported.ignored.join("\n");
        for expected in [
            "line 2: ClusterName",
            "ACCRUE_ALWAYS",
            "bf_continue",
            "line 15: AccountingStorageEnforce associations",
        ] {
            assert!(ignored.contains(expected), "{expected} not in {ignored}");
        }
        // The machine of node types: 100 nodes of 48 CPUs and 190000 MiB (memory scheduled:
        // cons_tres's default CR_Core_Memory), batch over all of them (the default), debug
        // over five.
        let machine = imported.machine.as_ref().unwrap();
        assert_eq!(machine.nodes.len(), 100);
        assert_eq!(
            (machine.types[0].cpus, machine.types[0].memory),
            (48, 190000)
        );
        assert!(machine.memory_scheduled);
        let partitions: Vec<(&str, usize, bool)> = (machine.partitions.iter())
            .map(|p| (p.name.as_str(), p.nodes.len(), p.default))
            .collect();
        assert_eq!(partitions, [("batch", 100, true), ("debug", 5, false)]);
        assert_eq!(machine.partitions[1].nodes, [0, 1, 2, 3, 9]);
        let config = s.apply(SlurmConfig::default()).unwrap();
        assert_eq!(config.weights.fairshare, 10000);
        // the partitions, the default one first: debug has 5 nodes of 48 CPUs
        let names: Vec<&str> = config.partitions.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["batch", "debug"]);
        let (batch, debug) = (&config.partitions[0], &config.partitions[1]);
        assert_eq!((batch.processors, batch.max_time), (None, Some(2 * 86400)));
        assert_eq!(
            (debug.processors, debug.max_time),
            (Some(5 * 48), Some(1800))
        );
        assert_eq!((debug.priority_job_factor, debug.priority_tier), (10, 2));
        // the TOML it writes reads back as the same section
        let text = imported.scheduler_toml("slurm.conf").unwrap();
        let back: toml::Table = toml::from_str(&text).unwrap();
        let section: crate::site::SchedulerSection = back["scheduler"].clone().try_into().unwrap();
        assert_eq!(section.slurm.as_ref(), Some(s));
        assert_eq!(section.policy, "slurm");
        assert!(
            text.contains("#   line 2: ClusterName is not used by the model"),
            "{text}"
        );
    }

    #[test]
    fn host_lists_are_expanded() {
        for (list, hosts) in [
            ("n1", Some(1)),
            ("n[1-10]", Some(10)),
            ("n[01-04,07],login", Some(6)),
            ("a[1-2],b[5-6,9]", Some(5)),
            ("r[1-2]n[1-3]", Some(6)),
            ("n[4-1]", None),
            ("n[1-x]", None),
            ("n]1[", None),
            ("n[1-2", None),
            ("n[[1-2]]", None),
            ("n[1-99999999999]", None),
            ("n[000000000000000000001-2]", None),
        ] {
            assert_eq!(hostlist(list).ok().map(|h| h.len()), hosts, "{list}");
        }
        assert_eq!(
            hostlist("n[008-010],m[1-2]x").unwrap(),
            ["n008", "n009", "n010", "m1x", "m2x"]
        );
        assert_eq!(
            hostlist("r[1-2]n[01-02]").unwrap(),
            ["r1n01", "r1n02", "r2n01", "r2n02"]
        );
        // a million hosts of long names would be gigabytes: refused before they are made
        let long = format!("{}[1-1000000]", "x".repeat(1000));
        assert_eq!(hostlist(&long), Err("host names too long".to_string()));
    }

    #[test]
    fn bad_values_name_file_line_and_key() {
        for (text, expected) in [
            (
                "PriorityWeightAge=lots",
                "slurm.conf, line 1, PriorityWeightAge: `lots`",
            ),
            ("PriorityDecayHalfLife=x-1", "line 1, PriorityDecayHalfLife"),
            ("PriorityFavorSmall=maybe", "YES or NO"),
            (
                "SchedulerParameters=bf_interval=soon",
                "`bf_interval=soon` needs a whole number",
            ),
            (
                "\n\nnot a setting",
                "line 3: `not a setting` is not KEY=VALUE",
            ),
            (
                "SchedulerParameters=bf_interval=0",
                "scheduler.slurm.bf_interval = 0",
            ),
            ("PriorityCalcPeriod=0", "calc_period = 0"),
            (
                "NodeName=n[1-4] CPUs=8\nPartitionName=p Nodes=n[4-1]",
                "line 2, PartitionName=p Nodes: `n[4-1]` is not a node list",
            ),
            (
                "PartitionName=p MaxTime=forever",
                "PartitionName=p MaxTime: `forever` is not a time (minutes",
            ),
            (
                "PartitionName=p PriorityTier=high",
                "PartitionName=p PriorityTier: `high`",
            ),
            (
                "PartitionName=p\nPartitionName=p",
                "scheduler.slurm.partitions[1].name = \"p\": a partition needs a name of its own",
            ),
        ] {
            let error = import_slurm_conf(text, "slurm.conf")
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn a_byte_order_mark_does_not_hide_the_first_key() {
        let imported = import_slurm_conf("\u{feff}PriorityWeightAge=1000\n", "bom.conf").unwrap();
        assert_eq!(imported.section.weight_age, Some(1000));
        assert!(imported.ignored.is_empty(), "{:?}", imported.ignored);
    }

    #[test]
    fn partitions_count_the_cpus_of_the_nodes_their_lines_define() {
        // nodes of two sizes, a NodeName=DEFAULT, CPUs from sockets x cores x threads, a node
        // set, and a partition given before the nodes it names (slurmctld reads them all first)
        let conf = "\
PartitionName=early Nodes=b[1-2]
NodeName=b[1-2] Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 Feature=gpu
NodeName=DEFAULT CPUs=16
NodeName=a[01-04]
NodeName=c1 CPUs=4 Feature=gpu
NodeSet=gpus Feature=gpu
PartitionName=mixed Nodes=a[03-04],b1
PartitionName=gpu Nodes=gpus
PartitionName=all Nodes=ALL Default=YES
";
        let config = import_slurm_conf(conf, "slurm.conf")
            .unwrap()
            .section
            .apply(SlurmConfig::default())
            .unwrap();
        let cpus: Vec<(&str, Option<u32>)> = (config.partitions.iter())
            .map(|p| (p.name.as_str(), p.processors))
            .collect();
        assert_eq!(
            cpus,
            [
                ("all", None),
                ("early", Some(64)),
                ("mixed", Some(16 + 16 + 32)),
                ("gpu", Some(32 + 32 + 4))
            ]
        );
        // the first node line's CPUs are the job-size factor's node size
        assert_eq!(config.cpus_per_node, Some(32));
    }

    #[test]
    fn nodes_no_node_line_defines_are_refused() {
        for (conf, expected) in [
            (
                "NodeName=n[1-4] CPUs=32\nPartitionName=p Nodes=n[1-8]",
                "slurm.conf, line 2, PartitionName=p Nodes: node n5 is defined by no NodeName line",
            ),
            (
                "PartitionName=p Nodes=n1",
                "line 1, PartitionName=p Nodes: node n1 is defined by no NodeName line",
            ),
            (
                "NodeName=n[1-2] CPUs=4\nNodeName=n2 CPUs=8",
                "line 2, NodeName: node n2 is defined twice",
            ),
            (
                "NodeName=n[1-2] CPUs=4\nNodeSet=s Nodes=n[2-3]\nPartitionName=p Nodes=s",
                "node n3 of node set s is defined by no NodeName line",
            ),
            (
                "NodeName=n[1-2] CPUs=lots",
                "line 1, NodeName=n[1-2] CPUs: `lots` is not a whole number > 0",
            ),
            (
                "NodeName=n[1-99999999999] CPUs=1",
                "more than 1048576 hosts",
            ),
        ] {
            let error = import_slurm_conf(conf, "slurm.conf")
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{conf}: {error}");
        }
    }

    #[test]
    fn a_key_given_twice_is_noted_and_its_last_value_used() {
        let conf = "\
PriorityWeightAge=10
SchedulerParameters=bf_interval=60,bf_max_job_test=100
PriorityWeightAge=20
schedulerparameters=bf_window=120
";
        let imported = import_slurm_conf(conf, "slurm.conf").unwrap();
        let s = &imported.section;
        assert_eq!(s.weight_age, Some(20));
        // the later SchedulerParameters replaces the whole earlier one, as in Slurm
        assert_eq!((s.bf_interval, s.bf_window), (None, Some(7200)));
        assert_eq!(s.bf_max_job_test, None);
        let notes = imported.ignored.join("\n");
        for expected in [
            "line 1: PriorityWeightAge is given again at line 3; the later value is used",
            "line 2: SchedulerParameters is given again at line 4",
        ] {
            assert!(notes.contains(expected), "{expected} not in {notes}");
        }
    }

    #[test]
    fn include_needs_a_file_and_is_not_a_bad_line() {
        let error = import_slurm_conf("PriorityWeightAge=1\nInclude nodes.conf\n", "x.conf")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("x.conf, line 2, Include nodes.conf: an included file can only be read"),
            "{error}"
        );
    }

    use proptest::strategy::Strategy;

    proptest::proptest! {
        /// Whatever the text, the importer answers with a configuration or an error, never a
        /// panic (lines built from slurm.conf's own words, brackets and separators).
        #[test]
        fn any_text_imports_or_is_refused(
            words in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::string::string_regex("[a-zA-Z0-9\\[\\],=:#%* \\-]{0,12}").unwrap(),
                    proptest::sample::select(vec![
                        "NodeName=", "PartitionName=", "NodeSet=", "Nodes=", "CPUs=",
                        "MaxTime=", "Include ", "\u{feff}", "\n", "\\\n", "n[1-3]",
                        "Feature=", "Default=YES", "PriorityWeightAge=", "ClusterName=",
                        "SchedulerParameters=", "Sockets=", "1-99:99:99", "ALL", "DEFAULT",
                    ]).prop_map(str::to_string),
                ],
                0..40,
            )
        ) {
            let text: String = words.concat();
            let _ = import_slurm_conf(&text, "fuzz.conf");
        }
    }

    #[test]
    fn slurm_time_strings() {
        assert_eq!(minutes("5"), Some(5));
        assert_eq!(minutes("14-0"), Some(14 * 1440));
        assert_eq!(minutes("1-2:30"), Some(1440 + 150));
        assert_eq!(minutes("0:30"), Some(1));
        assert_eq!(minutes("1:00:00"), Some(60));
        assert_eq!(minutes("x"), None);
        // a leading field may be large; one after a larger unit must be within its range
        assert_eq!(minutes("48:00:00"), Some(48 * 60));
        assert_eq!(minutes("90:30"), Some(91));
        assert_eq!(minutes("1-23:59:59"), Some(1440 + 23 * 60 + 60));
        for typo in ["1-99:99:99", "1-24", "1-0:60", "0:61", "1:60:00", "1:00:60"] {
            assert_eq!(minutes(typo), None, "{typo}");
        }
        let error = import_slurm_conf("PriorityMaxAge=1-99:99:99", "slurm.conf")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("slurm.conf, line 1, PriorityMaxAge: `1-99:99:99` is not a time"),
            "{error}"
        );
    }

    #[test]
    fn a_section_names_its_bad_key() {
        for (section, expected) in [
            (
                SlurmSection {
                    fairshare: Some("fairest".to_string()),
                    ..SlurmSection::default()
                },
                "scheduler.slurm.fairshare = \"fairest\"",
            ),
            (
                SlurmSection {
                    bf_resolution: Some(0),
                    ..SlurmSection::default()
                },
                "scheduler.slurm.bf_resolution = 0",
            ),
        ] {
            let error = section
                .apply(SlurmConfig::default())
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{error}");
        }
    }

    #[test]
    fn billing_weights_tres_weights_max_tres_and_the_site_default_memory_are_read() {
        let conf = "\
TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=2.0
PriorityWeightTRES=CPU=1000,GRES/gpu=3000
PriorityFlags=MAX_TRES
DefMemPerCPU=2000
GresTypes=gpu
SelectTypeParameters=CR_Core_Memory
NodeName=g1 CPUs=16 RealMemory=64000 Gres=gpu:4
PartitionName=cpu Nodes=g1 Default=YES
PartitionName=gpu Nodes=g1 DefMemPerCPU=4000 TRESBillingWeights=CPU=2.0
";
        let imported = import_slurm_conf(conf, "slurm.conf").unwrap();
        let config = imported.section.apply(SlurmConfig::default()).unwrap();
        assert_eq!(
            config.billing_weights,
            slurm_model::BillingWeights::parse("CPU=1.0,Mem=0.25G,GRES/gpu=2.0").unwrap()
        );
        assert_eq!(
            config.weight_tres,
            slurm_model::PriorityWeightsTres::parse("CPU=1000,GRES/gpu=3000").unwrap()
        );
        assert_eq!(config.billing_mode, slurm_model::BillingMode::MaxTres);
        let gpu = config.partitions.iter().find(|p| p.name == "gpu").unwrap();
        assert_eq!(
            gpu.billing_weights,
            Some(slurm_model::BillingWeights::parse("CPU=2.0").unwrap())
        );
        let machine = imported.machine.unwrap();
        let memory: Vec<(&str, u32)> = (machine.partitions.iter())
            .map(|p| (p.name.as_str(), p.default_memory_per_cpu))
            .collect();
        assert_eq!(memory, [("cpu", 2000), ("gpu", 4000)]);
        let error = import_slurm_conf("TRESBillingWeights=CPU=x\n", "slurm.conf")
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("slurm.conf, line 1, TRESBillingWeights"),
            "{error}"
        );
    }
}
