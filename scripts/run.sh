#!/usr/bin/env bash
# The main job. Until `groupcoord serve` exists it runs the purgatory benchmarks at full size
# and prints their table (benches/report.py) from the JSON it saves under .benchmarks/.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
mkdir -p .benchmarks
json=.benchmarks/purgatory-$(date -u +%Y%m%dT%H%M%SZ).json
.venv/bin/python -m pytest benches/bench_purgatory.py -p no:cacheprovider \
    --benchmark-group-by=group --benchmark-columns=min,median,iqr,mean,stddev,rounds \
    --benchmark-json="$json" "$@"
echo
echo "Purgatory benchmarks ($json), net of the noop driver:"
.venv/bin/python benches/report.py "$json"
