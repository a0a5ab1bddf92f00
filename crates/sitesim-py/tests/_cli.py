"""What the Python tests share: where the checkout, the traces and the command line are, and how
to run the command line.

The command line is ``$SITESIM_BIN`` or the checkout's ``target/{release,debug}/sitesim``; the
traces are ``../shared/traces`` beside the checkout (``$SITESIM_TRACES`` overrides).
"""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TRACES = Path(os.environ.get("SITESIM_TRACES", ROOT.parent / "shared" / "traces"))
KTH = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"


def binary():
    """The sitesim binary to compare with (skips the test when there is none)."""
    explicit = os.environ.get("SITESIM_BIN")
    if explicit:
        return explicit
    for profile in ("release", "debug"):
        candidate = ROOT / "target" / profile / "sitesim"
        if candidate.exists():
            return str(candidate)
    pytest.skip("no sitesim binary: build it (cargo build -p sitesim) or set SITESIM_BIN")


def cli(*args, ok=True):
    """Runs the command line; returns the finished process (checked to succeed unless ok=False)."""
    done = subprocess.run([binary(), *map(str, args)], capture_output=True, text=True)
    if ok:
        assert done.returncode == 0, done.stderr
    return done
