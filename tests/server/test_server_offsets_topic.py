"""``__consumer_offsets`` read like any topic from ``groupcoord serve``: Kafka's console consumer
with its offsets formatter, a kafka-python consumer assigned to its partitions (the records'
bytes decoded by the Rust codec), ListOffsets, Metadata's internal topic, a Fetch waiting for a
commit, and the partitions this node does not own."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.request import Request as HttpRequest
from urllib.request import urlopen

import pytest
from data_servers import KAFKA_TOOL_TIMEOUT_S, kafka_tool
from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition
from server_process import TEST_SETTINGS, ServerProcess
from wire_support import connect, exchange

from groupcoord.errors import Errors
from groupcoord.format import codec
from groupcoord.protocol.messages.fetch import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
)
from groupcoord.protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
)
from groupcoord.protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
)
from groupcoord.protocol.primitives import ZERO_UUID

pytestmark = [pytest.mark.timeout(180), pytest.mark.clients]

OFFSETS = "__consumer_offsets"
TOPIC = "orders"
PARTITIONS = int(TEST_SETTINGS["offsets.topic.num.partitions"])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("offsets-topic") / "data", topics=[f"{TOPIC}:2"]).start()
    try:
        yield process
    finally:
        code = process.stop()
    assert code == 0 and "Traceback" not in process.log(), process.log()


def commit(bootstrap: str, group: str, offsets: dict[int, int], metadata: str = "") -> None:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(o, metadata, -1) for p, o in offsets.items()})
    finally:
        consumer.close()


def offsets_partition(group: str) -> int:
    return abs(_java_hash(group)) % PARTITIONS


def _java_hash(text: str) -> int:
    h = 0
    for c in text:
        h = (31 * h + ord(c)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def json_objects(text: str) -> list[Any]:
    """The JSON objects ``text`` starts with: Kafka 4.3.1's offsets formatter writes them one
    after another, without a line break, and the tool's log line follows the last."""
    found, position, decoder = [], 0, json.JSONDecoder()
    while text.startswith("{", position):
        value, position = decoder.raw_decode(text, position)
        found.append(value)
    return found


def set_owned(server: ServerProcess, partitions: list[int]) -> None:
    url = f"http://127.0.0.1:{server.metrics_port}/admin/owned-partitions"
    urlopen(HttpRequest(url, data=json.dumps(partitions).encode(), method="PUT"), timeout=30).read()


def test_a_consumer_assigned_to_its_partitions_reads_the_commits(served: ServerProcess) -> None:
    commit(served.bootstrap, "reader-group", {0: 7, 1: 8}, "first")
    commit(served.bootstrap, "reader-group", {0: 9}, "second")
    consumer = KafkaConsumer(bootstrap_servers=served.bootstrap, enable_auto_commit=False,
                             auto_offset_reset="earliest", exclude_internal_topics=False)
    try:
        assert consumer.partitions_for_topic(OFFSETS) == set(range(PARTITIONS))
        partitions = [TopicPartition(OFFSETS, p) for p in range(PARTITIONS)]
        consumer.assign(partitions)
        ends = consumer.end_offsets(partitions)
        assert set(consumer.beginning_offsets(partitions).values()) == {0}
        records = []
        deadline = time.monotonic() + 30
        while sum(ends.values()) > len(records) and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                records += batch
    finally:
        consumer.close()
    assert len(records) == sum(ends.values())
    for record in records:
        assert record.offset < ends[TopicPartition(OFFSETS, record.partition)]
    home = offsets_partition("reader-group")
    decoded = []
    for record in records:
        key = codec.decode_key(record.key)
        if isinstance(key, codec.OffsetCommitKey) and key.group == "reader-group":
            assert record.partition == home
            value = codec.decode_value(key, record.value)
            assert isinstance(value, codec.OffsetCommitValue)
            decoded.append((key.topic, key.partition, value.offset, value.metadata))
    assert decoded == [(TOPIC, 0, 7, "first"), (TOPIC, 1, 8, "first"), (TOPIC, 0, 9, "second")]


def test_list_offsets_earliest_and_latest(served: ServerProcess) -> None:
    group = "list-offsets-group"
    home = offsets_partition(group)

    def listed(timestamp: int) -> tuple[int, int]:
        with connect(served) as sock:
            answer = exchange(sock, ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic(
                name=OFFSETS, partitions=[ListOffsetsPartition(partition_index=home, timestamp=timestamp)])]),
                ListOffsetsResponse, 7)
        p = answer.topics[0].partitions[0]
        return p.error_code, p.offset

    error, before = listed(-1)
    assert error == Errors.NONE and listed(-2) == (Errors.NONE, 0)
    commit(served.bootstrap, group, {0: 1, 1: 2})
    assert listed(-1) == (Errors.NONE, before + 2), "a record per partition committed"
    assert listed(-2) == (Errors.NONE, 0)


