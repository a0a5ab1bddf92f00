//! A read dump as SWF: the mapping field by field (the docs' "Slurm accounting" page shows it as
//! a table), the header, and the id tables that keep names private.

use std::collections::HashMap;

use swf::{Header, Record};

use crate::log::{Job, SacctLog, WaitFrom};

/// The header key of the conversion's report (`; SacctInput: 120 lines read, 97 jobs kept`);
/// each reason's count is under `SacctInput.REASON` (`; SacctInput.step: 23 dropped: job step
/// ...`), so the SWF file says what was left out or changed, and a replay reports it.
pub const REPORT_KEY: &str = "SacctInput";

/// What SWF's processor fields count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unit {
    /// CPUs (`NCPUS`, `ReqCPUS`): a machine of processors.
    #[default]
    Cpus,
    /// Nodes (`NNodes`, `ReqNodes`): a machine of whole nodes, as sites that allocate nodes
    /// exclusively count it.
    Nodes,
}

/// A dump converted to SWF.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The SWF header: version, origin, time zone, start time, machine size, the conversion.
    pub header: Header,
    /// One record per kept job, in (submit, id) order (an array task under its array's id, by task).
    pub records: Vec<Record>,
    /// What each record's job requested of the machine's other resources
    /// ([`crate::SacctOptions::resources`]), by record: what SWF has no field for, handed to a
    /// replay beside the records.
    pub extras: Vec<job::Extra>,
    /// How each record's job lies on a machine of node types ([`crate::SacctOptions::nodes`];
    /// `Shape::ANY` each otherwise), by record.
    pub shapes: Vec<job::Shape>,
    /// The array each record's job is a task of, its task and the array's throttle
    /// (`job::ArrayTask::NONE` otherwise), the arrays numbered from 1 in order of first
    /// appearance, by record.
    pub array_tasks: Vec<job::ArrayTask>,
    /// The energy each record's job consumed as the dump logged it (`ConsumedEnergyRaw`, J;
    /// `None`: not logged), by record.
    pub energies: Vec<Option<u64>>,
    /// The machine size the header gives (the log's peak allocation, see [`convert`]).
    pub processors: u64,
    /// The advance reservation each record's job ran in (`Reservation`), numbered as
    /// [`Converted::reservation_names`] (empty: no job ran in one).
    pub reservations: Vec<job::ReservationId>,
    /// The reservations' names: [`job::ReservationId`] `k` is the `k`-th, from 1.
    pub reservation_names: Vec<String>,
}

