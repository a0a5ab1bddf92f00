//! Time series a run is metered against: carbon intensity, electricity price, a power cap.
//!
//! A series is a CSV file of two columns, a time and a value whose header names its unit
//! (`time_s,gco2_per_kwh`, `time,eur_per_mwh`, `time_s,kw`). Each row's value holds from its time
//! until the next row's (a step function, as the grid operators' half-hourly or hourly figures
//! are meant); the last row's value holds for the series' most common interval, and the series
//! ends there unless it repeats (`repeat`: the whole file is one period, a typical day or week).
//! Its integral over any span is exact: a sum of value x length over the steps the span covers
//! ([`Series::integral`]), so that carbon and cost over the event timeline carry no
//! discretisation error.
//!
//! What is refused, naming the file, line and column: rows out of order, a row without a value
//! (a gap), for carbon and price an interval more than twice the series' most common one (a gap
//! in a regular feed; a cap is a schedule and may step at any time), a negative value, a value
//! column whose header names no unit, a date-time time column without the run's epoch.

use std::fmt;

use simtime::Time;

use crate::PowerError;

/// What a series measures, and so which units its value column may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Carbon intensity of the electricity, stored in gCO2 per kWh.
    Carbon,
    /// Electricity price, stored per kWh in the currency the header names.
    Price,
    /// A site power cap, stored in watts.
    Cap,
}

impl Quantity {
    /// The headers a value column of this quantity may have, for messages.
    pub fn accepted(self) -> &'static str {
        match self {
            Quantity::Carbon => "gco2_per_kwh, kgco2_per_mwh, gco2_per_mwh or kgco2_per_kwh",
            Quantity::Price => {
                "CURRENCY_per_kwh or CURRENCY_per_mwh (eur_per_mwh, usd_per_kwh, price_per_kwh, ...)"
            }
            Quantity::Cap => "w, kw or mw",
        }
    }

    /// The stored unit, for reports.
    pub fn unit(self) -> &'static str {
        match self {
            Quantity::Carbon => "gCO2/kWh",
            Quantity::Price => "per kWh",
            Quantity::Cap => "W",
        }
    }

    /// The factor from the header's unit to the stored unit, and the currency of a price
    /// (`None` when the header names no accepted unit).
    fn unit_of(self, header: &str) -> Option<(f64, Option<String>)> {
        let header = header.trim().to_ascii_lowercase();
        match self {
            Quantity::Carbon => match header.as_str() {
                "gco2_per_kwh" | "kgco2_per_mwh" => Some((1.0, None)),
                "gco2_per_mwh" => Some((1e-3, None)),
                "kgco2_per_kwh" => Some((1e3, None)),
                _ => None,
            },
            Quantity::Price => {
                let (currency, factor) = if let Some(c) = header.strip_suffix("_per_kwh") {
                    (c, 1.0)
                } else if let Some(c) = header.strip_suffix("_per_mwh") {
                    (c, 1e-3)
                } else {
                    return None;
                };
                let named =
                    !currency.is_empty() && currency.chars().all(|c| c.is_ascii_alphabetic());
                named.then(|| (factor, Some(currency.to_string())))
            }
            Quantity::Cap => match header.as_str() {
                "w" => Some((1.0, None)),
                "kw" => Some((1e3, None)),
                "mw" => Some((1e6, None)),
                _ => None,
            },
        }
    }

    /// Whether an interval much longer than the series' usual one is a gap: a regular feed's
    /// (carbon, price), not a cap's schedule.
    fn regular(self) -> bool {
        !matches!(self, Quantity::Cap)
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Quantity::Carbon => "carbon intensity",
            Quantity::Price => "electricity price",
            Quantity::Cap => "power cap",
        })
    }
}

/// A step function of time read from a CSV file (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// What it measures.
    quantity: Quantity,
    /// Where it was read from, for messages.
    source: String,
    /// The currency a price is in (`None` for other quantities).
    currency: Option<String>,
    /// Each step's start, seconds of simulated time, strictly increasing.
    times: Vec<Time>,
    /// Each step's value, in the stored unit ([`Quantity::unit`]).
    values: Vec<f64>,
    /// The integral from the first step's start to each step's start (value x seconds).
    before: Vec<f64>,
    /// How long the last step holds, seconds: the series' most common interval.
    last_step: Time,
    /// Whether the series repeats after its last step.
    repeat: bool,
}

