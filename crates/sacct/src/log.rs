//! Reading a `sacct --parsable2` dump into jobs, with every known pitfall handled: job steps,
//! grouped array ranges, requeues and recycled ids, heterogeneous jobs, local times and
//! daylight saving, unknown times, the forms of time limits and memory, `|` inside the last
//! field, jobs that never started, and a submit window. Whatever is dropped or altered is
//! counted by reason ([`Report`]).

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::Path;

use crate::error::SacctError;
use crate::values::{self, Clock, MemoryPer, Placed, State};

/// Which time a job's wait starts from (and so the SWF submit time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WaitFrom {
    /// `Submit`: when the user submitted it (the user's view; SWF's submit time).
    #[default]
    Submit,
    /// `Eligible`: when it could first start (after holds, `--begin` and dependencies; what
    /// Slurm's age factor counts from). Jobs without an eligible time use their submit time.
    Eligible,
}

/// What a requeued job's submit time is, when a dump made with `--duplicates` holds its runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Requeued {
    /// The first run's submit time (Slurm resets it at a requeue): the wait counts from when the
    /// user submitted the job, across its failed runs. The last run is the job.
    #[default]
    FirstSubmit,
    /// The last run's own (reset) submit time: the wait of the run that ended the job.
    LastSubmit,
}

/// How a dump is read.
#[derive(Debug, Clone, Default)]
pub struct SacctOptions {
    /// The zone of the dump's local times (`--tz`; UTC unless given).
    pub clock: Clock,
    /// The site's zone (`--site-tz`), recorded as the converted trace's `TimeZoneString`, in
    /// which the daily and weekly cycles are read (`None`: the dump's zone, [`Self::clock`]).
    /// A dump made with `TZ=UTC`, as the docs ask, has UTC times; its site is rarely in UTC.
    pub site_clock: Option<Clock>,
    /// Which time starts a job's wait.
    pub wait_from: WaitFrom,
    /// The submit time of a requeued job.
    pub requeued: Requeued,
    /// Keep only jobs submitted at or after this time (Unix seconds), as sacct's `-S`.
    pub since: Option<i64>,
    /// Keep only jobs submitted before this time (Unix seconds), as sacct's `-E`.
    pub until: Option<i64>,
    /// The machine's resources besides processors, by their TRES names (`gres/gpu`,
    /// `license/matlab`, ...), in the order of [`job::Extra`]'s amounts: each job's amount of
    /// each is read from its `ReqTRES` ([`Job::extra`]; 0 where the job asks for none). `mem`
    /// is read as MiB for the whole job (with its unit: `mem=32G` is 32768).
    pub resources: Vec<String>,
    /// The GPU types and node features of a machine of node types: when given, each job's
    /// [`Job::shape`] is read (nodes, GPU type, constraint), and a GPU type or feature the
    /// machine lacks is an error naming the line.
    pub nodes: Option<NodeNames>,
    /// Names the id tables number first, in order, before those the dump adds: a site's
    /// users, accounts, partitions and QOS as read before the dump (`sacctmgr`, slurm.conf),
    /// so that a model configured from them selects the dump's jobs by their numbers.
    pub first_names: FirstNames,
}

/// Names numbered first in a dump's id tables ([`SacctOptions::first_names`]): name i of a list
/// is id i + 1 of its table (the SWF user, group, partition or queue number); the names the dump
/// has beyond them follow in order of first appearance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FirstNames {
    /// Users (`User`).
    pub users: Vec<String>,
    /// Accounts (`Account`, the SWF group).
    pub accounts: Vec<String>,
    /// Partitions (`Partition`).
    pub partitions: Vec<String>,
    /// QOS (`QOS`, the SWF queue).
    pub qos: Vec<String>,
}

/// The names a machine of node types gives its GPU types and node features
/// ([`SacctOptions::nodes`]), in the order of `job::Shape`'s numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeNames {
    /// GPU types (`a100`): type i is `Shape::gpu_type` i + 1.
    pub gpu_types: Vec<String>,
    /// Node features (`Features=` of slurm.conf): feature i is bit i of `Shape::features`.
    pub features: Vec<String>,
    /// The machine's partitions: partition i is numbered i + 1 in the dump's partition table
    /// (the names the dump has beyond them follow), so that a job's partition number names
    /// the machine's partition of that name.
    pub partitions: Vec<String>,
}

/// Names seen in a column, numbered from 1 in order of first appearance.
#[derive(Debug, Clone, Default)]
pub struct Names {
    /// Ids by name (a fast hash: the order of ids is the order of first appearance, whatever
    /// the hash).
    ids: rustc_hash::FxHashMap<String, u32>,
    names: Vec<String>,
    /// The id looked up last (consecutive lines mostly repeat a partition, QOS or user).
    last: u32,
}

/// Equal when they hold the same names in the same order (the lookup cache aside).
impl PartialEq for Names {
    fn eq(&self, other: &Names) -> bool {
        self.names == other.names
    }
}

impl Names {
    /// The id of `name`, numbering it if new. Empty names are id 0 ("unknown").
    pub fn id(&mut self, name: &str) -> u32 {
        if name.is_empty() {
            return 0;
        }
        if self.last != 0 && self.names[self.last as usize - 1] == name {
            return self.last;
        }
        let id = match self.ids.get(name) {
            Some(&id) => id,
            None => {
                self.names.push(name.to_string());
                let id = self.names.len() as u32;
                self.ids.insert(name.to_string(), id);
                id
            }
        };
        self.last = id;
        id
    }

    /// The name of `id` (empty for 0 or an unknown id).
    pub fn name(&self, id: u32) -> &str {
        id.checked_sub(1)
            .and_then(|i| self.names.get(i as usize))
            .map_or("", String::as_str)
    }

    /// Every (id, name), in id order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &str)> {
        self.names
            .iter()
            .enumerate()
            .map(|(i, n)| (i as u32 + 1, n.as_str()))
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The name tables of a dump: users, accounts, partitions, QOS, and the reasons and flags
/// columns' values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NameTables {
    /// `User`.
    pub users: Names,
    /// `Account`.
    pub accounts: Names,
    /// `Partition`.
    pub partitions: Names,
    /// `QOS`.
    pub qos: Names,
    /// `Reason`.
    pub reasons: Names,
    /// `Flags`.
    pub flags: Names,
    /// GPU types of the typed `gres/gpu:TYPE` entries of `AllocTRES` / `ReqTRES`.
    pub gpu_types: Names,
    /// The GPU types of the jobs' [`NamedShape`]s (the type their shape asks for).
    pub shape_gpu_types: Names,
    /// The constraints of the jobs' [`NamedShape`]s (`Constraints`, trimmed).
    pub constraints: Names,
    /// `Reservation`: the advance reservations jobs ran in.
    pub reservations: Names,
}

/// How a job asks to lie on a machine of node types, by name and whatever the machine (what
/// `sitesim convert` keeps beside the SWF, to be resolved against a machine when replayed):
/// the parts of [`Job::shape`] before they are looked up in a machine's tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NamedShape {
    /// Its node count (`NNodes` if it started and gives one, else `ReqNodes`; 0 if unknown).
    pub nodes: u32,
    /// The GPU type its shape asks for, an id of [`NameTables::shape_gpu_types`] (the first
    /// typed `gres/gpu:TYPE` entry of `AllocTRES` if it started, else of `ReqTRES`, as
    /// [`Job::shape`] reads it; 0: any).
    pub gpu_type: u32,
    /// Its constraint as the dump gives it (`Constraints`, trimmed), an id of
    /// [`NameTables::constraints`] (0: none). Not checked: a constraint the model does not
    /// take (`|`, `[...]`, `*N`, `!`) is kept as it is.
    pub constraint: u32,
}

