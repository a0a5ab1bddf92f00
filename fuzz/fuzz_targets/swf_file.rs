//! Fuzzes the whole SWF reader (header and job lines): it must end with records or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(reader) = swf::SwfReader::new(data, "fuzz") {
        let _ = reader.header().max_procs();
        for item in reader {
            if item.is_err() {
                break;
            }
        }
    }
});
