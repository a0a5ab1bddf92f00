//! A site's outages (`[[outages]]`) in a run: maintenance windows the scheduler knows from the
//! start ([`cluster::Cluster::with_windows`]), and drains it learns of as they begin
//! ([`cluster::Cluster::set_drained`]), applied by the engine at each period's start and end as
//! a facility ([`engine::Facility`]); and what they took, for summary.json.
//!
//! On a machine of counted processors an outage takes a number of processors, not named
//! nodes. A down period (its jobs killed) needs to know which jobs run on its nodes, which such
//! a machine does not place: it is refused, with the reason (random node failures, which kill
//! the job they strike, are [`crate::failures`]). On a machine of node types an outage takes
//! named nodes: maintenance windows ([`cluster::Cluster::with_node_windows`]) and drains
//! ([`cluster::Cluster::set_drained_nodes`]) are kept there; reservations and down periods are
//! refused there yet, with the reason.
//!
//! outages.csv ([`OutagesCsv`]) lists every period processors were out of service, outages and
//! node failures alike, for the figures of `plot-run` and for anyone's own analysis.

use std::io::Write;

use cluster::{Cluster, NodeWindow, ReservationId, Window};
use config::outages::{Outage, OutageKind, OutageNodes};
use engine::{Facility, Job};
use serde::{Deserialize, Serialize};
use simtime::Time;

use crate::output::{OutputFormat, csv_error, io_error};
use crate::sink::{JobEvent, RunEnd, RunHeader, Sink};

/// The processors `outage` takes on a machine of `processors` counted processors: its count
/// (at most the machine), or one per named node.
fn taken_by(outage: &Outage, processors: u32) -> u32 {
    match &outage.nodes {
        OutageNodes::Count(n) => (*n).min(processors),
        OutageNodes::Indexes(nodes) => u32::try_from(nodes.len()).unwrap_or(u32::MAX),
    }
}

/// On a machine of node types whose nodes have `cpus` CPUs each: the nodes `outage` (the
/// `index`-th) takes, by index. Only drains and maintenance windows are kept there yet, on
/// named nodes or all.
fn nodes_of(index: usize, outage: &Outage, cpus: &[u32]) -> config::Result<Vec<u32>> {
    if !matches!(outage.kind, OutageKind::Drain | OutageKind::Maintenance) {
        return Err(config::invalid!(
            "outages[{index}].kind = {:?} ({:?}): a machine of node types takes maintenance windows and drains (and [failures]) yet, not reservations or down periods: use kind = \"maintenance\" or \"drain\", or a machine of counted processors (site.processors)",
            kind_name(outage.kind),
            outage.name
        ));
    }
    let all = cpus.len() as u32;
    match &outage.nodes {
        OutageNodes::Indexes(nodes) => Ok(nodes.clone()),
        OutageNodes::Count(n) if *n >= all => Ok((0..all).collect()),
        OutageNodes::Count(n) => Err(config::invalid!(
            "outages[{index}].nodes ({:?}): {n} of the {all} nodes, but which? On a machine of node types name them (nodes = \"gpu[1-2]\") or give \"all\"",
            outage.name
        )),
    }
}

/// A kind as a site file writes it.
fn kind_name(kind: OutageKind) -> &'static str {
    match kind {
        OutageKind::Maintenance => "maintenance",
        OutageKind::Drain => "drain",
        OutageKind::Down => "down",
        OutageKind::Reservation => "reservation",
    }
}

/// Why processors were out of service: outages.csv's `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutOfServiceKind {
    /// A maintenance window (a site's `kind = "maintenance"`, a MAINT reservation).
    Maintenance,
    /// A drain (a site's `kind = "drain"`, a node event of `sacctmgr show events`).
    Drain,
    /// A down period.
    Down,
    /// A node failure, from the failure to the end of its repair (`[failures]`).
    Failure,
    /// A reservation for users (a site's `kind = "reservation"`, a Slurm reservation without
    /// `MAINT`): in service to its members alone.
    Reservation,
}

