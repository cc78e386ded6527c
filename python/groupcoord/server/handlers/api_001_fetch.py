"""Fetch (key 1): records read from the data topics' logs, long-polled in the purgatory.

Kafka's ``KafkaApis.handleFetchRequest`` and ``ReplicaManager.fetchMessages`` for a consumer
on one node: each partition is read (:meth:`ReplicaManager.read`: whole stored batches from
the one holding the fetch offset, never a record decoded) in request order, each at most its
``partition_max_bytes`` and all together at most ``max_bytes`` (capped by ``fetch.max.bytes``),
except that the first batch of the first partition with data is sent whole however large
(KIP-74). The answer goes at once when ``max_wait_ms`` <= 0, nothing was asked, a partition is
in error, or ``min_bytes`` were found; otherwise the Fetch waits as a DelayedFetch
(:mod:`groupcoord.server.delayed_fetch`) until an append brings ``min_bytes`` or
``max_wait_ms`` passes, then reads again and answers. Records are never null (librdkafka
rejects a null record set).

Version notes:

- v4+: isolation_level, last_stable_offset and aborted transactions (null for
  read_uncommitted, empty for read_committed: no transaction is ever aborted here); v5+
  log_start_offset.
- v7+: fetch sessions (KIP-227): see :mod:`groupcoord.server.fetch_sessions`.
- v11+: preferred_read_replica, always -1.
- v13+: topics are named by topic id (from Metadata v10+) instead of by name.
- v15+: the replica id moves into the tagged replica_state; v17 replica_directory_id.
"""

from __future__ import annotations

from groupcoord.errors import Errors
from groupcoord.log import TopicPartition
from groupcoord.protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchRequest,
    FetchResponse,
    FetchTopic,
    PartitionData,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler
from groupcoord.server.replica_manager import ReadResult
from groupcoord.server.topics import Topic

NO_SESSION = 0
NO_OFFSET = -1
READ_COMMITTED = 1


def _failed(partition: int, error: Errors) -> PartitionData:
    return PartitionData(
        partition_index=partition, error_code=error, high_watermark=NO_OFFSET,
        last_stable_offset=NO_OFFSET, log_start_offset=NO_OFFSET, aborted_transactions=None,
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
    if request.session_id != NO_SESSION:
        ctx.respond(FetchResponse(error_code=Errors.FETCH_SESSION_ID_NOT_FOUND))
        return
    by_id = ctx.api_version >= 13
    replicas = broker.replicas
    # (topic entry, partition entry, the partition, or the error known before reading)
    wanted: list[tuple[FetchTopic, list[tuple[int, TopicPartition | None, int, int, Errors | None]]]] = []
    for entry in request.topics:
        topic: Topic | None = (
            broker.topics.by_id(entry.topic_id) if by_id else broker.topics.get(entry.topic)
        )
        partitions: list[tuple[int, TopicPartition | None, int, int, Errors | None]] = []
        for p in entry.partitions:
            if topic is None:
                error = Errors.UNKNOWN_TOPIC_ID if by_id else Errors.UNKNOWN_TOPIC_OR_PARTITION
                partitions.append((p.partition, None, 0, 0, error))
            else:
                tp = TopicPartition(topic.name, p.partition)
                partitions.append((p.partition, tp, p.fetch_offset, p.partition_max_bytes, None))
        wanted.append((entry, partitions))
    max_bytes = min(request.max_bytes, broker.config.fetch_max_bytes)
    min_bytes = min(request.min_bytes, max_bytes)
    committed = ctx.api_version >= 4 and request.isolation_level == READ_COMMITTED

    def read() -> tuple[FetchResponse, int, bool]:
        """The answer as of now, the bytes it carries, and whether a partition failed."""
        left = max_bytes
        min_one = True
        total = 0
        failed = False
        responses = []
        for entry, partitions in wanted:
            answers = []
            for index, tp, offset, partition_max, known_error in partitions:
                if tp is None or known_error is not None:
                    failed = True
                    answers.append(_failed(index, known_error or Errors.UNKNOWN_TOPIC_OR_PARTITION))
                    continue
                result: ReadResult = replicas.read(
                    tp, offset, max(0, min(partition_max, left)), min_one=min_one
                )
                if result.error != Errors.NONE:
                    failed = True
                    answers.append(_failed(index, result.error))
                    continue
                size = len(result.records)
                if size:
                    min_one = False
                    left -= size
                    total += size
                answers.append(PartitionData(
                    partition_index=index, high_watermark=result.high_watermark,
                    last_stable_offset=result.last_stable_offset,
                    log_start_offset=result.log_start_offset,
                    aborted_transactions=[] if committed else None, records=result.records,
                ))
            responses.append(FetchableTopicResponse(
                topic=entry.topic, topic_id=entry.topic_id, partitions=answers,
            ))
        return FetchResponse(session_id=NO_SESSION, responses=responses), total, failed

    response, total, failed = read()
    if failed or not wanted or request.max_wait_ms <= 0 or total >= min_bytes:
        ctx.respond(response)
        return
    watched = [
        (tp, offset, partition_max)
        for _, partitions in wanted for _, tp, offset, partition_max, _ in partitions if tp is not None
    ]

    def satisfied() -> bool:
        found = 0
        for tp, offset, partition_max in watched:
            available = replicas.bytes_available(tp, offset, partition_max)
            if available is None:
                return True
            found += available
        return found >= min_bytes

    drop = broker.fetches.park(
        request.max_wait_ms, [tp for tp, _, _ in watched], satisfied, lambda: ctx.respond(read()[0])
    )
    if drop is not None:
        ctx.on_disconnect(drop)
