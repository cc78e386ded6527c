"""A load generator speaking the Kafka protocol to ``groupcoord serve`` over many connections.

One connection per member, as real consumers have. Requests are encoded with
``groupcoord.protocol`` (heartbeats once, up front) and each connection keeps one request in
flight, as a client does with its coordinator:

- :meth:`LoadGenerator.form_group` joins N members into one group (KIP-394's two JoinGroups
  each, then SyncGroup, the leader assigning);
- :meth:`LoadGenerator.rebalance` runs one full rebalance of the formed group: the leader
  rejoins (which starts it), every follower rejoins, the join completes, the leader's
  SyncGroup stores the assignment and every member gets its own; timed from the first
  JoinGroup sent to the last SyncGroup answered;
- :meth:`LoadGenerator.heartbeats` has every member heartbeat back to back for a number of
  heartbeats in total.
"""

from __future__ import annotations

import asyncio
import struct
import time
from collections.abc import Sequence

from groupcoord.errors import Errors
from groupcoord.protocol import Request, RequestHeader, Response, decode_response, request_header_version
from groupcoord.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from groupcoord.protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
)
from groupcoord.protocol.messages.sync_group import (
    SyncGroupRequest,
    SyncGroupRequestAssignment,
    SyncGroupResponse,
)

JOIN_VERSION, SYNC_VERSION, HEARTBEAT_VERSION = 5, 3, 3
SESSION_TIMEOUT_MS = 60_000
REBALANCE_TIMEOUT_MS = 120_000
COORDINATOR_WAIT_S = 60.0
# Answers a client retries after a backoff, as real ones do while the coordinator loads its
# partitions after a start.
RETRIABLE = {Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR}


def frame(request: Request, version: int, correlation_id: int) -> bytes:
    header = RequestHeader(request_api_key=request.api_key, request_api_version=version,
                           correlation_id=correlation_id, client_id="loadgen")
    body = header.encode(request_header_version(request.is_flexible(version))) + request.encode(version)
    return struct.pack(">i", len(body)) + body


class Member:
    """One connection, one request at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.member_id = ""
        self.correlation_id = 0

    async def call(self, request: Request, response_cls: type[Response], version: int) -> Response:
        self.correlation_id += 1
        self.writer.write(frame(request, version, self.correlation_id))
        return await self.receive(response_cls, version)

    async def receive(self, response_cls: type[Response], version: int) -> Response:
        (size,) = struct.unpack(">i", await self.reader.readexactly(4))
        _, response = decode_response(await self.reader.readexactly(size), response_cls, version)
        return response

    async def await_rebalance(self, group: str, generation: int, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        request = HeartbeatRequest(group_id=group, generation_id=generation, member_id=self.member_id)
        while True:
            response = await self.call(request, HeartbeatResponse, HEARTBEAT_VERSION)
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
            protocols=[JoinGroupRequestProtocol(name="range", metadata=b"\x00\x00\x00\x00\x00\x00")],
        )

    async def join(self, group: str) -> JoinGroupResponse:
        deadline = time.monotonic() + COORDINATOR_WAIT_S
        while True:
            response = await self.call(self.join_request(group), JoinGroupResponse, JOIN_VERSION)
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
            assignments=[SyncGroupRequestAssignment(member_id=m, assignment=b"\x00\x00")
                         for m in assignments],
        )
        response = await self.call(request, SyncGroupResponse, SYNC_VERSION)
        assert isinstance(response, SyncGroupResponse)
        if response.error_code != Errors.NONE:
            raise RuntimeError(f"SyncGroup answered {Errors(response.error_code).name}")


class LoadGenerator:
    def __init__(self, host: str, port: int, group: str, members: int) -> None:
        self.host, self.port, self.group, self.size = host, port, group, members
        self.members: list[Member] = []
        self.generation = -1
        self.leader: Member | None = None

    async def connect(self) -> None:
        for _ in range(self.size):
            self.members.append(Member(*await asyncio.open_connection(self.host, self.port)))

    async def close(self) -> None:
        for member in self.members:
            member.writer.close()
        await asyncio.gather(*(m.writer.wait_closed() for m in self.members), return_exceptions=True)

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

        async def beat(member: Member) -> None:
            request = frame(HeartbeatRequest(group_id=self.group, generation_id=self.generation,
                                             member_id=member.member_id), HEARTBEAT_VERSION, 1)
            for _ in range(per_member):
                member.writer.write(request)
                (size,) = struct.unpack(">i", await member.reader.readexactly(4))
                answer = await member.reader.readexactly(size)
                if answer[-2:] != b"\x00\x00":  # error_code, the body's last field
                    raise RuntimeError(f"heartbeat answered error {answer[-2:].hex()}")

        started = time.perf_counter()
        await asyncio.gather(*(beat(m) for m in self.members))
        return time.perf_counter() - started
