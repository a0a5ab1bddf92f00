//! A site's outages as Slurm records them: node down and drain periods (`sacctmgr --parsable2
//! show events`) and advance reservations (`scontrol show reservation`, current and future ones;
//! `sacctmgr --parsable2 show reservation format=...`, the past ones slurmdbd keeps).
//!
//! The formats follow Slurm's source: `sacctmgr show events` prints by default `Cluster`,
//! `NodeName`, `TimeStart`, `TimeEnd`, `State`, `Reason`, `User` (`event_functions.c`), with an
//! event still open (the node still down) ending `Unknown` (a time of 0, `slurm_make_time_str`);
//! its `State` is the node's compact state (`DOWN`, `DRAIN`, `DRNG`, `FAIL`, ... with a `*`
//! when the node did not respond); its `Reason` is free text and may hold `|` (a row with more
//! fields than the header has them in its reason). A row without a node name is a cluster event (a change of
//! the cluster's size), which is not an outage and is counted apart. `scontrol show reservation`
//! prints each reservation as `Key=Value` words over several lines (or one, with `-o`), a blank
//! line between reservations (`slurm_sprint_reservation_info`, `reservation_info.c`); `Users`,
//! `Accounts` and the like read `(null)` when unset. `sacctmgr show reservation` prints
//! `Cluster`, `Name`, `TRES`, `TimeStart`, `TimeEnd`, `Unused` by default and takes `Flags`,
//! `NodeName` (the nodes) and `Assocs` with `format=` (`reservation_functions.c`).
//!
//! Times are local times without an offset, placed on the UTC time line by a [`Clock`] (run
//! the commands with `TZ=UTC` and `SLURM_TIME_FORMAT=standard`, as for sacct).

use std::io::{BufRead, Read};
use std::path::Path;

use crate::error::SacctError;
use crate::values::{Clock, Placed, parse_time};

/// The most rows or reservations an outage file may hold.
const MAX_OUTAGES: usize = 10_000_000;

/// What a node's event says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeEventKind {
    /// Down (`DOWN`): its running jobs were killed (or requeued), nothing runs on it.
    Down,
    /// Drained or draining (`DRAIN`, `DRNG`, `DRAINED`, `DRAINING`): no job starts on it; the
    /// jobs running on it as it was drained run to their ends.
    Drain,
    /// Failing (`FAIL`, `FAILG`): as a drain, no job starts on it.
    Fail,
}

/// One node's down or drain period (a row of `sacctmgr show events`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeEvent {
    /// The node (`NodeName`).
    pub node: String,
    /// Its start, seconds since the Unix epoch.
    pub start: i64,
    /// Its end, seconds since the Unix epoch (`None`: still open when the dump was made).
    pub end: Option<i64>,
    /// What kind of outage.
    pub kind: NodeEventKind,
    /// The state as recorded (`DOWN*`, `DRAIN`, ...).
    pub state: String,
    /// Why, as the administrator (or slurmctld) wrote it.
    pub reason: String,
    /// The node's CPUs, from the `TRES` column (`cpu=N`) when the dump has one.
    pub cpus: Option<u32>,
    /// The file's line.
    pub line: u64,
}

/// The node events of a `sacctmgr show events` file, and what was left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeEvents {
    /// The node events, in file order.
    pub events: Vec<NodeEvent>,
    /// Cluster events (no node name): changes of the cluster's size, not outages.
    pub cluster_rows: u64,
    /// Rows of other states (a node in `MAINT`, `RESV`, `IDLE`, ... is not out), by state.
    pub other_states: Vec<(String, u64)>,
}

impl NodeEventKind {
    /// The kind of a compact node state (`DOWN*`, `DRAIN`, `DRNG`, `FAIL`, ...), `None` for a
    /// state that is no outage.
    pub fn of_state(state: &str) -> Option<NodeEventKind> {
        let base = state
            .trim()
            .trim_end_matches(['*', '~', '#', '!', '%', '$', '@', '^', '-'])
            .to_ascii_uppercase();
        // a state with flags, `DOWN+DRAIN`, is as its most severe part
        let parts: Vec<&str> = base.split('+').collect();
        if parts.iter().any(|p| p.starts_with("DOWN")) {
            Some(NodeEventKind::Down)
        } else if parts.iter().any(|p| p.starts_with("DRAIN") || *p == "DRNG") {
            Some(NodeEventKind::Drain)
        } else if parts.iter().any(|p| p.starts_with("FAIL")) {
            Some(NodeEventKind::Fail)
        } else {
            None
        }
    }
}

