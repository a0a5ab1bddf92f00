//! Trace files in either format: SWF, or a Slurm accounting dump (`sacct --parsable2`) that is
//! read and converted to SWF records on the way in ([`sacct`]). Replay, replay with feedback,
//! fitting and conversion all open traces here, so a sacct dump is replayed exactly as the SWF
//! its conversion writes.

use std::path::Path;

use config::choices::FormatChoice;
use config::trace::TraceOptions;
use config::{Result, ScenarioError, invalid};
use engine::{Records, Replay, ReplayReader};
use swf::{Header, Record};

/// A sacct dump read and converted.
#[derive(Debug, Clone)]
pub struct SacctTrace {
    /// The dump as read: its jobs, names and report.
    pub log: sacct::SacctLog,
    /// Its SWF header and records.
    pub converted: sacct::Converted,
}

/// A trace file opened once and read in its format: what every reader of traces starts from,
/// so that a pipe, `/dev/stdin` or `<(zcat ...)` gives the same jobs as the file.
pub enum Opened {
    /// An SWF file, its header read and its records still to come.
    Swf(Box<swf::SwfReader<swf::Input>>),
    /// A sacct dump, read whole and converted.
    Sacct(Box<SacctTrace>),
}

/// Opens `path` and reads it in its format (by `options.format`, or told from its first line).
pub fn open(path: &Path, options: &TraceOptions) -> Result<Opened> {
    let input = swf::Input::open(path).map_err(engine::ReplayError::from)?;
    open_input(input, options)
}

/// [`open`] of an input opened elsewhere (hashed as it is read, say).
pub fn open_input(mut input: swf::Input, options: &TraceOptions) -> Result<Opened> {
    let format = config::trace::resolve(options.format, &mut input)?;
    if format != FormatChoice::Swf {
        return Ok(Opened::Sacct(Box::new(read_log(input, format, options)?)));
    }
    if let Some(first) = options.sacct_only_given().first() {
        return Err(invalid!(
            "{}: {} applies to Slurm accounting dumps (sacct), and this is an SWF file",
            input.name(),
            config::naming::key(first)
        ));
    }
    Ok(Opened::Swf(Box::new(
        swf::SwfReader::from_input(input).map_err(engine::ReplayError::from)?,
    )))
}

/// Reads and converts a sacct dump.
pub fn read_sacct(input: swf::Input, options: &TraceOptions) -> Result<SacctTrace> {
    read_log(input, FormatChoice::Sacct, options)
}

/// Reads and converts a sacct dump or a modern trace (`format`: not SWF), its header's
/// `Computer` naming where a modern trace comes from.
fn read_log(input: swf::Input, format: FormatChoice, options: &TraceOptions) -> Result<SacctTrace> {
    let name = input.name().to_string();
    let log = config::trace::read_log(input, format, options)?;
    let mut converted = sacct::convert(&log, options.processor_unit.unit());
    if let FormatChoice::Trace(format) = format {
        converted.header.set_field("Computer", format.computer());
    }
    for line in log.report.lines() {
        tracing::info!("{name}: {}", line.trim_start());
    }
    Ok(SacctTrace { log, converted })
}

impl Opened {
    /// The trace's header and its records (a sacct dump's converted; an SWF file's streamed).
    /// A file whose first line is not SWF (binary data, say) has no header either: its error
    /// is what is wrong with that line, not a header field it lacks.
    pub fn records(self) -> Result<(Header, Records<'static>)> {
        self.records_and_extras()
            .map(|(header, records, _)| (header, records))
    }

    /// [`Opened::records`], with what each record's job asks of the machine's other
    /// resources ([`TraceOptions::resources`]; a sacct dump's `ReqTRES`; none in SWF) and how
    /// it lies on a machine of node types ([`TraceOptions::nodes`]; a sacct dump's nodes, GPU
    /// type and constraint; any nodes in SWF).
    pub fn records_and_extras(self) -> Result<(Header, Records<'static>, Requests)> {
        Ok(match self {
            Opened::Sacct(trace) => {
                let SacctTrace { converted, .. } = *trace;
                (
                    converted.header,
                    Box::new(converted.records.into_iter().map(Ok)),
                    Requests {
                        extras: converted.extras,
                        shapes: converted.shapes,
                        array_tasks: converted.array_tasks,
                        reservations: converted.reservations,
                        reservation_names: converted.reservation_names,
                    },
                )
            }
            Opened::Swf(mut reader) => {
                if reader.header().lines().is_empty() && reader.first_line_error().is_some() {
                    if let Some(Err(e)) = reader.next() {
                        return Err(engine::ReplayError::Swf(e).into());
                    }
                }
                (
                    reader.header().clone(),
                    Box::new(reader),
                    Requests::default(),
                )
            }
        })
    }
}

