//! A site run's tables written while it runs ([`crate::run::simulate_streamed`]), so its memory
//! follows the jobs in flight instead of the run.
//!
//! jobs.csv is in submission order, the order in which the engine hands the records out, so its
//! rows go straight to the file. sessions.csv and batches.csv are ordered by user, but sessions
//! and batches end in time order, users interleaved: [`UserOrdered`] keeps each user's rows as
//! bytes, moves a user's rows to a scratch file whenever they outgrow its share of a fixed
//! budget, and at the end copies every user's rows, in user order, to the table. Every row is
//! written by the same function as in the whole-run writers of [`crate::output`].

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use metrics::{BatchRecord, JobRecord, SessionRecord};
use users::Submission;

use crate::error::{Result, ScenarioError};
use crate::output::{
    BATCH_COLUMNS, JobRows, SESSION_COLUMNS, batch_row, csv_error, io_error, session_row,
};

/// Where a streamed site run writes its tables (each a file the caller names; see
/// [`crate::run::simulate_streamed`]).
pub struct RunFiles<'a> {
    /// jobs.csv.
    pub jobs: &'a mut (dyn Write + Send),
    /// sessions.csv.
    pub sessions: &'a mut (dyn Write + Send),
    /// batches.csv.
    pub batches: &'a mut (dyn Write + Send),
    /// A directory for the scratch files (deleted when done) that put sessions and batches in
    /// user order: the output directory, say.
    pub scratch: &'a Path,
}

/// Bytes of pending rows kept in memory per table, shared among the users.
const PENDING_BUDGET: usize = 16 << 20;

/// The three tables of a run, written as its records come.
pub(crate) struct Writers<'a> {
    jobs: JobRows<&'a mut (dyn Write + Send)>,
    sessions: UserOrdered,
    batches: UserOrdered,
    sessions_out: &'a mut (dyn Write + Send),
    batches_out: &'a mut (dyn Write + Send),
    group_names: Vec<String>,
}

impl<'a> Writers<'a> {
    /// Writes jobs.csv's header; `users` is the number of users (each gets an equal share of
    /// the memory for pending rows).
    pub(crate) fn new(
        files: RunFiles<'a>,
        group_names: Vec<String>,
        users: usize,
    ) -> Result<Writers<'a>> {
        Ok(Writers {
            jobs: JobRows::new(files.jobs)?,
            sessions: UserOrdered::new("sessions.csv", files.scratch, users)?,
            batches: UserOrdered::new("batches.csv", files.scratch, users)?,
            sessions_out: files.sessions,
            batches_out: files.batches,
            group_names,
        })
    }

    /// A job's row; `group` is its owner's group index.
    pub(crate) fn job(
        &mut self,
        record: &JobRecord,
        submission: &Submission,
        group: usize,
    ) -> Result<()> {
        let name = self.group_names.get(group).map_or("", String::as_str);
        self.jobs.row(record, Some((name, submission.session)))
    }

    /// A session's row.
    pub(crate) fn session(&mut self, s: &SessionRecord) -> Result<()> {
        self.sessions
            .push(s.user, (s.session, 0), |w| session_row(w, s))
    }

    /// A batch's row.
    pub(crate) fn batch(&mut self, b: &BatchRecord) -> Result<()> {
        self.batches
            .push(b.user, (b.session, b.batch), |w| batch_row(w, b))
    }

    /// Flushes jobs.csv and writes sessions.csv and batches.csv whole.
    pub(crate) fn finish(self) -> Result<()> {
        self.jobs.finish()?;
        self.sessions.finish(&SESSION_COLUMNS, self.sessions_out)?;
        self.batches.finish(&BATCH_COLUMNS, self.batches_out)
    }
}

/// One user's rows: those moved to the scratch file (offset, length), then those pending.
#[derive(Default)]
struct UserRows {
    spilled: Vec<(u64, usize)>,
    pending: Vec<u8>,
    /// The key of its latest row: rows must come in key order.
    last: Option<(u32, u32)>,
}

/// CSV rows that come in time order, written grouped by user (ascending), each user's in the
/// order they came.
struct UserOrdered {
    table: &'static str,
    /// By user id (ids are small: 1 to the number of users).
    users: Vec<UserRows>,
    scratch: File,
    scratch_len: u64,
    /// Pending bytes a user may hold before they go to the scratch file.
    share: usize,
}

impl UserOrdered {
    fn new(table: &'static str, dir: &Path, users: usize) -> Result<UserOrdered> {
        let scratch = tempfile::tempfile_in(dir).map_err(|source| ScenarioError::Io {
            what: format!(
                "cannot create a scratch file for {table} in {}",
                dir.display()
            ),
            source,
        })?;
        Ok(UserOrdered {
            table,
            users: Vec::new(),
            scratch,
            scratch_len: 0,
            share: (PENDING_BUDGET / users.max(1)).max(4096),
        })
    }

    /// Adds `user`'s next row (`key`: its session and batch numbers, which must increase).
    fn push(
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

    /// Writes the header row, then every user's rows.
    fn finish(mut self, header: &[&str], out: &mut dyn Write) -> Result<()> {
        let table = self.table;
        let mut w = csv::Writer::from_writer(&mut *out);
        w.write_record(header).map_err(|e| csv_error(table, e))?;
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
}

#[cfg(test)]
mod tests {
    use metrics::SessionEnd;

    use super::*;

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
        let mut ordered = UserOrdered::new("sessions.csv", dir.path(), 1 << 20).unwrap();
        for s in &sessions {
            ordered
                .push(s.user, (s.session, 0), |w| session_row(w, s))
                .unwrap();
        }
        assert!(ordered.scratch_len > 0, "nothing went to the scratch file");
        let mut streamed = Vec::new();
        ordered.finish(&SESSION_COLUMNS, &mut streamed).unwrap();
        sessions.sort_by_key(|s| (s.user, s.session));
        let mut whole = Vec::new();
        crate::output::write_sessions_csv(&sessions, &mut whole).unwrap();
        assert_eq!(
            String::from_utf8(streamed).unwrap(),
            String::from_utf8(whole).unwrap()
        );
    }

    #[test]
    fn rows_out_of_order_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut ordered = UserOrdered::new("batches.csv", dir.path(), 1).unwrap();
        let row = |w: &mut csv::Writer<&mut Vec<u8>>| w.write_record(["x"]);
        assert!(ordered.push(1, (1, 2), row).is_ok());
        assert!(ordered.push(2, (1, 1), row).is_ok());
        assert!(ordered.push(1, (1, 1), row).is_err());
    }
}
