"""Bad input against ``groupcoord serve`` over real sockets: every malformed frame gets Kafka's
answer or a closed connection, and the server keeps serving; then a bounded fuzz run (random
and mutated frames of every request the server serves) after which a real client still forms
a group and commits."""

from __future__ import annotations

import random
import shutil
import signal
import socket
import struct
import subprocess
import time
import uuid

import pytest
from client_support import PARTITIONS, TOPIC, is_disjoint_cover
from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata
from protocol_values import request_frame, sample_message
from server_process import ServerProcess, wait_for
from wire_support import READ_TIMEOUT_S, api_versions, assert_closed, connect, exchange, framed, read_frame

from groupcoord.errors import Errors
from groupcoord.protocol import decode_response
from groupcoord.protocol.messages.api_versions import ApiVersionsResponse
from groupcoord.protocol.messages.describe_groups import DescribeGroupsRequest, DescribeGroupsResponse
from groupcoord.protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from groupcoord.protocol.messages.heartbeat import HeartbeatRequest
from groupcoord.protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
)
from groupcoord.protocol.messages.list_groups import ListGroupsRequest, ListGroupsResponse
from groupcoord.protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
)
from groupcoord.protocol.messages.metadata import MetadataRequest, MetadataRequestTopic, MetadataResponse
from groupcoord.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
)
from groupcoord.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestTopic,
    OffsetFetchResponse,
)
from groupcoord.protocol.primitives import MAX_STRING_LENGTH
from groupcoord.server import handlers  # noqa: F401  (importing them registers the handlers)
from groupcoord.server.registry import HANDLERS

pytestmark = pytest.mark.timeout(180)

FUZZ_FRAMES = 3000
FUZZ_TIME_S = 40.0


def assert_serving(server: ServerProcess) -> None:
    assert server.alive()
    with connect(server) as sock:
        assert api_versions(sock).error_code == Errors.NONE


def test_api_versions_advertises_exactly_the_registered_handlers(server):
    with connect(server) as sock:
        table = api_versions(sock, version=4).api_keys
    assert [(k.api_key, k.min_version, k.max_version) for k in table] == [
        (key, h.min_version, h.max_version) for key, h in sorted(HANDLERS.items())
    ]
    advertised = {k.api_key for k in table}
    assert {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 21, 22, 23, 32, 33, 35, 37, 42, 44, 47, 60,
            68, 69} == advertised
    assert not advertised & {71}  # telemetry: not served


def test_api_versions_at_an_unknown_version_gets_kafkas_v0_fallback(server):
    with connect(server) as sock:
        # Request header v2, as Kafka reads it from v3 on: client id, then tagged fields.
        sock.sendall(framed(struct.pack(">hhihb", 18, 99, 7, -1, 0)))
        frame = read_frame(sock)
        assert frame is not None
        header, response = decode_response(frame, ApiVersionsResponse, 0)
        assert header.correlation_id == 7
        assert response.error_code == Errors.UNSUPPORTED_VERSION
        handler = HANDLERS[18]
        assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [
            (18, handler.min_version, handler.max_version)], "Kafka sends ApiVersions' own range alone"
        # The connection stays usable: the client retries at a version we serve.
        assert api_versions(sock, correlation_id=8).error_code == Errors.NONE


def test_api_versions_at_an_unknown_version_whose_header_does_not_parse_is_closed(server):
    with connect(server) as sock:
        sock.sendall(framed(struct.pack(">hhih", 18, 99, 7, -1)))  # no tagged-fields byte
        assert read_frame(sock) is None
    assert server.alive()


@pytest.mark.parametrize("case", [
    "oversized", "negative-size", "unknown-api-key", "unsupported-version", "garbage",
    "truncated-body",
])
def test_bad_frames_close_the_connection_and_the_server_keeps_serving(server, case):
    heartbeat = request_frame(HeartbeatRequest(group_id="g", generation_id=1, member_id="m"), 3, 1, "t")
    data = {
        "oversized": struct.pack(">i", 104_857_601) + b"\x00" * 64,
        "negative-size": struct.pack(">i", -5),
        "unknown-api-key": framed(struct.pack(">hhih", 999, 0, 1, -1)),
        "unsupported-version": framed(struct.pack(">hhih", 12, 99, 1, -1) + b"\x00" * 16),
        "garbage": framed(bytes(random.Random(3).randrange(256) for _ in range(64))),
        "truncated-body": framed(heartbeat[:-6]),
    }[case]
    before = server.metrics()
    with connect(server) as sock:
        sock.sendall(data)
        assert_closed(sock)
    assert_serving(server)
    after = server.metrics()
    closed = sum(v for k, v in after.items() if k.startswith("groupcoord_connections_closed_total"))
    assert closed == sum(v for k, v in before.items()
                         if k.startswith("groupcoord_connections_closed_total")) + 1