impl Series {
    /// Reads a series of `quantity` from CSV `text` (read from `source`, named in errors).
    /// `epoch` is the Unix time of simulated second 0, needed only when the time column holds
    /// date-times (`time`, RFC 3339); `time_s` columns hold simulated seconds.
    pub fn parse(
        quantity: Quantity,
        source: &str,
        text: &str,
        epoch: Option<i64>,
        repeat: bool,
    ) -> Result<Series, PowerError> {
        let bad = |line: u64, column: Option<&str>, message: String| PowerError::Series {
            file: source.to_string(),
            line,
            column: column.map(str::to_string),
            message,
        };
        let mut reader = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .comment(Some(b'#'))
            .from_reader(text.as_bytes());
        let headers = reader
            .headers()
            .map_err(|e| bad(1, None, format!("cannot read the header: {e}")))?
            .clone();
        if headers.len() != 2 {
            return Err(bad(
                1,
                None,
                format!(
                    "a series has two columns, a time (time_s or time) and a value with its unit ({}); found {} column(s)",
                    quantity.accepted(),
                    headers.len()
                ),
            ));
        }
        let time_header = headers[0].to_ascii_lowercase();
        let dated = match time_header.as_str() {
            "time_s" => false,
            "time" => true,
            other => {
                return Err(bad(
                    1,
                    Some(other),
                    "the first column is the time: time_s (simulated seconds) or time (an RFC 3339 date-time)".into(),
                ));
            }
        };
        let epoch = match (dated, epoch) {
            (true, None) => {
                return Err(bad(
                    1,
                    Some("time"),
                    "date-times need the run's epoch (the date-time of simulated second 0: the power table's `epoch`); or give simulated seconds in a time_s column".into(),
                ));
            }
            (_, epoch) => epoch.unwrap_or(0),
        };
        let value_header = headers[1].to_string();
        let Some((factor, currency)) = quantity.unit_of(&value_header) else {
            return Err(bad(
                1,
                Some(&value_header),
                format!(
                    "the value column's header names its unit; for a {quantity} one of {}",
                    quantity.accepted()
                ),
            ));
        };
        let mut times = Vec::new();
        let mut values = Vec::new();
        let mut lines = Vec::new();
        for row in reader.records() {
            let row = row.map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                bad(line, None, e.to_string())
            })?;
            let line = row.position().map_or(0, |p| p.line());
            let time_text = row.get(0).unwrap_or("");
            let time = if dated {
                chrono::DateTime::parse_from_rfc3339(time_text)
                    .map(|t| t.timestamp() - epoch)
                    .map_err(|e| {
                        bad(
                            line,
                            Some(&time_header),
                            format!(
                                "{time_text:?} is not an RFC 3339 date-time with its offset ({e})"
                            ),
                        )
                    })?
            } else {
                time_text.parse::<Time>().map_err(|_| {
                    bad(
                        line,
                        Some(&time_header),
                        format!("{time_text:?} is not a whole number of seconds"),
                    )
                })?
            };
            let value_text = row.get(1).unwrap_or("");
            if value_text.is_empty() {
                return Err(bad(
                    line,
                    Some(&value_header),
                    "no value: a gap in the series (fill it, or cut the run to the span the series covers)".into(),
                ));
            }
            let value: f64 = value_text.parse().map_err(|_| {
                bad(
                    line,
                    Some(&value_header),
                    format!("{value_text:?} is not a number"),
                )
            })?;
            if !value.is_finite() || value < 0.0 {
                return Err(bad(
                    line,
                    Some(&value_header),
                    format!("{value_text} is not a finite number at least 0"),
                ));
            }
            if let (Some(&previous), Some(&previous_line)) = (times.last(), lines.last()) {
                if time <= previous {
                    return Err(bad(
                        line,
                        Some(&time_header),
                        format!(
                            "out of order: {time} s is not after line {previous_line}'s {previous} s"
                        ),
                    ));
                }
            }
            times.push(time);
            values.push(value * factor);
            lines.push(line);
        }
        if times.is_empty() {
            return Err(bad(2, None, "the series has no rows".into()));
        }
        let last_step = most_common_interval(&times);
        if quantity.regular() {
            for (i, pair) in times.windows(2).enumerate() {
                let interval = pair[1] - pair[0];
                if interval > 2 * last_step {
                    return Err(bad(
                        lines[i + 1],
                        Some(&time_header),
                        format!(
                            "a gap: {interval} s since line {}, where the series steps every {last_step} s",
                            lines[i]
                        ),
                    ));
                }
            }
        }
        Ok(Series::from_steps(
            quantity, source, currency, times, values, last_step, repeat,
        ))
    }

    /// A series of `quantity` from its steps (times strictly increasing, values at least 0 in
    /// the stored unit), the last holding `last_step` seconds. For tests and callers that build
    /// one in code; [`Series::parse`] checks a file's rows.
    pub fn from_steps(
        quantity: Quantity,
        source: &str,
        currency: Option<String>,
        times: Vec<Time>,
        values: Vec<f64>,
        last_step: Time,
        repeat: bool,
    ) -> Series {
        let mut before = Vec::with_capacity(times.len());
        let mut sum = 0.0;
        for i in 0..times.len() {
            before.push(sum);
            let end = times.get(i + 1).copied().unwrap_or(times[i] + last_step);
            sum += values[i] * (end - times[i]) as f64;
        }
        Series {
            quantity,
            source: source.to_string(),
            currency,
            times,
            values,
            before,
            last_step: last_step.max(1),
            repeat,
        }
    }

    /// What it measures.
    pub fn quantity(&self) -> Quantity {
        self.quantity
    }

    /// The currency of a price series (`None` otherwise).
    pub fn currency(&self) -> Option<&str> {
        self.currency.as_deref()
    }

    /// Where it was read from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The first step's start, seconds.
    pub fn start(&self) -> Time {
        self.times[0]
    }

    /// Where one pass of the series ends, seconds (the last step's end).
    pub fn end(&self) -> Time {
        self.times[self.times.len() - 1] + self.last_step
    }

    /// Whether it repeats after [`Series::end`].
    pub fn repeats(&self) -> bool {
        self.repeat
    }

    /// The length of one pass, seconds.
    fn period(&self) -> Time {
        self.end() - self.start()
    }

    /// `t` as a time within the first pass and the whole passes before it, or the error of a
    /// time the series does not cover.
    fn locate(&self, t: Time) -> Result<(Time, i64), PowerError> {
        let offset = t - self.start();
        let uncovered = || PowerError::Uncovered {
            file: self.source.clone(),
            quantity: self.quantity,
            at: t,
            from: self.start(),
            to: self.end(),
        };
        if offset < 0 {
            return Err(uncovered());
        }
        if offset < self.period() {
            return Ok((t, 0));
        }
        if !self.repeat {
            // the end of the last step itself is covered (an integral up to it)
            return if offset == self.period() {
                Ok((t, 0))
            } else {
                Err(uncovered())
            };
        }
        Ok((
            self.start() + offset.rem_euclid(self.period()),
            offset.div_euclid(self.period()),
        ))
    }

    /// The value at `t` (the step holding then).
    pub fn value_at(&self, t: Time) -> Result<f64, PowerError> {
        let (within, _) = self.locate(t)?;
        let step = self
            .times
            .partition_point(|&s| s <= within)
            .saturating_sub(1);
        Ok(self.values[step])
    }

    /// The integral from the series' start to `t` (value x seconds).
    fn integral_to(&self, t: Time) -> Result<f64, PowerError> {
        let (within, passes) = self.locate(t)?;
        let one_pass = self.before[self.before.len() - 1]
            + self.values[self.values.len() - 1] * self.last_step as f64;
        let step = self
            .times
            .partition_point(|&s| s <= within)
            .saturating_sub(1);
        let partial = self.before[step] + self.values[step] * (within - self.times[step]) as f64;
        Ok(passes as f64 * one_pass + partial)
    }

    /// The integral of the value over `[from, to]`, value x seconds (0 when `to <= from`):
    /// exact over the steps the span covers.
    pub fn integral(&self, from: Time, to: Time) -> Result<f64, PowerError> {
        if to <= from {
            return Ok(0.0);
        }
        Ok(self.integral_to(to)? - self.integral_to(from)?)
    }

    /// The value's mean over `[from, to]` (its value at `from` for an empty span).
    pub fn mean(&self, from: Time, to: Time) -> Result<f64, PowerError> {
        if to <= from {
            return self.value_at(from);
        }
        Ok(self.integral(from, to)? / (to - from) as f64)
    }

    /// The largest value of the series.
    pub fn max_value(&self) -> f64 {
        self.values.iter().copied().fold(0.0, f64::max)
    }

    /// The steps of one pass: (start, value).
    pub fn steps(&self) -> impl Iterator<Item = (Time, f64)> + '_ {
        self.times.iter().copied().zip(self.values.iter().copied())
    }

    /// The value at `t` as a schedule reads it: the last step's value holds past the series'
    /// end (a cap set once stays), and a repeating series wraps.
    pub fn held_value_at(&self, t: Time) -> f64 {
        let within = if self.repeat && t >= self.start() {
            self.start() + (t - self.start()).rem_euclid(self.period())
        } else {
            t
        };
        let step = self
            .times
            .partition_point(|&s| s <= within)
            .saturating_sub(1);
        self.values[step]
    }

    /// The first step start after `after` (seconds), over every pass when it repeats.
    pub fn next_step_after(&self, after: Time) -> Option<Time> {
        if !self.repeat {
            let i = self.times.partition_point(|&s| s <= after);
            return self.times.get(i).copied();
        }
        let period = self.period();
        let passes = if after < self.start() {
            return Some(self.start());
        } else {
            (after - self.start()).div_euclid(period)
        };
        let base = passes * period;
        let within = after - base;
        let i = self.times.partition_point(|&s| s <= within);
        Some(match self.times.get(i) {
            Some(&t) => base + t,
            None => base + period + self.times[0],
        })
    }

    /// The steps' start times of one pass, seconds.
    pub fn times(&self) -> &[Time] {
        &self.times
    }
}

