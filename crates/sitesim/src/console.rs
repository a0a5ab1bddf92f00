//! Output for the person at the terminal. `println!` panics when stdout is closed early (as in
//! `sitesim run --out OUT | head`); here a closed pipe is ignored, so the command still writes its
//! files and exits normally, and any other write error is reported as an error.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// `-q`: nothing goes to stdout.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Makes [`say`] print nothing (`-q`).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Writes `text` to stdout (nothing with `-q`).
pub fn say(text: &str) -> anyhow::Result<()> {
    if QUIET.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(anyhow::anyhow!("cannot write to stdout: {e}"))
        }
        _ => Ok(()),
    }
}

/// `say!("...", args)`: like `println!`, through [`say`]; evaluates to its `Result`.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::console::say(&format!("{}\n", format_args!($($arg)*)))
    };
}