def test_a_truncated_frame_then_disconnect_and_a_disconnect_mid_request(server):
    with connect(server) as sock:
        sock.sendall(struct.pack(">i", 100) + b"\x00" * 10)  # the rest never comes
    # A Fetch parked for as long as max_wait_ms allows (24.8 days) is dropped with its
    # connection: found in review, thousands of abandoned ones held their answers.
    fetch = FetchRequest(max_wait_ms=2**31 - 1, min_bytes=1, topics=[
        FetchTopic(topic=TOPIC, partitions=[FetchPartition(partition=0, fetch_offset=0,
                                                           partition_max_bytes=1024)])])

    def parked() -> int:
        return int(server.metrics()['groupcoord_purgatory_delayed{purgatory="fetch"}'])

    before = parked()
    with connect(server) as sock:
        sock.sendall(framed(request_frame(fetch, 11, 1, "t")))
        wait_for(lambda: parked() == before + 1, 5, "the fetch to be parked")
    wait_for(lambda: parked() == before, 5, "the parked fetch to be dropped with its connection")
    assert_serving(server)


def test_a_client_that_stops_reading_is_still_closed_when_idle(tmp_path):
    # Found in a soak: the idle close waited for unread answers to drain, so a client that
    # pipelined requests and never read held its socket (and the fd) until it went away.
    # Kafka's selector closes the channel at once.
    idle = ServerProcess(tmp_path / "data", topics=[f"{TOPIC}:{PARTITIONS}", "wide:2000"],
                         settings={"connections.max.idle.ms": "1000"}).start()
    try:
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", idle.port))
            # 200 answers of every topic's 2,000-odd partitions: megabytes more than the
            # socket buffers hold, so most stay queued in the server, never read.
            metadata = framed(request_frame(MetadataRequest(topics=None), 1, 1, "never-reads"))
            sock.sendall(metadata * 200)
            wait_for(lambda: idle.metrics()["groupcoord_connections"] == 0, 10,
                     "the idle connection with unread answers to be closed")
        assert idle.metrics()['groupcoord_connections_closed_total{reason="idle"}'] == 1
    finally:
        assert idle.stop() == 0, idle.log()


def test_strings_as_long_as_the_protocol_allows_still_get_encodable_answers(server):
    # Found in review: a member id is the client id (or group instance id) and a UUID, and a
    # 32,767-byte client id made it too long to encode: the client got no answer, and every
    # later JoinGroup and DescribeGroups answer listing the member failed too.
    longest = "c" * MAX_STRING_LENGTH
    protocols = [JoinGroupRequestProtocol(name="range", metadata=b"")]
    for version, instance_id in [(5, None), (5, "i" * MAX_STRING_LENGTH), (3, None)]:
        join = JoinGroupRequest(group_id=f"long-ids-v{version}-{instance_id is None}",
                                session_timeout_ms=1000, rebalance_timeout_ms=1000, member_id="",
                                group_instance_id=instance_id, protocol_type="consumer",
                                protocols=protocols)
        with connect(server) as sock:
            answer = exchange(sock, join, JoinGroupResponse, version, client_id=longest)
        assert isinstance(answer, JoinGroupResponse)
        expected = Errors.NONE if version < 4 or instance_id is not None else Errors.MEMBER_ID_REQUIRED
        assert answer.error_code == expected
        assert len(answer.member_id.encode()) <= MAX_STRING_LENGTH
        assert answer.member_id.startswith((instance_id or longest)[:30_000])
        if version == 3:
            assert [m.member_id for m in answer.members] == [answer.member_id]
            with connect(server) as sock:
                described = exchange(sock, DescribeGroupsRequest(groups=[join.group_id]),
                                     DescribeGroupsResponse, 3)
            assert isinstance(described, DescribeGroupsResponse)
            assert [m.client_id for m in described.groups[0].members] == [longest]

    # DescribeGroups v6 names an unknown group in its error message, unless that is too long.
    with connect(server) as sock:
        described = exchange(sock, DescribeGroupsRequest(groups=["g" * MAX_STRING_LENGTH, "g"]),
                             DescribeGroupsResponse, 6)
    assert isinstance(described, DescribeGroupsResponse)
    assert [(g.error_code, g.error_message) for g in described.groups] == [
        (Errors.GROUP_ID_NOT_FOUND, "Group not found."), (Errors.GROUP_ID_NOT_FOUND, "Group g not found."),
    ]


