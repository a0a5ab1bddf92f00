//! A site file's outages (`[[outages]]`): maintenance windows, drains and down periods, one-off
//! or periodic ("every 4th Tuesday 08:00-16:00"), on all the machine's nodes, a number or share
//! of them, or named nodes; expanded into periods of simulated seconds against the site's
//! calendar (`[site] start`), and checked: a reversed or overlapping period, an unknown node, a
//! one-off period past the run's end are named by their key.
//!
//! ```toml
//! [[outages]]
//! name = "maintenance"
//! kind = "maintenance"     # maintenance (default): no job runs on its nodes, known ahead;
//!                          # drain: no job starts on them; down (refused: not modelled yet)
//! every = "4th tuesday"    # day, week, a weekday, "Nth weekday" or "last weekday" of the month;
//!                          # left out: once, from and to being date-times
//! from = "08:00"           # time of day (date-time when once)
//! to = "16:00"             # at or before `from`: the next day
//! nodes = "all"            # all (default), a count (16), a share ("25%"), or names ("node[01-04]")
//! ```

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, Weekday};
use serde::{Deserialize, Serialize};

use crate::error::{Result, invalid};

/// What an outage does to its nodes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum OutageKind {
    /// A maintenance reservation (Slurm's `MAINT`): known from the run's start, no job runs on
    /// its nodes during it, so no job whose estimate reaches into it starts there.
    #[default]
    Maintenance,
    /// A drain: no job starts on its nodes; those running finish. Not foreseen.
    Drain,
    /// Down: the jobs running on its nodes are killed. Not foreseen. Not modelled yet (a
    /// machine of counted processors does not place jobs on nodes): refused.
    Down,
    /// A reservation for users (Slurm's reservation without `MAINT`): known from the run's
    /// start; while it lasts its nodes run only its members' jobs (`groups`: the jobs its
    /// groups submit while it lasts that fit in it), and no other job runs there, so no other job whose
    /// estimate reaches into it starts there. Its members are killed at its end.
    Reservation,
}

/// Which nodes an outage takes.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum NodesChoice {
    /// A number of nodes.
    Count(u32),
    /// `all`, a share (`25%`), or node names as a host list (`node[01-04],gpu1`).
    Named(String),
}

/// One `[[outages]]` entry, as written: a maintenance window, a reservation for users or a drain
/// (docs/guide/outages.md).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutageSection {
    /// Its name, unique in the file (for messages and outputs).
    pub name: String,
    /// What it does (default `maintenance`).
    #[serde(default)]
    pub kind: OutageKind,
    /// How it repeats: `day`, `week` (from the run's start), a weekday (`tuesday`), or the Nth
    /// or last weekday of each month (`4th tuesday`, `last friday`). Left out: once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<String>,
    /// When it begins: a time of day (`08:00`) when it repeats, a date-time
    /// (`2024-03-05T08:00:00`, the site's clock) when once.
    pub from: String,
    /// When it ends, as `from`; a time of day at or before `from` is the next day's.
    pub to: String,
    /// Its nodes: `all` (default), a count, a share (`25%`), or names (`node[01-04]`). On a
    /// machine of counted processors a count is of processors, and names are refused; on a
    /// machine of node types (`[[nodes]]`, which takes maintenance windows and drains) they are its nodes,
    /// named or all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<NodesChoice>,
    /// For `kind = "reservation"` (and only then): its members, the groups whose jobs submitted
    /// while it lasts run in it. In a site file, the names of population groups (`[[groups]]`'s
    /// `name`); in a replay's outages file, the trace's group numbers (`"3"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
}

/// How an outage repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// Once.
    Once,
    /// Every day.
    Day,
    /// Every week, on the run's start's weekday.
    Week,
    /// Every given weekday.
    Weekday(Weekday),
    /// The Nth (1-5) given weekday of each month.
    NthOfMonth(u32, Weekday),
    /// The last given weekday of each month.
    LastOfMonth(Weekday),
}

/// The nodes of an outage, resolved against the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutageNodes {
    /// A number of nodes (all of them: the machine's count).
    Count(u32),
    /// Named nodes, by their index in the machine's node list.
    Indexes(Vec<u32>),
}

/// An outage expanded: its periods in simulated seconds, sorted, none overlapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outage {
    /// Its name.
    pub name: String,
    /// What it does.
    pub kind: OutageKind,
    /// Its nodes.
    pub nodes: OutageNodes,
    /// Its periods, `[from, to)` seconds of simulated time.
    pub periods: Vec<(i64, i64)>,
    /// A reservation's member groups, as the jobs carry them ([`crate::outages::expand`]'s
    /// `group_id`): its members are their jobs submitted while it lasts. Empty for other kinds,
    /// and for a Slurm reservation, whose members are the dump's jobs that name it.
    pub groups: Vec<i64>,
}

