"""Produce, Fetch and ListOffsets on the wire against a real ``groupcoord serve``: every
malformed or hostile batch gets Kafka's error and leaves the log as it was; valid batches get
broker-assigned offsets and come back from Fetch byte for byte (but the offsets the broker
wrote)."""

from __future__ import annotations

import json
import random
import uuid
import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from protocol_values import request_frame
from server_process import ServerProcess
from wire_support import assert_closed, connect, exchange, framed, read_frame

from groupcoord.errors import Errors
from groupcoord.format import codec
from groupcoord.protocol import decode_response
from groupcoord.protocol.messages.fetch import FetchPartition, FetchRequest, FetchResponse, FetchTopic
from groupcoord.protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
)
from groupcoord.protocol.messages.produce import (
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
)

pytestmark = pytest.mark.timeout(180)

TOPIC = "wire"
PARTITIONS = 2
MAX_MESSAGE_BYTES = 20_000
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    data_dir = tmp_path_factory.mktemp("produce") / "data"
    process = ServerProcess(
        data_dir, topics=[f"{TOPIC}:{PARTITIONS}"],
        settings={"message.max.bytes": str(MAX_MESSAGE_BYTES)},
    ).start()
    try:
        yield process
    finally:
        code = process.stop()
    assert code == 0, process.log()
    assert "Traceback" not in process.log(), process.log()


def batch(
    values: list[bytes], *, compression: str = "none", timestamp: int | None = None,
    keys: list[bytes | None] | None = None, producer_id: int = -1, sequence: int = -1,
) -> bytearray:
    """A RecordBatch as kafka-python's producer builds one (base offset 0)."""
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=CODECS[compression], is_transactional=False,
        producer_id=producer_id, producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=sequence, batch_size=10**7,
    )
    now = int(time.time() * 1000) if timestamp is None else timestamp
    for i, value in enumerate(values):
        key = keys[i] if keys is not None else b"k%d" % i
        builder.append(i, timestamp=now, key=key, value=value, headers=[])
    return bytearray(builder.build())


def produce(
    sock: socket.socket, data: bytes | None, *, partition: int = 0, topic: str = TOPIC, acks: int = 1,
    version: int = 9, correlation_id: int = 1,
) -> PartitionProduceResponse:
    request = ProduceRequest(acks=acks, timeout_ms=5000, topic_data=[
        TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=partition, records=data)])
    ])
    response = exchange(sock, request, ProduceResponse, version, correlation_id=correlation_id)
    (answer,) = response.responses[0].partition_responses
    return answer


def fetch_all(sock: socket.socket, partition: int = 0, offset: int = 0) -> bytes:
    request = FetchRequest(max_wait_ms=0, min_bytes=1, max_bytes=10**8, isolation_level=0, topics=[
        FetchTopic(topic=TOPIC, partitions=[
            FetchPartition(partition=partition, fetch_offset=offset, partition_max_bytes=10**8)
        ])
    ])
    response = exchange(sock, request, FetchResponse, 11, correlation_id=7)
    (answer,) = response.responses[0].partitions
    assert answer.error_code == Errors.NONE
    return answer.records or b""


def latest(sock: socket.socket, partition: int = 0) -> int:
    request = ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[
        ListOffsetsTopic(name=TOPIC, partitions=[ListOffsetsPartition(partition_index=partition, timestamp=-1)])
    ])
    response = exchange(sock, request, ListOffsetsResponse, 7, correlation_id=8)
    return int(response.topics[0].partitions[0].offset)


