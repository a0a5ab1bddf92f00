//! What a sitesim run is made of and how it is named, for the command line, scripts and the
//! Python package alike; nothing here simulates or writes output files.
//!
//! - [`options`]: the option tables, every option of `run` (and `validate`) and `replay`
//!   declared once; [`options::site`] and [`options::replay`] put a front end's values into the
//!   documents a file would give, so a value is checked on one path wherever it came from;
//! - [`site`]: the site (population) file's schema, read and checked, with its
//!   `[scheduler.slurm]` section and the slurm.conf importer ([`slurm`]) and the user models
//!   its groups name ([`models`]: the embedded default model and model directories), and its
//!   groups dealt over the site's Slurm tree's accounts ([`tree_accounts`]);
//! - [`replay`]: what a replay is made of ([`replay::ReplayOptions`]), with how its trace is
//!   read ([`trace::TraceOptions`]); [`replay_table`]: the `[replay]` table of a sweep, which
//!   the option tables fill too;
//! - [`machine`] and [`estimates`]: a replay's machine of nodes, memory-bandwidth demands and
//!   runtime-estimate model, resolved and checked (and drawn per job from the seed);
//! - [`choices`]: the named choices (processor selection, estimate model, warm-up, the sacct
//!   reader's), each parsed in one place from a file (serde) or a flag (`FromStr`);
//! - [`naming`]: options named by key in messages, said as flags, keywords or keys by the front
//!   end; [`ScenarioError`]: the errors of the scenario layer, built with [`invalid!`] and
//!   [`ensure!`];
//! - [`limits`] and [`files`]: the bounds of what a run may ask for and of every file read.
//!
//! No clap here: the binary turns its flags into these types, so a value is checked the same way
//! whether it came from a file or a flag.

pub mod accounting;
pub mod choices;
mod error;
pub mod estimates;
pub mod failures;
pub mod files;
pub mod limits;
pub mod machine;
pub mod models;
pub mod naming;
pub mod nodes;
pub mod options;
pub mod outages;
pub mod power;
pub mod replay;
pub mod replay_table;
pub mod site;
pub mod slurm;
pub mod trace;
pub mod tree_accounts;

pub use error::{Result, ScenarioError};

/// `n word` with the word in the plural unless n is 1: `1 week`, `26 weeks`.
pub fn count(n: impl Into<u64>, word: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}