/// Converts a read dump to SWF records.
///
/// | SWF field | from |
/// |---|---|
/// | 1 job number | `JobIDRaw` (recycled ids renumbered above the largest) |
/// | 2 submit time | `Submit` (or `Eligible` with [`WaitFrom::Eligible`]) minus the earliest of them |
/// | 3 wait time | `Start` - field 2's time; for a job that never started, `End` - that time (how long it waited before it was cancelled), else -1 |
/// | 4 run time | `ElapsedRaw`; -1 for a job that never started |
/// | 5 allocated processors | `NCPUS` (or `NNodes`); -1 if it never started |
/// | 6 average CPU time | -1 |
/// | 7 used memory | -1 |
/// | 8 requested processors | `ReqCPUS` (or `ReqNodes`) |
/// | 9 requested time | `TimelimitRaw` x 60 (or `Timelimit`); -1 if unlimited or the partition's |
/// | 10 requested memory | per requested processor, KB: `ReqTRES`'s `mem` / `ReqCPUS`, else `ReqMem` |
/// | 11 status | 1 `COMPLETED`, 5 `CANCELLED`, 0 any other end |
/// | 12 user ID | `User`, numbered in order of first appearance (users.csv) |
/// | 13 group ID | `Account`, numbered so (accounts.csv) |
/// | 14 executable number | -1 |
/// | 15 queue number | `QOS`, numbered so (qos.csv) |
/// | 16 partition number | `Partition`, numbered so (partitions.csv) |
/// | 17 preceding job number | the job its `SubmitLine`'s `--dependency` names, if in the log, else -1 |
/// | 18 think time from preceding job | -1 |
///
/// The header's `MaxProcs` is the largest number of processors (in `unit`) the log's jobs held
/// at once: sacct does not record the machine's size, so this is a lower bound (replay's
/// `--processors` gives the real one).
pub fn convert(log: &SacctLog, unit: Unit) -> Converted {
    let wait_from = log.options.wait_from;
    let origin = log
        .jobs
        .iter()
        .map(|j| j.wait_start(wait_from))
        .min()
        .unwrap_or(0);
    let ids: std::collections::HashSet<u64> = log.jobs.iter().map(|j| j.id).collect();
    let mut records = Vec::with_capacity(log.jobs.len());
    for job in &log.jobs {
        records.push(record(job, origin, wait_from, unit, &ids));
    }
    let (processors, nodes) = peaks(&log.jobs);
    let processors = match unit {
        Unit::Cpus => processors,
        Unit::Nodes => nodes,
    };
    let mut header = Header::new();
    header.push_field("Version", "2.2");
    header.push_field(
        "Computer",
        "a Slurm cluster (converted from its sacct accounting by sitesim)",
    );
    header.push_field("Installation", log.source_name.as_str());
    header.push_field("Conversion", conversion_words(log, unit));
    header.push_field("UnixStartTime", origin);
    let site = log.options.site_clock.unwrap_or(log.options.clock);
    header.push_field("TimeZoneString", site.name());
    if let Some(start) = chrono::DateTime::from_timestamp(origin, 0) {
        header.push_field("StartTime", start.format("%a %b %e %H:%M:%S UTC %Y"));
    }
    header.push_field("MaxJobs", records.len());
    header.push_field("MaxRecords", records.len());
    header.push_field(
        "MaxProcs",
        format!(
            "{processors} (the log's peak {}; sacct does not record the machine's size)",
            match unit {
                Unit::Cpus => "of allocated CPUs",
                Unit::Nodes => "of allocated nodes",
            }
        ),
    );
    header.push_field("MaxNodes", nodes);
    header.push_field(
        "Note",
        "users, accounts (groups), QOS (queues) and partitions are numbered as in the id tables written beside this file",
    );
    header.push_field(
        REPORT_KEY,
        format!(
            "{} lines read, {} jobs kept",
            log.report.lines, log.report.jobs
        ),
    );
    for (reason, count) in &log.report.counts {
        header.push_field(
            format!("{REPORT_KEY}.{}", reason.key()),
            format!("{count} {}: {}", reason.action(), reason.text()),
        );
    }
    Converted {
        header,
        records,
        extras: log.jobs.iter().map(|j| j.extra).collect(),
        shapes: log.jobs.iter().map(|j| j.shape).collect(),
        array_tasks: array_tasks(log),
        energies: log.jobs.iter().map(|j| j.energy).collect(),
        processors,
        reservations: if log.names.reservations.is_empty() {
            Vec::new()
        } else {
            // a dump with more than 65,535 reservations has the rest as none
            (log.jobs.iter())
                .map(|j| job::ReservationId(u16::try_from(j.reservation).unwrap_or(0)))
                .collect()
        },
        reservation_names: (log.names.reservations.iter())
            .map(|(_, name)| name.to_string())
            .collect(),
    }
}

/// [`Converted::array_tasks`]: each kept job's array, task and throttle, by record; the arrays
/// numbered from 1 in order of first appearance.
fn array_tasks(log: &SacctLog) -> Vec<job::ArrayTask> {
    let mut arrays: HashMap<u64, u32> = HashMap::new();
    log.jobs
        .iter()
        .map(|j| match j.array {
            Some((array, task)) => {
                let next = arrays.len() as u32 + 1;
                job::ArrayTask {
                    array: *arrays.entry(array).or_insert(next),
                    task,
                    limit: j.throttle.unwrap_or(0),
                }
            }
            None => job::ArrayTask::NONE,
        })
        .collect()
}

