//! Fuzzes the readers of the GPU-era traces (crate traces): the first byte picks the format
//! (Helios, Philly, Alibaba PAI, Acme, Supercloud); the rest is the file (for Alibaba PAI, the
//! job table and the task table, split at the first NUL byte). Each must end with jobs or an
//! error, and the jobs must convert to SWF records.
#![no_main]

use libfuzzer_sys::fuzz_target;

fn input(bytes: &[u8], name: &str) -> Option<swf::Input> {
    swf::Input::from_read(Box::new(std::io::Cursor::new(bytes.to_vec())), name.to_string()).ok()
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let format = traces::Format::ALL[usize::from(pick) % traces::Format::ALL.len()];
    let options = sacct::SacctOptions {
        resources: vec!["gres/gpu".into(), "mem".into()],
        ..Default::default()
    };
    let log = if format == traces::Format::AlibabaPai {
        let at = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        let (jobs, tasks) = (&rest[..at], rest.get(at + 1..).unwrap_or_default());
        let (Some(jobs), Some(tasks)) = (input(jobs, "jobs"), input(tasks, "tasks")) else {
            return;
        };
        traces::read_alibaba_pai(jobs, tasks, &options)
    } else {
        let Some(file) = input(rest, "fuzz") else {
            return;
        };
        traces::read_from(file, format, &options)
    };
    if let Ok(log) = log {
        let converted = sacct::convert(&log, sacct::Unit::Cpus);
        assert_eq!(converted.records.len(), log.jobs.len());
    }
});
