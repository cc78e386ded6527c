"""A load generator speaking the Kafka protocol over many connections, to ``groupcoord serve``
or to a Kafka broker alike.

One connection per member (or per committing client), as real consumers have, each with one
request in flight, as a client has with its coordinator. Requests are encoded with
``groupcoord.protocol``. The generator shares the machine's cores with the server it measures,
so its hot loops cost as little as they can: a :class:`Connection` is a plain
``asyncio.Protocol`` (no stream reader, no coroutine per answer) that writes the next
pre-encoded request from the callback that received the answer to the last, and checks each
answer by comparing its bytes with the first answer, which was decoded and found error-free.

- :meth:`LoadGenerator.form_group` joins N members into one group (KIP-394's two JoinGroups
  each, then SyncGroup, the leader assigning);
- :meth:`LoadGenerator.rebalance` runs one full rebalance of the formed group: the leader
  rejoins (which starts it), every follower rejoins, the join completes, the leader's
  SyncGroup stores the assignment and every member gets its own; timed from the first
  JoinGroup sent to the last SyncGroup answered; :func:`rebalance_together` rebalances
  several groups at once;
- :meth:`LoadGenerator.heartbeats` has every member heartbeat back to back;
- :class:`CommitLoad` has C connections commit offsets back to back to G groups (simple
  commits: generation -1, no member id, as a client that does not use group membership).
"""

from __future__ import annotations

import asyncio
import struct
import time
from collections.abc import Sequence

from groupcoord.errors import Errors
from groupcoord.format import codec
from groupcoord.protocol import (
    Request,
    RequestHeader,
    Response,
    decode_response,
    request_header_version,
)
from groupcoord.protocol.messages.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from groupcoord.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from groupcoord.protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
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
from groupcoord.protocol.messages.sync_group import (
    SyncGroupRequest,
    SyncGroupRequestAssignment,
    SyncGroupResponse,
)

JOIN_VERSION, SYNC_VERSION, HEARTBEAT_VERSION = 5, 3, 3
COMMIT_VERSION, FIND_COORDINATOR_VERSION, METADATA_VERSION = 8, 3, 9
SESSION_TIMEOUT_MS = 60_000
REBALANCE_TIMEOUT_MS = 120_000
COORDINATOR_WAIT_S = 60.0
# Well-formed consumer protocol bytes: Kafka parses a classic group's subscriptions (and logs a
# warning with a stack trace for each one it cannot parse).
SUBSCRIPTION = codec.encode_subscription(codec.ConsumerProtocolSubscription(["bench-events"], None, [], -1, None, 1))
ASSIGNMENT = codec.encode_assignment(codec.ConsumerProtocolAssignment([], None, 0))
# Answers a client retries after a backoff, as real ones do while the coordinator loads its
# partitions after a start (or, on Kafka, while it creates __consumer_offsets or a topic).
RETRIABLE = {Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.COORDINATOR_NOT_AVAILABLE,
             Errors.NOT_COORDINATOR, Errors.LEADER_NOT_AVAILABLE, Errors.UNKNOWN_TOPIC_OR_PARTITION}


def frame(request: Request, version: int, correlation_id: int) -> bytes:
    header = RequestHeader(request_api_key=request.api_key, request_api_version=version,
                           correlation_id=correlation_id, client_id="loadgen")
    body = header.encode(request_header_version(request.is_flexible(version))) + request.encode(version)
    return struct.pack(">i", len(body)) + body