/// One period processors were out of service: a row of outages.csv. Times are seconds on the
/// run's clock (that of jobs.csv's `submit`, `start` and `end`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutOfService {
    /// The outage's name (`failure` for a node failure).
    pub name: String,
    /// Why.
    pub kind: OutOfServiceKind,
    /// Its start, seconds.
    pub from: Time,
    /// Its end, seconds (after `from`).
    pub to: Time,
    /// The processors it took out of service. A drain or failure takes them as their running
    /// jobs free them: the cluster lets a running job finish on a drained processor.
    pub processors: u32,
    /// On a machine of node types, the node it took out of service (a failure's); empty
    /// elsewhere.
    pub node: Option<String>,
}

/// outages.csv's columns, in order: [`OutOfService`]'s fields.
pub const OUTAGE_COLUMNS: [&str; 6] = ["name", "kind", "from", "to", "processors", "node"];

/// outages.csv's kind of an outage of `kind`.
fn kind_of(kind: OutageKind) -> OutOfServiceKind {
    match kind {
        OutageKind::Maintenance => OutOfServiceKind::Maintenance,
        OutageKind::Drain => OutOfServiceKind::Drain,
        OutageKind::Down => OutOfServiceKind::Down,
        OutageKind::Reservation => OutOfServiceKind::Reservation,
    }
}

/// The periods of a run's outages and of its node failures' repairs, by start (ties in the
/// order given: outages first).
pub(crate) fn out_of_service(
    mut outages: Vec<OutOfService>,
    failures: Vec<OutOfService>,
) -> Vec<OutOfService> {
    outages.extend(failures);
    outages.sort_by_key(|o| o.from);
    outages
}

/// The outages.csv format: every period processors were out of service (see the module).
pub struct OutagesCsv;

impl OutputFormat for OutagesCsv {
    fn file_name(&self) -> &'static str {
        "outages.csv"
    }
    fn about(&self) -> &'static str {
        "runs with outages or node failures only: every period processors were out of service (name, kind, from, to, processors, node)"
    }
    fn applies(&self, run: &RunHeader) -> bool {
        run.out_of_service
    }
    fn sink(&self, _run: &RunHeader, out: Box<dyn Write + Send>) -> config::Result<Box<dyn Sink>> {
        Ok(Box::new(OutagesSink { out }))
    }
}

/// Writes the periods the run hands over at its end ([`RunEnd::out_of_service`]).
struct OutagesSink {
    out: Box<dyn Write + Send>,
}

impl Sink for OutagesSink {
    fn job(&mut self, _job: JobEvent<'_>) -> config::Result<()> {
        Ok(())
    }

    fn finish(self: Box<Self>, end: &RunEnd<'_>) -> config::Result<()> {
        // the header by hand, so that a run whose failures never struck still has one
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(self.out);
        let fail = |e| csv_error("outages.csv", e);
        w.write_record(OUTAGE_COLUMNS).map_err(fail)?;
        for period in end.out_of_service {
            w.serialize(period).map_err(fail)?;
        }
        w.flush().map_err(|e| io_error("outages.csv", e))
    }
}

/// A reservation for users as the facility knows it.
#[derive(Debug, Clone)]
struct Reserved {
    /// Its outage's place in the run's outages.
    outage: usize,
    /// Its number, as its members carry it.
    id: ReservationId,
    /// Its member groups: their jobs submitted while it lasts are its members, if they fit in
    /// it.
    groups: Vec<i64>,
    /// Processors it holds.
    processors: u32,
    /// Its periods, `[from, to)` seconds.
    periods: Vec<(Time, Time)>,
}

/// The outages of a run as the engine applies them.
#[derive(Debug, Clone)]
pub(crate) struct OutageFacility {
    /// Maintenance windows and reservations, known from the start (on a machine of node types,
    /// the maintenance windows' processors, for what was out of service).
    windows: Vec<Window>,
    /// On a machine of node types, the maintenance windows on their nodes: the cluster keeps
    /// these ([`Cluster::with_node_windows`]).
    node_windows: Vec<NodeWindow>,
    /// The reservations for users, whose members the facility recognises as they are
    /// submitted.
    reservations: Vec<Reserved>,
    /// Drains: `[from, to)` seconds and processors, learnt at their starts.
    drains: Vec<(Time, Time, u32)>,
    /// On a machine of node types, each drain's nodes (by index), in `drains`' order: the
    /// cluster takes them out of service by name ([`Cluster::set_drained_nodes`]). Empty
    /// on a machine of counted processors.
    drained_nodes: Vec<Vec<u32>>,
    /// Whether the machine is one of node types (`drained_nodes` then holds every drain's).
    on_nodes: bool,
    /// The processors each outage takes, in the outages' order.
    taken: Vec<u32>,
    /// Every instant at which what is in service changes, sorted, once each.
    changes: Vec<Time>,
}

