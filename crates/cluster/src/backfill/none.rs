//! No backfilling: plain FCFS (or any queue order) that stops at the first job that does not
//! fit.

use super::{Backfill, Pass};

/// Start jobs strictly in queue order; stop at the first that does not fit.
#[derive(Debug, Clone, Default)]
pub struct NoBackfill;

impl Backfill for NoBackfill {
    fn name(&self) -> &'static str {
        "none"
    }

    fn schedules_extra(&self) -> bool {
        true
    }

    fn schedule(&mut self, pass: &mut Pass<'_>) {
        if pass.nothing_can_start() {
            return;
        }
        pass.sort_queue();
        pass.start_head();
    }

    fn skips_started_positions(&self) -> bool {
        true
    }

    fn searches_in_order(&self) -> bool {
        true
    }
}
