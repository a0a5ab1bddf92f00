//! Fuzzes sweep files: any text gives a plan or an error, never a panic (the site is the
//! embedded default unless the text names one).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sweep::plan::Plan;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = Plan::from_text(text.to_string(), "fuzz.toml", Path::new("/nonexistent"));
});