/// The machine outages are resolved against: its node count, and its node names when it has
/// named nodes (a slurm.conf's, `[[nodes]]`).
#[derive(Debug, Clone, Copy)]
pub struct OutageMachine<'a> {
    /// Its nodes.
    pub nodes: u32,
    /// Their names, in node order, when known.
    pub names: Option<&'a [String]>,
}

/// The key `outages[index].field` as a site file's messages name it.
fn key(index: usize, field: &str) -> String {
    format!("outages[{index}].{field}")
}

/// Parses `every`.
fn repeat_of(every: Option<&str>, at: &str) -> Result<Repeat> {
    let Some(text) = every else {
        return Ok(Repeat::Once);
    };
    let words: Vec<String> = text
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    let weekday = |w: &str| w.parse::<Weekday>().ok();
    let nth = |w: &str| match w {
        "1st" | "first" => Some(1),
        "2nd" | "second" => Some(2),
        "3rd" | "third" => Some(3),
        "4th" | "fourth" => Some(4),
        "5th" | "fifth" => Some(5),
        _ => None,
    };
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["day" | "daily"] => Ok(Repeat::Day),
        ["week" | "weekly"] => Ok(Repeat::Week),
        [w] if weekday(w).is_some() => Ok(Repeat::Weekday(weekday(w).unwrap_or(Weekday::Mon))),
        ["last", w] if weekday(w).is_some() => {
            Ok(Repeat::LastOfMonth(weekday(w).unwrap_or(Weekday::Mon)))
        }
        [n, w] if nth(n).is_some() && weekday(w).is_some() => Ok(Repeat::NthOfMonth(
            nth(n).unwrap_or(1),
            weekday(w).unwrap_or(Weekday::Mon),
        )),
        _ => Err(invalid!(
            "{at}: {text:?} is not a repetition: day, week, a weekday (tuesday), the Nth weekday of the month (4th tuesday) or the last (last friday)"
        )),
    }
}

/// A time of day, `HH:MM` or `HH:MM:SS`.
fn time_of_day(text: &str, at: &str) -> Result<NaiveTime> {
    NaiveTime::parse_from_str(text.trim(), "%H:%M:%S")
        .or_else(|_| NaiveTime::parse_from_str(text.trim(), "%H:%M"))
        .map_err(|_| invalid!("{at}: {text:?} is not a time of day (HH:MM)"))
}

/// A date-time, `YYYY-MM-DDTHH:MM[:SS]` (the site's clock).
fn date_time(text: &str, at: &str) -> Result<NaiveDateTime> {
    NaiveDateTime::parse_from_str(text.trim(), "%Y-%m-%dT%H:%M:%S")
        .or_else(|_| NaiveDateTime::parse_from_str(text.trim(), "%Y-%m-%dT%H:%M"))
        .map_err(|_| {
            invalid!("{at}: {text:?} is not a date-time (YYYY-MM-DDTHH:MM:SS, the site's clock)")
        })
}

/// The dates in `[first, last]` on which a repeating outage begins.
fn dates(repeat: Repeat, first: NaiveDate, last: NaiveDate) -> Vec<NaiveDate> {
    let mut out = Vec::new();
    let mut day = first;
    while day <= last {
        let on = match repeat {
            Repeat::Once => false,
            Repeat::Day => true,
            Repeat::Week => day.weekday() == first.weekday(),
            Repeat::Weekday(w) => day.weekday() == w,
            Repeat::NthOfMonth(n, w) => day.weekday() == w && (day.day() - 1) / 7 + 1 == n,
            Repeat::LastOfMonth(w) => {
                day.weekday() == w && (day + Duration::days(7)).month() != day.month()
            }
        };
        if on {
            out.push(day);
        }
        match day.succ_opt() {
            Some(next) => day = next,
            None => break,
        }
    }
    out
}

