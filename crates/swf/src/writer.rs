use std::io::{self, Write};

use crate::record::FieldValue;
use crate::{Header, HeaderLine, Record};

/// Writes SWF text: the header lines first, then one line per record.
///
/// Whole numbers are written as integers and fractional fields with Rust's shortest
/// round-trip formatting, so reading the output back yields exactly the same records.
pub struct SwfWriter<W: Write> {
    out: W,
    line: Vec<u8>,
}

impl<W: Write> SwfWriter<W> {
    /// Starts a file by writing `header`.
    pub fn new(mut out: W, header: &Header) -> io::Result<Self> {
        for line in header.lines() {
            match line {
                HeaderLine::Field { key, value } => writeln!(out, "; {key}: {value}")?,
                HeaderLine::Text(text) => writeln!(out, ";{text}")?,
            }
        }
        Ok(SwfWriter {
            out,
            line: Vec::with_capacity(128),
        })
    }

    /// Writes one job line.
    pub fn write_record(&mut self, record: &Record) -> io::Result<()> {
        self.line.clear();
        let mut ints = itoa::Buffer::new();
        for (i, field) in record.fields().iter().enumerate() {
            if i > 0 {
                self.line.push(b' ');
            }
            match *field {
                FieldValue::Whole(v) => self.line.extend_from_slice(ints.format(v).as_bytes()),
                FieldValue::Fraction(v) => write!(self.line, "{v}")?,
            }
        }
        self.line.push(b'\n');
        self.out.write_all(&self.line)
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SwfReader, Trace};

    fn write_trace(trace: &Trace) -> Vec<u8> {
        let mut writer = SwfWriter::new(Vec::new(), &trace.header).unwrap();
        for r in &trace.records {
            writer.write_record(r).unwrap();
        }
        writer.finish().unwrap()
    }

    fn read_bytes(bytes: &[u8]) -> Trace {
        let reader = SwfReader::new(bytes, "<memory>").unwrap();
        let header = reader.header().clone();
        let records = reader.collect::<Result<Vec<_>, _>>().unwrap();
        Trace { header, records }
    }

    #[test]
    fn fractions_and_negative_values_round_trip() {
        let text = b"; Version: 2.2\n; MaxProcs: 128\n;   free text\n\
            1 0 10 100 4 142.00 -1 4 200 -1 1 7 1 3 1 1 -1 -1\n\
            2 5 0 0 1 0.03 12.5 -1 -1 -1 0 8 1 3 1 1 1 30\n";
        let trace = read_bytes(text);
        assert_eq!(trace.records.len(), 2);
        assert_eq!(trace.records[0].average_cpu_time, 142.0);
        assert_eq!(trace.records[1].used_memory, 12.5);
        let again = read_bytes(&write_trace(&trace));
        assert_eq!(again, trace);
    }

    #[test]
    fn a_real_trace_round_trips() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/traces/SDSC-Par-1996-3.1-cln.swf.gz");
        let trace = Trace::read(path).unwrap();
        assert_eq!(trace.records.len(), 32135);
        let again = read_bytes(&write_trace(&trace));
        assert_eq!(again.header, trace.header);
        assert_eq!(again.records, trace.records);
    }

    proptest::proptest! {
        #[test]
        fn any_records_round_trip(rows in proptest::collection::vec(
            (proptest::array::uniform16(-1i64..10_000_000), -1.0f64..1e7, -1i64..5), 0..20)) {
            let mut trace = Trace::default();
            trace.header.push_field("MaxProcs", 64);
            for (ints, frac, extra) in rows {
                trace.records.push(Record {
                    job_number: ints[0], submit_time: ints[1], wait_time: ints[2], run_time: ints[3],
                    allocated_processors: ints[4], average_cpu_time: frac, used_memory: extra as f64,
                    requested_processors: ints[5], requested_time: ints[6], requested_memory: frac / 3.0,
                    status: ints[7], user_id: ints[8], group_id: ints[9], executable: ints[10],
                    queue: ints[11], partition: ints[12], preceding_job: ints[13], think_time: ints[14] + ints[15],
                });
            }
            let again = read_bytes(&write_trace(&trace));
            proptest::prop_assert_eq!(again, trace);
        }
    }
}
