//! The figures of sitesim, drawn with plotters (the only crate that draws), each written as PNG
//! (at a chosen resolution), SVG and PDF with the tidy CSV of the points it draws beside them
//! ([`output`]); every series has its own colour, marker, dashes and hatch, so figures read in
//! greyscale:
//!
//! - [`draw_sweep_figures`]: a sweep's results table ([`scenario::tables::ResultsTable`]), laid
//!   out like the paper's Figs. 10-13, or chosen measures against an axis ([`sweep`]);
//! - [`draw_run_figures`]: one run or replay from its jobs, machine and placements
//!   ([`scenario::tables::JobRow`], [`scenario::tables::RunSummary`],
//!   [`scenario::tables::Placement`]): utilization, queue, a Gantt chart and the wait and
//!   response distributions ([`run`]);
//! - [`draw_fit_figures`]: the fitted user models ([`fit::Fit`](::fit::Fit)), like the paper's section III
//!   ([`fit`](mod@fit)).
//!
//! Each takes typed tables and plain options and returns the files it wrote; it prints nothing.
//! The tables are read by `scenario::tables`; the chart primitives (lines with bands or error
//! bars, grouped bars, series styles, the embedded font) are private to this crate.

mod chart;
mod error;
pub mod fit;
pub mod output;
pub mod run;
mod style;
pub mod sweep;

pub use error::PlotError;
pub use fit::{FitFigureOptions, draw_fit_figures};
pub use run::{RunFigureOptions, draw_run_figures};
pub use sweep::{SweepFigureOptions, SweepFigures, draw_sweep_figures, find_measure};
