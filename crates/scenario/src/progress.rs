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

/// What follows a simulation: receives [`Tick`]s, and may ask the simulation to stop (Ctrl-C
/// in a notebook). Any `FnMut(Tick)` is one that never asks.
pub trait Progress {
    /// The simulation reached `tick`.
    fn tick(&mut self, tick: Tick);
    /// Whether the simulation should stop now (asked every
    /// [`engine::STOP_CHECK_PASSES`] scheduling passes); it then fails with
    /// `EngineError::Stopped`.
    fn stop_requested(&self) -> bool {
        false
    }
}

impl<F: FnMut(Tick)> Progress for F {
    fn tick(&mut self, tick: Tick) {
        self(tick);
    }
}

/// A progress that shows nothing and stops when its flag is set (a sweep's runs, stopped
/// together).
#[derive(Debug, Clone, Copy)]
pub struct StopFlag<'a>(pub &'a std::sync::atomic::AtomicBool);

impl Progress for StopFlag<'_> {
    fn tick(&mut self, _tick: Tick) {}
    fn stop_requested(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Where a simulation's [`Tick`]s go.
pub type ProgressFn<'a> = &'a mut dyn Progress;

/// An observer that reports every [`Ticker::EVERY`] passes to a [`ProgressFn`].
pub(crate) struct Ticker<'a, 'b> {
    report: &'a mut (dyn Progress + 'b),
    what: &'static str,
    end: Time,
    /// Where the end is updated while the trace is still read (a streamed replay).
    latest: Option<&'a std::sync::atomic::AtomicI64>,
    passes: u32,
}

impl<'a, 'b> Ticker<'a, 'b> {
    /// Passes between two reports.
    pub const EVERY: u32 = 4096;

    pub(crate) fn new(report: &'a mut (dyn Progress + 'b), what: &'static str, end: Time) -> Self {
        report.tick(Tick { what, now: 0, end });
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
        report: &'a mut (dyn Progress + 'b),
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
        self.report.tick(Tick { what, now: 0, end });
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
            self.report.tick(Tick {
                what: self.what,
                now,
                end: self.end,
            });
        }
    }

    fn stop_requested(&self) -> bool {
        self.report.stop_requested()
    }
}

/// A callback that ignores every tick.
pub fn quiet(_: Tick) {}
