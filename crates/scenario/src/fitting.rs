//! The options of a fit (`sitesim fit`, `sitesim.fit`), checked in one place.

use config::{Result, ensure};
use fit::{FitOptions, SessionRules, Weighting};

/// The fit's options: think times up to `session_threshold` seconds continue a session, breaks
/// longer than `max_break` seconds are dropped, and `weighting` combines the traces. Errors
/// name the options by key (each front end says them its way).
pub fn fit_options(
    session_threshold: i64,
    max_break: i64,
    weighting: Weighting,
) -> Result<FitOptions> {
    ensure!(
        session_threshold > 0,
        "{} must be positive",
        config::naming::key("session_threshold")
    );
    ensure!(
        max_break > session_threshold,
        "{} ({max_break} s) must exceed {} ({session_threshold} s)",
        config::naming::key("max_break"),
        config::naming::key("session_threshold")
    );
    Ok(FitOptions {
        rules: SessionRules {
            session_threshold,
            max_break,
        },
        weighting,
    })
}
