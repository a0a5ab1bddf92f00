//! The scenario layer of sitesim: what a run is and how it is carried out, for the command line,
//! scripts and the Python package alike.
//!
//! - [`choices`]: the named choices (processor selection, estimate model, warm-up), each parsed
//!   in one place from a file (serde) or a flag (`FromStr`);
//! - [`machine`] and [`estimates`]: a replay's machine of nodes, memory-bandwidth demands and
//!   runtime-estimate model, resolved and checked;
//! - [`output`]: every output file format behind one interface ([`output::OutputFormat`]).
//!
//! No clap here: the binary turns its flags into these types, so a value is checked the same way
//! whether it came from a file or a flag.

pub mod choices;
mod error;
pub mod estimates;
pub mod machine;
pub mod output;

pub use choices::{Choice, EstimateChoice, SelectionChoice, WarmupChoice};
pub use error::{Result, ScenarioError};