/// One job of a dump, as read: times in Unix seconds (UTC), durations in seconds, names as ids
/// of the dump's [`NameTables`].
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The dump's line it came from (the first line, for merged or requeued jobs).
    pub line: u64,
    /// `JobIDRaw`: the job's own id (an array task's own id, not the array's).
    pub id: u64,
    /// The array's job id and this task's index, for an array task (`123_4`).
    pub array: Option<(u64, u32)>,
    /// The component count of a heterogeneous job merged into this one (0: not one).
    pub het_components: u32,
    /// User id (0: unknown).
    pub user: u32,
    /// Account id (0: unknown).
    pub account: u32,
    /// Partition id (0: unknown; a job submitted to several has the one it ran in).
    pub partition: u32,
    /// QOS id (0: unknown).
    pub qos: u32,
    /// `Submit` (for a requeued job, by [`Requeued`]).
    pub submit: i64,
    /// `Eligible`, if known.
    pub eligible: Option<i64>,
    /// `Start`, if it started.
    pub start: Option<i64>,
    /// `End` (for a job that never started: when it was cancelled or failed), if known.
    pub end: Option<i64>,
    /// Seconds it ran (`ElapsedRaw`, else `Elapsed`, else end - start); `None` if it never ran.
    pub elapsed: Option<i64>,
    /// Its time limit, seconds (`TimelimitRaw`, else `Timelimit`); `None` if unlimited or the
    /// partition's.
    pub time_limit: Option<i64>,
    /// Allocated CPUs (`NCPUS`/`AllocCPUS`; whole nodes for exclusive jobs).
    pub cpus: u32,
    /// Allocated nodes (`NNodes`).
    pub nodes: u32,
    /// Requested CPUs (`ReqCPUS`).
    pub req_cpus: u32,
    /// Requested nodes (`ReqNodes`).
    pub req_nodes: u32,
    /// Requested memory per requested CPU, kilobytes (from `ReqTRES`'s `mem`, else `ReqMem`).
    pub memory_per_cpu: Option<f64>,
    /// What it requested of the resources of [`SacctOptions::resources`] (`ReqTRES`'s entries
    /// of those names, whole counts; `mem` in MiB), by their order there.
    pub extra: job::Extra,
    /// GPUs it requested (`ReqTRES`'s `gres/gpu`; 0 where it names none).
    pub gpus: u32,
    /// The type of its GPUs, an id of [`NameTables::gpu_types`] (the typed `gres/gpu:TYPE`
    /// entry of `AllocTRES` if it started, else of `ReqTRES`; 0: none or untyped).
    pub gpu_type: u32,
    /// How it lies on a machine of node types ([`SacctOptions::nodes`]; `Shape::ANY`
    /// otherwise): its nodes (`NNodes` if it started, else `ReqNodes`), GPU type (the typed
    /// `gres/gpu:TYPE` entry of `AllocTRES`, else `ReqTRES`) and features (`Constraints`).
    pub shape: job::Shape,
    /// The same by name, whatever the machine ([`NamedShape`]).
    pub named: NamedShape,
    /// Its final state.
    pub state: State,
    /// `Restarts`: how many times it was requeued.
    pub restarts: u32,
    /// `ConsumedEnergyRaw`: the energy its nodes consumed while it ran, J, as Slurm's
    /// acct_gather_energy plugin measured it (`None`: not in the dump, 0, or unknown).
    pub energy: Option<u64>,
    /// `Priority` when the dump was made (or at its end).
    pub priority: Option<i64>,
    /// `Reason` id (the last reason it waited for).
    pub reason: u32,
    /// `Flags` id (`SchedMain`, `SchedBackfill`, ...).
    pub flags: u32,
    /// `Reservation` id: the advance reservation it ran in (0: none).
    pub reservation: u32,
    /// The job its submit line depends on (`--dependency=afterok:ID`), by raw id.
    pub dependency: Option<u64>,
    /// For an array task: its array's throttle (`--array=1-8%2` in its submit line), the most
    /// tasks of the array that run at once.
    pub throttle: Option<u32>,
}

impl Job {
    /// When its wait starts: submit, or eligible by `wait_from` (submit if not eligible yet).
    pub fn wait_start(&self, wait_from: WaitFrom) -> i64 {
        match wait_from {
            WaitFrom::Submit => self.submit,
            WaitFrom::Eligible => self.eligible.map_or(self.submit, |e| e.max(self.submit)),
        }
    }

    /// Whether it ran (has a start and a runtime).
    pub fn started(&self) -> bool {
        self.start.is_some()
    }
}

/// Why a line was dropped or a job altered or flagged, as [`Report`] counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    /// A job step (`.batch`, `.extern`, `.0`): not a job. Dropped.
    Step,
    /// A grouped line of array tasks that never started (`123_[5-100%10]`). Dropped.
    ArrayRange,
    /// A federated sibling that ran elsewhere (`REVOKED`). Dropped.
    Revoked,
    /// Pending, running or suspended when the dump was made. Dropped.
    NotEnded,
    /// Submitted outside the `since`/`until` window. Dropped.
    OutsideWindow,
    /// A local time that does not exist in the zone (the hour skipped when daylight saving
    /// starts). Dropped.
    NonexistentLocalTime,
    /// A local time that happens twice (the hour repeated when daylight saving ends): the
    /// earlier reading is taken. Altered.
    AmbiguousLocalTime,
    /// Started before its wait began (local times read in the wrong zone? `--tz`). Dropped.
    NegativeWait,
    /// An earlier run of a requeued job (with `--duplicates`). Dropped.
    RequeuedRun,
    /// A requeued job whose submit time was taken from its first run. Altered.
    RequeuedFirstSubmit,
    /// A job requeued (`Restarts` > 0) in a dump without `--duplicates`: its submit is the
    /// requeue's, its earlier runs are not in the dump. Kept as is.
    RequeuedWithoutDuplicates,
    /// An id used by an earlier, different job (ids recycled): renumbered. Altered.
    RecycledId,
    /// A component of a heterogeneous job (`123+1`) merged into the job. Altered.
    HetComponent,
    /// Cancelled before it started: kept (SWF status 5, no runtime), out of the waits.
    CancelledBeforeStart,
    /// Ended in another way before it started (a launch or boot failure, a missed deadline):
    /// kept (no runtime), out of the waits.
    EndedBeforeStart,
    /// Allocated more CPUs than requested (exclusive nodes): SWF field 5 has the allocation,
    /// field 8 the request. Kept.
    MoreCpusThanRequested,
    /// Eligible later than submitted (a hold, `--begin` or a dependency). Kept.
    EligibleAfterSubmit,
    /// A time limit of `Partition_Limit` or `UNLIMITED`: no estimate (SWF -1). Kept.
    NoTimeLimit,
    /// A time outside 1970 .. 10^11 s after it (year 5138; a corrupt or placeholder date such
    /// as 9999-12-31), or a run of 10^11 s or more: no simulation can replay it. Dropped.
    TimeOutOfRange,
    /// A time limit of 10^11 s or more: read as no limit (SWF -1). Kept.
    TimeLimitOutOfRange,
    /// A constraint the model of node features does not take (`|`, `[...]`, `*N`, `!`): the
    /// job runs on any node. Altered.
    ConstraintNotModelled,
    /// A share of a GPU (Alibaba PAI's `plan_gpu` of 50: half a GPU): rounded up to whole
    /// GPUs, as a scheduler of whole GPUs gives it. Altered. (Other formats' readers.)
    FractionalGpus,
    /// A job the trace logs with several scheduling attempts (Philly's retries): its start is
    /// the last attempt's, its runtime the last attempt's run. Altered. (Other formats.)
    EarlierAttempts,
    /// No submit time (an empty or `None` field). Dropped. (Other formats' readers.)
    NoSubmitTime,
}