/// What each record's job asks of the machine beyond SWF's fields, by record: amounts of the
/// other resources, and how it lies on a machine of node types.
#[derive(Debug, Clone, Default)]
pub struct Requests {
    /// Amounts of the machine's other resources (empty: none asked).
    pub extras: Vec<job::Extra>,
    /// Node count, GPU type and features (empty: any nodes).
    pub shapes: Vec<job::Shape>,
    /// The throttled job array of each (empty: none).
    pub array_tasks: Vec<job::ArrayTask>,
    /// The advance reservation each ran in (empty: none), numbered as `reservation_names`.
    pub reservations: Vec<job::ReservationId>,
    /// The reservations' names, by [`job::ReservationId`] from 1.
    pub reservation_names: Vec<String>,
}

/// The records a trace yields, as a replay reads them.
pub(crate) type RecordsOf = Records<'static>;

/// The trace's header, its records and what they ask beyond SWF's fields, as a replay reads
/// them: [`Opened::records_and_extras`], and for an SWF file that `sitesim convert` wrote, the
/// side table beside it when the run needs it ([`crate::requests`]).
fn records_for_replay(
    path: &Path,
    options: &TraceOptions,
) -> Result<(Header, RecordsOf, Requests)> {
    let opened = open(path, options)?;
    let swf = matches!(opened, Opened::Swf(_));
    let (mut header, records, requests) = opened.records_and_extras()?;
    if !swf {
        return Ok((header, records, requests));
    }
    Ok(
        match crate::requests::read_beside(path, &mut header, records, options)? {
            Ok((records, requests)) => (header, Box::new(records.into_iter().map(Ok)), requests),
            Err(records) => (header, records, requests),
        },
    )
}

/// The trace's header and its records, whatever its format (a sacct dump read whole and
/// converted; an SWF file streamed).
pub fn records(path: &Path, options: &TraceOptions) -> Result<(Header, Records<'static>)> {
    open(path, options)?.records()
}

/// A replay reader of the trace (its machine size from the header unless `processors`).
pub fn replay_reader(
    path: &Path,
    options: &TraceOptions,
    processors: Option<u32>,
) -> Result<ReplayReader<Records<'static>>> {
    let (header, records, requests) = records_for_replay(path, options)?;
    let reader =
        ReplayReader::from_records(path.display().to_string(), header, records, processors)?
            .with_extras(requests.extras, options.resource_amounts())
            .with_shapes(requests.shapes)
            .with_array_tasks(requests.array_tasks)
            .with_reservations(requests.reservations, requests.reservation_names);
    check_machine_size(path, processors, reader.processors())?;
    Ok(reader)
}

/// Refuses a machine larger than [`config::limits::MAX_PROCESSORS`], naming where its size came
/// from (the flag, or the trace's header).
fn check_machine_size(path: &Path, given: Option<u32>, processors: u32) -> Result<()> {
    if processors <= config::limits::MAX_PROCESSORS {
        return Ok(());
    }
    Err(match given {
        Some(_) => invalid!(
            "{} must be at most {} (docs/reference/limits.md)",
            config::naming::key_value("processors", processors),
            config::limits::MAX_PROCESSORS
        ),
        None => invalid!(
            "{}: the header's machine size, {processors} processors, is more than {} (docs/reference/limits.md); give --processors",
            path.display(),
            config::limits::MAX_PROCESSORS
        ),
    })
}

/// The whole trace as a replay.
pub fn read_replay(path: &Path, options: &TraceOptions, processors: Option<u32>) -> Result<Replay> {
    read_replay_noting(path, options, processors, &mut |_| {})
}

/// [`read_replay`], handing `note` every record as it is read (what a replay needs of the
/// trace beyond its jobs, such as the logged waits of replay with feedback, taken in the one
/// reading of the file).
pub(crate) fn read_replay_noting(
    path: &Path,
    options: &TraceOptions,
    processors: Option<u32>,
    note: &mut dyn FnMut(&Record),
) -> Result<Replay> {
    let (header, records, requests) = records_for_replay(path, options)?;
    let records = records.inspect(|record| {
        if let Ok(record) = record {
            note(record);
        }
    });
    let reader =
        ReplayReader::from_records(path.display().to_string(), header, records, processors)?
            .with_extras(requests.extras, options.resource_amounts())
            .with_shapes(requests.shapes)
            .with_array_tasks(requests.array_tasks)
            .with_reservations(requests.reservations, requests.reservation_names);
    check_machine_size(path, processors, reader.processors())?;
    Ok(reader.read()?)
}

