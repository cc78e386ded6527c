"""ListOffsets (key 2): offsets by timestamp; every partition here is empty.

The log start and end offset of every partition is 0, so the earliest (-2), latest (-1) and
local-log-start (-4) offsets are 0; no record has a timestamp, so a timestamp lookup (>= 0)
and the max-timestamp (-3) and other special lookups find nothing (offset -1, timestamp -1).

Version notes:

- v0: old-style answers, a list of up to max_num_offsets offsets.
- v1+: a partition named twice gets INVALID_REQUEST in each place, as Kafka answers it.
- v2+: isolation_level (nothing is transactional here), throttle_time_ms.
- v4+: leader epochs (KIP-320); ours is always 0.
- v7-v9 add special timestamps (-3, -4, -5); v10 timeout_ms. Advertising v7+ matters:
  kafka-python infers the broker's release from it (>= 3.0 at v7, 4.0 at v10), which sets
  its defaults (45 s sessions, static membership).
"""

from __future__ import annotations

from collections import Counter

from groupcoord.errors import Errors
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

LOCAL_LOG_START_TIMESTAMP = -4
LOG_END_OFFSET = 0
"""Every partition's log start and end offset: topics hold no records."""
_AT_LOG_BOUNDARY = (EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, LOCAL_LOG_START_TIMESTAMP)


def _error_response(request: ListOffsetsRequest, version: int, error: Errors) -> ListOffsetsResponse:
    return ListOffsetsResponse(topics=[
        ListOffsetsTopicResponse(name=topic.name, partitions=[
            ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=error)
            for p in topic.partitions
        ])
        for topic in request.topics
    ])


@handler(ListOffsetsRequest, versions="0-10", error_response=_error_response)
def list_offsets(broker: Broker, request: ListOffsetsRequest, ctx: RequestContext) -> None:
    named = Counter((t.name, p.partition_index) for t in request.topics for p in t.partitions)
    topics = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            if ctx.api_version >= 1 and named[topic.name, p.partition_index] > 1:
                partitions.append(ListOffsetsPartitionResponse(
                    partition_index=p.partition_index, error_code=Errors.INVALID_REQUEST,
                ))
            elif not broker.topics.has_partition(topic.name, p.partition_index):
                partitions.append(ListOffsetsPartitionResponse(
                    partition_index=p.partition_index, error_code=Errors.UNKNOWN_TOPIC_OR_PARTITION,
                ))
            elif p.timestamp in _AT_LOG_BOUNDARY:
                partitions.append(ListOffsetsPartitionResponse(
                    partition_index=p.partition_index,
                    old_style_offsets=[LOG_END_OFFSET] if p.max_num_offsets > 0 else [],
                    offset=LOG_END_OFFSET, leader_epoch=0,
                ))
            else:
                partitions.append(ListOffsetsPartitionResponse(partition_index=p.partition_index))
        topics.append(ListOffsetsTopicResponse(name=topic.name, partitions=partitions))
    ctx.respond(ListOffsetsResponse(topics=topics))
