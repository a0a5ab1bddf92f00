//! The default user models, embedded from `models/combined/` at build time so a run needs no
//! files at hand, and reading a model directory.

use std::path::Path;

use usermodel::{Model, ModelError};

/// The text of an embedded model file, by name (the files of [`usermodel::MODEL_FILES`]).
fn embedded(name: &str) -> Option<&'static str> {
    Some(match name {
        "think_time.csv" => include_str!("../../../models/combined/think_time.csv"),
        "think_short.csv" => include_str!("../../../models/combined/think_short.csv"),
        "think_break.csv" => include_str!("../../../models/combined/think_break.csv"),
        "continue.csv" => include_str!("../../../models/combined/continue.csv"),
        "size.csv" => include_str!("../../../models/combined/size.csv"),
        "runtime.csv" => include_str!("../../../models/combined/runtime.csv"),
        "size_repetition.csv" => include_str!("../../../models/combined/size_repetition.csv"),
        "batch_width.csv" => include_str!("../../../models/combined/batch_width.csv"),
        "batch_gap.csv" => include_str!("../../../models/combined/batch_gap.csv"),
        "session_length.csv" => include_str!("../../../models/combined/session_length.csv"),
        "estimate.csv" => include_str!("../../../models/combined/estimate.csv"),
        "daily.csv" => include_str!("../../../models/combined/daily.csv"),
        "weekly.csv" => include_str!("../../../models/combined/weekly.csv"),
        _ => return None,
    })
}

/// The default model: `models/combined/` as it was when the binary was built.
/// Fails only if the files embedded at build time are invalid (rebuild after fixing models/).
pub fn default_model() -> Result<Model, ModelError> {
    Model::from_files("embedded models/combined", |name| {
        embedded(name).map(str::to_string)
    })
}

/// Reads a model directory (`models/combined`, `models/traces/<name>`, or one written by
/// `sitesim fit --out`).
pub fn load_model(dir: &Path) -> Result<Model, ModelError> {
    let label = dir.display().to_string();
    Model::from_files(&label, |name| std::fs::read_to_string(dir.join(name)).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_model_is_models_combined() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/combined");
        let on_disk = load_model(&dir).unwrap();
        assert_eq!(default_model().unwrap(), on_disk);
        // Every file the fitter writes is embedded.
        for (name, _) in usermodel::MODEL_FILES {
            assert!(embedded(name).is_some(), "{name} is not embedded");
        }
    }
}