impl OutageFacility {
    /// The facility of `outages` on a machine of `processors`, or `None` without any. A
    /// reservation is numbered as the trace's jobs name it: the `k`-th of `trace_reservations`
    /// (a sacct dump's `Reservation` names; a Slurm reservation's outage is called
    /// `reservation NAME`) is `k`, the others follow in the outages' order.
    ///
    /// On a machine of node types, `node_cpus` gives each node's CPUs: an outage takes its
    /// nodes, and only maintenance windows and drains are kept there yet. Errors, named by the outage: a down period
    /// (its jobs' nodes are not placed on a machine of counted processors); on a machine of
    /// node types, a reservation, or a count of nodes short of all.
    pub(crate) fn new(
        outages: &[Outage],
        processors: u32,
        trace_reservations: &[String],
        node_cpus: Option<&[u32]>,
    ) -> config::Result<Option<Self>> {
        if outages.is_empty() {
            return Ok(None);
        }
        let mut windows = Vec::new();
        let mut node_windows = Vec::new();
        let mut drains = Vec::new();
        let mut drained_nodes = Vec::new();
        let mut reservations = Vec::new();
        let mut unnamed = 0;
        let mut taken_by_outage = Vec::with_capacity(outages.len());
        for (index, outage) in outages.iter().enumerate() {
            let nodes = match node_cpus {
                Some(cpus) => Some(nodes_of(index, outage, cpus)?),
                None => None,
            };
            let taken = match (&nodes, node_cpus) {
                (Some(nodes), Some(cpus)) => nodes
                    .iter()
                    .map(|&n| cpus.get(n as usize).copied().unwrap_or(0))
                    .fold(0u32, u32::saturating_add),
                _ => taken_by(outage, processors),
            };
            taken_by_outage.push(taken);
            let reservation = if outage.kind == OutageKind::Reservation {
                let slurm_name = outage.name.strip_prefix("reservation ");
                let number = match slurm_name
                    .and_then(|name| trace_reservations.iter().position(|t| t == name))
                {
                    Some(place) => place + 1,
                    None => {
                        unnamed += 1;
                        trace_reservations.len() + unnamed
                    }
                };
                let number = u16::try_from(number).map_err(|_| {
                    config::invalid!(
                        "outages[{index}] ({:?}): more than {} reservations",
                        outage.name,
                        u16::MAX
                    )
                })?;
                let id = ReservationId(number);
                reservations.push(Reserved {
                    outage: index,
                    id,
                    groups: outage.groups.clone(),
                    processors: taken,
                    periods: outage.periods.clone(),
                });
                id
            } else {
                ReservationId::NONE
            };
            for &(from, to) in &outage.periods {
                match outage.kind {
                    OutageKind::Maintenance | OutageKind::Reservation => {
                        windows.push(Window {
                            from,
                            to,
                            processors: taken,
                            reservation,
                        });
                        if let Some(nodes) = &nodes {
                            node_windows.push(NodeWindow {
                                from,
                                to,
                                nodes: nodes.clone(),
                            });
                        }
                    }
                    OutageKind::Drain => {
                        drains.push((from, to, taken));
                        if let Some(nodes) = &nodes {
                            drained_nodes.push(nodes.clone());
                        }
                    }
                    OutageKind::Down => {
                        return Err(config::invalid!(
                            "outages[{index}].kind = \"down\" ({:?}): a down period kills the jobs on its nodes, and a machine of counted processors does not place jobs on nodes; use \"drain\" (its jobs finish) or \"maintenance\" (known ahead), or [failures] for nodes that fail at random and kill the job they strike",
                            outage.name
                        ));
                    }
                }
            }
        }
        let mut changes: Vec<Time> = windows
            .iter()
            .flat_map(|w| [w.from, w.to])
            .chain(drains.iter().flat_map(|d| [d.0, d.1]))
            .collect();
        changes.sort_unstable();
        changes.dedup();
        Ok(Some(OutageFacility {
            windows,
            node_windows,
            reservations,
            drains,
            drained_nodes,
            on_nodes: node_cpus.is_some(),
            taken: taken_by_outage,
            changes,
        }))
    }

