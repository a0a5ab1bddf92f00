//! How a trace file is read ([`TraceOptions`]): its format, and for a Slurm accounting dump its
//! zone, wait start, requeues, processor unit and window, checked into the `sacct` reader's
//! options. The scenario layer opens and reads traces with them.

use chrono::NaiveDateTime;
use sacct::{Clock, SacctOptions};

use crate::choices::{FormatChoice, RequeuedChoice, UnitChoice, WaitFromChoice};
use crate::error::{Result, invalid};

/// How a trace file is read: its format, and for a sacct dump how its times, waits, requeues
/// and processors are read (the options `--format`, `--tz`, `--wait-from`, `--requeued`,
/// `--processor-unit`, `--since`, `--until`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceOptions {
    /// SWF, sacct, or told from the first line.
    pub format: FormatChoice,
    /// The zone of a sacct dump's local times (a tz database name); UTC when not given.
    pub tz: Option<String>,
    /// The site's zone (a tz database name), in which the daily and weekly cycles are read:
    /// a converted dump's `TimeZoneString`, and an SWF header's replacement (`None`: the dump's
    /// zone, or the header's).
    pub site_tz: Option<String>,
    /// Which time starts a sacct job's wait.
    pub wait_from: WaitFromChoice,
    /// The submit time of a requeued sacct job.
    pub requeued: RequeuedChoice,
    /// What a sacct job's processors count.
    pub processor_unit: UnitChoice,
    /// Keep sacct jobs submitted at or after this local time (`YYYY-MM-DDTHH:MM:SS`).
    pub since: Option<String>,
    /// Keep sacct jobs submitted before this local time.
    pub until: Option<String>,
    /// The replay machine's resources besides processors, by their TRES names, and its amount
    /// of each (from `resources`): a sacct job's request of each is read from its `ReqTRES`,
    /// and a job asking for more than the machine has is rejected.
    pub resources: Vec<(String, u32)>,
    /// On a machine of node types (a replay with a slurm.conf's nodes), its GPU types,
    /// features and partitions by name: a sacct dump's jobs are read with their node count,
    /// GPU type and constraint, and numbered into its partitions.
    pub nodes: Option<sacct::NodeNames>,
    /// A sacct dump's names to number first (the site's users, accounts, partitions and QOS
    /// as its `sacctmgr` tables and slurm.conf list them), so that the Slurm model's keys read
    /// from those files select the dump's jobs ([`crate::accounting::SiteAccounting`]).
    pub first_names: sacct::FirstNames,
}

impl TraceOptions {
    /// The machine's amounts of [`TraceOptions::resources`], in their order.
    pub fn resource_amounts(&self) -> job::Extra {
        self.resources
            .iter()
            .enumerate()
            .fold(job::Extra::NONE, |extra, (index, (_, amount))| {
                extra.with(index, *amount)
            })
    }