/// A time field: placed by `clock`; `Ok(None)` for `Unknown` and empty. Errors name the field.
fn time_of(
    text: &str,
    clock: Clock,
    source_name: &str,
    line: u64,
    column: &str,
) -> Result<Option<i64>, SacctError> {
    let local = parse_time(text.trim())
        .map_err(|expected| SacctError::field(source_name, line, column, text, expected))?;
    let Some(local) = local else {
        return Ok(None);
    };
    match clock.place(local) {
        Placed::Exact(t) | Placed::Ambiguous(t) => Ok(Some(t)),
        Placed::Missing => Err(SacctError::field(
            source_name,
            line,
            column,
            text,
            "a local time that exists in the --tz zone (this one falls in the hour skipped when daylight saving starts)",
        )),
    }
}

impl NodeEvents {
    /// The events merged node by node: a node's rows sorted by start, a row that begins where
    /// the one before of the same kind ends joined to it (slurmctld closes a node's event and
    /// opens the next in the same second when only its state's flags or reason change:
    /// `DRNG` then `DRAIN`, `DOWN*` then `DOWN`). Rows of one node that overlap are an error
    /// naming both lines: Slurm keeps at most one open event per node.
    pub fn merged(&self, source_name: &str) -> Result<Vec<NodeEvent>, SacctError> {
        let mut sorted: Vec<&NodeEvent> = self.events.iter().collect();
        sorted.sort_by(|a, b| {
            (a.node.as_str(), a.start, a.line).cmp(&(b.node.as_str(), b.start, b.line))
        });
        let mut out: Vec<NodeEvent> = Vec::with_capacity(sorted.len());
        for event in sorted {
            if let Some(last) = out.last_mut().filter(|l| l.node == event.node) {
                let last_end = last.end.unwrap_or(i64::MAX);
                if event.start < last_end {
                    return Err(SacctError::field(
                        source_name,
                        event.line,
                        "TimeStart",
                        &event.start.to_string(),
                        format!(
                            "a start at or after the end of node {}'s event on line {} (events of one node do not overlap)",
                            event.node, last.line
                        ),
                    ));
                }
                if event.start == last_end && event.kind == last.kind {
                    last.end = event.end;
                    continue;
                }
            }
            out.push(event.clone());
        }
        Ok(out)
    }

    /// Reads `sacctmgr --parsable2 show events` output at `path` (columns by their header
    /// names: `NodeName`, `TimeStart`, `TimeEnd` and `State` are needed, `Reason` is read where
    /// present). Errors name file, line and column.
    pub fn read(path: &Path, clock: Clock) -> Result<NodeEvents, SacctError> {
        let input = swf::Input::open(path)?;
        let name = input.name().to_string();
        NodeEvents::read_from(input, &name, clock)
    }

