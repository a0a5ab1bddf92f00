//! Fuzzes sweep files with a `[replay]` table: any text gives a plan whose every
//! configuration's replay options are checked (as the sweep checks them before its first run),
//! or an error, never a panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sweep::plan::Plan;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(plan) = Plan::from_text(text.to_string(), "fuzz.toml", Path::new("/nonexistent"))
    else {
        return;
    };
    if !plan.is_replay() {
        return;
    }
    for point in 0..plan.points().min(64) {
        if let Ok((_, options)) = plan.replay(point, plan.seeds[0]) {
            let _ = options.check();
        }
    }
});
