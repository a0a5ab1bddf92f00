//! Reads a trace in a format and prints its job count and report: for profiling the readers
//! (`valgrind --tool=callgrind target/release/examples/read_trace FILE FORMAT`); FORMAT `swf` reads
//! an SWF file whole, for comparison.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a profiling tool: a bad argument should panic

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args[2] == "swf" {
        let trace = swf::Trace::read(std::path::Path::new(&args[1])).unwrap();
        println!("{} jobs", trace.records.len());
        return;
    }
    let format = traces::Format::ALL
        .into_iter()
        .find(|f| f.name() == args[2])
        .expect("a format name");
    let options = sacct::SacctOptions {
        resources: vec!["gres/gpu".into(), "mem".into()],
        ..Default::default()
    };
    let log = traces::read(std::path::Path::new(&args[1]), format, &options).unwrap();
    println!("{} jobs", log.jobs.len());
    for line in log.report.lines() {
        println!("{line}");
    }
}
