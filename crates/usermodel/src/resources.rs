//! `resources.csv`: a site's resource mix as `sitesim fit` finds it in a sacct dump with TRES,
//! one row per user of the dump (anonymous: numbered in order of first appearance), and what a
//! population file's group reads with its `resources` key.

use std::io::{Read, Write};

use serde::{Deserialize, Serialize};

/// The file's name in a model directory.
pub const RESOURCES_FILE: &str = "resources.csv";

/// One user of the dump: what its jobs asked for besides CPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceRow {
    /// The user, numbered from 1 in order of first appearance in the dump.
    pub user: u32,
    /// Its account (the dump's `Account`).
    pub account: String,
    /// Its jobs in the dump that ran.
    pub jobs: u64,
    /// The share of them that held GPUs.
    pub gpu_share: f64,
    /// The median CPUs per GPU of its GPU jobs (empty when it has none).
    pub cpus_per_gpu: Option<f64>,
    /// The median memory per CPU of its jobs, MiB (0 where the dump has no memory).
    pub memory_per_cpu_mib: u32,
    /// The partition most of its CPU jobs ran in (empty: none).
    pub cpu_partition: String,
    /// The partition most of its GPU jobs ran in (empty: none).
    pub gpu_partition: String,
    /// The GPU type most of its GPU jobs held (empty: untyped or none).
    pub gpu_type: String,
}

/// An error reading or writing resources.csv.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ResourcesError(pub String);

/// Reads the rows of a resources.csv; `name` names it in errors (with the line).
pub fn read_resources(input: impl Read, name: &str) -> Result<Vec<ResourceRow>, ResourcesError> {
    let mut reader = csv::Reader::from_reader(input);
    let mut rows = Vec::new();
    for (i, row) in reader.deserialize::<ResourceRow>().enumerate() {
        let row = row.map_err(|e| ResourcesError(format!("{name}, line {}: {e}", i + 2)))?;
        if !(0.0..=1.0).contains(&row.gpu_share)
            || row.cpus_per_gpu.is_some_and(|c| c.is_nan() || c <= 0.0)
        {
            return Err(ResourcesError(format!(
                "{name}, line {}: gpu_share must be in [0, 1] and cpus_per_gpu > 0",
                i + 2
            )));
        }
        rows.push(row);
    }
    if rows.iter().all(|r| r.jobs == 0) {
        return Err(ResourcesError(format!("{name}: no user with jobs")));
    }
    Ok(rows)
}

/// Writes `rows` as a resources.csv.
pub fn write_resources(rows: &[ResourceRow], out: impl Write) -> Result<(), ResourcesError> {
    let mut writer = csv::Writer::from_writer(out);
    for row in rows {
        writer
            .serialize(row)
            .map_err(|e| ResourcesError(format!("resources.csv: {e}")))?;
    }
    writer
        .flush()
        .map_err(|e| ResourcesError(format!("resources.csv: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_back_as_written_and_bad_values_name_the_line() {
        let rows = vec![
            ResourceRow {
                user: 1,
                account: "physics".into(),
                jobs: 10,
                gpu_share: 0.5,
                cpus_per_gpu: Some(8.0),
                memory_per_cpu_mib: 4096,
                cpu_partition: "cpu".into(),
                gpu_partition: "gpu".into(),
                gpu_type: "a100".into(),
            },
            ResourceRow {
                user: 2,
                account: "chem".into(),
                jobs: 3,
                gpu_share: 0.0,
                cpus_per_gpu: None,
                memory_per_cpu_mib: 2000,
                cpu_partition: "cpu".into(),
                gpu_partition: String::new(),
                gpu_type: String::new(),
            },
        ];
        let mut text = Vec::new();
        write_resources(&rows, &mut text).unwrap();
        assert_eq!(read_resources(&text[..], "r.csv").unwrap(), rows);
        let bad = String::from_utf8(text).unwrap().replace("0.5", "1.5");
        let error = read_resources(bad.as_bytes(), "r.csv")
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("r.csv, line 2"), "{error}");
    }
}
