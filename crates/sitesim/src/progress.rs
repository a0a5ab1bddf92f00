//! Feedback on long work: a progress bar of simulated days on a terminal, or, with `-vv`, a log
//! line at every tenth of the way. Nothing when stderr is not a terminal and `-vv` is not given.
//! The bar appears only once the work has taken half a second, so short runs stay quiet. A
//! command that runs several simulations one after the other (a run's fair start times, its
//! headroom's two) gets a bar for each, named after it ([`Tick::what`]).

use std::io::IsTerminal as _;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use scenario::progress::Tick;

const DAY: i64 = 86_400;
/// How long work runs before the bar appears.
const DELAY: Duration = Duration::from_millis(500);

/// Shows the progress of one simulation.
pub struct Progress {
    what: &'static str,
    started: Instant,
    bar: Option<ProgressBar>,
    /// Whether a bar may be drawn (stderr is a terminal and debug logs are off).
    draw: bool,
    /// Whether each tenth of the way is logged (`-vv`).
    log: bool,
    logged_tenths: i64,
}

impl Progress {
    /// Progress of `what` ("simulating", "replaying"); a tick of another simulation starts
    /// that one's bar.
    pub fn new(what: &'static str) -> Progress {
        let log = tracing::enabled!(tracing::Level::DEBUG);
        Progress {
            what,
            started: Instant::now(),
            bar: None,
            draw: std::io::stderr().is_terminal() && !log,
            log,
            logged_tenths: 0,
        }
    }

    /// The simulation reached `tick`.
    pub fn tick(&mut self, tick: Tick) {
        if tick.what != self.what {
            let next = Progress::new(tick.what);
            std::mem::replace(self, next).finish();
        }
        let end = tick.end.max(1);
        let now = tick.now.clamp(0, end);
        if self.log {
            let tenths = now * 10 / end;
            if tenths > self.logged_tenths {
                self.logged_tenths = tenths;
                tracing::debug!(
                    "{}: simulated day {} of {} ({} %), {:.1} s",
                    self.what,
                    now / DAY,
                    end / DAY,
                    tenths * 10,
                    self.started.elapsed().as_secs_f64()
                );
            }
        }
        if !self.draw {
            return;
        }
        if self.bar.is_none() && self.started.elapsed() >= DELAY {
            let bar = ProgressBar::with_draw_target(
                Some(((end + DAY - 1) / DAY) as u64),
                ProgressDrawTarget::stderr(),
            )
            .with_elapsed(self.started.elapsed());
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{} {{bar:30}} day {{pos}}/{{len}}, {{elapsed}} elapsed, ~{{eta}} left",
                    self.what
                ))
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position((now / DAY) as u64);
        }
    }

    /// The simulation ended: the bar goes away.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
        tracing::debug!(
            "{}: done in {:.1} s",
            self.what,
            self.started.elapsed().as_secs_f64()
        );
    }
}