def test_metadata_lists_it_as_internal(served: ServerProcess) -> None:
    with connect(served) as sock:
        every = exchange(sock, MetadataRequest(topics=None), MetadataResponse, 12)
        named = exchange(sock, MetadataRequest(topics=[MetadataRequestTopic(name=OFFSETS)]), MetadataResponse, 12)
        again = exchange(sock, MetadataRequest(topics=None), MetadataResponse, 12)
    internal = [t for t in every.topics if t.is_internal]
    assert [(t.name, len(t.partitions)) for t in internal] == [(OFFSETS, PARTITIONS)]
    assert {t.name for t in every.topics} == {OFFSETS, TOPIC}
    (topic,) = named.topics
    assert topic.is_internal and topic.error_code == Errors.NONE and topic.topic_id != ZERO_UUID
    assert topic.topic_id == internal[0].topic_id == next(t for t in again.topics if t.is_internal).topic_id
    assert all(p.error_code == Errors.NONE and p.leader_id == every.brokers[0].node_id for p in topic.partitions)


def test_a_fetch_waiting_at_the_end_is_answered_by_a_commit(served: ServerProcess) -> None:
    group = "long-poll-group"
    home = offsets_partition(group)
    consumer = KafkaConsumer(bootstrap_servers=served.bootstrap, enable_auto_commit=False)
    try:
        end = consumer.end_offsets([TopicPartition(OFFSETS, home)])[TopicPartition(OFFSETS, home)]
    finally:
        consumer.close()
    committer = threading.Timer(0.5, commit, (served.bootstrap, group, {0: 3}))
    with connect(served) as sock:
        sock.settimeout(30)
        started = time.monotonic()
        committer.start()
        answer = exchange(sock, FetchRequest(max_wait_ms=20_000, min_bytes=1, topics=[FetchTopic(
            topic=OFFSETS, partitions=[FetchPartition(partition=home, fetch_offset=end, partition_max_bytes=1 << 20)])],
            forgotten_topics_data=[]), FetchResponse, 12)
        waited = time.monotonic() - started
    committer.join()
    data = answer.responses[0].partitions[0]
    assert data.error_code == Errors.NONE and data.high_watermark == end + 1
    (record,) = codec.decode_records(data.records or b"", partition=home)
    assert record.offset == end and record.value.offset == 3
    assert waited < 10, f"answered after {waited:.1f} s: the commit did not wake the Fetch"


def test_partitions_not_owned_answer_as_led_elsewhere(served: ServerProcess) -> None:
    set_owned(served, [0, 1])
    try:
        with connect(served) as sock:
            named = exchange(sock, MetadataRequest(topics=[MetadataRequestTopic(name=OFFSETS)]), MetadataResponse, 12)
            listed = exchange(sock, ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic(
                name=OFFSETS, partitions=[ListOffsetsPartition(partition_index=p, timestamp=-1) for p in (1, 2)])]),
                ListOffsetsResponse, 7)
            fetched = exchange(sock, FetchRequest(max_wait_ms=0, min_bytes=1, topics=[FetchTopic(
                topic=OFFSETS, partitions=[FetchPartition(partition=p, fetch_offset=0, partition_max_bytes=1000)
                                           for p in (1, 2, PARTITIONS)])],
                forgotten_topics_data=[]), FetchResponse, 12)
    finally:
        set_owned(served, list(range(PARTITIONS)))
    leaders = {p.partition_index: (p.error_code, p.leader_id, p.replica_nodes) for p in named.topics[0].partitions}
    node = named.brokers[0].node_id
    assert leaders == {p: (Errors.NONE, node, [node]) if p < 2 else (Errors.LEADER_NOT_AVAILABLE, -1, [])
                       for p in range(PARTITIONS)}
    assert [p.error_code for p in listed.topics[0].partitions] == [Errors.NONE, Errors.NOT_LEADER_OR_FOLLOWER]
    assert [p.error_code for p in fetched.responses[0].partitions] == [
        Errors.NONE, Errors.NOT_LEADER_OR_FOLLOWER, Errors.UNKNOWN_TOPIC_OR_PARTITION]


@pytest.mark.java
def test_kafka_console_consumer_prints_the_commits(served: ServerProcess, tmp_path: Path) -> None:
    commit(served.bootstrap, "console-group", {0: 42, 1: 43}, "from kafka-python")
    home = offsets_partition("console-group")
    printed = subprocess.run(kafka_tool(
        "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", served.bootstrap,
        "--topic", OFFSETS, "--partition", str(home), "--offset", "earliest",
        "--formatter", "org.apache.kafka.tools.consumer.OffsetsMessageFormatter",
        "--command-property", "exclude.internal.topics=false", "--timeout-ms", "5000",
    ), capture_output=True, text=True, timeout=KAFKA_TOOL_TIMEOUT_S, check=False)
    lines = json_objects(printed.stdout)
    commits = [(line["key"]["data"]["partition"], line["value"]["data"]["offset"], line["value"]["data"]["metadata"])
               for line in lines if line["key"]["type"] == 1 and line["key"]["data"]["group"] == "console-group"]
    assert commits == [(0, 42, "from kafka-python"), (1, 43, "from kafka-python")], printed.stderr
