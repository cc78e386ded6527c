"""Wire protocol benchmarks: a server's work per request, ours against kafka-python 3.

One round trip = decode a request frame (header and body), build the response, encode the
response frame (header, body, size prefix). ``ours`` uses ``groupcoord.protocol``
(``decode_request`` / ``encode_response``); ``kafka-python`` its generated protocol classes
(``decode(header=True)`` / ``encode(header=True, framed=True)``). Both answer with the same
bytes, which ``extra_info["same_bytes"]`` records. Workloads: Heartbeat v4, JoinGroup v5 (three
members, the leader's answer) and OffsetCommit v8 (one topic, ten partitions).

Run: ``.venv/bin/python -m pytest benches/bench_protocol.py --benchmark-json=protocol.json``,
then ``.venv/bin/python benches/report_protocol.py protocol.json`` for the table;
``extra_info["us_per_round_trip"]`` is the median round divided by its round trips.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from kafka.protocol.consumer.group import (
    HeartbeatRequest as KpHeartbeatRequest,
    HeartbeatResponse as KpHeartbeatResponse,
    JoinGroupRequest as KpJoinGroupRequest,
    JoinGroupResponse as KpJoinGroupResponse,
    OffsetCommitRequest as KpOffsetCommitRequest,
    OffsetCommitResponse as KpOffsetCommitResponse,
)

from groupcoord.protocol import RequestHeader, decode_request, encode_response
from groupcoord.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from groupcoord.protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
    JoinGroupResponseMember,
)
from groupcoord.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from groupcoord.protocol.message import Request

from conftest import scaled

ROUND_TRIPS = scaled(20_000, 50)
SUBSCRIPTION = bytes.fromhex("0001 00000001 0006 6f7264657273 ffffffff 00000000")
MEMBERS = [f"consumer-1-{i:032x}" for i in range(3)]


def request_frame(request: Request, version: int) -> bytes:
    header = RequestHeader(
        request_api_key=request.api_key,
        request_api_version=version,
        correlation_id=17,
        client_id="consumer-1",
    )
    return header.encode(2 if request.is_flexible(version) else 1) + request.encode(version)


def heartbeat() -> tuple[bytes, int, Callable[[Any], Any], Callable[[Any], Any]]:
    request = HeartbeatRequest(group_id="orders", generation_id=5, member_id=MEMBERS[0])

    def ours(req: Any) -> Any:
        return HeartbeatResponse(error_code=0)

    def theirs(req: Any) -> Any:
        return KpHeartbeatResponse(throttle_time_ms=0, error_code=0)

    return request_frame(request, 4), 4, ours, theirs


def join_group() -> tuple[bytes, int, Callable[[Any], Any], Callable[[Any], Any]]:
    request = JoinGroupRequest(
        group_id="orders",
        session_timeout_ms=45_000,
        rebalance_timeout_ms=300_000,
        member_id=MEMBERS[0],
        protocol_type="consumer",
        protocols=[
            JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION),
            JoinGroupRequestProtocol(name="roundrobin", metadata=SUBSCRIPTION),
        ],
    )

    def ours(req: Any) -> Any:
        return JoinGroupResponse(
            generation_id=6,
            protocol_name=req.protocols[0].name,
            leader=req.member_id,
            member_id=req.member_id,
            members=[JoinGroupResponseMember(member_id=m, metadata=SUBSCRIPTION) for m in MEMBERS],
        )

    def theirs(req: Any) -> Any:
        member = KpJoinGroupResponse.JoinGroupResponseMember
        return KpJoinGroupResponse(
            throttle_time_ms=0,
            error_code=0,
            generation_id=6,
            protocol_name=req.protocols[0].name,
            leader=req.member_id,
            member_id=req.member_id,
            members=[
                member(member_id=m, group_instance_id=None, metadata=SUBSCRIPTION) for m in MEMBERS
            ],
        )

    return request_frame(request, 5), 5, ours, theirs


def offset_commit() -> tuple[bytes, int, Callable[[Any], Any], Callable[[Any], Any]]:
    partitions = [
        OffsetCommitRequestPartition(
            partition_index=i, committed_offset=1000 + i, committed_metadata=""
        )
        for i in range(10)
    ]
    request = OffsetCommitRequest(
        group_id="orders",
        generation_id_or_member_epoch=6,
        member_id=MEMBERS[0],
        topics=[OffsetCommitRequestTopic(name="orders", partitions=partitions)],
    )

    def ours(req: Any) -> Any:
        return OffsetCommitResponse(
            topics=[
                OffsetCommitResponseTopic(
                    name=t.name,
                    partitions=[
                        OffsetCommitResponsePartition(partition_index=p.partition_index)
                        for p in t.partitions
                    ],
                )
                for t in req.topics
            ]
        )

    def theirs(req: Any) -> Any:
        topic_cls = KpOffsetCommitResponse.OffsetCommitResponseTopic
        partition_cls = topic_cls.OffsetCommitResponsePartition
        return KpOffsetCommitResponse(
            throttle_time_ms=0,
            topics=[
                topic_cls(
                    name=t.name,
                    partitions=[
                        partition_cls(partition_index=p.partition_index, error_code=0)
                        for p in t.partitions
                    ],
                )
                for t in req.topics
            ],
        )

    return request_frame(request, 8), 8, ours, theirs


WORKLOADS = {
    "heartbeat-v4": heartbeat,
    "join-group-v5": join_group,
    "offset-commit-v8": offset_commit,
}
KAFKA_PYTHON_REQUESTS = {
    "heartbeat-v4": KpHeartbeatRequest,
    "join-group-v5": KpJoinGroupRequest,
    "offset-commit-v8": KpOffsetCommitRequest,
}


def ours_round_trip(frame: bytes, version: int, respond: Callable[[Any], Any]) -> bytes:
    header, request = decode_request(frame)
    return encode_response(header.correlation_id, respond(request), version)


def kafka_python_round_trip(
    frame: bytes, version: int, respond: Callable[[Any], Any], request_cls: Any
) -> bytes:
    request = request_cls.decode(frame, version=version, header=True)
    response = respond(request)
    response.encode(version=version)  # sets the version before the header exists
    response.with_header(correlation_id=request.header.correlation_id)
    return bytes(response.encode(header=True, framed=True))


@pytest.mark.parametrize("impl", ["ours", "kafka-python"])
@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_round_trip(benchmark: Any, workload: str, impl: str) -> None:
    frame, version, ours, theirs = WORKLOADS[workload]()
    request_cls = KAFKA_PYTHON_REQUESTS[workload]

    def run_ours() -> bytes:
        out = b""
        for _ in range(ROUND_TRIPS):
            out = ours_round_trip(frame, version, ours)
        return out

    def run_theirs() -> bytes:
        out = b""
        for _ in range(ROUND_TRIPS):
            out = kafka_python_round_trip(frame, version, theirs, request_cls)
        return out

    benchmark.group = f"protocol-{workload}"
    result = benchmark.pedantic(
        run_ours if impl == "ours" else run_theirs, rounds=scaled(5, 1), iterations=1
    )
    same = (
        result
        == ours_round_trip(frame, version, ours)
        == kafka_python_round_trip(frame, version, theirs, request_cls)
    )
    assert same
    benchmark.extra_info.update(round_trips=ROUND_TRIPS, same_bytes=same)
    if benchmark.stats is not None:
        benchmark.extra_info["us_per_round_trip"] = benchmark.stats.stats.median / ROUND_TRIPS * 1e6
