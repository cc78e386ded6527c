"""The server in this process on asyncio's own event loop (no uvloop): wire answers over a real
socket, the ownership admin call and the metrics over HTTP, topics kept across a restart."""

from __future__ import annotations

import asyncio
import logging
import json
import struct
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from log_faults import fail_disk, slow_close
from protocol_values import request_frame

from groupcoord.config import Config
from groupcoord.coordinator import OffsetAndMetadata, TopicPartition
from groupcoord.errors import Errors
from groupcoord.protocol import Request, Response, decode_response
from groupcoord.protocol.messages.describe_groups import DescribeGroupsRequest, DescribeGroupsResponse
from groupcoord.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from groupcoord.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol, JoinGroupResponse
from groupcoord.protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment, SyncGroupResponse
from groupcoord.protocol.messages.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from groupcoord.protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
)
from groupcoord.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
)
from groupcoord.protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
    OffsetDeleteResponse,
)
from groupcoord.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
    OffsetFetchResponse,
)
from groupcoord.server import endpoint
from groupcoord.server.app import Server, ServerOptions
from groupcoord.server.broker import Broker
from groupcoord.server.topics import TopicRegistry

CONFIG = Config.from_properties({
    "offsets.topic.num.partitions": 4, "group.initial.rebalance.delay.ms": 0, "num.partitions": 3,
})


class Client:
    """A connection to the server, closed on leaving ``async with``."""

    def __init__(self, port: int) -> None:
        self.port, self.correlation_id = port, 0

    async def __aenter__(self) -> Client:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.writer.close()
        await self.writer.wait_closed()

    async def call(self, request: Request, response_cls: type[Response], version: int) -> Any:
        [response] = await self.pipeline([(request, response_cls, version)])
        return response

    async def pipeline(self, calls: list[tuple[Request | bytes, type[Response], int]]) -> list[Any]:
        """Send every request at once (a request, or a frame made by :meth:`frame`), then read
        their answers in order."""
        frames = [call if isinstance(call, bytes) else self.frame(call, version) for call, _, version in calls]
        for frame in frames:
            self.writer.write(struct.pack(">i", len(frame)) + frame)
        answers = []
        for frame, (_, response_cls, version) in zip(frames, calls):
            (size,) = struct.unpack(">i", await self.reader.readexactly(4))
            header, response = decode_response(await self.reader.readexactly(size), response_cls, version)
            assert header.correlation_id == struct.unpack_from(">i", frame, 4)[0]
            answers.append(response)
        return answers

    def frame(self, request: Request, version: int) -> bytes:
        """``request``'s frame, with the next correlation id."""
        self.correlation_id += 1
        return request_frame(request, version, self.correlation_id, "in-process")


