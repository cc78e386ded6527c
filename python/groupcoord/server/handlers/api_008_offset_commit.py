"""OffsetCommit (key 8): store a group's offsets in ``__consumer_offsets``; answered once the
records are written.

Version notes:

- v0 has no generation or member id: a commit for a group that only stores offsets.
- v1: a commit timestamp per partition (-1: now), kept as the commit's timestamp.
- v2-4: retention_time_ms (-1: the broker's offsets.retention.minutes); a given retention sets
  the offset's expire timestamp to now + retention, as Kafka's old semantics do. A sum past
  the int64 range is kept at its largest value (Kafka's long wraps around to the past,
  which expires the offset at the next check).
- v6+: committed_leader_epoch (-1: none). v7+: group_instance_id (KIP-345).
- v9+: a commit with a generation for a group that does not exist gets GROUP_ID_NOT_FOUND
  (ILLEGAL_GENERATION before).
- A partition this node does not know (unknown topic, or beyond its partition count) gets
  UNKNOWN_TOPIC_OR_PARTITION and is not stored (Kafka checks its metadata cache the same
  way); the others are.
"""

from __future__ import annotations

from groupcoord.coordinator.results import OffsetAndMetadata, TopicPartition
from groupcoord.errors import Errors
from groupcoord.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler

NO_TIMESTAMP = -1
DEFAULT_RETENTION = -1
MAX_TIMESTAMP_MS = 2**63 - 1


def _response(
    request: OffsetCommitRequest, results: dict[TopicPartition, Errors], others: Errors
) -> OffsetCommitResponse:
    """Each partition's result; ``others`` for a partition without one."""
    return OffsetCommitResponse(topics=[
        OffsetCommitResponseTopic(name=topic.name, partitions=[
            OffsetCommitResponsePartition(
                partition_index=p.partition_index,
                error_code=results.get(TopicPartition(topic.name, p.partition_index), others),
            )
            for p in topic.partitions
        ])
        for topic in request.topics
    ])


def _error_response(request: OffsetCommitRequest, version: int, error: Errors) -> OffsetCommitResponse:
    return _response(request, {}, error)


@handler(OffsetCommitRequest, versions="0-9", error_response=_error_response)
def offset_commit(broker: Broker, request: OffsetCommitRequest, ctx: RequestContext) -> None:
    version = ctx.api_version
    now = broker.time.milliseconds()
    retention = request.retention_time_ms if 2 <= version <= 4 else DEFAULT_RETENTION
    expire = min(now + retention, MAX_TIMESTAMP_MS) if retention != DEFAULT_RETENTION else None
    requested = {
        TopicPartition(topic.name, p.partition_index): p
        for topic in request.topics for p in topic.partitions
    }
    known, unknown_partitions = broker.topics.split_known(requested)
    unknown = dict.fromkeys(unknown_partitions, Errors.UNKNOWN_TOPIC_OR_PARTITION)
    offsets: dict[TopicPartition, OffsetAndMetadata] = {}
    for tp in known:
        p = requested[tp]
        offsets[tp] = OffsetAndMetadata(
            committed_offset=p.committed_offset,
            metadata=p.committed_metadata or "",
            commit_timestamp_ms=(
                p.commit_timestamp if version == 1 and p.commit_timestamp != NO_TIMESTAMP
                else now
            ),
            leader_epoch=p.committed_leader_epoch if p.committed_leader_epoch >= 0 else None,
            expire_timestamp_ms=expire,
        )

    def answer(results: dict[TopicPartition, Errors]) -> None:
        ctx.respond(_response(request, results, Errors.UNKNOWN_TOPIC_OR_PARTITION))

    if not offsets:
        answer(unknown)
        return
    broker.coordinator.handle_commit_offsets(
        request.group_id,
        request.member_id,
        request.group_instance_id,
        request.generation_id_or_member_epoch,
        offsets,
        (lambda results: answer({**unknown, **results})) if unknown else answer,
        unknown_group_error=Errors.GROUP_ID_NOT_FOUND if version >= 9 else Errors.ILLEGAL_GENERATION,
        api_version=version,
    )
