#!/usr/bin/env bash
# The main job: set up (venv, release wheel, dependencies), then serve Kafka clients on
# 127.0.0.1:9092 with the data directory ./groupcoord-data until SIGTERM or Ctrl-C. Extra
# arguments go to `groupcoord serve` (e.g. --topic orders:12 --metrics-port 9093).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
exec .venv/bin/groupcoord serve --host 127.0.0.1 --port 9092 --data-dir ./groupcoord-data "$@"