async def http_raw(port: int, data: bytes) -> bytes:
    """Send ``data`` to the HTTP endpoint and read everything until it closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    answer = await reader.read()
    writer.close()
    await writer.wait_closed()
    return answer


async def http(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    payload = json.dumps(body).encode() if body is not None else b""
    raw = await http_raw(port, f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: "
                               f"{len(payload)}\r\n\r\n".encode() + payload)
    head, _, content = raw.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    return status, json.loads(content) if b"json" in head else content.decode()


def run(main: Any) -> None:
    asyncio.run(asyncio.wait_for(main(), 60))


@asynccontextmanager
async def serving(options: ServerOptions) -> AsyncIterator[tuple[Server, Broker, Client]]:
    """The server, started with its partitions loaded, and a client connected to it."""
    server = Server(options)
    await server.start()
    try:
        assert server.broker is not None
        await server.broker.runtime.wait_loaded()
        async with Client(server.port) as client:
            yield server, server.broker, client
    finally:
        await server.stop()


def test_metadata_auto_creates_topics_and_topics_survive_a_restart(tmp_path: Path) -> None:
    options = ServerOptions(port=0, data_dir=tmp_path, topics=[("declared", 2)], config=CONFIG)

    async def main() -> None:
        server = Server(options)
        await server.start()
        try:
            async with Client(server.port) as client:
                response = await client.call(MetadataRequest(topics=[
                    MetadataRequestTopic(name="declared"), MetadataRequestTopic(name="auto"),
                    MetadataRequestTopic(name="bad name!")]), MetadataResponse, 12)
                assert [(t.name, t.error_code, len(t.partitions)) for t in response.topics] == [
                    ("declared", 0, 2), ("auto", Errors.LEADER_NOT_AVAILABLE, 0),
                    ("bad name!", Errors.INVALID_TOPIC_EXCEPTION, 0)], "auto is being created"
                assert response.brokers[0].port == server.port
                assert await described(client, "auto") == (0, 3)
        finally:
            await server.stop()
        again = Server(options)
        await again.start()
        try:
            async with Client(again.port) as client:
                response = await client.call(MetadataRequest(topics=None), MetadataResponse, 12)
            assert [(t.name, len(t.partitions), t.is_internal) for t in response.topics] == [
                ("auto", 3, False), ("declared", 2, False), ("__consumer_offsets", 4, True)]
        finally:
            await again.stop()

    run(main)


async def described(client: Client, name: str) -> tuple[int, int]:
    """Ask for ``name`` until it is no longer being created (bounded): its error and
    partition count."""
    for _ in range(500):
        response = await client.call(
            MetadataRequest(topics=[MetadataRequestTopic(name=name)]), MetadataResponse, 12)
        (topic,) = response.topics
        if topic.error_code != Errors.LEADER_NOT_AVAILABLE:
            return topic.error_code, len(topic.partitions)
        await asyncio.sleep(0.01)
    raise AssertionError(f"{name} is still being created")


def test_auto_creation_saves_the_topic_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fsync of metadata.json waits for the test to release it, and the test releases it
    only after the server answered: on the loop, this would deadlock (until the bounded wait
    fails)."""
    options = ServerOptions(port=0, data_dir=tmp_path, config=CONFIG)
    released = threading.Event()
    save = TopicRegistry._save

    def held_save(self: TopicRegistry, *args: Any) -> None:
        assert released.wait(5), "metadata.json was saved on the event loop"
        save(self, *args)

    async def main() -> None:
        server = Server(options)
        await server.start()
        monkeypatch.setattr(TopicRegistry, "_save", held_save)
        try:
            async with Client(server.port) as client:
                response = await client.call(
                    MetadataRequest(topics=[MetadataRequestTopic(name="auto")]), MetadataResponse, 12)
                assert response.topics[0].error_code == Errors.LEADER_NOT_AVAILABLE
                released.set()
                assert await described(client, "auto") == (0, 3)
            assert "auto" in (tmp_path / "metadata.json").read_text()
        finally:
            released.set()
            await server.stop()

    run(main)


def test_the_owned_partitions_admin_call_moves_groups_on_and_off_this_node(tmp_path: Path) -> None:
    options = ServerOptions(port=0, data_dir=tmp_path, metrics_port=0, config=CONFIG)

    async def main() -> None:
        server = Server(options)
        await server.start()
        assert server.metrics_port is not None and server.broker is not None
        try:
            await server.broker.runtime.wait_loaded()
            async with Client(server.port) as client:
                await ownership_moves(server.broker, server.metrics_port, client)
        finally:
            await server.stop()

    run(main)


async def ownership_moves(broker: Broker, metrics_port: int, client: Client) -> None:
    partition = broker.coordinator.partition_for("g")

    async def find() -> int:
        response = await client.call(
            FindCoordinatorRequest(coordinator_keys=["g"]), FindCoordinatorResponse, 4)
        return int(response.coordinators[0].error_code)

    assert await find() == Errors.NONE
    status, state = await http(metrics_port, "GET", "/admin/owned-partitions")
    assert (status, state) == (200, {"owned": [0, 1, 2, 3], "loading": [], "offline": []})
    others = [p for p in range(4) if p != partition]
    status, state = await http(metrics_port, "PUT", "/admin/owned-partitions", others)
    assert status == 200 and partition not in state["owned"] + state["loading"]
    assert await find() == Errors.COORDINATOR_NOT_AVAILABLE
    status, state = await http(metrics_port, "PUT", "/admin/owned-partitions", [0, 9])
    assert status == 400 and "outside" in state["error"]
    status, _ = await http(metrics_port, "PUT", "/admin/owned-partitions", list(range(4)))
    assert status == 200
    await broker.runtime.wait_loaded()
    assert await find() == Errors.NONE
    status, text = await http(metrics_port, "GET", "/metrics")
    assert status == 200
    assert 'groupcoord_requests_total{api="FindCoordinator"} 3' in text
    assert 'groupcoord_partitions{status="owned"} 4' in text
    assert 'groupcoord_groups{state="Stable"} 0' in text


