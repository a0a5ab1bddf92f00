//! The values of sacct's columns, as the sacct man page (Slurm 25.11) writes them: times,
//! durations, memory with units, TRES lists, job states, and the dependency of a submit line.

use chrono::{LocalResult, NaiveDate, NaiveDateTime, NaiveTime, TimeZone};
use chrono_tz::Tz;

/// A value that is not of its column's form (the caller names the column and what it expects).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invalid;

/// Words sacct writes for a time or limit it does not have.
fn is_unknown(text: &str) -> bool {
    matches!(text, "" | "Unknown" | "None" | "N/A" | "INVALID")
}

/// A `YYYY-MM-DDTHH:MM:SS` time (sacct's `standard` format, local time without an offset), or
/// `None` for `Unknown`/`None`/empty. `Err` names what is wrong.
pub fn parse_time(text: &str) -> Result<Option<NaiveDateTime>, &'static str> {
    if is_unknown(text) {
        return Ok(None);
    }
    let b = text.as_bytes();
    if b.len() != 19
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err("a time YYYY-MM-DDTHH:MM:SS (set SLURM_TIME_FORMAT=standard), Unknown or None");
    }
    let number = |from: usize, to: usize| -> Option<u32> {
        b[from..to].iter().try_fold(0u32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        number(0, 4),
        number(5, 7),
        number(8, 10),
        number(11, 13),
        number(14, 16),
        number(17, 19),
    ) else {
        return Err("a time YYYY-MM-DDTHH:MM:SS (set SLURM_TIME_FORMAT=standard), Unknown or None");
    };
    let date = NaiveDate::from_ymd_opt(year as i32, month, day);
    let time = NaiveTime::from_hms_opt(hour, minute, second);
    match (date, time) {
        (Some(d), Some(t)) => Ok(Some(NaiveDateTime::new(d, t))),
        _ => Err("a possible date and time (month 1-12, day of the month, hour 0-23, ...)"),
    }
}

/// The zone sacct's local times are read in (`--tz`; UTC unless given).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// Times are UTC (the dump was made with `TZ=UTC`, as the docs ask).
    #[default]
    Utc,
    /// Times are the wall clock of this zone, daylight saving included.
    Zone(Tz),
}

/// A local time placed on the UTC time line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    /// One reading: seconds since the Unix epoch.
    Exact(i64),
    /// The hour repeated when daylight saving ends: two readings; the earlier is given.
    Ambiguous(i64),
    /// The hour skipped when daylight saving starts: no such local time.
    Missing,
}

impl Clock {
    /// The zone named `name` (`UTC`, `Europe/Berlin`, ...).
    pub fn named(name: &str) -> Option<Clock> {
        if name.eq_ignore_ascii_case("utc") {
            return Some(Clock::Utc);
        }
        name.parse::<Tz>().ok().map(Clock::Zone)
    }

    /// Its name, as `--tz` takes it and the SWF header's `TimeZoneString` records it.
    pub fn name(&self) -> String {
        match self {
            Clock::Utc => "UTC".to_string(),
            Clock::Zone(tz) => tz.name().to_string(),
        }
    }

    /// Places a local time.
    pub fn place(&self, local: NaiveDateTime) -> Placed {
        match self {
            Clock::Utc => Placed::Exact(local.and_utc().timestamp()),
            Clock::Zone(tz) => match tz.from_local_datetime(&local) {
                LocalResult::Single(t) => Placed::Exact(t.timestamp()),
                LocalResult::Ambiguous(early, _) => Placed::Ambiguous(early.timestamp()),
                LocalResult::None => Placed::Missing,
            },
        }
    }
}

/// A duration in seconds: `[D-]HH:MM:SS`, `D-HH`, `D-HH:MM`, `MM:SS`, or a lone number of
/// minutes (Slurm's time-limit syntax). `Ok(None)` for `UNLIMITED`, `Partition_Limit` and
/// unknown values; `Err` for anything else.
pub fn parse_duration(text: &str) -> Result<Option<i64>, Invalid> {
    if is_unknown(text) || text == "UNLIMITED" || text == "Partition_Limit" {
        return Ok(None);
    }
    let number = |s: &str| -> Result<i64, Invalid> {
        if s.is_empty() || s.len() > 9 || !s.bytes().all(|c| c.is_ascii_digit()) {
            return Err(Invalid);
        }
        s.parse().map_err(|_| Invalid)
    };
    let (days, rest) = match text.split_once('-') {
        Some((d, rest)) => (number(d)?, Some(rest)),
        None => (0, None),
    };
    let parts: Vec<&str> = rest.unwrap_or(text).split(':').collect();
    let seconds = match (rest.is_some(), parts.as_slice()) {
        // with days: D-HH, D-HH:MM, D-HH:MM:SS
        (true, [h]) => number(h)? * 3600,
        (true, [h, m]) => number(h)? * 3600 + number(m)? * 60,
        // without: minutes, MM:SS, HH:MM:SS
        (false, [m]) => number(m)? * 60,
        (false, [m, s]) => number(m)? * 60 + number(s)?,
        (_, [h, m, s]) => number(h)? * 3600 + number(m)? * 60 + number(s)?,
        _ => return Err(Invalid),
    };
    Ok(Some(days * 86_400 + seconds))
}