class Connection(asyncio.Protocol):
    """One socket carrying length-prefixed frames, one request in flight.

    :meth:`call` sends one request and returns the answer's frame; :meth:`repeat` sends the same
    pre-encoded request ``count`` times back to back from the receiving callback."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future[bytes] | None = None
        self.request = b""
        self.expected = b""
        self.remaining = 0

    @classmethod
    async def open(cls, host: str, port: int) -> Connection:
        _, connection = await asyncio.get_running_loop().create_connection(cls, host, port)
        return connection

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is no asyncio.Transport

    def connection_lost(self, exc: Exception | None) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError(f"the server closed the connection ({exc})"))

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while len(self.buffer) >= 4:
            (size,) = struct.unpack_from(">i", self.buffer)
            if len(self.buffer) < 4 + size:
                return
            answer = bytes(self.buffer[4:4 + size])
            del self.buffer[:4 + size]
            self._answered(answer)

    def _answered(self, answer: bytes) -> None:
        waiter = self.waiter
        assert waiter is not None, "an answer nobody asked for"
        if self.remaining == 0:
            self.waiter = None
            waiter.set_result(answer)
        elif answer != self.expected:
            self.remaining = 0
            self.waiter = None
            waiter.set_result(answer)  # the caller decodes it to say what went wrong
        else:
            self.remaining -= 1
            if self.remaining == 0:
                self.waiter = None
                waiter.set_result(answer)
            else:
                assert self.transport is not None
                self.transport.write(self.request)

    def _send(self, request: bytes) -> asyncio.Future[bytes]:
        assert self.transport is not None and self.waiter is None
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self.waiter

    async def call(self, request: bytes) -> bytes:
        return await self._send(request)

    async def repeat(self, request: bytes, count: int, expected: bytes) -> bytes:
        """Send ``request`` ``count`` times, each once the last is answered; returns the last
        answer, or the first that differs from ``expected``."""
        self.request, self.expected, self.remaining = request, expected, count
        return await self._send(request)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


def decode(answer: bytes, response_cls: type[Response], version: int) -> Response:
    _, response = decode_response(answer, response_cls, version)
    return response


async def call(connection: Connection, request: Request, response_cls: type[Response], version: int) -> Response:
    return decode(await connection.call(frame(request, version, 1)), response_cls, version)


def _first_error(response: Response) -> Errors:
    """The first error code of an OffsetCommit or Heartbeat answer other than NONE, or NONE."""
    if isinstance(response, OffsetCommitResponse):
        codes = [p.error_code for t in response.topics for p in t.partitions]
    else:
        codes = [response.error_code]  # type: ignore[attr-defined]
    return next((Errors(c) for c in codes if c != Errors.NONE), Errors.NONE)


async def expect_none(connection: Connection, request: bytes, response_cls: type[Response], version: int,
                      timeout_s: float = COORDINATOR_WAIT_S) -> bytes:
    """Send ``request`` until it is answered without error (retrying what a client retries);
    the answer's bytes, to compare later answers with."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = await connection.call(request)
        error = _first_error(decode(answer, response_cls, version))
        if error == Errors.NONE:
            return answer
        if error not in RETRIABLE or time.monotonic() > deadline:
            raise RuntimeError(f"{response_cls.__name__} answered {error.name}")
        await asyncio.sleep(0.1)


async def repeat_checked(connection: Connection, request: bytes, count: int, expected: bytes,
                         response_cls: type[Response], version: int) -> None:
    last = await connection.repeat(request, count, expected)
    if last != expected:
        error = _first_error(decode(last, response_cls, version))
        raise RuntimeError(f"{response_cls.__name__} answered {error.name}: {last.hex()}")