/// How the dump was read and converted, in one header line.
fn conversion_words(log: &SacctLog, unit: Unit) -> String {
    format!(
        "times in {}; wait from {}; requeued jobs' submit {}; processors are {}",
        log.options.clock.name(),
        match log.options.wait_from {
            WaitFrom::Submit => "Submit",
            WaitFrom::Eligible => "Eligible",
        },
        match log.options.requeued {
            crate::log::Requeued::FirstSubmit => "from their first run",
            crate::log::Requeued::LastSubmit => "from their last run",
        },
        match unit {
            Unit::Cpus => "CPUs",
            Unit::Nodes => "nodes",
        }
    )
}

fn record(
    job: &Job,
    origin: i64,
    wait_from: WaitFrom,
    unit: Unit,
    ids: &std::collections::HashSet<u64>,
) -> Record {
    let submit = job.wait_start(wait_from);
    let count = |cpus: u32, nodes: u32| -> i64 {
        let n = match unit {
            Unit::Cpus => cpus,
            Unit::Nodes => nodes,
        };
        if n == 0 { -1 } else { i64::from(n) }
    };
    let (wait, run, allocated) = match (job.start, job.elapsed) {
        (Some(start), Some(elapsed)) => (start - submit, elapsed, count(job.cpus, job.nodes)),
        _ => (job.end.map_or(-1, |end| (end - submit).max(0)), -1, -1),
    };
    let memory = job.memory_per_cpu.map_or(-1.0, |kb| match unit {
        Unit::Cpus => kb,
        Unit::Nodes => kb * f64::from(job.req_cpus.max(1)) / f64::from(job.req_nodes.max(1)),
    });
    let id = |n: u32| if n == 0 { -1 } else { i64::from(n) };
    Record {
        job_number: job.id as i64,
        submit_time: submit - origin,
        wait_time: wait,
        run_time: run,
        allocated_processors: allocated,
        average_cpu_time: -1.0,
        used_memory: -1.0,
        requested_processors: count(job.req_cpus, job.req_nodes),
        requested_time: job.time_limit.unwrap_or(-1),
        requested_memory: memory,
        status: job.state.swf_status(),
        user_id: id(job.user),
        group_id: id(job.account),
        executable: -1,
        queue: id(job.qos),
        partition: id(job.partition),
        preceding_job: job
            .dependency
            .filter(|d| ids.contains(d))
            .map_or(-1, |d| d as i64),
        think_time: -1,
    }
}

/// The most CPUs and nodes the jobs held at once (a job holds them from its start to its
/// start plus its elapsed time; at equal times ends come first).
pub fn peaks(jobs: &[Job]) -> (u64, u64) {
    let mut events: Vec<(i64, i64, i64)> = Vec::with_capacity(jobs.len() * 2);
    for job in jobs {
        if let (Some(start), Some(elapsed)) = (job.start, job.elapsed) {
            events.push((start, i64::from(job.cpus), i64::from(job.nodes)));
            events.push((start + elapsed, -i64::from(job.cpus), -i64::from(job.nodes)));
        }
    }
    events.sort_unstable_by_key(|&(t, cpus, _)| (t, cpus));
    let (mut cpus, mut nodes, mut peak_cpus, mut peak_nodes) = (0i64, 0i64, 0i64, 0i64);
    for (_, c, n) in events {
        cpus += c;
        nodes += n;
        peak_cpus = peak_cpus.max(cpus);
        peak_nodes = peak_nodes.max(nodes);
    }
    (peak_cpus as u64, peak_nodes as u64)
}

/// The id tables of a converted dump: (file name, CSV text with `id,name` rows). A site keeps
/// them to itself to publish the SWF without names.
pub fn id_tables(log: &SacctLog) -> Vec<(&'static str, Vec<(u32, String)>)> {
    let rows = |names: &crate::log::Names| -> Vec<(u32, String)> {
        names.iter().map(|(id, n)| (id, n.to_string())).collect()
    };
    vec![
        ("users.csv", rows(&log.names.users)),
        ("accounts.csv", rows(&log.names.accounts)),
        ("partitions.csv", rows(&log.names.partitions)),
        ("qos.csv", rows(&log.names.qos)),
    ]
}

