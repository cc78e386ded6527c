#!/usr/bin/env bash
# Every test, from nothing: set-up, Rust unit tests, the typed-stub check, strict typing of the
# package, the Python suite, and one smoke run of every benchmark. CI runs this as it is.
#
#   scripts/test.sh                  everything (CI)
#   scripts/test.sh --fast           the local loop: a quick incremental build installed in
#                                    editable mode, and every test but those marked slow,
#                                    java, spark or clients; no benchmarks
#   scripts/test.sh [--fast] ARGS    ARGS go to pytest (e.g. -k offset_commit, tests/coordinator)
set -euo pipefail
cd "$(dirname "$0")/.."

fast=false
if [ "${1:-}" = "--fast" ]; then
    fast=true
    shift
fi

if $fast; then
    [ -x .venv/bin/python ] || scripts/setup.sh
    echo "== build (dev-release profile, editable install)"
    VIRTUAL_ENV=$PWD/.venv .venv/bin/maturin develop --profile dev-release --quiet
    echo "== cargo test (Rust core, no Python)"
    cargo test --profile dev-release --quiet
else
    scripts/setup.sh
    echo "== cargo test (Rust core, no Python)"
    cargo test --release --quiet
fi

echo "== generated record tables, methods and stub (scripts/generate_records.py --check)"
.venv/bin/python scripts/generate_records.py --check

echo "== stubtest (the .pyi against the compiled module)"
.venv/bin/python -m mypy.stubtest groupcoord._native --allowlist .stubtest-allowlist

echo "== mypy (the package, strict)"
.venv/bin/python -m mypy python/groupcoord

if $fast; then
    echo "== pytest (fast tier: not slow, java, spark or clients)"
    .venv/bin/python -m pytest tests -m "not (slow or java or spark or clients)" --durations=15 "$@"
    exit 0
fi

echo "== pytest"
.venv/bin/python -m pytest tests --durations=30 "$@"

echo "== benchmarks, smoke size"
GROUPCOORD_BENCH_SCALE=smoke .venv/bin/python -m pytest benches --benchmark-disable -q -p no:cacheprovider
