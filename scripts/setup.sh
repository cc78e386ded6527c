#!/usr/bin/env bash
# Create .venv, build the wheel (Rust core included) with maturin, install it with its test
# dependencies. Safe to re-run: it reuses the virtualenv and cargo's target directory.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet "maturin>=1.9,<2"

rm -rf dist
.venv/bin/maturin build --release --out dist
wheel=$(ls dist/groupcoord-*.whl)
.venv/bin/python -m pip install --quiet --force-reinstall --no-deps "$wheel"
.venv/bin/python -m pip install --quiet "${wheel}[test]"
.venv/bin/python -c "import groupcoord, groupcoord._native as n; print('groupcoord', groupcoord.__version__, 'installed from', n.__file__)"