def test_a_valid_batch_gets_the_log_end_as_its_offset_and_is_fetched_as_sent(server: ServerProcess) -> None:
    with connect(server) as sock:
        start = latest(sock, 1)
        first = batch([b"a", b"b", b"c"], compression="lz4")
        answer = produce(sock, bytes(first), partition=1)
        assert (answer.error_code, answer.base_offset, answer.log_append_time_ms) == (Errors.NONE, start, -1)
        second = batch([b"d"])
        assert produce(sock, bytes(second), partition=1).base_offset == start + 3
        assert latest(sock, 1) == start + 4
        stored = fetch_all(sock, 1, start)
        (one, two) = codec.read_batches(stored)
        assert (one.base_offset, one.last_offset, two.base_offset) == (start, start + 2, start + 3)
        assert [r.value for b in (one, two) for r in b.records] == [b"a", b"b", b"c", b"d"]
        # Byte for byte as sent, but the base offset and leader epoch the broker set.
        assert stored[12:16] == b"\x00\x00\x00\x00" and stored[16:one.size] == first[16:]


@pytest.mark.parametrize("case", [
    "empty", "null", "crc", "two-batches", "base-offset", "magic-1", "truncated", "count",
    "too-large", "future-timestamp", "zstd-below-v7", "unknown-topic", "unknown-partition",
    "internal-topic", "bad-acks",
])
def test_a_bad_produce_gets_kafkas_error_and_changes_nothing(server: ServerProcess, case: str) -> None:
    good = batch([b"x" * 10, b"y" * 10])
    data: bytes | None = bytes(good)
    kwargs: dict[str, object] = {}
    version = 9
    if case == "empty":
        data, expected = b"", Errors.INVALID_RECORD
    elif case == "null":
        data, expected = None, Errors.INVALID_RECORD
    elif case == "crc":
        corrupt = bytearray(good)
        corrupt[-1] ^= 0x40
        data, expected = bytes(corrupt), Errors.CORRUPT_MESSAGE
    elif case == "two-batches":
        data, expected = bytes(good) + bytes(good), Errors.INVALID_RECORD
    elif case == "base-offset":
        moved = bytearray(good)
        struct.pack_into(">q", moved, 0, 5)
        data, expected = bytes(moved), Errors.INVALID_RECORD
    elif case == "magic-1":
        old = bytearray(good)
        old[16] = 1
        data, expected = bytes(old), Errors.INVALID_RECORD
    elif case == "truncated":
        # Kafka iterates no batch from a cut one: "at least one record batch" is missing.
        data, expected = bytes(good[:-3]), Errors.INVALID_RECORD
    elif case == "count":
        wrong = bytearray(good)
        struct.pack_into(">i", wrong, 57, 3)  # the record count, which the CRC covers
        data, expected = bytes(wrong), Errors.CORRUPT_MESSAGE
    elif case == "too-large":
        data, expected = bytes(batch([random.randbytes(MAX_MESSAGE_BYTES)])), Errors.MESSAGE_TOO_LARGE
    elif case == "future-timestamp":
        later = int(time.time() * 1000) + 2 * 3_600_000
        data, expected = bytes(batch([b"v"], timestamp=later)), Errors.INVALID_TIMESTAMP
    elif case == "zstd-below-v7":
        data, expected, version = bytes(batch([b"v" * 200], compression="zstd")), Errors.UNSUPPORTED_COMPRESSION_TYPE, 6
    elif case == "unknown-topic":
        kwargs["topic"], expected = "no-such-topic", Errors.UNKNOWN_TOPIC_OR_PARTITION
    elif case == "unknown-partition":
        kwargs["partition"], expected = PARTITIONS, Errors.UNKNOWN_TOPIC_OR_PARTITION
    elif case == "internal-topic":
        kwargs["topic"], expected = "__consumer_offsets", Errors.INVALID_TOPIC_EXCEPTION
    else:
        kwargs["acks"], expected = 2, Errors.INVALID_REQUIRED_ACKS
    with connect(server) as sock:
        before = latest(sock)
        stored = fetch_all(sock, 0, before)
        answer = produce(sock, data, version=version, **kwargs)  # type: ignore[arg-type]
        assert answer.error_code == expected, answer
        assert answer.base_offset == -1
        if case == "future-timestamp":
            assert [e.batch_index for e in answer.record_errors] == [0] and answer.error_message
        assert latest(sock) == before
        assert fetch_all(sock, 0, before) == stored
        # The connection still serves.
        assert produce(sock, bytes(batch([b"after"])), correlation_id=2).base_offset == before


