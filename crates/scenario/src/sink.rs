//! Sinks: where a run's records go as they become final. A [`crate::Simulation`] pushes every
//! job, session and batch to each of its sinks in the order the engine hands them out (jobs in
//! submission order, sessions and batches as they end), and tells them when the run is over
//! ([`Sink::finish`], with the rendered summary). Every output format is a sink
//! ([`crate::output::OutputFormat::sink`]), so a file is written the same way whether the run is
//! streamed or kept whole, started from the command line or Python, alone or in a sweep.
//!
//! [`UserOrdered`] is the wrapper that puts a table of rows ending in time order (sessions,
//! batches) into user order, spilling to a scratch file when the rows outgrow its memory budget;
//! [`Kept`] keeps everything a caller wants to look at after the run (validation, Python).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use config::{Result, ScenarioError};
use metrics::{BatchRecord, JobRecord, SessionRecord};
use users::Submission;

use crate::batsim::Intervals;
use crate::output::{csv_error, io_error};

/// What kind of run the records come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    /// A site-level run: simulated users, their sessions and batches.
    Site,
    /// A replay of a trace; `feedback` when its sessions were replayed with feedback (then it
    /// has sessions, but no batches).
    Replay {
        /// Whether the replay has sessions (replay with feedback).
        feedback: bool,
    },
}

/// What a sink knows about a run before its first record.
#[derive(Debug, Clone, Copy)]
pub struct RunHeader<'a> {
    /// The kind of run.
    pub kind: RunKind,
    /// The site's group names, by group index (empty in a replay).
    pub group_names: &'a [String],
    /// The site's users (0 in a replay): a table ordered by user shares its memory among them.
    pub users: usize,
    /// A directory for scratch files (the output directory, say); `None`: the system's.
    pub scratch: Option<&'a Path>,
    /// The site simulated (site runs only).
    pub site: Option<&'a config::site::Site>,
    /// The scheduler's label.
    pub scheduler: &'a str,
    /// The Slurm model's configuration, when it is the scheduler (jobs.csv then gives each
    /// job's priority at its start, its partition and QOS, and shares.csv is written).
    pub slurm: Option<&'a slurm_model::SlurmConfig>,
    /// The backfilling rule's annotation columns, if it annotates its jobs (the Slurm model:
    /// jobs.csv then gives each job's priority at its start, its partition and QOS).
    pub columns: Option<&'a std::sync::Arc<dyn cluster::Columns>>,
    /// The machine's resources besides processors, by name (empty on a machine of processors
    /// only): jobs.csv gives each job's amount of each, in this order.
    pub resources: &'a [String],
    /// On a machine of node types: its nodes' names, by node index (nodes.csv is written).
    pub node_names: Option<&'a [String]>,
    /// Whether the run has outages or node failures (outages.csv is written).
    pub out_of_service: bool,
}

impl RunHeader<'_> {
    /// Whether the run has sessions (a site run, or a replay with feedback).
    pub fn has_sessions(&self) -> bool {
        matches!(
            self.kind,
            RunKind::Site | RunKind::Replay { feedback: true }
        )
    }

    /// Whether the run has batches (a site run).
    pub fn has_batches(&self) -> bool {
        self.kind == RunKind::Site
    }
}

/// One finished job, as a sink sees it.
#[derive(Debug, Clone, Copy)]
pub struct JobEvent<'a> {
    /// Its record.
    pub record: &'a JobRecord,
    /// In a site run: the user's submission (user index, session, the job it followed, the
    /// drawn size and runtime) and the user's group index. `None` in a replay.
    pub owner: Option<(&'a Submission, usize)>,
}

/// What a sink gets when the run is over.
#[derive(Debug, Clone, Copy)]
pub struct RunEnd<'a> {
    /// summary.json's text (pretty JSON, no final newline).
    pub summary_json: &'a str,
    /// On a machine of nodes, when the run kept them: the processors each job held as the
    /// cluster placed them, by job index in submission order.
    pub placements: Option<&'a [Intervals]>,
    /// Under the Slurm model: its association tree's samples (shares.csv).
    pub shares: Option<&'a crate::slurm_report::SharesTable>,
    /// On a machine of node types, when the run kept them: what each job held on each of its
    /// nodes, by job index in submission order (`None` for a job that never started).
    pub node_shares: Option<&'a [NodeShares]>,
    /// With a power model: the IT energy charged to each job, J, by record (submission order).
    pub energies: Option<&'a [f64]>,
    /// Every period processors were out of service, by start (outages.csv; empty without
    /// outages and failures).
    pub out_of_service: &'a [crate::outages::OutOfService],
}

/// What one job held on each of its nodes: (node index, its share), in the order the nodes
/// were chosen (`None`: it never started). One node's share is kept in place (most jobs have
/// one node: no allocation per job).
pub type NodeShares = Option<smallvec::SmallVec<[(u32, cluster::Amounts); 1]>>;