    /// Whether the outages are kept node by node (a machine of node types).
    fn on_nodes(&self) -> bool {
        self.on_nodes
    }

    /// Every period of `outages` (those the facility was made of), in their file's order,
    /// with the processors each takes (outages.csv's rows).
    pub(crate) fn periods(&self, outages: &[Outage]) -> Vec<OutOfService> {
        outages
            .iter()
            .zip(&self.taken)
            .flat_map(|(outage, &taken)| {
                outage.periods.iter().map(move |&(from, to)| OutOfService {
                    name: outage.name.clone(),
                    kind: kind_of(outage.kind),
                    from,
                    to,
                    processors: taken,
                    node: None,
                })
            })
            .collect()
    }

    /// `cluster` with the maintenance windows known from its start (refused, with the reason,
    /// by a rule or machine that cannot keep them).
    pub(crate) fn prepare(&self, cluster: Cluster) -> config::Result<Cluster> {
        if self.on_nodes() {
            // maintenance windows and drains only (`new` refused the rest), node by node
            cluster
                .check_out_of_service()
                .map_err(|e| config::invalid!("outages: {e}"))?;
            if self.node_windows.is_empty() {
                return Ok(cluster);
            }
            return cluster
                .with_node_windows(self.node_windows.clone())
                .map_err(|e| config::invalid!("outages: {e}"));
        }
        cluster
            .with_windows(self.windows.clone())
            .map_err(|e| config::invalid!("outages: {e}"))
    }

    /// Processors drained at `t`.
    fn drained_at(&self, t: Time) -> u32 {
        self.drains
            .iter()
            .filter(|d| d.0 <= t && t < d.1)
            .map(|d| d.2)
            .sum()
    }

    /// Processors out of service at `t`, by maintenance windows and drains (a reservation's
    /// processors are in service: to its members).
    fn out_at(&self, t: Time) -> u32 {
        let windows: u32 = self
            .windows
            .iter()
            .filter(|w| !w.reservation.is_some() && w.from <= t && t < w.to)
            .map(|w| w.processors)
            .sum();
        windows.saturating_add(self.drained_at(t))
    }
}

impl Facility for OutageFacility {
    /// A job of a reservation's member group submitted while the reservation lasts is its
    /// member, if it fits in the reservation's processors (a user submits to a reservation
    /// only what can run there); a job that names one already keeps it.
    fn admit(&self, job: &mut Job, now: Time) -> Time {
        if job.reservation.is_some() || self.reservations.is_empty() {
            return now;
        }
        let member = self.reservations.iter().find(|r| {
            r.groups.contains(&job.group)
                && job.processors <= r.processors
                && r.periods.iter().any(|&(from, to)| from <= now && now < to)
        });
        if let Some(r) = member {
            job.reservation = r.id;
        }
        now
    }

    fn next_change(&self, after: Time) -> Option<Time> {
        let at = self.changes.partition_point(|&t| t <= after);
        self.changes.get(at).copied()
    }

    fn apply(&self, now: Time, cluster: &mut Cluster) {
        if self.on_nodes() {
            let nodes: Vec<u32> = (self.drains.iter().zip(&self.drained_nodes))
                .filter(|(d, _)| d.0 <= now && now < d.1)
                .flat_map(|(_, nodes)| nodes.iter().copied())
                .collect();
            cluster.set_drained_nodes(&nodes);
            cluster.enter_node_windows(now);
        } else {
            cluster.set_drained(now, self.drained_at(now));
        }
    }
}