/// A whole number of minutes (`TimelimitRaw`) in seconds; `Ok(None)` for unlimited or unknown.
pub fn parse_minutes(text: &str) -> Result<Option<i64>, Invalid> {
    if is_unknown(text) || text == "UNLIMITED" || text == "Partition_Limit" {
        return Ok(None);
    }
    match text.parse::<i64>() {
        Ok(m) if (0..i64::MAX / 60).contains(&m) => Ok(Some(m * 60)),
        // Slurm's INFINITE (0xffffffff minutes) printed raw
        _ if text == "4294967295" => Ok(None),
        _ => Err(Invalid),
    }
}

/// What a memory amount is per (the `c`/`n` suffix of older `ReqMem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryPer {
    /// Per allocated CPU (`c`).
    Cpu,
    /// Per node (`n`, and newer versions' plain `ReqMem`).
    Node,
    /// For the whole job (a TRES `mem=`).
    Job,
}

/// A memory amount with a K/M/G/T/P unit (powers of 1024; no unit means megabytes, Slurm's
/// default) in kilobytes, and what it is per. `Ok(None)` for empty or `0`; `Err` otherwise.
pub fn parse_memory(
    text: &str,
    default_per: MemoryPer,
) -> Result<Option<(f64, MemoryPer)>, Invalid> {
    if is_unknown(text) || text == "0" {
        return Ok(None);
    }
    let (text, per) = match text.as_bytes().last() {
        Some(b'c') => (&text[..text.len() - 1], MemoryPer::Cpu),
        Some(b'n') => (&text[..text.len() - 1], MemoryPer::Node),
        _ => (text, default_per),
    };
    let (digits, scale) = match text.as_bytes().last() {
        Some(b'K') => (&text[..text.len() - 1], 1.0),
        Some(b'M') => (&text[..text.len() - 1], 1024.0),
        Some(b'G') => (&text[..text.len() - 1], 1024.0 * 1024.0),
        Some(b'T') => (&text[..text.len() - 1], 1024.0 * 1024.0 * 1024.0),
        Some(b'P') => (&text[..text.len() - 1], 1024.0 * 1024.0 * 1024.0 * 1024.0),
        _ => (text, 1024.0),
    };
    match digits.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok((v > 0.0).then_some((v * scale, per))),
        _ => Err(Invalid),
    }
}

/// The value of `key` in a TRES list (`billing=12,cpu=12,mem=33600M,node=1,gres/gpu=2`).
pub fn tres<'a>(list: &'a str, key: &str) -> Option<&'a str> {
    list.split(',').find_map(|item| {
        let (k, v) = item.split_once('=')?;
        (k == key).then_some(v)
    })
}

/// The value of a submit line's first option `--LONG=VALUE`, `--LONG VALUE`, `-S VALUE` or
/// `-SVALUE` (`long` and `short` without their dashes), quotes trimmed.
fn option_value<'a>(submit_line: &'a str, long: &str, short: &str) -> Option<&'a str> {
    let (long, short) = (format!("--{long}"), format!("-{short}"));
    let mut words = submit_line.split_ascii_whitespace();
    while let Some(word) = words.next() {
        let value = if let Some(value) = word
            .strip_prefix(long.as_str())
            .and_then(|w| w.strip_prefix('='))
        {
            value
        } else if word == long || word == short {
            words.next()?
        } else if let Some(value) = word.strip_prefix(short.as_str()) {
            value
        } else {
            continue;
        };
        return Some(value.trim_matches(|c| c == '"' || c == '\''));
    }
    None
}

/// The first job a submit line's `--dependency` (`-d`) names: `afterok:123`,
/// `afterany:123_4:456`, `singleton` (none). Only the job id's leading number is taken.
pub fn dependency(submit_line: &str) -> Option<u64> {
    if !submit_line.contains("-d") {
        return None;
    }
    let spec = option_value(submit_line, "dependency", "d")?;
    let first = spec.split([',', '?']).next()?;
    let (_, ids) = first.split_once(':')?;
    let id: String = ids.chars().take_while(char::is_ascii_digit).collect();
    id.parse().ok()
}

