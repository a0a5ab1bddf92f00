//! Fuzzes the user model's CSV files: an empirical distribution, the continue table and the
//! estimate model each read any text as a value or an error, never a panic; a distribution that
//! reads gives quantiles inside its range.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match which % 3 {
        0 => {
            if let Ok(ecdf) = usermodel::Ecdf::from_csv("fuzz.csv", text) {
                for u in [0.0, 0.25, 0.5, 0.999] {
                    let _ = ecdf.quantile(u);
                }
            }
        }
        1 => {
            let _ = usermodel::continuation::from_csv("fuzz.csv", text);
        }
        _ => {
            let _ = usermodel::EstimatesByRuntime::from_csv("fuzz.csv", text);
        }
    }
});
