"""Retention, DeleteRecords and compaction of data topics on ``groupcoord serve``, with real
clients: a topic under a short ``retention.ms`` (the broker's default) losing its old segments
while a consumer keeps reading from the log start; DeleteRecords from kafka-python's and
confluent-kafka's admin clients and Kafka's ``kafka-delete-records`` tool, the log start kept
across a restart; a compacted topic (created with its own configs) keeping the latest value
per key across a restart and a SIGKILL."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import TopicPartition as ConfluentPartition
from confluent_kafka.admin import AdminClient
from data_servers import KAFKA_TOOL_TIMEOUT_S, kafka_tool
from groupcoord.errors import Errors
from groupcoord.protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteRecordsTopic,
)
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import KafkaError
from server_process import ServerProcess, wait_for
from wire_support import connect, exchange

pytestmark = [pytest.mark.timeout(180), pytest.mark.clients]

RETENTION_MS = 4000
RETENTION_SETTINGS = {
    "log.retention.ms": str(RETENTION_MS),
    "log.retention.check.interval.ms": "200",
    "log.roll.ms": "10000",
    "log.segment.delete.delay.ms": "0",
}
COMPACTED_TOPIC_CONFIGS = {
    "cleanup.policy": "compact",
    "segment.ms": "1000",
    "min.cleanable.dirty.ratio": "0.01",
}
"""The compacted topic's own configs, given to CreateTopics."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("retention") / "data",
                            topics=["retained:1", "trimmed:1", "trimmed-java:1", "trimmed-wire:1"], settings=RETENTION_SETTINGS)
    process.start()
    yield process
    assert process.stop() == 0


def produce(bootstrap: str, topic: str, values: list[bytes], *, timestamp_ms: int | None = None,
            keys: list[bytes] | None = None) -> None:
    """One batch per record (flushed each), so that a fetch of a few bytes returns one."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
    try:
        for i, value in enumerate(values):
            key = keys[i] if keys is not None else None
            producer.send(topic, value=value, key=key, partition=0, timestamp_ms=timestamp_ms).get(timeout=30)
    finally:
        producer.close()


def log_start(bootstrap: str, topic: str) -> int:
    """ListOffsets earliest."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tp = TopicPartition(topic, 0)
        return int(consumer.beginning_offsets([tp])[tp])
    finally:
        consumer.close()


def segment_bases(server: ServerProcess, topic: str) -> list[int]:
    return sorted(int(p.name[:20]) for p in (server.data_dir / f"{topic}-0").glob("*.log"))


def test_old_segments_go_while_a_consumer_keeps_reading_from_the_log_start(server: ServerProcess) -> None:
    produce(server.bootstrap, "retained", [b"old-%d" % i for i in range(50)])
    consumer = KafkaConsumer(bootstrap_servers=server.bootstrap, auto_offset_reset="earliest",
                             enable_auto_commit=False, max_poll_records=1, max_partition_fetch_bytes=1,
                             fetch_max_wait_ms=100)
    tp = TopicPartition("retained", 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    read: list[int] = []
    try:
        while len(read) < 10:
            read += [r.offset for r in consumer.poll(timeout_ms=1000).get(tp, [])]
        # Newer records, stamped 30 s ahead: a segment of their own (log.roll.ms is 10 s)
        # that retention keeps while the old one goes.
        produce(server.bootstrap, "retained", [b"new-%d" % i for i in range(50)],
                timestamp_ms=int(time.time() * 1000) + 30_000)
        wait_for(lambda: log_start(server.bootstrap, "retained") == 50, 20, "retention to move the log start")
        assert segment_bases(server, "retained") == [50]
        # The consumer's next fetch is out of range; it resets to the log start and goes on.
        deadline = time.monotonic() + 30
        while (not read or read[-1] != 99) and time.monotonic() < deadline:
            read += [r.offset for r in consumer.poll(timeout_ms=1000).get(tp, [])]
    finally:
        consumer.close()
    jump = read.index(50)
    assert read[:jump] == list(range(jump)) and jump >= 10
    assert read[jump:] == list(range(50, 100))


def test_a_retention_ms_changed_at_run_time_applies_at_the_next_check(server: ServerProcess) -> None:
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)
    try:
        admin.create_topics([NewTopic("kept", 1, 1, topic_configs={"retention.ms": "-1"}),
                             NewTopic("expiring", 1, 1)])
        hour_ago = int(time.time() * 1000) - 3_600_000
        for topic in ("kept", "expiring"):
            produce(server.bootstrap, topic, [b"k-%d" % i for i in range(10)], timestamp_ms=hour_ago)
        # The broker's retention.ms removes the twin's records; the topic's own keeps them all.
        wait_for(lambda: log_start(server.bootstrap, "expiring") == 10, 20, "the broker's retention.ms to apply")
        assert log_start(server.bootstrap, "kept") == 0
        admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "kept", configs={"retention.ms": "60000"})])
        # The active segment goes too: rolled first, the log start is then the log end.
        wait_for(lambda: log_start(server.bootstrap, "kept") == 10, 20, "the new retention.ms to apply")
        assert segment_bases(server, "kept") == [10]
    finally:
        admin.close()


