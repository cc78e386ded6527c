"""OffsetForLeaderEpoch (key 23): where a leader epoch ends, for a consumer validating its
position after a leader change (KIP-320).

Every partition here has had one leader epoch, 0, from its first offset: epoch 0 (or an
earlier one, which Kafka answers with the first epoch after it) ends at the log end offset.
An epoch above it is unknown (epoch -1, offset -1), as Kafka answers.

Version notes: v1 answers the leader epoch; v2 current_leader_epoch and throttle_time_ms; v3
replica_id (-2 for consumers); v4 is flexible.
"""

from __future__ import annotations

from groupcoord.errors import Errors
from groupcoord.log import TopicPartition
from groupcoord.protocol.messages.offset_for_leader_epoch import (
    EpochEndOffset,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderTopicResult,
)
from groupcoord.server.broker import Broker
from groupcoord.server.handlers.api_002_list_offsets import LEADER_EPOCH
from groupcoord.server.registry import RequestContext, handler


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
            tp = TopicPartition(topic.topic, p.partition)
            log = broker.replicas.partition(tp)
            if log is None:
                partitions.append(EpochEndOffset(
                    error_code=broker.replicas.partition_error(tp) or Errors.UNKNOWN_TOPIC_OR_PARTITION,
                    partition=p.partition,
                ))
            elif p.leader_epoch > LEADER_EPOCH:
                partitions.append(EpochEndOffset(partition=p.partition))
            else:
                partitions.append(EpochEndOffset(
                    partition=p.partition, leader_epoch=LEADER_EPOCH, end_offset=log.next_offset,
                ))
        topics.append(OffsetForLeaderTopicResult(topic=topic.topic, partitions=partitions))
    ctx.respond(OffsetForLeaderEpochResponse(topics=topics))
