#!/usr/bin/env bash
# The main job. Until `groupcoord serve` exists it runs the purgatory benchmarks at full size
# and prints their table.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
exec .venv/bin/python -m pytest benches/bench_purgatory.py \
    --benchmark-group-by=group --benchmark-columns=min,median,mean,stddev,rounds "$@"
