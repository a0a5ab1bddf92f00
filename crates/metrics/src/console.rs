//! The terminal summary of a run (`sitesim run`, `sitesim replay`): its layout, which places the
//! catalogue's measures ([`MEASURES`]) on lines and in two tables, and the text it renders.
//! Every number printed is a measure's value at its print scale ([`Measure::print_scale`]). A
//! measure the layout does not place is printed after the summary under its title
//! ([`more_measures`]), when the catalogue keeps it on the console ([`Measure::console`]) and the
//! run defines it: so a new measure reaches the terminal with its catalogue entry alone, and a
//! better place for it is a [`Part`] of a line here.

use std::fmt::Write;

use crate::{Counted, MEASURES, Measure, MeasureInput, Summary, Warmup, find_measure};

/// How a value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// As Rust writes an `f64` (`{}`): counts, and medians that may be whole.
    Plain,
    /// With this many decimals (`{:.N}`).
    Fixed(usize),
    /// In scientific notation with three decimals (`{:.3e}`).
    Scientific,
    /// Two decimals, and `-` when undefined (not finite).
    Number,
}

impl Format {
    /// `value` written this way.
    pub fn write(self, value: f64) -> String {
        match self {
            Format::Plain => format!("{value}"),
            Format::Fixed(decimals) => format!("{value:.decimals$}"),
            Format::Scientific => format!("{value:.3e}"),
            Format::Number if value.is_finite() => format!("{value:.2}"),
            Format::Number => "-".to_string(),
        }
    }
}

/// What the run says besides its measures, on the lines that need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fact {
    /// Job lines read from the trace.
    Read,
    /// The jobs left out before simulation, by reason.
    LeftOut,
    /// Which jobs are measured (the warm-up exclusion).
    Measured,
    /// The utilization window, days.
    Days,
}

impl Fact {
    fn write(self, s: &Summary) -> String {
        let input = &s.input;
        match self {
            Fact::Read => input.read.to_string(),
            Fact::LeftOut => format!(
                "{} skipped: {} negative submit, {} negative runtime, {} no processors; {} rejected: wider than the machine",
                input.skipped(),
                input.skipped_negative_submit,
                input.skipped_negative_runtime,
                input.skipped_no_processors,
                input.rejected_too_wide
            ),
            Fact::Measured => match s.warmup {
                Warmup::None => "all jobs".to_string(),
                Warmup::Tsafrir => "Tsafrir warm-up exclusion".to_string(),
                Warmup::Interval {
                    start,
                    end,
                    counted,
                } => format!(
                    "submitted from day {:.1} to day {:.1}{}",
                    start as f64 / 86_400.0,
                    end as f64 / 86_400.0,
                    match counted {
                        Counted::Submitted => "",
                        Counted::Started => ", started by then",
                        Counted::Ended => ", ended by then",
                    }
                ),
            },
            Fact::Days => format!(
                "{:.1}",
                (s.utilization_window.end - s.utilization_window.start) as f64 / 86_400.0
            ),
        }
    }
}

/// A piece of a line: `text` with its `{}` replaced by a measure's value or a fact.
#[derive(Debug, Clone, Copy)]
pub enum Part {
    /// The measure called `measure` (a name of [`MEASURES`]), at its print scale, written in
    /// `format`; when its value is undefined (not finite) and `undefined` is given, that text
    /// replaces the whole part.
    Measure {
        /// The measure's name.
        measure: &'static str,
        /// The part's text, `{}` where the value goes.
        text: &'static str,
        /// How the value is written.
        format: Format,
        /// The part's text when the value is undefined (`None`: the value written as Rust
        /// writes a NaN).
        undefined: Option<&'static str>,
    },
    /// A fact of the run.
    Fact(Fact, &'static str),
}

/// When a line is printed.
#[derive(Debug, Clone, Copy)]
pub enum When {
    /// Always.
    Always,
    /// When the measure called so is defined (finite).
    Defined(&'static str),
    /// When the measure called so is above 0.
    Positive(&'static str),
    /// When the run read a trace (a replay).
    Read,
}

/// A line of the summary: its label (padded to 12 characters; none: the parts start the line)
/// and its parts, printed when `when` holds.
#[derive(Debug, Clone, Copy)]
pub struct Line {
    /// The label.
    pub label: Option<&'static str>,
    /// When it is printed.
    pub when: When,
    /// Its parts, in order.
    pub parts: &'static [Part],
}

/// A table of measures: a row per label, a column per header, each cell a measure.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    /// The header of the label column.
    pub corner: &'static str,
    /// The column headers and how their cells are written.
    pub columns: &'static [(&'static str, Format)],
    /// Each row's label and its measures, one per column.
    pub rows: &'static [(&'static str, &'static [&'static str])],
}