/// The throttle of a submit line's job array: the `N` of `--array=1-8%N` (`-a`, `--array
/// SPEC`), the most tasks of the array that run at once (`None`: no array or no throttle).
pub fn array_throttle(submit_line: &str) -> Option<u32> {
    if !submit_line.contains('%') {
        return None;
    }
    let spec = option_value(submit_line, "array", "a")?;
    let (_, limit) = spec.rsplit_once('%')?;
    limit.parse().ok().filter(|&n| n > 0)
}

/// A job's state, as sacct reports it (the base state, or a flag it reports instead).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum State {
    /// Ended with exit code 0.
    Completed,
    /// Ended with a non-zero exit code or another failure.
    Failed,
    /// Cancelled by the user or an administrator (before or after it started).
    Cancelled,
    /// Killed at its time limit.
    Timeout,
    /// Ended by a node failure.
    NodeFail,
    /// Killed for exceeding its memory.
    OutOfMemory,
    /// Preempted.
    Preempted,
    /// Ended by a node boot failure.
    BootFail,
    /// Could not meet its deadline.
    Deadline,
    /// An earlier run of a job that was requeued (with `--duplicates`).
    Requeued,
    /// A federated sibling that ran elsewhere.
    Revoked,
    /// Not ended when the dump was made (pending, running, suspended, ...).
    NotEnded,
}

impl State {
    /// The state of a `State` field (`COMPLETED`, `CANCELLED by 1000`, `RUNNING`, ...); `None`
    /// for a word sacct does not write.
    pub fn parse(text: &str) -> Option<State> {
        let word = text.split([' ', '+']).next().unwrap_or_default();
        Some(match word {
            "COMPLETED" | "CD" => State::Completed,
            "FAILED" | "F" | "SPECIAL_EXIT" | "LAUNCH_FAILED" => State::Failed,
            "CANCELLED" | "CA" => State::Cancelled,
            "TIMEOUT" | "TO" => State::Timeout,
            "NODE_FAIL" | "NF" => State::NodeFail,
            "OUT_OF_MEMORY" | "OOM" => State::OutOfMemory,
            "PREEMPTED" | "PR" => State::Preempted,
            "BOOT_FAIL" | "BF" => State::BootFail,
            "DEADLINE" | "DL" => State::Deadline,
            "REQUEUED" | "RQ" | "REQUEUE_FED" | "REQUEUE_HOLD" => State::Requeued,
            "REVOKED" | "RV" => State::Revoked,
            "PENDING" | "PD" | "RUNNING" | "R" | "SUSPENDED" | "S" | "COMPLETING" | "CG"
            | "CONFIGURING" | "CF" | "RESIZING" | "RS" | "STOPPED" | "ST" | "SIGNALING"
            | "STAGE_OUT" | "RESV_DEL_HOLD" | "POWER_UP_NODE" | "UPDATE_DB" => State::NotEnded,
            _ => return None,
        })
    }

    /// The SWF status (field 11): 1 completed, 5 cancelled, 0 failed in any other way.
    pub fn swf_status(self) -> i64 {
        match self {
            State::Completed => 1,
            State::Cancelled => 5,
            _ => 0,
        }
    }

