//! The property-test side of the fuzz targets in `fuzz/` (site_toml, sweep_toml, model_csv):
//! arbitrary and near-valid text never panics the population-file, sweep-file and model-CSV
//! parsers. cargo-fuzz explores further; these run in every `cargo test`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use config::site::Site;
use proptest::prelude::*;
use sweep::plan::Plan;

/// Lines a population or sweep file is made of, to build near-valid files from.
fn toml_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("[site]".to_string()),
        Just("[run]".to_string()),
        Just("[scheduler]".to_string()),
        Just("[[groups]]".to_string()),
        Just("[[axes]]".to_string()),
        Just("[report]".to_string()),
        (
            prop::sample::select(vec![
                "processors",
                "users",
                "weeks",
                "seed",
                "name",
                "policy",
                "alpha",
                "kind",
                "estimates",
                "continue_a",
                "continue_b",
                "feedback",
                "feedback_b",
                "think",
                "node_processors",
                "selection",
                "bandwidth_mix",
                "seeds",
                "key",
                "values",
                "baseline",
                "headroom",
                "measures",
                "warmup_days",
                "start",
                "day_start",
            ]),
            prop_oneof![
                any::<i64>().prop_map(|v| v.to_string()),
                any::<f64>().prop_map(|v| format!("{v:?}")),
                "[a-z-]{0,12}".prop_map(|s| format!("{s:?}")),
                Just("[1, 2, 0]".to_string()),
                Just("{ first = 1, count = 3 }".to_string()),
                Just("{ policy = \"creasy\", alpha = 10 }".to_string()),
                Just("\"schlagkamp\"".to_string()),
                Just("true".to_string()),
            ]
        )
            .prop_map(|(k, v)| format!("{k} = {v}")),
        ".{0,20}",
    ]
}

fn model() -> Arc<usermodel::Model> {
    Arc::new(config::models::default_model().unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn site_files_never_panic(lines in prop::collection::vec(toml_line(), 0..14)) {
        let text = lines.join("\n");
        if let Ok(site) = Site::with_overrides(&text, "p.toml", None, &[]) {
            // Keep the check cheap: the limits allow 100,000 users, which is slow to build.
            if site.file.groups.iter().map(|g| u64::from(g.users)).sum::<u64>() <= 2_000 {
                let _ = scenario::run::check(&site, &model());
            }
        }
    }

    #[test]
    fn sweep_files_never_panic(lines in prop::collection::vec(toml_line(), 0..14)) {
        let _ = Plan::from_text(lines.join("\n"), "s.toml", Path::new("/nonexistent"));
    }

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,300}") {
        let _ = Site::with_overrides(&text, "p.toml", None, &[]);
        let _ = Plan::from_text(text.clone(), "s.toml", Path::new("/nonexistent"));
        if let Ok(e) = usermodel::Ecdf::from_csv("x.csv", &text) {
            let _ = e.quantile(0.5);
        }
        let _ = usermodel::continuation::from_csv("x.csv", &text);
        let _ = usermodel::EstimatesByRuntime::from_csv("x.csv", &text);
    }

    #[test]
    fn near_valid_model_csv_never_panics(
        rows in prop::collection::vec((any::<i64>(), any::<f64>()), 0..20),
        header in prop::sample::select(vec!["seconds,cumulative", "value,cumulative", "x,y,z", ""]),
    ) {
        let mut text = format!("{header}\n");
        for (v, c) in rows {
            text.push_str(&format!("{v},{c}\n"));
        }
        if let Ok(e) = usermodel::Ecdf::from_csv("x.csv", &text) {
            for u in [0.0, 0.5, 0.999_999] {
                let _ = e.quantile(u);
            }
        }
        let _ = usermodel::continuation::from_csv("x.csv", &text);
        let _ = usermodel::EstimatesByRuntime::from_csv("x.csv", &text);
    }
}