/// The interval between consecutive times that occurs most often (the shortest of equally
/// common ones); 1 s for a single time (a series of one row holds one second unless it
/// repeats, when it is constant).
fn most_common_interval(times: &[Time]) -> Time {
    let mut intervals: Vec<Time> = times.windows(2).map(|p| p[1] - p[0]).collect();
    if intervals.is_empty() {
        return 1;
    }
    intervals.sort_unstable();
    let mut best = (0usize, intervals[0]);
    let mut run = (0usize, intervals[0]);
    for &interval in &intervals {
        if interval == run.1 {
            run.0 += 1;
        } else {
            run = (1, interval);
        }
        if run.0 > best.0 {
            best = run;
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn carbon(text: &str) -> Result<Series, PowerError> {
        Series::parse(Quantity::Carbon, "ci.csv", text, None, false)
    }

    #[test]
    fn a_step_series_integrates_exactly() {
        // 100 g/kWh for an hour, 300 for the next, 200 for the last (holding one hour).
        let s = carbon("time_s,gco2_per_kwh\n0,100\n3600,300\n7200,200\n").unwrap();
        assert_eq!(s.end(), 10800);
        assert_eq!(s.integral(0, 3600).unwrap(), 100.0 * 3600.0);
        // half an hour at 100 and a quarter at 300
        assert_eq!(
            s.integral(1800, 4500).unwrap(),
            100.0 * 1800.0 + 300.0 * 900.0
        );
        assert_eq!(s.integral(0, 10800).unwrap(), 3600.0 * 600.0);
        assert_eq!(
            s.mean(3000, 4200).unwrap(),
            (100.0 * 600.0 + 300.0 * 600.0) / 1200.0
        );
        assert_eq!(s.value_at(3599).unwrap(), 100.0);
        assert_eq!(s.value_at(3600).unwrap(), 300.0);
        assert!(matches!(
            s.integral(0, 10801),
            Err(PowerError::Uncovered { .. })
        ));
        assert!(matches!(s.value_at(-1), Err(PowerError::Uncovered { .. })));
    }

    #[test]
    fn a_repeating_series_wraps_whole_passes() {
        let s = Series::parse(
            Quantity::Carbon,
            "day.csv",
            "time_s,gco2_per_kwh\n0,100\n43200,300\n",
            None,
            true,
        )
        .unwrap();
        // one pass is a day: 100 x 12 h + 300 x 12 h
        let day = 100.0 * 43200.0 + 300.0 * 43200.0;
        assert_eq!(s.integral(0, 86400).unwrap(), day);
        assert_eq!(
            s.integral(0, 3 * 86400 + 3600).unwrap(),
            3.0 * day + 360000.0
        );
        assert_eq!(s.value_at(86400 + 50000).unwrap(), 300.0);
    }

    #[test]
    fn units_are_converted_and_named() {
        let price = Series::parse(
            Quantity::Price,
            "p.csv",
            "time_s,EUR_per_MWh\n0,120\n",
            None,
            true,
        )
        .unwrap();
        assert_eq!(price.value_at(5).unwrap(), 0.12);
        assert_eq!(price.currency(), Some("eur"));
        let cap = Series::parse(Quantity::Cap, "cap.csv", "time_s,kw\n0,5\n", None, true).unwrap();
        assert_eq!(cap.value_at(0).unwrap(), 5000.0);
        let err = carbon("time_s,value\n0,1\n").unwrap_err().to_string();
        assert!(
            err.contains("ci.csv") && err.contains("value") && err.contains("gco2_per_kwh"),
            "{err}"
        );
    }

    #[test]
    fn date_times_count_from_the_epoch() {
        let s = Series::parse(
            Quantity::Carbon,
            "ci.csv",
            "time,gco2_per_kwh\n2024-01-01T00:00:00Z,50\n2024-01-01T01:00:00+01:00,70\n2024-01-01T01:00:00Z,90\n",
            Some(1_704_067_200),
            false,
        );
        // the second row is 00:00 UTC again: out of order
        let err = s.unwrap_err().to_string();
        assert!(
            err.contains("line 3") && err.contains("out of order"),
            "{err}"
        );
        let s = Series::parse(
            Quantity::Carbon,
            "ci.csv",
            "time,gco2_per_kwh\n2024-01-01T00:00:00Z,50\n2024-01-01T02:00:00+01:00,70\n",
            Some(1_704_067_200),
            false,
        )
        .unwrap();
        assert_eq!(s.times(), &[0, 3600]);
        let err = Series::parse(
            Quantity::Carbon,
            "ci.csv",
            "time,gco2_per_kwh\n2024-01-01T00:00:00Z,50\n",
            None,
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("epoch"), "{err}");
    }

    #[test]
    fn bad_rows_are_named() {
        let err = carbon("time_s,gco2_per_kwh\n0,100\n3600,\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 3") && err.contains("gap"), "{err}");
        let err = carbon("time_s,gco2_per_kwh\n0,100\n3600,200\n3600,300\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 4") && err.contains("out of order"),
            "{err}"
        );
        let err = carbon("time_s,gco2_per_kwh\n0,100\n3600,-2\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 3") && err.contains("at least 0"),
            "{err}"
        );
        // hourly, then five hours missing
        let err = carbon("time_s,gco2_per_kwh\n0,1\n3600,1\n7200,1\n25200,1\n28800,1\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 5") && err.contains("gap") && err.contains("3600 s"),
            "{err}"
        );
        // a cap is a schedule: irregular steps are fine
        Series::parse(
            Quantity::Cap,
            "cap.csv",
            "time_s,kw\n0,5\n60,4\n86400,5\n",
            None,
            false,
        )
        .unwrap();
        let err = carbon("time_s\n0\n").unwrap_err().to_string();
        assert!(err.contains("two columns"), "{err}");
    }
}
