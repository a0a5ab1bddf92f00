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

/// Returns early with [`PlotError::Invalid`] and a formatted message unless the condition holds.
macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err($crate::error::PlotError::Invalid(format!($($arg)*)));
        }
    };
}

pub(crate) use ensure;