impl Reason {
    /// What happened to the line or job, in words.
    pub fn text(self) -> &'static str {
        match self {
            Reason::Step => "job step (.batch, .extern, .N): not a job",
            Reason::ArrayRange => "grouped array tasks that never started (123_[5-100])",
            Reason::Revoked => "REVOKED federated sibling (ran elsewhere)",
            Reason::NotEnded => "not ended when the dump was made (pending, running, suspended)",
            Reason::OutsideWindow => "submitted outside the --since/--until window",
            Reason::NonexistentLocalTime => {
                "a local time skipped by daylight saving (no such time in --tz)"
            }
            Reason::AmbiguousLocalTime => {
                "a local time repeated by daylight saving: the earlier reading taken"
            }
            Reason::NegativeWait => {
                "started before its wait began (times read in the wrong zone? see --tz)"
            }
            Reason::RequeuedRun => "an earlier run of a requeued job (--duplicates)",
            Reason::RequeuedFirstSubmit => "requeued: the wait counted from the first submit",
            Reason::RequeuedWithoutDuplicates => {
                "requeued (Restarts > 0) but its earlier runs are not in the dump (no --duplicates): submit is the requeue's"
            }
            Reason::RecycledId => "a job id used before by another job: renumbered",
            Reason::HetComponent => "heterogeneous job component merged into its job",
            Reason::CancelledBeforeStart => {
                "cancelled before it started: no runtime (SWF status 5), out of the waits"
            }
            Reason::EndedBeforeStart => {
                "ended before it started (launch or boot failure, deadline): no runtime, out of the waits"
            }
            Reason::MoreCpusThanRequested => {
                "allocated more CPUs than requested (exclusive nodes?)"
            }
            Reason::EligibleAfterSubmit => {
                "eligible after its submit (hold, --begin or dependency)"
            }
            Reason::NoTimeLimit => "no time limit (Partition_Limit or UNLIMITED): no estimate",
            Reason::TimeOutOfRange => {
                "a time before 1970 or 10^11 s after it (year 9999?), or a run as long: cannot be replayed"
            }
            Reason::TimeLimitOutOfRange => {
                "a time limit of 10^11 s or more: read as no limit, no estimate"
            }
            Reason::ConstraintNotModelled => {
                "a constraint with |, [...], *N or ! (only features joined by & or , are modelled): dropped, any node will do"
            }
            Reason::FractionalGpus => "a share of a GPU: rounded up to whole GPUs",
            Reason::EarlierAttempts => {
                "scheduled several times (retries): started at its last attempt, for that attempt's run"
            }
            Reason::NoSubmitTime => "no submit time",
        }
    }

    /// `dropped`, `altered` or `kept`.
    pub fn action(self) -> &'static str {
        match self {
            Reason::Step
            | Reason::ArrayRange
            | Reason::Revoked
            | Reason::NotEnded
            | Reason::OutsideWindow
            | Reason::NonexistentLocalTime
            | Reason::NegativeWait
            | Reason::RequeuedRun
            | Reason::TimeOutOfRange
            | Reason::NoSubmitTime => "dropped",
            Reason::AmbiguousLocalTime
            | Reason::RequeuedFirstSubmit
            | Reason::RecycledId
            | Reason::HetComponent
            | Reason::ConstraintNotModelled
            | Reason::FractionalGpus
            | Reason::EarlierAttempts => "altered",
            Reason::RequeuedWithoutDuplicates
            | Reason::CancelledBeforeStart
            | Reason::EndedBeforeStart
            | Reason::MoreCpusThanRequested
            | Reason::EligibleAfterSubmit
            | Reason::NoTimeLimit
            | Reason::TimeLimitOutOfRange => "kept",
        }
    }

    /// A short key for tables (`step`, `array_range`, ...).
    pub fn key(self) -> &'static str {
        match self {
            Reason::Step => "step",
            Reason::ArrayRange => "array_range",
            Reason::Revoked => "revoked",
            Reason::NotEnded => "not_ended",
            Reason::OutsideWindow => "outside_window",
            Reason::NonexistentLocalTime => "nonexistent_local_time",
            Reason::AmbiguousLocalTime => "ambiguous_local_time",
            Reason::NegativeWait => "negative_wait",
            Reason::RequeuedRun => "requeued_run",
            Reason::RequeuedFirstSubmit => "requeued_first_submit",
            Reason::RequeuedWithoutDuplicates => "requeued_without_duplicates",
            Reason::RecycledId => "recycled_id",
            Reason::HetComponent => "het_component",
            Reason::CancelledBeforeStart => "cancelled_before_start",
            Reason::EndedBeforeStart => "ended_before_start",
            Reason::MoreCpusThanRequested => "more_cpus_than_requested",
            Reason::EligibleAfterSubmit => "eligible_after_submit",
            Reason::NoTimeLimit => "no_time_limit",
            Reason::TimeOutOfRange => "time_out_of_range",
            Reason::TimeLimitOutOfRange => "time_limit_out_of_range",
            Reason::ConstraintNotModelled => "constraint_not_modelled",
            Reason::FractionalGpus => "fractional_gpus",
            Reason::EarlierAttempts => "earlier_attempts",
            Reason::NoSubmitTime => "no_submit_time",
        }
    }
}

/// What reading a dump did: lines read, jobs kept, and every dropped, altered or flagged line
/// or job counted by [`Reason`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Job lines read (after the header).
    pub lines: u64,
    /// Jobs kept.
    pub jobs: u64,
    /// Counts by reason.
    pub counts: BTreeMap<Reason, u64>,
}

impl Report {
    /// Counts one more line or job of `reason`.
    pub fn count(&mut self, reason: Reason) {
        *self.counts.entry(reason).or_insert(0) += 1;
    }

    /// How many lines or jobs had `reason`.
    pub fn get(&self, reason: Reason) -> u64 {
        self.counts.get(&reason).copied().unwrap_or(0)
    }

    /// One line per reason: `  12 dropped: job step (...)`.
    pub fn lines(&self) -> Vec<String> {
        self.counts
            .iter()
            .map(|(reason, n)| format!("{n:>8} {}: {}", reason.action(), reason.text()))
            .collect()
    }
}

/// A dump read whole: its jobs in (submit, id) order, the names behind their ids, and the
/// report.
#[derive(Debug, Clone)]
pub struct SacctLog {
    /// The input's name (the path).
    pub source_name: String,
    /// The jobs kept.
    pub jobs: Vec<Job>,
    /// Names behind the ids.
    pub names: NameTables,
    /// What was dropped or altered.
    pub report: Report,
    /// How it was read.
    pub options: SacctOptions,
}

/// The columns the reader uses, by their header names (case-insensitive; aliases accepted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    JobId,
    JobIdRaw,
    User,
    Account,
    Partition,
    Qos,
    Submit,
    Eligible,
    Start,
    End,
    ElapsedRaw,
    Elapsed,
    TimelimitRaw,
    Timelimit,
    Ncpus,
    Nnodes,
    ReqCpus,
    ReqNodes,
    ReqMem,
    ReqTres,
    AllocTres,
    State,
    Restarts,
    Priority,
    Flags,
    Reason,
    Constraints,
    ConsumedEnergyRaw,
    Reservation,
    SubmitLine,
}

/// Slurm's `NO_VAL64 - 1` (`0xfffffffffffffffe`): `ConsumedEnergyRaw` at or above it is
/// unknown (a job still running, an energy plugin that failed).
const ENERGY_UNKNOWN: u64 = 0xffff_ffff_ffff_fffe;

/// How many [`Column`]s there are.
const COLUMNS: usize = Column::SubmitLine as usize + 1;

impl Column {
    fn of(name: &str) -> Option<Column> {
        Some(match name.to_ascii_lowercase().as_str() {
            "jobid" => Column::JobId,
            "jobidraw" => Column::JobIdRaw,
            "user" => Column::User,
            "account" => Column::Account,
            "partition" => Column::Partition,
            "qos" => Column::Qos,
            "submit" => Column::Submit,
            "eligible" => Column::Eligible,
            "start" => Column::Start,
            "end" => Column::End,
            "elapsedraw" => Column::ElapsedRaw,
            "elapsed" => Column::Elapsed,
            "timelimitraw" => Column::TimelimitRaw,
            "timelimit" => Column::Timelimit,
            "ncpus" | "alloccpus" => Column::Ncpus,
            "nnodes" | "allocnodes" => Column::Nnodes,
            "reqcpus" => Column::ReqCpus,
            "reqnodes" => Column::ReqNodes,
            "reqmem" => Column::ReqMem,
            "reqtres" => Column::ReqTres,
            "alloctres" => Column::AllocTres,
            "state" => Column::State,
            "restarts" => Column::Restarts,
            "priority" => Column::Priority,
            "flags" => Column::Flags,
            "reason" => Column::Reason,
            "constraints" => Column::Constraints,
            "consumedenergyraw" => Column::ConsumedEnergyRaw,
            "reservation" => Column::Reservation,
            "submitline" => Column::SubmitLine,
            _ => return None,
        })
    }
}

/// Columns whose text may hold the delimiter (free text a user typed).
const FREE_TEXT: [&str; 6] = [
    "submitline",
    "jobname",
    "constraints",
    "comment",
    "admincomment",
    "workdir",
];

/// Where each used column is in a line, and how to split lines.
struct Layout {
    names: Vec<String>,
    /// Each used column's position, by `Column as usize` (`usize::MAX`: not in the dump).
    index: [usize; COLUMNS],
    /// The last column is free text: surplus fields belong to it.
    last_is_free: bool,
    /// Some other column is free text.
    free_elsewhere: bool,
}

impl Layout {
    fn parse(header: &str, source_name: &str, line: u64) -> Result<Layout, SacctError> {
        let names: Vec<String> = header.split('|').map(|n| n.trim().to_string()).collect();
        let mut index = [usize::MAX; COLUMNS];
        for (i, name) in names.iter().enumerate() {
            if let Some(column) = Column::of(name) {
                if std::mem::replace(&mut index[column as usize], i) != usize::MAX {
                    return Err(SacctError::DuplicateField {
                        source_name: source_name.to_string(),
                        line,
                        field: name.clone(),
                    });
                }
            }
        }
        if index.iter().all(|&i| i == usize::MAX)
            || !names
                .iter()
                .any(|n| n.eq_ignore_ascii_case("jobid") || n.eq_ignore_ascii_case("jobidraw"))
        {
            return Err(SacctError::NoHeader {
                source_name: source_name.to_string(),
                line,
                found: swf::excerpt(header.as_bytes(), 60),
            });
        }
        let layout = Layout {
            last_is_free: names
                .last()
                .is_some_and(|n| FREE_TEXT.contains(&n.to_ascii_lowercase().as_str())),
            free_elsewhere: names[..names.len().saturating_sub(1)]
                .iter()
                .any(|n| FREE_TEXT.contains(&n.to_ascii_lowercase().as_str())),
            names,
            index,
        };
        for (column, name) in [
            (Column::User, "User"),
            (Column::Submit, "Submit"),
            (Column::Start, "Start"),
            (Column::End, "End"),
            (Column::State, "State"),
        ] {
            if !layout.has(column) {
                return Err(SacctError::MissingField {
                    source_name: source_name.to_string(),
                    line,
                    field: name,
                });
            }
        }
        if !layout.has(Column::Ncpus) && !layout.has(Column::ReqCpus) {
            return Err(SacctError::MissingField {
                source_name: source_name.to_string(),
                line,
                field: "NCPUS (or ReqCPUS)",
            });
        }
        Ok(layout)
    }

