//! A site's qualities of service (`sacctmgr --parsable2 show qos`): each QOS's priority, usage
//! factor and the limits sitesim's Slurm model applies, with the limits it does not model
//! listed so that a reader can say what it left out.

use std::io::BufRead;
use std::path::Path;

use crate::error::SacctError;

/// One QOS of `sacctmgr show qos`: the columns the Slurm model uses (empty: not set).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QosRow {
    /// `Name`.
    pub name: String,
    /// `Priority` (0 when empty).
    pub priority: u32,
    /// `UsageFactor` (1 when empty or absent).
    pub usage_factor: f64,
    /// `GrpTRES`: what all its running jobs hold together (`cpu=8,gres/gpu=3`).
    pub grp_tres: Option<String>,
    /// `MaxTRES`: what one job may ask for.
    pub max_tres_per_job: Option<String>,
    /// `MaxTRESPU` (`MaxTRESPerUser`): what one user's running jobs hold together.
    pub max_tres_per_user: Option<String>,
    /// `MaxJobsPU` (`MaxJobsPerUser`): running jobs per user.
    pub max_jobs_per_user: Option<u32>,
    /// `MaxSubmitPU` (`MaxSubmitJobsPerUser`): pending and running jobs per user.
    pub max_submit_per_user: Option<u32>,
    /// The columns set for this QOS that the model does not apply (`GrpJobs=10`, `MaxWall=...`,
    /// preemption), as `Column=value`.
    pub not_modelled: Vec<String>,
}

/// The QOS of a `sacctmgr show qos` file, in file order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QosTable {
    /// Every QOS.
    pub rows: Vec<QosRow>,
}

/// The most QOS a file may hold.
const MAX_QOS: usize = 100_000;

/// The columns read, by [`crate::table::header_key`]: Name, Priority, UsageFactor, GrpTRES,
/// MaxTRES, MaxTRESPU, MaxJobsPU, MaxSubmitPU (the names `sacctmgr show qos` prints, and the
/// long names its `format=` takes).
const READ: [&[&str]; 8] = [
    &["name"],
    &["priority"],
    &["usagefactor"],
    &["grptres"],
    &["maxtres", "maxtresperjob"],
    &["maxtrespu", "maxtresperuser"],
    &["maxjobspu", "maxjobsperuser"],
    &["maxsubmitpu", "maxsubmitjobsperuser", "maxsubmitjobs"],
];

/// Columns of `sacctmgr show qos` that hold limits or behaviour the model does not apply: a
/// QOS with one of them set is read with the column listed in [`QosRow::not_modelled`].
const NOT_MODELLED: [&str; 17] = [
    "gracetime",
    "preempt",
    "preemptmode",
    "preemptexempttime",
    "usagethres",
    "grptresmins",
    "grptresrunmins",
    "grpjobs",
    "grpsubmit",
    "grpwall",
    "maxtrespernode",
    "maxtresmins",
    "maxwall",
    "maxtrespa",
    "maxjobspa",
    "maxsubmitpa",
    "mintres",
];

impl QosTable {
    /// Reads `sacctmgr --parsable2 show qos` output (columns by their header names; `Name` is
    /// needed, the others are read where present). Errors name file, line and column.
    pub fn read(path: &Path) -> Result<QosTable, SacctError> {
        let input = swf::Input::open(path)?;
        let name = input.name().to_string();
        QosTable::read_from(input, &name)
    }