def test_acks_0_gets_no_answer_and_a_failed_one_closes_the_connection(server: ServerProcess) -> None:
    with connect(server) as sock:
        before = latest(sock)
        request = ProduceRequest(acks=0, timeout_ms=5000, topic_data=[TopicProduceData(
            name=TOPIC, partition_data=[PartitionProduceData(index=0, records=bytes(batch([b"quiet"])))])])
        sock.sendall(framed(request_frame(request, 9, 1, "test")))
        # No answer to acks=0: the next request's answer is the next frame.
        assert latest(sock) == before + 1
        request.topic_data[0].partition_data[0].records = b"garbage"
        sock.sendall(framed(request_frame(request, 9, 2, "test")))
        sock.settimeout(10)
        assert_closed(sock)
    with connect(server) as sock:
        assert latest(sock) == before + 1


def test_a_log_append_time_topic_stamps_batches(tmp_path: Path) -> None:
    server = ServerProcess(
        tmp_path / "data", topics=["stamped:1"], settings={"log.message.timestamp.type": "LogAppendTime"}
    ).start()
    try:
        with connect(server) as sock:
            before = int(time.time() * 1000)
            answer = produce(sock, bytes(batch([b"a", b"b"], timestamp=1_000)), topic="stamped")
            after = int(time.time() * 1000)
            assert answer.error_code == Errors.NONE and before <= answer.log_append_time_ms <= after
            request = FetchRequest(max_wait_ms=0, min_bytes=1, max_bytes=10**6, topics=[FetchTopic(
                topic="stamped", partitions=[FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=10**6)])])
            (stored,) = codec.read_batches(exchange(sock, request, FetchResponse, 11).responses[0].partitions[0].records or b"")
            assert stored.timestamp_type == "log_append" and stored.max_timestamp == answer.log_append_time_ms
    finally:
        assert server.stop() == 0


def test_bounded_random_produce_bytes_never_reach_the_log(server: ServerProcess) -> None:
    rng = random.Random(33)
    good = batch([b"v%d" % i for i in range(5)], compression="gzip")
    deadline = time.monotonic() + 20
    with connect(server) as sock:
        before = latest(sock)
        accepted: list[int] = []
        sent = 0
        while sent < 300 and time.monotonic() < deadline:
            damaged = bytearray(good)
            for _ in range(rng.randrange(1, 4)):
                damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
            data = bytes(damaged) if rng.random() < 0.8 else bytes(damaged[: rng.randrange(len(damaged))])
            answer = produce(sock, data, correlation_id=sent + 10)
            if answer.error_code == Errors.NONE:
                # Only a flip the CRC does not cover can pass (the leader epoch, which the
                # broker rewrites): the batch is then the good one.
                accepted.append(answer.base_offset)
            sent += 1
        assert latest(sock) == before + 5 * len(accepted)
        written = codec.read_batches(fetch_all(sock, 0, before))
        assert [b.base_offset for b in written] == accepted
        assert all([r.value for r in b.records] == [b"v%d" % i for i in range(5)] for b in written)
    assert server.alive()


def session_fetch(
    sock: socket.socket, session_id: int, epoch: int, offsets: dict[int, int], *, max_wait_ms: int = 0,
    correlation_id: int = 20,
) -> FetchResponse:
    request = FetchRequest(
        max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=10**6, session_id=session_id, session_epoch=epoch,
        topics=[FetchTopic(topic=TOPIC, partitions=[
            FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=10**6) for p, o in offsets.items()
        ])] if offsets else [],
    )
    return exchange(sock, request, FetchResponse, 11, correlation_id=correlation_id)