    fn has(&self, column: Column) -> bool {
        self.index[column as usize] != usize::MAX
    }

    #[inline]
    fn get<'a>(&self, fields: &[&'a str], column: Column) -> Option<&'a str> {
        match self.index[column as usize] {
            usize::MAX => None,
            i => Some(fields[i]),
        }
    }

    fn name(&self, column: Column) -> &str {
        match self.index[column as usize] {
            usize::MAX => "",
            i => self.names[i].as_str(),
        }
    }
}

/// Whether `first_line` (a file's first non-empty line) is a sacct `--parsable2` header row.
pub fn is_sacct_header(first_line: &str) -> bool {
    let mut names = first_line.trim().split('|');
    let first = names.next().unwrap_or_default();
    (first.eq_ignore_ascii_case("jobid") || first.eq_ignore_ascii_case("jobidraw"))
        && first_line.contains('|')
}

/// Reads a dump file (plain or gzip).
pub fn read(path: &Path, options: &SacctOptions) -> Result<SacctLog, SacctError> {
    let input = swf::Input::open(path)?;
    let name = input.name().to_string();
    read_from(input, name, options)
}

/// Reads a dump from `input`; `source_name` names it in errors.
///
/// The header row is read first; the job lines then go in blocks of about a mebibyte (whole
/// lines) to the threads of rayon's pool, each parsing its block with its own name tables, and
/// the blocks are merged in input order (names renumbered in order of first appearance), so
/// the result and the first error are those of reading line by line.
pub fn read_from(
    input: impl BufRead,
    source_name: String,
    options: &SacctOptions,
) -> Result<SacctLog, SacctError> {
    let bounds = Bounds {
        lines: crate::MAX_LINES,
        jobs: crate::MAX_JOBS,
    };
    read_in_blocks(input, source_name, options, BLOCK_BYTES, bounds)
}

/// [`read_from`] with blocks of about `block_bytes` (the tests vary it).
fn read_in_blocks(
    mut input: impl BufRead,
    source_name: String,
    options: &SacctOptions,
    block_bytes: u64,
    bounds: Bounds,
) -> Result<SacctLog, SacctError> {
    use rayon::prelude::*;
    if let (Some(since), Some(until)) = (options.since, options.until) {
        if until <= since {
            return Err(SacctError::Options(format!(
                "--until ({until}) must be after --since ({since})"
            )));
        }
    }
    let mut line = 0u64;
    let Some(layout) = read_header(&mut input, &source_name, &mut line)? else {
        return Err(SacctError::NoJobs { source_name });
    };
    let mut merged = Merged {
        source_name,
        options: options.clone(),
        names: NameTables::default(),
        report: Report::default(),
        jobs: Vec::new(),
        het: HashMap::new(),
    };
    if let Some(nodes) = &options.nodes {
        for partition in &nodes.partitions {
            merged.names.partitions.id(partition);
        }
    }
    let first = &options.first_names;
    for (table, names) in [
        (&mut merged.names.users, &first.users),
        (&mut merged.names.accounts, &first.accounts),
        (&mut merged.names.partitions, &first.partitions),
        (&mut merged.names.qos, &first.qos),
    ] {
        for name in names {
            table.id(name);
        }
    }
    let batch_size = 2 * rayon::current_num_threads().max(1);
    loop {
        let mut blocks = Vec::with_capacity(batch_size);
        let mut failure = None;
        while blocks.len() < batch_size {
            match next_block(&mut input, line, block_bytes) {
                Ok(Some(block)) => {
                    line = block.first_line + block.lines;
                    blocks.push(block);
                }
                Ok(None) => break,
                Err(error) => {
                    failure = Some(SacctError::Read {
                        source_name: merged.source_name.clone(),
                        line: line + 1,
                        error,
                    });
                    break;
                }
            }
        }
        let done = blocks.is_empty();
        let parsed: Vec<Result<Reader, SacctError>> = blocks
            .par_iter()
            .map(|block| parse_block(block, &layout, &merged.source_name, options))
            .collect();
        for block in parsed {
            merged.absorb(block?);
        }
        for (count, limit, what) in [
            (line, bounds.lines, "lines"),
            (merged.jobs.len() as u64, bounds.jobs, "jobs"),
        ] {
            if count > limit {
                return Err(SacctError::TooLarge {
                    source_name: merged.source_name,
                    line,
                    limit,
                    what,
                });
            }
        }
        if let Some(error) = failure {
            return Err(error);
        }
        if done {
            break;
        }
    }
    if merged.report.lines == 0 {
        return Err(SacctError::NoJobs {
            source_name: merged.source_name,
        });
    }
    let log = merged.finish();
    if log.jobs.is_empty() {
        return Err(SacctError::NothingKept {
            source_name: log.source_name,
            lines: log.report.lines,
            reasons: log.report.lines().join("; "),
        });
    }
    Ok(log)
}

/// How much a dump may hold ([`crate::MAX_LINES`], [`crate::MAX_JOBS`]; the tests lower them).
#[derive(Debug, Clone, Copy)]
struct Bounds {
    lines: u64,
    jobs: u64,
}

/// The bytes of a block: about this many, then up to the end of the line.
const BLOCK_BYTES: u64 = 1 << 20;

/// Whole lines of the input, with the number of the line before them.
struct Block {
    bytes: Vec<u8>,
    /// The number of the line before the block's first.
    first_line: u64,
    /// How many lines it holds (a last line without `\n` counts).
    lines: u64,
}

/// The next block of whole lines (about `block_bytes`), or `None` at the end of the input.
fn next_block(
    input: &mut impl BufRead,
    before: u64,
    block_bytes: u64,
) -> std::io::Result<Option<Block>> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(block_bytes.min(BLOCK_BYTES) as usize + 4096);
    input.take(block_bytes).read_to_end(&mut bytes)?;
    if bytes.is_empty() {
        return Ok(None);
    }
    if !bytes.ends_with(b"\n") {
        // the rest of the line, bounded: a line past the limit is refused when parsed
        input
            .take(crate::MAX_LINE_BYTES as u64)
            .read_until(b'\n', &mut bytes)?;
    }
    let mut lines = memchr::memchr_iter(b'\n', &bytes).count() as u64;
    if !bytes.ends_with(b"\n") {
        lines += 1;
    }
    Ok(Some(Block {
        bytes,
        first_line: before,
        lines,
    }))
}

/// Reads up to the header row (blank lines before it skipped), counting lines in `line`.
fn read_header(
    input: &mut impl BufRead,
    source_name: &str,
    line: &mut u64,
) -> Result<Option<Layout>, SacctError> {
    use std::io::Read;
    let mut buf = Vec::with_capacity(512);
    loop {
        buf.clear();
        let n = input
            .take(crate::MAX_LINE_BYTES as u64)
            .read_until(b'\n', &mut buf)
            .map_err(|error| SacctError::Read {
                source_name: source_name.to_string(),
                line: *line + 1,
                error,
            })?;
        if n == 0 {
            return Ok(None);
        }
        if n == crate::MAX_LINE_BYTES && !buf.ends_with(b"\n") {
            return Err(SacctError::LineTooLong {
                source_name: source_name.to_string(),
                line: *line + 1,
                limit: crate::MAX_LINE_BYTES,
            });
        }
        *line += 1;
        // A header is plain text: bytes that are not are shown as bytes, not as U+FFFD.
        let Ok(text) = std::str::from_utf8(&buf) else {
            return Err(SacctError::NoHeader {
                source_name: source_name.to_string(),
                line: *line,
                found: swf::excerpt(buf.strip_suffix(b"\n").unwrap_or(&buf), 60),
            });
        };
        let text = text.trim_end_matches(['\n', '\r']);
        if !text.trim().is_empty() {
            return Layout::parse(text, source_name, *line).map(Some);
        }
    }
}

