#!/usr/bin/env bash
# groupcoord's data plane against an Apache Kafka 4.3.1 broker at full size
# (benches/bench_data_vs_kafka.py): produce throughput (acks=1 and -1, 100 B and 1 KiB records,
# batched and one record a request), consume throughput from the start of a 1 GiB topic,
# produce-to-consume latency, server CPU per GB and memory, with Kafka's own perf tools as the
# client of both; then the tables. Needs Java 17+ and Maven (the jars are fetched once into
# benches/kafka/lib) and about 10 GB free under the temporary directory. About 15 minutes.
#
#   scripts/bench-data-vs-kafka.sh [OUT.json] [PYTEST ARGS]   e.g. -k consume; OUT defaults to
#                                                             .benchmarks/data_vs_kafka.json
#   GROUPCOORD_DATA_BENCH_SERVERS=kafka scripts/bench-data-vs-kafka.sh   one server alone
KAFKA_BENCH=data_vs_kafka exec "$(dirname "$0")/bench-vs-kafka.sh" "$@"