/// Hands each outage of `outages` its cost (`costs`, in the report's order) and the failures
/// theirs (`outage_costs`).
pub(crate) fn record_costs(
    outages: Option<&mut OutageReport>,
    costs: Vec<OutageCost>,
    failures: Option<&mut crate::failures::FailureReport>,
    failure_cost: Option<OutageCost>,
) {
    if let Some(report) = outages {
        for (line, cost) in report.outages.iter_mut().zip(costs) {
            line.cost = Some(cost);
        }
    }
    if let Some(report) = failures {
        report.cost = failure_cost;
    }
}

/// What the outages took over a run's measured window, for summary.json (`outages`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OutageReport {
    /// Processor-seconds in service over the window, as a share of the machine's.
    pub availability: f64,
    /// Processor-hours out of service over the window.
    pub processor_hours_out: f64,
    /// Each outage: its periods within the window and the processor-hours it took there.
    pub outages: Vec<OutageLine>,
}

/// One outage's part of [`OutageReport`].
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OutageLine {
    /// Its name.
    pub name: String,
    /// maintenance, reservation or drain.
    pub kind: OutageKind,
    /// Its periods that meet the window.
    pub periods: u64,
    /// Processor-hours it took within the window.
    pub processor_hours: f64,
    /// What it cost, with `outage_costs` (a run of the same users without it); absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<OutageCost>,
    /// A reservation's: what its members did with it over the whole run; absent for other
    /// kinds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub members: Option<MembersUse>,
}

/// What a reservation's members did with it over the whole run (warm-up included, unlike
/// [`OutageLine::processor_hours`]), from the cluster's count
/// ([`cluster::Cluster::reservation_use`]).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MembersUse {
    /// Members that started in it.
    pub jobs_started: u64,
    /// Members its end came before: they ran afterwards as ordinary jobs.
    pub jobs_released: u64,
    /// Processor-hours its members ran in it.
    pub processor_hours_used: f64,
    /// `processor_hours_used` over the processor-hours it held over the whole run (0 to 1):
    /// the rest stood idle, kept from every other job.
    pub share_used: f64,
}

/// What an outage (or the node failures) cost a run: the same run without it, compared over the
/// same measured window. In a site run, the same users, seed and scheduler: paired on one seed,
/// users who met the outage may have submitted other jobs afterwards, which is part of what it
/// cost, and an interval needs a sweep over seeds (docs/science/outages.md). In a replay, the
/// same jobs: the difference is the outage's alone, and the closed loop's measures are absent.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OutageCost {
    /// The mean wait of the run without it, seconds.
    pub wait_mean_without_s: f64,
    /// The mean wait it added: the run's mean wait less `wait_mean_without_s`, seconds.
    pub wait_added_s: f64,
    /// Jobs submitted per hour (the closed loop's throughput) without it; site runs only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submitted_per_hour_without: Option<f64>,
    /// The throughput it changed: with / without - 1 (a fraction; negative: fewer jobs); site
    /// runs only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput_change: Option<f64>,
    /// The mean session length without it, jobs; site runs only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_session_jobs_without: Option<f64>,
    /// The session length it changed: with / without - 1 (a fraction); site runs only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_jobs_change: Option<f64>,
}

impl OutageCost {
    /// The cost of a site run's outage from its measures `with` it and `without` it: mean wait
    /// (seconds), jobs submitted per hour, mean session length (jobs).
    pub fn between(with: [f64; 3], without: [f64; 3]) -> OutageCost {
        let change = |a: f64, b: f64| if b > 0.0 { a / b - 1.0 } else { 0.0 };
        OutageCost {
            wait_mean_without_s: without[0],
            wait_added_s: with[0] - without[0],
            submitted_per_hour_without: Some(without[1]),
            throughput_change: Some(change(with[1], without[1])),
            mean_session_jobs_without: Some(without[2]),
            session_jobs_change: Some(change(with[2], without[2])),
        }
    }

    /// The cost of a replay's outage from its mean waits (seconds) `with` it and `without` it.
    pub fn of_waits(with: f64, without: f64) -> OutageCost {
        OutageCost {
            wait_mean_without_s: without,
            wait_added_s: with - without,
            submitted_per_hour_without: None,
            throughput_change: None,
            mean_session_jobs_without: None,
            session_jobs_change: None,
        }
    }