/// Receives a run's records as they become final.
pub trait Sink: Send {
    /// A job's final record, in submission order.
    fn job(&mut self, job: JobEvent<'_>) -> Result<()>;
    /// A session that ended (time order; each user's in session order).
    fn session(&mut self, _session: &SessionRecord) -> Result<()> {
        Ok(())
    }
    /// A completed batch (time order; each user's in (session, batch) order).
    fn batch(&mut self, _batch: &BatchRecord) -> Result<()> {
        Ok(())
    }
    /// The run is over: write what is left and flush.
    fn finish(self: Box<Self>, end: &RunEnd<'_>) -> Result<()>;
    /// Whether the sink reads [`RunEnd::placements`]: only then does a run on a machine of
    /// nodes keep where each job ran.
    fn wants_placements(&self) -> bool {
        false
    }
    /// Whether the sink reads [`RunEnd::shares`]: only then does the Slurm model sample its
    /// association tree.
    fn wants_share_samples(&self) -> bool {
        false
    }
    /// Whether the sink reads [`RunEnd::node_shares`]: only then does a run on a machine of
    /// node types keep what each job held on each node.
    fn wants_node_shares(&self) -> bool {
        false
    }
}

/// Bytes of pending rows kept in memory per table, shared among the users.
const PENDING_BUDGET: usize = 16 << 20;

/// One user's rows: those moved to the scratch file (offset, length), then those pending.
#[derive(Default)]
struct UserRows {
    spilled: Vec<(u64, usize)>,
    pending: Vec<u8>,
    /// The key of its latest row: rows must come in key order.
    last: Option<(u32, u32)>,
}

/// CSV rows that come in time order, written grouped by user (ascending), each user's in the
/// order they came: each user's rows are kept as bytes, moved to an unnamed scratch file when
/// they outgrow the user's share of a fixed budget, and copied in user order at the end. Used
/// by the sessions and batches tables, whose rows end in time order, users interleaved.
pub struct UserOrdered {
    table: &'static str,
    header: &'static [&'static str],
    out: Box<dyn Write + Send>,
    /// By user id (ids are small: 1 to the number of users).
    users: Vec<UserRows>,
    scratch: File,
    scratch_len: u64,
    /// Pending bytes a user may hold before they go to the scratch file.
    share: usize,
}

impl UserOrdered {
    /// The table `table` with columns `header`, written to `out` at the end; scratch files in
    /// `dir` (the system's temporary directory without); `users` share the memory budget.
    pub fn new(
        table: &'static str,
        header: &'static [&'static str],
        out: Box<dyn Write + Send>,
        dir: Option<&Path>,
        users: usize,
    ) -> Result<UserOrdered> {
        let scratch = match dir {
            Some(dir) => tempfile::tempfile_in(dir),
            None => tempfile::tempfile(),
        }
        .map_err(|source| ScenarioError::Io {
            what: format!("cannot create a scratch file for {table}"),
            source,
        })?;
        Ok(UserOrdered {
            table,
            header,
            out,
            users: Vec::new(),
            scratch,
            scratch_len: 0,
            share: (PENDING_BUDGET / users.max(1)).max(4096),
        })
    }

    /// Adds `user`'s next row (`key`: its session and batch numbers, which must increase).
    pub fn push(
        &mut self,
        user: u32,
        key: (u32, u32),
        write: impl FnOnce(&mut csv::Writer<&mut Vec<u8>>) -> csv::Result<()>,
    ) -> Result<()> {
        let table = self.table;
        let index = user as usize;
        if index >= self.users.len() {
            self.users.resize_with(index + 1, UserRows::default);
        }
        let rows = &mut self.users[index];
        if rows.last.is_some_and(|last| last >= key) {
            return Err(ScenarioError::Invalid(format!(
                "cannot write {table}: user {user}'s rows came out of order"
            )));
        }
        rows.last = Some(key);
        let mut w = csv::WriterBuilder::new()
            .buffer_capacity(256)
            .from_writer(&mut rows.pending);
        write(&mut w).map_err(|e| csv_error(table, e))?;
        w.flush().map_err(|e| io_error(table, e))?;
        drop(w);
        if rows.pending.len() >= self.share {
            self.scratch
                .write_all(&rows.pending)
                .map_err(|e| io_error(table, e))?;
            rows.spilled.push((self.scratch_len, rows.pending.len()));
            self.scratch_len += rows.pending.len() as u64;
            rows.pending.clear();
        }
        Ok(())
    }

    /// Writes the header row, then every user's rows, and flushes.
    pub fn finish(mut self) -> Result<()> {
        let table = self.table;
        let out = &mut self.out;
        let mut w = csv::Writer::from_writer(&mut *out);
        w.write_record(self.header)
            .map_err(|e| csv_error(table, e))?;
        w.flush().map_err(|e| io_error(table, e))?;
        drop(w);
        let mut buffer = Vec::new();
        for rows in &self.users {
            for &(offset, len) in &rows.spilled {
                buffer.resize(len, 0);
                self.scratch
                    .seek(SeekFrom::Start(offset))
                    .and_then(|_| self.scratch.read_exact(&mut buffer))
                    .and_then(|()| out.write_all(&buffer))
                    .map_err(|e| io_error(table, e))?;
            }
            out.write_all(&rows.pending)
                .map_err(|e| io_error(table, e))?;
        }
        out.flush().map_err(|e| io_error(table, e))
    }