    /// [`NodeEvents::read`] from `input`; `source_name` names it in errors.
    pub fn read_from(
        input: impl BufRead,
        source_name: &str,
        clock: Clock,
    ) -> Result<NodeEvents, SacctError> {
        use crate::table::{check_width, column, read_rows};
        const NEEDED: [(&str, &[&str]); 4] = [
            ("NodeName", &["nodename", "node", "nodes"]),
            ("TimeStart", &["timestart", "start"]),
            ("TimeEnd", &["timeend", "end"]),
            ("State", &["state"]),
        ];
        let mut out = NodeEvents::default();
        read_rows(
            input,
            source_name,
            MAX_OUTAGES,
            "events",
            |header| {
                let mut found = [None; 6];
                for (k, (name, keys)) in NEEDED.iter().enumerate() {
                    found[k] = Some(column(header, keys).ok_or(SacctError::MissingField {
                        source_name: source_name.to_string(),
                        line: header.line,
                        field: name,
                    })?);
                }
                found[4] = column(header, &["reason"]);
                found[5] = column(header, &["tres"]);
                Ok((found, header.fields.len()))
            },
            |(columns, width): &([Option<usize>; 6], usize), row| {
                check_width(row, source_name, columns)?;
                // a reason may hold `|` (free text): the fields beyond the header's are its
                let extra = match columns[4] {
                    Some(_) => row.fields.len().saturating_sub(*width),
                    None => 0,
                };
                let reason = columns[4].map_or(String::new(), |c| {
                    row.fields[c..=(c + extra).min(row.fields.len() - 1)]
                        .join("|")
                        .trim()
                        .to_string()
                });
                let get = |k: usize| {
                    columns[k]
                        .map(|c| match columns[4] {
                            Some(r) if c > r => c + extra,
                            _ => c,
                        })
                        .and_then(|c| row.fields.get(c))
                        .map_or("", |f| f.trim())
                };
                let node = get(0);
                if node.is_empty() {
                    out.cluster_rows += 1;
                    return Ok(());
                }
                let state = get(3);
                let Some(kind) = NodeEventKind::of_state(state) else {
                    match out.other_states.iter_mut().find(|(s, _)| s == state) {
                        Some((_, n)) => *n += 1,
                        None => out.other_states.push((state.to_string(), 1)),
                    }
                    return Ok(());
                };
                let start = time_of(get(1), clock, source_name, row.line, "TimeStart")?
                    .ok_or_else(|| {
                        SacctError::field(
                            source_name,
                            row.line,
                            "TimeStart",
                            get(1),
                            "the time the event began",
                        )
                    })?;
                let end = time_of(get(2), clock, source_name, row.line, "TimeEnd")?;
                if end.is_some_and(|end| end < start) {
                    return Err(SacctError::field(
                        source_name,
                        row.line,
                        "TimeEnd",
                        get(2),
                        "a time at or after TimeStart (a reversed period)",
                    ));
                }
                let cpus = match columns[5] {
                    Some(_) => tres_cpus(get(5))
                        .map_err(|e| SacctError::field(source_name, row.line, "TRES", get(5), e))?,
                    None => None,
                };
                out.events.push(NodeEvent {
                    node: node.to_string(),
                    start,
                    end,
                    kind,
                    state: state.to_string(),
                    reason,
                    cpus,
                    line: row.line,
                });
                Ok(())
            },
        )?;
        Ok(out)
    }
}

/// The CPUs of a TRES list (`cpu=2,mem=1000M,node=1`): `None` when it names none. Errors say
/// what was expected.
fn tres_cpus(text: &str) -> Result<Option<u32>, &'static str> {
    for item in text.split(',') {
        if let Some(value) = item.trim().strip_prefix("cpu=") {
            return value
                .parse()
                .map(Some)
                .map_err(|_| "a TRES list whose cpu= is a whole number (cpu=2,mem=1000M)");
        }
    }
    Ok(None)
}

/// One advance reservation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reservation {
    /// Its name (`ReservationName`, `Name`).
    pub name: String,
    /// Its start, seconds since the Unix epoch.
    pub start: i64,
    /// Its end, seconds since the Unix epoch.
    pub end: i64,
    /// Its nodes as a host list (`node[01-04],gpu1`), when recorded.
    pub nodes: Option<String>,
    /// How many nodes (`NodeCnt`, or the `node=` of its TRES), when recorded.
    pub node_count: Option<u32>,
    /// How many cores or CPUs (`CoreCnt`, or the `cpu=` of its TRES), when recorded.
    pub cpus: Option<u32>,
    /// Its flags, upper case (`MAINT`, `IGNORE_JOBS`, `FLEX`, `SPEC_NODES`, ...).
    pub flags: Vec<String>,
    /// The users it admits (empty: any user its accounts admit).
    pub users: Vec<String>,
    /// The accounts it admits.
    pub accounts: Vec<String>,
    /// Its partition, when it has one.
    pub partition: Option<String>,
    /// The file's line where it begins.
    pub line: u64,
}

