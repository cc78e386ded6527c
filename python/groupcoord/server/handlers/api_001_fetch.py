"""Fetch (key 1): enough for consumers to poll topics that hold no data.

Every partition is empty (log start, high watermark and last stable offset 0), so a Fetch at
offset 0 finds nothing and waits in the fetch purgatory until its ``max_wait_ms`` (Kafka's
DelayedFetch; clients refetch in a tight loop otherwise), then gets empty, non-null records
(librdkafka rejects null ones). It is answered at once when it asks for nothing, accepts no
wait (``max_wait_ms`` <= 0 or ``min_bytes`` <= 0), or has a partition in error: an unknown
topic or partition (UNKNOWN_TOPIC_OR_PARTITION; UNKNOWN_TOPIC_ID by id), or an offset other
than 0 (OFFSET_OUT_OF_RANGE, after which the client applies its reset policy).

Version notes:

- v4+: isolation_level, last_stable_offset, aborted transactions (none); v5+ log_start_offset.
- v7+: fetch sessions (KIP-227). No session is ever created (session_id 0 in every answer,
  so clients keep sending full requests); a request naming a session gets
  FETCH_SESSION_ID_NOT_FOUND.
- v11+: preferred_read_replica, always -1.
- v13+: topics are named by topic id (from Metadata v10+) instead of by name.
- v15+: the replica id moves into the tagged replica_state; v16 node_endpoints (only sent
  with leader errors, so never here); v17 replica_directory_id.
"""

from __future__ import annotations

from groupcoord.errors import Errors
from groupcoord.protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchRequest,
    FetchResponse,
    PartitionData,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler
from groupcoord.server.topics import Topic

NO_SESSION = 0
NO_OFFSET = -1


def _failed(partition: int, error: Errors) -> PartitionData:
    return PartitionData(
        partition_index=partition, error_code=error, high_watermark=NO_OFFSET,
        last_stable_offset=NO_OFFSET, log_start_offset=NO_OFFSET, aborted_transactions=[],
        records=b"",
    )


def _error_response(request: FetchRequest, version: int, error: Errors) -> FetchResponse:
    return FetchResponse(error_code=error, session_id=NO_SESSION, responses=[
        FetchableTopicResponse(
            topic=wanted.topic, topic_id=wanted.topic_id,
            partitions=[_failed(p.partition, error) for p in wanted.partitions],
        )
        for wanted in request.topics
    ])


@handler(FetchRequest, versions="0-17", error_response=_error_response)
def fetch(broker: Broker, request: FetchRequest, ctx: RequestContext) -> None:
    by_id = ctx.api_version >= 13
    if request.session_id != NO_SESSION:
        ctx.respond(FetchResponse(error_code=Errors.FETCH_SESSION_ID_NOT_FOUND))
        return
    errors = False
    responses = []
    for wanted in request.topics:
        topic: Topic | None = (
            broker.topics.by_id(wanted.topic_id) if by_id else broker.topics.get(wanted.topic)
        )
        partitions = []
        for p in wanted.partitions:
            if topic is None or not 0 <= p.partition < topic.partitions:
                error = (
                    Errors.UNKNOWN_TOPIC_ID if by_id and topic is None
                    else Errors.UNKNOWN_TOPIC_OR_PARTITION
                )
            elif p.fetch_offset != 0:
                error = Errors.OFFSET_OUT_OF_RANGE
            else:
                partitions.append(PartitionData(
                    partition_index=p.partition, high_watermark=0, last_stable_offset=0,
                    log_start_offset=0, aborted_transactions=[], records=b"",
                ))
                continue
            errors = True
            partitions.append(_failed(p.partition, error))
        responses.append(FetchableTopicResponse(
            topic=wanted.topic, topic_id=wanted.topic_id, partitions=partitions,
        ))
    response = FetchResponse(session_id=NO_SESSION, responses=responses)
    if errors or not responses or request.max_wait_ms <= 0 or request.min_bytes <= 0:
        ctx.respond(response)
    else:
        ctx.on_disconnect(broker.fetches.park(request.max_wait_ms, lambda: ctx.respond(response)))