/// Parses one block's lines into a reader of its own (names numbered within the block).
fn parse_block(
    block: &Block,
    layout: &Layout,
    source_name: &str,
    options: &SacctOptions,
) -> Result<Reader, SacctError> {
    let mut reader = Reader {
        source_name: source_name.to_string(),
        options: options.clone(),
        names: NameTables::default(),
        report: Report::default(),
        jobs: Vec::new(),
        memory_cache: None,
    };
    let bytes = &block.bytes;
    let whole = std::str::from_utf8(bytes).ok();
    let mut line = block.first_line;
    let mut from = 0;
    while from < bytes.len() {
        let to = memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |i| from + i);
        let raw = &bytes[from..to];
        let text = match whole {
            Some(whole) => std::borrow::Cow::Borrowed(&whole[from..to]),
            None => String::from_utf8_lossy(raw),
        };
        from = to + 1;
        line += 1;
        if raw.len() >= crate::MAX_LINE_BYTES {
            return Err(SacctError::LineTooLong {
                source_name: reader.source_name,
                line,
                limit: crate::MAX_LINE_BYTES,
            });
        }
        let text = text.trim_end_matches('\r');
        if text.trim().is_empty() {
            continue;
        }
        let mut fields: Vec<&str> = Vec::with_capacity(layout.names.len() + 1);
        let mut start = 0;
        for bar in memchr::memchr_iter(b'|', text.as_bytes()) {
            fields.push(&text[start..bar]);
            start = bar + 1;
        }
        fields.push(&text[start..]);
        let expected = layout.names.len();
        if fields.len() > expected && layout.last_is_free && !layout.free_elsewhere {
            // the surplus is the last (free-text) column's own `|`s
            let start: usize = fields[..expected - 1].iter().map(|f| f.len() + 1).sum();
            fields.truncate(expected - 1);
            fields.push(&text[start..]);
        }
        if fields.len() != expected {
            return Err(SacctError::FieldCount {
                source_name: reader.source_name.clone(),
                line,
                found: fields.len(),
                expected,
                hint: if fields.len() > expected && layout.free_elsewhere {
                    ": a free-text field (JobName, SubmitLine, ...) holds a `|`; put it last in --format and leave the others out"
                } else if fields.len() > expected {
                    ": a field holds a `|`; dump with --parsable2 and a free-text field last"
                } else {
                    " (a truncated line?)"
                },
            });
        }
        reader.report.lines += 1;
        reader.line(layout, &fields, line)?;
    }
    Ok(reader)
}

/// The blocks merged in input order: names renumbered, heterogeneous components joined.
struct Merged {
    source_name: String,
    options: SacctOptions,
    names: NameTables,
    report: Report,
    jobs: Vec<Job>,
    /// Heterogeneous job leader id -> index in `jobs`.
    het: HashMap<u64, usize>,
}

impl Names {
    /// This table's ids for the names of `block` (index: the block's id; 0 stays 0), numbering
    /// the new ones in the block's order of first appearance.
    fn absorb(&mut self, block: &Names) -> Vec<u32> {
        let mut ids = Vec::with_capacity(block.len() + 1);
        ids.push(0);
        ids.extend(block.names.iter().map(|name| self.id(name)));
        ids
    }
}

impl Merged {
    /// The next block, in input order.
    fn absorb(&mut self, block: Reader) {
        let users = self.names.users.absorb(&block.names.users);
        let accounts = self.names.accounts.absorb(&block.names.accounts);
        let partitions = self.names.partitions.absorb(&block.names.partitions);
        let qos = self.names.qos.absorb(&block.names.qos);
        let reasons = self.names.reasons.absorb(&block.names.reasons);
        let flags = self.names.flags.absorb(&block.names.flags);
        let gpu_types = self.names.gpu_types.absorb(&block.names.gpu_types);
        let shape_gpu_types = self
            .names
            .shape_gpu_types
            .absorb(&block.names.shape_gpu_types);
        let constraints = self.names.constraints.absorb(&block.names.constraints);
        let reservations = self.names.reservations.absorb(&block.names.reservations);
        self.report.lines += block.report.lines;
        for (reason, n) in block.report.counts {
            *self.report.counts.entry(reason).or_insert(0) += n;
        }
        self.jobs.reserve(block.jobs.len());
        for (het, mut job) in block.jobs {
            job.user = users[job.user as usize];
            job.account = accounts[job.account as usize];
            job.partition = partitions[job.partition as usize];
            job.qos = qos[job.qos as usize];
            job.reason = reasons[job.reason as usize];
            job.flags = flags[job.flags as usize];
            job.gpu_type = gpu_types[job.gpu_type as usize];
            job.named.gpu_type = shape_gpu_types[job.named.gpu_type as usize];
            job.named.constraint = constraints[job.named.constraint as usize];
            job.reservation = reservations[job.reservation as usize];
            match het {
                Some(leader) => self.het_component(leader, job),
                None => self.jobs.push(job),
            }
        }
    }

    /// A heterogeneous job's component: the first becomes the job, later ones are merged in
    /// (CPUs and nodes added, the earliest start, the latest end, the longest run).
    fn het_component(&mut self, leader: u64, job: Job) {
        match self.het.get(&leader) {
            None => {
                self.het.insert(leader, self.jobs.len());
                let mut job = job;
                job.id = leader;
                job.het_components = 1;
                self.jobs.push(job);
            }
            Some(&index) => {
                self.report.count(Reason::HetComponent);
                let merged = &mut self.jobs[index];
                merged.het_components += 1;
                merged.cpus += job.cpus;
                // every component's nodes: the job's energy is their sum, known if all are
                merged.energy = merged.energy.zip(job.energy).map(|(a, b)| a + b);
                merged.nodes += job.nodes;
                merged.req_cpus += job.req_cpus;
                merged.req_nodes += job.req_nodes;
                merged.submit = merged.submit.min(job.submit);
                merged.start = match (merged.start, job.start) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                merged.end = merged.end.max(job.end);
                merged.elapsed = merged.elapsed.max(job.elapsed);
            }
        }
    }

    /// Requeues and recycled ids, jobs that never started, negative waits, the notes on kept
    /// jobs, and the final order.
    fn finish(self) -> SacctLog {
        SacctLog::assemble(
            self.source_name,
            self.jobs,
            self.names,
            self.report,
            self.options,
        )
    }
}

impl SacctLog {
    /// A log of `jobs` as read, made whole as a dump's reader makes it (the readers of other
    /// formats that give the same jobs end here too): jobs sharing an id are a requeue chain
    /// (its earlier runs dropped, the last one's submit by [`SacctOptions::requeued`]) or
    /// renumbered; jobs that started before their wait began or have no end are dropped; the
    /// rest are counted by what is known of them ([`Reason`]) and sorted by (wait start, array
    /// or id, task, line). `report.lines` is kept; `report.jobs` is set.
    pub fn assemble(
        source_name: String,
        jobs: Vec<Job>,
        names: NameTables,
        report: Report,
        options: SacctOptions,
    ) -> SacctLog {
        Assembly {
            source_name,
            jobs,
            names,
            report,
            options,
        }
        .finish()
    }
}

/// What [`SacctLog::assemble`] works on.
struct Assembly {
    source_name: String,
    jobs: Vec<Job>,
    names: NameTables,
    report: Report,
    options: SacctOptions,
}