def test_incremental_fetch_sessions_answer_only_what_changed(server: ServerProcess) -> None:
    with connect(server) as sock, connect(server) as producer:
        ends = {p: latest(sock, p) for p in range(PARTITIONS)}
        full = session_fetch(sock, 0, 0, ends)
        assert full.error_code == Errors.NONE and full.session_id > 0
        assert sorted(p.partition_index for p in full.responses[0].partitions) == [0, 1]
        session = full.session_id
        # Nothing new: an incremental answer holds no partition.
        quiet = session_fetch(sock, session, 1, {})
        assert (quiet.error_code, quiet.session_id, quiet.responses) == (Errors.NONE, session, [])
        produce(producer, bytes(batch([b"news"])), partition=1)
        news = session_fetch(sock, session, 2, {})
        (topic,) = news.responses
        (changed,) = topic.partitions
        assert changed.partition_index == 1 and changed.high_watermark == ends[1] + 1
        assert [r.value for b in codec.read_batches(changed.records or b"") for r in b.records] == [b"news"]
        # The session still reads partition 1 from where it was (the client did not move it).
        assert session_fetch(sock, session, 3, {1: ends[1] + 1}).responses == []
        stale = session_fetch(sock, session, 3, {})
        assert stale.error_code == Errors.INVALID_FETCH_SESSION_EPOCH
        assert session_fetch(sock, session + 1, 1, {}).error_code == Errors.FETCH_SESSION_ID_NOT_FOUND


def test_a_waiting_fetch_is_answered_by_the_append_not_at_max_wait(server: ServerProcess) -> None:
    with connect(server) as sock, connect(server) as producer:
        end = latest(sock, 0)
        request = FetchRequest(max_wait_ms=20_000, min_bytes=1, max_bytes=10**6, topics=[FetchTopic(
            topic=TOPIC, partitions=[FetchPartition(partition=0, fetch_offset=end, partition_max_bytes=10**6)])])
        sock.sendall(framed(request_frame(request, 11, 5, "test")))
        time.sleep(0.3)  # the Fetch is parked by now (nothing arrives meanwhile)
        sock.setblocking(False)
        with pytest.raises(BlockingIOError):
            sock.recv(1)
        sock.setblocking(True)
        sock.settimeout(10)
        started = time.monotonic()
        produce(producer, bytes(batch([b"wake"])))
        frame = read_frame(sock)
        waited = time.monotonic() - started
        assert frame is not None
        _, response = decode_response(frame, FetchResponse, 11)
        (partition,) = response.responses[0].partitions
        assert [r.value for b in codec.read_batches(partition.records or b"") for r in b.records] == [b"wake"]
        # Answered by the append: far from max_wait_ms (20 s), bounded loosely for a loaded machine.
        assert waited < 5, waited


def idempotent(values: list[bytes], producer_id: int, sequence: int, epoch: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=False, producer_id=producer_id,
        producer_epoch=epoch, base_sequence=sequence, batch_size=10**7,
    )
    for i, value in enumerate(values):
        builder.append(i, timestamp=int(time.time() * 1000), key=b"k", value=value, headers=[])
    return bytes(builder.build())


