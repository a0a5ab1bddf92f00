//! Progress of a long simulation, for a front end to show (the binary's progress bar). The
//! engine calls an [`engine::Observer`] at every scheduling pass; [`Ticker`] counts passes and
//! calls the front end's callback every [`Ticker::EVERY`] of them, with the simulated time, so
//! the cost per pass is one counter increment.

use engine::Observer;
use simtime::Time;

/// How far a simulation has come: `now` simulated seconds of about `end` (the horizon of a
/// site run, the last arrival of a replay; a run goes on past it until its jobs end), in the
/// simulation called `what` (a command may run several one after the other: the run, its fair
/// start times, its headroom's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tick {
    /// Which simulation: `simulating`, `replaying`, `fair start times`, `headroom: ...`.
    pub what: &'static str,
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
    what: &'static str,
    end: Time,
    /// Where the end is updated while the trace is still read (a streamed replay).
    latest: Option<&'a std::sync::atomic::AtomicI64>,
    passes: u32,
}

impl<'a, 'b> Ticker<'a, 'b> {
    /// Passes between two reports.
    pub const EVERY: u32 = 4096;

    pub(crate) fn new(
        report: &'a mut (dyn FnMut(Tick) + 'b),
        what: &'static str,
        end: Time,
    ) -> Self {
        report(Tick { what, now: 0, end });
        Ticker {
            report,
            what,
            end,
            latest: None,
            passes: 0,
        }
    }

    /// A ticker whose end is the latest submit time in `latest` at each report (a replay that
    /// simulates while its trace is read).
    pub(crate) fn following(
        report: &'a mut (dyn FnMut(Tick) + 'b),
        what: &'static str,
        latest: &'a std::sync::atomic::AtomicI64,
    ) -> Self {
        let mut ticker = Ticker::new(report, what, 0);
        ticker.latest = Some(latest);
        ticker
    }

    /// Reports from now on for another simulation, `what`, of about `end` simulated seconds.
    pub(crate) fn restart(&mut self, what: &'static str, end: Time) {
        self.what = what;
        self.end = end;
        self.latest = None;
        self.passes = 0;
        (self.report)(Tick { what, now: 0, end });
    }
}

impl Observer for Ticker<'_, '_> {
    fn after_pass(&mut self, now: Time, _cluster: &cluster::Cluster) {
        self.passes += 1;
        if self.passes == Self::EVERY {
            self.passes = 0;
            if let Some(latest) = self.latest {
                self.end = latest.load(std::sync::atomic::Ordering::Relaxed);
            }
            (self.report)(Tick {
                what: self.what,
                now,
                end: self.end,
            });
        }
    }
}

/// A callback that ignores every tick.
pub fn quiet(_: Tick) {}