impl Reservation {
    /// Whether it is a maintenance reservation (`MAINT`): its nodes are out for every job.
    pub fn is_maintenance(&self) -> bool {
        self.flags.iter().any(|f| f == "MAINT")
    }
}

/// A list of a `Key=Value` field: empty for `(null)`, `N/A` or nothing.
fn list(value: &str) -> Vec<String> {
    match value.trim() {
        "" | "(null)" | "N/A" | "None" => Vec::new(),
        v => v
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
    }
}

/// An optional text field: `None` for `(null)`, `N/A` or nothing.
fn text(value: &str) -> Option<String> {
    match value.trim() {
        "" | "(null)" | "N/A" | "None" => None,
        v => Some(v.to_string()),
    }
}

/// The amount of `key` in a TRES list (`cpu=64,mem=..,node=2`).
fn tres_count(tres: &str, key: &str) -> Option<u32> {
    crate::values::tres(tres, key).and_then(|v| v.parse().ok())
}

/// Reads a whole outage file into text (bounded by [`crate::MAX_LINE_BYTES`] a line and
/// [`MAX_OUTAGES`] lines).
fn read_text(mut input: impl BufRead, source_name: &str) -> Result<String, SacctError> {
    let mut text = String::new();
    let limit = (crate::MAX_LINE_BYTES as u64).saturating_mul(64);
    let read = (&mut input)
        .take(limit + 1)
        .read_to_string(&mut text)
        .map_err(|error| SacctError::Read {
            source_name: source_name.to_string(),
            line: 0,
            error,
        })?;
    if read as u64 > limit {
        return Err(SacctError::TooLarge {
            source_name: source_name.to_string(),
            line: text.lines().count() as u64,
            limit,
            what: "bytes of reservations",
        });
    }
    Ok(text)
}

/// The reservations of a file, in file order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reservations {
    /// Every reservation.
    pub reservations: Vec<Reservation>,
}

impl Reservations {
    /// Reads `scontrol show reservation` output (with or without `-o`) or `sacctmgr
    /// --parsable2 show reservation` output at `path` (told apart by the first word: a
    /// `ReservationName=` is scontrol's). Errors name file, line and field.
    pub fn read(path: &Path, clock: Clock) -> Result<Reservations, SacctError> {
        let input = swf::Input::open(path)?;
        let name = input.name().to_string();
        Reservations::read_from(input, &name, clock)
    }

    /// [`Reservations::read`] from `input`; `source_name` names it in errors.
    pub fn read_from(
        input: impl BufRead,
        source_name: &str,
        clock: Clock,
    ) -> Result<Reservations, SacctError> {
        let text = read_text(input, source_name)?;
        let first = text.lines().map(str::trim).find(|l| !l.is_empty());
        match first {
            None => Ok(Reservations::default()),
            Some(l) if l.starts_with("No reservations") => Ok(Reservations::default()),
            Some(l) if l.starts_with("ReservationName=") => {
                Reservations::of_scontrol(&text, source_name, clock)
            }
            Some(_) => Reservations::of_sacctmgr(&text, source_name, clock),
        }
    }

    /// `scontrol show reservation`: `Key=Value` words, a record from each `ReservationName=`.
    fn of_scontrol(
        text: &str,
        source_name: &str,
        clock: Clock,
    ) -> Result<Reservations, SacctError> {
        let mut out = Reservations::default();
        // (line, key, value) of the record being read
        let mut record: Vec<(u64, String, String)> = Vec::new();
        let mut finish = |record: &mut Vec<(u64, String, String)>| -> Result<(), SacctError> {
            if record.is_empty() {
                return Ok(());
            }
            let taken = std::mem::take(record);
            out.reservations
                .push(scontrol_record(&taken, source_name, clock)?);
            if out.reservations.len() > MAX_OUTAGES {
                return Err(SacctError::TooLarge {
                    source_name: source_name.to_string(),
                    line: taken[0].0,
                    limit: MAX_OUTAGES as u64,
                    what: "reservations",
                });
            }
            Ok(())
        };
        for (k, line) in text.lines().enumerate() {
            let number = k as u64 + 1;
            let mut rest = line.trim();
            while !rest.is_empty() {
                // `Comment=` runs to the end of its line, spaces included
                if let Some(comment) = rest.strip_prefix("Comment=") {
                    record.push((number, "Comment".into(), comment.to_string()));
                    break;
                }
                let (word, after) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                rest = after.trim_start();
                let Some((key, value)) = word.split_once('=') else {
                    return Err(SacctError::field(
                        source_name,
                        number,
                        "(word)",
                        word,
                        "a Key=Value word of scontrol show reservation",
                    ));
                };
                if key == "ReservationName" {
                    finish(&mut record)?;
                }
                record.push((number, key.to_string(), value.to_string()));
            }
        }
        finish(&mut record)?;
        Ok(out)
    }