const fn m(
    measure: &'static str,
    text: &'static str,
    format: Format,
    undefined: Option<&'static str>,
) -> Part {
    Part::Measure {
        measure,
        text,
        format,
        undefined,
    }
}

/// The closed loop's lines (`sitesim run`): throughput, sessions, the users' decisions and, with
/// `--headroom`, the headroom.
pub static CLOSED_LOOP_LINES: &[Line] = &[
    Line {
        label: Some("throughput"),
        when: When::Always,
        parts: &[
            m(
                "throughput_submitted_per_hour",
                "{} jobs/hour submitted",
                Format::Fixed(2),
                None,
            ),
            m(
                "throughput_completed_per_hour",
                ", {} completed",
                Format::Fixed(2),
                None,
            ),
        ],
    },
    Line {
        label: Some("sessions"),
        when: When::Always,
        parts: &[
            m("sessions", "{} sessions", Format::Plain, None),
            m(
                "session_length_mean",
                ", {} jobs per session",
                Format::Fixed(2),
                None,
            ),
            m("session_length_median", " (median {})", Format::Plain, None),
            m(
                "sessions_ended_by_abort",
                "; ended by abort {}",
                Format::Plain,
                None,
            ),
            m(
                "sessions_ended_by_cycle",
                ", by the activity cycle {}",
                Format::Plain,
                None,
            ),
            m(
                "sessions_ended_by_end_of_run",
                ", by the end of the run {}",
                Format::Plain,
                None,
            ),
        ],
    },
    Line {
        label: Some("decisions"),
        when: When::Always,
        parts: &[
            m(
                "deciding_jobs_waited_share",
                "{} % of deciding jobs waited (the last job of each batch)",
                Format::Fixed(1),
                None,
            ),
            m(
                "mean_continue_probability",
                "; mean continue probability {}",
                Format::Fixed(3),
                Some("; no continue trials"),
            ),
        ],
    },
    Line {
        label: Some("headroom"),
        when: When::Defined("headroom"),
        parts: &[
            m("headroom", "{} %", Format::Fixed(1), None),
            m(
                "throughput_uncontended_per_hour",
                " (uncontended {} jobs/hour",
                Format::Fixed(2),
                None,
            ),
            m(
                "throughput_easy_per_hour",
                "; EASY {})",
                Format::Fixed(2),
                None,
            ),
            m(
                "capture",
                "; capture {} % of EASY's headroom",
                Format::Fixed(1),
                Some("; capture - (EASY has no headroom)"),
            ),
        ],
    },
];

/// The jobs' lines (every run and replay): what was read and measured, utilization, the
/// measures of papers 001-003, then [`PERCENTILES`] and [`CLASSES`].
pub static JOB_LINES: &[Line] = &[
    Line {
        label: Some("jobs"),
        when: When::Read,
        parts: &[
            Part::Fact(Fact::Read, "{} read, "),
            m("jobs_simulated", "{} simulated", Format::Plain, None),
            Part::Fact(Fact::LeftOut, " ({})"),
        ],
    },
    Line {
        label: Some("measured"),
        when: When::Always,
        parts: &[
            m("jobs_measured", "{} jobs", Format::Plain, None),
            Part::Fact(Fact::Measured, " ({})"),
            m(
                "jobs_killed",
                "; {} killed at their estimate",
                Format::Plain,
                None,
            ),
        ],
    },
    Line {
        label: Some("utilization"),
        when: When::Always,
        parts: &[
            m("utilization", "{} %", Format::Fixed(1), None),
            Part::Fact(Fact::Days, " over {} days"),
            m(
                "processed_work",
                " ({} processor-seconds)",
                Format::Scientific,
                None,
            ),
        ],
    },
    Line {
        label: None,
        when: When::Always,
        parts: &[
            m(
                "loss_of_capacity",
                "loss of capacity {}",
                Format::Fixed(3),
                None,
            ),
            m("artww", "; ARTwW {} min", Format::Number, None),
            m("sldww_60", "; SLDwW_60 {}", Format::Number, None),
        ],
    },
    Line {
        label: Some("sharing"),
        when: When::Positive("jobs_penalized"),
        parts: &[
            m(
                "jobs_penalized",
                "{} jobs stretched by memory-bandwidth sharing",
                Format::Plain,
                None,
            ),
            m(
                "jobs_killed_by_sharing",
                ", {} of them past their estimate and killed",
                Format::Plain,
                None,
            ),
            m(
                "penalized_runtime_percent",
                "; {} % penalized runtime",
                Format::Fixed(2),
                None,
            ),
        ],
    },
    Line {
        label: None,
        when: When::Always,
        parts: &[
            m(
                "prediction_accuracy",
                "accuracy {} %",
                Format::Fixed(1),
                None,
            ),
            m(
                "prediction_corrections",
                " ({} corrections/job)",
                Format::Number,
                None,
            ),
            m("sjfness", "; SJFness {} %", Format::Fixed(1), None),
            m(
                "unfairness",
                "; unfairness {} min",
                Format::Number,
                Some("; unfairness not computed (--fairness)"),
            ),
        ],
    },
];

