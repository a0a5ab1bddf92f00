//! Progress of a long simulation, for a front end to show (the binary's progress bar). The
//! engine calls an [`engine::Observer`] at every scheduling pass; [`Ticker`] counts passes and
//! calls the front end's callback every [`Ticker::EVERY`] of them, with the simulated time, so
//! the cost per pass is one counter increment.

use engine::Observer;
use simtime::Time;

/// How far a simulation has come: `now` simulated seconds of about `end` (the horizon of a
/// site run, the last arrival of a replay; a run goes on past it until its jobs end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tick {
    /// Simulated seconds so far.
    pub now: Time,
    /// Simulated seconds the run is expected to take (the last submission).
    pub end: Time,
}

/// A callback that receives [`Tick`]s.
pub type ProgressFn<'a> = &'a mut dyn FnMut(Tick);

/// An observer that reports every [`Ticker::EVERY`] passes to a [`ProgressFn`].
pub(crate) struct Ticker<'a, 'b> {
    report: &'a mut (dyn FnMut(Tick) + 'b),
    end: Time,
    passes: u32,
}

impl<'a, 'b> Ticker<'a, 'b> {
    /// Passes between two reports.
    pub const EVERY: u32 = 4096;

    pub(crate) fn new(report: &'a mut (dyn FnMut(Tick) + 'b), end: Time) -> Self {
        report(Tick { now: 0, end });
        Ticker {
            report,
            end,
            passes: 0,
        }
    }
}

impl Observer for Ticker<'_, '_> {
    fn after_pass(&mut self, now: Time, _cluster: &cluster::Cluster) {
        self.passes += 1;
        if self.passes == Self::EVERY {
            self.passes = 0;
            (self.report)(Tick { now, end: self.end });
        }
    }
}

/// A callback that ignores every tick.
pub fn quiet(_: Tick) {}