/// The reader `sitesim fit` uses for each trace: SWF as it is, a sacct dump converted (its
/// calendar in the dump's zone, from the converted header). Each file is read once, and
/// hashed as it is read.
pub fn fit_reader(
    options: &TraceOptions,
) -> impl Fn(&Path) -> std::result::Result<fit::TraceJobs, fit::FitError> + Sync + '_ {
    move |path: &Path| {
        let fail = |e: ScenarioError| fit::FitError::Unreadable {
            trace: path.display().to_string(),
            kind: io_kind(&e),
            error: e.to_string(),
        };
        let (input, digest) = fit::open_hashed(path)?;
        match open_input(input, options).map_err(fail)? {
            Opened::Swf(reader) => {
                let mut header = reader.header().clone();
                // the site's zone, if given, replaces the header's for the daily cycle
                let site = options.site_clock().map_err(fail)?;
                if let Some(site) = site {
                    header.set_field("TimeZoneString", site.name());
                }
                let jobs = fit::read_records(path, String::new(), header, reader)?;
                Ok(fit::TraceJobs {
                    sha256: digest.finish(),
                    ..jobs
                })
            }
            Opened::Sacct(trace) => {
                let SacctTrace { converted, .. } = *trace;
                fit::read_records(
                    path,
                    digest.finish(),
                    converted.header,
                    converted.records.into_iter().map(Ok),
                )
            }
        }
    }
}

/// The association tree as the Slurm model's `[scheduler.slurm]` keys (`slurm-tree.toml`): an
/// account table per account (parents first), its users' jobs selected by the account's id in
/// the converted SWF (the jobs' group), and the users' shares by user id (the first
/// association's, as the model gives a user one share whatever the account).
pub(crate) fn slurm_tree(tree: &sacct::AssocTree, names: &sacct::NameTables) -> Result<String> {
    let id = |table: &sacct::Names, name: &str| {
        table
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(id, _)| i64::from(id))
    };
    let keys = config::accounting::tree_section(
        tree,
        |account| id(&names.accounts, account),
        |user| id(&names.users, user),
    )?;
    let section = config::slurm::SlurmSection {
        tree: Some(keys.tree),
        user_shares: (!keys.user_shares.is_empty()).then_some(keys.user_shares),
        members: (!keys.members.is_empty()).then_some(keys.members),
        ..Default::default()
    };
    #[derive(serde::Serialize)]
    struct Scheduler {
        slurm: config::slurm::SlurmSection,
    }
    #[derive(serde::Serialize)]
    struct File {
        scheduler: Scheduler,
    }
    let text = toml::to_string(&File {
        scheduler: Scheduler { slurm: section },
    })
    .map_err(|e| invalid!("slurm-tree.toml: {e}"))?;
    Ok(format!(
        "# The site's association tree for sitesim's Slurm model ({}): add these keys to a\n\
         # replay file's [scheduler.slurm]. Each account's jobs are those of its id in trace.swf\n\
         # (accounts.csv); members are the user associations, there from the start with their own\n\
         # shares (user_shares: a user's first association's, for other accounts). In a\n\
         # population file, give [[groups]] `accounts = \"tree\"` (or a list of account names):\n\
         # their simulated users are dealt over these accounts in proportion to the members, and\n\
         # replace the members and user_shares (the dump's users) with one share each.\n{text}",
        if tree.derived {
            "derived from the log: every account and user with one share"
        } else {
            "from sacctmgr"
        }
    ))
}

/// The kind of the I/O error behind `error`, if one is (a trace that cannot be opened).
fn io_kind(error: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        if let Some(swf::SwfError::Open { error, .. }) = e.downcast_ref::<swf::SwfError>() {
            return Some(error.kind());
        }
        let inner = match e.downcast_ref::<ScenarioError>() {
            Some(ScenarioError::Trace(engine::ReplayError::Swf(swf))) => Some(swf),
            Some(ScenarioError::Sacct(sacct::SacctError::Input(swf))) => Some(swf),
            Some(ScenarioError::Traces(traces::TraceError::Input(swf))) => Some(swf),
            _ => None,
        };
        if let Some(swf::SwfError::Open { error, .. }) = inner {
            return Some(error.kind());
        }
        cause = e.source();
    }
    None
}