/// Mean and percentiles of the four per-job measures.
pub static PERCENTILES: Table = Table {
    corner: "",
    columns: &[
        ("mean", Format::Number),
        ("p50", Format::Number),
        ("p95", Format::Number),
        ("p99", Format::Number),
    ],
    rows: &[
        (
            "wait (min)",
            &["wait_mean", "wait_p50", "wait_p95", "wait_p99"],
        ),
        (
            "response (min)",
            &[
                "response_mean",
                "response_p50",
                "response_p95",
                "response_p99",
            ],
        ),
        (
            "slowdown",
            &[
                "slowdown_mean",
                "slowdown_p50",
                "slowdown_p95",
                "slowdown_p99",
            ],
        ),
        (
            "bounded slowdown",
            &[
                "bounded_slowdown_mean",
                "bounded_slowdown_p50",
                "bounded_slowdown_p95",
                "bounded_slowdown_p99",
            ],
        ),
    ],
};

/// The means per runtime class (paper 000, Fig. 12).
pub static CLASSES: Table = Table {
    corner: "runtime class (means)",
    columns: &[
        ("jobs", Format::Plain),
        ("wait min", Format::Number),
        ("resp min", Format::Number),
        ("slowdown", Format::Number),
        ("bsld", Format::Number),
    ],
    rows: &[
        (
            "<=1min",
            &[
                "short_jobs",
                "short_wait_mean",
                "short_response_mean",
                "short_slowdown_mean",
                "short_bounded_slowdown_mean",
            ],
        ),
        (
            "1-10min",
            &[
                "medium_jobs",
                "medium_wait_mean",
                "medium_response_mean",
                "medium_slowdown_mean",
                "medium_bounded_slowdown_mean",
            ],
        ),
        (
            ">10min",
            &[
                "long_jobs",
                "long_wait_mean",
                "long_response_mean",
                "long_slowdown_mean",
                "long_bounded_slowdown_mean",
            ],
        ),
    ],
};

/// Every measure the layout places, by name (a name may not be placed twice).
pub fn placed() -> impl Iterator<Item = &'static str> {
    let on_lines = CLOSED_LOOP_LINES
        .iter()
        .chain(JOB_LINES)
        .flat_map(|line| line.parts)
        .filter_map(|part| match part {
            Part::Measure { measure, .. } => Some(*measure),
            Part::Fact(..) => None,
        });
    let in_tables = [&PERCENTILES, &CLASSES]
        .into_iter()
        .flat_map(|table| table.rows)
        .flat_map(|(_, names)| names.iter().copied());
    on_lines.chain(in_tables)
}

/// A measure's value at its print scale; NaN for a name that is not a measure.
fn printed(name: &str, input: &MeasureInput) -> f64 {
    find_measure(name).map_or(f64::NAN, |m| m.value(input) * m.print_scale)
}

