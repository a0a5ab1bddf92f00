/// Number of fields on an SWF job line.
pub const FIELD_COUNT: usize = 18;

/// Names of the 18 SWF fields, in order (index 0 is field 1).
pub const FIELD_NAMES: [&str; FIELD_COUNT] = [
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time used",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user ID",
    "group ID",
    "executable number",
    "queue number",
    "partition number",
    "preceding job number",
    "think time from preceding job",
];

/// Fields 6, 7 and 10 may hold fractions in real logs; every other field is a whole number.
pub(crate) const FRACTIONAL_FIELDS: [usize; 3] = [5, 6, 9];

/// One job line of an SWF file. Times are in seconds; `-1` means "unknown" as in the format.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Record {
    /// Field 1: job number, a counter starting at 1.
    pub job_number: i64,
    /// Field 2: submit time in seconds since the log's start.
    pub submit_time: i64,
    /// Field 3: wait time in seconds (submit to start).
    pub wait_time: i64,
    /// Field 4: run time in seconds (wall clock from start to end).
    pub run_time: i64,
    /// Field 5: number of allocated processors.
    pub allocated_processors: i64,
    /// Field 6: average CPU time used per processor, in seconds.
    pub average_cpu_time: f64,
    /// Field 7: used memory per processor, in kilobytes.
    pub used_memory: f64,
    /// Field 8: requested number of processors.
    pub requested_processors: i64,
    /// Field 9: requested (estimated) run time in seconds: the user's runtime estimate.
    pub requested_time: i64,
    /// Field 10: requested memory per processor, in kilobytes.
    pub requested_memory: f64,
    /// Field 11: status (1 completed, 0 failed, 5 cancelled, ...).
    pub status: i64,
    /// Field 12: user ID.
    pub user_id: i64,
    /// Field 13: group ID.
    pub group_id: i64,
    /// Field 14: executable (application) number.
    pub executable: i64,
    /// Field 15: queue number.
    pub queue: i64,
    /// Field 16: partition number.
    pub partition: i64,
    /// Field 17: number of a previous job this one depends on.
    pub preceding_job: i64,
    /// Field 18: think time in seconds between the preceding job's end and this submit.
    pub think_time: i64,
}

impl Default for Record {
    /// Every field unknown (`-1`).
    fn default() -> Self {
        Record {
            job_number: -1,
            submit_time: -1,
            wait_time: -1,
            run_time: -1,
            allocated_processors: -1,
            average_cpu_time: -1.0,
            used_memory: -1.0,
            requested_processors: -1,
            requested_time: -1,
            requested_memory: -1.0,
            status: -1,
            user_id: -1,
            group_id: -1,
            executable: -1,
            queue: -1,
            partition: -1,
            preceding_job: -1,
            think_time: -1,
        }
    }
}

/// A field value before it is stored in a [`Record`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum FieldValue {
    Whole(i64),
    Fraction(f64),
}

impl Record {
    /// Builds a record from its 18 parsed fields (index 0 is field 1).
    pub(crate) fn from_fields(f: &[FieldValue; FIELD_COUNT]) -> Record {
        let whole = |i: usize| match f[i] {
            FieldValue::Whole(v) => v,
            // Only fractional fields are parsed as fractions; whole numbers never reach here as such.
            FieldValue::Fraction(v) => v as i64,
        };
        let fraction = |i: usize| match f[i] {
            FieldValue::Whole(v) => v as f64,
            FieldValue::Fraction(v) => v,
        };
        Record {
            job_number: whole(0),
            submit_time: whole(1),
            wait_time: whole(2),
            run_time: whole(3),
            allocated_processors: whole(4),
            average_cpu_time: fraction(5),
            used_memory: fraction(6),
            requested_processors: whole(7),
            requested_time: whole(8),
            requested_memory: fraction(9),
            status: whole(10),
            user_id: whole(11),
            group_id: whole(12),
            executable: whole(13),
            queue: whole(14),
            partition: whole(15),
            preceding_job: whole(16),
            think_time: whole(17),
        }
    }

    /// The record's fields in file order, for writing.
    pub(crate) fn fields(&self) -> [FieldValue; FIELD_COUNT] {
        use FieldValue::{Fraction, Whole};
        [
            Whole(self.job_number),
            Whole(self.submit_time),
            Whole(self.wait_time),
            Whole(self.run_time),
            Whole(self.allocated_processors),
            Fraction(self.average_cpu_time),
            Fraction(self.used_memory),
            Whole(self.requested_processors),
            Whole(self.requested_time),
            Fraction(self.requested_memory),
            Whole(self.status),
            Whole(self.user_id),
            Whole(self.group_id),
            Whole(self.executable),
            Whole(self.queue),
            Whole(self.partition),
            Whole(self.preceding_job),
            Whole(self.think_time),
        ]
    }
}