class Member:
    """A group member on its own connection."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.member_id = ""

    async def await_rebalance(self, group: str, generation: int, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        request = HeartbeatRequest(group_id=group, generation_id=generation, member_id=self.member_id)
        while True:
            response = await call(self.connection, request, HeartbeatResponse, HEARTBEAT_VERSION)
            assert isinstance(response, HeartbeatResponse)
            if response.error_code == Errors.REBALANCE_IN_PROGRESS:
                return
            if time.monotonic() > deadline:
                raise RuntimeError("the group never started rebalancing")

    def join_request(self, group: str) -> JoinGroupRequest:
        return JoinGroupRequest(
            group_id=group, session_timeout_ms=SESSION_TIMEOUT_MS,
            rebalance_timeout_ms=REBALANCE_TIMEOUT_MS, member_id=self.member_id,
            protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)],
        )

    async def join(self, group: str) -> JoinGroupResponse:
        deadline = time.monotonic() + COORDINATOR_WAIT_S
        while True:
            response = await call(self.connection, self.join_request(group), JoinGroupResponse, JOIN_VERSION)
            assert isinstance(response, JoinGroupResponse)
            if response.error_code == Errors.MEMBER_ID_REQUIRED:
                self.member_id = response.member_id
            elif response.error_code in RETRIABLE and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            else:
                break
        if response.error_code != Errors.NONE:
            raise RuntimeError(f"JoinGroup answered {Errors(response.error_code).name}")
        self.member_id = response.member_id
        return response

    async def sync(self, group: str, generation: int, assignments: Sequence[str]) -> None:
        request = SyncGroupRequest(
            group_id=group, generation_id=generation, member_id=self.member_id,
            assignments=[SyncGroupRequestAssignment(member_id=m, assignment=ASSIGNMENT)
                         for m in assignments],
        )
        response = await call(self.connection, request, SyncGroupResponse, SYNC_VERSION)
        assert isinstance(response, SyncGroupResponse)
        if response.error_code != Errors.NONE:
            raise RuntimeError(f"SyncGroup answered {Errors(response.error_code).name}")


async def find_coordinator(connection: Connection, group: str) -> None:
    """Ask for ``group``'s coordinator until it is answered without error."""
    request = frame(FindCoordinatorRequest(key=group), FIND_COORDINATOR_VERSION, 1)
    deadline = time.monotonic() + COORDINATOR_WAIT_S
    while (error := Errors(decode(await connection.call(request), FindCoordinatorResponse,
                                  FIND_COORDINATOR_VERSION).error_code)) != Errors.NONE:  # type: ignore[attr-defined]
        if error not in RETRIABLE or time.monotonic() > deadline:
            raise RuntimeError(f"FindCoordinator answered {error.name}")
        await asyncio.sleep(0.1)