impl OutageSection {
    /// Its periods within a run that begins at `start` (the site's calendar) and lasts
    /// `horizon` seconds: `[from, to)` in simulated seconds, sorted. `index` names it.
    pub fn periods(
        &self,
        index: usize,
        start: NaiveDateTime,
        horizon: i64,
    ) -> Result<Vec<(i64, i64)>> {
        let repeat = repeat_of(self.every.as_deref(), &key(index, "every"))?;
        let seconds = |t: NaiveDateTime| (t - start).num_seconds();
        if repeat == Repeat::Once {
            let from = date_time(&self.from, &key(index, "from"))?;
            let to = date_time(&self.to, &key(index, "to"))?;
            if to <= from {
                return Err(invalid!(
                    "{}: {} is not after `from` ({}): a reversed period",
                    key(index, "to"),
                    self.to,
                    self.from
                ));
            }
            let (a, b) = (seconds(from), seconds(to));
            if a < 0 || b > horizon {
                return Err(invalid!(
                    "{}: the outage {:?} ({} to {}) does not lie within the run (its {} s from {})",
                    key(index, "from"),
                    self.name,
                    self.from,
                    self.to,
                    horizon,
                    start.format("%Y-%m-%dT%H:%M:%S")
                ));
            }
            return Ok(vec![(a, b)]);
        }
        let from = time_of_day(&self.from, &key(index, "from"))?;
        let to = time_of_day(&self.to, &key(index, "to"))?;
        let length = {
            let d = (to - from).num_seconds();
            if d <= 0 { d + 86_400 } else { d }
        };
        let end = start + Duration::seconds(horizon);
        // from the day before the start: an occurrence that began then may run into the run
        let mut periods: Vec<(i64, i64)> = Vec::new();
        for date in dates(
            repeat,
            start.date().pred_opt().unwrap_or(start.date()),
            end.date(),
        ) {
            let a = seconds(date.and_time(from));
            let b = a + length;
            if b <= 0 || a >= horizon {
                continue;
            }
            if let Some(&(_, last_end)) = periods.last() {
                if a < last_end {
                    return Err(invalid!(
                        "{}: the outage {:?} repeats every {} but lasts {} s: its periods overlap",
                        key(index, "to"),
                        self.name,
                        self.every.as_deref().unwrap_or_default(),
                        length
                    ));
                }
            }
            periods.push((a.max(0), b.min(horizon)));
        }
        Ok(periods)
    }

    /// Its nodes on `machine`. `index` names it.
    pub fn nodes_on(&self, index: usize, machine: OutageMachine<'_>) -> Result<OutageNodes> {
        let at = key(index, "nodes");
        match &self.nodes {
            None => Ok(OutageNodes::Count(machine.nodes)),
            Some(NodesChoice::Count(n)) => {
                if *n == 0 || *n > machine.nodes {
                    return Err(invalid!(
                        "{at}: {n} nodes, but the machine has {} (give 1 to {})",
                        machine.nodes,
                        machine.nodes
                    ));
                }
                Ok(OutageNodes::Count(*n))
            }
            Some(NodesChoice::Named(text)) => {
                let text = text.trim();
                if text.eq_ignore_ascii_case("all") {
                    return Ok(OutageNodes::Count(machine.nodes));
                }
                if let Some(percent) = text.strip_suffix('%') {
                    let share: f64 = percent.trim().parse().map_err(|_| {
                        invalid!("{at}: {text:?} is not a share of the nodes (25%)")
                    })?;
                    if !(share > 0.0 && share <= 100.0) {
                        return Err(invalid!("{at}: {text:?} is not a share from 0 to 100 %"));
                    }
                    let count = ((share / 100.0) * f64::from(machine.nodes))
                        .round()
                        .max(1.0);
                    return Ok(OutageNodes::Count(count as u32));
                }
                let Some(names) = machine.names else {
                    return Err(invalid!(
                        "{at}: {text:?} names nodes, but the machine's nodes have no names (a machine of processors): give a count or a share"
                    ));
                };
                let wanted =
                    crate::slurm::hostlist(text).map_err(|e| invalid!("{at}: {text:?}: {e}"))?;
                let mut indexes = Vec::with_capacity(wanted.len());
                for name in wanted {
                    let Some(i) = names.iter().position(|n| *n == name) else {
                        return Err(invalid!(
                            "{at}: the machine has no node {name:?} (its nodes: {})",
                            listed(names)
                        ));
                    };
                    indexes.push(i as u32);
                }
                indexes.sort_unstable();
                indexes.dedup();
                Ok(OutageNodes::Indexes(indexes))
            }
        }
    }
}

/// A replay's outages file (`sitesim replay --outages FILE`): the calendar time of the trace's
/// time 0 and the outages, as a site file writes them.
///
/// ```toml
/// start = "2024-01-01T00:00:00"   # the trace's time 0 (an SWF's UnixStartTime, as its clock)
///
/// [[outages]]
/// name = "weekly"
/// every = "tuesday"
/// from = "08:00"
/// to = "16:00"
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayOutages {
    /// The calendar time of the trace's time 0, `YYYY-MM-DDTHH:MM:SS`.
    pub start: String,
    /// The outages.
    #[serde(default)]
    pub outages: Vec<OutageSection>,
    /// Nodes that fail at random and are repaired, drawn from the replay's `--seed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures: Option<crate::failures::FailureSection>,
}