def test_strings_that_are_not_utf8_read_as_replacement_characters(server):
    # Kafka reads request strings with Java's String constructor, which substitutes U+FFFD:
    # a client sending a Latin-1 "café" forms group "caf\ufffd". We used to close the connection.
    join = JoinGroupRequest(group_id="caf\u00e9", session_timeout_ms=1000, rebalance_timeout_ms=1000,
                            member_id="", protocol_type="consumer",
                            protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")])
    frame = request_frame(join, 3, 1, "client-\u00e9")
    frame = frame.replace("\u00e9".encode(), b"\xe9\xff")  # the same lengths, not UTF-8
    with connect(server) as sock:
        sock.sendall(framed(frame))
        answer = read_frame(sock)
        assert answer is not None, "the server closed the connection instead of answering"
        _, joined = decode_response(answer, JoinGroupResponse, 3)
        assert isinstance(joined, JoinGroupResponse)
        assert joined.error_code == Errors.NONE
        assert joined.member_id.startswith("client-\ufffd\ufffd-")
        described = exchange(sock, DescribeGroupsRequest(groups=["caf\ufffd\ufffd"]),
                             DescribeGroupsResponse, 3, correlation_id=2)
    assert isinstance(described, DescribeGroupsResponse)
    (group,) = described.groups
    assert (group.error_code, [m.member_id for m in group.members]) == (Errors.NONE, [joined.member_id])


def test_strings_whose_replacements_outgrow_a_string_are_refused(server):
    """11,000 bytes of 0xFF are a legal string, read as 11,000 U+FFFD: 33,000 bytes, which no
    record or answer could hold. Found by fuzzing: such a group id was stored in memory and broke
    every ListGroups answer after it, and such a client id left its group stuck mid-rebalance."""
    mark = "Q" * 11_000
    commit = OffsetCommitRequest(group_id=mark, generation_id_or_member_epoch=-1, member_id="", topics=[
        OffsetCommitRequestTopic(name=TOPIC, partitions=[
            OffsetCommitRequestPartition(partition_index=0, committed_offset=5, committed_metadata="")])])
    join = JoinGroupRequest(group_id="fine", session_timeout_ms=1000, rebalance_timeout_ms=1000, member_id="",
                            protocol_type="consumer", protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")])
    for frame in (request_frame(commit, 2, 1, "c"), request_frame(join, 3, 1, mark)):
        with connect(server) as sock:
            sock.sendall(framed(frame.replace(mark.encode(), b"\xff" * 11_000)))
            assert read_frame(sock) is None
    commit.group_id = "Q" * 10_922
    with connect(server) as sock:
        sock.sendall(framed(request_frame(commit, 2, 1, "c").replace(b"Q" * 10_922, b"\xff" * 10_922)))
        assert read_frame(sock) is not None, "10,922 bytes are 32,766 once replaced: a string still"
        listed = exchange(sock, ListGroupsRequest(), ListGroupsResponse, 3, correlation_id=2)
    assert isinstance(listed, ListGroupsResponse) and listed.error_code == Errors.NONE
    assert "\ufffd" * 10_922 in {g.group_id for g in listed.groups} and "fine" not in {g.group_id for g in listed.groups}
    assert server.alive()


def test_a_retention_past_the_int64_range_keeps_the_offset(server):
    # Found in review: now + retention_time_ms overflowed int64 in the handler.
    for version in (2, 3, 4):
        group = f"retention-v{version}"
        commit = OffsetCommitRequest(
            group_id=group, generation_id_or_member_epoch=-1, member_id="",
            retention_time_ms=2**63 - 1,
            topics=[OffsetCommitRequestTopic(name=TOPIC, partitions=[
                OffsetCommitRequestPartition(partition_index=0, committed_offset=42,
                                             committed_metadata="")])])
        with connect(server) as sock:
            committed = exchange(sock, commit, OffsetCommitResponse, version)
            assert isinstance(committed, OffsetCommitResponse)
            assert committed.topics[0].partitions[0].error_code == Errors.NONE
            fetched = exchange(sock, OffsetFetchRequest(group_id=group, topics=[
                OffsetFetchRequestTopic(name=TOPIC, partition_indexes=[0])]), OffsetFetchResponse, 3)
            assert isinstance(fetched, OffsetFetchResponse)
            assert fetched.topics[0].partitions[0].committed_offset == 42


def test_list_offsets_naming_a_partition_twice_gets_invalid_request_for_both(server):
    twice = ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic(name=TOPIC, partitions=[
        ListOffsetsPartition(partition_index=0, timestamp=-1), ListOffsetsPartition(partition_index=1, timestamp=-1),
        ListOffsetsPartition(partition_index=0, timestamp=-2)])])
    for version in (1, 5, 10):
        with connect(server) as sock:
            answer = exchange(sock, twice, ListOffsetsResponse, version)
        assert isinstance(answer, ListOffsetsResponse)
        assert [(p.partition_index, p.error_code, p.offset) for p in answer.topics[0].partitions] == [
            (0, Errors.INVALID_REQUEST, -1), (1, Errors.NONE, 0), (0, Errors.INVALID_REQUEST, -1)]


