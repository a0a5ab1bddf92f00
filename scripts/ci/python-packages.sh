#!/usr/bin/env bash
# The Python package's source distribution built from itself: `maturin sdist`, then, in a clean
# folder and a fresh virtual environment, `pip install` of the sdist alone (no checkout in
# reach) and the smoke test (scripts/python-smoke.py) run from there.
#
#   scripts/ci/python-packages.sh MATURIN WORKDIR [WHEEL]
#
# MATURIN is a maturin executable; WORKDIR an empty scratch folder. With WHEEL, that wheel is
# also installed into a fresh virtual environment and smoke-tested, and its platform tag must be
# manylinux2014 (glibc 2.17). The sdist is compiled with the dev profile
# (MATURIN_PEP517_ARGS), into $CARGO_TARGET_DIR when it is set, so that it reuses the
# dependencies CI's other builds compiled; a user's `pip install` compiles it with --release.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
maturin="${1:?usage: python-packages.sh MATURIN WORKDIR [WHEEL]}"
work="${2:?usage: python-packages.sh MATURIN WORKDIR [WHEEL]}"
wheel="${3:-}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
smoke="$work/python-smoke.py"
cp "$here/scripts/python-smoke.py" "$smoke"

if [ -n "$wheel" ]; then
    case "$(basename "$wheel")" in
        *manylinux_2_17_x86_64*) ;;
        *) echo "$(basename "$wheel"): not a manylinux2014 (glibc 2.17) wheel" >&2; exit 1 ;;
    esac
    python3 -m venv "$work/wheel-venv"
    "$work/wheel-venv/bin/python" -m pip install -q "$wheel"
    (cd "$work" && "$work/wheel-venv/bin/python" "$smoke")
fi

"$maturin" sdist -m "$here/crates/sitesim-py/Cargo.toml" --out "$work/dist"
sdist="$(ls "$work"/dist/sitesim-*.tar.gz)"
echo "built $(basename "$sdist")"
mkdir "$work/clean"
cp "$sdist" "$work/clean/"
python3 -m venv "$work/sdist-venv"
(cd "$work/clean" &&
    MATURIN_PEP517_ARGS="--profile dev" "$work/sdist-venv/bin/python" -m pip install -q ./"$(basename "$sdist")" &&
    "$work/sdist-venv/bin/python" "$smoke")