    /// `sacctmgr --parsable2 show reservation`: `Name`, `TimeStart` and `TimeEnd` are needed;
    /// `NodeName` (or `Nodes`), `Flags` and `TRES` are read where present.
    fn of_sacctmgr(
        text: &str,
        source_name: &str,
        clock: Clock,
    ) -> Result<Reservations, SacctError> {
        use crate::table::{check_width, column, read_rows};
        const NEEDED: [(&str, &[&str]); 3] = [
            ("Name", &["name", "reservationname"]),
            ("TimeStart", &["timestart", "start"]),
            ("TimeEnd", &["timeend", "end"]),
        ];
        let mut out = Reservations::default();
        read_rows(
            text.as_bytes(),
            source_name,
            MAX_OUTAGES,
            "reservations",
            |header| {
                let mut found = [None; 6];
                for (k, (name, keys)) in NEEDED.iter().enumerate() {
                    found[k] = Some(column(header, keys).ok_or(SacctError::MissingField {
                        source_name: source_name.to_string(),
                        line: header.line,
                        field: name,
                    })?);
                }
                found[3] = column(header, &["nodename", "nodes", "nodelist"]);
                found[4] = column(header, &["flags"]);
                found[5] = column(header, &["tres"]);
                Ok(found)
            },
            |columns: &[Option<usize>; 6], row| {
                check_width(row, source_name, columns)?;
                let get = |k: usize| {
                    columns[k]
                        .and_then(|c| row.fields.get(c))
                        .map_or("", |f| f.trim())
                };
                let (start, end) = period(
                    (get(1), "TimeStart"),
                    (get(2), "TimeEnd"),
                    clock,
                    source_name,
                    row.line,
                )?;
                let tres = get(5);
                out.reservations.push(Reservation {
                    name: get(0).to_string(),
                    start,
                    end,
                    nodes: text_field(get(3)),
                    node_count: tres_count(tres, "node"),
                    cpus: tres_count(tres, "cpu"),
                    flags: flags(get(4)),
                    users: Vec::new(),
                    accounts: Vec::new(),
                    partition: None,
                    line: row.line,
                });
                Ok(())
            },
        )?;
        Ok(out)
    }
}

/// [`text`] under another name, for the table reader's closures.
fn text_field(value: &str) -> Option<String> {
    text(value)
}

/// Flags, upper case.
fn flags(value: &str) -> Vec<String> {
    list(value)
        .into_iter()
        .map(|f| f.to_ascii_uppercase())
        .collect()
}

/// A reservation's start and end, both needed, the end not before the start.
fn period(
    (start, start_column): (&str, &str),
    (end, end_column): (&str, &str),
    clock: Clock,
    source_name: &str,
    line: u64,
) -> Result<(i64, i64), SacctError> {
    let at = |value: &str, column: &str| -> Result<i64, SacctError> {
        time_of(value, clock, source_name, line, column)?.ok_or_else(|| {
            SacctError::field(
                source_name,
                line,
                column,
                value,
                "a time (a reservation has one)",
            )
        })
    };
    let (from, to) = (at(start, start_column)?, at(end, end_column)?);
    if to < from {
        return Err(SacctError::field(
            source_name,
            line,
            end_column,
            end,
            "a time at or after its start (a reversed period)",
        ));
    }
    Ok((from, to))
}