fn line(t: &mut String, line: &Line, input: &MeasureInput) {
    let shown = match line.when {
        When::Always => true,
        When::Defined(name) => printed(name, input).is_finite(),
        When::Positive(name) => printed(name, input) > 0.0,
        When::Read => input.summary.input.read > 0,
    };
    if !shown {
        return;
    }
    t.push_str("  ");
    if let Some(label) = line.label {
        let _ = write!(t, "{label:<12} ");
    }
    for part in line.parts {
        match *part {
            Part::Measure {
                measure,
                text,
                format,
                undefined,
            } => {
                let value = printed(measure, input);
                match undefined {
                    Some(instead) if !value.is_finite() => t.push_str(instead),
                    _ => t.push_str(&text.replacen("{}", &format.write(value), 1)),
                }
            }
            Part::Fact(fact, text) => {
                t.push_str(&text.replacen("{}", &fact.write(input.summary), 1));
            }
        }
    }
    t.push('\n');
}

fn table(t: &mut String, table: &Table, input: &MeasureInput) {
    let _ = write!(t, "  {:<24}", table.corner);
    for (header, _) in table.columns {
        let _ = write!(t, "{header:>12}");
    }
    t.push('\n');
    for (label, names) in table.rows {
        let _ = write!(t, "  {label:<24}");
        for (name, (_, format)) in names.iter().zip(table.columns) {
            let _ = write!(t, "{:>12}", format.write(printed(name, input)));
        }
        t.push('\n');
    }
}

/// The closed loop's lines ([`CLOSED_LOOP_LINES`]).
pub fn closed_loop_lines(input: &MeasureInput) -> String {
    let mut t = String::new();
    for l in CLOSED_LOOP_LINES {
        line(&mut t, l, input);
    }
    t
}

/// The jobs' lines ([`JOB_LINES`]), then, each after an empty line, [`PERCENTILES`] and
/// [`CLASSES`].
pub fn job_lines(input: &MeasureInput) -> String {
    let mut t = String::new();
    for l in JOB_LINES {
        line(&mut t, l, input);
    }
    t.push('\n');
    table(&mut t, &PERCENTILES, input);
    t.push('\n');
    table(&mut t, &CLASSES, input);
    t
}

/// The measures of `measures` kept on the console ([`Measure::console`]) that the layout does
/// not place and the run defines, after an empty line and a heading: a line each, its title and
/// its value at its print scale (empty when there is none). `sitesim` passes [`MEASURES`].
pub fn more_measures(input: &MeasureInput, measures: &[Measure]) -> String {
    let mut t = String::new();
    for m in measures {
        if !m.console || placed().any(|name| name == m.name) {
            continue;
        }
        let value = m.value(input) * m.print_scale;
        if !value.is_finite() {
            continue;
        }
        if t.is_empty() {
            t.push_str("\n  more measures\n");
        }
        let _ = writeln!(t, "  {:<24}{:>12}", m.title, Format::Number.write(value));
    }
    t
}