/// The array of each kept job that belongs to one: SWF job number -> array job id (arrays are
/// natural batches for `sitesim fit`).
pub fn arrays(log: &SacctLog) -> HashMap<i64, u64> {
    log.jobs
        .iter()
        .filter_map(|j| j.array.map(|(array, _)| (j.id as i64, array)))
        .collect()
}

/// The header row of the dump [`write_dump`] writes: the columns the docs ask sites for, in
/// their order (`SubmitLine` last, as it may hold `|`).
pub const DUMP_COLUMNS: &str = "JobID|JobIDRaw|User|Account|Partition|QOS|Submit|Eligible|Start|End|ElapsedRaw|TimelimitRaw|Timelimit|NCPUS|NNodes|ReqCPUS|ReqNodes|ReqMem|ReqTRES|AllocTRES|State|Restarts|Priority|Flags|Reason|SubmitLine";

/// Writes SWF records as the `sacct --parsable2` dump a Slurm site would have of them (UTC
/// times from `unix_start`; users `u<id>`, accounts `g<id>`, partitions `p<id>`; time limits
/// rounded up to whole minutes, as Slurm keeps them; status 5 as `CANCELLED`, 0 as `FAILED`, a
/// job without a runtime as cancelled before it started). For tests, benchmarks and trying
/// the sacct path on a public trace: reading it back gives the same jobs, with estimates
/// rounded up to minutes.
pub fn write_dump(
    records: &[Record],
    unix_start: i64,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    writeln!(out, "{DUMP_COLUMNS}")?;
    let time = |t: i64| -> String {
        chrono::DateTime::from_timestamp(unix_start + t, 0).map_or_else(
            || "Unknown".to_string(),
            |d| d.format("%Y-%m-%dT%H:%M:%S").to_string(),
        )
    };
    let mut line = String::with_capacity(256);
    for r in records {
        use std::fmt::Write as _;
        line.clear();
        let id = r.job_number;
        let cpus = if r.allocated_processors > 0 {
            r.allocated_processors
        } else {
            r.requested_processors.max(1)
        };
        let requested = if r.requested_processors > 0 {
            r.requested_processors
        } else {
            cpus
        };
        let named = |prefix: &str, n: i64| {
            if n < 0 {
                String::new()
            } else {
                format!("{prefix}{n}")
            }
        };
        let (limit_raw, limit) = if r.requested_time > 0 {
            let minutes = (r.requested_time + 59) / 60;
            (
                minutes.to_string(),
                format!(
                    "{}{:02}:{:02}:00",
                    if minutes >= 1440 {
                        format!("{}-", minutes / 1440)
                    } else {
                        String::new()
                    },
                    minutes % 1440 / 60,
                    minutes % 60
                ),
            )
        } else {
            ("UNLIMITED".to_string(), "UNLIMITED".to_string())
        };
        let submit = time(r.submit_time);
        let ran = r.run_time >= 0 && r.wait_time >= 0;
        let (start, end, elapsed, ncpus, state) = if ran {
            let start = r.submit_time + r.wait_time;
            (
                time(start),
                time(start + r.run_time),
                r.run_time,
                cpus,
                match r.status {
                    0 => "FAILED",
                    5 => "CANCELLED by 0",
                    _ => "COMPLETED",
                },
            )
        } else {
            (
                "Unknown".to_string(),
                time(r.submit_time + r.wait_time.max(0)),
                0,
                0,
                "CANCELLED by 0",
            )
        };
        let tres = format!("billing={requested},cpu={requested},node=1");
        let _ = write!(
            line,
            "{id}|{id}|{}|{}|{}|normal|{submit}|{submit}|{start}|{end}|{elapsed}|{limit_raw}|{limit}|{ncpus}|1|{requested}|1||{tres}|{}|{state}|0||SchedMain|None|sbatch -n {requested} job.sh",
            named("u", r.user_id),
            named("g", r.group_id),
            match r.partition {
                p if p >= 0 => format!("p{p}"),
                _ => "batch".to_string(),
            },
            if ran {
                format!("billing={ncpus},cpu={ncpus},node=1")
            } else {
                String::new()
            },
        );
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}
