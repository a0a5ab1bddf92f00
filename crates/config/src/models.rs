//! The default user models, embedded from `models/combined/` at build time so a run needs no
//! files at hand, and reading a model directory.

use std::path::Path;

use usermodel::{FittedParameters, Model, ModelError, PARAMETERS_FILE};

/// The text of an embedded model file, by name (the files of [`usermodel::MODEL_FILES`]).
fn embedded(name: &str) -> Option<&'static str> {
    Some(match name {
        "think_time.csv" => include_str!("../models/combined/think_time.csv"),
        "think_short.csv" => include_str!("../models/combined/think_short.csv"),
        "think_break.csv" => include_str!("../models/combined/think_break.csv"),
        "continue.csv" => include_str!("../models/combined/continue.csv"),
        "size.csv" => include_str!("../models/combined/size.csv"),
        "runtime.csv" => include_str!("../models/combined/runtime.csv"),
        "size_repetition.csv" => include_str!("../models/combined/size_repetition.csv"),
        "batch_width.csv" => include_str!("../models/combined/batch_width.csv"),
        "batch_gap.csv" => include_str!("../models/combined/batch_gap.csv"),
        "session_length.csv" => include_str!("../models/combined/session_length.csv"),
        "estimate.csv" => include_str!("../models/combined/estimate.csv"),
        "daily.csv" => include_str!("../models/combined/daily.csv"),
        "weekly.csv" => include_str!("../models/combined/weekly.csv"),
        "parameters.csv" => include_str!("../models/combined/parameters.csv"),
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
    // A file past the bound (or unreadable) is missing: the model names what it lacks.
    Model::from_files(&label, |name| {
        crate::files::read_text(&dir.join(name), crate::files::MAX_TEXT_BYTES, "model file").ok()
    })
}

/// The names of the embedded per-trace models (`models/traces/<name>` when the binary was
/// built); with `combined`, what `models = "embedded:NAME"` may name.
pub const EMBEDDED_TRACES: [&str; 5] = [
    "CTC-SP2-1996-3.1-cln",
    "KTH-SP2-1996-2.1-cln",
    "SDSC-BLUE-2000-4.2-cln",
    "SDSC-Par-1996-3.1-cln",
    "SDSC-SP2-1998-4.2-cln",
];

/// The text of an embedded per-trace model file.
fn embedded_trace(trace: &str, name: &str) -> Option<&'static str> {
    Some(match (trace, name) {
        ("CTC-SP2-1996-3.1-cln", "batch_gap.csv") => {
            include_str!("../models/traces/CTC-SP2-1996-3.1-cln/batch_gap.csv")
        }
        ("CTC-SP2-1996-3.1-cln", "batch_width.csv") => {
            include_str!("../models/traces/CTC-SP2-1996-3.1-cln/batch_width.csv")
        }
        ("CTC-SP2-1996-3.1-cln", "continue.csv") => {
            include_str!("../models/traces/CTC-SP2-1996-3.1-cln/continue.csv")
        }
        ("CTC-SP2-1996-3.1-cln", "daily.csv") => {
            include_str!("../models/traces/CTC-SP2-1996-3.1-cln/daily.csv")
        }
        ("CTC-SP2-1996-3.1-cln", "estimate.csv") => {
            include_str!("../models/traces/CTC-SP2-1996-3.1-cln/estimate.csv")
        }
        ("CTC-SP2-1996-3.1-cln", "parameters.csv") => {
            include_str!("../models/traces/CTC-SP2-1996-3.1-cln/parameters.csv")
        }
        ("CTC-SP2-1996-3.1-cln", "runtime.csv") => {
            include_str!("../models/traces/CTC-SP2-1996-3.1-cln/runtime.csv")
        }
        ("CTC-SP2-1996-3.1-cln", "session_length.csv") => {
            include_str!("../models/traces/CTC-SP2-1996-3.1-cln/session_length.csv")
        }
        ("CTC-SP2-1996-3.1-cln", "size.csv") => {
            include_str!("../models/traces/CTC-SP2-1996-3.1-cln/size.csv")
        }
        ("CTC-SP2-1996-3.1-cln", "size_repetition.csv") => {
            include_str!("../models/traces/CTC-SP2-1996-3.1-cln/size_repetition.csv")
        }
        ("CTC-SP2-1996-3.1-cln", "think_break.csv") => {
            include_str!("../models/traces/CTC-SP2-1996-3.1-cln/think_break.csv")
        }
        ("CTC-SP2-1996-3.1-cln", "think_short.csv") => {
            include_str!("../models/traces/CTC-SP2-1996-3.1-cln/think_short.csv")
        }
        ("CTC-SP2-1996-3.1-cln", "think_time.csv") => {
            include_str!("../models/traces/CTC-SP2-1996-3.1-cln/think_time.csv")
        }
        ("CTC-SP2-1996-3.1-cln", "weekly.csv") => {
            include_str!("../models/traces/CTC-SP2-1996-3.1-cln/weekly.csv")
        }
        ("KTH-SP2-1996-2.1-cln", "batch_gap.csv") => {
            include_str!("../models/traces/KTH-SP2-1996-2.1-cln/batch_gap.csv")
        }
        ("KTH-SP2-1996-2.1-cln", "batch_width.csv") => {
            include_str!("../models/traces/KTH-SP2-1996-2.1-cln/batch_width.csv")
        }
        ("KTH-SP2-1996-2.1-cln", "continue.csv") => {
            include_str!("../models/traces/KTH-SP2-1996-2.1-cln/continue.csv")
        }
        ("KTH-SP2-1996-2.1-cln", "daily.csv") => {
            include_str!("../models/traces/KTH-SP2-1996-2.1-cln/daily.csv")
        }
        ("KTH-SP2-1996-2.1-cln", "estimate.csv") => {
            include_str!("../models/traces/KTH-SP2-1996-2.1-cln/estimate.csv")
        }
        ("KTH-SP2-1996-2.1-cln", "parameters.csv") => {
            include_str!("../models/traces/KTH-SP2-1996-2.1-cln/parameters.csv")
        }
        ("KTH-SP2-1996-2.1-cln", "runtime.csv") => {
            include_str!("../models/traces/KTH-SP2-1996-2.1-cln/runtime.csv")
        }
        ("KTH-SP2-1996-2.1-cln", "session_length.csv") => {
            include_str!("../models/traces/KTH-SP2-1996-2.1-cln/session_length.csv")
        }
        ("KTH-SP2-1996-2.1-cln", "size.csv") => {
            include_str!("../models/traces/KTH-SP2-1996-2.1-cln/size.csv")
        }
        ("KTH-SP2-1996-2.1-cln", "size_repetition.csv") => {
            include_str!("../models/traces/KTH-SP2-1996-2.1-cln/size_repetition.csv")
        }
        ("KTH-SP2-1996-2.1-cln", "think_break.csv") => {
            include_str!("../models/traces/KTH-SP2-1996-2.1-cln/think_break.csv")
        }
        ("KTH-SP2-1996-2.1-cln", "think_short.csv") => {
            include_str!("../models/traces/KTH-SP2-1996-2.1-cln/think_short.csv")
        }
        ("KTH-SP2-1996-2.1-cln", "think_time.csv") => {
            include_str!("../models/traces/KTH-SP2-1996-2.1-cln/think_time.csv")
        }
        ("KTH-SP2-1996-2.1-cln", "weekly.csv") => {
            include_str!("../models/traces/KTH-SP2-1996-2.1-cln/weekly.csv")
        }
        ("SDSC-BLUE-2000-4.2-cln", "batch_gap.csv") => {
            include_str!("../models/traces/SDSC-BLUE-2000-4.2-cln/batch_gap.csv")
        }
        ("SDSC-BLUE-2000-4.2-cln", "batch_width.csv") => {
            include_str!("../models/traces/SDSC-BLUE-2000-4.2-cln/batch_width.csv")
        }
        ("SDSC-BLUE-2000-4.2-cln", "continue.csv") => {
            include_str!("../models/traces/SDSC-BLUE-2000-4.2-cln/continue.csv")
        }
        ("SDSC-BLUE-2000-4.2-cln", "daily.csv") => {
            include_str!("../models/traces/SDSC-BLUE-2000-4.2-cln/daily.csv")
        }
        ("SDSC-BLUE-2000-4.2-cln", "estimate.csv") => {
            include_str!("../models/traces/SDSC-BLUE-2000-4.2-cln/estimate.csv")
        }
        ("SDSC-BLUE-2000-4.2-cln", "parameters.csv") => {
            include_str!("../models/traces/SDSC-BLUE-2000-4.2-cln/parameters.csv")
        }
        ("SDSC-BLUE-2000-4.2-cln", "runtime.csv") => {
            include_str!("../models/traces/SDSC-BLUE-2000-4.2-cln/runtime.csv")
        }
        ("SDSC-BLUE-2000-4.2-cln", "session_length.csv") => {
            include_str!("../models/traces/SDSC-BLUE-2000-4.2-cln/session_length.csv")
        }
        ("SDSC-BLUE-2000-4.2-cln", "size.csv") => {
            include_str!("../models/traces/SDSC-BLUE-2000-4.2-cln/size.csv")
        }
        ("SDSC-BLUE-2000-4.2-cln", "size_repetition.csv") => {
            include_str!("../models/traces/SDSC-BLUE-2000-4.2-cln/size_repetition.csv")
        }
        ("SDSC-BLUE-2000-4.2-cln", "think_break.csv") => {
            include_str!("../models/traces/SDSC-BLUE-2000-4.2-cln/think_break.csv")
        }
        ("SDSC-BLUE-2000-4.2-cln", "think_short.csv") => {
            include_str!("../models/traces/SDSC-BLUE-2000-4.2-cln/think_short.csv")
        }
        ("SDSC-BLUE-2000-4.2-cln", "think_time.csv") => {
            include_str!("../models/traces/SDSC-BLUE-2000-4.2-cln/think_time.csv")
        }
        ("SDSC-BLUE-2000-4.2-cln", "weekly.csv") => {
            include_str!("../models/traces/SDSC-BLUE-2000-4.2-cln/weekly.csv")
        }
        ("SDSC-Par-1996-3.1-cln", "batch_gap.csv") => {
            include_str!("../models/traces/SDSC-Par-1996-3.1-cln/batch_gap.csv")
        }
        ("SDSC-Par-1996-3.1-cln", "batch_width.csv") => {
            include_str!("../models/traces/SDSC-Par-1996-3.1-cln/batch_width.csv")
        }
        ("SDSC-Par-1996-3.1-cln", "continue.csv") => {
            include_str!("../models/traces/SDSC-Par-1996-3.1-cln/continue.csv")
        }
        ("SDSC-Par-1996-3.1-cln", "daily.csv") => {
            include_str!("../models/traces/SDSC-Par-1996-3.1-cln/daily.csv")
        }
        ("SDSC-Par-1996-3.1-cln", "parameters.csv") => {
            include_str!("../models/traces/SDSC-Par-1996-3.1-cln/parameters.csv")
        }
        ("SDSC-Par-1996-3.1-cln", "runtime.csv") => {
            include_str!("../models/traces/SDSC-Par-1996-3.1-cln/runtime.csv")
        }
        ("SDSC-Par-1996-3.1-cln", "session_length.csv") => {
            include_str!("../models/traces/SDSC-Par-1996-3.1-cln/session_length.csv")
        }
        ("SDSC-Par-1996-3.1-cln", "size.csv") => {
            include_str!("../models/traces/SDSC-Par-1996-3.1-cln/size.csv")
        }
        ("SDSC-Par-1996-3.1-cln", "size_repetition.csv") => {
            include_str!("../models/traces/SDSC-Par-1996-3.1-cln/size_repetition.csv")
        }
        ("SDSC-Par-1996-3.1-cln", "think_break.csv") => {
            include_str!("../models/traces/SDSC-Par-1996-3.1-cln/think_break.csv")
        }
        ("SDSC-Par-1996-3.1-cln", "think_short.csv") => {
            include_str!("../models/traces/SDSC-Par-1996-3.1-cln/think_short.csv")
        }
        ("SDSC-Par-1996-3.1-cln", "think_time.csv") => {
            include_str!("../models/traces/SDSC-Par-1996-3.1-cln/think_time.csv")
        }
        ("SDSC-Par-1996-3.1-cln", "weekly.csv") => {
            include_str!("../models/traces/SDSC-Par-1996-3.1-cln/weekly.csv")
        }
        ("SDSC-SP2-1998-4.2-cln", "batch_gap.csv") => {
            include_str!("../models/traces/SDSC-SP2-1998-4.2-cln/batch_gap.csv")
        }
        ("SDSC-SP2-1998-4.2-cln", "batch_width.csv") => {
            include_str!("../models/traces/SDSC-SP2-1998-4.2-cln/batch_width.csv")
        }
        ("SDSC-SP2-1998-4.2-cln", "continue.csv") => {
            include_str!("../models/traces/SDSC-SP2-1998-4.2-cln/continue.csv")
        }
        ("SDSC-SP2-1998-4.2-cln", "daily.csv") => {
            include_str!("../models/traces/SDSC-SP2-1998-4.2-cln/daily.csv")
        }
        ("SDSC-SP2-1998-4.2-cln", "estimate.csv") => {
            include_str!("../models/traces/SDSC-SP2-1998-4.2-cln/estimate.csv")
        }
        ("SDSC-SP2-1998-4.2-cln", "parameters.csv") => {
            include_str!("../models/traces/SDSC-SP2-1998-4.2-cln/parameters.csv")
        }
        ("SDSC-SP2-1998-4.2-cln", "runtime.csv") => {
            include_str!("../models/traces/SDSC-SP2-1998-4.2-cln/runtime.csv")
        }
        ("SDSC-SP2-1998-4.2-cln", "session_length.csv") => {
            include_str!("../models/traces/SDSC-SP2-1998-4.2-cln/session_length.csv")
        }
        ("SDSC-SP2-1998-4.2-cln", "size.csv") => {
            include_str!("../models/traces/SDSC-SP2-1998-4.2-cln/size.csv")
        }
        ("SDSC-SP2-1998-4.2-cln", "size_repetition.csv") => {
            include_str!("../models/traces/SDSC-SP2-1998-4.2-cln/size_repetition.csv")
        }
        ("SDSC-SP2-1998-4.2-cln", "think_break.csv") => {
            include_str!("../models/traces/SDSC-SP2-1998-4.2-cln/think_break.csv")
        }
        ("SDSC-SP2-1998-4.2-cln", "think_short.csv") => {
            include_str!("../models/traces/SDSC-SP2-1998-4.2-cln/think_short.csv")
        }
        ("SDSC-SP2-1998-4.2-cln", "think_time.csv") => {
            include_str!("../models/traces/SDSC-SP2-1998-4.2-cln/think_time.csv")
        }
        ("SDSC-SP2-1998-4.2-cln", "weekly.csv") => {
            include_str!("../models/traces/SDSC-SP2-1998-4.2-cln/weekly.csv")
        }
        _ => return None,
    })
}

