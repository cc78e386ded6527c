"""OffsetForLeaderEpoch (key 23): where a leader epoch ends, for a consumer validating its
position after a leader change (KIP-320).

Every partition has had one leader epoch, 0, ending at the log end offset 0. An epoch
above it is unknown (epoch -1, offset -1), as Kafka answers.

Version notes: v1 answers the leader epoch; v2 current_leader_epoch and throttle_time_ms; v3
replica_id (-2 for consumers); v4 is flexible.
"""

from __future__ import annotations

from groupcoord.errors import Errors
from groupcoord.protocol.messages.offset_for_leader_epoch import (
    EpochEndOffset,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderTopicResult,
)
from groupcoord.server.broker import Broker
from groupcoord.server.handlers.api_002_list_offsets import LOG_END_OFFSET
from groupcoord.server.registry import RequestContext, handler

LEADER_EPOCH = 0


def _error_response(
    request: OffsetForLeaderEpochRequest, version: int, error: Errors
) -> OffsetForLeaderEpochResponse:
    return OffsetForLeaderEpochResponse(topics=[
        OffsetForLeaderTopicResult(topic=topic.topic, partitions=[
            EpochEndOffset(error_code=error, partition=p.partition) for p in topic.partitions
        ])
        for topic in request.topics
    ])


@handler(OffsetForLeaderEpochRequest, versions="0-4", error_response=_error_response)
def offset_for_leader_epoch(
    broker: Broker, request: OffsetForLeaderEpochRequest, ctx: RequestContext
) -> None:
    topics = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            if not broker.topics.has_partition(topic.topic, p.partition):
                partitions.append(EpochEndOffset(
                    error_code=Errors.UNKNOWN_TOPIC_OR_PARTITION, partition=p.partition,
                ))
            elif p.leader_epoch > LEADER_EPOCH:
                partitions.append(EpochEndOffset(partition=p.partition))
            else:
                partitions.append(EpochEndOffset(
                    partition=p.partition, leader_epoch=LEADER_EPOCH, end_offset=LOG_END_OFFSET,
                ))
        topics.append(OffsetForLeaderTopicResult(topic=topic.topic, partitions=partitions))
    ctx.respond(OffsetForLeaderEpochResponse(topics=topics))
