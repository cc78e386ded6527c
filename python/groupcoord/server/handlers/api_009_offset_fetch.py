"""OffsetFetch (key 9): a group's committed offsets, whatever the group's state.

Version notes:

- v0-1: the partitions are listed; a group-level error (NOT_COORDINATOR, loading...) is
  given to every partition, since there is no top-level error.
- v2+: the topic list may be null (every committed partition) and a group-level error is
  answered at the top level, with no topics.
- v5+: committed_leader_epoch. v7+: require_stable (KIP-447): a partition with a commit
  still being written is answered UNSTABLE_OFFSET_COMMIT.
- v8+: several groups in one request (KIP-709), each with its own error.
- v9+: member_id and member_epoch (KIP-848); a classic group does not check them.
- A partition without a commit: offset -1, leader epoch -1, metadata "", NONE.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from groupcoord.coordinator.results import PartitionOffset, TopicPartition
from groupcoord.errors import Errors
from groupcoord.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler

T = TypeVar("T", OffsetFetchResponseTopic, OffsetFetchResponseTopics)


def _error_response(request: OffsetFetchRequest, version: int, error: Errors) -> OffsetFetchResponse:
    """Each group's error (v8+), the one group's (v2-7), or each partition's (v0-1)."""
    if version >= 8:
        return OffsetFetchResponse(groups=[
            OffsetFetchResponseGroup(group_id=group.group_id, error_code=error)
            for group in request.groups
        ])
    if version >= 2:
        return OffsetFetchResponse(error_code=error)
    requested = _requested(request.topics) or []
    return OffsetFetchResponse(topics=_topics(
        requested, {tp: PartitionOffset(error=error) for tp in requested},
        OffsetFetchResponseTopic, OffsetFetchResponsePartition,
    ))


@handler(OffsetFetchRequest, versions="0-9", error_response=_error_response)
def offset_fetch(broker: Broker, request: OffsetFetchRequest, ctx: RequestContext) -> None:
    coordinator = broker.coordinator
    if ctx.api_version >= 8:
        groups = []
        for group in request.groups:
            requested = _requested(group.topics)
            error, offsets = coordinator.handle_fetch_offsets(
                group.group_id, request.require_stable, requested,
                member_id=group.member_id if ctx.api_version >= 9 else None,
                member_epoch=group.member_epoch if ctx.api_version >= 9 else -1,
            )
            groups.append(OffsetFetchResponseGroup(
                group_id=group.group_id,
                error_code=error,
                topics=[] if error else _topics(
                    requested, offsets, OffsetFetchResponseTopics, OffsetFetchResponsePartitions
                ),
            ))
        ctx.respond(OffsetFetchResponse(groups=groups))
        return

    requested = _requested(request.topics)
    error, offsets = coordinator.handle_fetch_offsets(
        request.group_id, request.require_stable, requested
    )
    if error:
        ctx.respond(_error_response(request, ctx.api_version, error))
        return
    ctx.respond(OffsetFetchResponse(topics=_topics(
        requested, offsets, OffsetFetchResponseTopic, OffsetFetchResponsePartition
    )))


def _requested(topics: Sequence[OffsetFetchRequestTopic | OffsetFetchRequestTopics] | None
               ) -> list[TopicPartition] | None:
    """The partitions asked for; None for every committed partition."""
    if topics is None:
        return None
    return [TopicPartition(t.name, p) for t in topics for p in t.partition_indexes]


def _topics(
    requested: Sequence[TopicPartition] | None,
    offsets: dict[TopicPartition, PartitionOffset],
    topic: Callable[..., T],
    partition: Callable[..., object],
) -> list[T]:
    """The answer's topics; v0-7 and v8+ declare the same fields as different structs."""
    return [
        topic(name=name, partitions=[
            partition(
                partition_index=index, committed_offset=o.offset,
                committed_leader_epoch=_epoch(o), metadata=o.metadata, error_code=o.error,
            )
            for index, o in partitions
        ])
        for name, partitions in _by_topic(requested, offsets).items()
    ]


def _epoch(offset: PartitionOffset) -> int:
    return offset.leader_epoch if offset.leader_epoch is not None else -1


def _by_topic(
    requested: Sequence[TopicPartition] | None, offsets: dict[TopicPartition, PartitionOffset]
) -> dict[str, list[tuple[int, PartitionOffset]]]:
    """The answer's topics in request order (or sorted, for every committed partition)."""
    order = requested if requested is not None else sorted(offsets)
    topics: dict[str, list[tuple[int, PartitionOffset]]] = {}
    for tp in dict.fromkeys(order):
        topics.setdefault(tp.topic, []).append((tp.partition, offsets.get(tp, PartitionOffset())))
    return topics