    /// The console's line for `what` (an outage's name in quotes, `[failures]`).
    pub fn line(&self, what: &str) -> String {
        let mut text = format!(
            "  {:<12} cost of {what} (the run without it): mean wait {:+.1} min",
            "",
            self.wait_added_s / 60.0
        );
        if let (Some(throughput), Some(sessions)) =
            (self.throughput_change, self.session_jobs_change)
        {
            text.push_str(&format!(
                ", throughput {:+.2} %, session length {:+.2} %",
                100.0 * throughput,
                100.0 * sessions
            ));
        }
        text + "\n"
    }
}

impl OutageReport {
    /// The console's line: availability and what was out of service; then, with
    /// `outage_costs`, one line per outage for what it cost.
    pub fn line(&self) -> String {
        let mut text = format!(
            "  {:<12} availability {:.2} % ({:.1} processor-hours out of service, {})\n",
            "outages",
            100.0 * self.availability,
            self.processor_hours_out,
            config::count(self.outages.len() as u64, "outage")
        );
        for outage in &self.outages {
            if let Some(members) = &outage.members {
                text.push_str(&format!(
                    "  {:<12} reservation {:?}: {} started in it, {} after it; {:.1} % of its processor-hours used\n",
                    "",
                    outage.name,
                    config::count(members.jobs_started, "member"),
                    members.jobs_released,
                    100.0 * members.share_used
                ));
            }
            if let Some(cost) = &outage.cost {
                text.push_str(&cost.line(&format!("{:?}", outage.name)));
            }
        }
        text
    }