def test_the_http_endpoint_refuses_malformed_requests_without_errors(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Found in review: a line over asyncio's 64 KiB limit and a deeply nested JSON body raised
    # out of the handler (an asyncio "Unhandled exception" and a RecursionError) unanswered.
    options = ServerOptions(port=0, data_dir=tmp_path, metrics_port=0, config=CONFIG)

    async def main() -> None:
        server = Server(options)
        await server.start()
        assert server.metrics_port is not None
        try:
            long_line = b"GET /metrics HTTP/1.1\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n"
            assert await http_raw(server.metrics_port, long_line) == b""
            nested = b"[" * 60_000
            answer = await http_raw(server.metrics_port, b"PUT /admin/owned-partitions HTTP/1.1\r\n"
                               b"Content-Length: %d\r\n\r\n" % len(nested) + nested)
            assert answer.startswith(b"HTTP/1.1 400 ")
            status, _ = await http(server.metrics_port, "GET", "/admin/owned-partitions")
            assert status == 200
        finally:
            await server.stop()

    with caplog.at_level(logging.WARNING):
        run(main)
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


def test_an_ownership_change_slower_than_the_read_timeout_still_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only reading the request is timed: a PUT whose unload waits on a slow fsync answers
    once it is done, and the partition is closed in the log with its recovery point."""
    monkeypatch.setattr(endpoint, "READ_TIMEOUT_S", 0.2)
    config = CONFIG.with_overrides({"log.flush.interval.messages": "1000"})
    options = ServerOptions(port=0, data_dir=tmp_path, metrics_port=0, config=config)

    async def main() -> None:
        server = Server(options)
        await server.start()
        assert server.metrics_port is not None and server.broker is not None
        manager = server._log
        assert manager is not None
        try:
            await server.broker.runtime.wait_loaded()
            log = slow_close(manager, 0, 0.5)
            status, state = await http(server.metrics_port, "PUT", "/admin/owned-partitions", [1, 2, 3])
            assert (status, state) == (200, {"owned": [1, 2, 3], "loading": [], "offline": []})
            assert log.closed and manager.recovery_points.get(0) == log.next_offset
        finally:
            await server.stop()

    run(main)


@pytest.mark.slow
def test_a_request_that_blocks_the_loop_does_not_expire_the_sessions_behind_it(tmp_path: Path) -> None:
    """Found by fuzzing: a DescribeGroups naming a million groups kept the one event loop for
    seconds, and the heartbeat queued behind it found its member expired (the handler's poll
    ran the session timers first). The blocked time is now left out of the timers' clock."""
    config = CONFIG.with_overrides({"group.min.session.timeout.ms": "1000"})
    protocols = [JoinGroupRequestProtocol(name="range", metadata=b"")]

    async def main() -> None:
        async with serving(ServerOptions(port=0, data_dir=tmp_path, config=config)) as (_, broker, client):
            # Made before the session starts: encoding it blocks this test's side of the loop.
            describe = client.frame(DescribeGroupsRequest(groups=[f"g{i}" for i in range(1_000_000)]), 0)
            joined = await client.call(JoinGroupRequest(
                group_id="g", session_timeout_ms=1000, rebalance_timeout_ms=1000, member_id="",
                protocol_type="consumer", protocols=protocols), JoinGroupResponse, 3)
            assert joined.error_code == Errors.NONE
            synced = await client.call(SyncGroupRequest(
                group_id="g", generation_id=joined.generation_id, member_id=joined.member_id,
                assignments=[SyncGroupRequestAssignment(member_id=joined.member_id, assignment=b"")]),
                SyncGroupResponse, 2)
            assert synced.error_code == Errors.NONE
            left_out_before = broker.time._left_out_ms  # type: ignore[attr-defined]
            described, beat = await client.pipeline([
                (describe, DescribeGroupsResponse, 0),
                (HeartbeatRequest(group_id="g", generation_id=joined.generation_id, member_id=joined.member_id),
                 HeartbeatResponse, 2),
            ])
            assert len(described.groups) == 1_000_000
            assert broker.time._left_out_ms - left_out_before >= 1000, "the request kept the loop past the session"  # type: ignore[attr-defined]
            assert beat.error_code == Errors.NONE, "the member was expired for the server's stall"

    run(main)


def test_findcoordinator_messages_are_kafkas_for_a_key_found(tmp_path: Path) -> None:
    """Kafka 4.1 answers a key found with message "NONE" before v4 and "" from v4 on."""
    async def main() -> None:
        async with serving(ServerOptions(port=0, data_dir=tmp_path, config=CONFIG)) as (_, _, client):
            for version in (1, 3):
                found = await client.call(FindCoordinatorRequest(key="g"), FindCoordinatorResponse, version)
                assert (found.error_code, found.error_message) == (Errors.NONE, "NONE")
                txn = await client.call(FindCoordinatorRequest(key="t", key_type=1), FindCoordinatorResponse, version)
                assert txn.error_code == Errors.COORDINATOR_NOT_AVAILABLE and "transactions" in txn.error_message
            response = await client.call(
                FindCoordinatorRequest(coordinator_keys=["g", "h"]), FindCoordinatorResponse, 4)
            assert [(c.key, c.error_code, c.error_message) for c in response.coordinators] == [
                ("g", Errors.NONE, ""), ("h", Errors.NONE, "")]

    run(main)


def test_findcoordinator_stops_naming_this_node_for_a_partition_whose_disk_failed(tmp_path: Path) -> None:
    """A failed write gives the partition up: FindCoordinator answers
    COORDINATOR_NOT_AVAILABLE (as Kafka does for a partition without a leader) until it is
    loaded again."""
    options = ServerOptions(port=0, data_dir=tmp_path, metrics_port=0, config=CONFIG)

    async def main() -> None:
        server = Server(options)
        await server.start()
        assert server.metrics_port is not None and server.broker is not None and server._log is not None
        runtime = server.broker.runtime
        runtime.reload_backoff_s = (1.0, 1.0)
        coordinator = server.broker.coordinator
        partition = coordinator.partition_for("g")
        try:
            await runtime.wait_loaded()
            async with Client(server.port) as client:

                async def find() -> int:
                    response = await client.call(
                        FindCoordinatorRequest(coordinator_keys=["g"]), FindCoordinatorResponse, 4)
                    return int(response.coordinators[0].error_code)

                assert await find() == Errors.NONE
                fail_disk(server._log, partition)
                committed: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
                coordinator.handle_commit_offsets(
                    "g", "", None, -1, {TopicPartition("t", 0): OffsetAndMetadata(1, "", 1)},
                    committed.set_result)
                assert await asyncio.wait_for(committed, 5) == {TopicPartition("t", 0): Errors.NOT_COORDINATOR}
                assert await find() == Errors.COORDINATOR_NOT_AVAILABLE
                status, state = await http(server.metrics_port, "GET", "/admin/owned-partitions")
                assert status == 200 and state["offline"] == [partition]
                for _ in range(500):
                    if partition in runtime.owned_partitions():
                        break
                    await asyncio.sleep(0.01)
                assert await find() == Errors.NONE, "loaded again after the backoff"
        finally:
            await server.stop()

    run(main)


def test_offset_commit_and_delete_refuse_partitions_a_topic_does_not_have(tmp_path: Path) -> None:
    """Known is checked per partition, as Kafka's metadata cache does: partition 5 of a
    two-partition topic is as unknown as a topic never created."""
    options = ServerOptions(port=0, data_dir=tmp_path, topics=[("declared", 2)], config=CONFIG)

    async def main() -> None:
        async with serving(options) as (_, _, client):
            committed = await client.call(OffsetCommitRequest(group_id="simple", member_id="", topics=[
                OffsetCommitRequestTopic(name="declared", partitions=[
                    OffsetCommitRequestPartition(partition_index=p, committed_offset=7, committed_metadata="")
                    for p in (0, 5)]),
                OffsetCommitRequestTopic(name="never-created", partitions=[
                    OffsetCommitRequestPartition(partition_index=0, committed_offset=7, committed_metadata="")]),
            ]), OffsetCommitResponse, 8)
            assert [(t.name, p.partition_index, p.error_code) for t in committed.topics for p in t.partitions] == [
                ("declared", 0, Errors.NONE), ("declared", 5, Errors.UNKNOWN_TOPIC_OR_PARTITION),
                ("never-created", 0, Errors.UNKNOWN_TOPIC_OR_PARTITION)]
            deleted = await client.call(OffsetDeleteRequest(group_id="simple", topics=[
                OffsetDeleteRequestTopic(name="declared", partitions=[
                    OffsetDeleteRequestPartition(partition_index=p) for p in (0, 5)])]),
                OffsetDeleteResponse, 0)
            assert deleted.error_code == Errors.NONE
            assert [(p.partition_index, p.error_code) for t in deleted.topics for p in t.partitions] == [
                (0, Errors.NONE), (5, Errors.UNKNOWN_TOPIC_OR_PARTITION)]

    run(main)


def test_offset_fetch_answers_the_same_partitions_in_every_version(tmp_path: Path) -> None:
    options = ServerOptions(port=0, data_dir=tmp_path, topics=[("declared", 3)], config=CONFIG)

    async def main() -> None:
        async with serving(options) as (_, _, client):
            await client.call(OffsetCommitRequest(group_id="simple", member_id="", topics=[
                OffsetCommitRequestTopic(name="declared", partitions=[
                    OffsetCommitRequestPartition(partition_index=p, committed_offset=10 + p,
                                                 committed_leader_epoch=p, committed_metadata=f"m{p}")
                    for p in (0, 2)])]), OffsetCommitResponse, 8)
            answers = []
            for version in (6, 7, 8):
                if version >= 8:
                    request = OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id="simple", topics=[
                        OffsetFetchRequestTopics(name="declared", partition_indexes=[0, 1, 2])])])
                else:
                    request = OffsetFetchRequest(group_id="simple", topics=[
                        OffsetFetchRequestTopic(name="declared", partition_indexes=[0, 1, 2])])
                response = await client.call(request, OffsetFetchResponse, version)
                topics = response.groups[0].topics if version >= 8 else response.topics
                answers.append([
                    (t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch,
                     p.metadata, p.error_code)
                    for t in topics for p in t.partitions
                ])
            assert answers[0] == [("declared", 0, 10, 0, "m0", 0), ("declared", 1, -1, -1, "", 0),
                                  ("declared", 2, 12, 2, "m2", 0)]
            assert answers[1] == answers[0] and answers[2] == answers[0]

    run(main)


