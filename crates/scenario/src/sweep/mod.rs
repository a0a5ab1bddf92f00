//! Sweeps: a grid of site runs over axes of site-file values and seeds ([`plan`]), and the
//! table of their measures with confidence intervals and paired differences ([`results`]).

pub mod plan;
pub mod results;