impl Assembly {
    fn finish(mut self) -> SacctLog {
        // jobs sharing an id, found by sorting (id, index) pairs: no map of a million entries
        let mut ids: Vec<(u64, usize)> = self
            .jobs
            .iter()
            .enumerate()
            .map(|(i, j)| (j.id, i))
            .collect();
        ids.sort_unstable();
        let mut drop = vec![false; self.jobs.len()];
        let mut chained = std::collections::HashSet::new();
        let mut next_free = ids.last().map_or(0, |&(id, _)| id) + 1;
        let groups: Vec<Vec<usize>> = ids
            .chunk_by(|a, b| a.0 == b.0)
            .filter(|run| run.len() > 1)
            .map(|run| run.iter().map(|&(_, i)| i).collect())
            .collect();
        for group in groups {
            // A requeue chain: every record but the last ended by a requeue.
            let chain = group[..group.len() - 1].iter().all(|&i| {
                matches!(
                    self.jobs[i].state,
                    State::Requeued | State::Preempted | State::NodeFail
                )
            });
            if chain {
                chained.insert(self.jobs[group[0]].id);
                let first = group[0];
                let last = group[group.len() - 1];
                for &i in &group[..group.len() - 1] {
                    drop[i] = true;
                    self.report.count(Reason::RequeuedRun);
                }
                if self.options.requeued == Requeued::FirstSubmit {
                    let original = self.jobs[first].submit;
                    if original != self.jobs[last].submit {
                        self.jobs[last].submit = original;
                        self.report.count(Reason::RequeuedFirstSubmit);
                    }
                }
            } else {
                for &i in &group[1..] {
                    self.jobs[i].id = next_free;
                    next_free += 1;
                    self.report.count(Reason::RecycledId);
                }
            }
        }
        let wait_from = self.options.wait_from;
        let report = &mut self.report;
        let mut index = 0;
        // in place: a million jobs are not copied again
        self.jobs.retain(|job| {
            let dropped = drop[index];
            index += 1;
            if dropped {
                return false;
            }
            if job.restarts > 0 && !chained.contains(&job.id) {
                // requeued, but the dump holds no earlier run: made without --duplicates
                report.count(Reason::RequeuedWithoutDuplicates);
            }
            match job.start {
                Some(start) if start < job.wait_start(wait_from) => {
                    report.count(Reason::NegativeWait);
                    return false;
                }
                Some(_) if job.end.is_none() => {
                    report.count(Reason::NotEnded);
                    return false;
                }
                Some(_) => {}
                None if job.state == State::Cancelled => report.count(Reason::CancelledBeforeStart),
                None => report.count(Reason::EndedBeforeStart),
            }
            if job.started() && job.cpus > job.req_cpus && job.req_cpus > 0 {
                report.count(Reason::MoreCpusThanRequested);
            }
            if job.eligible.is_some_and(|e| e > job.submit) {
                report.count(Reason::EligibleAfterSubmit);
            }
            if job.time_limit.is_none() {
                report.count(Reason::NoTimeLimit);
            }
            true
        });
        let mut jobs = self.jobs;
        // (wait start, id, task, line) is unique, so the unstable sort is deterministic; a dump
        // is usually in order already. An array's tasks go under the array's id, by task, as
        // Slurm's queue holds them (one record for the tasks not yet started, which are split
        // off in task order; the last one keeps the array's id).
        let key = |j: &Job| {
            let (id, task) = j.array.unwrap_or((j.id, 0));
            (j.wait_start(wait_from), id, task, j.line)
        };
        if !jobs.is_sorted_by_key(key) {
            jobs.sort_unstable_by_key(key);
        }
        self.report.jobs = jobs.len() as u64;
        SacctLog {
            source_name: self.source_name,
            jobs,
            names: self.names,
            report: self.report,
            options: self.options,
        }
    }
}

/// One block's parser: its jobs (with their heterogeneous leader) and names numbered within
/// the block.
struct Reader {
    source_name: String,
    options: SacctOptions,
    names: NameTables,
    report: Report,
    jobs: Vec<(Option<u64>, Job)>,
    /// The last memory text read with its (ReqCPUS, ReqNodes) and result (most lines repeat
    /// their neighbour's).
    memory_cache: Option<(String, u32, u32, Option<f64>)>,
}

impl Reader {
    fn error(
        &self,
        line: u64,
        layout: &Layout,
        column: Column,
        value: &str,
        expected: &str,
    ) -> SacctError {
        SacctError::field(
            &self.source_name,
            line,
            layout.name(column),
            value,
            expected,
        )
    }

    /// A time column placed by the clock: `Ok(None)` unknown; `Err(None)` a skipped local time
    /// (counted); `Err(Some(e))` a bad value.
    fn time(
        &mut self,
        layout: &Layout,
        fields: &[&str],
        column: Column,
        line: u64,
    ) -> Result<Option<i64>, Option<SacctError>> {
        let Some(text) = layout.get(fields, column) else {
            return Ok(None);
        };
        let local = values::parse_time(text)
            .map_err(|expected| Some(self.error(line, layout, column, text, expected)))?;
        let Some(local) = local else {
            return Ok(None);
        };
        match self.options.clock.place(local) {
            Placed::Exact(t) => Ok(Some(t)),
            Placed::Ambiguous(t) => {
                self.report.count(Reason::AmbiguousLocalTime);
                Ok(Some(t))
            }
            Placed::Missing => {
                self.report.count(Reason::NonexistentLocalTime);
                Err(None)
            }
        }
    }

    fn whole(
        &self,
        layout: &Layout,
        fields: &[&str],
        column: Column,
        line: u64,
    ) -> Result<Option<u64>, SacctError> {
        match layout.get(fields, column) {
            None | Some("") => Ok(None),
            Some(text) => text
                .parse::<u64>()
                .map(Some)
                .map_err(|_| self.error(line, layout, column, text, "a whole number")),
        }
    }

    fn count32(
        &self,
        layout: &Layout,
        fields: &[&str],
        column: Column,
        line: u64,
    ) -> Result<u32, SacctError> {
        match self.whole(layout, fields, column, line)? {
            None => Ok(0),
            Some(n) => u32::try_from(n).map_err(|_| {
                self.error(line, layout, column, &n.to_string(), "a count below 2^32")
            }),
        }
    }