/// The files `sitesim convert` writes for a sacct dump, by name: `trace.swf` (the conversion,
/// its header holding what was dropped or altered), the id tables `users.csv`, `accounts.csv`,
/// `partitions.csv` and `qos.csv` (`id,name`: keep them private to publish the SWF without
/// names), `associations.csv` (the association tree: read from `assoc`, a `sacctmgr -P show
/// assoc` dump, or derived from the log), `conversion.csv` (reason, action, count, what) and
/// `requests.csv` (each job's memory, GPUs, nodes, GPU type, constraint and partition:
/// [`crate::requests`]; complete when the dump was read with
/// [`crate::requests::conversion_options`]).
pub fn conversion_files(
    trace: &SacctTrace,
    assoc: Option<&Path>,
) -> Result<Vec<(&'static str, Vec<u8>)>> {
    let mut files = Vec::new();
    let mut swf_bytes = Vec::new();
    crate::output::write_swf(
        &trace.converted.header,
        &trace.converted.records,
        &mut swf_bytes,
    )?;
    files.push(("trace.swf", swf_bytes));
    let csv_error = |what: &str| {
        let what = what.to_string();
        move |e: csv::Error| crate::output::csv_error(&what, e)
    };
    for (name, rows) in sacct::id_tables(&trace.log) {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(["id", "name"]).map_err(csv_error(name))?;
        for (id, text) in rows {
            w.write_record([id.to_string(), text])
                .map_err(csv_error(name))?;
        }
        files.push((name, finish_csv(w, name)?));
    }
    let tree = match assoc {
        Some(path) => sacct::AssocTree::read(path)?,
        None => sacct::AssocTree::derived(&trace.log),
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    let fail = csv_error("associations.csv");
    w.write_record([
        "account",
        "parent",
        "user",
        "shares",
        "qos",
        "account_id",
        "user_id",
        "source",
    ])
    .map_err(&fail)?;
    let find = |names: &sacct::Names, name: &str| {
        names
            .iter()
            .find(|(_, n)| *n == name)
            .map_or(String::new(), |(id, _)| id.to_string())
    };
    for a in &tree.associations {
        let shares = match a.shares {
            sacct::Shares::Count(n) => n.to_string(),
            sacct::Shares::Parent => "parent".to_string(),
        };
        let user = a.user.clone().unwrap_or_default();
        w.write_record([
            a.account.clone(),
            a.parent.clone().unwrap_or_default(),
            user.clone(),
            shares,
            a.qos.join(","),
            find(&trace.log.names.accounts, &a.account),
            if user.is_empty() {
                String::new()
            } else {
                find(&trace.log.names.users, &user)
            },
            if tree.derived {
                "derived from the log".to_string()
            } else {
                "sacctmgr".to_string()
            },
        ])
        .map_err(&fail)?;
    }
    files.push(("associations.csv", finish_csv(w, "associations.csv")?));
    files.push((
        "slurm-tree.toml",
        slurm_tree(&tree, &trace.log.names)?.into_bytes(),
    ));
    let mut w = csv::Writer::from_writer(Vec::new());
    let fail = csv_error("conversion.csv");
    w.write_record(["reason", "action", "count", "what"])
        .map_err(&fail)?;
    w.write_record([
        "lines",
        "read",
        &trace.log.report.lines.to_string(),
        "job lines read after the header",
    ])
    .map_err(&fail)?;
    w.write_record([
        "jobs",
        "kept",
        &trace.log.report.jobs.to_string(),
        "jobs in trace.swf",
    ])
    .map_err(&fail)?;
    for (reason, count) in &trace.log.report.counts {
        w.write_record([
            reason.key(),
            reason.action(),
            &count.to_string(),
            reason.text(),
        ])
        .map_err(&fail)?;
    }
    files.push(("conversion.csv", finish_csv(w, "conversion.csv")?));
    files.push((crate::requests::FILE, crate::requests::write(trace)?));
    Ok(files)
}

fn finish_csv(w: csv::Writer<Vec<u8>>, name: &str) -> Result<Vec<u8>> {
    w.into_inner()
        .map_err(|e| crate::output::io_error(name, e.into_error()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use config::choices::WaitFromChoice;

    fn fixture(name: &str) -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/sacct")
            .join(name)
    }

    #[test]
    fn an_array_is_one_batch_for_fit() {
        let options = TraceOptions::default();
        let read = fit_reader(&options);
        let trace = read(&fixture("arrays.txt")).unwrap();
        assert_eq!(trace.jobs.len(), 3);
        let samples = fit::sessions::analyze(&trace, &fit::SessionRules::default());
        // the three tasks (run two at a time by the array_task) are one batch of three
        assert_eq!(samples.batch_widths, vec![3]);
    }

    #[test]
    fn sacct_options_are_refused_for_swf_and_the_window_is_checked() {
        let swf = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz");
        let options = TraceOptions {
            wait_from: WaitFromChoice::Eligible,
            ..TraceOptions::default()
        };
        let e = open(&swf, &options).err().unwrap().to_string();
        assert!(
            e.contains("wait_from applies to Slurm accounting dumps"),
            "{e}"
        );
        let window = TraceOptions {
            since: Some("2024-02-02".into()),
            until: Some("2024-02-01".into()),
            ..TraceOptions::default()
        };
        let e = window.sacct_options().unwrap_err().to_string();
        assert!(e.contains("until must be after since"), "{e}");
        let bad = TraceOptions {
            since: Some("yesterday".into()),
            ..TraceOptions::default()
        };
        assert!(
            bad.sacct_options()
                .unwrap_err()
                .to_string()
                .contains("since \"yesterday\"")
        );
    }
}