impl ReplayOutages {
    /// The file at `path`, read and parsed; errors name the file (and the line and key of a
    /// TOML error).
    pub fn load(path: &std::path::Path) -> Result<ReplayOutages> {
        let text = crate::files::read_text(path, crate::files::MAX_TEXT_BYTES, "outages file")?;
        toml::from_str(&text).map_err(|e| invalid!("{}: {e}", path.display()))
    }

    /// Its outages expanded on a machine of `processors` counted processors (an outage's
    /// `nodes` count processors) over a replay of `horizon` seconds from its start; errors name
    /// `origin` and the key. On a machine of node types, `node_names` are its nodes' names (in
    /// node order): an outage's `nodes` are its nodes, by name or all of them.
    pub fn expand(
        &self,
        origin: &str,
        processors: u32,
        node_names: Option<&[String]>,
        horizon: i64,
    ) -> Result<Vec<Outage>> {
        let start =
            NaiveDateTime::parse_from_str(&self.start, "%Y-%m-%dT%H:%M:%S").map_err(|_| {
                invalid!(
                    "{origin}: start = {:?}: expected a date and time like 2024-01-01T00:00:00",
                    self.start
                )
            })?;
        let machine = match node_names {
            Some(names) => OutageMachine {
                nodes: names.len() as u32,
                names: Some(names),
            },
            None => OutageMachine {
                nodes: processors,
                names: None,
            },
        };
        // a reservation's members are the trace's group numbers
        let group_id = |name: &str| {
            name.trim()
                .parse::<i64>()
                .map_err(|_| "not a group number of the trace (SWF field 13)".to_string())
        };
        expand(&self.outages, machine, start, horizon, &group_id)
            .map_err(|e| invalid!("{origin}: {e}"))
    }

    /// Its `[failures]` on a machine of `processors` counted processors, or of node types of
    /// `nodes` nodes; errors name `origin` and the key.
    pub fn failures(
        &self,
        origin: &str,
        processors: u32,
        nodes: Option<u32>,
    ) -> Result<Option<crate::failures::NodeFailures>> {
        self.failures
            .as_ref()
            .map(|f| match nodes {
                Some(nodes) => f.resolve_on_nodes(nodes),
                None => f.resolve(processors),
            })
            .transpose()
            .map_err(|e| invalid!("{origin}: {e}"))
    }
}