    /// Whether some rows went through the scratch file.
    pub fn spilled(&self) -> bool {
        self.scratch_len > 0
    }
}

/// What [`Kept`] holds once the run is over: everything a caller may want to look at after a
/// run (the generated workload for validation or SWF, the records for a figure).
#[derive(Debug, Clone, Default)]
pub struct KeptRun {
    /// One record per job, in submission order.
    pub records: Vec<JobRecord>,
    /// Each record's submission and its owner's group index (site runs; empty in a replay).
    pub owners: Vec<(Submission, usize)>,
    /// Every session, by user and session number.
    pub sessions: Vec<SessionRecord>,
    /// Every completed batch, by user, session and batch number.
    pub batches: Vec<BatchRecord>,
    /// The placements on a machine of nodes, if the run kept them.
    pub placements: Option<Vec<Intervals>>,
}

/// A sink that keeps the whole run in memory, for the caller to take after the run
/// (through the handle [`Kept::new`] returns). Its memory grows with the run: use it for what needs the whole run.
#[derive(Default)]
pub struct Kept {
    run: KeptRun,
    into: Arc<Mutex<Option<KeptRun>>>,
}

impl Kept {
    /// A sink and the handle its run lands in when the run finishes.
    pub fn new() -> (Kept, Arc<Mutex<Option<KeptRun>>>) {
        let kept = Kept::default();
        let handle = Arc::clone(&kept.into);
        (kept, handle)
    }
}

impl Sink for Kept {
    fn wants_placements(&self) -> bool {
        true
    }
    fn job(&mut self, job: JobEvent<'_>) -> Result<()> {
        self.run.records.push(job.record.clone());
        if let Some((submission, group)) = job.owner {
            self.run.owners.push((*submission, group));
        }
        Ok(())
    }
    fn session(&mut self, session: &SessionRecord) -> Result<()> {
        self.run.sessions.push(session.clone());
        Ok(())
    }
    fn batch(&mut self, batch: &BatchRecord) -> Result<()> {
        self.run.batches.push(batch.clone());
        Ok(())
    }
    fn finish(mut self: Box<Self>, end: &RunEnd<'_>) -> Result<()> {
        self.run.sessions.sort_by_key(|s| (s.user, s.session));
        self.run
            .batches
            .sort_by_key(|b| (b.user, b.session, b.batch));
        self.run.placements = end.placements.map(<[Intervals]>::to_vec);
        let run = std::mem::take(&mut self.run);
        if let Ok(mut slot) = self.into.lock() {
            *slot = Some(run);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use metrics::SessionEnd;

    use super::*;

    /// A writer whose bytes the test reads afterwards.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if let Ok(mut b) = self.0.lock() {
                b.extend_from_slice(buf);
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn rows_by_user_are_the_bytes_of_the_sorted_table_even_through_the_scratch_file() {
        let dir = tempfile::tempdir().unwrap();
        // Sessions ending in time order, users interleaved; so many users that each may keep
        // only 4 KiB pending, so most rows pass through the scratch file.
        let mut sessions = Vec::new();
        let mut numbers = [0u32; 4];
        for i in 0..20_000u32 {
            let user = (i * 7 + i / 3) % 4;
            numbers[user as usize] += 1;
            sessions.push(SessionRecord {
                user: user + 1,
                group: if user == 2 {
                    "night, late".into()
                } else {
                    "day".into()
                },
                session: numbers[user as usize],
                jobs: i % 9,
                start: i64::from(i) * 60,
                end: i64::from(i) * 60 + 30,
                ended_by: [SessionEnd::Abort, SessionEnd::Cycle][i as usize % 2],
            });
        }
        let streamed = Shared::default();
        let mut ordered = UserOrdered::new(
            "sessions.csv",
            &crate::output::SESSION_COLUMNS,
            Box::new(streamed.clone()),
            Some(dir.path()),
            1 << 20,
        )
        .unwrap();
        for s in &sessions {
            ordered
                .push(s.user, (s.session, 0), |w| crate::output::session_row(w, s))
                .unwrap();
        }
        assert!(ordered.spilled(), "nothing went to the scratch file");
        ordered.finish().unwrap();
        sessions.sort_by_key(|s| (s.user, s.session));
        let mut whole = Vec::new();
        crate::output::write_sessions_csv(&sessions, &mut whole).unwrap();
        let streamed = streamed.0.lock().unwrap().clone();
        assert_eq!(
            String::from_utf8(streamed).unwrap(),
            String::from_utf8(whole).unwrap()
        );
    }

    #[test]
    fn rows_out_of_order_are_refused() {
        let mut ordered =
            UserOrdered::new("batches.csv", &["x"], Box::new(std::io::sink()), None, 1).unwrap();
        let row = |w: &mut csv::Writer<&mut Vec<u8>>| w.write_record(["x"]);
        assert!(ordered.push(1, (1, 2), row).is_ok());
        assert!(ordered.push(2, (1, 1), row).is_ok());
        assert!(ordered.push(1, (1, 1), row).is_err());
    }
}