    fn line(&mut self, layout: &Layout, fields: &[&str], line: u64) -> Result<(), SacctError> {
        let job_id = layout.get(fields, Column::JobId).unwrap_or_default();
        if job_id.contains('.') {
            self.report.count(Reason::Step);
            return Ok(());
        }
        if job_id.contains("_[") {
            self.report.count(Reason::ArrayRange);
            return Ok(());
        }
        let state_text = layout.get(fields, Column::State).unwrap_or_default();
        let state = State::parse(state_text).ok_or_else(|| {
            self.error(
                line,
                layout,
                Column::State,
                state_text,
                "a job state sacct writes (COMPLETED, FAILED, CANCELLED, TIMEOUT, ...)",
            )
        })?;
        match state {
            State::Revoked => {
                self.report.count(Reason::Revoked);
                return Ok(());
            }
            State::NotEnded => {
                self.report.count(Reason::NotEnded);
                return Ok(());
            }
            _ => {}
        }
        // ids: JobIDRaw, else the JobID's leading number
        let (base, array, het) = split_job_id(job_id);
        let id = match layout.get(fields, Column::JobIdRaw) {
            Some(raw) if !raw.is_empty() => {
                let digits = raw.split(['.', '+']).next().unwrap_or(raw);
                digits.parse::<u64>().map_err(|_| {
                    self.error(
                        line,
                        layout,
                        Column::JobIdRaw,
                        raw,
                        "a job id (a whole number)",
                    )
                })?
            }
            _ => base.ok_or_else(|| {
                self.error(
                    line,
                    layout,
                    Column::JobId,
                    job_id,
                    "a job id (123, 123_4, 123+1)",
                )
            })?,
        };
        let placed = (|| {
            let submit = self.time(layout, fields, Column::Submit, line)?;
            let eligible = self.time(layout, fields, Column::Eligible, line)?;
            let start = self.time(layout, fields, Column::Start, line)?;
            let end = self.time(layout, fields, Column::End, line)?;
            Ok((submit, eligible, start, end))
        })();
        let (submit, eligible, start, end) = match placed {
            Ok(times) => times,
            Err(None) => return Ok(()), // counted: a local time that does not exist
            Err(Some(e)) => return Err(e),
        };
        let submit = submit.ok_or_else(|| {
            self.error(
                line,
                layout,
                Column::Submit,
                "Unknown",
                "a submit time (every job has one)",
            )
        })?;
        if self.options.since.is_some_and(|s| submit < s)
            || self.options.until.is_some_and(|u| submit >= u)
        {
            self.report.count(Reason::OutsideWindow);
            return Ok(());
        }
        let elapsed = match (
            self.whole(layout, fields, Column::ElapsedRaw, line)?,
            layout.get(fields, Column::Elapsed),
        ) {
            (Some(raw), _) => Some(raw as i64),
            (None, Some(text)) => values::parse_duration(text).map_err(|values::Invalid| {
                self.error(
                    line,
                    layout,
                    Column::Elapsed,
                    text,
                    "a duration [D-]HH:MM:SS",
                )
            })?,
            (None, None) => None,
        };
        let time_limit = match layout.get(fields, Column::TimelimitRaw) {
            Some(text) => values::parse_minutes(text).map_err(|values::Invalid| {
                self.error(
                    line,
                    layout,
                    Column::TimelimitRaw,
                    text,
                    "a whole number of minutes, UNLIMITED or Partition_Limit",
                )
            })?,
            None => match layout.get(fields, Column::Timelimit) {
                Some(text) => values::parse_duration(text).map_err(|values::Invalid| {
                    self.error(
                        line,
                        layout,
                        Column::Timelimit,
                        text,
                        "a limit [D-]HH:MM:SS, MM:SS, minutes, UNLIMITED or Partition_Limit",
                    )
                })?,
                None => None,
            },
        };
        // Times a replay cannot hold (sacct prints placeholders such as 9999-12-31 for some
        // fields in some versions): dropped, counted; a limit as long is no limit.
        let out_of_range = |t: &i64| !(0..crate::MAX_TIME).contains(t);
        if [submit]
            .iter()
            .chain(&eligible)
            .chain(&start)
            .chain(&end)
            .chain(&elapsed)
            .any(out_of_range)
        {
            self.report.count(Reason::TimeOutOfRange);
            return Ok(());
        }
        let time_limit = match time_limit {
            Some(limit) if limit >= crate::MAX_TIME => {
                self.report.count(Reason::TimeLimitOutOfRange);
                None
            }
            limit => limit,
        };
        // A job cancelled while pending shows Start = End = the cancel time in some versions
        // (22.05), with nothing allocated: it never started.
        let never_allocated = layout
            .get(fields, Column::AllocTres)
            .is_some_and(|t| t.trim().is_empty());
        let start = if never_allocated
            || (state == State::Cancelled && elapsed == Some(0) && start.is_some() && start == end)
        {
            None
        } else {
            start
        };
        let req_cpus = self.count32(layout, fields, Column::ReqCpus, line)?;
        let req_nodes = self.count32(layout, fields, Column::ReqNodes, line)?;
        let cpus = match self.count32(layout, fields, Column::Ncpus, line)? {
            0 if start.is_some() => req_cpus,
            n => n,
        };
        let nodes = self.count32(layout, fields, Column::Nnodes, line)?;
        let memory_per_cpu = self.memory(layout, fields, line, req_cpus, req_nodes)?;
        let extra = self.extra(layout, fields, line)?;
        let (gpus, gpu_type_name) = gpu_request(layout, fields, start.is_some());
        let gpus = match gpus {
            None => 0,
            Some(text) => text.parse::<u32>().map_err(|_| {
                let list = layout.get(fields, Column::ReqTres).unwrap_or_default();
                self.error(
                    line,
                    layout,
                    Column::ReqTres,
                    list,
                    "a whole number of gres/gpu",
                )
            })?,
        };
        let gpu_type = gpu_type_name.map_or(0, |name| self.names.gpu_types.id(name));
        let named = NamedShape {
            nodes: shape_nodes(start.is_some(), nodes, req_nodes).1,
            gpu_type: shape_gpu_type(layout, fields, start.is_some())
                .map_or(0, |(_, _, name)| self.names.shape_gpu_types.id(name)),
            constraint: self.names.constraints.id(layout
                .get(fields, Column::Constraints)
                .unwrap_or_default()
                .trim()),
        };
        let shape = match self.options.nodes.take() {
            None => job::Shape::ANY,
            Some(names) => {
                let shape = self.shape(
                    layout,
                    fields,
                    line,
                    &names,
                    start.is_some(),
                    nodes,
                    req_nodes,
                );
                self.options.nodes = Some(names);
                shape?
            }
        };
        let restarts = self.count32(layout, fields, Column::Restarts, line)?;
        // Slurm writes 0 when no energy plugin gathers it (acct_gather_energy/none) and
        // NO_VAL64 - 1 (or more) while a job runs: both unknown
        let energy = self
            .whole(layout, fields, Column::ConsumedEnergyRaw, line)?
            .filter(|&joules| joules > 0 && joules < ENERGY_UNKNOWN);
        let priority =
            match layout.get(fields, Column::Priority) {
                None | Some("") => None,
                Some(text) => Some(text.parse::<i64>().map_err(|_| {
                    self.error(line, layout, Column::Priority, text, "a whole number")
                })?),
            };
        let user = self
            .names
            .users
            .id(layout.get(fields, Column::User).unwrap_or_default());
        let account = self
            .names
            .accounts
            .id(layout.get(fields, Column::Account).unwrap_or_default());
        let partition = self
            .names
            .partitions
            .id(layout.get(fields, Column::Partition).unwrap_or_default());
        let qos = self
            .names
            .qos
            .id(layout.get(fields, Column::Qos).unwrap_or_default());
        let reason = self
            .names
            .reasons
            .id(layout.get(fields, Column::Reason).unwrap_or_default());
        let flags = self
            .names
            .flags
            .id(layout.get(fields, Column::Flags).unwrap_or_default());
        let reservation = self.names.reservations.id(layout
            .get(fields, Column::Reservation)
            .unwrap_or_default()
            .trim());
        let submit_line = layout.get(fields, Column::SubmitLine);
        let dependency = submit_line.and_then(values::dependency);
        let throttle = submit_line
            .filter(|_| array.is_some())
            .and_then(values::array_throttle);
        let job = Job {
            line,
            id,
            array,
            het_components: 0,
            user,
            account,
            partition,
            qos,
            submit,
            eligible,
            start,
            end,
            elapsed: start.and(elapsed.or_else(|| Some(end? - start?))),
            time_limit,
            cpus,
            nodes,
            req_cpus,
            req_nodes,
            memory_per_cpu,
            extra,
            gpus,
            gpu_type,
            shape,
            named,
            state,
            restarts,
            priority,
            reason,
            flags,
            reservation,
            dependency,
            throttle,
            energy,
        };
        self.jobs.push((het.map(|(leader, _)| leader), job));
        Ok(())
    }

    /// What the job requested of the resources of [`SacctOptions::resources`]: the whole count
    /// of each name in its `ReqTRES` (`gres/gpu=2`), 0 where it names none.
    fn extra(&self, layout: &Layout, fields: &[&str], line: u64) -> Result<job::Extra, SacctError> {
        let mut extra = job::Extra::NONE;
        if self.options.resources.is_empty() {
            return Ok(extra);
        }
        let Some(list) = layout.get(fields, Column::ReqTres) else {
            return Ok(extra);
        };
        for (index, name) in self.options.resources.iter().enumerate() {
            if name == "mem"
                && let Some(text) = values::tres(list, name)
            {
                // The whole job's memory, with its unit, in MiB (rounded up).
                let kb =
                    values::parse_memory(text, MemoryPer::Job).map_err(|values::Invalid| {
                        self.error(
                            line,
                            layout,
                            Column::ReqTres,
                            list,
                            "memory with a K, M, G or T unit",
                        )
                    })?;
                let mib = kb.map_or(0.0, |(kb, _)| (kb / 1024.0).ceil());
                if mib > f64::from(u32::MAX) {
                    return Err(self.error(
                        line,
                        layout,
                        Column::ReqTres,
                        list,
                        &format!("memory of at most {} MiB", u32::MAX),
                    ));
                }
                extra = extra.with(index, mib as u32);
                continue;
            }
            if let Some(text) = values::tres(list, name) {
                let amount = text.parse::<u32>().map_err(|_| {
                    self.error(
                        line,
                        layout,
                        Column::ReqTres,
                        list,
                        &format!("a whole number of {name} (at most {})", u32::MAX),
                    )
                })?;
                extra = extra.with(index, amount);
            }
        }
        Ok(extra)
    }

    /// How the job lies on a machine of node types (`names`): its node count (`NNodes` if it
    /// `started`, else `ReqNodes`; 0 if unknown), GPU type (the typed `gres/gpu:TYPE=N` entry of
    /// `AllocTRES` if it started, else of `ReqTRES`) and features (`Constraints`: names joined by
    /// `&` or `,`; a constraint with `|`, `[`, `*` or `!` is dropped and counted). A GPU type or
    /// feature the machine does not have is an error naming the line.
    #[allow(clippy::too_many_arguments)]
    fn shape(
        &mut self,
        layout: &Layout,
        fields: &[&str],
        line: u64,
        names: &NodeNames,
        started: bool,
        nodes: u32,
        req_nodes: u32,
    ) -> Result<job::Shape, SacctError> {
        let (column, count) = shape_nodes(started, nodes, req_nodes);
        let count = u16::try_from(count).map_err(|_| {
            self.error(
                line,
                layout,
                column,
                &count.to_string(),
                &format!("at most {} nodes", u16::MAX),
            )
        })?;
        let mut gpu_type = 0u8;
        if let Some((column, list, name)) = shape_gpu_type(layout, fields, started) {
            let Some(index) = names.gpu_types.iter().position(|t| t == name) else {
                let known = if names.gpu_types.is_empty() {
                    "it has no typed GPUs".to_string()
                } else {
                    format!("it has {}", names.gpu_types.join(", "))
                };
                return Err(self.error(
                    line,
                    layout,
                    column,
                    list,
                    &format!("a GPU type of the machine (gres/gpu:{name} is not: {known})"),
                ));
            };
            gpu_type = u8::try_from(index + 1).unwrap_or(u8::MAX);
        }
        let mut features = 0u32;
        if let Some(text) = layout.get(fields, Column::Constraints) {
            let text = text.trim();
            if text.contains(['|', '[', ']', '*', '!']) {
                self.report.count(Reason::ConstraintNotModelled);
            } else {
                for feature in text
                    .split(['&', ','])
                    .map(str::trim)
                    .filter(|f| !f.is_empty())
                {
                    let Some(bit) = names.features.iter().position(|f| f == feature) else {
                        let known = if names.features.is_empty() {
                            "its nodes have no features".to_string()
                        } else {
                            format!("its features are {}", names.features.join(", "))
                        };
                        return Err(self.error(
                            line,
                            layout,
                            Column::Constraints,
                            text,
                            &format!("features of the machine ({feature} is not: {known})"),
                        ));
                    };
                    features |= 1 << bit;
                }
            }
        }
        Ok(job::Shape {
            nodes: count,
            gpu_type,
            exclusive: false,
            features,
        })
    }

