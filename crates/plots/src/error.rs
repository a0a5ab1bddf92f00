//! Why figures could not be drawn.

use std::path::PathBuf;

/// An error of the figures. The messages name the file or the option at fault.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The table or the options do not allow the figures; the message says why.
    #[error("{0}")]
    Invalid(String),
    /// The embedded font could not be loaded.
    #[error("the embedded font could not be loaded")]
    Font,
    /// plotters could not draw a figure's file.
    #[error("cannot draw {}: {message}", path.display())]
    Draw {
        /// The figure's file.
        path: PathBuf,
        /// What plotters said.
        message: String,
    },
    /// A figure's file could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A figure's CSV could not be written.
    #[error("cannot write {}", path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: csv::Error,
    },
    /// The figures' directory could not be created.
    #[error("cannot create {}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// Creates the figures' directory `dir` (and its parents) if it is missing.
pub(crate) fn create_dir(dir: &std::path::Path) -> Result<(), PlotError> {
    std::fs::create_dir_all(dir).map_err(|source| PlotError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })
}

/// The files a figure of `stem` is written as, in `dir`.
pub(crate) fn figure_files(dir: &std::path::Path, stem: &str) -> [PathBuf; 4] {
    ["png", "svg", "pdf", "csv"].map(|extension| dir.join(format!("{stem}.{extension}")))
}

/// Refuses, unless `force`, to draw into `dir` when it already holds a file that a figure of
/// `stems` would be written as (a figure of an earlier call, or anything else of that name): the
/// message names the folder, the first such files and `--force`.
pub(crate) fn refuse_overwrite<S: AsRef<str>>(
    dir: &std::path::Path,
    stems: &[S],
    force: bool,
) -> Result<(), PlotError> {
    if force {
        return Ok(());
    }
    let present: Vec<String> = stems
        .iter()
        .flat_map(|stem| figure_files(dir, stem.as_ref()))
        .filter(|path| path.symlink_metadata().is_ok())
        .filter_map(|path| path.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    if present.is_empty() {
        return Ok(());
    }
    let shown = present
        .iter()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    let more = match present.len() {
        n if n > 3 => format!(" and {} more", n - 3),
        _ => String::new(),
    };
    Err(PlotError::Invalid(format!(
        "{} already holds figures ({shown}{more}); pass --force to overwrite them, or choose another folder with --out",
        dir.display()
    )))
}

/// Returns early with [`PlotError::Invalid`] and a formatted message unless the condition holds.
macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err($crate::error::PlotError::Invalid(format!($($arg)*)));
        }
    };
}

pub(crate) use ensure;
