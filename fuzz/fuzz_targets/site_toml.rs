//! Fuzzes population (site) files: any text gives a site or an error, never a panic, and a site
//! that parses is checked as a run would check it (scheduler, calendar, groups and their models,
//! the population against the machine, the nodes) without panicking.
#![no_main]

use std::sync::{Arc, OnceLock};

use config::site::Site;
use libfuzzer_sys::fuzz_target;

fn model() -> &'static Arc<usermodel::Model> {
    static MODEL: OnceLock<Arc<usermodel::Model>> = OnceLock::new();
    MODEL.get_or_init(|| Arc::new(config::models::default_model().expect("embedded model")))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(site) = Site::with_overrides(text, "fuzz.toml", None, &[]) {
        let _ = scenario::run::check(&site, model());
    }
});