def test_delete_records_from_the_admin_clients_moves_the_log_start_durably(server: ServerProcess) -> None:
    produce(server.bootstrap, "trimmed", [b"r-%d" % i for i in range(30)],
            timestamp_ms=int(time.time() * 1000) + 600_000)
    tp = TopicPartition("trimmed", 0)
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)
    try:
        result = admin.delete_records({tp: 10})
        assert result[tp]["low_watermark"] == 10
        assert log_start(server.bootstrap, "trimmed") == 10
        with pytest.raises(KafkaError, match="OffsetOutOfRange"):
            admin.delete_records({tp: 31})
        # __consumer_offsets is refused as Kafka refuses it.
        with pytest.raises(KafkaError, match="InvalidTopic"):
            admin.delete_records({TopicPartition("__consumer_offsets", 0): 0})
    finally:
        admin.close()

    confluent = AdminClient({"bootstrap.servers": server.bootstrap})
    futures = confluent.delete_records([ConfluentPartition("trimmed", 0, -1)], request_timeout=30)
    deleted = futures[ConfluentPartition("trimmed", 0, -1)].result(timeout=30)
    assert deleted.low_watermark == 30  # -1: the high watermark

    # A fetch below the log start is out of range: an "earliest" consumer restarts there.
    produce(server.bootstrap, "trimmed", [b"after"], timestamp_ms=int(time.time() * 1000) + 600_000)
    consumer = KafkaConsumer(bootstrap_servers=server.bootstrap, auto_offset_reset="earliest",
                             enable_auto_commit=False)
    try:
        consumer.assign([tp])
        consumer.seek(tp, 5)
        records = wait_for(lambda: consumer.poll(timeout_ms=500).get(tp), 20, "a record after the reset")
        assert [(r.offset, r.value) for r in records] == [(30, b"after")]
    finally:
        consumer.close()

    # The log start offset lies inside a segment: it is kept across a restart by its checkpoint.
    assert server.stop() == 0
    assert "trimmed 0 30" in (server.data_dir / "log-start-offset-checkpoint").read_text()
    server.start(port=server.port)
    assert log_start(server.bootstrap, "trimmed") == 30


