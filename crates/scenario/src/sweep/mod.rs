//! Sweeps: a grid of runs over axes and seeds ([`plan`]): site runs over values of the
//! population file, or replays of traces over the replay options ([`replay_table`]); how each
//! run is carried out and where results are kept ([`runner`]); and the table of their measures
//! with confidence intervals and paired differences ([`results`]).

pub mod parts;
pub mod plan;
pub mod results;
pub mod runner;