    /// [`QosTable::read`] from `input`; `source_name` names it in errors.
    pub fn read_from(input: impl BufRead, source_name: &str) -> Result<QosTable, SacctError> {
        use crate::table::{check_width, column, header_key, read_rows};
        struct Columns {
            read: [Option<usize>; 8],
            others: Vec<(usize, String)>,
        }
        let mut rows: Vec<QosRow> = Vec::new();
        read_rows(
            input,
            source_name,
            MAX_QOS,
            "QOS",
            |header| {
                let read = READ.map(|names| column(header, names));
                if read[0].is_none() {
                    return Err(SacctError::MissingField {
                        source_name: source_name.to_string(),
                        line: header.line,
                        field: "Name",
                    });
                }
                let others = (header.fields.iter().enumerate())
                    .filter(|(_, f)| NOT_MODELLED.contains(&header_key(f).as_str()))
                    .map(|(i, f)| (i, f.trim().to_string()))
                    .collect();
                Ok(Columns { read, others })
            },
            |columns: &Columns, row| {
                check_width(row, source_name, &columns.read)?;
                let get = |i: usize| {
                    columns.read[i]
                        .and_then(|c| row.fields.get(c))
                        .map_or("", |f| f.trim())
                };
                let text = |i: usize| Some(get(i)).filter(|t| !t.is_empty()).map(str::to_string);
                let number = |i: usize, column: &str| -> Result<Option<u32>, SacctError> {
                    match get(i) {
                        "" => Ok(None),
                        value => value.parse().map(Some).map_err(|_| {
                            SacctError::field(
                                source_name,
                                row.line,
                                column,
                                value,
                                "a whole number",
                            )
                        }),
                    }
                };
                let name = get(0);
                if name.is_empty() {
                    return Err(SacctError::field(
                        source_name,
                        row.line,
                        "Name",
                        name,
                        "a QOS name",
                    ));
                }
                if rows.iter().any(|r| r.name == name) {
                    return Err(SacctError::field(
                        source_name,
                        row.line,
                        "Name",
                        name,
                        "a QOS not named before in the file",
                    ));
                }
                let usage_factor = match get(2) {
                    "" => 1.0,
                    value => value
                        .parse::<f64>()
                        .ok()
                        .filter(|f| f.is_finite() && *f >= 0.0)
                        .ok_or_else(|| {
                            SacctError::field(
                                source_name,
                                row.line,
                                "UsageFactor",
                                value,
                                "a number of at least 0",
                            )
                        })?,
                };
                let not_modelled = (columns.others.iter())
                    .filter_map(|(i, column)| {
                        let value = row.fields.get(*i).map_or("", |f| f.trim());
                        // sacctmgr prints `cluster` for PreemptMode when the QOS has none
                        let unset = value.is_empty()
                            || (header_key(column) == "preemptmode" && value == "cluster");
                        (!unset).then(|| format!("{column}={value}"))
                    })
                    .collect();
                rows.push(QosRow {
                    name: name.to_string(),
                    priority: number(1, "Priority")?.unwrap_or(0),
                    usage_factor,
                    grp_tres: text(3),
                    max_tres_per_job: text(4),
                    max_tres_per_user: text(5),
                    max_jobs_per_user: number(6, "MaxJobsPU")?,
                    max_submit_per_user: number(7, "MaxSubmitPU")?,
                    not_modelled,
                });
                Ok(())
            },
        )?;
        Ok(QosTable { rows })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_columns_of_a_formatted_table() {
        // tests/fixtures/slurm-gpu/run1/qos.txt's form, with the queue workload's limit
        let text = "Name|Priority|UsageFactor|GrpTRES|MaxTRES|MaxTRESPU|MaxJobsPU|Flags\n\
                    normal|0|1.000000|||||\n\
                    high|100|1.000000||||2|\n\
                    gpu|0|0.500000|gres/gpu=3||cpu=8|||\n";
        let table = QosTable::read_from(text.as_bytes(), "qos.txt").unwrap();
        let names: Vec<&str> = table.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["normal", "high", "gpu"]);
        assert_eq!(table.rows[1].priority, 100);
        assert_eq!(table.rows[1].max_jobs_per_user, Some(2));
        assert_eq!(table.rows[2].usage_factor, 0.5);
        assert_eq!(table.rows[2].grp_tres.as_deref(), Some("gres/gpu=3"));
        assert_eq!(table.rows[2].max_tres_per_user.as_deref(), Some("cpu=8"));
        assert_eq!(
            table.rows[0],
            QosRow {
                name: "normal".into(),
                usage_factor: 1.0,
                ..QosRow::default()
            }
        );
    }

    #[test]
    fn the_default_table_lists_the_limits_the_model_does_not_apply() {
        // `sacctmgr -P show qos` without format= (Slurm 22.05's columns)
        let text = "Name|Priority|GraceTime|Preempt|PreemptExemptTime|PreemptMode|Flags|UsageThres|UsageFactor|GrpTRES|GrpTRESMins|GrpTRESRunMins|GrpJobs|GrpSubmit|GrpWall|MaxTRES|MaxTRESPerNode|MaxTRESMins|MaxWall|MaxTRESPU|MaxJobsPU|MaxSubmitPU|MaxTRESPA|MaxJobsPA|MaxSubmitPA|MinTRES\n\
                    normal|0|00:00:00|||cluster|||1.000000||||||||||||||||||\n\
                    long|10|00:00:00|||cluster|||1.000000|cpu=64|||20|||||||||4||||\n";
        let table = QosTable::read_from(text.as_bytes(), "qos.txt").unwrap();
        assert_eq!(table.rows[0].not_modelled, ["GraceTime=00:00:00"]);
        assert_eq!(table.rows[1].grp_tres.as_deref(), Some("cpu=64"));
        assert_eq!(table.rows[1].max_submit_per_user, Some(4));
        assert_eq!(
            table.rows[1].not_modelled,
            ["GraceTime=00:00:00", "GrpJobs=20"]
        );
    }

    #[test]
    fn bad_rows_are_errors_naming_file_line_and_column() {
        for (text, expected) in [
            (
                "Priority\n1\n",
                "qos.txt:1: the header row has no Name column",
            ),
            ("Name|Priority\nx|high\n", "qos.txt:2: field Priority"),
            ("Name|MaxJobsPU\nx|-1\n", "qos.txt:2: field MaxJobsPU"),
            ("Name|UsageFactor\nx|-2\n", "qos.txt:2: field UsageFactor"),
            ("Name\nx\nx\n", "qos.txt:3: field Name"),
            ("Name|Priority|GrpTRES\nx|1\n", "qos.txt:2: "),
            ("", "qos.txt"),
        ] {
            let error = QosTable::read_from(text.as_bytes(), "qos.txt")
                .unwrap_err()
                .to_string();
            assert!(error.starts_with(expected), "{text:?}: {error}");
        }
    }
}
