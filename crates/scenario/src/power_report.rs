//! A run's power, energy, carbon and cost (summary.json's `power`): each finished job's draw
//! on the machine's node types ([`power::NodePower`]), charged over its run by the meter
//! ([`power::Meter`]), over the run's makespan.
//!
//! On a machine of processors a job holds its processors as cores of the one node type, and
//! its GPUs and memory from the run's resource kinds (`gres/gpu...`, `mem`); on a machine of
//! node types each node it held is charged at its own type's values, by what it held there.
//! A job whose trace logged its energy (a sacct dump's `ConsumedEnergyRaw`) is charged that
//! with `jobs = "logged"`.

use std::collections::HashMap;
use std::path::Path;

use config::power::{JobCharge, PowerInput, PowerMachine, PowerSetup};
use config::trace::TraceOptions;
use config::{Result, invalid};
use metrics::{JobRecord, Window};
use power::{Draw, Meter, PowerReport, Used};

use crate::sink::NodeShares;

/// A run's meter with what it needs to turn records into draws.
pub(crate) struct PowerRun {
    /// The resolved `[power]` table.
    setup: PowerSetup,
    /// The meter.
    meter: Meter,
    /// The run's resource kinds holding GPUs (`gres/gpu`, `gres/gpu:TYPE`), by index.
    gpu_kinds: Vec<usize>,
    /// The kind holding memory, MiB (`mem`).
    memory_kind: Option<usize>,
    /// Each node's type, by node index (a machine of node types).
    node_types: Option<Vec<usize>>,
    /// The energies the trace logged, J, by job id (`jobs = "logged"`).
    logged: HashMap<i64, u64>,
}

impl PowerRun {
    /// A meter for `setup` on a run whose resource kinds are `kinds` (by name, in the order of
    /// the jobs' amounts).
    pub(crate) fn new(
        setup: PowerSetup,
        kinds: &[String],
        nodes: Option<&config::nodes::NodeMachine>,
        logged: HashMap<i64, u64>,
    ) -> PowerRun {
        let meter = Meter::new(
            setup.idle_w,
            setup.pue,
            setup.carbon.clone(),
            setup.price.clone(),
        );
        PowerRun {
            setup,
            meter,
            gpu_kinds: (kinds.iter().enumerate())
                .filter(|(_, name)| name.starts_with(config::nodes::GPU_KIND))
                .map(|(i, _)| i)
                .collect(),
            memory_kind: kinds.iter().position(|n| n == config::nodes::MEMORY_KIND),
            node_types: nodes.map(|n| n.nodes.iter().map(|&(_, kind)| kind).collect()),
            logged,
        }
    }

    /// What `record`'s job drew: on the one node type of a machine of processors, or on each
    /// node of `shares` at its type's values.
    fn draw(&self, record: &JobRecord, shares: Option<&NodeShares>) -> Draw {
        match (&self.node_types, shares) {
            (Some(types), Some(Some(held))) => {
                held.iter().fold(Draw::default(), |sum, (node, a)| {
                    let node_type = &self.setup.types[types[*node as usize]];
                    sum.plus(&node_type.draw(&Used {
                        cores: a.cpus,
                        gpus: a.gpus,
                        memory_mib: u64::from(a.memory),
                        whole_nodes: 0,
                    }))
                })
            }
            _ => {
                let extra = &record.extra;
                self.setup.types[0].draw(&Used {
                    cores: record.processors,
                    gpus: self.gpu_kinds.iter().map(|&k| extra.get(k)).sum(),
                    memory_mib: self.memory_kind.map_or(0, |k| u64::from(extra.get(k))),
                    whole_nodes: 0,
                })
            }
        }
    }

    /// Charges a finished job (`shares`: what it held on each node, on a machine of node
    /// types); returns its IT energy, J.
    pub(crate) fn add(&mut self, record: &JobRecord, shares: Option<&NodeShares>) -> Result<f64> {
        let draw = self.draw(record, shares);
        let logged = match self.setup.jobs {
            JobCharge::Logged => self.logged.get(&record.job_id).map(|&j| j as f64),
            JobCharge::Model => None,
        };
        let charge = self
            .meter
            .add(record.user, record.start, record.end, draw, logged)
            .map_err(|e| invalid!("{e}"))?;
        Ok(charge.it_joules)
    }

    /// The report over the makespan `window`.
    pub(crate) fn finish(self, window: Window) -> Result<PowerReport> {
        self.meter
            .finish(window.start, window.end)
            .map_err(|e| invalid!("{e}"))
    }
}

/// The values the measure catalogue reads of a power report (`metrics::MEASURES`' power
/// measures: `energy_kwh`, `peak_kw`, `carbon_kg`, ...; summary.json's `power`).
pub(crate) fn measured(report: &PowerReport) -> metrics::PowerUse {
    metrics::PowerUse {
        it_kwh: report.it_kwh,
        facility_kwh: report.facility_kwh,
        mean_kw: report.mean_kw,
        peak_kw: report.peak_kw,
        peak_facility_kw: report.peak_facility_kw,
        carbon_kg: report.carbon_kg,
        cost: report.cost,
        energy_per_job_kwh: report.energy_per_job_kwh,
    }
}

/// The `[power]` table of `file`, resolved against the machine.
pub(crate) fn setup(file: &Path, machine: PowerMachine<'_>) -> Result<PowerSetup> {
    PowerInput::load(file)?.resolve(machine)
}

/// The energies a sacct dump logged (`ConsumedEnergyRaw`, J) by the converted records' job
/// ids; none for an SWF trace, which has no such field.
pub(crate) fn logged_energies(trace: &Path, options: &TraceOptions) -> Result<HashMap<i64, u64>> {
    Ok(match crate::trace::open(trace, options)? {
        crate::trace::Opened::Sacct(dump) => (dump.converted.records.iter())
            .zip(&dump.converted.energies)
            .filter_map(|(record, joules)| Some((record.job_number, (*joules)?)))
            .collect(),
        crate::trace::Opened::Swf(_) => HashMap::new(),
    })
}

/// The power report of a finished replay or site run: every record charged, over `window`,
/// with the spans its nodes spent off, booting or shutting down when they power down
/// (`saving`); with each record's IT energy, J.
pub(crate) fn meter_records(
    mut run: PowerRun,
    records: &[JobRecord],
    shares: Option<&[NodeShares]>,
    window: Window,
    saving: Option<&power::NodeSaving>,
) -> Result<(PowerReport, Vec<f64>)> {
    // Records come in submission order, one per job that started: the k-th record is the
    // k-th job index with shares (a job held for good has neither), as nodes.csv pairs them.
    let mut started = shares.unwrap_or_default().iter().filter(|s| s.is_some());
    let mut energies = Vec::with_capacity(records.len());
    for record in records {
        energies.push(run.add(record, started.next())?);
    }
    if let Some(saving) = saving {
        run.meter.add_spans(saving.spans());
    }
    let mut report = run.finish(window)?;
    report.saving = saving.map(|s| s.report(window.start, window.end));
    Ok((report, energies))
}