def test_offsets_topic_partitions_hold_once_the_data_directory_has_them(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """As in Kafka, ``offsets.topic.num.partitions`` counts only when ``__consumer_offsets``
    is created: group ids hash to partitions by the count, so a restart with another would
    look for every group in the wrong partition and find none."""
    options = ServerOptions(port=0, data_dir=tmp_path, topics=[("declared", 1)], config=CONFIG)
    groups = [f"group-{i}" for i in range(12)]

    async def fetched(client: Client, group: str) -> int:
        response = await client.call(OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id=group, topics=[
            OffsetFetchRequestTopics(name="declared", partition_indexes=[0])])]), OffsetFetchResponse, 8)
        return int(response.groups[0].topics[0].partitions[0].committed_offset)

    async def main() -> None:
        async with serving(options) as (_, _, client):
            for offset, group in enumerate(groups):
                await client.call(OffsetCommitRequest(group_id=group, member_id="", topics=[
                    OffsetCommitRequestTopic(name="declared", partitions=[OffsetCommitRequestPartition(
                        partition_index=0, committed_offset=100 + offset, committed_metadata="")])]),
                    OffsetCommitResponse, 8)
        more = Config.from_properties({"offsets.topic.num.partitions": 10, "group.initial.rebalance.delay.ms": 0})
        with caplog.at_level(logging.WARNING, logger="groupcoord.server.app"):
            async with serving(ServerOptions(port=0, data_dir=tmp_path, config=more)) as (server, _, client):
                assert server.config.offsets_topic_num_partitions == 4
                assert [await fetched(client, group) for group in groups] == [100 + i for i in range(12)]
        assert "offsets.topic.num.partitions=10 is ignored: __consumer_offsets in" in caplog.text
        assert json.loads((tmp_path / "metadata.json").read_text())["offsets_topic_partitions"] == 4

    run(main)

    # A data directory from before the count was kept: adopted, unless its partitions say otherwise.
    document = json.loads((tmp_path / "metadata.json").read_text())
    del document["offsets_topic_partitions"]
    (tmp_path / "metadata.json").write_text(json.dumps(document))
    fewer = Config.from_properties({"offsets.topic.num.partitions": 2})
    with pytest.raises(ValueError, match=f"{tmp_path} has __consumer_offsets-3, beyond "
                                         "offsets.topic.num.partitions=2: set it to the count"):
        run(lambda: Server(ServerOptions(port=0, data_dir=tmp_path, config=fewer)).start())


