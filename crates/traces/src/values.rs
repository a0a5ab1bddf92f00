//! The values the formats write: dates and times (local, or with an offset), Unix seconds,
//! counts, and the words for a value that is missing.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};

/// Words the traces write for a value they do not have (Philly's `None`, pandas' `NaN` and
/// empty fields of exported tables, Slurm's `Unknown`).
pub fn is_missing(text: &str) -> bool {
    // a value starting with a digit (most of them) is never a missing word
    if text.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return false;
    }
    matches!(
        text.trim_ascii(),
        "" | "None" | "none" | "NaN" | "nan" | "NULL" | "null" | "NA" | "N/A" | "Unknown"
    )
}

/// A time as a trace writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    /// A wall-clock time without an offset, in the trace's zone.
    Local(NaiveDateTime),
    /// An instant: a time with its offset (`+08:00`, `Z`), or Unix seconds.
    Unix(i64),
}

/// What a date-time column holds.
pub const DATE_TIME: &str = "a date and time YYYY-MM-DD HH:MM:SS (or with T, fractional seconds, an offset), or empty/None/NaN";

/// A date and time: `YYYY-MM-DD HH:MM:SS` or `YYYY-MM-DDTHH:MM:SS`, with optional fractional
/// seconds (dropped: times are whole seconds) and an optional offset (`+08:00`, `+0800`, `Z`;
/// then an instant). `None` for a missing value ([`is_missing`]).
pub fn date_time(text: &str) -> Result<Option<Stamp>, ()> {
    let text = text.trim_ascii();
    if is_missing(text) {
        return Ok(None);
    }
    if text.len() < 19 {
        return Err(());
    }
    let b = text.as_bytes();
    if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b' ' | b'T') || b[13] != b':' {
        return Err(());
    }
    if b[16] != b':' {
        return Err(());
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
        return Err(());
    };
    let date = NaiveDate::from_ymd_opt(year as i32, month, day).ok_or(())?;
    let time = NaiveTime::from_hms_opt(hour, minute, second).ok_or(())?;
    let local = NaiveDateTime::new(date, time);
    let mut rest = &text[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(());
        }
        rest = &fraction[digits..];
    }
    let rest = rest.trim_ascii_start();
    if rest.is_empty() {
        return Ok(Some(Stamp::Local(local)));
    }
    if rest == "Z" || rest == "UTC" {
        return Ok(Some(Stamp::Unix(local.and_utc().timestamp())));
    }
    let offset = offset_seconds(rest).ok_or(())?;
    Ok(Some(Stamp::Unix(local.and_utc().timestamp() - offset)))
}

/// An offset `+08:00`, `+0800` or `+08`, seconds east of UTC (bytes: read for every time).
fn offset_seconds(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let sign = match b.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let d = &b[1..];
    let (hours, minutes) = match d.len() {
        2 => (&d[..2], None),
        4 => (&d[..2], Some(&d[2..])),
        5 if d[2] == b':' => (&d[..2], Some(&d[3..])),
        _ => return None,
    };
    let two = |p: &[u8]| -> Option<i64> {
        p.iter()
            .all(u8::is_ascii_digit)
            .then(|| i64::from(p[0] - b'0') * 10 + i64::from(p[1] - b'0'))
    };
    let hours = two(hours)?;
    let minutes = minutes.map_or(Some(0), two)?;
    if hours > 14 || minutes > 59 {
        return None;
    }
    Some(sign * (hours * 3600 + minutes * 60))
}

/// A whole number as the traces write one: digits with an optional sign, and an optional
/// fraction of zeros (`4550879.0`, as exported tables write whole numbers); one pass over the
/// bytes, since every row has several. `None` for anything else (left to the float parser).
fn integer(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let (negative, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        b'+' => (false, &b[1..]),
        _ => (false, b),
    };
    let mut value: i64 = 0;
    let mut seen = 0;
    let mut rest = digits;
    while let Some((&d, tail)) = rest.split_first() {
        if !d.is_ascii_digit() {
            break;
        }
        if seen == 18 {
            return None;
        }
        value = value * 10 + i64::from(d - b'0');
        seen += 1;
        rest = tail;
    }
    if seen == 0 {
        return None;
    }
    if let Some((&b'.', zeros)) = rest.split_first() {
        if zeros.is_empty() || !zeros.iter().all(|&z| z == b'0') {
            return None;
        }
    } else if !rest.is_empty() {
        return None;
    }
    Some(if negative { -value } else { value })
}