    /// Its name in reports and tables (`COMPLETED`, ...).
    pub fn name(self) -> &'static str {
        match self {
            State::Completed => "COMPLETED",
            State::Failed => "FAILED",
            State::Cancelled => "CANCELLED",
            State::Timeout => "TIMEOUT",
            State::NodeFail => "NODE_FAIL",
            State::OutOfMemory => "OUT_OF_MEMORY",
            State::Preempted => "PREEMPTED",
            State::BootFail => "BOOT_FAIL",
            State::Deadline => "DEADLINE",
            State::Requeued => "REQUEUED",
            State::Revoked => "REVOKED",
            State::NotEnded => "NOT_ENDED",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_throttle_is_read_from_the_submit_line() {
        for (line, expected) in [
            ("sbatch -n 4 --array=1-8%2 --wrap=sleep 41", Some(2)),
            ("sbatch --array 0-99%10 job.sh", Some(10)),
            ("sbatch -a 1,3,5%1 job.sh", Some(1)),
            ("sbatch -a1-4%3 job.sh", Some(3)),
            ("sbatch --array='1-8%2' job.sh", Some(2)),
            ("sbatch --array=1-8 job.sh", None),
            ("sbatch --array=1-8%0 job.sh", None),
            ("sbatch --account=a%b job.sh", None),
            ("sbatch --wrap='echo 50%' job.sh", None),
        ] {
            assert_eq!(array_throttle(line), expected, "{line}");
        }
    }

    #[test]
    fn times_and_unknowns() {
        let t = parse_time("2024-03-31T01:59:59").unwrap().unwrap();
        assert_eq!(t.to_string(), "2024-03-31 01:59:59");
        assert_eq!(parse_time("Unknown"), Ok(None));
        assert_eq!(parse_time("None"), Ok(None));
        assert!(parse_time("2024-02-30T00:00:00").is_err());
        assert!(parse_time("2024-01-01 00:00:00").is_err());
        assert!(parse_time("1711846800").is_err());
    }

    #[test]
    fn daylight_saving_is_placed_or_reported() {
        let berlin = Clock::named("Europe/Berlin").unwrap();
        // 2024-03-31 02:30 does not exist in Berlin; 2024-10-27 02:30 happens twice.
        let gap = parse_time("2024-03-31T02:30:00").unwrap().unwrap();
        assert_eq!(berlin.place(gap), Placed::Missing);
        let twice = parse_time("2024-10-27T02:30:00").unwrap().unwrap();
        assert_eq!(berlin.place(twice), Placed::Ambiguous(1729989000));
        let plain = parse_time("2024-01-01T12:00:00").unwrap().unwrap();
        assert_eq!(berlin.place(plain), Placed::Exact(1704106800));
        assert_eq!(Clock::Utc.place(plain), Placed::Exact(1704110400));
        assert!(Clock::named("Mars/Olympus").is_none());
    }

    #[test]
    fn durations_in_every_form() {
        assert_eq!(parse_duration("01:00:00"), Ok(Some(3600)));
        assert_eq!(parse_duration("1-00:00:00"), Ok(Some(86_400)));
        assert_eq!(parse_duration("2-03"), Ok(Some(2 * 86_400 + 3 * 3600)));
        assert_eq!(
            parse_duration("2-03:30"),
            Ok(Some(2 * 86_400 + 3 * 3600 + 1800))
        );
        assert_eq!(parse_duration("30:15"), Ok(Some(1815)));
        assert_eq!(parse_duration("90"), Ok(Some(5400)));
        assert_eq!(parse_duration("UNLIMITED"), Ok(None));
        assert_eq!(parse_duration("Partition_Limit"), Ok(None));
        assert_eq!(parse_duration("1:2:3:4"), Err(Invalid));
        assert!(parse_duration("soon").is_err());
        assert_eq!(parse_minutes("60"), Ok(Some(3600)));
        assert_eq!(parse_minutes("UNLIMITED"), Ok(None));
        assert!(parse_minutes("1h").is_err());
    }

    #[test]
    fn memory_units_and_suffixes() {
        assert_eq!(
            parse_memory("4000M", MemoryPer::Node),
            Ok(Some((4000.0 * 1024.0, MemoryPer::Node)))
        );
        assert_eq!(
            parse_memory("2Gc", MemoryPer::Node),
            Ok(Some((2.0 * 1024.0 * 1024.0, MemoryPer::Cpu)))
        );
        assert_eq!(
            parse_memory("512Kn", MemoryPer::Node),
            Ok(Some((512.0, MemoryPer::Node)))
        );
        assert_eq!(parse_memory("0", MemoryPer::Node), Ok(None));
        assert!(parse_memory("lots", MemoryPer::Node).is_err());
    }

    #[test]
    fn tres_and_dependencies() {
        let list = "billing=12,cpu=12,mem=33600M,node=1,gres/gpu=2";
        assert_eq!(tres(list, "mem"), Some("33600M"));
        assert_eq!(tres(list, "gres/gpu"), Some("2"));
        assert_eq!(tres(list, "energy"), None);
        assert_eq!(
            dependency("sbatch --dependency=afterok:123 job.sh"),
            Some(123)
        );
        assert_eq!(dependency("sbatch -d afterany:77_3:78 job.sh"), Some(77));
        assert_eq!(dependency("sbatch --dependency singleton job.sh"), None);
        assert_eq!(dependency("sbatch -t 10 job.sh"), None);
    }

    #[test]
    fn states() {
        assert_eq!(State::parse("CANCELLED by 1000"), Some(State::Cancelled));
        assert_eq!(State::parse("RUNNING"), Some(State::NotEnded));
        assert_eq!(State::parse("COMPLETED"), Some(State::Completed));
        assert_eq!(State::parse("EXPLODED"), None);
        assert_eq!(State::Timeout.swf_status(), 0);
    }
}
