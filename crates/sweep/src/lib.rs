//! Sweeps: a grid of runs over axes and seeds ([`plan`]): site runs over values of the
//! population file, or replays of traces over the replay options (`config::replay_table`); how
//! each run is carried out and where results are kept ([`runner`], [`parts`]); and the table of
//! their measures with confidence intervals and paired differences ([`results`]). Every run goes
//! through the scenario layer's `Simulation`; results.csv is read back by `scenario::tables`.

pub mod parts;
pub mod plan;
pub mod results;
pub mod runner;
