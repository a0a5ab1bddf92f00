//! Progress of a long simulation, for a front end to show (the binary's progress bar). The
//! engine calls an [`engine::Observer`] at every scheduling pass; `Ticker` counts passes and
//! calls the front end's callback with the simulated time every `Ticker::REPORT_PASSES` of
//! them, or sooner once `Ticker::INTERVAL` of wall-clock time has passed (a slow scheduler:
//! the report is where Python notices Ctrl-C), looking at the clock every `Ticker::EVERY`
//! passes, so the cost per pass is a counter increment and a sixteenth of a clock read.

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
    /// `STOP_CHECK_PASSES` scheduling passes, a constant of the engine); it then fails with
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

/// An observer that reports to a [`ProgressFn`] every [`Ticker::REPORT_PASSES`] passes, and
/// between them whenever [`Ticker::INTERVAL`] of wall-clock time has passed since the last
/// report (looking at the clock every [`Ticker::EVERY`] passes).
pub(crate) struct Ticker<'a, 'b> {
    report: &'a mut (dyn Progress + 'b),
    what: &'static str,
    end: Time,
    /// Where the end is updated while the trace is still read (a streamed replay).
    latest: Option<&'a std::sync::atomic::AtomicI64>,
    passes: u32,
    /// Passes since the last report.
    since_report: u32,
    /// When the last report was made.
    last: std::time::Instant,
}

impl<'a, 'b> Ticker<'a, 'b> {
    /// Passes between two looks at the clock. A report is also where a front end notices
    /// Ctrl-C, so a pass count alone would let an interrupt wait as long as that many passes
    /// take (1024 passes of conservative backfilling at 1,000 users took about 0.45 s; the
    /// reports came every 4096).
    pub const EVERY: u32 = 16;

    /// The least wall-clock time between two reports (each costs about a microsecond in
    /// Python, which takes the interpreter's lock to look for Ctrl-C).
    pub const INTERVAL: std::time::Duration = std::time::Duration::from_millis(50);

    /// Passes between two reports however fast they go, so that a short run still reports
    /// its progress (the `-vv` log's lines).
    pub const REPORT_PASSES: u32 = 4096;

    pub(crate) fn new(report: &'a mut (dyn Progress + 'b), what: &'static str, end: Time) -> Self {
        report.tick(Tick { what, now: 0, end });
        Ticker {
            report,
            what,
            end,
            latest: None,
            passes: 0,
            since_report: 0,
            last: std::time::Instant::now(),
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
        self.since_report = 0;
        self.report.tick(Tick { what, now: 0, end });
    }
}

impl Observer for Ticker<'_, '_> {
    fn after_pass(&mut self, now: Time, _cluster: &cluster::Cluster) {
        self.passes += 1;
        if self.passes == Self::EVERY {
            self.passes = 0;
            self.since_report += Self::EVERY;
            if self.since_report < Self::REPORT_PASSES && self.last.elapsed() < Self::INTERVAL {
                return;
            }
            self.since_report = 0;
            self.last = std::time::Instant::now();
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