/// One `scontrol show reservation` record.
fn scontrol_record(
    record: &[(u64, String, String)],
    source_name: &str,
    clock: Clock,
) -> Result<Reservation, SacctError> {
    let line = record.first().map_or(0, |r| r.0);
    let get = |key: &str| {
        record
            .iter()
            .find(|(_, k, _)| k == key)
            .map(|(l, _, v)| (*l, v.as_str()))
    };
    let value = |key: &str| get(key).map_or("", |(_, v)| v);
    let (start_line, _) = get("StartTime").unwrap_or((line, ""));
    let (start, end) = period(
        (value("StartTime"), "StartTime"),
        (value("EndTime"), "EndTime"),
        clock,
        source_name,
        start_line,
    )?;
    let count = |key: &str| -> Result<Option<u32>, SacctError> {
        match get(key) {
            None => Ok(None),
            Some((l, v)) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| SacctError::field(source_name, l, "(field)", v, "a whole number")),
        }
    };
    let tres = value("TRES");
    Ok(Reservation {
        name: value("ReservationName").to_string(),
        start,
        end,
        nodes: text(value("Nodes")),
        node_count: count("NodeCnt")?.or_else(|| tres_count(tres, "node")),
        cpus: count("CoreCnt")?.or_else(|| tres_count(tres, "cpu")),
        flags: flags(value("Flags")),
        users: list(value("Users")),
        accounts: list(value("Accounts")),
        partition: text(value("PartitionName")),
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Result<NodeEvents, SacctError> {
        NodeEvents::read_from(text.as_bytes(), "events.txt", Clock::Utc)
    }

    /// 2024-03-04T08:00:00 UTC.
    const MARCH_4_8H: i64 = 1_709_539_200;

    #[test]
    fn node_events_are_read_by_their_header() {
        let read = events(
            "Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User|TRES\n\
             c||2024-03-04T00:00:00|Unknown||Cluster Registered TRES||cpu=96,node=2\n\
             c|node01|2024-03-04T08:00:00|2024-03-04T16:00:00|DRAIN|bad DIMM | slot 3|root(0)|cpu=64,mem=256000M\n\
             c|node02|2024-03-04T09:30:00|Unknown|DOWN*|Not responding|slurm(64030)|mem=1G,cpu=32\n\
             c|node03|2024-03-04T10:00:00|2024-03-04T10:05:00|IDLE|x|root(0)|cpu=8\n",
        )
        .unwrap();
        assert_eq!(read.cluster_rows, 1);
        assert_eq!(read.other_states, vec![("IDLE".to_string(), 1)]);
        assert_eq!(
            read.events,
            vec![
                NodeEvent {
                    node: "node01".into(),
                    start: MARCH_4_8H,
                    end: Some(MARCH_4_8H + 8 * 3600),
                    kind: NodeEventKind::Drain,
                    state: "DRAIN".into(),
                    reason: "bad DIMM | slot 3".into(),
                    cpus: Some(64),
                    line: 3,
                },
                NodeEvent {
                    node: "node02".into(),
                    start: MARCH_4_8H + 5400,
                    end: None,
                    kind: NodeEventKind::Down,
                    state: "DOWN*".into(),
                    reason: "Not responding".into(),
                    cpus: Some(32),
                    line: 4,
                },
            ]
        );
    }

    #[test]
    fn a_nodes_contiguous_rows_of_one_kind_merge_and_overlaps_are_named() {
        let read = events(
            "NodeName|TimeStart|TimeEnd|State\n\
             n1|2024-03-04T08:00:00|2024-03-04T09:00:00|DRNG\n\
             n2|2024-03-04T08:00:00|2024-03-04T08:30:00|DOWN*\n\
             n1|2024-03-04T09:00:00|Unknown|DRAIN\n\
             n2|2024-03-04T08:30:00|2024-03-04T10:00:00|DRAIN\n",
        )
        .unwrap();
        let merged = read.merged("events.txt").unwrap();
        let spans: Vec<(&str, i64, Option<i64>, NodeEventKind)> = merged
            .iter()
            .map(|e| {
                (
                    e.node.as_str(),
                    e.start - MARCH_4_8H,
                    e.end.map(|t| t - MARCH_4_8H),
                    e.kind,
                )
            })
            .collect();
        assert_eq!(
            spans,
            vec![
                ("n1", 0, None, NodeEventKind::Drain),
                ("n2", 0, Some(1800), NodeEventKind::Down),
                ("n2", 1800, Some(7200), NodeEventKind::Drain),
            ]
        );
        let overlapping = events(
            "NodeName|TimeStart|TimeEnd|State\n\
             n1|2024-03-04T08:00:00|2024-03-04T10:00:00|DOWN\n\
             n1|2024-03-04T09:00:00|2024-03-04T11:00:00|DOWN\n",
        )
        .unwrap();
        let m = overlapping.merged("events.txt").unwrap_err().to_string();
        assert!(
            m.contains("events.txt:3") && m.contains("line 2") && m.contains("n1"),
            "{m}"
        );
    }

    /// Slurm 22.05's own output (tests/fixtures/slurm-outages, README there).
    fn fixture(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/slurm-outages")
            .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn a_real_slurms_events_and_reservations_are_read() {
        // 2026-11-30T11:49:30 UTC
        const DRAINED: i64 = 1_796_039_370;
        let read = events(&fixture("events.txt")).unwrap();
        assert_eq!(read.cluster_rows, 3);
        assert_eq!(read.events.len(), 2);
        assert_eq!(read.events[0].node, "vm");
        assert_eq!(read.events[0].kind, NodeEventKind::Drain);
        assert_eq!(read.events[0].reason, "bad DIMM | slot 3");
        assert_eq!(
            (read.events[0].start, read.events[0].end),
            (DRAINED, Some(DRAINED + 3))
        );
        assert_eq!(read.events[1].kind, NodeEventKind::Down);
        assert_eq!(read.events[1].reason, "test down");
        let expected = Reservation {
            name: "maint_test".into(),
            start: DRAINED + 3598,
            end: DRAINED + 3598 + 7200,
            nodes: Some("vm".into()),
            node_count: Some(1),
            cpus: Some(2),
            flags: vec![
                "MAINT".into(),
                "IGNORE_JOBS".into(),
                "SPEC_NODES".into(),
                "ALL_NODES".into(),
            ],
            users: vec!["root".into()],
            accounts: vec![],
            partition: None,
            line: 1,
        };
        for name in [
            "scontrol-reservation.txt",
            "scontrol-reservation-oneliner.txt",
        ] {
            let read = reservations(&fixture(name)).unwrap().reservations;
            assert_eq!(read, vec![expected.clone()], "{name}");
        }
        let read = reservations(&fixture("sacctmgr-reservation.txt"))
            .unwrap()
            .reservations;
        // sacctmgr has no users (association ids only) and 22.05's TRES no node count
        assert_eq!(
            read,
            vec![Reservation {
                users: vec![],
                node_count: None,
                line: 2,
                ..expected
            }]
        );
    }

    #[test]
    fn states_map_to_kinds() {
        for (state, kind) in [
            ("DOWN", Some(NodeEventKind::Down)),
            ("down*", Some(NodeEventKind::Down)),
            ("DRAIN", Some(NodeEventKind::Drain)),
            ("DRNG", Some(NodeEventKind::Drain)),
            ("DRAINED", Some(NodeEventKind::Drain)),
            ("DOWN+DRAIN", Some(NodeEventKind::Down)),
            ("FAIL", Some(NodeEventKind::Fail)),
            ("FAILG", Some(NodeEventKind::Fail)),
            ("IDLE", None),
            ("MAINT", None),
        ] {
            assert_eq!(NodeEventKind::of_state(state), kind, "{state}");
        }
    }

    #[test]
    fn bad_events_are_named() {
        let message = |text: &str| events(text).unwrap_err().to_string();
        let m = message("NodeName|TimeStart|TimeEnd\nn1|2024-03-04T08:00:00|Unknown\n");
        assert!(m.contains("State"), "{m}");
        let m = message(
            "NodeName|TimeStart|TimeEnd|State\nn1|2024-03-04T08:00:00|2024-03-04T07:00:00|DOWN\n",
        );
        assert!(
            m.contains("events.txt:2") && m.contains("TimeEnd") && m.contains("reversed"),
            "{m}"
        );
        let m = message("NodeName|TimeStart|TimeEnd|State\nn1|yesterday|Unknown|DOWN\n");
        assert!(m.contains("events.txt:2") && m.contains("TimeStart"), "{m}");
    }

    fn reservations(text: &str) -> Result<Reservations, SacctError> {
        Reservations::read_from(text.as_bytes(), "resv.txt", Clock::Utc)
    }

    #[test]
    fn scontrol_reservations_are_read_in_both_layouts() {
        let multi = "ReservationName=maint StartTime=2024-03-04T08:00:00 EndTime=2024-03-04T16:00:00 Duration=08:00:00\n   \
            Nodes=node[01-04] NodeCnt=4 CoreCnt=128 Features=(null) PartitionName=(null) Flags=MAINT,SPEC_NODES\n   \
            TRES=cpu=128\n   \
            Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE BurstBuffer=(null) Watts=n/a\n   \
            MaxStartDelay=(null)\n\n\
            ReservationName=course StartTime=2024-03-05T09:00:00 EndTime=2024-03-05T12:00:00 Duration=03:00:00 Nodes=node05 NodeCnt=1 CoreCnt=32 Features=(null) PartitionName=batch Flags= TRES=cpu=32 Users=(null) Groups=(null) Accounts=teaching,physics Licenses=(null) State=INACTIVE BurstBuffer=(null) MaxStartDelay=(null) Comment=the HPC course, day 1\n";
        let read = reservations(multi).unwrap().reservations;
        assert_eq!(read.len(), 2);
        assert_eq!(
            read[0],
            Reservation {
                name: "maint".into(),
                start: MARCH_4_8H,
                end: MARCH_4_8H + 8 * 3600,
                nodes: Some("node[01-04]".into()),
                node_count: Some(4),
                cpus: Some(128),
                flags: vec!["MAINT".into(), "SPEC_NODES".into()],
                users: vec!["root".into()],
                accounts: vec![],
                partition: None,
                line: 1,
            }
        );
        assert!(read[0].is_maintenance());
        assert_eq!(read[1].accounts, vec!["teaching", "physics"]);
        assert_eq!(read[1].partition.as_deref(), Some("batch"));
        assert!(read[1].flags.is_empty() && read[1].users.is_empty());
        assert_eq!(read[1].line, 7);
        assert!(
            reservations("No reservations in the system\n")
                .unwrap()
                .reservations
                .is_empty()
        );
    }

    #[test]
    fn sacctmgr_reservations_are_read_by_their_header() {
        let read = reservations(
            "Cluster|Name|TRES|TimeStart|TimeEnd|Flags|NodeName\n\
             c|maint|cpu=64,node=2|2024-03-04T08:00:00|2024-03-04T16:00:00|MAINT,IGNORE_JOBS|node[01-02]\n",
        )
        .unwrap()
        .reservations;
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].node_count, Some(2));
        assert_eq!(read[0].cpus, Some(64));
        assert_eq!(read[0].flags, vec!["MAINT", "IGNORE_JOBS"]);
        assert_eq!(read[0].nodes.as_deref(), Some("node[01-02]"));
        assert_eq!(read[0].end - read[0].start, 8 * 3600);
    }

    #[test]
    fn bad_reservations_are_named() {
        let m = reservations(
            "ReservationName=r StartTime=2024-03-04T08:00:00 EndTime=2024-03-04T07:00:00\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            m.contains("resv.txt:1") && m.contains("EndTime") && m.contains("reversed"),
            "{m}"
        );
        let m = reservations("ReservationName=r StartTime=2024-03-04T08:00:00 garbage\n")
            .unwrap_err()
            .to_string();
        assert!(m.contains("garbage"), "{m}");
        let m = reservations("ReservationName=r EndTime=2024-03-04T08:00:00\n")
            .unwrap_err()
            .to_string();
        assert!(m.contains("StartTime"), "{m}");
        let m = reservations("Cluster|Name|TimeStart\nc|r|2024-03-04T08:00:00\n")
            .unwrap_err()
            .to_string();
        assert!(m.contains("TimeEnd"), "{m}");
    }
}