/// [`more_measures`] of the catalogue.
pub fn more_catalogue_measures(input: &MeasureInput) -> String {
    more_measures(input, MEASURES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{InputCounts, JobRecord, SummaryOptions};

    #[test]
    fn the_layout_places_catalogued_measures_once_and_only_those_on_the_console() {
        let mut names: Vec<&str> = placed().collect();
        for name in &names {
            let measure = find_measure(name).unwrap_or_else(|| panic!("{name} is no measure"));
            assert!(measure.console, "{name} is placed but kept off the console");
        }
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "a measure is placed twice");
        for class in crate::RuntimeClass::ALL {
            assert!(
                CLASSES
                    .rows
                    .iter()
                    .any(|(label, _)| *label == class.label())
            );
        }
    }

    fn input(summary: &Summary) -> MeasureInput<'_> {
        MeasureInput {
            summary,
            closed_loop: None,
            users: 0,
            policy_usage: None,
            slurm: None,
            power: None,
        }
    }

    /// Four jobs of 60 s on 2 of 4 processors, submitted 10 s apart, each waiting 5 s.
    fn summary() -> Summary {
        let jobs: Vec<JobRecord> = (0..4)
            .map(|i| JobRecord {
                job: crate::Job {
                    job_id: i,
                    submit: 10 * i,
                    processors: 2,
                    estimate: 100,
                    runtime: 60,
                    ..crate::Job::default()
                },
                start: 10 * i + 5,
                end: 10 * i + 65,
                ..JobRecord::default()
            })
            .collect();
        let options = SummaryOptions {
            processors: 4,
            warmup: Warmup::None,
        };
        Summary::compute(&jobs, &options, InputCounts::default())
    }

    #[test]
    fn values_are_written_as_the_hand_written_table_wrote_them() {
        assert_eq!(Format::Plain.write(12.0), "12");
        assert_eq!(Format::Plain.write(2.5), "2.5");
        assert_eq!(Format::Fixed(1).write(31.94), "31.9");
        assert_eq!(Format::Scientific.write(668_700_000.0), "6.687e8");
        assert_eq!(Format::Number.write(98.114), "98.11");
        assert_eq!(Format::Number.write(f64::NAN), "-");
        assert_eq!(Format::Number.write(f64::INFINITY), "-");
    }

    #[test]
    fn the_jobs_lines_and_tables_render_from_the_catalogue() {
        let summary = summary();
        let text = job_lines(&input(&summary));
        let lines: Vec<&str> = text.lines().collect();
        // No trace read: no "jobs" line.
        assert_eq!(
            lines[0],
            "  measured     4 jobs (all jobs); 0 killed at their estimate"
        );
        assert!(lines[1].starts_with("  utilization  "), "{}", lines[1]);
        assert!(lines[1].contains(" % over 0.0 days ("), "{}", lines[1]);
        assert!(lines[2].starts_with("  loss of capacity "), "{}", lines[2]);
        assert!(
            lines[3].ends_with("; unfairness not computed (--fairness)"),
            "{}",
            lines[3]
        );
        // The percentiles: a header, then a row per family, waits in minutes (5 s).
        assert_eq!(lines[4], "");
        assert_eq!(
            lines[5],
            format!(
                "  {:<24}{:>12}{:>12}{:>12}{:>12}",
                "", "mean", "p50", "p95", "p99"
            )
        );
        assert_eq!(
            lines[6],
            format!(
                "  {:<24}{:>12}{:>12}{:>12}{:>12}",
                "wait (min)", "0.08", "0.08", "0.08", "0.08"
            )
        );
        assert!(lines[9].starts_with("  bounded slowdown  "), "{}", lines[9]);
        // The runtime classes: every job is at most a minute; the others have none ("-").
        assert_eq!(lines[10], "");
        assert!(lines[11].starts_with("  runtime class (means)"));
        assert_eq!(
            lines[12],
            format!(
                "  {:<24}{:>12}{:>12}{:>12}{:>12}{:>12}",
                "<=1min", "4", "0.08", "1.08", "1.08", "1.08"
            )
        );
        assert_eq!(
            lines[13],
            format!(
                "  {:<24}{:>12}{:>12}{:>12}{:>12}{:>12}",
                "1-10min", "0", "-", "-", "-", "-"
            )
        );
        assert_eq!(lines.len(), 15);
    }

    #[test]
    fn the_closed_loop_lines_say_what_is_undefined() {
        let summary = summary();
        let closed = crate::ClosedLoopBuilder::new(crate::Window {
            start: 0,
            end: 7200,
        })
        .finish();
        let text = closed_loop_lines(&MeasureInput {
            closed_loop: Some(&closed),
            ..input(&summary)
        });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "  throughput   0.00 jobs/hour submitted, 0.00 completed"
        );
        assert!(lines[1].starts_with("  sessions     0 sessions, NaN jobs per session"));
        assert!(lines[2].ends_with("; no continue trials"), "{}", lines[2]);
        // No headroom measured: no headroom line.
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn a_measure_the_layout_does_not_place_is_printed_after_the_summary() {
        let summary = summary();
        let input = input(&summary);
        // (Whether the catalogue's own measures are all laid out is for the golden console
        // outputs to say: a recipe's new measure is rightly printed here.)
        // A new measure with the catalogue's defaults is printed, under its title.
        let toy = Measure {
            name: "test_jobs_doubled",
            title: "test jobs x2",
            ..*find_measure("jobs_measured").unwrap()
        };
        // (the catalogue's measures aside: a recipe's toy may be among them)
        let mut catalogue = vec![toy];
        let more = more_measures(&input, &catalogue);
        assert_eq!(
            more,
            format!(
                "\n  more measures\n  {:<24}{:>12}\n",
                "test jobs x2", "4.00"
            )
        );
        // Kept off the console, or undefined in this run: not printed.
        catalogue.push(Measure {
            name: "test_off",
            console: false,
            ..toy
        });
        catalogue.push(Measure {
            name: "test_closed",
            ..*find_measure("sessions").unwrap()
        });
        assert_eq!(more_measures(&input, &catalogue), more);
    }
}