/// What Slurm recorded of a replay's outages, as outages on a machine of counted processors:
/// each node event (`sacct::NodeEvents`, merged) a drain of its node's CPUs (its `TRES`
/// column's `cpu=`), and each maintenance reservation (`MAINT`; `sacct::Reservations`) a window
/// of its CPUs. Times are placed on the replay's clock: `origin` is its time 0 (seconds since
/// the epoch); a period that began before it begins at 0, and an event still open when the
/// dump was made ends at `open_end` (seconds). Returns the outages and what was left out, in
/// words.
///
/// A node that went down is kept out of service like a drained one: in a replay the jobs its
/// failure killed end when the log says they did. A reservation that is not `MAINT` is one for
/// its users ([`OutageKind::Reservation`]): the dump's jobs that name it (sacct's
/// `Reservation`) run in it alone.
///
/// On a machine of node types (`node_names`: its nodes by index, as its slurm.conf or
/// `--nodes` names them) each keeps its nodes by name instead: an event its node (or host
/// list), a reservation its `Nodes=` host list (`ALL`, or a node count of the whole machine
/// without names, is every node).
///
/// Errors name the file and line: on a machine of counted processors a node or reservation
/// whose CPUs are not given; on a machine of node types a node the machine does not have, or
/// a reservation of fewer nodes than all that does not name them.
pub fn of_slurm(
    (events, events_file): (&[sacct::NodeEvent], &str),
    (reservations, reservations_file): (&[sacct::Reservation], &str),
    origin: i64,
    open_end: i64,
    node_names: Option<&[String]>,
) -> Result<(Vec<Outage>, Vec<String>)> {
    let mut outages = Vec::new();
    let mut left_out = Vec::new();
    let clip = |start: i64, end: Option<i64>| -> Option<(i64, i64)> {
        let from = (start - origin).max(0);
        let to = end.map_or(open_end, |e| e - origin);
        (to > from).then_some((from, to))
    };
    for event in events {
        let nodes = match (node_names, event.cpus) {
            (Some(names), _) => OutageNodes::Indexes(
                named_nodes(&event.node, names)
                    .map_err(|e| invalid!("{events_file}, line {}: {e}", event.line))?,
            ),
            (None, Some(cpus)) => OutageNodes::Count(cpus),
            (None, None) => {
                return Err(invalid!(
                    "{events_file}, line {}: node {}'s CPUs are not given: dump the events with their TRES (sacctmgr --parsable2 show events format=Cluster,NodeName,TimeStart,TimeEnd,State,Reason,User,TRES)",
                    event.line,
                    event.node
                ));
            }
        };
        if let Some(period) = clip(event.start, event.end) {
            outages.push(Outage {
                name: format!("node {} {} (line {})", event.node, event.state, event.line),
                kind: OutageKind::Drain,
                nodes,
                periods: vec![period],
                groups: Vec::new(),
            });
        }
    }
    for reservation in reservations {
        let kind = if reservation.is_maintenance() {
            OutageKind::Maintenance
        } else {
            OutageKind::Reservation
        };
        if kind == OutageKind::Reservation && reservation.flags.iter().any(|f| f == "FLEX") {
            left_out.push(format!(
                "reservation {} (line {}): FLEX (its jobs may run outside it and past its end) is kept as a reservation without FLEX: its jobs run in it alone",
                reservation.name, reservation.line
            ));
        }
        let at = |why: String| {
            invalid!(
                "{reservations_file}, line {}: reservation {}: {why}",
                reservation.line,
                reservation.name
            )
        };
        let nodes = match (node_names, reservation.cpus) {
            (Some(names), _) => match (reservation.nodes.as_deref(), reservation.node_count) {
                (Some(list), _) if list.eq_ignore_ascii_case("all") => {
                    OutageNodes::Count(names.len() as u32)
                }
                (Some(list), _) => OutageNodes::Indexes(named_nodes(list, names).map_err(at)?),
                (None, Some(count)) if count as usize >= names.len() => {
                    OutageNodes::Count(names.len() as u32)
                }
                (None, _) => {
                    return Err(at(
                        "its nodes are not named (Nodes=): a machine of node types keeps a reservation on named nodes".to_string(),
                    ));
                }
            },
            (None, Some(cpus)) => OutageNodes::Count(cpus),
            (None, None) => {
                return Err(invalid!(
                    "{reservations_file}, line {}: reservation {}'s CPUs are not given (its TRES=cpu=N or CoreCnt)",
                    reservation.line,
                    reservation.name
                ));
            }
        };
        if let Some(period) = clip(reservation.start, Some(reservation.end)) {
            outages.push(Outage {
                name: format!("reservation {}", reservation.name),
                kind,
                nodes,
                periods: vec![period],
                groups: Vec::new(),
            });
        }
    }
    Ok((outages, left_out))
}

/// The indexes in `names` (a machine's nodes) of the nodes of host list `list`, or why not.
fn named_nodes(list: &str, names: &[String]) -> std::result::Result<Vec<u32>, String> {
    let hosts = crate::slurm::hostlist(list).map_err(|e| format!("nodes {list:?}: {e}"))?;
    hosts
        .iter()
        .map(|host| {
            names
                .iter()
                .position(|n| n == host)
                .map(|i| i as u32)
                .ok_or_else(|| {
                    format!(
                        "node {host:?} is not one of the machine's (its slurm.conf NodeName lines or --nodes)"
                    )
                })
        })
        .collect()
}

/// Up to ten names, and how many more.
fn listed(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(10).map(String::as_str).collect();
    match names.len().saturating_sub(10) {
        0 => shown.join(", "),
        more => format!("{}, and {more} more", shown.join(", ")),
    }
}