/// What a Unix-seconds column holds.
pub const UNIX_SECONDS: &str = "Unix seconds (a number, fractions dropped), or empty/None/NaN";

/// Unix seconds, whole or with a fraction (dropped), or `None` for a missing value. Exported
/// tables write integers as floats (`1588262400.0`).
pub fn unix_seconds(text: &str) -> Result<Option<i64>, ()> {
    if let Some(n) = integer(text) {
        return Ok(Some(n));
    }
    let text = text.trim_ascii();
    if is_missing(text) {
        return Ok(None);
    }
    if let Ok(n) = text.parse::<i64>() {
        return Ok(Some(n));
    }
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x.abs() < 1e15 => Ok(Some(x.floor() as i64)),
        _ => Err(()),
    }
}

/// A count (`4`, or `4.0` as pandas writes integer columns with missing values), at most
/// `u32::MAX`; `None` if missing. Negative, fractional or non-numbers are errors.
pub fn count(text: &str) -> Result<Option<u32>, ()> {
    if let Some(n) = integer(text).and_then(|n| u32::try_from(n).ok()) {
        return Ok(Some(n));
    }
    let text = text.trim_ascii();
    if is_missing(text) {
        return Ok(None);
    }
    if let Ok(n) = text.parse::<u32>() {
        return Ok(Some(n));
    }
    match text.parse::<f64>() {
        Ok(x) if x >= 0.0 && x.fract() == 0.0 && x <= f64::from(u32::MAX) => Ok(Some(x as u32)),
        _ => Err(()),
    }
}

/// A non-negative amount that may be fractional (a share of a GPU, GB of memory); `None` if
/// missing.
pub fn amount(text: &str) -> Result<Option<f64>, ()> {
    if let Some(n) = integer(text).filter(|&n| n >= 0) {
        return Ok(Some(n as f64));
    }
    let text = text.trim_ascii();
    if is_missing(text) {
        return Ok(None);
    }
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
        _ => Err(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S").unwrap()
    }

    #[test]
    fn date_times_of_every_form_read() {
        let t = local("2020-04-01 00:00:28");
        assert_eq!(date_time("2020-04-01 00:00:28"), Ok(Some(Stamp::Local(t))));
        assert_eq!(
            date_time("2020-04-01T00:00:28.250"),
            Ok(Some(Stamp::Local(t)))
        );
        let utc = t.and_utc().timestamp();
        assert_eq!(
            date_time("2020-04-01 00:00:28Z"),
            Ok(Some(Stamp::Unix(utc)))
        );
        assert_eq!(
            date_time("2020-04-01 00:00:28+08:00"),
            Ok(Some(Stamp::Unix(utc - 8 * 3600)))
        );
        assert_eq!(
            date_time("2020-04-01T00:00:28-0530"),
            Ok(Some(Stamp::Unix(utc + 5 * 3600 + 1800)))
        );
        for missing in ["", "None", "NaN", " nan "] {
            assert_eq!(date_time(missing), Ok(None));
        }
        for bad in [
            "2020-04-01",
            "2020-13-01 00:00:00",
            "yesterday",
            "2020-04-01 00:00:28+99",
        ] {
            assert_eq!(date_time(bad), Err(()), "{bad}");
        }
    }

    #[test]
    fn whole_numbers_read_in_one_pass() {
        assert_eq!(integer("4550879.0"), Some(4550879));
        assert_eq!(integer("-12"), Some(-12));
        assert_eq!(integer("7.000"), Some(7));
        assert_eq!(integer("7."), None);
        assert_eq!(integer("7.5"), None);
        assert_eq!(integer("1e3"), None);
        assert_eq!(integer(""), None);
        assert_eq!(integer("-"), None);
        assert_eq!(
            integer("1234567890123456789"),
            None,
            "19 digits: the float parser's"
        );
    }

    #[test]
    fn numbers_read_as_exported_tables_write_them() {
        assert_eq!(unix_seconds("1588262400"), Ok(Some(1588262400)));
        assert_eq!(unix_seconds("1588262400.7"), Ok(Some(1588262400)));
        assert_eq!(unix_seconds("NaN"), Ok(None));
        assert_eq!(unix_seconds("soon"), Err(()));
        assert_eq!(count("4.0"), Ok(Some(4)));
        assert_eq!(count("-1"), Err(()));
        assert_eq!(count("2.5"), Err(()));
        assert_eq!(amount("50"), Ok(Some(50.0)));
        assert_eq!(amount("-0.5"), Err(()));
    }
}