def test_metrics_count_expired_offsets_and_the_cleaners_work(tmp_path: Path) -> None:
    # Found in a soak: both were counted inside but not exported.
    config = CONFIG.with_overrides({
        "offsets.topic.segment.bytes": 1024, "log.cleaner.min.cleanable.ratio": 0.01,
    })
    options = ServerOptions(port=0, data_dir=tmp_path, metrics_port=0, config=config, topics=[("t", 1)])

    def commit(offset: int, commit_timestamp: int = -1) -> OffsetCommitRequest:
        return OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=-1, member_id="", topics=[
            OffsetCommitRequestTopic(name="t", partitions=[OffsetCommitRequestPartition(
                partition_index=0, committed_offset=offset, commit_timestamp=commit_timestamp,
                committed_metadata="")])])

    async def samples(port: int) -> dict[str, float]:
        status, text = await http(port, "GET", "/metrics")
        assert status == 200
        lines = (line.rpartition(" ") for line in text.splitlines() if not line.startswith("#"))
        return {name: float(value) for name, _, value in lines}

    async def main() -> None:
        async with serving(options) as (server, broker, client):
            assert server.metrics_port is not None
            for offset in range(60):  # one key rewritten across many 1 KiB segments
                answer = await client.call(commit(offset), OffsetCommitResponse, 2)
                assert answer.topics[0].partitions[0].error_code == Errors.NONE
            assert broker.cleaner is not None
            await asyncio.to_thread(broker.cleaner.clean_filthiest)
            found = await samples(server.metrics_port)
            assert found["groupcoord_log_cleaner_passes_total"] >= 1
            assert found["groupcoord_log_cleaner_records_removed_total"] > 0
            assert found["groupcoord_log_cleaner_bytes_reclaimed_total"] > 0
            assert found["groupcoord_offsets_expired_total"] == 0
            # A v1 commit stamped a week and a day ago has outlived offsets.retention.minutes.
            stamp = broker.time.milliseconds() - 8 * 86_400_000
            await client.call(commit(99, commit_timestamp=stamp), OffsetCommitResponse, 1)
            assert broker.coordinator.cleanup_group_metadata() == 1
            assert (await samples(server.metrics_port))["groupcoord_offsets_expired_total"] == 1

    run(main)


