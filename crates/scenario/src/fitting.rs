//! The options of a fit (`sitesim fit`, `sitesim.fit`), checked in one place.

use fit::{FitOptions, SessionRules, Weighting};

use crate::error::{Result, ensure};

/// The fit's options: think times up to `session_threshold` seconds continue a session, breaks
/// longer than `max_break` seconds are dropped, and `weighting` combines the traces. Errors
/// name the command line's flags.
pub fn fit_options(
    session_threshold: i64,
    max_break: i64,
    weighting: Weighting,
) -> Result<FitOptions> {
    ensure!(
        session_threshold > 0,
        "--session-threshold must be positive"
    );
    ensure!(
        max_break > session_threshold,
        "--max-break ({max_break} s) must exceed --session-threshold ({session_threshold} s)"
    );
    Ok(FitOptions {
        rules: SessionRules {
            session_threshold,
            max_break,
        },
        weighting,
    })
}