def test_metadata_naming_a_topic_by_id_before_v12_is_an_invalid_request(server):
    # Kafka throws InvalidRequestException (v10 and v11 answers cannot carry a null name, and
    # take no topic id) and answers it as MetadataRequest.getErrorResponse builds it.
    for version in (10, 11):
        topic_id = uuid.uuid4()
        for topics in ([MetadataRequestTopic(topic_id=topic_id, name=None), MetadataRequestTopic(name=TOPIC)],
                       [MetadataRequestTopic(topic_id=topic_id, name=TOPIC)]):
            with connect(server) as sock:
                answer = exchange(sock, MetadataRequest(topics=topics, allow_auto_topic_creation=False),
                                  MetadataResponse, version)
            assert isinstance(answer, MetadataResponse)
            assert [(t.error_code, t.name, t.topic_id, t.partitions) for t in answer.topics] == [
                (Errors.INVALID_REQUEST, t.name or "", t.topic_id, []) for t in topics]
            assert (answer.brokers, answer.controller_id) == ([], -1)
    assert_serving(server)


def test_metadata_by_topic_id_with_an_empty_name_looks_the_topic_up_by_id(server):
    """The Java client's consumer subscribed by a broker-side regex asks for its assigned
    topics by id with name "" (not null); Kafka's KafkaApis looks them up by id."""
    with connect(server) as sock:
        every = exchange(sock, MetadataRequest(topics=None), MetadataResponse, 13)
        assert isinstance(every, MetadataResponse)
        topic = next(t for t in every.topics if t.name == TOPIC)
        unknown = uuid.uuid4()
        answer = exchange(sock, MetadataRequest(topics=[
            MetadataRequestTopic(topic_id=topic.topic_id, name=""),
            MetadataRequestTopic(topic_id=unknown, name=""),
        ], allow_auto_topic_creation=False), MetadataResponse, 13)
    assert isinstance(answer, MetadataResponse)
    assert [(t.error_code, t.name, t.topic_id, len(t.partitions)) for t in answer.topics] == [
        (Errors.NONE, TOPIC, topic.topic_id, len(topic.partitions)), (Errors.UNKNOWN_TOPIC_ID, None, unknown, 0)]


def test_bounded_fuzz_then_a_real_client_still_forms_a_group(server):
    rng = random.Random(20261123)
    corpus = [
        request_frame(sample_message(h.api.request, version), version, 1, "fuzz")
        for h in HANDLERS.values() for version in range(h.min_version, h.max_version + 1)
    ]
    deadline = time.monotonic() + FUZZ_TIME_S
    sent = 0
    while sent < FUZZ_FRAMES and time.monotonic() < deadline:
        frame = bytearray(rng.choice(corpus))
        mutation = rng.randrange(5)
        if mutation == 0:
            frame = bytearray(rng.randbytes(rng.randrange(1, 200)))
        elif mutation == 1:
            for _ in range(rng.randrange(1, 8)):
                frame[rng.randrange(len(frame))] = rng.randrange(256)
        elif mutation == 2:
            del frame[rng.randrange(len(frame)):]
        elif mutation == 3:
            frame += rng.randbytes(rng.randrange(1, 64))
        # mutation 4: the valid (if odd) request itself, which handlers must answer.
        data = framed(bytes(frame))
        if rng.randrange(10) == 0:
            data = rng.randbytes(4) + bytes(frame)  # a random size prefix
        with connect(server) as sock:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            sock.settimeout(READ_TIMEOUT_S)
            try:
                while sock.recv(65536):
                    pass
            except ConnectionResetError:
                pass
        sent += 1
    assert sent >= min(FUZZ_FRAMES, 100)
    assert_serving(server)
    metrics = server.metrics()
    assert metrics.get('groupcoord_connections_closed_total{reason="handler_error"}', 0) == 0
    assert not [name for name in metrics if name.startswith("groupcoord_request_failures_total")]
    assert "Traceback" not in server.log()

    consumer = KafkaConsumer(TOPIC, bootstrap_servers=server.bootstrap, group_id="after-fuzz",
                             enable_auto_commit=False, session_timeout_ms=3000,
                             heartbeat_interval_ms=200, fetch_max_wait_ms=100)
    try:
        deadline = time.monotonic() + 30
        while not is_disjoint_cover([{tp.partition for tp in consumer.assignment()}], PARTITIONS):
            assert time.monotonic() < deadline, "the consumer did not join after the fuzz run"
            consumer.poll(timeout_ms=200)
        consumer.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(5, "", -1)})
        assert consumer.committed(TopicPartition(TOPIC, 0)) == 5
    finally:
        consumer.close(autocommit=False)


