#!/usr/bin/env bash
# Every test, from nothing: set-up, Rust unit tests, the typed-stub check, strict typing of the
# package, the Python suite, and one smoke run of every benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

echo "== cargo test (Rust core, no Python)"
cargo test --release --quiet

echo "== generated record tables, methods and stub (scripts/generate_records.py --check)"
.venv/bin/python scripts/generate_records.py --check

echo "== stubtest (the .pyi against the compiled module)"
.venv/bin/python -m mypy.stubtest groupcoord._native --allowlist .stubtest-allowlist

echo "== mypy (the package, strict)"
.venv/bin/python -m mypy python/groupcoord

echo "== pytest"
.venv/bin/python -m pytest tests "$@"

echo "== benchmarks, smoke size"
GROUPCOORD_BENCH_SCALE=smoke .venv/bin/python -m pytest benches --benchmark-disable -q -p no:cacheprovider
