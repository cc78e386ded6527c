"""ListOffsets (key 2): offsets by timestamp, from the topics' logs (``__consumer_offsets``'s
too, where this node owns the partition: NOT_LEADER_OR_FOLLOWER elsewhere).

Kafka's ``ReplicaManager.fetchOffsetForTimestamp`` for a consumer on one node:

- latest (-1): the high watermark (the last stable offset is the same: no transaction is ever
  open here);
- earliest (-2) and earliest local (-4, v8+): the log start offset;
- max timestamp (-3, v7+): the first record with the largest timestamp (KIP-734);
- latest tiered (-5, v9+): -1 (no tiered storage);
- a timestamp >= 0: the first record at or after it (through the time index), or -1 when none;
- another negative timestamp, or one above the request's version: UNSUPPORTED_VERSION.

Found offsets carry leader epoch 0 (every partition here has had one leader); not found ones
-1.

Version notes:

- v0: old-style answers, a list of up to max_num_offsets offsets.
- v1+: a partition named twice gets INVALID_REQUEST in each place, as Kafka answers it.
- v2+: isolation_level, throttle_time_ms.
- v4+: leader epochs (KIP-320).
- v10: timeout_ms. Advertising v7+ matters: kafka-python infers the broker's release from it
  (>= 3.0 at v7, 4.0 at v10), which sets its defaults (45 s sessions, static membership).
"""

from __future__ import annotations

from collections import Counter

from groupcoord.errors import Errors
from groupcoord.log import TopicPartition
from groupcoord.protocol.messages.list_offsets import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler
from groupcoord.storage import PartitionLog

MAX_TIMESTAMP = -3
LOCAL_LOG_START_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5
MIN_VERSION = {MAX_TIMESTAMP: 7, LOCAL_LOG_START_TIMESTAMP: 8, LATEST_TIERED_TIMESTAMP: 9}
LEADER_EPOCH = 0
NOT_FOUND = -1


def _error_response(request: ListOffsetsRequest, version: int, error: Errors) -> ListOffsetsResponse:
    return ListOffsetsResponse(topics=[
        ListOffsetsTopicResponse(name=topic.name, partitions=[
            ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=error)
            for p in topic.partitions
        ])
        for topic in request.topics
    ])


def _lookup(log: PartitionLog, timestamp: int) -> tuple[int, int] | None:
    """(offset, timestamp) for a lookup that is not an error, or None: nothing found."""
    if timestamp == LATEST_TIMESTAMP:
        return log.high_watermark, NOT_FOUND
    if timestamp in (EARLIEST_TIMESTAMP, LOCAL_LOG_START_TIMESTAMP):
        return log.log_start_offset, NOT_FOUND
    if timestamp == MAX_TIMESTAMP:
        return log.max_timestamp_offset()
    if timestamp == LATEST_TIERED_TIMESTAMP:
        return None
    return log.offset_for_timestamp(timestamp)


@handler(ListOffsetsRequest, versions="0-10", error_response=_error_response)
def list_offsets(broker: Broker, request: ListOffsetsRequest, ctx: RequestContext) -> None:
    named = Counter((t.name, p.partition_index) for t in request.topics for p in t.partitions)
    topics = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            index = p.partition_index
            log = broker.replicas.partition(TopicPartition(topic.name, index))
            error = None
            if ctx.api_version >= 1 and named[topic.name, index] > 1:
                error = Errors.INVALID_REQUEST
            elif p.timestamp < 0 and (
                p.timestamp < LATEST_TIERED_TIMESTAMP or ctx.api_version < MIN_VERSION.get(p.timestamp, 0)
            ):
                error = Errors.UNSUPPORTED_VERSION
            elif log is None:
                error = broker.replicas.partition_error(TopicPartition(topic.name, index)) or (
                    Errors.UNKNOWN_TOPIC_OR_PARTITION
                )
            if error is not None or log is None:
                partitions.append(ListOffsetsPartitionResponse(
                    partition_index=index, error_code=error or Errors.UNKNOWN_TOPIC_OR_PARTITION,
                ))
                continue
            found = _lookup(log, p.timestamp)
            if found is None:
                partitions.append(ListOffsetsPartitionResponse(
                    partition_index=index, old_style_offsets=[],
                    offset=NOT_FOUND, timestamp=NOT_FOUND, leader_epoch=NOT_FOUND,
                ))
            else:
                offset, found_timestamp = found
                partitions.append(ListOffsetsPartitionResponse(
                    partition_index=index,
                    old_style_offsets=[offset] if p.max_num_offsets > 0 else [],
                    offset=offset, timestamp=found_timestamp, leader_epoch=LEADER_EPOCH,
                ))
        topics.append(ListOffsetsTopicResponse(name=topic.name, partitions=partitions))
    ctx.respond(ListOffsetsResponse(topics=topics))