/// The model name in `embedded:NAME` (`combined` or a name of [`EMBEDDED_TRACES`]), if `models`
/// has that form.
pub fn embedded_name(models: &str) -> Option<&str> {
    models.strip_prefix("embedded:").map(str::trim)
}

/// An embedded model by name: `combined` (as `embedded`) or a trace's (`models/traces/NAME` as
/// it was when the binary was built), so population files that name them run anywhere.
pub fn embedded_model(name: &str) -> Result<Model, ModelError> {
    if name == "combined" {
        return default_model();
    }
    if !EMBEDDED_TRACES.contains(&name) {
        return Err(ModelError::Invalid {
            file: format!("embedded:{name}"),
            reason: format!(
                "no such embedded model; the binary holds combined, {}",
                EMBEDDED_TRACES.join(", ")
            ),
        });
    }
    Model::from_files(&format!("embedded models/traces/{name}"), |file| {
        embedded_trace(name, file).map(str::to_string)
    })
}

/// The fitted parameters (`parameters.csv`) of the model `models` names, as a group's `models`
/// key does (directories relative to `base`): `None` for `embedded` (the paper's experiment
/// keeps the paper's values) and for a directory without the file (fitted before it existed).
pub fn fitted_parameters(
    models: &str,
    base: Option<&Path>,
) -> Result<Option<FittedParameters>, ModelError> {
    if models == "embedded" {
        return Ok(None);
    }
    let (label, text) = match embedded_name(models) {
        Some("combined") => (
            format!("embedded models/combined/{PARAMETERS_FILE}"),
            embedded(PARAMETERS_FILE).map(str::to_string),
        ),
        Some(name) => (
            format!("embedded models/traces/{name}/{PARAMETERS_FILE}"),
            embedded_trace(name, PARAMETERS_FILE).map(str::to_string),
        ),
        None => {
            let dir = match base {
                Some(base) => base.join(models),
                None => Path::new(models).to_path_buf(),
            };
            let path = dir.join(PARAMETERS_FILE);
            (
                path.display().to_string(),
                crate::files::read_text(&path, crate::files::MAX_TEXT_BYTES, "model file").ok(),
            )
        }
    };
    text.map(|text| FittedParameters::from_csv(&label, &text))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_model_is_models_combined() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/combined");
        let on_disk = load_model(&dir).unwrap();
        assert_eq!(default_model().unwrap(), on_disk);
        // Every file the fitter writes is embedded.
        for (name, _) in usermodel::MODEL_FILES {
            assert!(embedded(name).is_some(), "{name} is not embedded");
        }
    }

    #[test]
    fn the_embedded_trace_models_are_models_traces() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/traces");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        assert_eq!(on_disk, EMBEDDED_TRACES);
        for name in EMBEDDED_TRACES {
            assert_eq!(
                embedded_model(name).unwrap(),
                load_model(&dir.join(name)).unwrap(),
                "{name}"
            );
        }
        assert_eq!(
            embedded_model("combined").unwrap(),
            default_model().unwrap()
        );
        assert!(embedded_model("nope").is_err());
        assert_eq!(embedded_name("embedded:KTH"), Some("KTH"));
        assert_eq!(embedded_name("../models/x"), None);
        // Every model directory carries its fitted parameters, embedded with it.
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        for name in EMBEDDED_TRACES.iter().chain(&["combined"]) {
            let on_disk = if *name == "combined" {
                "models/combined".to_string()
            } else {
                format!("models/traces/{name}")
            };
            let a = fitted_parameters(&format!("embedded:{name}"), None).unwrap();
            let b = fitted_parameters(&on_disk, Some(crate_dir)).unwrap();
            assert!(a.is_some() && a == b, "{name}");
        }
        assert_eq!(fitted_parameters("embedded", None).unwrap(), None);
        assert_eq!(fitted_parameters("no/such/dir", None).unwrap(), None);
    }
}