class LoadGenerator:
    """One group of ``members`` members, each on its own connection."""

    def __init__(self, host: str, port: int, group: str, members: int) -> None:
        self.host, self.port, self.group, self.size = host, port, group, members
        self.members: list[Member] = []
        self.generation = -1
        self.leader: Member | None = None

    async def connect(self) -> None:
        """Open the members' connections and find the group's coordinator, as clients do
        before they join (on Kafka that creates ``__consumer_offsets``)."""
        for _ in range(self.size):
            self.members.append(Member(await Connection.open(self.host, self.port)))
        await find_coordinator(self.members[0].connection, self.group)

    async def close(self) -> None:
        for member in self.members:
            member.connection.close()
        await asyncio.sleep(0)

    async def _join_and_sync(self, first: Sequence[Member], then: Sequence[Member]) -> None:
        joins = [asyncio.ensure_future(m.join(self.group)) for m in first]
        if then:
            # Followers learn of the rebalance the leader started as real ones do: from a
            # heartbeat answered REBALANCE_IN_PROGRESS.
            await then[0].await_rebalance(self.group, self.generation)
        joins += [asyncio.ensure_future(m.join(self.group)) for m in then]
        responses = await asyncio.gather(*joins)
        generation = responses[0].generation_id
        leader_id = responses[0].leader
        by_id = {m.member_id: m for m in self.members}
        self.leader = by_id[leader_id]
        self.generation = generation
        everyone = [m.member_id for m in self.members]
        await asyncio.gather(*(
            m.sync(self.group, generation, everyone if m is self.leader else []) for m in self.members
        ))

    async def form_group(self) -> None:
        """Join every member into the group (the server's initial rebalance delay gathers them)."""
        await self._join_and_sync(self.members, [])

    async def rebalance(self) -> float:
        """One full rebalance of the formed group; returns its duration in seconds."""
        assert self.leader is not None
        followers = [m for m in self.members if m is not self.leader]
        started = time.perf_counter()
        await self._join_and_sync([self.leader], followers)
        return time.perf_counter() - started

    async def heartbeats(self, total: int) -> float:
        """``total`` heartbeats spread over every member; returns the seconds they took."""
        per_member = max(1, total // len(self.members))
        requests, expected = [], []
        for member in self.members:
            request = frame(HeartbeatRequest(group_id=self.group, generation_id=self.generation,
                                             member_id=member.member_id), HEARTBEAT_VERSION, 1)
            requests.append(request)
            expected.append(await expect_none(member.connection, request, HeartbeatResponse,
                                              HEARTBEAT_VERSION, timeout_s=0))
        started = time.perf_counter()
        await asyncio.gather(*(
            repeat_checked(m.connection, r, per_member, e, HeartbeatResponse, HEARTBEAT_VERSION)
            for m, r, e in zip(self.members, requests, expected)
        ))
        return time.perf_counter() - started


async def rebalance_together(groups: Sequence[LoadGenerator]) -> float:
    """Rebalance every formed group at once; the seconds from the first JoinGroup sent to the
    last SyncGroup answered across all of them."""
    started = time.perf_counter()
    await asyncio.gather(*(g.rebalance() for g in groups))
    return time.perf_counter() - started


async def create_topic(host: str, port: int, topic: str, partitions: int, timeout_s: float = COORDINATOR_WAIT_S) -> None:
    """Have the server create ``topic`` as a client's Metadata request does
    (``auto.create.topics.enable``, ``num.partitions`` set to ``partitions`` on the server),
    and wait until every partition has a leader."""
    connection = await Connection.open(host, port)
    request = MetadataRequest(topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=True)
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            response = await call(connection, request, MetadataResponse, METADATA_VERSION)
            assert isinstance(response, MetadataResponse)
            (found,) = response.topics
            if found.error_code == Errors.NONE and all(p.leader_id >= 0 for p in found.partitions):
                if len(found.partitions) != partitions:
                    raise RuntimeError(f"{topic} has {len(found.partitions)} partitions, not {partitions}"
                                       " (set num.partitions on the server)")
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{topic} was not created: {Errors(found.error_code).name}")
            await asyncio.sleep(0.1)
    finally:
        connection.close()


class CommitLoad:
    """``connections`` clients committing back to back to ``groups`` groups (connection i to
    group i mod G), each commit ``partitions`` partitions of ``topic`` (which must exist:
    :func:`create_topic`), with generation -1 and no member id."""

    def __init__(self, host: str, port: int, topic: str, connections: int, groups: int,
                 partitions: int, prefix: str = "bench-commits") -> None:
        self.host, self.port = host, port
        self.groups = [f"{prefix}-{g}" for g in range(groups)]
        self.requests = [
            frame(OffsetCommitRequest(
                group_id=self.groups[i % groups], generation_id_or_member_epoch=-1, member_id="",
                topics=[OffsetCommitRequestTopic(name=topic, partitions=[
                    OffsetCommitRequestPartition(partition_index=p, committed_offset=1_000 + i,
                                                 committed_metadata="")
                    for p in range(partitions)
                ])],
            ), COMMIT_VERSION, 1)
            for i in range(connections)
        ]
        self.connections: list[Connection] = []
        self.expected: list[bytes] = []

    async def connect(self) -> None:
        """Open the connections, find each group's coordinator (which on Kafka creates
        ``__consumer_offsets``) and commit once on each, until answered without error."""
        for _ in self.requests:
            self.connections.append(await Connection.open(self.host, self.port))
        for group in self.groups:
            await find_coordinator(self.connections[0], group)
        for connection, request in zip(self.connections, self.requests):
            self.expected.append(await expect_none(connection, request, OffsetCommitResponse, COMMIT_VERSION))

    async def run(self, total: int) -> float:
        """``total`` commits spread over the connections; returns the seconds they took."""
        per_connection = max(1, total // len(self.connections))
        started = time.perf_counter()
        await asyncio.gather(*(
            repeat_checked(c, r, per_connection, e, OffsetCommitResponse, COMMIT_VERSION)
            for c, r, e in zip(self.connections, self.requests, self.expected)
        ))
        return time.perf_counter() - started

    def close(self) -> None:
        for connection in self.connections:
            connection.close()