    /// The report of `outages` on a machine of `processors` over `[start, end)` seconds, the
    /// reservations' use from `cluster` (the run's, after it).
    pub(crate) fn new(
        outages: &[Outage],
        facility: &OutageFacility,
        cluster: &Cluster,
        processors: u32,
        (start, end): (Time, Time),
    ) -> OutageReport {
        let uses: Vec<(ReservationId, cluster::ReservationUse)> =
            cluster.reservation_use().collect();
        let span = (end - start).max(0);
        let mut lines = Vec::with_capacity(outages.len());
        for (outage, &taken) in outages.iter().zip(&facility.taken) {
            let mut periods = 0;
            let mut seconds = 0;
            for &(from, to) in &outage.periods {
                let overlap = to.min(end) - from.max(start);
                if overlap > 0 {
                    periods += 1;
                    seconds += overlap;
                }
            }
            let members = (facility.reservations.iter())
                .find(|r| r.outage == lines.len())
                .map(|r| {
                    let used = (uses.iter())
                        .find(|(id, _)| *id == r.id)
                        .map_or_else(Default::default, |u| u.1);
                    let held: i64 = (outage.periods.iter())
                        .map(|&(from, to)| (to - from) * i64::from(taken))
                        .sum();
                    MembersUse {
                        jobs_started: used.started,
                        jobs_released: used.released,
                        processor_hours_used: used.processor_seconds as f64 / 3600.0,
                        share_used: if held > 0 {
                            used.processor_seconds as f64 / held as f64
                        } else {
                            0.0
                        },
                    }
                });
            lines.push(OutageLine {
                name: outage.name.clone(),
                kind: outage.kind,
                periods,
                processor_hours: seconds as f64 * f64::from(taken) / 3600.0,
                cost: None,
                members,
            });
        }
        // out of service over the window, with overlapping outages counted once each
        // processor (never more than the machine)
        let mut cuts: Vec<Time> = facility
            .changes
            .iter()
            .copied()
            .filter(|&t| t > start && t < end)
            .collect();
        cuts.insert(0, start);
        cuts.push(end);
        let out: f64 = cuts
            .windows(2)
            .map(|w| f64::from(facility.out_at(w[0]).min(processors)) * (w[1] - w[0]) as f64)
            .sum();
        let machine = f64::from(processors) * span as f64;
        OutageReport {
            availability: if machine > 0.0 {
                1.0 - out / machine
            } else {
                1.0
            },
            processor_hours_out: out / 3600.0,
            outages: lines,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outage(kind: OutageKind, taken: u32, periods: Vec<(i64, i64)>) -> Outage {
        Outage {
            groups: Vec::new(),
            name: "o".into(),
            kind,
            nodes: OutageNodes::Count(taken),
            periods,
        }
    }

    #[test]
    fn the_changes_are_every_start_and_end_once() {
        let outages = [
            outage(OutageKind::Maintenance, 8, vec![(100, 200), (1000, 1100)]),
            outage(OutageKind::Drain, 2, vec![(200, 400)]),
        ];
        let f = OutageFacility::new(&outages, 10, &[], None)
            .unwrap()
            .unwrap();
        assert_eq!(f.changes, vec![100, 200, 400, 1000, 1100]);
        assert_eq!(f.next_change(Time::MIN), Some(100));
        assert_eq!(f.next_change(200), Some(400));
        assert_eq!(f.next_change(1100), None);
        assert_eq!(f.drained_at(200), 2);
        assert_eq!(f.out_at(150), 8);
    }

    #[test]
    fn availability_counts_what_was_out_within_the_window() {
        // 10 processors over [0, 1000): 8 out over [100, 200), 2 over [200, 400)
        let outages = [
            outage(OutageKind::Maintenance, 8, vec![(100, 200), (1000, 1100)]),
            outage(OutageKind::Drain, 2, vec![(200, 400)]),
        ];
        let f = OutageFacility::new(&outages, 10, &[], None)
            .unwrap()
            .unwrap();
        let easy = schedulers::REGISTRY
            .spec("easy", &Default::default())
            .unwrap();
        let cluster = Cluster::new(10, easy.build());
        let r = OutageReport::new(&outages, &f, &cluster, 10, (0, 1000));
        // 800 + 400 processor-seconds of 10,000
        assert!((r.availability - 0.88).abs() < 1e-12);
        assert!((r.processor_hours_out - 1200.0 / 3600.0).abs() < 1e-12);
        assert_eq!(r.outages[0].periods, 1);
        assert!((r.outages[1].processor_hours - 400.0 / 3600.0).abs() < 1e-12);
    }

    #[test]
    fn outages_csv_lists_every_period_by_start_with_its_processors() {
        let outages = [
            outage(OutageKind::Maintenance, 8, vec![(100, 200), (1000, 1100)]),
            outage(OutageKind::Drain, 20, vec![(150, 400)]),
        ];
        let failure = OutOfService {
            name: "failure".into(),
            kind: OutOfServiceKind::Failure,
            from: 120,
            to: 900,
            processors: 4,
            node: Some("gpu3".into()),
        };
        // a drain of more than the machine takes the machine
        let facility = OutageFacility::new(&outages, 10, &[], None)
            .unwrap()
            .unwrap();
        let periods = out_of_service(facility.periods(&outages), vec![failure]);
        let out = crate::output::tests::Shared::default();
        let header = crate::output::tests::replay_header();
        let sink = OutagesCsv.sink(&header, Box::new(out.clone())).unwrap();
        sink.finish(&RunEnd {
            summary_json: "{}",
            placements: None,
            shares: None,
            node_shares: None,
            energies: None,
            out_of_service: &periods,
        })
        .unwrap();
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "name,kind,from,to,processors,node\n\
             o,maintenance,100,200,8,\n\
             failure,failure,120,900,4,gpu3\n\
             o,drain,150,400,10,\n\
             o,maintenance,1000,1100,8,\n"
        );
        // and back, as plot-run reads it
        let read = crate::tables::outages_from_reader("outages.csv", text.as_bytes()).unwrap();
        assert_eq!(read, periods);
        // a file written before `node` was added reads as one without nodes
        let old = "name,kind,from,to,processors\no,drain,150,400,10\n";
        let read = crate::tables::outages_from_reader("outages.csv", old.as_bytes()).unwrap();
        assert_eq!(read[0].node, None);
    }

    #[test]
    fn a_down_period_is_refused_with_its_name() {
        let outages = [outage(OutageKind::Down, 1, vec![(0, 10)])];
        let e = OutageFacility::new(&outages, 10, &[], None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("outages[0].kind") && e.contains("drain"), "{e}");
    }
}