@pytest.mark.java
def test_kafkas_delete_records_tool(server: ServerProcess, tmp_path: Path) -> None:
    produce(server.bootstrap, "trimmed-java", [b"j-%d" % i for i in range(20)],
            timestamp_ms=int(time.time() * 1000) + 600_000)
    offsets = tmp_path / "offsets.json"
    offsets.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "trimmed-java", "partition": 0, "offset": 12},
    ]}))
    done = subprocess.run(
        kafka_tool("org.apache.kafka.tools.DeleteRecordsCommand", "--bootstrap-server", server.bootstrap,
                   "--offset-json-file", str(offsets)),
        capture_output=True, text=True, timeout=KAFKA_TOOL_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr
    assert "partition: trimmed-java-0\tlow_watermark: 12" in done.stdout
    assert log_start(server.bootstrap, "trimmed-java") == 12


def test_delete_records_on_the_wire_at_every_version(server: ServerProcess) -> None:
    produce(server.bootstrap, "trimmed-wire", [b"w-%d" % i for i in range(5)],
            timestamp_ms=int(time.time() * 1000) + 600_000)
    with connect(server) as sock:
        for version in (0, 1, 2):
            request = DeleteRecordsRequest(topics=[
                DeleteRecordsTopic(name="trimmed-wire", partitions=[
                    DeleteRecordsPartition(partition_index=0, offset=version + 1),
                    DeleteRecordsPartition(partition_index=1, offset=0),
                ]),
                DeleteRecordsTopic(name="never-created", partitions=[
                    DeleteRecordsPartition(partition_index=0, offset=0),
                ]),
            ], timeout_ms=0 if version == 1 else 30_000)
            answer = exchange(sock, request, DeleteRecordsResponse, version)
            assert [(t.name, p.partition_index, p.error_code, p.low_watermark)
                    for t in answer.topics for p in t.partitions] == [
                ("trimmed-wire", 0, Errors.NONE, version + 1),
                ("trimmed-wire", 1, Errors.UNKNOWN_TOPIC_OR_PARTITION, -1),
                ("never-created", 0, Errors.UNKNOWN_TOPIC_OR_PARTITION, -1),
            ]
    assert log_start(server.bootstrap, "trimmed-wire") == 3


def read_all(bootstrap: str, topic: str, end: int) -> list[tuple[int, bytes, bytes | None]]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    found: list[tuple[int, bytes, bytes | None]] = []
    try:
        deadline = time.monotonic() + 30
        while consumer.position(tp) < end and time.monotonic() < deadline:
            for r in consumer.poll(timeout_ms=500).get(tp, []):
                found.append((r.offset, r.key, r.value))
    finally:
        consumer.close()
    return found


def latest_per_key(records: list[tuple[int, bytes, bytes | None]]) -> dict[bytes, bytes | None]:
    latest: dict[bytes, bytes | None] = {}
    for _, key, value in records:
        latest[key] = value
    return latest


def test_a_compacted_topic_keeps_the_latest_value_per_key_across_restart_and_sigkill(
    tmp_path: Path,
) -> None:
    server = ServerProcess(tmp_path / "data", settings={"log.cleaner.backoff.ms": "100"}).start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)
        try:
            admin.create_topics([NewTopic("keyed", 1, 1, topic_configs=COMPACTED_TOPIC_CONFIGS)])
        finally:
            admin.close()
        start = int(time.time() * 1000)
        # Ten rounds of the same ten keys, each round a segment of its own (its timestamps 2 s
        # past the round before, the topic's segment.ms is 1 s); key-9 deleted in round 8.
        for round_ in range(10):
            keys = [b"key-%d" % k for k in range(10)]
            values: list[bytes] = [b"round-%d" % round_] * 10
            produce(server.bootstrap, "keyed", values, keys=keys, timestamp_ms=start + 2000 * round_)
        produce(server.bootstrap, "keyed", [None], keys=[b"key-9"], timestamp_ms=start + 2000 * 8 + 1)  # type: ignore[list-item]
        end = 101
        expected = {b"key-%d" % k: b"round-9" for k in range(9)} | {b"key-9": None}
        # The last round's segment is active (never cleaned); the rounds before keep one
        # record per key, the tombstone among them.
        wait_for(lambda: len(read_all(server.bootstrap, "keyed", end)) <= 21, 60, "the cleaner to compact")
        compacted = read_all(server.bootstrap, "keyed", end)
        assert latest_per_key(compacted) == expected
        assert server.stop() == 0
        server.start(port=server.port)
        assert read_all(server.bootstrap, "keyed", end) == compacted
        server.kill()
        server.start(port=server.port)
        assert latest_per_key(read_all(server.bootstrap, "keyed", end)) == expected
    finally:
        server.stop()
