//! The options of a fit (`sitesim fit`, `sitesim.fit`), checked in one place.

use config::{Result, ensure};
use fit::{FitOptions, SessionRules, Weighting};

/// The fit's options: think times up to `session_threshold` seconds continue a session, breaks
/// longer than `max_break` seconds are dropped, and `weighting` combines the traces. Errors
/// name the options by key (each front end says them its way).
pub fn fit_options(
    session_threshold: i64,
    max_break: i64,
    weighting: Weighting,
) -> Result<FitOptions> {
    ensure!(
        session_threshold > 0,
        "{} must be positive",
        config::naming::key("session_threshold")
    );
    ensure!(
        max_break > session_threshold,
        "{} ({max_break} s) must exceed {} ({session_threshold} s)",
        config::naming::key("max_break"),
        config::naming::key("session_threshold")
    );
    Ok(FitOptions {
        rules: SessionRules {
            session_threshold,
            max_break,
        },
        weighting,
    })
}

/// The resource mix of the sacct dumps among `traces` (read with `input`): one row per user of
/// each dump that has a job that ran ([`usermodel::resources::ResourceRow`]), users numbered
/// across the dumps in order of first appearance; SWF traces, which have no field for GPUs or
/// memory, give none. Empty when no dump's jobs ask for GPUs or memory.
pub fn resource_rows(
    traces: &[std::path::PathBuf],
    input: &config::trace::TraceOptions,
) -> Result<Vec<usermodel::resources::ResourceRow>> {
    use std::collections::BTreeMap;
    let mut rows = Vec::new();
    let mut any = false;
    for path in traces {
        let crate::trace::Opened::Sacct(trace) = crate::trace::open(path, input)? else {
            continue;
        };
        let log = &trace.log;
        /// What one user's jobs asked for.
        #[derive(Default)]
        struct Seen {
            account: u32,
            jobs: u64,
            cpus_per_gpu: Vec<f64>,
            memory_per_cpu: Vec<f64>,
            cpu_partitions: BTreeMap<u32, u64>,
            gpu_partitions: BTreeMap<u32, u64>,
            gpu_types: BTreeMap<u32, u64>,
        }
        let mut users: Vec<u32> = Vec::new();
        let mut seen: BTreeMap<u32, Seen> = BTreeMap::new();
        for job in log.jobs.iter().filter(|j| j.started()) {
            if !seen.contains_key(&job.user) {
                users.push(job.user);
            }
            let s = seen.entry(job.user).or_default();
            s.account = job.account;
            s.jobs += 1;
            if let Some(kb) = job.memory_per_cpu {
                s.memory_per_cpu.push(kb / 1024.0);
                any = true;
            }
            if job.gpus > 0 {
                any = true;
                s.cpus_per_gpu
                    .push(f64::from(job.req_cpus.max(1)) / f64::from(job.gpus));
                *s.gpu_partitions.entry(job.partition).or_default() += 1;
                if job.gpu_type > 0 {
                    *s.gpu_types.entry(job.gpu_type).or_default() += 1;
                }
            } else {
                *s.cpu_partitions.entry(job.partition).or_default() += 1;
            }
        }
        let name = |names: &sacct::Names, id: u32| names.name(id).to_string();
        let mode = |counts: &BTreeMap<u32, u64>| {
            counts
                .iter()
                .max_by_key(|&(id, n)| (*n, std::cmp::Reverse(*id)))
                .map(|(&id, _)| id)
        };
        for user in users {
            let s = &seen[&user];
            let gpu_jobs = s.cpus_per_gpu.len() as u64;
            rows.push(usermodel::resources::ResourceRow {
                user: rows.len() as u32 + 1,
                account: name(&log.names.accounts, s.account),
                jobs: s.jobs,
                gpu_share: gpu_jobs as f64 / s.jobs as f64,
                cpus_per_gpu: median(&s.cpus_per_gpu),
                memory_per_cpu_mib: median(&s.memory_per_cpu)
                    .map_or(0, |m| m.round().min(f64::from(u32::MAX)) as u32),
                cpu_partition: mode(&s.cpu_partitions)
                    .map(|p| name(&log.names.partitions, p))
                    .unwrap_or_default(),
                gpu_partition: mode(&s.gpu_partitions)
                    .map(|p| name(&log.names.partitions, p))
                    .unwrap_or_default(),
                gpu_type: mode(&s.gpu_types)
                    .map(|t| name(&log.names.gpu_types, t))
                    .unwrap_or_default(),
            });
        }
    }
    Ok(if any { rows } else { Vec::new() })
}

/// The median of `values` (the mean of the middle two for an even count); `None` if empty.
fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}
