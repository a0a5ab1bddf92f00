//! A clean exit while other threads simulate (issue 41). Python before 3.14 ends a thread that
//! takes the GIL once the interpreter is finalizing with `pthread_exit`, whose forced unwinding
//! runs through this module's Rust frames up to PyO3's `catch_unwind`, which cannot stop it:
//! the process aborts ("FATAL: exception not rethrown") when the thread gets there before the
//! process has ended. A simulation in another thread (a replay calling a Python order, a
//! progress callback, the end of any call that released the GIL) takes the GIL again and
//! again, so Ctrl-C or the end of the main script could abort the interpreter.
//!
//! So, as Python 3.14 does, such a thread hangs instead: an `atexit` hook (registered when the module is imported; atexit runs after the
//! non-daemon threads were joined and before the interpreter is marked finalizing) sets
//! [`FINALIZING`], and every thread that is about to take the GIL through [`attach`] or at the
//! end of [`detach`] parks for good once it is set. The process ends soon after, taking the
//! parked threads with it. The hook then releases the GIL until no thread is between its check
//! and the GIL (a count, [`PENDING`]), so none is left waiting for the GIL when finalizing
//! starts. The thread that runs the hook (the main thread) is never parked.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// Set by the `atexit` hook: threads about to take the GIL park instead.
static FINALIZING: AtomicBool = AtomicBool::new(false);
/// Threads that passed the check in [`enter`] and have not let go of the GIL yet.
static PENDING: AtomicUsize = AtomicUsize::new(0);
/// The thread that ran the hook (it finalizes the interpreter, so it is never parked).
static FINALIZER: OnceLock<ThreadId> = OnceLock::new();

/// The longest the hook waits for threads between their check and the GIL. They wait for the
/// GIL the hook releases, so they are through in a switch interval (5 ms); the bound only
/// keeps a callback that never returns from holding up the exit.
const DRAIN: Duration = Duration::from_secs(2);

/// The `atexit` hook: from now on, threads other than this one park instead of taking the GIL.
#[pyfunction]
pub fn _finalizing(py: Python<'_>) {
    let _ = FINALIZER.set(std::thread::current().id());
    FINALIZING.store(true, Ordering::SeqCst);
    let start = Instant::now();
    while PENDING.load(Ordering::SeqCst) > 0 && start.elapsed() < DRAIN {
        py.detach(|| std::thread::sleep(Duration::from_millis(1)));
    }
}

/// A thread's pass to take the GIL: held until it let go of it again.
pub struct Pass(());

impl Drop for Pass {
    fn drop(&mut self) {
        PENDING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Called by a thread about to take the GIL: a pass, or, once the interpreter is finalizing,
/// never returns (the thread parks until the process ends). `SeqCst` on both sides: either the
/// hook sees this thread's count, or this thread sees the hook's flag.
fn enter() -> Pass {
    PENDING.fetch_add(1, Ordering::SeqCst);
    if FINALIZING.load(Ordering::SeqCst) && FINALIZER.get() != Some(&std::thread::current().id()) {
        PENDING.fetch_sub(1, Ordering::SeqCst);
        loop {
            std::thread::park();
        }
    }
    Pass(())
}

/// [`Python::attach`] from a thread that may not hold the GIL (a simulation thread calling
/// back into Python), parking instead once the interpreter is finalizing.
pub fn attach<R>(f: impl FnOnce(Python<'_>) -> R) -> R {
    let _pass = enter();
    Python::attach(f)
}

/// [`Python::detach`]: runs `f` without the GIL and takes it again, parking instead once the
/// interpreter is finalizing.
pub fn detach<T, F>(py: Python<'_>, f: F) -> T
where
    F: Send + FnOnce() -> T,
    T: Send,
{
    let (out, pass) = py.detach(|| {
        let out = f();
        (out, enter())
    });
    drop(pass);
    out
}
