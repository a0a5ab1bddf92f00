//! Why a scenario cannot be built or run.

/// An error of the scenario layer. The messages name what was wrong where: the file (or "the
/// default site"), the key, and the command-line flag when a flag set the value.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// A value (from a file, a flag or a sweep axis) is not allowed; the message says which and
    /// why.
    #[error("{0}")]
    Invalid(String),
    /// A file could not be read or written.
    #[error("{what}")]
    Io {
        /// The file and what was being done.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// An error inside a larger piece (one configuration of a sweep, say).
    #[error("{context}")]
    Within {
        /// The larger piece.
        context: String,
        /// What went wrong inside it.
        #[source]
        source: Box<ScenarioError>,
    },
    /// A table sitesim wrote (jobs.csv, results.csv, batsim_jobs.csv) could not be read back:
    /// the file, the line (1 is the header) and, when one field is at fault, its column.
    #[error("{file}: line {line}{}: {message}", column_text(.column.as_deref()))]
    Table {
        /// The file.
        file: String,
        /// The line, from 1 (the header).
        line: u64,
        /// The column's name, when one field is at fault.
        column: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A trace could not be read.
    #[error(transparent)]
    Trace(#[from] engine::ReplayError),
    /// The simulation itself refused the input.
    #[error("{context}")]
    Engine {
        /// Where the input came from.
        context: String,
        /// The cause.
        #[source]
        source: engine::EngineError,
    },
}

impl ScenarioError {
    /// This error as the cause of a failure of `context`.
    pub fn within(self, context: impl Into<String>) -> ScenarioError {
        ScenarioError::Within {
            context: context.into(),
            source: Box::new(self),
        }
    }
}

/// `, column "name"` for a [`ScenarioError::Table`] message, or nothing.
fn column_text(column: Option<&str>) -> String {
    column.map_or_else(String::new, |name| format!(", column {name:?}"))
}

/// The result of the scenario layer.
pub type Result<T, E = ScenarioError> = std::result::Result<T, E>;

/// Returns a [`ScenarioError::Invalid`] with a formatted message.
macro_rules! invalid {
    ($($arg:tt)*) => {
        $crate::error::ScenarioError::Invalid(format!($($arg)*))
    };
}

/// Returns early with [`ScenarioError::Invalid`] unless the condition holds.
macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err($crate::error::invalid!($($arg)*));
        }
    };
}

pub(crate) use {ensure, invalid};
