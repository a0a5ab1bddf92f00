//! Why a scenario cannot be built or run.

use crate::naming::{Style, render};

/// An error of the scenario layer. The messages name what was wrong where: the file (or "the
/// default site") and the key. Options are named by their keys ([`crate::naming`]); a front end
/// shows a message in its own words with [`ScenarioError::message`] (`Display` shows the keys).
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// A value (from a file, a flag or a sweep axis) is not allowed; the message says which and
    /// why.
    #[error("{}", render(.0, Style::Keys))]
    Invalid(String),
    /// A file could not be read or written.
    #[error("{}", render(what, Style::Keys))]
    Io {
        /// The file and what was being done.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// An error inside a larger piece (one configuration of a sweep, say).
    #[error("{}", render(context, Style::Keys))]
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
    /// A Slurm accounting dump (sacct, sacctmgr) could not be read.
    #[error(transparent)]
    Sacct(#[from] sacct::SacctError),
    /// A modern public trace (Helios, Philly, ...) could not be read.
    #[error(transparent)]
    Traces(#[from] traces::TraceError),
    /// The simulation itself refused the input.
    #[error("{}", render(context, Style::Keys))]
    Engine {
        /// Where the input came from.
        context: String,
        /// The cause.
        #[source]
        source: engine::EngineError,
    },
}

impl ScenarioError {
    /// This error's own message (not its causes'), with its options named in `style`: what a
    /// front end shows for each error of a chain.
    pub fn message(&self, style: Style) -> String {
        match self {
            ScenarioError::Invalid(text)
            | ScenarioError::Io { what: text, .. }
            | ScenarioError::Within { context: text, .. }
            | ScenarioError::Engine { context: text, .. } => render(text, style),
            ScenarioError::Trace(_)
            | ScenarioError::Sacct(_)
            | ScenarioError::Traces(_)
            | ScenarioError::Table { .. } => self.to_string(),
        }
    }

    /// This error's own message with its options still marked, for a larger message that
    /// quotes it (the front end names them when it shows that message).
    pub fn marked(&self) -> String {
        match self {
            ScenarioError::Invalid(text)
            | ScenarioError::Io { what: text, .. }
            | ScenarioError::Within { context: text, .. }
            | ScenarioError::Engine { context: text, .. } => text.clone(),
            ScenarioError::Trace(_)
            | ScenarioError::Sacct(_)
            | ScenarioError::Traces(_)
            | ScenarioError::Table { .. } => self.to_string(),
        }
    }

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
#[macro_export]
macro_rules! invalid {
    ($($arg:tt)*) => {
        $crate::ScenarioError::Invalid(format!($($arg)*))
    };
}

/// Returns early with [`ScenarioError::Invalid`] unless the condition holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err($crate::invalid!($($arg)*));
        }
    };
}

pub(crate) use {ensure, invalid};