/// Every outage of a site file expanded on `machine` over a run from `start` lasting `horizon`
/// seconds, a reservation's member groups given their ids by `group_id` (or the reason it has
/// none). Two outages that may take the same nodes (either takes all or a count, or their
/// names meet) must not overlap in time: an error names both.
pub fn expand(
    sections: &[OutageSection],
    machine: OutageMachine<'_>,
    start: NaiveDateTime,
    horizon: i64,
    group_id: &dyn Fn(&str) -> std::result::Result<i64, String>,
) -> Result<Vec<Outage>> {
    let mut out: Vec<Outage> = Vec::with_capacity(sections.len());
    for (index, section) in sections.iter().enumerate() {
        if let Some(other) = out.iter().position(|o| o.name == section.name) {
            return Err(invalid!(
                "{}: {:?} names outages[{other}] already",
                key(index, "name"),
                section.name
            ));
        }
        let groups = match (&section.groups, section.kind) {
            (Some(groups), OutageKind::Reservation) if !groups.is_empty() => groups
                .iter()
                .map(|name| {
                    group_id(name)
                        .map_err(|why| invalid!("{}: {name:?}: {why}", key(index, "groups")))
                })
                .collect::<Result<Vec<i64>>>()?,
            (_, OutageKind::Reservation) => {
                return Err(invalid!(
                    "{}: a reservation needs its members: the groups whose jobs run in it (groups = [\"course\"])",
                    key(index, "groups")
                ));
            }
            (Some(_), _) => {
                return Err(invalid!(
                    "{}: only a reservation (kind = \"reservation\") has member groups",
                    key(index, "groups")
                ));
            }
            (None, _) => Vec::new(),
        };
        let outage = Outage {
            name: section.name.clone(),
            kind: section.kind,
            nodes: section.nodes_on(index, machine)?,
            periods: section.periods(index, start, horizon)?,
            groups,
        };
        for (other_index, other) in out.iter().enumerate() {
            let share_nodes = match (&outage.nodes, &other.nodes) {
                (OutageNodes::Indexes(a), OutageNodes::Indexes(b)) => {
                    a.iter().any(|n| b.contains(n))
                }
                _ => true,
            };
            if !share_nodes {
                continue;
            }
            let overlap = outage.periods.iter().find_map(|&(a, b)| {
                other
                    .periods
                    .iter()
                    .find(|&&(c, d)| a < d && c < b)
                    .map(|&(c, _)| (a, c))
            });
            if let Some((mine, theirs)) = overlap {
                return Err(invalid!(
                    "{}: the outage {:?} (from {mine} s) overlaps outages[{other_index}] {:?} (from {theirs} s) on the same nodes: give them other times or other nodes",
                    key(index, "from"),
                    outage.name,
                    other.name
                ));
            }
        }
        out.push(outage);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurms_records_keep_their_named_nodes_on_a_machine_of_node_types() {
        let names: Vec<String> = ["cpu1", "cpu2", "gpu1", "gpu2"].map(String::from).to_vec();
        let event = sacct::NodeEvent {
            node: "gpu2".into(),
            start: 1_000,
            end: Some(2_000),
            kind: sacct::NodeEventKind::Drain,
            state: "DRAIN".into(),
            reason: "fan".into(),
            cpus: Some(64),
            line: 2,
        };
        let maint = sacct::Reservation {
            name: "firmware".into(),
            start: 1_500,
            end: 3_000,
            nodes: Some("gpu[1-2]".into()),
            cpus: Some(128),
            flags: vec!["MAINT".into()],
            line: 3,
            ..Default::default()
        };
        let events = [event.clone()];
        let reservations = [maint.clone()];
        let of = |names: Option<&[String]>| {
            of_slurm(
                (&events, "e.txt"),
                (&reservations, "r.txt"),
                1_000,
                9_000,
                names,
            )
        };
        let (on_nodes, _) = of(Some(&names)).unwrap();
        assert_eq!(on_nodes[0].nodes, OutageNodes::Indexes(vec![3]));
        assert_eq!(on_nodes[0].periods, vec![(0, 1_000)]);
        assert_eq!(on_nodes[1].nodes, OutageNodes::Indexes(vec![2, 3]));
        assert_eq!(on_nodes[1].kind, OutageKind::Maintenance);
        // on a machine of counted processors, their CPUs
        let (counted, _) = of(None).unwrap();
        assert_eq!(counted[0].nodes, OutageNodes::Count(64));
        assert_eq!(counted[1].nodes, OutageNodes::Count(128));
        // a node the machine does not have, a reservation of unnamed nodes short of all
        let unknown = [sacct::NodeEvent {
            node: "gpu9".into(),
            ..event
        }];
        let e = of_slurm((&unknown, "e.txt"), (&[], ""), 0, 9_000, Some(&names)).unwrap_err();
        assert!(
            e.to_string()
                .contains("e.txt, line 2: node \"gpu9\" is not one of the machine's"),
            "{e}"
        );
        let unnamed = [sacct::Reservation {
            nodes: None,
            node_count: Some(2),
            ..maint.clone()
        }];
        let e = of_slurm((&[], ""), (&unnamed, "r.txt"), 0, 9_000, Some(&names)).unwrap_err();
        assert!(
            e.to_string()
                .contains("r.txt, line 3: reservation firmware: its nodes are not named"),
            "{e}"
        );
        let whole = [sacct::Reservation {
            nodes: None,
            node_count: Some(4),
            ..maint
        }];
        let (all, _) = of_slurm((&[], ""), (&whole, "r.txt"), 0, 9_000, Some(&names)).unwrap();
        assert_eq!(all[0].nodes, OutageNodes::Count(4));
    }

    /// Monday 2024-01-01 00:00, the default site start.
    fn start() -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2024, 1, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .unwrap()
    }

    const DAY: i64 = 86_400;

    fn section(every: Option<&str>, from: &str, to: &str) -> OutageSection {
        OutageSection {
            name: "m".into(),
            kind: OutageKind::Maintenance,
            every: every.map(str::to_string),
            from: from.into(),
            to: to.into(),
            nodes: None,
            groups: None,
        }
    }

    #[test]
    fn weekly_and_monthly_repetitions_land_on_their_days() {
        // every Tuesday 08:00-16:00 over two weeks from Monday 1 January 2024
        let periods = section(Some("tuesday"), "08:00", "16:00")
            .periods(0, start(), 14 * DAY)
            .unwrap();
        assert_eq!(
            periods,
            vec![
                (DAY + 8 * 3600, DAY + 16 * 3600),
                (8 * DAY + 8 * 3600, 8 * DAY + 16 * 3600)
            ]
        );
        // the 4th Tuesday of January 2024 is the 23rd, of February the 27th
        let periods = section(Some("4th Tuesday"), "08:00", "16:00")
            .periods(0, start(), 60 * DAY)
            .unwrap();
        assert_eq!(
            periods,
            vec![
                (22 * DAY + 8 * 3600, 22 * DAY + 16 * 3600),
                (57 * DAY + 8 * 3600, 57 * DAY + 16 * 3600)
            ]
        );
        // the last Friday of January 2024 is the 26th
        let periods = section(Some("last friday"), "22:00", "02:00")
            .periods(0, start(), 31 * DAY)
            .unwrap();
        assert_eq!(periods, vec![(25 * DAY + 22 * 3600, 26 * DAY + 2 * 3600)]);
        // daily, over midnight, cut at the run's start and end
        let periods = section(Some("day"), "23:00", "01:00")
            .periods(0, start(), 2 * DAY)
            .unwrap();
        assert_eq!(
            periods,
            vec![
                (0, 3600),
                (23 * 3600, DAY + 3600),
                (DAY + 23 * 3600, 2 * DAY)
            ]
        );
    }

    #[test]
    fn a_one_off_outage_is_a_date_time_period_within_the_run() {
        let periods = section(None, "2024-01-03T08:00", "2024-01-03T12:30:00")
            .periods(0, start(), 7 * DAY)
            .unwrap();
        assert_eq!(
            periods,
            vec![(2 * DAY + 8 * 3600, 2 * DAY + 12 * 3600 + 1800)]
        );
    }

    #[test]
    fn bad_outages_are_named() {
        let message = |s: OutageSection, horizon: i64| {
            s.periods(3, start(), horizon).unwrap_err().to_string()
        };
        let m = message(
            section(None, "2024-01-03T08:00", "2024-01-03T07:00"),
            7 * DAY,
        );
        assert!(m.contains("outages[3].to") && m.contains("reversed"), "{m}");
        let m = message(
            section(None, "2024-01-03T08:00", "2024-02-03T07:00"),
            7 * DAY,
        );
        assert!(
            m.contains("outages[3].from") && m.contains("within the run"),
            "{m}"
        );
        let m = message(section(Some("fortnightly"), "08:00", "16:00"), 7 * DAY);
        assert!(
            m.contains("outages[3].every") && m.contains("fortnightly"),
            "{m}"
        );
        let m = message(section(Some("day"), "8 o'clock", "16:00"), 7 * DAY);
        assert!(m.contains("outages[3].from"), "{m}");
        let m = message(section(Some("tuesday"), "25:00", "16:00"), 7 * DAY);
        assert!(m.contains("outages[3].from"), "{m}");
    }

    #[test]
    fn nodes_resolve_to_counts_shares_and_names() {
        let names: Vec<String> = (1..=8).map(|i| format!("node{i:02}")).collect();
        let named = OutageMachine {
            nodes: 8,
            names: Some(&names),
        };
        let plain = OutageMachine {
            nodes: 8,
            names: None,
        };
        let with = |nodes: Option<NodesChoice>| OutageSection {
            nodes,
            ..section(Some("day"), "08:00", "09:00")
        };
        assert_eq!(
            with(None).nodes_on(0, plain).unwrap(),
            OutageNodes::Count(8)
        );
        assert_eq!(
            with(Some(NodesChoice::Count(3)))
                .nodes_on(0, plain)
                .unwrap(),
            OutageNodes::Count(3)
        );
        assert_eq!(
            with(Some(NodesChoice::Named("25%".into())))
                .nodes_on(0, plain)
                .unwrap(),
            OutageNodes::Count(2)
        );
        assert_eq!(
            with(Some(NodesChoice::Named("node[02-03],node08".into())))
                .nodes_on(0, named)
                .unwrap(),
            OutageNodes::Indexes(vec![1, 2, 7])
        );
        let m = with(Some(NodesChoice::Named("node09".into())))
            .nodes_on(2, named)
            .unwrap_err()
            .to_string();
        assert!(
            m.contains("outages[2].nodes") && m.contains("node09"),
            "{m}"
        );
        let m = with(Some(NodesChoice::Named("node01".into())))
            .nodes_on(2, plain)
            .unwrap_err()
            .to_string();
        assert!(m.contains("no names"), "{m}");
        let m = with(Some(NodesChoice::Count(9)))
            .nodes_on(2, plain)
            .unwrap_err()
            .to_string();
        assert!(m.contains("9 nodes"), "{m}");
    }

    /// A site without groups a reservation could name.
    fn no_groups(name: &str) -> std::result::Result<i64, String> {
        Err(format!("no group {name}"))
    }

    #[test]
    fn a_reservation_needs_member_groups_and_only_it_has_them() {
        let machine = OutageMachine {
            nodes: 64,
            names: None,
        };
        let group_id = |name: &str| match name {
            "course" => Ok(2),
            _ => Err("no group of this name".to_string()),
        };
        let reservation = OutageSection {
            kind: OutageKind::Reservation,
            groups: Some(vec!["course".into()]),
            nodes: Some(NodesChoice::Count(16)),
            ..section(Some("day"), "09:00", "17:00")
        };
        let expanded = expand(
            std::slice::from_ref(&reservation),
            machine,
            start(),
            2 * DAY,
            &group_id,
        )
        .unwrap();
        assert_eq!(expanded[0].groups, vec![2]);
        assert_eq!(expanded[0].periods.len(), 2);
        let cases = [
            (
                OutageSection {
                    groups: None,
                    ..reservation.clone()
                },
                "outages[0].groups: a reservation needs its members",
            ),
            (
                OutageSection {
                    groups: Some(Vec::new()),
                    ..reservation.clone()
                },
                "a reservation needs its members",
            ),
            (
                OutageSection {
                    groups: Some(vec!["x".into()]),
                    ..reservation.clone()
                },
                "outages[0].groups: \"x\": no group of this name",
            ),
            (
                OutageSection {
                    kind: OutageKind::Maintenance,
                    ..reservation.clone()
                },
                "only a reservation",
            ),
        ];
        for (section, expected) in cases {
            let m = expand(&[section], machine, start(), 2 * DAY, &group_id)
                .unwrap_err()
                .to_string();
            assert!(m.contains(expected), "{m}");
        }
    }

    #[test]
    fn outages_on_the_same_nodes_must_not_overlap() {
        let names: Vec<String> = (1..=4).map(|i| format!("n{i}")).collect();
        let machine = OutageMachine {
            nodes: 4,
            names: Some(&names),
        };
        let a = OutageSection {
            name: "a".into(),
            nodes: Some(NodesChoice::Named("n[1-2]".into())),
            ..section(Some("tuesday"), "08:00", "16:00")
        };
        let b = OutageSection {
            name: "b".into(),
            nodes: Some(NodesChoice::Named("n[3-4]".into())),
            ..section(Some("tuesday"), "10:00", "12:00")
        };
        assert_eq!(
            expand(
                &[a.clone(), b.clone()],
                machine,
                start(),
                14 * DAY,
                &no_groups
            )
            .unwrap()
            .len(),
            2
        );
        let c = OutageSection {
            name: "c".into(),
            nodes: Some(NodesChoice::Named("n2".into())),
            ..b.clone()
        };
        let m = expand(&[a.clone(), c], machine, start(), 14 * DAY, &no_groups)
            .unwrap_err()
            .to_string();
        assert!(m.contains("outages[1].from") && m.contains("\"a\""), "{m}");
        let m = expand(&[a.clone(), a], machine, start(), 14 * DAY, &no_groups)
            .unwrap_err()
            .to_string();
        assert!(m.contains("outages[1].name"), "{m}");
    }
}