def test_a_second_server_on_the_same_data_directory_refuses_to_start(server, tmp_path):
    """Kafka's .lock: two writers of one directory would truncate each other's batches as torn
    tails and lose acknowledged commits. The second one exits before touching a file."""
    second = ServerProcess(server.data_dir, log_path=tmp_path / "second.log")
    with pytest.raises(AssertionError, match="exited with 1") as caught:
        second.start(timeout=30)
    assert f"Cannot serve: [Errno 11] {server.data_dir} is in use: another process" in str(caught.value)
    assert "__consumer_offsets" not in second.log(), "it opened partitions"
    assert server.alive()


def test_sighup_shuts_down_in_order(tmp_path):
    """A closed terminal's SIGHUP flushes and exits 0 like SIGTERM (its default would kill
    the process without flushing the log)."""
    process = ServerProcess(tmp_path / "data").start()
    try:
        assert process.stop(signum=signal.SIGHUP) == 0
    finally:
        process.kill()
    assert "Shutting down" in process.log() and "Stopped" in process.log()


def test_a_server_started_with_sighup_ignored_keeps_serving_on_sighup(tmp_path):
    """As under nohup: an ignored SIGHUP stays ignored (a Kafka broker keeps running too)."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # inherited through exec
    try:
        process = ServerProcess(tmp_path / "data").start()
    finally:
        signal.signal(signal.SIGHUP, previous)
    try:
        process.process.send_signal(signal.SIGHUP)
        with pytest.raises(subprocess.TimeoutExpired):
            process.process.wait(2)
        assert process.stop() == 0
    finally:
        process.kill()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["deleted", "emptied", "replaced"])
def test_a_deleted_emptied_or_replaced_data_directory_stops_the_server(tmp_path, how):
    """As a Kafka broker halts when its only log directory fails: appends would otherwise be
    acknowledged into unlinked files, lost at the next start, and a reloaded partition would
    come back empty. `rm -rf DATA/*` leaves the .lock; `mv DATA OLD; mkdir DATA` makes another
    directory at the same path."""
    data = tmp_path / "data"
    process = ServerProcess(data, topics=[f"{TOPIC}:1"], log_path=tmp_path / "server.log").start()
    try:
        if how == "emptied":
            for child in data.iterdir():
                if child.name != ".lock":
                    shutil.rmtree(child) if child.is_dir() else child.unlink()
        else:
            shutil.rmtree(data) if how == "deleted" else data.rename(tmp_path / "old")
            if how == "replaced":
                data.mkdir()
        code = process.process.wait(30)
    finally:
        process.kill()
    assert code == 1, process.log()
    assert "was deleted or replaced while serving: stopping" in process.log()
    assert "Traceback" not in process.log(), process.log()
    assert not data.exists() or not list(data.glob("__consumer_offsets-*")), "nothing is made again"


def test_a_start_refused_for_a_port_in_use_writes_nothing(tmp_path):
    """A mistyped --topic on a start that never served must not be kept (it would fix the
    topic's partition count for good)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        process = ServerProcess(tmp_path / "data", topics=["t:16"])
        with pytest.raises(AssertionError, match="exited with 1"):
            process.start(timeout=30, port=taken.getsockname()[1])
    assert "Cannot serve" in process.log() and "Address already in use" in process.log()
    assert not (tmp_path / "data" / "metadata.json").exists()
    assert not list((tmp_path / "data").glob("__consumer_offsets-*"))
