//! Fuzzes option values as the command line and the Python package convert them: any text
//! given to any option of `run`, `replay` or a population file (the flag's text, and Python's
//! integers, which go through the same parser) and any number or string as a TOML value give a
//! value or an error, never a panic.
#![no_main]

use config::options::{REPLAY, RUN, SITE};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for option in SITE.iter().chain(RUN).chain(REPLAY) {
        let _ = option.parse_text(text);
        let _ = option.check(toml::Value::String(text.to_string()));
        if let Ok(n) = text.trim().parse::<i64>() {
            let _ = option.check(toml::Value::Integer(n));
        }
        if let Ok(x) = text.trim().parse::<f64>() {
            let _ = option.check(toml::Value::Float(x));
        }
    }
});