def test_serving_freezes_what_start_up_made_and_collects_young_objects_less_often() -> None:
    import gc

    from groupcoord.server.app import YOUNG_COLLECTION_THRESHOLD, tune_garbage_collector

    threshold = gc.get_threshold()
    try:
        tune_garbage_collector()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (YOUNG_COLLECTION_THRESHOLD, *threshold[1:])
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


def test_a_client_that_stops_reading_is_served_again_once_it_reads(tmp_path: Path) -> None:
    """Answers are written by the network thread: while a client reads none of them, its
    connection stops being served once they pile up past the high mark, and is served again
    (every answer, in order) once it reads."""
    async def main() -> None:
        async with serving(ServerOptions(port=0, data_dir=tmp_path, config=CONFIG)) as (server, _, client):
            request = DescribeGroupsRequest(groups=[f"group-{i:05}" for i in range(2000)])
            frames = [client.frame(request, 0) for _ in range(60)]
            for frame in frames:
                client.writer.write(struct.pack(">i", len(frame)) + frame)
            [connection] = server.connections
            for _ in range(1000):
                if connection._writing_paused:  # type: ignore[attr-defined]
                    break
                await asyncio.sleep(0.01)
            else:
                raise AssertionError("the connection was never paused for its unwritten answers")
            for frame in frames:
                (size,) = struct.unpack(">i", await client.reader.readexactly(4))
                header, response = decode_response(await client.reader.readexactly(size),
                                                   DescribeGroupsResponse, 0)
                assert header.correlation_id == struct.unpack_from(">i", frame, 4)[0]
                assert [g.group_id for g in response.groups] == request.groups
            assert not connection._writing_paused  # type: ignore[attr-defined]

    run(main)
