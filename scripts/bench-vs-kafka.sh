#!/usr/bin/env bash
# groupcoord against an Apache Kafka 4.3.1 broker at full size (benches/bench_vs_kafka.py): the
# request path (OffsetCommit, heartbeats, rebalances) and dump-log against DumpLogSegments, then
# the tables. Needs Java 17+ and Maven (the broker's jars are fetched once into
# benches/kafka/lib). Takes about 15 minutes on the 2-core development machine.
#
#   scripts/bench-vs-kafka.sh [OUT.json] [PYTEST ARGS]   e.g. -k commits; OUT defaults to
#                                                        .benchmarks/vs_kafka.json
#
# KAFKA_BENCH=data_vs_kafka runs benches/bench_data_vs_kafka.py and its report instead (what
# scripts/bench-data-vs-kafka.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."

bench=${KAFKA_BENCH:-vs_kafka}
out=${1:-.benchmarks/$bench.json}
shift || true
python=${PYTHON:-.venv/bin/python}
[ -x "$python" ] || scripts/setup.sh
mkdir -p "$(dirname "$out")"
GROUPCOORD_BENCH_SCALE=full "$python" -m pytest "benches/bench_$bench.py" -p no:cacheprovider -q \
    --benchmark-json="$out" "$@"
"$python" "benches/report_$bench.py" "$out"