    /// The options that only apply to sacct dumps and were given (by key), to refuse them for
    /// an SWF file.
    pub fn sacct_only_given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        if self.tz.is_some() {
            given.push("tz");
        }
        if self.wait_from != WaitFromChoice::default() {
            given.push("wait_from");
        }
        if self.requeued != RequeuedChoice::default() {
            given.push("requeued");
        }
        if self.processor_unit != UnitChoice::default() {
            given.push("processor_unit");
        }
        if self.since.is_some() {
            given.push("since");
        }
        if self.until.is_some() {
            given.push("until");
        }
        given
    }

    /// The site's zone ([`TraceOptions::site_tz`]) looked up, if given.
    pub fn site_clock(&self) -> Result<Option<Clock>> {
        self.site_tz
            .as_deref()
            .map(|name| zone("site_tz", name))
            .transpose()
    }

    /// The sacct reader's options (and a modern trace's reader's): the zones looked up (a modern
    /// trace's own where not given: [`traces::Format::zone`], [`traces::Format::site_zone`]),
    /// the window placed in the dump's.
    pub fn sacct_options(&self) -> Result<SacctOptions> {
        let modern = match self.format {
            FormatChoice::Trace(format) => Some(format),
            _ => None,
        };
        // a modern trace's times are in its own zone, as its owners document it
        let clock = match (&self.tz, modern.and_then(traces::Format::zone)) {
            (Some(name), _) => zone("tz", name)?,
            (None, Some(name)) => zone("tz", name)?,
            (None, None) => Clock::Utc,
        };
        let site_clock = match (self.site_clock()?, modern) {
            (None, Some(format)) => Some(zone("site_tz", format.site_zone())?),
            (site, _) => site,
        };
        let place = |key: &str, text: &Option<String>| -> Result<Option<i64>> {
            let Some(text) = text else { return Ok(None) };
            let local = NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S")
                .or_else(|_| {
                    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
                        .map(|d| d.and_time(chrono::NaiveTime::MIN))
                })
                .map_err(|_| {
                    invalid!(
                        "{} {text:?}: expected a time YYYY-MM-DDTHH:MM:SS or a date YYYY-MM-DD (in the dump's zone)",
                        crate::naming::key(key)
                    )
                })?;
            match clock.place(local) {
                sacct::values::Placed::Exact(t) | sacct::values::Placed::Ambiguous(t) => {
                    Ok(Some(t))
                }
                sacct::values::Placed::Missing => Err(invalid!(
                    "{} {text:?}: no such local time in {} (skipped by daylight saving)",
                    crate::naming::key(key),
                    clock.name()
                )),
            }
        };
        let since = place("since", &self.since)?;
        let until = place("until", &self.until)?;
        if let (Some(s), Some(u)) = (since, until) {
            if u <= s {
                return Err(invalid!(
                    "{} must be after {}",
                    crate::naming::key("until"),
                    crate::naming::key("since")
                ));
            }
        }
        Ok(SacctOptions {
            clock,
            site_clock,
            wait_from: self.wait_from.wait_from(),
            requeued: self.requeued.requeued(),
            since,
            until,
            resources: self
                .resources
                .iter()
                .map(|(name, _)| name.clone())
                .collect(),
            nodes: self.nodes.clone(),
            first_names: self.first_names.clone(),
        })
    }
}

/// The zone of the tz database named `name`, for the option `key`.
fn zone(key: &str, name: &str) -> Result<Clock> {
    Clock::named(name).ok_or_else(|| {
        invalid!(
            "{} {name:?} is not a time zone of the tz database (UTC, Europe/Berlin, America/Chicago, ...)",
            crate::naming::key(key)
        )
    })
}

/// The format of `input` by `format`: itself when named; for [`FormatChoice::Auto`], told
/// from the first line (a sacct header row, a header row only one modern format has, else
/// SWF). Nothing is consumed.
pub fn resolve(format: FormatChoice, input: &mut swf::Input) -> Result<FormatChoice> {
    if format != FormatChoice::Auto {
        return Ok(format);
    }
    if sacct::looks_like_sacct(input)? {
        return Ok(FormatChoice::Sacct);
    }
    let detected = match input.first_line().map_err(sacct::SacctError::from)? {
        Some(line) if line.len() < sacct::MAX_LINE_BYTES => {
            traces::Format::detect(&String::from_utf8_lossy(&line))
        }
        _ => None,
    };
    Ok(detected.map_or(FormatChoice::Swf, FormatChoice::Trace))
}

/// Reads a sacct dump or a modern trace (`format`, resolved) into its jobs.
pub fn read_log(
    input: swf::Input,
    format: FormatChoice,
    options: &TraceOptions,
) -> Result<sacct::SacctLog> {
    // the zones of the format read, when it was told from the file
    let sacct_options = TraceOptions {
        format,
        ..options.clone()
    }
    .sacct_options()?;
    Ok(match format {
        FormatChoice::Trace(format) => traces::read_from(input, format, &sacct_options)?,
        _ => {
            let name = input.name().to_string();
            sacct::read_from(input, name, &sacct_options)?
        }
    })
}