def test_idempotent_producers_are_checked_and_deduplicated_across_a_restart(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data", topics=[f"{TOPIC}:1"]).start()
    pid = 4242
    try:
        with connect(server) as sock:
            first = produce(sock, idempotent([b"a", b"b"], pid, 0))
            assert (first.error_code, first.base_offset) == (Errors.NONE, 0)
            # A retry of the same batch: NONE with the original offset, nothing appended.
            retry = produce(sock, idempotent([b"a", b"b"], pid, 0), correlation_id=2)
            assert (retry.error_code, retry.base_offset) == (Errors.NONE, 0)
            assert produce(sock, idempotent([b"c"], pid, 2), correlation_id=3).base_offset == 2
            gap = produce(sock, idempotent([b"x"], pid, 9), correlation_id=4)
            assert gap.error_code == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
            assert produce(sock, idempotent([b"y"], pid, 0, epoch=1), correlation_id=5).base_offset == 3
            stale = produce(sock, idempotent([b"z"], pid, 3, epoch=0), correlation_id=6)
            assert stale.error_code == Errors.INVALID_PRODUCER_EPOCH
            assert latest(sock) == 4
        assert server.stop() == 0
        assert sorted(p.name for p in (tmp_path / "data" / f"{TOPIC}-0").glob("*.snapshot")) == [
            "00000000000000000004.snapshot"
        ]
        server.start()
        with connect(server) as sock:
            # The producer's state came back from its snapshot: its last batch is still a retry.
            again = produce(sock, idempotent([b"y"], pid, 0, epoch=1))
            assert (again.error_code, again.base_offset) == (Errors.NONE, 3)
            assert produce(sock, idempotent([b"w"], pid, 5, epoch=1), correlation_id=2).error_code == (
                Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
            )
            assert produce(sock, idempotent([b"v"], pid, 1, epoch=1), correlation_id=3).base_offset == 4
            values = [r.value for b in codec.read_batches(fetch_all(sock)) for r in b.records]
            assert values == [b"a", b"b", b"c", b"y", b"v"]
    finally:
        if server.alive():
            server.stop()


def test_a_damaged_data_partition_is_offline_and_the_others_serve(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data", topics=[f"{TOPIC}:2"]).start()
    try:
        with connect(server) as sock:
            for i in range(3):
                for partition in (0, 1):
                    produce(sock, bytes(batch([b"m%d" % i])), partition=partition, correlation_id=i + 1)
        assert server.stop() == 0
        segment = tmp_path / "data" / f"{TOPIC}-0" / "00000000000000000000.log"
        data = bytearray(segment.read_bytes())
        data[70] ^= 0xFF  # inside the first batch, with valid batches after it: not a torn tail
        segment.write_bytes(bytes(data))
        server.start()
        with connect(server) as sock:
            assert produce(sock, bytes(batch([b"x"])), partition=0).error_code == Errors.KAFKA_STORAGE_ERROR
            assert produce(sock, bytes(batch([b"y"])), partition=1, correlation_id=2).base_offset == 3
        assert "wire-0 is offline" in server.log()
        assert segment.read_bytes() == bytes(data)  # refused, never truncated
    finally:
        if server.alive():
            server.stop()


def test_produce_v13_and_fetch_name_topics_by_id(server: ServerProcess) -> None:
    metadata = json.loads((server.data_dir / "metadata.json").read_text())
    topic_id = uuid.UUID(next(t["topic_id"] for t in metadata["topics"] if t["name"] == TOPIC))
    with connect(server) as sock:
        end = latest(sock, 1)
        request = ProduceRequest(acks=-1, timeout_ms=5000, topic_data=[
            TopicProduceData(topic_id=topic_id, partition_data=[
                PartitionProduceData(index=1, records=bytes(batch([b"by-id"])))]),
            TopicProduceData(topic_id=uuid.uuid4(), partition_data=[
                PartitionProduceData(index=0, records=bytes(batch([b"lost"])))]),
        ])
        response = exchange(sock, request, ProduceResponse, 13)
        known, unknown = response.responses
        assert known.topic_id == topic_id and known.partition_responses[0].base_offset == end
        assert unknown.partition_responses[0].error_code == Errors.UNKNOWN_TOPIC_ID
        fetch = FetchRequest(max_wait_ms=0, min_bytes=1, max_bytes=10**6, topics=[FetchTopic(
            topic_id=topic_id, partitions=[FetchPartition(partition=1, fetch_offset=end, partition_max_bytes=10**6)])])
        answer = exchange(sock, fetch, FetchResponse, 18, correlation_id=2)
        (partition,) = answer.responses[0].partitions
        assert [r.value for b in codec.read_batches(partition.records or b"") for r in b.records] == [b"by-id"]