    /// Requested memory per requested CPU, kilobytes: the job's `mem` of ReqTRES (for the whole
    /// job), else ReqMem (per CPU with `c`, per node otherwise).
    fn memory(
        &mut self,
        layout: &Layout,
        fields: &[&str],
        line: u64,
        req_cpus: u32,
        req_nodes: u32,
    ) -> Result<Option<f64>, SacctError> {
        let from_tres = layout
            .get(fields, Column::ReqTres)
            .and_then(|list| values::tres(list, "mem"));
        let (column, text, default_per) = match from_tres {
            Some(text) => (Column::ReqTres, text, MemoryPer::Job),
            None => match layout.get(fields, Column::ReqMem) {
                Some(text) => (Column::ReqMem, text, MemoryPer::Node),
                None => return Ok(None),
            },
        };
        if let Some((cached, cpus, nodes, value)) = &self.memory_cache {
            if cached == text && *cpus == req_cpus && *nodes == req_nodes {
                return Ok(*value);
            }
        }
        let parsed = values::parse_memory(text, default_per).map_err(|values::Invalid| {
            self.error(
                line,
                layout,
                column,
                text,
                "memory with a K, M, G or T unit",
            )
        })?;
        let cpus = f64::from(req_cpus.max(1));
        let value = parsed.map(|(kb, per)| match per {
            MemoryPer::Cpu => kb,
            MemoryPer::Node => kb * f64::from(req_nodes.max(1)) / cpus,
            MemoryPer::Job => kb / cpus,
        });
        self.memory_cache = Some((text.to_string(), req_cpus, req_nodes, value));
        Ok(value)
    }
}

/// A job's GPUs (the text of `ReqTRES`'s `gres/gpu`) and the type of the first typed
/// `gres/gpu:TYPE` entry of `AllocTRES` (if it `started`) or `ReqTRES`.
fn gpu_request<'a>(
    layout: &Layout,
    fields: &[&'a str],
    started: bool,
) -> (Option<&'a str>, Option<&'a str>) {
    let req = layout.get(fields, Column::ReqTres).unwrap_or_default();
    if !req.contains("gres/gpu") {
        return (None, None);
    }
    let typed = |list: &'a str| {
        list.split(',').find_map(|item| {
            let (key, _) = item.split_once('=')?;
            key.strip_prefix("gres/gpu:")
        })
    };
    let alloc = layout.get(fields, Column::AllocTres).unwrap_or_default();
    let kind = if started {
        typed(alloc).or_else(|| typed(req))
    } else {
        typed(req)
    };
    (values::tres(req, "gres/gpu"), kind)
}

/// A job's node count as its shape reads it: `NNodes` if it `started` and gives one, else
/// `ReqNodes`; with the column it came from.
fn shape_nodes(started: bool, nodes: u32, req_nodes: u32) -> (Column, u32) {
    if started && nodes > 0 {
        (Column::Nnodes, nodes)
    } else {
        (Column::ReqNodes, req_nodes)
    }
}

/// The GPU type a job's shape asks for: the first typed `gres/gpu:TYPE=N` entry of the first
/// non-empty of `AllocTRES` and `ReqTRES` (`ReqTRES` first if it never `started`); with the
/// column and list it came from.
fn shape_gpu_type<'a>(
    layout: &Layout,
    fields: &[&'a str],
    started: bool,
) -> Option<(Column, &'a str, &'a str)> {
    let lists = if started {
        [Column::AllocTres, Column::ReqTres]
    } else {
        [Column::ReqTres, Column::AllocTres]
    };
    let (column, list) = lists.into_iter().find_map(|column| {
        layout
            .get(fields, column)
            .filter(|l| !l.trim().is_empty())
            .map(|list| (column, list))
    })?;
    list.split(',').find_map(|item| {
        let (key, _) = item.split_once('=')?;
        Some((column, list, key.strip_prefix("gres/gpu:")?))
    })
}

/// A `JobID`'s leading number, array (job, task) and heterogeneous (leader, offset).
type JobIdParts = (Option<u64>, Option<(u64, u32)>, Option<(u64, u32)>);

/// The parts of a `JobID`: its leading number, the (array job, task) of `123_4`, the (leader,
/// offset) of a heterogeneous job's `123+1`.
fn split_job_id(job_id: &str) -> JobIdParts {
    let digits = job_id.bytes().take_while(u8::is_ascii_digit).count();
    let base = job_id[..digits].parse::<u64>().ok();
    let rest = &job_id[digits..];
    let array = rest
        .strip_prefix('_')
        .and_then(|task| task.parse::<u32>().ok())
        .zip(base)
        .map(|(task, base)| (base, task));
    let het = rest
        .strip_prefix('+')
        .and_then(|offset| offset.parse::<u32>().ok())
        .zip(base)
        .map(|(offset, base)| (base, offset));
    (base, array, het)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of an iterator of lines, as a reader.
    struct LinesReader<I> {
        lines: I,
        pending: Vec<u8>,
    }

    impl<I: Iterator<Item = String>> std::io::Read for LinesReader<I> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.pending.is_empty() {
                match self.lines.next() {
                    Some(line) => self.pending = line.into_bytes(),
                    None => return Ok(0),
                }
            }
            let n = buf.len().min(self.pending.len());
            buf[..n].copy_from_slice(&self.pending[..n]);
            self.pending.drain(..n);
            Ok(n)
        }
    }

    /// An endless stream stops at the bounds, lines or jobs, with an error naming them: the
    /// reader never holds more than a block past them.
    #[test]
    fn an_endless_dump_stops_at_its_bounds() {
        let header = "JobID|User|Account|Partition|QOS|Submit|Start|End|NCPUS|State\n";
        let job = |i: u64| {
            format!(
                "{i}|u|a|p|normal|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|1|COMPLETED\n"
            )
        };
        let step = |i: u64| {
            format!(
                "{i}.batch|u|a|p|normal|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|1|COMPLETED\n"
            )
        };
        for (line, what) in [(&job as &dyn Fn(u64) -> String, "jobs"), (&step, "lines")] {
            // an endless reader: the header, then line after line
            let mut n = 0;
            let lines = std::iter::from_fn(|| {
                n += 1;
                Some(line(n))
            });
            let endless = std::io::Read::chain(
                header.as_bytes(),
                LinesReader {
                    lines,
                    pending: Vec::new(),
                },
            );
            let bounds = Bounds {
                lines: 5000,
                jobs: 1000,
            };
            let e = read_in_blocks(
                std::io::BufReader::new(endless),
                "endless".to_string(),
                &SacctOptions::default(),
                4096,
                bounds,
            )
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
            let limit = if what == "jobs" { 1000 } else { 5000 };
            assert!(
                e.starts_with("endless:") && e.contains(&format!("more than {limit} {what}")),
                "{e}"
            );
        }
    }

    /// Every fixture (good and bad) reads the same in blocks of any size as in one block:
    /// the same jobs, names and report, or the same first error.
    #[test]
    fn blocks_of_any_size_read_alike() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/sacct");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
        files.push(dir.join("real/sacct.txt"));
        files.push(dir.join("real/sacct-steps.txt"));
        assert!(files.len() > 10, "fixtures missing: {files:?}");
        let options = SacctOptions::default();
        let outcome = |bytes: &[u8], block: u64| {
            let bounds = Bounds {
                lines: crate::MAX_LINES,
                jobs: crate::MAX_JOBS,
            };
            read_in_blocks(bytes, "f".to_string(), &options, block, bounds)
                .map(|log| (log.jobs, log.names, log.report))
                .map_err(|e| e.to_string())
        };
        for file in files {
            let bytes = std::fs::read(&file).unwrap_or_default();
            let whole = outcome(&bytes, BLOCK_BYTES);
            for block in [1, 2, 7, 64, 300] {
                assert_eq!(
                    outcome(&bytes, block),
                    whole,
                    "{} in blocks of {block}",
                    file.display()
                );
            }
        }
    }

    #[test]
    fn job_ids_split() {
        assert_eq!(split_job_id("123"), (Some(123), None, None));
        assert_eq!(split_job_id("123_4"), (Some(123), Some((123, 4)), None));
        assert_eq!(split_job_id("123+1"), (Some(123), None, Some((123, 1))));
    }

    #[test]
    fn header_detection() {
        assert!(is_sacct_header("JobID|JobIDRaw|User"));
        assert!(is_sacct_header("jobidraw|user|submit"));
        assert!(!is_sacct_header("; MaxProcs: 100"));
        assert!(!is_sacct_header("1 0 10 100 4 -1"));
    }
}
