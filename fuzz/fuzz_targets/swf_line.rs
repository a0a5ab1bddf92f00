//! Fuzzes the SWF job-line parser: any bytes give a record or an error, never a panic, and a
//! record only comes from a line of exactly 18 fields.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if swf::parse_record(data, "fuzz", 1).is_ok() {
        let fields = data
            .split(|b| b.is_ascii_whitespace())
            .filter(|t| !t.is_empty())
            .count();
        assert_eq!(fields, swf::FIELD_COUNT);
    }
});
