//! The fitted user model of site-level simulation (Shmueli & Feitelson 2009, section III): its
//! data types and the file format of a model directory (`models/combined`, `models/traces/*`).
//!
//! `fit` derives a [`Model`] from SWF traces and writes it with [`Model::files`]; `users` reads it
//! back with [`Model::from_files`] and draws from its distributions. Keeping the types here lets
//! the simulated users depend on the model without the trace analysis (SWF reading, time zones,
//! hashing, parallelism).
//!
//! * [`Ecdf`]: an empirical distribution of whole numbers (seconds, processors, counts), stored as
//!   `value,cumulative` CSV;
//! * [`ContinueBin`] / [`ContinueFit`]: the response-time -> continue-probability table (Fig. 3)
//!   and its curve a / (b r + 1) (eq. 1);
//! * [`EstimatesByRuntime`]: user runtime estimates per runtime class (powers of two of seconds);
//! * [`Model`]: all of them together, with [`MODEL_FILES`] describing each file;
//! * [`FittedParameters`]: the directory's fitted scalars (`parameters.csv`).

pub mod continuation;
mod csvtext;
mod ecdf;
mod model;
mod parameters;
pub mod resources;

pub use continuation::{ContinueBin, ContinueFit};
pub use ecdf::{Ecdf, MAX_POINTS, VALUE_RESOLUTION};
pub use model::{EstimatesByRuntime, MODEL_FILES, Model, WEEKDAYS};
pub use parameters::{FittedParameters, PARAMETERS_FILE, PARAMETERS_HELP};

/// Why a stored model could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// A required file is missing.
    #[error("{file}: missing")]
    Missing {
        /// The file.
        file: String,
    },
    /// A file's content is not a valid model part.
    #[error("{file}: {reason}")]
    Invalid {
        /// The file.
        file: String,
        /// Why.
        reason: String,
    },
    /// A field is not a number.
    #[error("{file}:{line}: column {column}: {value:?} is not {expected}")]
    Field {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// Column name.
        column: String,
        /// The text.
        value: String,
        /// What was expected.
        expected: String,
    },
}
